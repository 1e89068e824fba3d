#!/usr/bin/env python3
"""Ours (gpu-attention-host through libattention_bench.so) against torch's SDPA math backend, on
the GPU, at random larger shapes than attention-test's f64 host reference can take: every element
of O and of LSE within the bound gpu-attention-plan's `reference::tolerance` derives.

The cases are drawn from a seeded generator (`--seed`, `--cases`): head dimension 64, 128 or 256;
bf16 or f16; causal or not (the mask aligned to the bottom right, FlashAttention's convention, so
that with fewer keys than queries the first rows see no key: O 0 and LSE minus infinity there);
fixed batches of 1 to 3 sequences with seq_q and seq_k from 1 to 4096 (odd lengths, block edges
and seq_q != seq_k among them), and packed variable-length batches of 2 to 6 sequences whose query
and key lengths differ; grouped-query ratios 1, 2, 4 and 8; the default scale or a random one.
Random normal inputs.

The reference: O from `F.scaled_dot_product_attention` under `SDPBackend.MATH` in float64 on the
inputs as the kernel reads them (rounded to the 16-bit type), with an explicit boolean mask for the
bottom-right causal alignment (torch's `is_causal` aligns to the top left); LSE as the float64
log-sum-exp of the same masked, scaled scores.

The bound, per case (gpu-attention-plan `reference/bound.rs` derives it): with `u` the 16-bit
type's unit roundoff (2^-8 bf16, 2^-11 f16), `Q`, `K`, `V` the inputs' largest magnitudes and
`e = D^2 Q K scale 2^-24` (the scores' f32 sums), `|o - ref| <= (2u + 2e + 2w + 2^-20) V` and
`|lse - ref| <= e + w + 2^-20 (1 + D Q K scale)`, where `w = d / (1 - d)` for a module whose
exponential has relative error `d` beyond the MUFU's (`--exp-error`, 0 for production).

Exit status: 0 every case passed; 1 a case failed; 4 no GPU or no torch with CUDA (printed as
SKIPPED with the reason).

`--perturb` is the comparison's negative control: it moves one element of each case's O by twice
the bound after the kernel ran, so every case must FAIL (the run then exits 1).

Usage: sdpa_test.py --lib libattention_bench.so [--cases 48] [--seed 1] [--exp-error 0] [--perturb]
(the module: $GPU_ATTENTION_MODULE, else the embedded one)
"""
import argparse
import math
import os
import random
import sys

NO_DRIVER = 4

POOL = [1, 2, 7, 63, 64, 65, 127, 128, 129, 191, 192, 193, 255, 257, 511, 640, 1000, 1023, 1500, 2048, 2049, 3001, 4096]
# At most this many score elements (batch x heads x seq_q x seq_k) per case: the float64
# reference materialises them a few times over.
MAX_SCORES = 1 << 27


def draw(rng):
    """One case: a dict of the problem's parameters."""
    d = rng.choice([64, 128, 256])
    f16 = rng.random() < 0.3
    causal = rng.random() < 0.5
    heads_kv = rng.choice([1, 2, 4])
    ratio = rng.choice([1, 2, 4, 8])
    heads = heads_kv * ratio
    scale = None if rng.random() < 0.6 else rng.uniform(0.02, 0.3)
    if rng.random() < 0.3:
        n = rng.randint(2, 6)
        lens_q = [rng.randint(1, 1500) for _ in range(n)]
        lens_k = [q if rng.random() < 0.5 else rng.randint(1, 1500) for q in lens_q]
        scores = heads * sum(a * b for a, b in zip(lens_q, lens_k))
        case = dict(varlen=True, lens_q=lens_q, lens_k=lens_k, batch=n)
    else:
        batch = rng.randint(1, 3)
        seq_q = rng.choice(POOL) if rng.random() < 0.7 else rng.randint(1, 4096)
        seq_k = seq_q if rng.random() < 0.5 else (rng.choice(POOL) if rng.random() < 0.7 else rng.randint(1, 4096))
        scores = batch * heads * seq_q * seq_k
        case = dict(varlen=False, batch=batch, seq_q=seq_q, seq_k=seq_k)
    if scores > MAX_SCORES:
        return None
    case.update(d=d, f16=f16, causal=causal, heads=heads, heads_kv=heads_kv, scale=scale)
    return case


def describe(c):
    kind = f"varlen q{c['lens_q']} k{c['lens_k']}" if c["varlen"] else f"b{c['batch']} q{c['seq_q']} k{c['seq_k']}"
    scale = "default" if c["scale"] is None else f"{c['scale']:.4f}"
    return (f"{'f16 ' if c['f16'] else 'bf16'} d{c['d']} {'causal' if c['causal'] else 'full  '} "
            f"h{c['heads']}/{c['heads_kv']} scale {scale} {kind}")


def reference(torch, F, sdpa_kernel, backend, q, k, v, causal, scale):
    """O ([b, s_q, h, d]) and LSE ([b, h, s_q]) in float64 of one fixed batch, GQA's K and V heads
    repeated; q, k, v as the kernel reads them."""
    b, sq, h, d = q.shape
    sk, hkv = k.shape[1], k.shape[2]
    qt = q.double().transpose(1, 2)
    kt = k.double().transpose(1, 2).repeat_interleave(h // hkv, dim=1)
    vt = v.double().transpose(1, 2).repeat_interleave(h // hkv, dim=1)
    rows = torch.arange(sq, device=q.device).unsqueeze(1)
    cols = torch.arange(sk, device=q.device).unsqueeze(0)
    # Bottom-right alignment: query i sees key j when j <= i + sk - sq.
    visible = (cols <= rows + (sk - sq)) if causal else torch.ones(sq, sk, dtype=torch.bool, device=q.device)
    o = torch.empty(b, h, sq, d, dtype=torch.float64, device=q.device)
    lse = torch.empty(b, h, sq, dtype=torch.float64, device=q.device)
    # A few heads at a time: the scores are materialised.
    step = max(1, (1 << 25) // max(1, sq * sk))
    for h0 in range(0, h, step):
        sl = slice(h0, min(h, h0 + step))
        with sdpa_kernel(backend):
            o[:, sl] = F.scaled_dot_product_attention(qt[:, sl], kt[:, sl], vt[:, sl], attn_mask=visible, scale=scale)
        s = torch.matmul(qt[:, sl], kt[:, sl].transpose(-1, -2)) * scale
        s = s.masked_fill(~visible, float("-inf"))
        lse[:, sl] = torch.logsumexp(s, dim=-1)
    # A row that sees no key: O is 0 by the kernels' convention (torch's math backend gives 0 or
    # NaN there, by version).
    none = ~visible.any(dim=1)
    o[:, :, none, :] = 0.0
    return o.transpose(1, 2), lse


def run_case(torch, F, sdpa_kernel, backend, ours, c, exp_error, perturb):
    dtype = torch.float16 if c["f16"] else torch.bfloat16
    d, h, hkv = c["d"], c["heads"], c["heads_kv"]
    scale = c["scale"] if c["scale"] is not None else 1.0 / math.sqrt(d)
    if c["varlen"]:
        tq, tk = sum(c["lens_q"]), sum(c["lens_k"])
        q = torch.randn(1, tq, h, d, device="cuda", dtype=dtype)
        k = torch.randn(1, tk, hkv, d, device="cuda", dtype=dtype)
        v = torch.randn(1, tk, hkv, d, device="cuda", dtype=dtype)
        lse = torch.full((h, tq), float("nan"), device="cuda", dtype=torch.float32)
        oq, ok = [0], [0]
        for a, b in zip(c["lens_q"], c["lens_k"]):
            oq.append(oq[-1] + a)
            ok.append(ok[-1] + b)
    else:
        q = torch.randn(c["batch"], c["seq_q"], h, d, device="cuda", dtype=dtype)
        k = torch.randn(c["batch"], c["seq_k"], hkv, d, device="cuda", dtype=dtype)
        v = torch.randn(c["batch"], c["seq_k"], hkv, d, device="cuda", dtype=dtype)
        lse = torch.full((c["batch"], h, c["seq_q"]), float("nan"), device="cuda", dtype=torch.float32)
        oq = ok = None
    # O starts as NaN: a row the kernel leaves unwritten fails.
    o = torch.full_like(q, float("nan"))
    shape = dict(heads=h, heads_kv=hkv, d=d, causal=c["causal"])
    call = ours.prepare(q, k, v, o, lse, shape, offsets=oq, offsets_k=ok, element=int(c["f16"]), scale=c["scale"] or 0.0)
    call()
    torch.cuda.synchronize()
    if c["varlen"]:
        ref_o = torch.empty(q.shape, dtype=torch.float64, device="cuda")
        ref_lse = torch.empty(h, tq, dtype=torch.float64, device="cuda")
        for i in range(len(c["lens_q"])):
            qs, ks = slice(oq[i], oq[i + 1]), slice(ok[i], ok[i + 1])
            ro, rl = reference(torch, F, sdpa_kernel, backend, q[:, qs], k[:, ks], v[:, ks], c["causal"], scale)
            ref_o[:, qs] = ro
            ref_lse[:, qs] = rl[0]
    else:
        ref_o, ref_lse = reference(torch, F, sdpa_kernel, backend, q, k, v, c["causal"], scale)
    # The bound (the module docstring; gpu-attention-plan reference/bound.rs).
    qm, km, vm = (x.float().abs().max().item() for x in (q, k, v))
    u = 2.0 ** -11 if c["f16"] else 2.0 ** -8
    e = d * d * qm * km * scale * 2.0 ** -24
    w = exp_error / (1.0 - exp_error)
    tol_o = (2 * u + 2 * e + 2 * w + 2.0 ** -20) * vm
    tol_lse = e + w + 2.0 ** -20 * (1 + d * qm * km * scale)
    if perturb:
        flat = o.view(-1)
        flat[flat.numel() // 2] += 2 * tol_o
    err_o = (o.double() - ref_o).abs()
    bad_o = torch.isnan(err_o).sum().item() + (err_o > tol_o).sum().item()
    max_o = torch.nan_to_num(err_o, nan=float("inf")).max().item()
    lse = lse.double()
    hidden = torch.isinf(ref_lse)
    # Rows that see no key: minus infinity exactly; the others within the bound.
    bad_hidden = (hidden & ~(torch.isinf(lse) & (lse < 0))).sum().item()
    err_lse = (lse - ref_lse).abs().masked_fill(hidden, 0.0)
    bad_lse = torch.isnan(err_lse).sum().item() + (err_lse > tol_lse).sum().item() + bad_hidden
    max_lse = torch.nan_to_num(err_lse, nan=float("inf")).max().item()
    ok_case = bad_o == 0 and bad_lse == 0
    return ok_case, (f"O max |diff| {max_o:.2e} (bound {tol_o:.2e}, {bad_o} over), "
                     f"LSE max |diff| {max_lse:.2e} (bound {tol_lse:.2e}, {bad_lse} over, {hidden.sum().item()} rows see no key)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lib", required=True)
    ap.add_argument("--cases", type=int, default=48)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--exp-error", type=float, default=0.0)
    ap.add_argument("--perturb", action="store_true", help="the negative control: every case must fail")
    args = ap.parse_args()
    try:
        import torch
        import torch.nn.functional as F
    except ImportError as e:
        print(f"SKIPPED: torch is not installed ({e})")
        return NO_DRIVER
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel
    except ImportError as e:
        print(f"FAIL: torch {torch.__version__} has no torch.nn.attention (2.3 or later needed): {e}")
        return 1
    if not torch.cuda.is_available():
        print("SKIPPED: torch sees no CUDA GPU")
        return NO_DRIVER
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from bench_attention import Ours

    ours = Ours(args.lib)
    rng = random.Random(args.seed)
    torch.manual_seed(args.seed)
    passed = failed = 0
    drawn = 0
    while drawn < args.cases:
        c = draw(rng)
        if c is None:
            continue
        drawn += 1
        try:
            ok_case, line = run_case(torch, F, sdpa_kernel, SDPBackend.MATH, ours, c, args.exp_error, args.perturb)
        except RuntimeError as e:
            ok_case, line = False, f"error: {e}"
        print(f"{'PASS' if ok_case else 'FAIL'} {describe(c)}: {line}", flush=True)
        passed += ok_case
        failed += not ok_case
        torch.cuda.empty_cache()
    print(f"sdpa-test: {passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
