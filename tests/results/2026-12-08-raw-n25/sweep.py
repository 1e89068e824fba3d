#!/usr/bin/env python3
"""Summarize gemm-bench logs of the issue-24 sweep: per shape the faster cuBLAS default, ours (the
default), the kernel it chose and that kernel's own column, our fastest kernel; by class the
geometric means, the counts >= 0.90, and the default within 3 % of our fastest (by its own column
and by the chosen kernel's column).  usage: sweep.py LOG [LOG...] [--csv OUT]"""
import math, re, sys, collections
args = [a for a in sys.argv[1:] if not a.startswith('--')]
out_csv = next((a.split('=', 1)[1] for a in sys.argv[1:] if a.startswith('--csv=')), None)
shape_re = re.compile(r'^== (\d+)x(\d+)x(\d+) \(M x N x K\)')
row_re = re.compile(r'^  (\S+)\s+([\d.]+) TFLOP/s\s+median ([\d.]+) ms')
rows = {}
import csv as csvmod, os
for path in args:
    cur = None; last = None
    stem = path[:-4] if path.endswith('.log') else path
    precise = {}
    if os.path.exists(stem + '.csv'):
        for r in csvmod.DictReader(open(stem + '.csv')):
            if r['median_ms']:
                precise[(int(r['m']), int(r['n']), int(r['k']), r['implementation'])] = float(r['median_ms']) * 1000
    for line in open(path):
        m = shape_re.match(line)
        if m:
            cur = tuple(map(int, m.groups())); rows[cur] = {'t': {}, 'choice': None}; last = None; continue
        if cur is None: continue
        m = re.match(r'^  copy-equal-bytes\s+median ([\d.]+) ms', line)
        if m:
            rows[cur]['t']['copy'] = precise.get(cur + ('copy-equal-bytes',), float(m.group(1)) * 1000); last = 'copy'; continue
        m = row_re.match(line)
        if m:
            last = m.group(1); rows[cur]['t'][last] = precise.get(cur + (last,), float(m.group(3)) * 1000); continue
        if last == 'ours' and rows[cur]['choice'] is None and line.startswith('      ') and ':' in line and 'check' not in line:
            rows[cur]['choice'] = line.strip().split(':')[0]
g = lambda x: math.exp(sum(map(math.log, x)) / len(x)) if x else float('nan')
cls = collections.defaultdict(list)
table = []
for s in sorted(rows):
    t = rows[s]['t']
    if 'ours' not in t: continue
    cub = min(t['cublasGemmEx'], t['cublasLt-heuristic'])
    auto = t.get('cublasLt-autotuned')
    mine = {k[5:]: v for k, v in t.items() if k.startswith('ours-')}
    best = min(mine, key=mine.get)
    ch = rows[s]['choice']; chv = mine.get(ch, t['ours'])
    m = s[0]; c = 'decode' if m <= 64 else ('mid' if m <= 1024 else 'large')
    r = dict(shape='x'.join(map(str, s)), cls=c, cub=cub, auto=auto, ours=t['ours'], choice=ch, chosen=chv,
             best=best, best_us=mine[best], ratio=cub / t['ours'], best_ratio=cub / mine[best],
             w3_own=t['ours'] <= 1.03 * mine[best], w3_ch=chv <= 1.03 * mine[best], copy=t.get('copy'))
    cls[c].append(r); cls['all'].append(r); table.append(r)
for c in ['decode', 'mid', 'large', 'all']:
    rs = cls[c]
    if not rs: continue
    print(f"{c:7} n={len(rs):3} ours/cuBLAS geomean {g([r['ratio'] for r in rs]):.3f} min {min(r['ratio'] for r in rs):.3f} "
          f">=0.90 {sum(r['ratio'] >= 0.9 for r in rs)} >=1.0 {sum(r['ratio'] >= 1.0 for r in rs)} | fastest-of-ours/cuBLAS {g([r['best_ratio'] for r in rs]):.3f} "
          f"| within 3 %: own column {sum(r['w3_own'] for r in rs)}, chosen column {sum(r['w3_ch'] for r in rs)} "
          f"| default/chosen column geomean {g([r['ours'] / r['chosen'] for r in rs]):.3f}")
    cp = [r['copy'] / r['ours'] for r in rs if r['copy']]
    if cp: print(f"        copy bandwidth fraction (ours): geomean {g(cp):.3f} min {min(cp):.3f} max {max(cp):.3f} >=0.80 {sum(x >= 0.8 for x in cp)} of {len(cp)}")
if '--shapes' in sys.argv:
    for r in table:
        print(f"{r['shape']:18} cub {r['cub']:8.2f} ours {r['ours']:8.2f} ({r['choice']}: {r['chosen']:8.2f}) best {r['best']:16} {r['best_us']:8.2f} ratio {r['ratio']:.3f} best {r['best_ratio']:.3f}{'' if r['w3_ch'] else '  MISS3'}")
if out_csv:
    with open(out_csv, 'w') as f:
        f.write('shape,m,n,k,class,cublas_default_us,cublaslt_autotuned_us,ours_us,choice,chosen_column_us,fastest_of_ours,fastest_us,ours_over_cublas,fastest_over_cublas,within3_chosen,copy_fraction\n')
        for r in table:
            m, n, k = r['shape'].split('x')
            f.write(f"{r['shape']},{m},{n},{k},{r['cls']},{r['cub']:.3f},{r['auto'] or ''},{r['ours']:.3f},{r['choice']},{r['chosen']:.3f},{r['best']},{r['best_us']:.3f},{r['ratio']:.4f},{r['best_ratio']:.4f},{int(r['w3_ch'])},{'%.4f' % (r['copy'] / r['ours']) if r['copy'] else ''}\n")
