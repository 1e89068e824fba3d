#!/usr/bin/env python3
"""Plots the benchmark CSV as an SVG (standard library only), three panels: the elected-lane
mbarrier ring's cycles per stage vs stages; the counter ring against the mbarrier ring (4 stages,
per shape); streaming GB/s vs stage size against cudaMemcpy.

Usage: python3 plot.py bench.csv bench.svg

A CSV without `bench_elect_*` rows (the first runs, 2026-11-30) gets that run's panels instead: the
plain mbarrier ring (per-warp and per-thread release) in the first, and in the second the counter's
first algorithm, the library's and the library's without its fence, with 1.5x the mbarrier ring
(the target then) marked. An output name ending in .png is written as .svg beside it.
"""
import csv
import math
import re
import sys
from xml.sax.saxutils import escape

# matplotlib's default colour cycle, which drew the earlier PNGs.
C = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"]
PW, PH, ML, MT, GAP = 400, 330, 62, 34, 92  # plot width and height, left and top margins, gap


def number(text):
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


def nice_ticks(lo, hi, count=6):
    step = 10 ** math.floor(math.log10((hi - lo) / count))
    for m in (1, 2, 2.5, 5, 10):
        if (hi - lo) / (step * m) <= count:
            step *= m
            break
    t = math.ceil(lo / step) * step
    ticks = []
    while t <= hi + 1e-9:
        ticks.append(round(t, 6))
        t += step
    return ticks


def label(t):
    return f"{t:g}"


class Panel:
    """One panel: a frame at (x0, y0), data ranges, and its SVG elements."""

    def __init__(self, svg, index, xr, yr, xlog=False):
        self.svg, self.xlog = svg, xlog
        self.x0, self.y0 = ML + index * (PW + GAP), MT
        self.xr = [math.log2(v) for v in xr] if xlog else list(xr)
        self.yr = list(yr)

    def px(self, x):
        x = math.log2(x) if self.xlog else x
        return self.x0 + (x - self.xr[0]) / (self.xr[1] - self.xr[0]) * PW

    def py(self, y):
        return self.y0 + PH - (y - self.yr[0]) / (self.yr[1] - self.yr[0]) * PH

    def frame(self, title, xlabel, ylabel, xticks, yticks):
        s, x0, y0 = self.svg, self.x0, self.y0
        s.append(f'<text x="{x0 + PW / 2}" y="{y0 - 10}" text-anchor="middle" font-size="13">{escape(title)}</text>')
        for t in yticks:
            y = self.py(t)
            s.append(f'<line x1="{x0 - 4}" x2="{x0}" y1="{y:.1f}" y2="{y:.1f}" stroke="#000"/>')
            s.append(f'<text x="{x0 - 6}" y="{y + 4:.1f}" text-anchor="end">{label(t)}</text>')
        for t, text in xticks:
            x = self.px(t)
            s.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{y0 + PH}" y2="{y0 + PH + 4}" stroke="#000"/>')
            for i, part in enumerate(text.split("\n")):
                s.append(f'<text x="{x:.1f}" y="{y0 + PH + 16 + 12 * i}" text-anchor="middle">{escape(part)}</text>')
        if xlabel:
            s.append(f'<text x="{x0 + PW / 2}" y="{y0 + PH + 44}" text-anchor="middle">{escape(xlabel)}</text>')
        s.append(f'<text transform="translate({x0 - 46},{y0 + PH / 2}) rotate(-90)" text-anchor="middle">{escape(ylabel)}</text>')
        s.append(f'<rect x="{x0}" y="{y0}" width="{PW}" height="{PH}" fill="none" stroke="#000"/>')

    def line(self, pts, color, dash, marker, tip):
        pts = [(x, y) for x, y in pts if y is not None]
        if not pts:
            return
        path = " ".join(f"{'M' if i == 0 else 'L'}{self.px(x):.1f},{self.py(y):.1f}" for i, (x, y) in enumerate(pts))
        da = ' stroke-dasharray="6 3"' if dash else ""
        self.svg.append(f'<path d="{path}" fill="none" stroke="{color}" stroke-width="1.5"{da}/>')
        for x, y in pts:
            self.marker(self.px(x), self.py(y), marker, color, f"{tip}: {y:g}")

    def marker(self, x, y, kind, color, tip):
        t = f"<title>{escape(tip)}</title>"
        if kind == "o":
            self.svg.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3.5" fill="{color}">{t}</circle>')
        elif kind == "s":
            self.svg.append(f'<rect x="{x - 3.5:.1f}" y="{y - 3.5:.1f}" width="7" height="7" fill="{color}">{t}</rect>')
        elif kind == "x":
            self.svg.append(f'<path d="M{x - 4:.1f},{y - 4:.1f}l8,8m0,-8l-8,8" stroke="{color}" stroke-width="1.5">{t}</path>')
        else:  # "^" or "v"
            d = -1 if kind == "^" else 1
            self.svg.append(f'<path d="M{x:.1f},{y + 4.5 * d:.1f}l-4.5,{-9 * d}h9z" fill="{color}">{t}</path>')

    def hline(self, y, color, tip):
        self.svg.append(f'<line x1="{self.x0}" x2="{self.x0 + PW}" y1="{self.py(y):.1f}" y2="{self.py(y):.1f}" stroke="{color}" stroke-width="1.5" stroke-dasharray="2 3"><title>{escape(tip)}</title></line>')

    def legend(self, entries, corner):
        """entries: (kind, color, dash, marker, text); kind "line", "bar" or "mark"."""
        w = 34 + max(len(e[4]) for e in entries) * 4.8
        h = legend_height(len(entries))
        x = self.x0 + PW - w - 6 if "right" in corner else self.x0 + 6
        y = self.y0 + 6 if "upper" in corner else self.y0 + PH - h - 6
        if corner == "center right":
            y = self.y0 + (PH - h) / 2
        s = self.svg
        s.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h}" fill="#fff" fill-opacity="0.85" stroke="#ccc"/>')
        for i, (kind, color, dash, marker, text) in enumerate(entries):
            cy = y + 9 + 12 * i
            if kind == "bar":
                s.append(f'<rect x="{x + 6:.1f}" y="{cy - 4:.1f}" width="18" height="8" fill="{color}"/>')
            elif kind == "line":
                da = ' stroke-dasharray="6 3"' if dash == "--" else ' stroke-dasharray="2 3"' if dash == ":" else ""
                s.append(f'<line x1="{x + 4:.1f}" x2="{x + 26:.1f}" y1="{cy:.1f}" y2="{cy:.1f}" stroke="{color}" stroke-width="1.5"{da}/>')
            if marker:
                self.marker(x + 15, cy, marker, color, text)
            s.append(f'<text x="{x + 30:.1f}" y="{cy + 3.5:.1f}" font-size="9">{escape(text)}</text>')


def legend_height(rows):
    return 6 + 12 * rows


def room_above(lo, hi, rows):
    """The top of a y range from lo that keeps hi below an upper legend of `rows` rows."""
    return lo + (hi - lo) / (1 - (legend_height(rows) + 14) / PH)


def auto_range(values, margin=0.05):
    lo, hi = min(values), max(values)
    pad = (hi - lo) * margin or 1
    return lo - pad, hi + pad


def main():
    src, out = sys.argv[1], sys.argv[2]
    if out.endswith(".png"):
        out = out[: -len(".png")] + ".svg"
    with open(src, newline="") as f:
        rows = list(csv.DictReader(f))
    cycles = {r["kernel"]: r for r in rows if r["kind"] == "cycles"}
    variant = {r["kernel"]: r for r in rows if r["kind"] == "variant"}
    streams = [r for r in rows if r["kind"] == "stream"]
    elect = any(k.startswith("bench_elect_") for k in cycles)
    width, height = ML + 3 * PW + 2 * GAP + 20, MT + PH + 56
    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="11">',
           f'<rect width="{width}" height="{height}" fill="white"/>']

    # Left: cycles per stage against the stage count.
    lines = []  # (points, color, dash, marker, label)
    if elect:
        # The elected-lane ring (every lane waits, lane 0 arrives; direct calls), per stage count:
        # Rust and C++ at equal (flat) loop shape, and the Rust plain loop as LLVM unrolls it.
        stage_ticks, title = (1, 2, 4, 8), "elected-lane mbarrier ring (per-warp release)"
        for j, (warps, dash) in enumerate(((1, False), (4, True))):
            got = [(s, cycles.get(f"bench_elect_s{s}_c{warps}_warp_direct")) for s in stage_ticks]
            got = [(s, r) for s, r in got if r]
            for k, (col, marker, name) in enumerate((("rust", "o", f"Rust flat, {warps} consumer warp(s)"),
                                                     ("cpp", "x", f"C++ flat, {warps} consumer warp(s)"),
                                                     ("rust_llvm_loop", "s", f"Rust plain loop (LLVM-unrolled), {warps} warp(s)"))):
                lines.append(([(s, number(r.get(col))) for s, r in got], C[3 * j + k], dash, marker, name))
        corner = "upper right"
    else:
        # The mbarrier ring, synchronisation only, per release mode and consumer warps.
        stage_ticks, title = (2, 4, 8), "mbarrier ring, synchronisation only"
        for j, (mode, warps) in enumerate(((m, w) for m in ("warp", "thread") for w in (1, 4))):
            pts = sorted((int(m.group(1)), r) for k, r in cycles.items()
                         if (m := re.fullmatch(rf"bench_ring_mbar_s(\d+)_c{warps}_{mode}", k)))
            for k, (col, marker, who) in enumerate((("rust", "o", "Rust"), ("cpp", "x", "C++"))):
                lines.append(([(s, number(r[col])) for s, r in pts], C[2 * j + k], mode == "thread", marker,
                              f"{who}, {warps} consumer warp(s), per-{mode}"))
        corner = "center right"
    ys = [y for pts, *_ in lines for _, y in pts if y is not None]
    lo, hi = auto_range(ys)
    if corner == "upper right":
        hi = room_above(lo, hi, len(lines))
    p = Panel(svg, 0, (stage_ticks[0] - 0.35, stage_ticks[-1] + 0.35), (lo, hi))
    p.frame(title, "stages", "cycles per stage (median)", [(s, str(s)) for s in stage_ticks], nice_ticks(lo, hi))
    for pts, color, dash, marker, name in lines:
        p.line(pts, color, dash, marker, name)
    p.legend([("line", c, "--" if d else "-", m, n) for _, c, d, m, n in lines], corner)

    # Middle: the counter ring (4 stages) against the mbarrier ring of the same shape, Rust.
    shapes = [("c1_warp", "1 warp\nper-warp"), ("c4_warp", "4 warps\nper-warp"),
              ("c1_thread", "1 warp\nper-thread"), ("c4_thread", "4 warps\nper-thread")]
    if elect:
        series = [("base", "counter, library"), ("prev", "counter, arrive before grouping by counter (wrong for split lanes)"),
                  ("match", "counter, always match.any")]
        headroom, ylabel = 1.2, "cycles per stage (median, Rust, flat loop)"
    else:
        series = [("old", "counter, first algorithm"), ("base", "counter, library now"),
                  ("sleep0_nofence", "counter now, without fence (not correct)")]
        headroom, ylabel = 1.45, "cycles per stage (median, Rust)"
    bars = [(name, text, [number(variant.get(f"{name}_{s}", {}).get("rust")) for s, _ in shapes]) for name, text in series]
    mbar = [number(cycles.get(f"bench_ring_mbar_s4_{s}", {}).get("rust")) for s, _ in shapes]
    bars.append(("mbarrier", "mbarrier (library)", mbar))
    tallest = max([y or 0 for _, _, ys in bars[:-1] for y in ys] + [1])
    top = max(headroom * tallest, room_above(0, tallest, len(bars) + (not elect)))
    p = Panel(svg, 1, (-0.5, len(shapes) - 0.5), (0, top))
    bw = 0.2
    for i, (name, text, ys) in enumerate(bars):
        for k, y in enumerate(ys):
            if y is None:
                continue
            x = p.px(k + (i - 1.5) * bw - bw / 2)
            svg.append(f'<rect x="{x:.1f}" y="{p.py(y):.1f}" width="{bw * PW / len(shapes):.1f}" height="{p.py(0) - p.py(y):.1f}" fill="{C[i]}"><title>{escape(text)}, {shapes[k][1].replace(chr(10), " ")}: {y:g}</title></rect>')
    entries = [("bar", C[i], "", "", text) for i, (_, text, _) in enumerate(bars)]
    if not elect:  # the target then: 1.5x the mbarrier ring
        for k, y in enumerate(mbar):
            if y:
                x = p.px(k + 1.5 * bw)
                svg.append(f'<line x1="{x - 11:.1f}" x2="{x + 11:.1f}" y1="{p.py(1.5 * y):.1f}" y2="{p.py(1.5 * y):.1f}" stroke="#000" stroke-width="1.5"><title>1.5x mbarrier: {1.5 * y:g}</title></line>')
        entries.insert(0, ("line", "#000", "-", "", "1.5x mbarrier (target)"))
    p.frame("counter ring vs mbarrier ring, 4 stages", "", ylabel, [(k, t) for k, (_, t) in enumerate(shapes)], nice_ticks(0, top))
    p.legend(entries, "upper right")

    # Right: streaming, the original shape per stage count, and the dynamic rows.
    memcpy = None
    lines = []
    for j, stages in enumerate((2, 4, 8)):
        pts = []
        for r in streams:
            m = re.fullmatch(rf"bench_stream_s{stages}_k(\d+)", r["kernel"])
            if m:
                pts.append((int(m.group(1)), number(r["rust"]), number(r["cpp"])))
                memcpy = number(r.get("memcpy") or r.get("reference"))
        pts.sort()
        if pts:
            lines.append(([(k, a) for k, a, _ in pts], C[2 * j], False, "o", f"Rust, {stages} stages (first shape)"))
            lines.append(([(k, b) for k, _, b in pts], C[2 * j + 1], True, "x", f"C++, {stages} stages (first shape)"))
    dyn = []
    for r in streams:
        m = re.fullmatch(r"bench_stream_s(\d+)_k(\d+)_p\d+_d(?:_w(\d+))?(?:@.*)?", r["kernel"])
        # Rows with a stage count that is not a multiple of the storers are left out: such kernels
        # are wrong by construction (mbarrier parity aliasing) and were removed after the run.
        if m and int(m.group(1)) % int(m.group(3) or 1) == 0:
            dyn.append((int(m.group(2)), number(r["rust"]), number(r["cpp"]), r["kernel"]))
    ys = [y for pts, *_ in lines for _, y in pts if y is not None] + [d[1] for d in dyn] + [d[2] for d in dyn]
    ys += [memcpy, 0.95 * memcpy] if memcpy else []
    ks = [k for pts, *_ in lines for k, _ in pts] + [d[0] for d in dyn]
    lo, hi = auto_range(ys)
    p = Panel(svg, 2, (min(ks) / 1.04 / 1.15, max(ks) * 1.04 * 1.15), (lo, hi), xlog=True)
    kt = sorted(set(ks))
    p.frame("streaming copy through the ring (bulk copies)", "KiB per stage", "GB/s copied (median)",
            [(k, str(k)) for k in kt], nice_ticks(lo, hi))
    entries = []
    for pts, color, dash, marker, name in lines:
        p.line(pts, color, dash, marker, name)
        entries.append(("line", color, "--" if dash else "-", marker, name))
    if dyn:
        for k, a, b, kernel in dyn:
            p.marker(p.px(k * 1.04), p.py(a), "^", C[0], f"{kernel}, Rust: {a:g}")
            p.marker(p.px(k / 1.04), p.py(b), "v", C[1], f"{kernel}, C++: {b:g}")
        entries += [("mark", C[0], "", "^", "Rust, dynamic chunks (all rows)"), ("mark", C[1], "", "v", "C++, dynamic chunks (all rows)")]
    if memcpy:
        p.hline(memcpy, "#000", f"cudaMemcpy D2D {memcpy:g} GB/s")
        p.hline(0.95 * memcpy, "#d62728", f"0.95 x cudaMemcpy: {0.95 * memcpy:.1f} GB/s")
        entries += [("line", "#000", ":", "", f"cudaMemcpy D2D {memcpy:.0f} GB/s"),
                    ("line", "#d62728", ":", "", "0.95 x cudaMemcpy (target)")]
    p.legend(entries, "lower right")
    svg.append("</svg>")
    with open(out, "w") as f:
        f.write("\n".join(svg) + "\n")
    print(f"plot written: {out}")


if __name__ == "__main__":
    main()
