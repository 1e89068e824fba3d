#!/usr/bin/env python3
"""An SVG line chart of a `gemm-bench` sweep CSV (standard library only).

usage: plot_sweep.py [--by-k] [--run=RUN] [--compare=RUN_A,RUN_B] SWEEP_CSV[,SWEEP_CSV...] OUT_SVG [TITLE] [IMPLEMENTATION]
       plot_sweep.py --speedups=RUN_A,RUN_B WIDE_CSV OUT_SVG [TITLE]

One line per (N, K) of the sweep: `ours` (the host API's default kernel; or the CSV's
IMPLEMENTATION) over the faster of cublasGemmEx and cuBLASLt's first choice, against M on a log
axis; the 1.0 line is parity. With `--by-k`, one line per (M, N) against K; with `--run=RUN`, only
the rows of a wide CSV whose `run` column is RUN. With `--compare=RUN_A,RUN_B` (a wide CSV; implies
`--by-k`): one line per M and run against K, each point the geometric mean over the N of that M
and K, RUN_A's lines dashed and RUN_B's solid (a rule before and after, say). With
`--speedups=RUN_A,RUN_B` (a wide CSV, the same shapes in both runs, a module before and after, say):
one bar per implementation of ours, the geometric mean over the shapes of its time over the faster
cuBLAS default in RUN_A divided by the same in RUN_B (above 1: faster in RUN_B), its range over the
shapes as a whisker.

A CSV is `gemm-bench`'s (one row per shape and implementation: `m`, `n`, `k`, `implementation`,
`median_ms`) or wide (one row per shape: `m`, `n`, `k` and a column `NAME_us` of microseconds
per implementation). Of several CSVs, a shape in two is drawn from the later; every ratio is of
times from one CSV row set, that is one run.
"""
import csv
import math
import sys
from collections import defaultdict
from xml.sax.saxutils import escape

COLORS = ["#1b6ca8", "#d9480f", "#2b8a3e", "#862e9c", "#e67700", "#0b7285", "#c92a2a", "#5c940d"]


def geomean(xs):
    return math.exp(sum(map(math.log, xs)) / len(xs))


def svg_open(w, h, title, x):
    """The opening elements of a chart: the SVG root, its white background, the title at `x`."""
    return [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">',
            f'<rect width="{w}" height="{h}" fill="white"/>',
            f'<text x="{x}" y="22" font-size="15">{escape(title)}</text>']


def wide_us(row):
    """A wide CSV row's times: implementation name to microseconds (its non-empty `NAME_us`)."""
    return {c[:-3]: float(v) for c, v in row.items() if c.endswith("_us") and v}


def speedups(path, out, a, b, title):
    """The `--speedups=A,B` bar chart (see the module's docs)."""
    rel = defaultdict(dict)
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            if r["run"] not in (a, b):
                continue
            t = wide_us(r)
            cub = min(t["cublasGemmEx"], t["cublasLt-heuristic"])
            for impl, v in t.items():
                if impl.startswith("ours"):
                    rel[impl].setdefault((r["m"], r["n"], r["k"]), {})[r["run"]] = v / cub
    bars = []
    for impl, by in rel.items():
        rs = [x[a] / x[b] for x in by.values() if a in x and b in x]
        if rs:
            bars.append((geomean(rs), min(rs), max(rs), impl, len(rs)))
    bars.sort(reverse=True)
    w, left, top, row = 980, 190, 50, 24
    h = top + row * len(bars) + 50
    lo, hi = 0.8, 1.4
    px = lambda r: left + (min(max(r, lo), hi) - lo) / (hi - lo) * (w - left - 120)
    s = svg_open(w, h, title, 10)
    for i in range(7):
        r = lo + i * 0.1
        s.append(f'<line x1="{px(r):.1f}" x2="{px(r):.1f}" y1="{top - 8}" y2="{h - 40}" stroke="{"#444" if abs(r - 1) < 1e-9 else "#ddd"}"/>')
        s.append(f'<text x="{px(r):.1f}" y="{h - 26}" text-anchor="middle">{r:.1f}</text>')
    for i, (g, mn, mx, impl, n) in enumerate(bars):
        y = top + i * row
        s.append(f'<text x="{left - 8}" y="{y + 14}" text-anchor="end">{escape(impl)}</text>')
        s.append(f'<rect x="{px(lo):.1f}" y="{y + 3}" width="{px(g) - px(lo):.1f}" height="{row - 8}" fill="{COLORS[0] if g >= 1 else COLORS[1]}"/>')
        s.append(f'<line x1="{px(mn):.1f}" x2="{px(mx):.1f}" y1="{y + row / 2:.1f}" y2="{y + row / 2:.1f}" stroke="#222"/>')
        s.append(f'<text x="{px(hi) + 6:.1f}" y="{y + 14}">{g:.3f} ({n} shapes)</text>')
    s.append(f'<text x="{px(1.1):.1f}" y="{h - 8}" text-anchor="middle">{escape(a)} over {escape(b)}: time over the faster cuBLAS default, geometric mean (bar) and range (whisker)</text>')
    s.append("</svg>")
    with open(out, "w") as f:
        f.write("\n".join(s) + "\n")


def main():
    sp = [a.split("=", 1)[1].split(",") for a in sys.argv[1:] if a.startswith("--speedups=")]
    if sp:
        rest = [a for a in sys.argv[1:] if not a.startswith("--speedups=")]
        speedups(rest[0], rest[1], sp[0][0], sp[0][1], rest[2] if len(rest) > 2 else "speed-ups")
        return
    compare = [a.split("=", 1)[1].split(",") for a in sys.argv[1:] if a.startswith("--compare=")]
    compare = compare[0] if compare else []
    by_k = "--by-k" in sys.argv[1:] or bool(compare)
    runs = [a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--run=")] + compare
    args = [a for a in sys.argv[1:] if a != "--by-k" and not a.startswith(("--run=", "--compare="))]
    path, out = args[0], args[1]
    title = args[2] if len(args) > 2 else f"ours / the faster cuBLAS default, by {'K' if by_k else 'M'}"
    ours = args[3] if len(args) > 3 else "ours"
    times = defaultdict(dict)
    for one in path.split(","):
        with open(one, newline="") as f:
            for r in csv.DictReader(f):
                if runs and r.get("run") not in runs:
                    continue
                shape = (int(r["m"]), int(r["n"]), int(r["k"]))
                if compare:
                    shape = (r["run"],) + shape
                if "implementation" in r:
                    if r["median_ms"]:
                        times[shape][r["implementation"]] = float(r["median_ms"])
                else:
                    times[shape] = {name: us / 1e3 for name, us in wide_us(r).items()}
    lines = defaultdict(list)
    grouped = defaultdict(list)
    for key, t in times.items():
        if {ours, "cublasGemmEx", "cublasLt-heuristic"} <= t.keys():
            ratio = min(t["cublasGemmEx"], t["cublasLt-heuristic"]) / t[ours]
            if compare:
                run, m, n, k = key
                grouped[(compare.index(run), m, k)].append(ratio)
                continue
            m, n, k = key
            if by_k:
                lines[(m, n)].append((k, ratio))
            else:
                lines[(n, k)].append((m, ratio))
    for (run, m, k), rs in grouped.items():
        lines[(m, run)].append((k, geomean(rs)))
    lines = {nk: sorted(p) for nk, p in lines.items() if len(p) > 1}
    w, h, left, top, right, bottom = 980, 560, 60, 40, 230, 50
    ms = [m for p in lines.values() for m, _ in p]
    x0, x1 = math.log2(min(ms)), math.log2(max(ms))
    y0, y1 = 0.3, 1.2
    px = lambda m: left + (math.log2(m) - x0) / max(x1 - x0, 1e-9) * (w - left - right)
    py = lambda r: top + (y1 - min(max(r, y0), y1)) / (y1 - y0) * (h - top - bottom)
    s = svg_open(w, h, title, left)
    for i in range(10):
        r = y0 + i * 0.1
        s.append(f'<line x1="{left}" x2="{w - right}" y1="{py(r):.1f}" y2="{py(r):.1f}" stroke="{"#444" if abs(r - 1) < 1e-9 else "#ddd"}"/>')
        s.append(f'<text x="{left - 8}" y="{py(r) + 4:.1f}" text-anchor="end">{r:.1f}</text>')
    for m in sorted(set(ms)):
        s.append(f'<text x="{px(m):.1f}" y="{h - bottom + 16}" text-anchor="middle" font-size="10">{m}</text>')
    axis = "K (the reduction)" if by_k else "M (tokens)"
    s.append(f'<text x="{(left + w - right) / 2}" y="{h - 12}" text-anchor="middle">{axis}</text>')
    for i, (nk, pts) in enumerate(sorted(lines.items())):
        if compare:
            # A colour per M; the first run's line dashed, the second's solid.
            c = COLORS[(i // 2) % len(COLORS)]
            dash = ' stroke-dasharray="5,3"' if nk[1] == 0 else ""
            label = f"M {nk[0]}, {compare[nk[1]]}"
        else:
            c = COLORS[i % len(COLORS)]
            dash = "" if i < len(COLORS) else ' stroke-dasharray="5,3"'
            label = f"M {nk[0]}, N {nk[1]}" if by_k else f"N {nk[0]}, K {nk[1]}"
        d = " ".join(f"{px(m):.1f},{py(r):.1f}" for m, r in pts)
        s.append(f'<polyline points="{d}" fill="none" stroke="{c}" stroke-width="1.6"{dash}/>')
        y = top + 14 * i
        s.append(f'<line x1="{w - right + 12}" x2="{w - right + 32}" y1="{y}" y2="{y}" stroke="{c}" stroke-width="2"{dash}/>')
        s.append(f'<text x="{w - right + 38}" y="{y + 4}">{label}</text>')
    s.append("</svg>")
    with open(out, "w") as f:
        f.write("\n".join(s) + "\n")


if __name__ == "__main__":
    main()
