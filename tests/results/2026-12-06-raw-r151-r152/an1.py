import csv, sys, collections, math
def load(paths):
    by = collections.OrderedDict()
    for p in paths:
        for r in csv.DictReader(open(p)):
            by.setdefault(r["shape"], collections.defaultdict(list))[r["implementation"]].append(float(r["median_ms"]) * 1000)
    return by
def summ(name, paths):
    d = load(paths)
    rc, rb, within, worst = [], [], 0, 0
    for s, v in d.items():
        med = {k: sorted(x)[len(x)//2] if len(x)%2 else sum(sorted(x)[len(x)//2-1:len(x)//2+1])/2 for k, x in v.items()}
        cub = min(med["cublasGemmEx"], med["cublasLt-heuristic"])
        best = min(x for k, x in med.items() if k.startswith("ours-"))
        rc.append(math.log(cub / med["ours"])); r = med["ours"] / best; rb.append(math.log(r))
        within += r <= 1.03; worst = max(worst, r)
    g = lambda a: math.exp(sum(a)/len(a))
    print(f"{name}: {len(d)} shapes, default/cuBLAS geomean {g(rc):.3f}, default time/our fastest {g(rb):.3f} (max {worst:.2f}), within 3% on {within}")
    return d
for arg in sys.argv[1:]:
    name, files = arg.split("=")
    summ(name, files.split(","))
