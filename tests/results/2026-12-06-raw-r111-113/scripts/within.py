import csv, sys, math, collections
by = collections.OrderedDict()
for path in sys.argv[1:]:
    for r in csv.DictReader(open(path)):
        by.setdefault(r["shape"], {})[r["implementation"]] = float(r["median_ms"]) * 1000
n = w = 0; logs = []; miss = []; logsb = []
for s, d in by.items():
    cub = min(d["cublasGemmEx"], d["cublasLt-heuristic"])
    ours = d["ours"]
    best_name, best = min(((k, v) for k, v in d.items() if k.startswith("ours-") and "sk" not in k.split("-")[-1:] ), key=lambda x: x[1])
    best_name, best = min(((k, v) for k, v in d.items() if k.startswith("ours-")), key=lambda x: x[1])
    n += 1; ok = ours <= 1.03 * best; w += ok
    logs.append(math.log(cub / ours)); logsb.append(math.log(cub / best))
    if not ok: miss.append(f"{s}: default {ours:.2f} best {best_name} {best:.2f} ({ours/best:.3f})")
print(f"{n} shapes, default within 3% of our best on {w}; geomean default/cuBLAS {math.exp(sum(logs)/n):.3f}, best-of-ours {math.exp(sum(logsb)/n):.3f}; >=0.90: {sum(1 for l in logs if l >= math.log(0.9))}")
print("\n".join(miss))
