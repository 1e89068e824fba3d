import sys, random, math, torch
sys.path.insert(0, sys.argv[1])
import bench_attention as B
lib = sys.argv[2]
ours = B.Ours(lib)
ours.load("n128", "", "d128_n128")
ours.load("n192", "", "d128_n192")
mods = {"plan": 0, "n128": ours.variants[0][1], "n192": ours.variants[1][1]}
G = 1 << 20
def bench_lens():
    rng = random.Random(7); lens=[]; t=0
    while t < 16384:
        s = min(rng.randint(512, 4096), 16384 - t); lens.append(s); t += s
    return lens
def run(lens, heads, causal, d=128):
    total = sum(lens); offsets=[0]
    for s in lens: offsets.append(offsets[-1]+s)
    torch.manual_seed(0)
    q = torch.randn(1, total, heads, d, device="cuda", dtype=torch.bfloat16)
    k = torch.randn_like(q); v = torch.randn_like(q)
    shape = dict(kind="varlen", batch=0, seq=0, heads=heads, heads_kv=heads, d=d, causal=causal)
    res = {}
    for name, m in mods.items():
        ob = torch.full((total*heads*d + G,), float("nan"), device="cuda", dtype=torch.bfloat16)
        lb = torch.full((heads*total + G,), float("nan"), device="cuda", dtype=torch.float32)
        o = ob[:total*heads*d].view(1, total, heads, d); lse = lb[:heads*total].view(heads, total)
        call = ours.prepare(q, k, v, o, lse, shape, offsets, module=m)
        call(); torch.cuda.synchronize()
        res[name] = (ob, lb, o, lse)
    ref_o, ref_l = res["plan"][2].float(), res["plan"][3]
    print(f"lens {lens[:12]} heads {heads} causal {causal}:")
    for name, (ob, lb, o, lse) in res.items():
        og = ob[total*heads*d:]; lg = lb[heads*total:]
        o_unw = torch.isnan(o.float()).sum().item(); l_unw = torch.isnan(lse).sum().item()
        og_w = (~torch.isnan(og.float())).sum().item(); lg_w = (~torch.isnan(lg)).sum().item()
        diff = (o.float() - ref_o).abs().nan_to_num(1e9).max().item()
        ldiff = (lse - ref_l).abs().nan_to_num(1e9).max().item()
        print(f"  {name}: O unwritten {o_unw}, LSE unwritten {l_unw}, O guard written {og_w}, LSE guard written {lg_w}, max|dO| {diff:.3g}, max|dLSE| {ldiff:.3g}")
        if l_unw:
            idx = torch.nonzero(torch.isnan(lse))
            hs = sorted(set(idx[:,0].tolist())); ts = idx[:,1]
            print(f"    LSE unwritten heads {hs[:16]} tokens {ts.min().item()}..{ts.max().item()} count per head {l_unw//max(1,len(hs))}")
            # by sequence
            per = []
            for i in range(len(lens)):
                c = ((ts >= offsets[i]) & (ts < offsets[i+1])).sum().item()
                if c: per.append((i, lens[i], c))
            print(f"    per sequence (idx, len, unwritten entries): {per}")
        if lg_w:
            pos = torch.nonzero(~torch.isnan(lg))[:, 0]
            print(f"    LSE guard written at guard index {pos.min().item()}..{pos.max().item()} (beyond end by that many floats)")
            vals = lg[pos[:8]].tolist()
            flat = ref_l.flatten()
            for p, val in zip(pos[:8].tolist(), vals):
                hit = torch.nonzero(flat == val)[:, 0].tolist()[:3]
                print(f"      guard {p} value {val:.6f} equals ref LSE flat index {[(i // total, i % total) for i in hit]}")
        if o_unw:
            idx = torch.nonzero(torch.isnan(o[0].float()).any(dim=-1))
            print(f"    O unwritten (token, head) e.g. {idx[:5].tolist()} tokens {idx[:,0].min().item()}..{idx[:,0].max().item()}")
bl = bench_lens()
print("bench lens", bl)
run(bl, 16, False)
run(bl, 2, False)
run(bl, 16, True)
run([1838, 1129], 16, False)
run([3875, 12], 4, False)
run([700, 12], 2, False)
