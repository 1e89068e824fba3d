#!/usr/bin/env bash
# Issue 13, run 36 (session 3): the double-buffered quarter epilogue (2-stage EpiLoadPipeline for
# C), split-K's reduction as a programmatic dependent launch, cluster split-K in clusters of any
# size up to 8. gemm-test (exact, every kernel), gemm-bench --check, the benchmark over all shapes
# (8 rounds), the benchmark at beta 1 on three shapes, then Nsight Compute's kernel durations on
# 128x4096x4096 and 1024x1024x1024 (every implementation, 1 round after 1 warm-up).
set -u
root=$OUT
cd "$(dirname "$0")/.."
for dir in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$dir" ] && export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
timeout -k 5 150 target/bundle/suite/gemm-test target/bundle/suite/gpu_gemm.ptx > "$root/gemm-test.log" 2>&1
echo "gemm-test exit $?" | tee -a "$root/gemm-test.log"
grep -v "^PASS" "$root/gemm-test.log"
grep -c "^PASS" "$root/gemm-test.log"
grep "cluster_splitk.*splits [^1]" "$root/gemm-test.log"
/usr/bin/time -f "gemm-check wall %e s" timeout -k 5 240 target/bundle/suite/gemm-bench --check --ours-module target/bundle/suite/gpu_gemm.ptx > "$root/gemm-check.log" 2>&1
echo "gemm-bench --check exit $?" | tee -a "$root/gemm-check.log"
grep -v "^PASS" "$root/gemm-check.log" | tail -4
mkdir -p "$root/gemm" "$root/gemm-beta1"
(OUT=$root/gemm GEMM_TIMEOUT=300 bash target/gemm-bundle/run_gemm.sh --reps 8 --warmup 3 --shapes all) > "$root/gemm_run.log" 2>&1
echo "run_gemm.sh exit $?" | tee -a "$root/gemm_run.log"
grep -E "ptxas:|FAIL" "$root/gemm_run.log" | head
sed -n '/== summary/,$p' "$root/gemm_run.log"
(OUT=$root/gemm-beta1 GEMM_TIMEOUT=150 bash target/gemm-bundle/run_gemm.sh --beta 1 --reps 8 --warmup 3 --shapes 8192x8192x8192,4096x4096x4096,1024x4096x4096) > "$root/gemm_beta1_run.log" 2>&1
echo "run_gemm.sh --beta 1 exit $?" | tee -a "$root/gemm_beta1_run.log"
sed -n '/== summary/,$p' "$root/gemm_beta1_run.log" | head -6
b=target/gemm-bundle
timeout 200 /usr/local/cuda/bin/ncu --metrics gpu__time_duration.sum,launch__grid_size \
  --csv $b/gemm-bench --ours-module $b/gpu_gemm.ptx --shapes 128x4096x4096,1024x1024x1024 --reps 1 --warmup 1 --no-gate > "$root/ncu.csv" 2> "$root/ncu.err"
echo "ncu exit $?"
grep -E 'gpu__time_duration.sum|launch__grid_size' "$root/ncu.csv" | awk -F'","' '{print $5 " | " $(NF-2) " | " $NF}' | tail -n 60 | cut -c1-120
