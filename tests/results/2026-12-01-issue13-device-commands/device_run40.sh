#!/usr/bin/env bash
# Issue 13, run 40 (session 4): the whole suite bundle of `cargo xtask test-nvidia --bundle`
# (suite, checked suite, broken kernels, synccheck, example, gemm-test exact on every kernel,
# gemm-bench --check against cuBLAS), the benchmark at beta 1 on three shapes (two of them on the
# 128 x 128 kernel, C through its EpiLoadPipeline), and Nsight Compute's kernel times of the two
# smallest shapes. The GEMM PTX is byte-identical to run 39's (which has the full benchmark).
set -u
root=$OUT
cd "$(dirname "$0")/.."
(OUT=$root/suite bash target/bundle/suite/run.sh) > "$root/suite_run.log" 2>&1
echo "suite run.sh exit $?" | tee -a "$root/suite_run.log"
grep -E " passed|FAIL|ERROR SUMMARY|^gemm:|checks passed|time gemm|SKIPPED" "$root/suite_run.log" | tail -n 24
mkdir -p "$root/gemm-beta1"
(OUT=$root/gemm-beta1 GEMM_TIMEOUT=150 bash target/gemm-bundle/run_gemm.sh --beta 1 --reps 10 --warmup 3 --shapes 8192x8192x8192,128x14336x4096,1024x1024x1024) > "$root/gemm_beta1_run.log" 2>&1
echo "run_gemm.sh --beta 1 exit $?" | tee -a "$root/gemm_beta1_run.log"
sed -n '/== summary/,$p' "$root/gemm_beta1_run.log" | head -6
b=target/gemm-bundle
timeout 200 /usr/local/cuda/bin/ncu --metrics gpu__time_duration.sum,launch__grid_size \
  --csv $b/gemm-bench --ours-module $b/gpu_gemm.ptx --shapes 128x4096x4096,1024x1024x1024 --reps 1 --warmup 1 --no-gate > "$root/ncu.csv" 2> "$root/ncu.err"
echo "ncu exit $?"
grep -E 'gpu__time_duration.sum|launch__grid_size' "$root/ncu.csv" | awk -F'","' '{print $5 " | " $(NF-2) " | " $NF}' | tail -n 70 | cut -c1-120
tar czf "$root/suite.tgz" -C "$root" suite && rm -rf "$root/suite"
rm -f "$root"/gemm*/gpu_gemm.cubin
