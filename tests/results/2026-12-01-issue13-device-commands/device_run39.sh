#!/usr/bin/env bash
# Issue 13, run 39 (session 4): the persistent kernel on 128 x 128 tiles (gemm_bf16_persistent_n128,
# wgmma.m64n128k16, 6 stages), now the default where 128 x 256 tiles leave SMs idle. gemm-test
# (exact, every kernel), then the benchmark bundle over all shapes (20 rounds after 5 warm-ups).
set -u
root=$OUT
cd "$(dirname "$0")/.."
timeout -k 5 150 target/bundle/suite/gemm-test target/bundle/suite/gpu_gemm.ptx > "$root/gemm-test.log" 2>&1
echo "gemm-test exit $?" | tee -a "$root/gemm-test.log"
grep -v "^PASS" "$root/gemm-test.log" | tail -n 20
grep -c "^PASS" "$root/gemm-test.log"
mkdir -p "$root/gemm"
(OUT=$root/gemm GEMM_TIMEOUT=400 bash target/gemm-bundle/run_gemm.sh --shapes all) > "$root/gemm_run.log" 2>&1
echo "run_gemm.sh exit $?" | tee -a "$root/gemm_run.log"
grep -E "ptxas:|FAIL" "$root/gemm_run.log" | head
sed -n '/== summary/,$p' "$root/gemm_run.log"
rm -f "$root"/gemm*/gpu_gemm.cubin
