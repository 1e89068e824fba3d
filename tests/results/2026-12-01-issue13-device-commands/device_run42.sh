#!/usr/bin/env bash
# Issue 13, run 42 (session 5): after run 41's fixes (the 128 x 64 kernel's staging boxes and its
# setmaxnreg, the first kernel's spill), with the default on 128 x 64 tiles for the smallest
# shapes: split-K added up inside the kernel (`ours`) against the second pass (`ours-second-pass`).
# gemm-test (exact, every kernel, both reductions), gemm-bench --check (every implementation
# against cuBLAS), the benchmark over all shapes (20 rounds after 5 warm-ups), then the benchmark
# at beta 1 on three shapes (10 rounds).
set -u
root=$OUT
cd "$(dirname "$0")/../../.."
b=target/gemm-bundle
timeout -k 5 200 $b/gemm-test $b/gpu_gemm.ptx > "$root/gemm-test.log" 2>&1
echo "gemm-test exit $?" | tee -a "$root/gemm-test.log"
grep -v "^PASS" "$root/gemm-test.log" | tail -n 20
grep -c "^PASS" "$root/gemm-test.log"
for dir in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$dir" ] && export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
timeout -k 5 200 $b/gemm-bench --check --ours-module $b/gpu_gemm.ptx > "$root/gemm-check.log" 2>&1
echo "gemm-bench --check exit $?" | tee -a "$root/gemm-check.log"
grep -E "^FAIL|checks" "$root/gemm-check.log" | tail -n 8
mkdir -p "$root/gemm"
(OUT=$root/gemm GEMM_TIMEOUT=420 bash $b/run_gemm.sh --shapes all) > "$root/gemm_run.log" 2>&1
echo "run_gemm.sh exit $?" | tee -a "$root/gemm_run.log"
grep -E "ptxas:|FAIL|registers" "$root/gemm_run.log" | head -n 12
sed -n '/== summary/,$p' "$root/gemm_run.log" | head -n 40
mkdir -p "$root/gemm-beta1"
(OUT=$root/gemm-beta1 GEMM_TIMEOUT=150 bash $b/run_gemm.sh --beta 1 --reps 10 --warmup 3 --shapes 8192x8192x8192,128x4096x4096,1024x1024x1024) > "$root/gemm_beta1_run.log" 2>&1
echo "run_gemm.sh --beta 1 exit $?" | tee -a "$root/gemm_beta1_run.log"
rm -f "$root"/gemm*/gpu_gemm.cubin
