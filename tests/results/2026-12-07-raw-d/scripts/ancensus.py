# python3 ancensus.py census.csv SHAPES: cuBLAS's kernels per shape from ncu's CSV (census.py's
# spin kernel before each shape marks where it starts).
import csv, sys, collections
shapes = sys.argv[2].split(",")
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
hdr = rows[0]; rows = rows[1:]
ix = {h: i for i, h in enumerate(hdr)}
k = collections.OrderedDict()
for r in rows:
    kid = r[ix["ID"]]
    e = k.setdefault(kid, {"name": r[ix["Kernel Name"]], "grid": r[ix["Grid Size"]], "block": r[ix["Block Size"]]})
    e[r[ix["Metric Name"]]] = r[ix["Metric Value"]]
cur = -1
for kid, e in k.items():
    n = e["name"]
    if "spin" in n.lower() or "sleep" in n.lower():
        cur += 1; continue
    if cur < 0: continue
    sh = shapes[cur] if cur < len(shapes) else "?"
    print(f"{sh:16} {n[:60]:60} grid {e['grid']:>14} cl {e.get('launch__cluster_dim_x','?')}x{e.get('launch__cluster_dim_y','?')} "
          f"t {e.get('gpu__time_duration.sum','?'):>8} dram% {e.get('dram__throughput.avg.pct_of_peak_sustained_elapsed','?'):>6} L2hit {e.get('lts__t_sector_hit_rate.pct','?'):>6} regs {e.get('launch__registers_per_thread','?')} smem {e.get('launch__shared_mem_per_block_dynamic','?')}")
