#!/usr/bin/env python3
"""An SVG chart of `bench_attention.py` CSVs (standard library only).

usage: plot_attention.py OUT_SVG TITLE CSV [CSV ...]

Six panels (head dim 64, 128, 256 by no mask / causal) of the FlashAttention-3 paper's setup
(16k tokens, hidden 2048): TFLOP/s against the sequence length, one line per implementation. Rows
of several CSVs (calls) are all drawn; an implementation present in two calls (cuDNN, FA2) is drawn
from the first that has it, ours from each call with its call's label.
"""
import csv
import math
import sys
from collections import defaultdict
from xml.sax.saxutils import escape

COLORS = {"ours": "#c92a2a", "fa3": "#1b6ca8", "fa4": "#2b8a3e", "cudnn": "#862e9c", "fa2": "#868e96"}
NAMES = {"ours": "ours", "fa3": "FlashAttention-3", "fa4": "FlashAttention-4", "cudnn": "cuDNN", "fa2": "FA2 (torch flash)"}


def main():
    out, title, paths = sys.argv[1], sys.argv[2], sys.argv[3:]
    series = defaultdict(dict)  # (d, causal, impl) -> {seq: tflops}
    for call, path in enumerate(paths):
        with open(path, newline="") as f:
            for r in csv.DictReader(f):
                if r["kind"] != "paper" or r["tflops"] in ("", "nan"):
                    continue
                key = (int(r["d"]), r["causal"] == "True", r["impl"] if r["impl"] != "ours" or call == 0 else f"ours#{call}")
                series[key].setdefault(int(r["seq"]), float(r["tflops"]))
    dims = sorted({k[0] for k in series})
    pw, ph, ml, mt = 300, 220, 50, 40
    width, height = ml + len(dims) * (pw + 30), mt + 2 * (ph + 50) + 40
    top = max((v for s in series.values() for v in s.values()), default=1.0)
    ymax = 100 * math.ceil(top / 100)
    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="11">',
           f'<text x="{ml}" y="20" font-size="14">{escape(title)}</text>']
    for row, causal in enumerate((False, True)):
        for col, d in enumerate(dims):
            x0, y0 = ml + col * (pw + 30), mt + row * (ph + 50)
            svg.append(f'<rect x="{x0}" y="{y0}" width="{pw}" height="{ph}" fill="none" stroke="#ccc"/>')
            svg.append(f'<text x="{x0 + 5}" y="{y0 + 14}">D = {d}, {"causal" if causal else "no mask"}</text>')
            seqs = sorted({s for k, v in series.items() if k[0] == d and k[1] == causal for s in v})
            if not seqs:
                continue
            lo, hi = math.log2(seqs[0]), math.log2(seqs[-1]) if len(seqs) > 1 else math.log2(seqs[0]) + 1

            def px(s):
                return x0 + 10 + (math.log2(s) - lo) / (hi - lo) * (pw - 20)

            def py(t):
                return y0 + ph - t / ymax * ph
            for t in range(0, int(ymax) + 1, 200):
                svg.append(f'<text x="{x0 - 30}" y="{py(t) + 4:.1f}">{t}</text>')
                svg.append(f'<line x1="{x0}" x2="{x0 + pw}" y1="{py(t):.1f}" y2="{py(t):.1f}" stroke="#eee"/>')
            for s in seqs:
                svg.append(f'<text x="{px(s) - 10:.1f}" y="{y0 + ph + 14}">{s // 1024}k</text>' if s >= 1024 else f'<text x="{px(s) - 10:.1f}" y="{y0 + ph + 14}">{s}</text>')
            for (dd, cc, impl), pts in sorted(series.items()):
                if dd != d or cc != causal:
                    continue
                base = impl.split("#")[0]
                color = COLORS.get(base, "#000")
                dash = ' stroke-dasharray="4 3"' if "#" in impl else ""
                path = " ".join(f"{'M' if i == 0 else 'L'}{px(s):.1f},{py(t):.1f}" for i, (s, t) in enumerate(sorted(pts.items())))
                svg.append(f'<path d="{path}" fill="none" stroke="{color}" stroke-width="2"{dash}/>')
    lx = ml
    for impl, name in NAMES.items():
        if any(k[2].split("#")[0] == impl for k in series):
            svg.append(f'<rect x="{lx}" y="{height - 25}" width="12" height="4" fill="{COLORS[impl]}"/>')
            svg.append(f'<text x="{lx + 16}" y="{height - 20}">{escape(name)}</text>')
            lx += 140
    svg.append(f'<text x="{ml}" y="{height - 6}">TFLOP/s (4·b·h·s²·D, halved for causal) against the sequence length; batch = 16k / seq, heads = 2048 / D; dashed: ours in a second call</text>')
    svg.append("</svg>")
    with open(out, "w") as f:
        f.write("\n".join(svg) + "\n")


if __name__ == "__main__":
    main()
