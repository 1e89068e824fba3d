# Per-cell ratio of each ours:VARIANT over ours (production) and cudnn, geomeans.
import csv, sys, math, collections
rows = list(csv.DictReader(open(sys.argv[1])))
cells = collections.OrderedDict()
for r in rows:
    try: tf = float(r["tflops"])
    except: continue
    if math.isnan(tf): continue
    key = (r["kind"], int(r["d"]), r["causal"], int(r["seq"]))
    cells.setdefault(key, {})[r["impl"]] = tf
impls = sorted({i for c in cells.values() for i in c if i.startswith("ours:")})
print("cell".ljust(28) + "ours  cudnn ours/cudnn " + " ".join(i[5:].rjust(6) for i in impls))
g = collections.defaultdict(list); g2 = collections.defaultdict(list)
for k, c in cells.items():
    base = c.get("ours")
    if not base: continue
    cd = c.get("cudnn", float("nan"))
    line = f"{k[0]:6} d{k[1]:3} c{k[2][:1]} s{k[3]:5}".ljust(28) + f"{base:6.1f} {cd:6.1f} {base/cd:6.3f}    "
    for i in impls:
        v = c.get(i)
        if v:
            line += f"{v/base:6.3f} "
            (g if k[3] >= 2048 else g2)[i].append(v / base)
        else:
            line += "   -   "
    print(line)
for i in impls:
    a, b = g[i], g2[i]
    gm = lambda x: math.exp(sum(map(math.log, x)) / len(x)) if x else float("nan")
    print(f"{i:24} geomean seq>=2k {gm(a):.4f} (min {min(a) if a else float('nan'):.3f}, n {len(a)})  seq<2k {gm(b):.4f} (min {min(b) if b else float('nan'):.3f})")
