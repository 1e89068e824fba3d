import csv,collections,sys,glob,math
d=collections.defaultdict(lambda: collections.defaultdict(list))  # (shape,impl)-> mod -> [us]
order=[]
for f in sorted(glob.glob(sys.argv[1]+'/ab-*.csv')):
    mod=f.split('ab-')[1].split('-')[0]
    for r in csv.DictReader(open(f)):
        if r['shape'] not in order: order.append(r['shape'])
        d[(r['shape'],r['implementation'])][mod].append(float(r['median_ms'])*1000)
impls=['ours','ours-skinny-16-ck','ours-skinny-32-ck','ours-skinny-64-ck','ours-skinny-192-ck']
g=collections.defaultdict(list)
print(f"{'shape':>14} {'cub':>6} " + ' '.join(f"{i[5:]:>22}" for i in impls))
for s in order:
    cub=min(min(d[(s,'cublasGemmEx')]['old']+d[(s,'cublasGemmEx')]['new']), min(d[(s,'cublasLt-heuristic')]['old']+d[(s,'cublasLt-heuristic')]['new']))
    cells=[]
    for i in impls:
        o=d[(s,i)]['old']; n=d[(s,i)]['new']
        if not o or not n: cells.append(' '*22); continue
        mo=sum(o)/len(o); mn=sum(n)/len(n); g[i].append(mo/mn)
        cells.append(f"{mo:6.2f}->{mn:6.2f} ({mo/mn:5.3f})")
    # cublas per mod
    print(f"{s:>14} {cub:6.2f} "+' '.join(cells))
for i in impls:
    if g[i]: print(i, 'geomean old/new', round(math.exp(sum(map(math.log,g[i]))/len(g[i])),4), 'n', len(g[i]))
# cublas drift between processes
for c in ['cublasGemmEx','cublasLt-heuristic']:
    r=[ (sum(d[(s,c)]['old'])/len(d[(s,c)]['old']))/(sum(d[(s,c)]['new'])/len(d[(s,c)]['new'])) for s in order]
    print(c,'old/new drift',round(math.exp(sum(map(math.log,r))/len(r)),4))
