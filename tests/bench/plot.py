"""Plots the benchmark CSV: the elected-lane mbarrier ring's cycles per stage vs stages; the counter
ring against the mbarrier ring (4 stages, per shape); streaming GB/s vs stage size against cudaMemcpy.

Usage: python3 plot.py bench.csv bench.png
"""
import csv
import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt


def number(text):
    try:
        return float(text)
    except ValueError:
        return None


rows = list(csv.DictReader(open(sys.argv[1])))
fig, (left, middle, right) = plt.subplots(1, 3, figsize=(19, 5.5))
cycles = {row["kernel"]: row for row in rows if row["kind"] == "cycles"}

# The elected-lane ring (every lane waits, lane 0 arrives; direct calls), per stage count: Rust and
# C++ at equal (flat) loop shape, and the Rust plain loop as LLVM unrolls it.
for warps, style in ((1, "-"), (4, "--")):
    pts = []
    for stages in (1, 2, 4, 8):
        row = cycles.get(f"bench_elect_s{stages}_c{warps}_warp_direct")
        if row:
            pts.append((stages, number(row["rust"]), number(row["cpp"]), number(row["rust_llvm_loop"])))
    if pts:
        s = [p[0] for p in pts]
        left.plot(s, [p[1] for p in pts], style + "o", label=f"Rust flat, {warps} consumer warp(s)")
        left.plot(s, [p[2] for p in pts], style + "x", label=f"C++ flat, {warps} consumer warp(s)")
        left.plot(s, [p[3] for p in pts], style + "s", label=f"Rust plain loop (LLVM-unrolled), {warps} warp(s)")
left.set_xlabel("stages")
left.set_ylabel("cycles per stage (median)")
left.set_title("elected-lane mbarrier ring (per-warp release)")
left.set_xticks([1, 2, 4, 8])
left.legend(fontsize=7)

# Counter ring (4 stages) against the mbarrier ring of the same shape, Rust, flat loops.
shapes = [("c1_warp", "1 warp\nper-warp"), ("c4_warp", "4 warps\nper-warp"),
          ("c1_thread", "1 warp\nper-thread"), ("c4_thread", "4 warps\nper-thread")]
variant = {row["kernel"]: row for row in rows if row["kind"] == "variant"}
series = [("base", "counter, library"), ("prev", "counter, arrive before grouping by counter (wrong for split lanes)"),
          ("match", "counter, always match.any")]
width = 0.2
for i, (name, label) in enumerate(series):
    ys = [number(variant.get(f"{name}_{shape}", {}).get("rust", "")) for shape, _ in shapes]
    xs = [k + (i - 1.5) * width for k in range(len(shapes))]
    middle.bar(xs, [y or 0 for y in ys], width, label=label)
ys = [number(cycles.get(f"bench_ring_mbar_s4_{shape}", {}).get("rust", "")) for shape, _ in shapes]
middle.bar([k + 1.5 * width for k in range(len(shapes))], [y or 0 for y in ys], width, label="mbarrier (library)")
tallest = [number(variant.get(f"{name}_{shape}", {}).get("rust", "")) or 0 for name, _ in series for shape, _ in shapes]
middle.set_ylim(0, 1.2 * max(tallest + [1]))
middle.set_xticks(range(len(shapes)))
middle.set_xticklabels([label for _, label in shapes], fontsize=8)
middle.set_ylabel("cycles per stage (median, Rust, flat loop)")
middle.set_title("counter ring vs mbarrier ring, 4 stages")
middle.legend(fontsize=7)

# Streaming: the original shape per stage count, and the dynamic rows.
memcpy = None
streams = [row for row in rows if row["kind"] == "stream"]
for stages in (2, 4, 8):
    pts = []
    for row in streams:
        m = re.fullmatch(rf"bench_stream_s{stages}_k(\d+)", row["kernel"])
        if m:
            pts.append((int(m.group(1)), number(row["rust"]), number(row["cpp"])))
            memcpy = number(row["memcpy"])
    pts.sort()
    if pts:
        k = [p[0] for p in pts]
        right.plot(k, [p[1] for p in pts], "-o", label=f"Rust, {stages} stages (first shape)")
        right.plot(k, [p[2] for p in pts], "--x", label=f"C++, {stages} stages (first shape)")
dyn = []
for row in streams:
    m = re.fullmatch(r"bench_stream_s(\d+)_k(\d+)_p\d+_d(?:_w(\d+))?(?:@.*)?", row["kernel"])
    # Rows with a stage count that is not a multiple of the storers are left out: such kernels are
    # wrong by construction (mbarrier parity aliasing) and were removed after the run.
    if m and int(m.group(1)) % int(m.group(3) or 1) == 0:
        dyn.append((int(m.group(2)), number(row["rust"]), number(row["cpp"])))
if dyn:
    right.scatter([d[0] * 1.04 for d in dyn], [d[1] for d in dyn], marker="^", label="Rust, dynamic chunks (all rows)")
    right.scatter([d[0] / 1.04 for d in dyn], [d[2] for d in dyn], marker="v", label="C++, dynamic chunks (all rows)")
if memcpy:
    right.axhline(memcpy, color="k", linestyle=":", label=f"cudaMemcpy D2D {memcpy:.0f} GB/s")
    right.axhline(0.95 * memcpy, color="r", linestyle=":", label="0.95 x cudaMemcpy (target)")
right.set_xscale("log", base=2)
right.set_xlabel("KiB per stage")
right.set_ylabel("GB/s copied (median)")
right.set_title("streaming copy through the ring (bulk copies)")
right.legend(fontsize=7)
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=110)
