import csv, sys, collections, math
by = collections.defaultdict(lambda: collections.defaultdict(list))
for p in sys.argv[1:]:
    for r in csv.DictReader(open(p)):
        by[r["shape"]][r["implementation"]].append(float(r["median_ms"]) * 1000)
med = lambda x: sorted(x)[len(x)//2] if len(x) % 2 else sum(sorted(x)[len(x)//2-1:len(x)//2+1]) / 2
prod = ["ours-persistent","ours-persistent-128","ours-persistent-64","ours-persistent-192","ours-cluster","ours-skinny-16","ours-skinny-32","ours-skinny-64","ours-skinny-16-ck","ours-skinny-32-ck","ours-skinny-64-ck","ours-skinny-192","ours-skinny-192-ck"]
r64 = ["ours-skinny-16-r64","ours-skinny-32-r64","ours-skinny-64-r64"]
lg = collections.defaultdict(list); wins = 0
for s, d in by.items():
    t = {k: med(v) for k, v in d.items()}
    cub = min(t["cublasGemmEx"], t["cublasLt-heuristic"])
    bp = min((t[k], k) for k in prod if k in t)
    br = min((t[k], k) for k in r64 if k in t)
    m, n, k = map(int, s.split("x")); kb = (k + 63) // 64
    grp = "short" if k <= 1536 else "decode"
    lg[grp + "-prod"].append(math.log(cub / bp[0])); lg[grp + "-best"].append(math.log(cub / min(bp[0], br[0])))
    lg[grp + "-default"].append(math.log(cub / t["ours"]))
    wins += br[0] < bp[0]
    print(f"{s:16} kb{kb:3} cub {cub:6.2f} default {t['ours']:6.2f} bestprod {bp[0]:6.2f} {bp[1][5:]:14} bestr64 {br[0]:6.2f} {br[1][5:]:14} r64/prod {bp[0]/br[0]:.3f}")
for g, v in lg.items(): print(g, len(v), round(math.exp(sum(v)/len(v)), 3))
print("r64 faster on", wins, "of", len(by))
