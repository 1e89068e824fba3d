import csv, sys, math, collections
S=132
def cdiv(a,b): return -(-a//b)
def tiles(m,n,w): return cdiv(m,128)*cdiv(n,w)
def before(m,n,k):
    if m>1024:
        few=lambda w: tiles(m,n,w) < S//2
        return "persistent-64" if few(256) and few(128) else "persistent-128" if few(256) else "cluster"
    if tiles(m,n,64) <= S and k <= 2048: return "persistent-64"
    narrow=tiles(m,n,128); half=m>128 and 1<=m%128<=64
    if half and (narrow > S or (k>=8192 and narrow >= S//3)): return "persistent"
    if narrow <= 3*S//2: return "persistent-128"
    wide=tiles(m,n,256); slots=lambda t: cdiv(t,S)*S
    return "persistent" if wide*slots(narrow) >= narrow*slots(wide) else "persistent-128"
def split_parts(t, kb):
    if t >= S: sp = t % S
    elif t < S//2: sp = t
    else: sp = 0
    if sp == 0: return 1
    return max(1, min(S//sp, kb//4, 16))
def cost_ceil(m,n,k,w): return cdiv(tiles(m,n,w),S)*w
def cost_split(m,n,k,w):
    t=tiles(m,n,w); kb=cdiv(k,64); p=split_parts(t,kb)
    full=t//S if t>=S else 0
    rem = t%S if t>=S else t
    if rem==0: return full*w
    if p>1: return full*w + w/p
    return (full+1)*w
def rule_ceil(m,n,k,b):
    if m<=64 or b not in ("persistent","persistent-128","cluster"): return b
    c=lambda w: cost_ceil(m,n,k,w)
    return "persistent-192" if 10*c(192)<=9*c(256) and c(192)<=c(128) else b
def rule_split(m,n,k,b, margin=0.9):
    if m<=64 or b not in ("persistent","persistent-128","cluster"): return b
    c=lambda w: cost_split(m,n,k,w)
    return "persistent-192" if c(192)<=margin*c(256) and c(192)<=c(128) else b
by=collections.OrderedDict()
for p in sys.argv[1:]:
    for r in csv.DictReader(open(p)):
        by.setdefault(r["shape"],{})[r["implementation"]]=float(r["median_ms"])*1000
def evaluate(name, rule):
    n=w=0; logs=[]; miss=[]
    for s,d in by.items():
        m,nn,k=map(int,s.split("x"))
        if m<=64: continue
        b=before(m,nn,k); pick=rule(m,nn,k,b)
        t=d.get("ours-"+pick)
        if t is None: continue
        best=min(v for kk,v in d.items() if kk.startswith("ours-"))
        cub=min(d["cublasGemmEx"],d["cublasLt-heuristic"])
        n+=1; w+= t<=1.03*best; logs.append(math.log(cub/t))
        if t>1.03*best and pick!=b: miss.append(f"{s}:{pick} {t/best:.3f}")
        if pick!=b and d.get("ours-"+b) and d["ours-"+b] < t*0.99: miss.append(f"  worse-than-before {s}: {pick} {t:.1f} vs {b} {d['ours-'+b]:.1f}")
    print(f"{name:12} n {n} within3% {w} geomean {math.exp(sum(logs)/n):.4f}")
    for x in miss: print("   ", x)
evaluate("before", lambda m,n,k,b: b)
evaluate("ceil", rule_ceil)
evaluate("split.9", rule_split)
evaluate("split1", lambda m,n,k,b: rule_split(m,n,k,b,1.0))
def rule_both(m,n,k,b):
    r = rule_ceil(m,n,k,b)
    if r != "persistent-192": return r
    c=lambda w: cost_split(m,n,k,w)
    return r if c(192) < c(256) and c(192) <= c(128) else b
evaluate("ceil+split", rule_both)
def rule_both2(m,n,k,b):
    r = rule_ceil(m,n,k,b)
    if r != "persistent-192": return r
    c=lambda w: cost_split(m,n,k,w)
    return r if c(192) < c(256) else b
evaluate("ceil+split256", rule_both2)
print("diff ceil vs ceil+split256:")
for s,d in by.items():
    m,nn,k=map(int,s.split("x"))
    if m<=64: continue
    b=before(m,nn,k); a=rule_ceil(m,nn,k,b); c=rule_both2(m,nn,k,b)
    if a!=c: print(f"  {s}: ceil {a} {d.get('ours-'+a)}, split {c} {d.get('ours-'+c)}")
def rule_c4(m,n,k,b):
    r = rule_ceil(m,n,k,b)
    if r != "persistent-192": return r
    t=tiles(m,n,256)
    return b if t > S and split_parts(t, cdiv(k,64)) >= 4 else r
evaluate("ceil-4parts", rule_c4)
for s,d in by.items():
    m,nn,k=map(int,s.split("x"))
    if m<=64: continue
    b=before(m,nn,k); a=rule_ceil(m,nn,k,b); c=rule_c4(m,nn,k,b)
    if a!=c: print(f"  {s}: ceil {a} {d.get('ours-'+a)}, c4 {c} {d.get('ours-'+c)}")
