#!/usr/bin/env bash
# Issue 13, run 38 (session 3): gemm-test again after the host-only changes that followed run 37
# (gemm-test's launch_and_read; the GEMM crate formatted, its PTX byte-identical to run 37's).
set -u
root=$OUT
cd "$(dirname "$0")/.."
timeout -k 5 200 target/bundle/suite/gemm-test target/bundle/suite/gpu_gemm.ptx > "$root/gemm-test.log" 2>&1
echo "gemm-test exit $?" | tee -a "$root/gemm-test.log"
grep -v "^PASS" "$root/gemm-test.log"
grep -c "^PASS" "$root/gemm-test.log"
