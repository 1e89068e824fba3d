#!/usr/bin/env bash
# Issue 13, run 37 (session 3): the whole suite bundle of `cargo xtask test-nvidia --bundle`
# (suite, checked suite, broken kernels, synccheck, example, gemm-test exact on every kernel,
# gemm-bench --check against cuBLAS), then the benchmark bundle with its default rounds over all
# shapes, then the benchmark at beta 1 on three shapes (C through the EpiLoadPipeline).
# New since run 36: split-K of the last partial wave only; the cluster split-K kernel removed.
set -u
root=$OUT
cd "$(dirname "$0")/.."
(OUT=$root/suite bash target/bundle/suite/run.sh) > "$root/suite_run.log" 2>&1
echo "suite run.sh exit $?" | tee -a "$root/suite_run.log"
grep -E " passed|FAIL|ERROR SUMMARY|^gemm:|checks passed|time gemm|SKIPPED" "$root/suite_run.log" | tail -n 24
grep -E "splits [^1]" "$root/suite_run.log" | grep 1100x | head -4
mkdir -p "$root/gemm" "$root/gemm-beta1"
(OUT=$root/gemm GEMM_TIMEOUT=500 bash target/gemm-bundle/run_gemm.sh --shapes all) > "$root/gemm_run.log" 2>&1
echo "run_gemm.sh exit $?" | tee -a "$root/gemm_run.log"
grep -E "ptxas:|FAIL" "$root/gemm_run.log" | head
sed -n '/== summary/,$p' "$root/gemm_run.log"
(OUT=$root/gemm-beta1 GEMM_TIMEOUT=150 bash target/gemm-bundle/run_gemm.sh --beta 1 --reps 10 --warmup 3 --shapes 8192x8192x8192,4096x4096x4096,1024x14336x4096) > "$root/gemm_beta1_run.log" 2>&1
echo "run_gemm.sh --beta 1 exit $?" | tee -a "$root/gemm_beta1_run.log"
sed -n '/== summary/,$p' "$root/gemm_beta1_run.log" | head -6
tar czf "$root/suite.tgz" -C "$root" suite && rm -rf "$root/suite"
rm -f "$root"/gemm*/gpu_gemm.cubin
