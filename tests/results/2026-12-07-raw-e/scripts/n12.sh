#!/usr/bin/env bash
# ncu --set full at 160 x 3584 x 3584: skinny-80-r64-d (cuBLAS's tile: 64 weight rows x 80, same grid
# of 112 CTAs, no split) against cuBLAS's nvjet 64x80 (cluster 4x2), plus skinny-64-ck and its pair
# (skinny-64-ckp: activations multicast). Output tarred (only 8 files come back).
set -u
export PATH=$PATH:/usr/local/cuda/bin
for dir in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$dir" ] && export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
root=$(cd "$(dirname "$0")/.." && pwd); N=$root/bundle/g24; O=/tmp/n12; mkdir -p $O
s=160x3584x3584
cd $N
for k in gemm_bf16_skinny80_r64_deep gemm_bf16_skinny64_cluster_k gemm_bf16_skinny64_cluster_k_pair gemm_bf16_skinny64_r64; do
  st=$(date +%s)
  timeout -k 5 70 ncu --set full --csv --page details --filter-mode global --kernel-name "regex:^$k\$" --launch-skip 31 --launch-count 1 \
    ./gemm-bench --ours-module $N/gpu_gemm_steps.ptx --shapes $s --reps 3 --warmup 1 > $O/full-$k.csv 2> $O/full-$k.err
  echo "$k exit $? ($(( $(date +%s) - st )) s) lines $(wc -l < $O/full-$k.csv)"
done
cd $root
st=$(date +%s)
timeout -k 5 60 ncu --set full --csv --page details --kernel-name "regex:nvjet" --launch-skip 1 --launch-count 1 \
  python3 $root/bundle/census.py $s > $O/full-cublas.csv 2> $O/full-cublas.err
echo "cublas exit $? ($(( $(date +%s) - st )) s) lines $(wc -l < $O/full-cublas.csv)"
tar czf ${OUT:-/tmp}/n12.tgz -C $O .
ls -la ${OUT:-/tmp}
