#!/usr/bin/env python3
"""An SVG bar chart of an attention A/B CSV (standard library only).

usage: plot_ab.py AB_CSV OUT_SVG TITLE

The CSV has bench_attention.py's columns with two more in front, `order` (the variant: one module
per variant) and `process` (the repetition: each variant ran in its own processes, alternating).
One group of bars per cell (kind, head dim, mask; the sequence length where the file has several): ours' TFLOP/s per variant and process, with cuDNN's
in the same process as a tick on each bar. A cell has bars only for the variants measured there
(a file may hold several A/B runs, each variant named by its run).
"""
import csv
import sys
from collections import defaultdict
from xml.sax.saxutils import escape

COLORS = ["#868e96", "#c92a2a", "#1b6ca8", "#2b8a3e", "#e67700", "#862e9c", "#0b7285", "#5c940d"]


def main():
    path, out, title = sys.argv[1], sys.argv[2], sys.argv[3]
    ours, cudnn, cells, orders = {}, {}, [], []
    rows = list(csv.DictReader(open(path, newline="")))
    seqs = {r["seq"] for r in rows if r["kind"] == "paper"}
    for r in rows:
        # One cell per kind, head dim and mask (and sequence length, where the file has several).
        cell = f"{r['kind']} D{r['d']}" + (" causal" if r["causal"] == "True" else "")
        if len(seqs) > 1 and r["kind"] == "paper":
            seq = int(r["seq"])
            cell += f" {seq // 1024}k" if seq % 1024 == 0 else f" {seq}"
        key = (cell, r["order"], r["process"])
        if cell not in cells:
            cells.append(cell)
        if r["order"] not in orders:
            orders.append(r["order"])
        (ours if r["impl"] == "ours" else cudnn)[key] = float(r["tflops"])
    processes = sorted({k[2] for k in ours})
    # The bars of each cell: its variants and processes, in the file's order.
    bars_of = {c: [(o, p) for o in orders for p in processes if (c, o, p) in ours] for c in cells}
    bw, gap, h, left, top = 10, 24, 300, 60, 40
    starts, x = {}, left + gap / 2
    for c in cells:
        starts[c] = x
        x += bw * len(bars_of[c]) + gap
    per_row, col_w = 3, 340
    legend_rows = (len(orders) + per_row) // per_row
    width = max(int(x) + 20, left + per_row * col_w + 20)
    # The palette, then evenly spaced hues where a file has more variants than it.
    colors = COLORS if len(orders) <= len(COLORS) else [
        f"hsl({round(360 * k / len(orders))}, 65%, {45 if k % 2 else 35}%)" for k in range(len(orders))
    ]
    top_value = max(list(ours.values()) + list(cudnn.values())) * 1.1
    y = lambda v: top + h - v / top_value * h
    s = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{top + h + 110 + 18 * legend_rows}" font-family="sans-serif" font-size="11">',
         f'<rect width="100%" height="100%" fill="white"/>',
         f'<text x="{width / 2}" y="20" text-anchor="middle" font-size="13">{escape(title)}</text>']
    for t in range(0, int(top_value) + 1, 100):
        s.append(f'<line x1="{left}" x2="{width - 20}" y1="{y(t):.1f}" y2="{y(t):.1f}" stroke="#eee"/>')
        s.append(f'<text x="{left - 4}" y="{y(t) + 4:.1f}" text-anchor="end">{t}</text>')
    s.append(f'<text transform="translate(16,{top + h / 2}) rotate(-90)" text-anchor="middle">TFLOP/s (median)</text>')
    for cell in cells:
        x0, bars = starts[cell], bars_of[cell]
        for j, (o, p) in enumerate(bars):
            v = ours[(cell, o, p)]
            x = x0 + j * bw
            s.append(f'<rect x="{x:.1f}" y="{y(v):.1f}" width="{bw - 2}" height="{top + h - y(v):.1f}" fill="{colors[orders.index(o)]}"><title>{escape(cell)}, {o}, process {p}: ours {v:.1f}</title></rect>')
            c = cudnn.get((cell, o, p))
            if c is not None:
                s.append(f'<line x1="{x - 1:.1f}" x2="{x + bw - 1:.1f}" y1="{y(c):.1f}" y2="{y(c):.1f}" stroke="#000" stroke-width="2"><title>cuDNN {c:.1f}</title></line>')
        s.append(f'<text transform="translate({x0 + bw * len(bars) / 2:.0f},{top + h + 12}) rotate(-25)" text-anchor="end">{escape(cell)}</text>')
    ly = top + h + 90
    place = lambda k: (left + (k % per_row) * col_w, ly + 18 * (k // per_row))
    for k, o in enumerate(orders):
        lx, yy = place(k)
        s.append(f'<rect x="{lx}" y="{yy}" width="12" height="12" fill="{colors[k]}"/>')
        s.append(f'<text x="{lx + 16}" y="{yy + 10}">ours, {escape(o)}</text>')
    lx, yy = place(len(orders))
    s.append(f'<line x1="{lx}" x2="{lx + 14}" y1="{yy + 6}" y2="{yy + 6}" stroke="#000" stroke-width="2"/>')
    s.append(f'<text x="{lx + 18}" y="{yy + 10}">cuDNN, same process</text>')
    s.append("</svg>")
    open(out, "w").write("\n".join(s) + "\n")
    print(f"plot written: {out}")


if __name__ == "__main__":
    main()
