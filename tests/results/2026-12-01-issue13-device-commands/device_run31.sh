#!/usr/bin/env bash
# Issue 13, run 31: is the single-CTA persistent kernel's back-to-back figure (710 TFLOP/s at
# 8192^3 in run 30, against 830 in session 1's run 21) a regression of the kernel or a change of
# the machine? Session 1's gemm-test and module (commit 7a593c6, built into target/old-gemm), then
# this commit's (the suite bundle), one after the other in one call.
set -u
cd "$(dirname "$0")/.."
echo "== session 1 (7a593c6)"
timeout 120 target/old-gemm/gemm-test target/old-gemm/gpu_gemm.ptx 2>&1 | grep -vE "^PASS"
echo "== this commit"
timeout 120 target/bundle/suite/gemm-test target/bundle/suite/gpu_gemm.ptx 2>&1 | grep -vE "^PASS"
echo "== session 1 again"
timeout 120 target/old-gemm/gemm-test target/old-gemm/gpu_gemm.ptx 2>&1 | grep -E "^time"
