#!/usr/bin/env bash
# Issue 13, run 25: the CTA-pair kernel with CTA-scope remote releases and CTA-scope waits (run 24: its cluster-scope release compiled to MEMBAR.ALL.GPU per release, 0.71x the single-CTA kernel); the other kernels as in run 24 (setmaxnreg and warp-elected releases; the persistent CTA-pair
# kernel with multicast B), checked exactly by gemm-test on every kernel, then, if that passes,
# the benchmark bundle (ptxas gate, quick rounds) on a few square and language-model shapes.
set -u
root=$OUT
cd "$(dirname "$0")/.."
mkdir -p "$root/gemm"
timeout -k 5 150 target/bundle/suite/gemm-test target/bundle/suite/gpu_gemm.ptx > "$root/gemm-test.log" 2>&1
status=$?
echo "gemm-test exit $status" | tee -a "$root/gemm-test.log"
cat "$root/gemm-test.log"
if [ "$status" -eq 0 ]; then
  (OUT=$root/gemm GEMM_TIMEOUT=300 bash target/gemm-bundle/run_gemm.sh --quick \
    --shapes 8192x8192x8192,4096x4096x4096,2048x2048x2048,1024x4096x4096,8192x14336x4096,128x4096x4096,16384x16384x16384) > "$root/gemm_run.log" 2>&1
  echo "run_gemm.sh exit $?" | tee -a "$root/gemm_run.log"
  grep -E "ptxas|FAIL" "$root/gemm_run.log" | head
  sed -n '/== summary/,$p' "$root/gemm_run.log"
fi
