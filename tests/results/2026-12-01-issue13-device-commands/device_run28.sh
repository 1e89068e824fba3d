#!/usr/bin/env bash
# Issue 13, run 28: where the time of a small GEMM goes. Nsight Compute's kernel duration of
# every kernel (cuBLAS's and ours) on 1024^3 and 128x4096x4096, from gemm-bench (2 rounds after
# 1 warm-up, no timing gate), beside the benchmark's own event timings of the same process.
set -u
cd "$(dirname "$0")/.."
for dir in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$dir" ] && export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
b=target/gemm-bundle
timeout 300 /usr/local/cuda/bin/ncu --metrics gpu__time_duration.sum,launch__grid_size,launch__block_size,sm__cycles_active.max,gpc__cycles_elapsed.max \
  --csv $b/gemm-bench --ours-module $b/gpu_gemm.ptx --shapes 1024x1024x1024,128x4096x4096 --reps 2 --warmup 1 --no-gate > "$OUT/ncu.csv" 2> "$OUT/ncu.err"
echo "ncu exit $?"
grep -c '"gpu__time_duration.sum"' "$OUT/ncu.csv"
# The last 2 rounds' kernels: name, metric, value (the tail of the CSV).
grep -E 'gpu__time_duration.sum|launch__grid_size|sm__cycles_active.max' "$OUT/ncu.csv" | awk -F'","' '{print $5 " | " $(NF-2) " | " $NF}' | tail -n 120 | cut -c1-150
grep -E "^(== |  (ours|cublas))" "$OUT/ncu.err" | head -5
