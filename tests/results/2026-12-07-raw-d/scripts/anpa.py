# python3 anpa.py DIR: the pairs sharing A (ours-*-pa) against the default (ours) and our fastest
# other kernel, and cuBLAS's faster default, per shape (pa-*.csv: the steps module's processes).
import csv, sys, glob, collections, math
d = sys.argv[1]
by = collections.defaultdict(lambda: collections.defaultdict(list))
for p in sorted(glob.glob(f"{d}/pa-*.csv")):
    for r in csv.DictReader(open(p)):
        by[r["shape"]][r["implementation"]].append(float(r["median_ms"]) * 1000)
gm = lambda x: math.exp(sum(math.log(v) for v in x) / len(x))
lg = collections.defaultdict(list)
print(f"{'shape':16} {'cub':>6} {'ours':>6} {'best-other':>22} {'best-pa':>24} pa/ours pa/other cub/pa cub/ours")
for s, t in by.items():
    t = {k: gm(v) for k, v in t.items()}
    cub = min(t["cublasGemmEx"], t["cublasLt-heuristic"])
    pa = [k for k in t if k.endswith("-pa")]
    other = [k for k in t if k.startswith("ours-") and not k.endswith("-pa")]
    bp = min(pa, key=t.get); bo = min(other, key=t.get)
    print(f"{s:16} {cub:6.2f} {t['ours']:6.2f} {bo[5:]:>15} {t[bo]:6.2f} {bp[5:]:>17} {t[bp]:6.2f} {t['ours']/t[bp]:7.3f} {t[bo]/t[bp]:8.3f} {cub/t[bp]:6.3f} {cub/t['ours']:6.3f}")
    m = int(s.split("x")[0])
    for g in (f"M{m}", "all"):
        lg[g + " ours/pa"].append(math.log(t["ours"] / t[bp]))
        lg[g + " other/pa"].append(math.log(t[bo] / t[bp]))
        lg[g + " cub/best"].append(math.log(cub / min(t[bp], t[bo])))
        lg[g + " cub/ours"].append(math.log(cub / t["ours"]))
for g, v in sorted(lg.items()):
    print(f"{g:22} n {len(v):3} gm {math.exp(sum(v)/len(v)):.3f} min {math.exp(min(v)):.3f} max {math.exp(max(v)):.3f}")
