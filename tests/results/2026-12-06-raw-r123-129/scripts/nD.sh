#!/usr/bin/env bash
# Call D: the illegal address of d128_n128 on the benchmark's varlen row: ours + n128 alone (no anchor), then under memcheck with torch's caching allocator off.
set -u
export PATH=$PATH:/usr/local/cuda/bin
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/out}; mkdir -p "$out/nD"
a=$PWD/bundle/next-att
cp crates/gpu-attention-host/module/gpu_attention.ptx $a/gpu_attention.ptx
export GPU_ATTENTION_MODULE=$a/gpu_attention.ptx
B="python3 $a/bench_attention.py --lib $a/libattention_bench.so --anchor none --shapes paper --only-kind varlen"
echo "== 1: ours + n128 + n192, no anchor"; timeout 120 $B --modules n128=@d128_n128,n192=@d128_n192 2>&1 | grep -E "^varlen|Error" | tail -4
echo "== 2: n128 only (ours on n128 rows), no anchor, full"; GPU_ATTENTION_KERNEL=d128_n128 timeout 120 $B --only-causal 0 2>&1 | grep -E "^varlen|Error|gpu-attention" | tail -4
echo "== 3: memcheck, caching off, ours on n128"; GPU_ATTENTION_KERNEL=d128_n128 PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 300 compute-sanitizer --tool memcheck --print-limit 20 $B --only-causal 0 --rounds 1 --reps 1 --warmup 1 > $out/nD/memcheck.log 2>&1; echo "exit $?"
grep -E "^varlen|ERROR SUMMARY|Invalid|at .*attention_fwd|Address|bytes" $out/nD/memcheck.log | head -30
