#!/usr/bin/env bash
# Issue 13, run 32: the same module as run 31's "this commit", launched by a gemm-test whose host
# gives the non-cluster kernels no cluster-dimension attribute (run 31: session 1's persistent
# kernel 797-800 TFLOP/s back to back, this session's 695-711). Then run 31's binary again.
set -u
cd "$(dirname "$0")/.."
echo "== no cluster attribute for the single-CTA kernels"
timeout 120 target/fix-gemm/gemm-test target/fix-gemm/gpu_gemm.ptx 2>&1 | grep -vE "^PASS"
echo "== run 31's host (a 1x1x1 cluster attribute on every launch)"
timeout 120 target/bundle/suite/gemm-test target/bundle/suite/gpu_gemm.ptx 2>&1 | grep -E "^time"
