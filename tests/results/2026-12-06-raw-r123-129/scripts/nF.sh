#!/usr/bin/env bash
# Call F: (1) the failing memcheck command of call D again with the fixed benchmark (ours holds its tensors); (2) the varlen rows with n128+kv+FA3;
# (3) gemm-test full on the new production module (n64/n128 shift their last tile row), steps --quick, memcheck quick; (4) the partial-row sweep.
set -u
export PATH=$PATH:/usr/local/cuda/bin
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/out}; mkdir -p "$out/nF"
for dir in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$dir" ] && export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
a=$PWD/bundle/next-att; g=$PWD/bundle/g5; mod=$PWD/crates/gpu-gemm-host/module/gpu_gemm.ptx
cp crates/gpu-attention-host/module/gpu_attention.ptx $a/gpu_attention.ptx
B="python3 $a/bench_attention.py --lib $a/libattention_bench.so --anchor none --shapes paper --only-kind varlen"
echo "== memcheck, caching off, ours on n128 (call D: 3304 errors)"
GPU_ATTENTION_MODULE=$a/gpu_attention.ptx GPU_ATTENTION_KERNEL=d128_n128 PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 200 compute-sanitizer --tool memcheck --print-limit 5 $B --only-causal 0 --rounds 1 --reps 1 --warmup 1 > $out/nF/memcheck.log 2>&1; echo "exit $?"
grep -E "^varlen|ERROR SUMMARY" $out/nF/memcheck.log | head -5
echo "== varlen rows, n128 + kv + FA3 (call C: illegal address)"
ATTENTION_TIMEOUT=120 OUT=$out/nF/fa3 bash $a/run_attention.sh --anchor fa3 --shapes paper --only-kind varlen --modules n128=@d128_n128,kv=$a/gpu_attention_kv_evict_last.ptx 2>&1 | grep -E "^varlen|Error" | tail -n 4
cd $g
echo "== gemm-test full, production module $(sha256sum $mod | cut -c1-12)"
s=$(date +%s); timeout -k 5 200 ./gemm-test $mod > $out/nF/gemm-test.log 2>&1; echo "exit $? ($(( $(date +%s) - s )) s)"; grep -c "^PASS" $out/nF/gemm-test.log; grep "^FAIL" $out/nF/gemm-test.log | head; tail -n 2 $out/nF/gemm-test.log
s=$(date +%s); timeout -k 5 100 ./gemm-test gpu_gemm_steps.ptx --steps --quick > $out/nF/steps-test.log 2>&1; echo "steps exit $? ($(( $(date +%s) - s )) s)"; grep "^FAIL" $out/nF/steps-test.log | head -5; tail -n 1 $out/nF/steps-test.log
s=$(date +%s); timeout -k 5 120 compute-sanitizer --tool memcheck --error-exitcode 9 ./gemm-test $mod --sanitize > $out/nF/gemm-memcheck.log 2>&1; echo "memcheck exit $? ($(( $(date +%s) - s )) s)"; tail -n 2 $out/nF/gemm-memcheck.log
for ms in 160,192,320,448 576,704,960 224,500,1000; do
shapes=$(python3 -c "
fam=[(3072,2048),(4608,3584),(3584,3584),(4096,4096),(10240,8192),(8192,8192),(8192,28672),(57344,8192)]
print(','.join(f'{m}x{n}x{k}' for m in ($ms,) for n,k in fam))")
s=$(date +%s); timeout -k 5 ${SW:-120} ./gemm-bench --ours-module gpu_gemm_steps.ptx --csv $out/nF/sweep-${ms//,/-}.csv --shapes $shapes --reps 12 --warmup 2 > $out/nF/sweep-${ms//,/-}.log 2>&1; echo "sweep $ms exit $? ($(( $(date +%s) - s )) s)"
done
