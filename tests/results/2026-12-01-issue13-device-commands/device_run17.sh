#!/usr/bin/env bash
# Issue 13, run 17: the first run of `cargo xtask bench-gemm`'s bundle: the Rust GEMM (persistent
# and per-tile kernels) against cublasGemmEx, cuBLASLt's first heuristic choice and its fastest
# candidate, alternating, every result checked; quick mode, square shapes.
set -u
cd "$(dirname "$0")/.."
GEMM_TIMEOUT=500 OUT=$OUT bash target/gemm-bundle/run_gemm.sh --quick --shapes square
