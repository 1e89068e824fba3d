# python3 an15r.py DIR PICK: the rule of the tree that built bundle/pick (cargo run --release in
# bundle/pick, shapes on stdin, `default=NAME` per line) evaluated on run n15's measured times:
# per shape the rule's kernel's time against our fastest production kernel (within 3 %?) and
# against cuBLAS's faster default. Usage:
#   python3 -c "import csv,glob;print('\n'.join(sorted({r['shape'] for p in glob.glob('DIR/*.csv') for r in csv.DictReader(open(p))})))" \
#     | (cd bundle/pick && cargo run -q --release) > /tmp/pick.txt; python3 bundle/an15r.py DIR /tmp/pick.txt
import csv, sys, glob, collections, math
d, pick = sys.argv[1], sys.argv[2]
rule = {}
for line in open(pick):
    parts = line.split()
    rule[parts[0]] = parts[1].split("=", 1)[1]
STEP = ("-r64-d", "-r64-dp", "-ckp", "-sk", "per-tile", "persistent-first", "single-warpgroup",
        "-s4", "persistent-64-pair", "skinny-128", "skinny-16-r64")
def is_step(k):
    return any(t in k for t in STEP) and k not in ("ours-skinny-32-r64", "ours-skinny-64-r64")
by = collections.defaultdict(lambda: collections.defaultdict(list))
for p in sorted(glob.glob(f"{d}/*.csv")):
    for r in csv.DictReader(open(p)):
        by[r["shape"]][r["implementation"]].append(float(r["median_ms"]) * 1000)
med = lambda x: sorted(x)[len(x) // 2] if len(x) % 2 else sum(sorted(x)[len(x) // 2 - 1:len(x) // 2 + 1]) / 2
g = lambda x: math.exp(sum(map(math.log, x)) / len(x)) if x else float("nan")
within = 0; ratios = []; missing = []
for s, t in sorted(by.items(), key=lambda x: [int(v) for v in x[0].split("x")]):
    t = {k: med(v) for k, v in t.items()}
    k = "ours-" + rule.get(s, "?")
    if k not in t:
        missing.append((s, k)); continue
    prod = {n: v for n, v in t.items() if n.startswith("ours-") and not is_step(n)}
    best = min(prod, key=prod.get)
    cub = min(t["cublasGemmEx"], t["cublasLt-heuristic"])
    ok = t[k] <= 1.03 * prod[best]; within += ok; ratios.append(cub / t[k])
    if not ok:
        print(f"{s:16} rule {k[5:]:16} {t[k]:7.2f}  fastest {best[5:]:16} {prod[best]:7.2f}  ({prod[best] / t[k]:.3f})")
print(f"within 3 % of our fastest production kernel: {within} of {len(ratios)}; cuBLAS / rule {g(ratios):.3f} (min {min(ratios):.3f})")
if missing:
    print("no time for the rule's kernel:", missing[:5])
