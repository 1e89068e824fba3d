import csv,collections,math,sys
d,po,pn=sys.argv[1],sys.argv[2].split(','),sys.argv[3].split(',')
def med(x):
    x=sorted(x); n=len(x); return x[n//2] if n%2 else (x[n//2-1]+x[n//2])/2
def load(fs):
    by=collections.defaultdict(lambda: collections.defaultdict(list))
    for f in fs:
        for r in csv.DictReader(open(f'{d}/{f}')):
            by[r['shape']][r['implementation']].append(float(r['median_ms'])*1000)
    return by
o=load(po); n=load(pn); allk=load(po+pn)
g=lambda x: math.exp(sum(map(math.log,x))/len(x))
rat=[];wo=wn=0;cubo=[];cubn=[]
for s in sorted(o, key=lambda x:[int(v) for v in x.split('x')]):
    to=med(o[s]['ours']); tn=med(n[s]['ours'])
    prod={k:med(v) for k,v in allk[s].items() if k.startswith('ours-')}
    best=min(prod.values()); bk=min(prod,key=prod.get)
    cub=min(med(allk[s]['cublasGemmEx']),med(allk[s]['cublasLt-heuristic']))
    rat.append(to/tn); wo+=to<=1.03*best; wn+=tn<=1.03*best; cubo.append(cub/to); cubn.append(cub/tn)
    if abs(to/tn-1)>0.02 or tn>1.03*best: print(f'{s:15} old {to:6.2f} new {tn:6.2f} ({to/tn:.3f})  best {bk[5:]:15} {best:6.2f}  new/best {tn/best:.3f}  cub/new {cub/tn:.3f}')
print(f'new over old: {g(rat):.3f} (min {min(rat):.3f}, max {max(rat):.3f}); default within 3 % of our fastest: old {wo}/{len(rat)}, new {wn}/{len(rat)}; cuBLAS/default old {g(cubo):.3f} new {g(cubn):.3f} (min {min(cubn):.3f})')
