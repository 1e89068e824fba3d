import csv, sys, collections, math
import numpy as np
from scipy.optimize import least_squares
def med(x):
    x=sorted(x); n=len(x); return x[n//2] if n%2 else (x[n//2-1]+x[n//2])/2
def load(paths):
    by=collections.defaultdict(lambda: collections.defaultdict(list))
    for p in paths:
        for r in csv.DictReader(open(p)):
            by[r['shape']][r['implementation']].append(float(r['median_ms'])*1000)
    return {s:{k:med(v) for k,v in t.items()} for s,t in by.items()}
feat={}
for line in open('/tmp/feat.txt'):
    p=line.split(); s=p[0]; d=p[1].split('=')[1]; f={}
    for it in p[2:]:
        q=it.split(':')
        if q[1]=='x': continue
        f[q[0]]=dict(zip(['grid','crit','bytes','split','tiles','total'],map(float,q[1:])))
    feat[s]=(d,f)
ds=load(['/tmp/n17/ds-1.csv']); sh=load(['/tmp/n17/sh-1.csv'])
PROD=sorted({k for s in feat for k in feat[s][1]})
def predict(th, k, f, shape):
    i=PROD.index(k); a,mk,fx=th[3*i:3*i+3]; bw=th[-1]
    m,n,kk=map(int,shape.split('x'))
    act=min(f['grid'],132)
    per_kb=max(mk, f['bytes']*act/bw/1e3)
    return a + f['crit']*per_kb + f['split']*fx
def resid(th, data):
    r=[]
    for s,t in data.items():
        for k,f in feat[s][1].items():
            key='ours-'+k
            if key in t: r.append(math.log(predict(th,k,f,s)/t[key]))
    return np.array(r)
def fit(data):
    th0=np.array([4.0,0.1,1.0]*len(PROD)+[2500.0])
    lo=[0,0,0]*len(PROD)+[100]; hi=[50,10,50]*len(PROD)+[10000]
    return least_squares(resid, th0, args=(data,), bounds=(lo,hi)).x
def evaluate(th, data, name):
    within=0; rat=[]; bad=[]
    for s,t in sorted(data.items(), key=lambda x:[int(v) for v in x[0].split('x')]):
        cand={k:predict(th,k,f,s) for k,f in feat[s][1].items() if 'ours-'+k in t}
        pick=min(cand,key=cand.get)
        prod={k:t['ours-'+k] for k in cand}
        best=min(prod.values()); ok=prod[pick]<=1.03*best; within+=ok
        cub=min(t['cublasGemmEx'],t['cublasLt-heuristic']); rat.append(cub/prod[pick])
        if not ok: bad.append((s,pick,round(prod[pick]/best,3)))
    g=math.exp(sum(map(math.log,rat))/len(rat))
    print(f'{name}: within 3 % {within}/{len(data)}; cuBLAS/pick {g:.3f} min {min(rat):.3f}')
    return bad
if __name__=='__main__':
    th=fit(ds); print('fit DS rms', np.sqrt(np.mean(resid(th,ds)**2)), 'SH', np.sqrt(np.mean(resid(th,sh)**2)))
    evaluate(th,ds,'DS (in sample)'); b=evaluate(th,sh,'SH (out of sample)'); print(b[:20])
    th=fit(sh); evaluate(th,sh,'SH in'); evaluate(th,ds,'DS out')
    th=fit({**ds,**sh}); evaluate(th,ds,'all->DS'); evaluate(th,sh,'all->SH')
    for i,k in enumerate(PROD): print(k, np.round(th[3*i:3*i+3],3))
    print('bw', th[-1])
