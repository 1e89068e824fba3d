# python3 an15.py DIR: run n15 (the steps module of 7c256a6, every kernel in the same rounds) on DS
# (M 16-192 by six layers) and SH (run n7's out-of-sample shapes): per shape the default ("ours")
# against our fastest production kernel and our fastest kernel of all (deep rings, pairs), and
# cuBLAS's faster default; medians over the processes; counts of the default within 3 %.
import csv, sys, glob, collections, math
d = sys.argv[1]
STEP = ("-r64-d", "-r64-dp", "-ckp", "-sk", "per-tile", "persistent-first", "single-warpgroup",
        "-s4", "persistent-64-pair", "skinny-128", "skinny-16-r64")
def is_step(k):
    return any(t in k for t in STEP) and k not in ("ours-skinny-32-r64", "ours-skinny-64-r64")
def load(pat):
    by = collections.defaultdict(lambda: collections.defaultdict(list))
    for p in sorted(glob.glob(f"{d}/{pat}")):
        for r in csv.DictReader(open(p)):
            by[r["shape"]][r["implementation"]].append(float(r["median_ms"]) * 1000)
    return by
med = lambda x: sorted(x)[len(x) // 2] if len(x) % 2 else sum(sorted(x)[len(x) // 2 - 1:len(x) // 2 + 1]) / 2
g = lambda x: math.exp(sum(map(math.log, x)) / len(x)) if x else float("nan")
for name, pat in (("DS", "ds-*.csv"), ("SH", "sh-*.csv")):
    by = load(pat)
    if not by:
        continue
    wins = collections.Counter(); within = within_all = 0; cub_d = []; cub_best = []
    print(f"== {name}: shape, default us, cuBLAS us, cub/default, fastest production (us), fastest of all (us)")
    for s, t in by.items():
        t = {k: med(v) for k, v in t.items()}
        cub = min(t["cublasGemmEx"], t["cublasLt-heuristic"])
        ours = {k: v for k, v in t.items() if k.startswith("ours-")}
        prod = {k: v for k, v in ours.items() if not is_step(k)}
        bp = min(prod, key=prod.get); ba = min(ours, key=ours.get)
        within += t["ours"] <= 1.03 * prod[bp]; within_all += t["ours"] <= 1.03 * ours[ba]
        wins[ba] += 1; cub_d.append(cub / t["ours"]); cub_best.append(cub / ours[ba])
        print(f"{s:16} {t['ours']:7.2f} {cub:7.2f} {cub / t['ours']:.3f}  {bp[5:]:>18} {prod[bp]:7.2f}  {ba[5:]:>18} {ours[ba]:7.2f}")
    n = len(by)
    print(f"{name}: {n} shapes; default within 3 % of our fastest production kernel on {within}, of our fastest of all on {within_all}")
    print(f"{name}: cuBLAS / default {g(cub_d):.3f} (min {min(cub_d):.3f}); cuBLAS / our fastest of all {g(cub_best):.3f}")
    print(f"{name}: fastest of all, by kernel: {dict(wins.most_common())}")
