#!/usr/bin/env python3
"""The attention forward benchmark: ours (gpu-attention-host through libattention_bench.so) against
FlashAttention-3 or FlashAttention-4, cuDNN's SDPA and torch's flash backend (FlashAttention-2), in
one process, on the same tensors and stream, interleaved.

Method: per shape, every implementation runs once and its output is checked against cuDNN's (or,
where cuDNN does not run, torch's math backend on a slice); then `--rounds` rounds, each timing every
implementation in a pseudo-random order (a fixed seed per round) over `--reps` back-to-back calls
between CUDA events, after `--warmup` calls; the figure is the median over rounds. Random normal
data, never zeros. FLOPs = 4 * batch * heads * seq^2 * D, halved for causal (FlashAttention's count).
The inputs (Q, K, V, a packed batch's offsets) are compared with copies after each implementation's
first call and after the timed rounds: a row whose inputs changed is a CHECK-FAIL naming the call.

Usage: bench_attention.py --lib libattention_bench.so --anchor fa3|fa4|none [--shapes paper|quick]
       [--rounds 5] [--reps 10] [--warmup 3] [--csv out.csv] [--modules name=file.ptx,...]

`--modules` loads variant modules beside ours (the `$GPU_ATTENTION_MODULE` or embedded one) in the
same process: each runs as implementation `ours:name`, on its own O and LSE, checked and timed in
the same rounds as the others (an A/B without a process between its arms). `name=file.ptx@rows`
runs that module's problems on the named rows where they take them (`d128_n128`, several joined
by `+`), instead of the plan's choice; `name=@rows` does so on ours' own module (a kernel choice
against the plan's, on the same code).
"""
import argparse
import ctypes
import math
import os
import random
import sys
import time

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel


def paper_shapes(seqs, dims):
    """FlashAttention-3's setup: 16k tokens, hidden 2048."""
    out = []
    for d in dims:
        for causal in (False, True):
            for s in seqs:
                out.append(dict(kind="paper", batch=16384 // s, seq=s, heads=2048 // d, heads_kv=2048 // d, d=d, causal=causal))
    return out


def extra_shapes():
    # GQA: 32 query heads over 4 K/V heads (Llama-style 8:1), D 128, seq 8k.
    out = [dict(kind="gqa", batch=2, seq=8192, heads=32, heads_kv=4, d=128, causal=c) for c in (False, True)]
    # Varlen: 16k tokens in sequences of random lengths 512..4096, D 128, 16 heads.
    out += [dict(kind="varlen", batch=0, seq=0, heads=16, heads_kv=16, d=128, causal=c) for c in (False, True)]
    return out


def flops(shape, lens=None):
    d, h = shape["d"], shape["heads"]
    if lens is not None:
        pairs = sum(s * s for s in lens)
    else:
        pairs = shape["batch"] * shape["seq"] ** 2
    f = 4.0 * pairs * h * d
    return f / 2 if shape["causal"] else f


class Ours:
    def __init__(self, path):
        self.lib = ctypes.CDLL(path)
        self.lib.gpu_attention_prepare_on.restype = ctypes.c_int64
        self.lib.gpu_attention_prepare_on.argtypes = [ctypes.c_int64] + [ctypes.c_uint64] * 5 + [ctypes.c_uint32] * 8 + [ctypes.c_float, ctypes.c_void_p, ctypes.c_void_p]
        self.lib.gpu_attention_load_rows.restype = ctypes.c_int64
        self.lib.gpu_attention_load_rows.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
        # (name, module index) of the variant modules `load` added.
        self.variants = []
        self.lib.gpu_attention_launch.restype = ctypes.c_int32
        self.lib.gpu_attention_launch.argtypes = [ctypes.c_int64, ctypes.c_uint64]

    def error(self):
        buf = ctypes.create_string_buffer(4096)
        self.lib.gpu_attention_error(buf, 4096)
        return buf.value.decode()

    def load(self, name, path, rows=""):
        """Loads a variant module (`path` empty: ours' own again), run as `ours:name`, its
        problems on `rows` (`+`-separated row names) where they take them."""
        m = self.lib.gpu_attention_load_rows(path.encode(), rows.encode())
        if m < 0:
            raise RuntimeError("ours: " + self.error())
        self.variants.append((name, m))

    def prepare(self, q, k, v, o, lse, shape, offsets=None, offsets_k=None, element=0, scale=0.0, module=0):
        """A launch of `shape` over these tensors: `offsets` (and `offsets_k`, if the keys'
        differ) of a packed variable-length batch; `element` 0 bf16, 1 f16; `scale` <= 0 for the
        default."""
        b, s = q.shape[0], q.shape[1]
        oq = ok = None
        if offsets is not None:
            arr_q = (ctypes.c_uint32 * len(offsets))(*offsets)
            arr_k = (ctypes.c_uint32 * len(offsets))(*(offsets_k or offsets))
            oq, ok = ctypes.cast(arr_q, ctypes.c_void_p), ctypes.cast(arr_k, ctypes.c_void_p)
            self._keep = (arr_q, arr_k)
            b = len(offsets) - 1
        h = self.lib.gpu_attention_prepare_on(module, q.data_ptr(), k.data_ptr(), v.data_ptr(), o.data_ptr(), lse.data_ptr(),
                                           b, s, k.shape[1], shape["heads"], shape["heads_kv"], shape["d"],
                                           int(shape["causal"]), element, scale, oq, ok)
        if h < 0:
            raise RuntimeError("ours: " + self.error())
        stream = torch.cuda.current_stream().cuda_stream
        # The launch reads Q, K, V and writes O and LSE at the addresses prepared: the call holds
        # all five, so that none is freed (and its memory handed to another tensor, which the
        # launch would then overwrite) while the call can still run.

        def call():
            if self.lib.gpu_attention_launch(h, stream) != 0:
                raise RuntimeError("ours: " + self.error())
        call.tensors = (q, k, v, o, lse)
        return call


def make_impls(args, shape, q, k, v, lens, inputs):
    """name -> (callable, output tensor getter); the device tensors the implementations read
    besides Q, K and V (a packed batch's offsets) are added to `inputs` by name."""
    impls = {}
    causal = shape["causal"]
    varlen = lens is not None
    o = torch.empty_like(q)
    if varlen:
        offsets = [0]
        for s in lens:
            offsets.append(offsets[-1] + s)
        lse = torch.empty(shape["heads"], offsets[-1], device="cuda", dtype=torch.float32)
        call = args.ours.prepare(q, k, v, o, lse, shape, offsets)
    else:
        lse = torch.empty(q.shape[0], shape["heads"], q.shape[1], device="cuda", dtype=torch.float32)
        call = args.ours.prepare(q, k, v, o, lse, shape)
    impls["ours"] = (call, lambda: o)
    for name, m in args.ours.variants:
        o_m, lse_m = torch.empty_like(o), torch.empty_like(lse)
        call_m = args.ours.prepare(q, k, v, o_m, lse_m, shape, offsets if varlen else None, module=m)
        impls["ours:" + name] = (call_m, lambda o_m=o_m: o_m)
    if varlen:
        cu = torch.tensor(offsets, device="cuda", dtype=torch.int32)
        inputs["cu_seqlens"] = cu
        mx = max(lens)
        if args.anchor == "fa3":
            from fa3_fwd_interface import flash_attn_varlen_func as fa3v
            res = {}

            def fa3_call():
                r = fa3v(q[0], k[0], v[0], cu, cu, mx, mx, causal=causal)
                res["o"] = r[0] if isinstance(r, tuple) else r
            impls["fa3"] = (fa3_call, lambda: res["o"].unsqueeze(0))
        return impls, o
    qt, kt, vt = (x.transpose(1, 2) for x in (q, k, v))
    gqa = shape["heads"] != shape["heads_kv"]
    res = {}

    def sdpa(backend, key):
        def run():
            with sdpa_kernel(backend):
                res[key] = F.scaled_dot_product_attention(qt, kt, vt, is_causal=causal, enable_gqa=gqa)
        return run
    impls["cudnn"] = (sdpa(SDPBackend.CUDNN_ATTENTION, "cudnn"), lambda: res["cudnn"].transpose(1, 2))
    impls["fa2"] = (sdpa(SDPBackend.FLASH_ATTENTION, "fa2"), lambda: res["fa2"].transpose(1, 2))
    if args.anchor == "fa3":
        from fa3_fwd_interface import flash_attn_func as fa3

        def fa3_call():
            r = fa3(q, k, v, causal=causal)
            res["fa3"] = r[0] if isinstance(r, tuple) else r
        impls["fa3"] = (fa3_call, lambda: res["fa3"])
    elif args.anchor == "fa4":
        from flash_attn.cute import flash_attn_func as fa4

        def fa4_call():
            r = fa4(q, k, v, causal=causal)
            res["fa4"] = r[0] if isinstance(r, tuple) else r
        impls["fa4"] = (fa4_call, lambda: res["fa4"])
    return impls, o


def ints(text):
    """A comma-separated list of whole numbers (`--only-d 64,128`)."""
    return [int(x) for x in text.split(",") if x]


def time_calls(fn, reps):
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(reps):
        fn()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / reps


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--anchor", default="none", choices=["fa3", "fa4", "none"])
    ap.add_argument("--shapes", default="paper")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--csv", default=None)
    ap.add_argument("--only-d", type=ints, default=[], help="only these head dimensions, comma-separated (the GQA and varlen rows too)")
    ap.add_argument("--only-seq", type=ints, default=[], help="only these sequence lengths, comma-separated (the GQA row too; no varlen row)")
    ap.add_argument("--only-causal", default="", choices=["", "0", "1"])
    ap.add_argument("--only-kind", default="", help="only these rows, comma-separated of paper,gqa,varlen")
    ap.add_argument("--impls", default="", help="comma-separated subset of ours,cudnn,fa2,fa3,fa4 (ours keeps the --modules variants)")
    ap.add_argument("--modules", default="", help="variant modules beside ours, name=file.ptx[@row+row],... (run as ours:name; name=@rows: ours' module on those rows)")
    args = ap.parse_args()
    if os.environ.get("ATTENTION_FA4_SITE"):
        # CuTe DSL needs its .pth processed (ANCHORS.md): addsitedir, not PYTHONPATH.
        import site
        site.addsitedir(os.environ["ATTENTION_FA4_SITE"])
    args.ours = Ours(args.lib)
    for item in filter(None, args.modules.split(",")):
        name, _, spec = item.partition("=")
        path, _, rows = spec.partition("@")
        args.ours.load(name, path, rows)
    torch.manual_seed(0)
    seqs = [512, 1024, 2048, 4096, 8192, 16384]
    dims = [64, 128, 256]
    if args.shapes == "quick":
        seqs, dims = [1024, 8192], [128]
    if args.only_d:
        dims = args.only_d
    if args.only_seq:
        seqs = args.only_seq
    extras = extra_shapes() if args.shapes == "paper" else []
    # The GQA and varlen rows obey the filters too (varlen has no one length: --only-seq drops it).
    extras = [s for s in extras if (not args.only_d or s["d"] in args.only_d) and (not args.only_seq or s["seq"] in args.only_seq)]
    shapes = paper_shapes(seqs, dims) + extras
    if args.only_kind:
        shapes = [s for s in shapes if s["kind"] in args.only_kind.split(",")]
    if args.only_causal:
        shapes = [s for s in shapes if s["causal"] == (args.only_causal == "1")]
    rows = []
    dev = torch.cuda.get_device_name()
    print(f"bench_attention: {dev}, torch {torch.__version__}, anchor {args.anchor}, rounds {args.rounds}, reps {args.reps}, warmup {args.warmup}", flush=True)
    for si, shape in enumerate(shapes):
        lens = None
        if shape["kind"] == "varlen":
            rng = random.Random(7)
            lens, total = [], 0
            while total < 16384:
                s = min(rng.randint(512, 4096), 16384 - total)
                lens.append(s)
                total += s
            q = torch.randn(1, total, shape["heads"], shape["d"], device="cuda", dtype=torch.bfloat16)
            k = torch.randn(1, total, shape["heads_kv"], shape["d"], device="cuda", dtype=torch.bfloat16)
            v = torch.randn(1, total, shape["heads_kv"], shape["d"], device="cuda", dtype=torch.bfloat16)
        else:
            b, s = shape["batch"], shape["seq"]
            q = torch.randn(b, s, shape["heads"], shape["d"], device="cuda", dtype=torch.bfloat16)
            k = torch.randn(b, s, shape["heads_kv"], shape["d"], device="cuda", dtype=torch.bfloat16)
            v = torch.randn(b, s, shape["heads_kv"], shape["d"], device="cuda", dtype=torch.bfloat16)
        inputs = dict(q=q, k=k, v=v)
        try:
            impls, _ = make_impls(args, shape, q, k, v, lens, inputs)
        except Exception as e:  # noqa: BLE001
            print(f"FAIL {shape}: {e}", flush=True)
            rows.append(dict(shape, impl="ours", ms=float("nan"), tflops=float("nan"), err=float("nan"), note=str(e)[:80]))
            continue
        if args.impls:
            keep = set(args.impls.split(","))
            impls = {n: f for n, f in impls.items() if n.split(":")[0] in keep}
        # One call each, outputs checked against a reference: cuDNN where it ran, else FA3, else
        # torch's math backend on the first sequence.
        # Every input is compared with its copy after each implementation's first call and after
        # the timing: a call that writes outside its outputs (into another's inputs or the
        # offsets) is named, rather than showing up as another implementation's wrong answer.
        saved = {n: t.clone() for n, t in inputs.items()}
        clobbered = []

        def check_inputs(after):
            torch.cuda.synchronize()
            for n, t in inputs.items():
                if not torch.equal(t, saved[n]):
                    clobbered.append(f"{n} after {after}")
                    t.copy_(saved[n])
        outs, notes = {}, {}
        for name, (fn, get) in list(impls.items()):
            try:
                fn()
                torch.cuda.synchronize()
                outs[name] = get().float()
            except Exception as e:  # noqa: BLE001
                notes[name] = f"{type(e).__name__}: {str(e)[:100]}"
                del impls[name]
            check_inputs(name)
        ref_name = next((n for n in ("cudnn", "fa3", "fa4", "fa2") if n in outs), None)
        errs = {}
        if ref_name is not None:
            ref = outs[ref_name]
            for name, out in outs.items():
                errs[name] = (out - ref).abs().max().item()
        else:
            # No other implementation ran (varlen without an anchor, or `--impls ours`): torch's
            # math backend on the first sequence (a packed batch's first, a fixed batch's first
            # element), GQA's K and V heads repeated.
            first = (lambda x: x[:, : lens[0]]) if lens else (lambda x: x[:1])
            qt, kt, vt = (first(x).transpose(1, 2).float() for x in (q, k, v))
            rep = shape["heads"] // shape["heads_kv"]
            kt, vt = kt.repeat_interleave(rep, dim=1), vt.repeat_interleave(rep, dim=1)
            with sdpa_kernel(SDPBackend.MATH):
                ref = F.scaled_dot_product_attention(qt, kt, vt, is_causal=shape["causal"]).transpose(1, 2)
            errs["ours"] = (first(outs["ours"]) - ref).abs().max().item()
        for name, fn_get in impls.items():
            for _ in range(args.warmup):
                fn_get[0]()
        torch.cuda.synchronize()
        times = {name: [] for name in impls}
        for r in range(args.rounds):
            order = list(impls)
            random.Random(1000 * si + r).shuffle(order)
            for name in order:
                times[name].append(time_calls(impls[name][0], args.reps))
        check_inputs("the timed rounds")
        f = flops(shape, lens)
        line = []
        for name in impls:
            ms = sorted(times[name])[len(times[name]) // 2]
            tf = f / (ms * 1e-3) / 1e12
            rows.append(dict(shape, impl=name, ms=ms, tflops=tf, err=errs.get(name, float("nan")), note=notes.get(name, "")))
            line.append(f"{name} {tf:6.1f}")
        for name, note in notes.items():
            rows.append(dict(shape, impl=name, ms=float("nan"), tflops=float("nan"), err=float("nan"), note=note))
            line.append(f"{name} FAILED ({note[:40]})")
        ok = all(e < 0.05 for e in errs.values()) and not clobbered
        tag = "ok" if ok else "CHECK-FAIL"
        if clobbered:
            tag += " INPUTS-CHANGED: " + "; ".join(clobbered)
            rows.append(dict(shape, impl="inputs", ms=float("nan"), tflops=float("nan"), err=float("nan"), note="changed: " + "; ".join(clobbered)))
        print(f"{shape['kind']:6} d{shape['d']:3} {'causal' if shape['causal'] else 'full  '} seq {shape['seq']:5} b{shape['batch']:2} h{shape['heads']}/{shape['heads_kv']}: " + ", ".join(line) + f"  [max |diff| vs {ref_name or 'math'}: " + ", ".join(f"{n} {e:.2e}" for n, e in errs.items()) + f"] {tag}", flush=True)
        del impls, outs, q, k, v
        torch.cuda.empty_cache()
        # Written after every shape: a run cut short by its time limit keeps what it measured.
        write_csv(args.csv, rows)


def write_csv(path, rows):
    if not path:
        return
    keys = ["kind", "d", "causal", "seq", "batch", "heads", "heads_kv", "impl", "ms", "tflops", "err", "note"]
    with open(path, "w") as fh:
        fh.write(",".join(keys) + "\n")
        for row in rows:
            fh.write(",".join(str(row[k]).replace(",", ";") for k in keys) + "\n")


if __name__ == "__main__":
    main()
