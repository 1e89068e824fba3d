#!/usr/bin/env bash
# Issue 13, run 19: an epilogue experiment (adjacent columns stored as one bf16x2 4-byte store,
# C read the same way, when N is even): exactness (gemm-test, both kernels, 11 shapes, odd N
# included) and the quick square benchmark against cuBLAS.
set -u
cd "$(dirname "$0")/.."
b=target/gemm-bundle-epi
timeout 300 $b/gemm-test $b/gpu_gemm.ptx 2>&1 | tee "$OUT/gemm-test.log" | tail -4
GEMM_TIMEOUT=400 OUT=$OUT bash $b/run_gemm.sh --quick --shapes square 2>&1 | sed -n '/== summary/,$p'
