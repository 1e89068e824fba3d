#!/usr/bin/env python3
"""The scale step of a3.sh: per kernel and shape, the CTAs (grid), the split, k-blocks per CTA, and
the period per k-block (ns) = median time / k-blocks per CTA (one wave), against the CTA count."""
import re, sys
cur = None; name = None; out = []
for line in open(sys.argv[1]):
    m = re.match(r'^== (\d+)x(\d+)x(\d+) ', line)
    if m: cur = tuple(map(int, m.groups())); continue
    m = re.match(r'^  (\S+)\s+([\d.]+) TFLOP/s\s+median ([\d.]+) ms', line)
    if m: name = m.group(1); t = float(m.group(3)) * 1e6; continue
    m = re.match(r'^\s+(\S+): (\d+) split\(s\) of K, grid (\d+) x (\d+) CTAs', line)
    if m and cur and name and name.startswith('ours-'):
        splits, gx, gy = int(m.group(2)), int(m.group(3)), int(m.group(4))
        kb = cur[2] // 64 / splits
        out.append((name, cur, gx * gy, splits, kb, t, t / kb))
for n in sorted(set(o[0] for o in out)):
    print(n)
    for o in out:
        if o[0] == n: print(f"  {o[1][0]:4}x{o[1][1]:5}x{o[1][2]:5} CTAs {o[2]:4} splits {o[3]} kb/CTA {o[4]:6.1f} time {o[5]/1000:8.2f} us period {o[6]:7.1f} ns/k-block")
