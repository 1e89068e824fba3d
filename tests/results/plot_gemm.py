#!/usr/bin/env python3
"""An SVG bar chart of a `gemm-bench` CSV (standard library only).

usage: plot_gemm.py GEMM_CSV OUT_SVG [TITLE] [EXTRA,...]

One group of bars per shape, in the CSV's order: cublasGemmEx, cuBLASLt's first heuristic
choice, autotuned cuBLASLt, and `ours` (the host API's default kernel for the shape), in TFLOP/s
(median), with ours / the faster of the two cuBLAS defaults written beside the group; EXTRA
names more of the CSV's implementations (`ours-persistent-192`), each a bar and a ratio too.
"""
import csv
import sys
from xml.sax.saxutils import escape

SERIES = [
    ("cublasGemmEx", "cublasGemmEx", "#9aa5b1"),
    ("cublasLt-heuristic", "cuBLASLt first choice", "#5f6b7a"),
    ("cublasLt-autotuned", "cuBLASLt autotuned", "#2f3a48"),
    ("ours", "ours (gpu-gemm, default kernel)", "#d9480f"),
]


def main():
    path, out = sys.argv[1], sys.argv[2]
    title = sys.argv[3] if len(sys.argv) > 3 else "bf16 GEMM on the H200: TFLOP/s (median)"
    extra = sys.argv[4].split(",") if len(sys.argv) > 4 else []
    palette = ["#1b6ca8", "#2b8a3e", "#862e9c", "#e67700"]
    series = SERIES + [(n, n, palette[i % len(palette)]) for i, n in enumerate(extra)]
    rows = {}
    shapes = []
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            shape = r["shape"]
            if shape not in rows:
                rows[shape] = {}
                shapes.append(shape)
            if r["tflops"]:
                rows[shape][r["implementation"]] = float(r["tflops"])
    bar, gap, left, top, width = 9, 12, 150, 60, 560
    peak = max(v for s in rows.values() for v in s.values())
    scale = width / (peak * 1.05)
    group = bar * len(series) + gap
    height = top + group * len(shapes) + 40
    svg = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + width + 120 + 50 * len(extra)}" height="{height}" font-family="sans-serif" font-size="11">',
        f'<text x="10" y="20" font-size="14">{escape(title)}</text>',
    ]
    for i, (_, label, color) in enumerate(series):
        x = 10 + i * 190
        svg.append(f'<rect x="{x}" y="32" width="10" height="10" fill="{color}"/>')
        svg.append(f'<text x="{x + 14}" y="41">{escape(label)}</text>')
    for t in range(0, int(peak) + 100, 100):
        x = left + t * scale
        if x > left + width:
            break
        svg.append(f'<line x1="{x:.1f}" y1="{top - 6}" x2="{x:.1f}" y2="{height - 30}" stroke="#e5e7eb"/>')
        svg.append(f'<text x="{x:.1f}" y="{height - 16}" text-anchor="middle">{t}</text>')
    for k, shape in enumerate(shapes):
        y0 = top + k * group
        svg.append(f'<text x="{left - 6}" y="{y0 + bar * 2 + 4}" text-anchor="end">{escape(shape)}</text>')
        for i, (name, _, color) in enumerate(series):
            v = rows[shape].get(name)
            if v is None:
                continue
            svg.append(
                f'<rect x="{left}" y="{y0 + i * bar}" width="{v * scale:.1f}" height="{bar - 1}" fill="{color}"><title>{escape(name)} {v:.1f}</title></rect>'
            )
        defaults = [rows[shape].get(n) for n in ("cublasGemmEx", "cublasLt-heuristic")]
        defaults = [d for d in defaults if d]
        ratios = [(n, rows[shape].get(n)) for n in ["ours"] + extra]
        ratios = [f"{v / max(defaults):.2f}x" for n, v in ratios if v]
        if ratios and defaults:
            end = max(rows[shape][n] for n, _, _ in series if n in rows[shape]) * scale
            svg.append(f'<text x="{left + end + 6:.1f}" y="{y0 + bar * 2 + 4}">{" / ".join(ratios)}</text>')
    svg.append(f'<text x="{left + width / 2}" y="{height - 2}" text-anchor="middle">TFLOP/s; the figures after each group: ours (and each extra) / the faster cuBLAS default</text>')
    svg.append("</svg>")
    with open(out, "w") as f:
        f.write("\n".join(svg) + "\n")


if __name__ == "__main__":
    main()
