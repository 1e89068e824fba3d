#!/usr/bin/env bash
# Issue 13, run 22: an Nsight Compute profile of the persistent GEMM at 8192^3 (the 12th launch of
# gemm_bf16_persistent in gemm-test: the first timing warm-up after its 11 exact cases), speed of
# light, memory workload and warp-state sections, for the next session's tuning.
set -u
cd "$(dirname "$0")/.."
b=target/bundle/suite
timeout 400 /usr/local/cuda/bin/ncu --kernel-name gemm_bf16_persistent --launch-skip 11 --launch-count 1 \
  --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section Occupancy \
  $b/gemm-test $b/gpu_gemm.ptx > "$OUT/ncu.log" 2>&1
echo "ncu exit $?" >> "$OUT/ncu.log"
grep -vE "^PASS|^time" "$OUT/ncu.log" | tail -90
