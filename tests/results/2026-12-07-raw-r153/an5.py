import csv, sys, collections, math
by = collections.defaultdict(lambda: collections.defaultdict(list))
for p in sys.argv[1:]:
    for r in csv.DictReader(open(p)):
        by[r["shape"]][r["implementation"]].append(float(r["median_ms"]) * 1000)
med = lambda x: sorted(x)[len(x)//2] if len(x) % 2 else sum(sorted(x)[len(x)//2-1:len(x)//2+1]) / 2
prod = ["ours-persistent","ours-persistent-128","ours-persistent-64","ours-persistent-192","ours-cluster","ours-skinny-16","ours-skinny-32","ours-skinny-64","ours-skinny-16-ck","ours-skinny-32-ck","ours-skinny-64-ck","ours-skinny-192","ours-skinny-192-ck"]
SMS=132
def pick(m,n,k):
    kb=(k+63)//64
    if m <= 16: return None
    if m <= 64 and kb > 24 and m > 32:
        return 64 if (n+63)//64 <= SMS else None
    for w in (32,64):
        if (m + w - 1)//w * ((n + 63)//64) <= SMS: return w
    return None
def cond(m,n,k,w):
    kb=(k+63)//64
    if w is None: return False
    if m <= 64: return kb >= 16
    return k <= 1536
lg=collections.defaultdict(list); rows=[]
for s, d in by.items():
    t = {k: med(v) for k, v in d.items()}
    m, n, k = map(int, s.split("x")); kb=(k+63)//64
    cub = min(t["cublasGemmEx"], t["cublasLt-heuristic"])
    bp = min(t[x] for x in prod if x in t)
    w = pick(m,n,k)
    r = t.get(f"ours-skinny-{w}-r64") if w else None
    new = r if cond(m,n,k,w) else t["ours"]
    best = min(bp, min(t[f"ours-skinny-{x}-r64"] for x in (16,32,64)))
    grp = "short" if k <= 1536 else "decode"
    for name,v in (("default",t["ours"]),("new",new),("bestprod",bp),("best",best)):
        lg[grp+"-"+name].append(math.log(cub/v))
    lg[grp+"-new-within3"].append(new <= 1.03*best)
    lg[grp+"-def-within3"].append(t["ours"] <= 1.03*best)
    print(f"{s:15} kb{kb:3} w{w} take {int(cond(m,n,k,w))} default/new {t['ours']/new:.3f} new/best {new/best:.3f} r64pick/bestprod {bp/r if r else 0:.3f}")
for g,v in sorted(lg.items()):
    if "within" in g: print(g, sum(v), "of", len(v))
    else: print(g, len(v), round(math.exp(sum(v)/len(v)),3))
