# python3 an6.py DIR: the new default (new-*.csv, g19) against the rule before (old-*.csv, g17) on
# the out-of-sample shapes; cuBLAS's faster default and our fastest production kernel from the
# new processes (the old module is the new one less the two 64-row entries).
import csv, sys, glob, collections, math
d = sys.argv[1]
def load(pat):
    by = collections.defaultdict(lambda: collections.defaultdict(list))
    for p in sorted(glob.glob(f"{d}/{pat}")):
        for r in csv.DictReader(open(p)):
            by[r["shape"]][r["implementation"]].append(float(r["median_ms"]) * 1000)
    return by
med = lambda x: sorted(x)[len(x)//2] if len(x) % 2 else sum(sorted(x)[len(x)//2-1:len(x)//2+1]) / 2
new, old = load("new-*.csv"), load("old-*.csv")
lg = collections.defaultdict(list)
print(f"{'shape':16} {'new us':>7} {'old us':>7} new/old {'cub us':>7} cub/new cub/old best/new best-kernel")
for s in new:
    m = int(s.split("x")[0])
    grp = "M20-56" if m <= 56 else ("M72-104" if m <= 104 else "M144-192")
    tn = {k: med(v) for k, v in new[s].items()}
    to = {k: med(v) for k, v in old[s].items()}
    cub = min(tn["cublasGemmEx"], tn["cublasLt-heuristic"])
    cubo = min(to["cublasGemmEx"], to["cublasLt-heuristic"])
    ours = [k for k in tn if k.startswith("ours-")]
    bk = min(ours, key=lambda k: tn[k])
    a, b = tn["ours"], to["ours"]
    print(f"{s:16} {a:7.2f} {b:7.2f} {b/a:7.3f} {cub:7.2f} {cub/a:7.3f} {cubo/b:7.3f} {tn[bk]/a:7.3f} {bk}")
    for g in (grp, "all"):
        lg[g + " new/old"].append(math.log(b / a))
        lg[g + " cub/new"].append(math.log(cub / a))
        lg[g + " cub/old"].append(math.log(cubo / b))
        lg[g + " within3-new"].append(a <= 1.03 * tn[bk])
for g, v in sorted(lg.items()):
    if "within" in g: print(f"{g:28} {sum(v)} of {len(v)}")
    else: print(f"{g:28} n {len(v):3} gm {math.exp(sum(v)/len(v)):.3f} min {math.exp(min(v)):.3f}")
