import csv,collections,math,sys
d=sys.argv[1]
by=collections.defaultdict(lambda: collections.defaultdict(list))
for f in ['t-1','t-2']:
    try:
        for r in csv.DictReader(open(f'{d}/{f}.csv')):
            by[r['shape']][r['implementation']].append(float(r['median_ms'])*1000)
    except FileNotFoundError: pass
def med(x):
    x=sorted(x); n=len(x); return x[n//2] if n%2 else (x[n//2-1]+x[n//2])/2
pairs=[('skinny-32-r64-k','skinny-32-r64'),('skinny-64-r64-k','skinny-64-r64'),('skinny-80-r64-dk','skinny-80-r64-d'),('skinny-96-r64-dk','skinny-96-r64-d')]
g=lambda x: math.exp(sum(map(math.log,x))/len(x)) if x else float('nan')
rat=collections.defaultdict(list)
for s in sorted(by,key=lambda x:[int(v) for v in x.split('x')]):
    dd={i:med(v) for i,v in by[s].items()}
    cub=min(dd['cublasGemmEx'],dd['cublasLt-heuristic'])
    old={i:v for i,v in dd.items() if i.startswith('ours-') and not i.endswith('-k') and not i.endswith('-dk')}
    new={i:v for i,v in dd.items() if i.endswith('-k') or i.endswith('-dk')}
    bo=min(old,key=old.get); bn=min(new,key=new.get) if new else None
    line=f"{s:15} cub {cub:6.2f} default {dd['ours']:6.2f} best-old {bo[5:]:16} {old[bo]:6.2f}"
    if bn: line+=f" best-k {bn[5:]:16} {new[bn]:6.2f} cub/best-k {cub/new[bn]:.3f} cub/best-old {cub/old[bo]:.3f} |"
    for k,t in pairs:
        a,b=dd.get('ours-'+k),dd.get('ours-'+t)
        if a and b:
            rat[k].append(b/a); line+=f" {k[7:]} {b/a:.3f}"
    print(line)
for k,_ in pairs: print(k, 'twin/k-step time: geomean', f"{g(rat[k]):.3f}", 'min', f"{min(rat[k]) if rat[k] else 0:.3f}", 'max', f"{max(rat[k]) if rat[k] else 0:.3f}", 'n', len(rat[k]))
