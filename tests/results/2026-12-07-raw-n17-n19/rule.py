import sys
exec(open('/tmp/fit/model.py').read().split("if __name__")[0])
def ev(rule, data, name, show=False):
    within=0; rat=[]; rd=[]
    for s,t in sorted(data.items(), key=lambda x:[int(v) for v in x[0].split('x')]):
        m,n,k=map(int,s.split('x')); d,f=feat[s]
        prod={kk:t['ours-'+kk] for kk in f if 'ours-'+kk in t}
        pick=rule(m,n,k,d,f)
        tp=t['ours'] if pick is None else prod[pick]
        best=min(prod.values()); ok=tp<=1.03*best; within+=ok
        cub=min(t['cublasGemmEx'],t['cublasLt-heuristic']); rat.append(cub/tp); rd.append(t['ours']/tp)
        if show and not ok: print(f'  {s:16} {d:15} pick {pick} {tp/best:.3f} best {min(prod,key=prod.get)}')
    g=lambda x: math.exp(sum(map(math.log,x))/len(x))
    print(f'{name}: within {within}/{len(data)}  cuBLAS/pick {g(rat):.3f} (min {min(rat):.3f})  gain over default {g(rd):.3f} (min {min(rd):.3f})')
base=lambda m,n,k,d,f: None
def r1(m,n,k,d,f):
    p=f['persistent-64']
    if 65<=m<=192 and k>=2048 and p['tiles']<=132 and d not in ('skinny-64-r64','skinny-32-r64'): return 'persistent-64'
    return None
for nm,r in (('base',base),('r1',r1)):
    ev(r,ds,nm+' DS',show=len(sys.argv)>1); ev(r,sh,nm+' SH',show=len(sys.argv)>1)
def r2(m,n,k,d,f):
    kb=-(-k//64)
    one=lambda name: f[name]['tiles']<=132
    r64=None
    # C1/C2/C5: the 64-row transposing tiles
    if 65<=m<=128 and k<=2048 or 144<=m<=192 and kb<=32 or 49<=m<=64 and kb>=16:
        for nm in ('skinny-32-r64','skinny-64-r64'):
            if m>32 and m<=64 and kb>24:
                if one('skinny-64-r64'): r64='skinny-64-r64'
                break
            if one(nm): r64=nm; break
    if r64 and d in ('skinny-32-r64','skinny-64-r64'): return r64
    if r64 and not (m<=64): return r64
    if r64 and m<=64: return r64
    # C3
    if 65<=m<=192 and one('persistent-64') and (m<=128 or k<=4096): return 'persistent-64'
    # C4
    if 33<=m<=48 and one('persistent-64') and k<=4096: return 'persistent-64'
    return None
ev(r2,ds,'r2 DS',show=len(sys.argv)>1); ev(r2,sh,'r2 SH',show=len(sys.argv)>1)
