#!/usr/bin/env python3
"""SVG charts of `bench_attention.py` CSVs (standard library only).

usage: plot_attention.py OUT_SVG TITLE CSV [CSV ...]
       plot_attention.py --ratio OUT_SVG TITLE CALLS_CSV

Six panels (head dim 64, 128, 256 by no mask / causal) of the FlashAttention-3 paper's setup
(16k tokens, hidden 2048), against the sequence length.

TFLOP/s (the first form): one line per implementation. Rows of several CSVs (calls) are all
drawn; an implementation present in two calls (cuDNN, FA2) is drawn from the first that has it,
ours from each call with its call's label.

Ratios (`--ratio`): the CSV has `bench_attention.py`'s columns with `call` in front (one label
per device call). For each call and cell, ours' TFLOP/s over the fastest of the others in that
call but FA2 (FA3, FA4, cuDNN): a ratio is only ever taken inside one call. One line per call,
and the line of 1.0.
"""
import csv
import math
import sys
from collections import defaultdict
from xml.sax.saxutils import escape

COLORS = {"ours": "#c92a2a", "fa3": "#1b6ca8", "fa4": "#2b8a3e", "cudnn": "#862e9c", "fa2": "#868e96"}
NAMES = {"ours": "ours", "fa3": "FlashAttention-3", "fa4": "FlashAttention-4", "cudnn": "cuDNN", "fa2": "FA2 (torch flash)"}
CALL_COLORS = ["#c92a2a", "#1b6ca8", "#2b8a3e", "#862e9c", "#e67700", "#868e96"]
ANCHORS = ("fa3", "fa4", "cudnn")
PW, ML, MT = 300, 50, 40


def panels(svg, series, ph, scale):
    """Draws the six panels: `series` maps (d, causal, line) to {seq: value} and to its
    (color, dash); `scale` is (y of a value in a panel of top y0, the y ticks)."""
    dims = sorted({k[0] for k in series})
    to_y, ticks = scale
    for row, causal in enumerate((False, True)):
        for col, d in enumerate(dims):
            x0, y0 = ML + col * (PW + 30), MT + row * (ph + 50)
            svg.append(f'<rect x="{x0}" y="{y0}" width="{PW}" height="{ph}" fill="none" stroke="#ccc"/>')
            svg.append(f'<text x="{x0 + 5}" y="{y0 + 14}">D = {d}, {"causal" if causal else "no mask"}</text>')
            seqs = sorted({s for k, (v, _) in series.items() if k[0] == d and k[1] == causal for s in v})
            if not seqs:
                continue
            lo = math.log2(seqs[0])
            hi = math.log2(seqs[-1]) if len(seqs) > 1 else lo + 1

            def px(s):
                return x0 + 10 + (math.log2(s) - lo) / (hi - lo) * (PW - 20)
            for t, label, stroke in ticks:
                svg.append(f'<text x="{x0 - 30}" y="{to_y(y0, t) + 4:.1f}">{label}</text>')
                svg.append(f'<line x1="{x0}" x2="{x0 + PW}" y1="{to_y(y0, t):.1f}" y2="{to_y(y0, t):.1f}" stroke="{stroke}"/>')
            for s in seqs:
                label = f"{s // 1024}k" if s >= 1024 else str(s)
                svg.append(f'<text x="{px(s) - 10:.1f}" y="{y0 + ph + 14}">{label}</text>')
            for (dd, cc, _), (pts, (color, dash)) in sorted(series.items()):
                if dd != d or cc != causal:
                    continue
                path = " ".join(f"{'M' if i == 0 else 'L'}{px(s):.1f},{to_y(y0, t):.1f}" for i, (s, t) in enumerate(sorted(pts.items())))
                svg.append(f'<path d="{path}" fill="none" stroke="{color}" stroke-width="2"{dash}/>')
    return len(dims)


def tflops(out, title, paths):
    series = defaultdict(dict)  # (d, causal, impl) -> {seq: tflops}
    for call, path in enumerate(paths):
        with open(path, newline="") as f:
            for r in csv.DictReader(f):
                if r["kind"] != "paper" or r["tflops"] in ("", "nan"):
                    continue
                key = (int(r["d"]), r["causal"] == "True", r["impl"] if r["impl"] != "ours" or call == 0 else f"ours#{call}")
                series[key].setdefault(int(r["seq"]), float(r["tflops"]))
    ph = 220
    top = max((v for s in series.values() for v in s.values()), default=1.0)
    ymax = 100 * math.ceil(top / 100)
    ticks = [(t, str(t), "#eee") for t in range(0, int(ymax) + 1, 200)]
    styled = {k: (v, (COLORS.get(k[2].split("#")[0], "#000"), ' stroke-dasharray="4 3"' if "#" in k[2] else "")) for k, v in series.items()}
    dims = len({k[0] for k in series})
    width, height = ML + dims * (PW + 30), MT + 2 * (ph + 50) + 40
    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="11">',
           f'<text x="{ML}" y="20" font-size="14">{escape(title)}</text>']
    panels(svg, styled, ph, (lambda y0, t: y0 + ph - t / ymax * ph, ticks))
    lx = ML
    for impl, name in NAMES.items():
        if any(k[2].split("#")[0] == impl for k in series):
            svg.append(f'<rect x="{lx}" y="{height - 25}" width="12" height="4" fill="{COLORS[impl]}"/>')
            svg.append(f'<text x="{lx + 16}" y="{height - 20}">{escape(name)}</text>')
            lx += 140
    svg.append(f'<text x="{ML}" y="{height - 6}">TFLOP/s (4·b·h·s²·D, halved for causal) against the sequence length; batch = 16k / seq, heads = 2048 / D; dashed: ours in a second call</text>')
    return svg


def ratios(out, title, path):
    values = defaultdict(dict)  # (call, d, causal, seq) -> {impl: tflops}, first row of each
    calls = []
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            if r["kind"] != "paper" or r["tflops"] in ("", "nan"):
                continue
            if r["call"] not in calls:
                calls.append(r["call"])
            key = (r["call"], int(r["d"]), r["causal"] == "True", int(r["seq"]))
            values[key].setdefault(r["impl"], float(r["tflops"]))
    series = defaultdict(dict)  # (d, causal, call index) -> {seq: ours / best anchor}
    for (call, d, causal, seq), t in values.items():
        best = max((t[a] for a in ANCHORS if a in t), default=0.0)
        if "ours" in t and best > 0:
            series[(d, causal, calls.index(call))][seq] = t["ours"] / best
    ph, lo_r, hi_r = 200, 0.6, 1.2
    ticks = [(v, f"{v:.1f}", "#888" if v == 1.0 else "#eee") for v in (0.6, 0.8, 0.9, 1.0, 1.1, 1.2)]
    styled = {k: (v, (CALL_COLORS[k[2] % len(CALL_COLORS)], "")) for k, v in series.items()}
    dims = len({k[0] for k in series})
    width, height = ML + dims * (PW + 30), MT + 2 * (ph + 50) + 20 + 16 * len(calls)
    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="11">',
           '<rect width="100%" height="100%" fill="white"/>',
           f'<text x="{ML}" y="20" font-size="14">{escape(title)}</text>']
    panels(svg, styled, ph, (lambda y0, v: y0 + ph - (min(max(v, lo_r), hi_r) - lo_r) / (hi_r - lo_r) * ph, ticks))
    for i, call in enumerate(calls):
        y = MT + 2 * (ph + 50) + 16 * i
        svg.append(f'<rect x="{ML}" y="{y}" width="12" height="4" fill="{CALL_COLORS[i % len(CALL_COLORS)]}"/>')
        svg.append(f'<text x="{ML + 16}" y="{y + 5}">{escape(call)}</text>')
    y = MT + 2 * (ph + 50) + 16 * len(calls)
    svg.append(f'<text x="{ML}" y="{y + 5}">ours / the fastest of FA3, FA4 and cuDNN in the same call, against the sequence length (batch = 16k / seq, heads = 2048 / D)</text>')
    return svg


def main():
    if sys.argv[1] == "--ratio":
        out = sys.argv[2]
        svg = ratios(out, sys.argv[3], sys.argv[4])
    else:
        out = sys.argv[1]
        svg = tflops(out, sys.argv[2], sys.argv[3:])
    svg.append("</svg>")
    with open(out, "w") as f:
        f.write("\n".join(svg) + "\n")
    print(f"plot written: {out}")


if __name__ == "__main__":
    main()
