#!/usr/bin/env bash
# Issue 13, run 20 (same device session as run 19): the epilogue experiment's bundle, square
# shapes, default rounds (20 after 5 warm-up).
b=target/gemm-bundle-epi; GEMM_TIMEOUT=400 OUT=$OUT bash $b/run_gemm.sh --shapes square
