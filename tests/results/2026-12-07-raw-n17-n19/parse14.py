import re,collections,math,sys
def parse(f):
    d=collections.defaultdict(dict); cur=None
    for line in open(f):
        m=re.match(r'== (\d+x\d+x\d+) ',line)
        if m: cur=m.group(1); continue
        m=re.match(r'\s+(\S+)\s+[\d.]+ TFLOP/s\s+median ([\d.]+) ms',line)
        if m and cur: d[cur][m.group(1)]=float(m.group(2))*1000
    return d
import os
runs={k:parse(sys.argv[1]+f'/{k}.log') for k in ['pn-1','po-1','po-2','pn-2'] if os.path.exists(sys.argv[1]+f'/{k}.log')}
for k in ['pn-1','po-1','po-2','pn-2']: runs.setdefault(k,{})
for k,v in runs.items(): print(k,len(v),'shapes', list(v)[-1] if v else '')
g=lambda x: math.exp(sum(map(math.log,x))/len(x)) if x else float('nan')
# per kernel, per shape: new/old time normalised by cublas (min of GemmEx/heuristic) in each process
kern=collections.defaultdict(list); byshape={}
for s in runs['pn-1']:
    news=[runs[k][s] for k in ['pn-1','pn-2'] if s in runs[k] and 'cublasGemmEx' in runs[k][s]]
    olds=[runs[k][s] for k in ['po-1','po-2'] if s in runs[k] and 'cublasGemmEx' in runs[k][s]]
    if not news or not olds: continue
    rows=[]
    for impl in news[0]:
        if not impl.startswith('ours'): continue
        nv=[d[impl]/min(d['cublasGemmEx'],d['cublasLt-heuristic']) for d in news if impl in d]
        ov=[d[impl]/min(d['cublasGemmEx'],d['cublasLt-heuristic']) for d in olds if impl in d]
        if nv and ov:
            r=g(ov)/g(nv)  # >1: new faster
            kern[impl].append(r); rows.append((impl,r))
    byshape[s]=(len(news),len(olds),dict(rows))
for s,(a,b,r) in byshape.items():
    print(f"{s:16} new x{a} old x{b} default {r.get('ours',float('nan')):.3f}  min {min(r.values()):.3f} max {max(r.values()):.3f}")
print('per kernel (geomean old/new time, >1 = new faster):')
for k,v in sorted(kern.items(), key=lambda x:-g(x[1])): print(f"  {k:24} {g(v):.3f} over {len(v)} shapes (min {min(v):.3f}, max {max(v):.3f})")
