#!/usr/bin/env bash
# Next session's first call (carry bundle/): ncu of our fastest kernels at 80 x 3584 x 3584 and
# 160 x 3584 x 3584 (bundle g24 = 785e77b's steps module), each profiled alone: gemm-bench's
# exact checks launch every kernel 30 times (10 shapes x 3 scalars) and the default ("ours")
# more, so each kernel takes its launches 31-36 and the analysis keeps those whose grid is the
# target shape's. Sections: speed of light, memory workload, warp states.
set -u
export PATH=$PATH:/usr/local/cuda/bin
for dir in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$dir" ] && export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
root=$(cd "$(dirname "$0")/.." && pwd); N=$root/bundle/g24; cd $N; O=${OUT:-/tmp/n11}; mkdir -p $O
for s in 80x3584x3584 160x3584x3584; do
  for k in gemm_bf16_skinny80_r64_deep gemm_bf16_persistent_n128 gemm_bf16_skinny64_r64 gemm_bf16_skinny192_cluster_k; do
    st=$(date +%s)
    timeout -k 5 50 ncu --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section LaunchStats --section Occupancy \
      --csv --page details --filter-mode global --kernel-name "regex:^$k\$" --launch-skip 31 --launch-count 6 \
      ./gemm-bench --ours-module $N/gpu_gemm_steps.ptx --shapes $s --reps 3 --warmup 1 > $O/ncu-$s-$k.csv 2> $O/ncu-$s-$k.err
    echo "$s $k exit $? ($(( $(date +%s) - st )) s) lines $(wc -l < $O/ncu-$s-$k.csv)"
  done
done
# cuBLAS's side: torch F.linear at the same shapes (census.py: 3 calls per shape), nvjet kernels only.
cd $root
for s in 80x3584x3584 160x3584x3584; do
  st=$(date +%s)
  timeout -k 5 50 ncu --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section LaunchStats --section Occupancy \
    --csv --page details --kernel-name "regex:nvjet" --launch-skip 1 --launch-count 2 \
    python3 $root/bundle/census.py $s > $O/ncu-$s-cublas.csv 2> $O/ncu-$s-cublas.err
  echo "$s cublas exit $? ($(( $(date +%s) - st )) s) lines $(wc -l < $O/ncu-$s-cublas.csv)"
done
ls -la $O
