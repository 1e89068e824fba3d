"""Plots the benchmark CSV: ring cycles per stage vs stages, streaming GB/s vs stage size.

Usage: python3 plot.py bench.csv bench.png
"""
import csv
import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

rows = list(csv.DictReader(open(sys.argv[1])))
fig, (left, right) = plt.subplots(1, 2, figsize=(13, 5))

for mode, style in (("warp", "-"), ("thread", "--")):
    for warps in (1, 4):
        pts = []
        for row in rows:
            m = re.fullmatch(rf"bench_ring_mbar_s(\d+)_c{warps}_{mode}", row["kernel"])
            if m:
                pts.append((int(m.group(1)), float(row["rust"]), float(row["cpp"])))
        pts.sort()
        if pts:
            s = [p[0] for p in pts]
            left.plot(s, [p[1] for p in pts], style + "o", label=f"Rust, {warps} consumer warp(s), per-{mode}")
            left.plot(s, [p[2] for p in pts], style + "x", label=f"C++, {warps} consumer warp(s), per-{mode}")
left.set_xlabel("stages")
left.set_ylabel("cycles per stage (median)")
left.set_title("mbarrier ring, synchronisation only")
left.set_xticks([2, 4, 8])
left.legend(fontsize=7)

memcpy = None
for stages in (2, 4, 8):
    pts = []
    for row in rows:
        m = re.fullmatch(rf"bench_stream_s{stages}_k(\d+)", row["kernel"])
        if m:
            pts.append((int(m.group(1)), float(row["rust"]), float(row["cpp"])))
            memcpy = float(row["reference"])
    pts.sort()
    if pts:
        k = [p[0] for p in pts]
        right.plot(k, [p[1] for p in pts], "-o", label=f"Rust, {stages} stages")
        right.plot(k, [p[2] for p in pts], "--x", label=f"C++, {stages} stages")
if memcpy:
    right.axhline(memcpy, color="k", linestyle=":", label=f"cudaMemcpy D2D {memcpy:.0f} GB/s")
right.set_xscale("log", base=2)
right.set_xlabel("KiB per stage")
right.set_ylabel("GB/s copied (median)")
right.set_title("streaming copy through the ring (bulk copies)")
right.legend(fontsize=7)
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=110)
