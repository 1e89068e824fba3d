#!/usr/bin/env python3
"""An SVG chart of ours over the best anchor, per device call (standard library only).

usage: plot_ratio.py CALLS_CSV OUT_SVG TITLE

The CSV has `bench_attention.py`'s columns with `call` in front (one label per device call). For
each call and cell of the FlashAttention-3 paper's setup (`kind` paper), the ratio of ours'
TFLOP/s to the fastest of the other implementations in that call but FA2 (FA3, FA4, cuDNN): a
ratio is only ever taken inside one call. Six panels (head dim 64, 128, 256 by no mask / causal),
the ratio against the sequence length, one line per call, and the line of 1.0.
"""
import csv
import math
import sys
from collections import defaultdict
from xml.sax.saxutils import escape

COLORS = ["#c92a2a", "#1b6ca8", "#2b8a3e", "#862e9c", "#e67700", "#868e96"]
ANCHORS = ("fa3", "fa4", "cudnn")


def main():
    path, out, title = sys.argv[1], sys.argv[2], sys.argv[3]
    tflops = defaultdict(dict)  # (call, d, causal, seq) -> {impl: tflops}, first row of each
    calls = []
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            if r["kind"] != "paper" or r["tflops"] in ("", "nan"):
                continue
            if r["call"] not in calls:
                calls.append(r["call"])
            key = (r["call"], int(r["d"]), r["causal"] == "True", int(r["seq"]))
            tflops[key].setdefault(r["impl"], float(r["tflops"]))
    ratio = defaultdict(dict)  # (call, d, causal) -> {seq: ours / best anchor}
    for (call, d, causal, seq), t in tflops.items():
        best = max((t[a] for a in ANCHORS if a in t), default=0.0)
        if "ours" in t and best > 0:
            ratio[(call, d, causal)][seq] = t["ours"] / best
    dims = sorted({k[1] for k in ratio})
    pw, ph, ml, mt = 300, 200, 50, 40
    width, height = ml + len(dims) * (pw + 30), mt + 2 * (ph + 50) + 20 + 16 * len(calls)
    lo_r, hi_r = 0.6, 1.2
    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="11">',
           '<rect width="100%" height="100%" fill="white"/>',
           f'<text x="{ml}" y="20" font-size="14">{escape(title)}</text>']
    for row, causal in enumerate((False, True)):
        for col, d in enumerate(dims):
            x0, y0 = ml + col * (pw + 30), mt + row * (ph + 50)
            svg.append(f'<rect x="{x0}" y="{y0}" width="{pw}" height="{ph}" fill="none" stroke="#ccc"/>')
            svg.append(f'<text x="{x0 + 5}" y="{y0 + 14}">D = {d}, {"causal" if causal else "no mask"}</text>')
            seqs = sorted({s for k, v in ratio.items() if k[1] == d and k[2] == causal for s in v})
            if not seqs:
                continue
            lo = math.log2(seqs[0])
            hi = math.log2(seqs[-1]) if len(seqs) > 1 else lo + 1

            def px(s):
                return x0 + 10 + (math.log2(s) - lo) / (hi - lo) * (pw - 20)

            def py(v):
                return y0 + ph - (min(max(v, lo_r), hi_r) - lo_r) / (hi_r - lo_r) * ph
            for v in (0.6, 0.8, 0.9, 1.0, 1.1, 1.2):
                stroke = "#888" if v == 1.0 else "#eee"
                svg.append(f'<line x1="{x0}" x2="{x0 + pw}" y1="{py(v):.0f}" y2="{py(v):.0f}" stroke="{stroke}"/>')
                svg.append(f'<text x="{x0 - 28}" y="{py(v) + 4:.0f}">{v:.1f}</text>')
            for s in seqs:
                label = f"{s // 1024}k" if s >= 1024 else str(s)
                svg.append(f'<text x="{px(s) - 10:.0f}" y="{y0 + ph + 14}">{label}</text>')
            for i, call in enumerate(calls):
                pts = sorted(ratio.get((call, d, causal), {}).items())
                if not pts:
                    continue
                path = " ".join(f"{'M' if j == 0 else 'L'}{px(s):.1f},{py(v):.1f}" for j, (s, v) in enumerate(pts))
                svg.append(f'<path d="{path}" fill="none" stroke="{COLORS[i % len(COLORS)]}" stroke-width="2"/>')
    for i, call in enumerate(calls):
        y = mt + 2 * (ph + 50) + 16 * i
        svg.append(f'<rect x="{ml}" y="{y}" width="12" height="4" fill="{COLORS[i % len(COLORS)]}"/>')
        svg.append(f'<text x="{ml + 16}" y="{y + 5}">{escape(call)}</text>')
    y = mt + 2 * (ph + 50) + 16 * len(calls)
    svg.append(f'<text x="{ml}" y="{y + 5}">ours / the fastest of FA3, FA4 and cuDNN in the same call, against the sequence length (batch = 16k / seq, heads = 2048 / D)</text>')
    svg.append("</svg>")
    with open(out, "w") as f:
        f.write("\n".join(svg) + "\n")
    print(f"plot written: {out}")


if __name__ == "__main__":
    main()
