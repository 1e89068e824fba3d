#!/usr/bin/env bash
# Issue 13, run 33 (the session's final run): the whole suite bundle of `cargo xtask test-nvidia
# --bundle` (suite, checked suite, broken kernels, synccheck, example, gemm-test exact on every
# kernel, gemm-bench --check against cuBLAS), then the benchmark bundle with its default rounds
# over all shapes, at the same commit. New since run 30: the single-CTA kernels launch without a cluster attribute (runs 31, 32), and arrive_remote and arrive_remote_cta share one body.
set -u
root=$OUT
cd "$(dirname "$0")/.."
(OUT=$root/suite bash target/bundle/suite/run.sh) > "$root/suite_run.log" 2>&1
echo "suite run.sh exit $?" | tee -a "$root/suite_run.log"
grep -E " passed|FAIL|ERROR SUMMARY|^gemm:|checks passed|time gemm|SKIPPED" "$root/suite_run.log" | tail -n 20
mkdir -p "$root/gemm"
(OUT=$root/gemm GEMM_TIMEOUT=500 bash target/gemm-bundle/run_gemm.sh --shapes all) > "$root/gemm_run.log" 2>&1
echo "run_gemm.sh exit $?" | tee -a "$root/gemm_run.log"
grep -E "ptxas:|FAIL" "$root/gemm_run.log" | head
sed -n '/== summary/,$p' "$root/gemm_run.log"
tar czf "$root/suite.tgz" -C "$root" suite && rm -rf "$root/suite"
