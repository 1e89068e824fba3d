#!/usr/bin/env bash
# Issue 13, run 14: the first prototype of the Rust GEMM kernel (warp-specialized, wgmma
# m64n256k16 from two consumer warpgroups, 2D tensor TMA with 128-byte swizzle, a 4-stage
# ProducerConsumerPipeline split into halves, one stage in flight), checked exactly against a host
# reference on small-integer data, and timed at 8192^3. Not yet in the repo's crates.
set -u
cd "$(dirname "$0")/.."
/usr/local/cuda/bin/ptxas -arch=sm_90a -v target/gemm-proto/gemm.ptx -o "$OUT/gemm.cubin" > "$OUT/ptxas.log" 2>&1; cat "$OUT/ptxas.log"
timeout 120 ./target/gemm-proto/gemm-proto-host target/gemm-proto/gemm.ptx 2>&1 | tee "$OUT/gemm-proto.log"
echo "exit ${PIPESTATUS[0]}" | tee -a "$OUT/gemm-proto.log"
