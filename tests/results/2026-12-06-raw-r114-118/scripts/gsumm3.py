import csv, sys, collections
rows = list(csv.DictReader(open(sys.argv[1])))
by = collections.OrderedDict()
for r in rows:
    by.setdefault(r["shape"], {})[r["implementation"]] = float(r["median_ms"]) * 1000
for s, d in by.items():
    cub = min(d.get("cublasGemmEx", 1e9), d.get("cublasLt-heuristic", 1e9))
    ours = d.get("ours")
    best = sorted((v, k) for k, v in d.items() if k.startswith("ours-"))[:4]
    print(f"{s:20} cuBLAS {cub:7.2f}us ours {ours:7.2f} ({cub/ours:.3f}) | " + " ".join(f"{k[5:]} {v:.2f}({cub/v:.3f})" for v, k in best)
          + " | p16 %.2f p32 %.2f p64 %.2f" % (d.get("ours-skinny-16-pair", 0), d.get("ours-skinny-32-pair", 0), d.get("ours-skinny-64-pair", 0)))
