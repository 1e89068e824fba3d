#!/usr/bin/env bash
# Call H (carry bundle/s3-gemm, bundle/s3-H.sh): the edges of short_rows_long_k: M 65, 80, 120, 127 by the long-K layers.
set -u
export PATH=$PATH:/usr/local/cuda/bin
for dir in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$dir" ] && export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
root=$(cd "$(dirname "$0")/.." && pwd)
t=/tmp/o; mkdir -p $t
cd $root/bundle/s3-gemm
echo "gemm $(cat COMMIT); $(nvidia-smi --query-gpu=name,clocks.sm,power.limit --format=csv,noheader)"
fam="[(2048,8192),(3584,18944),(4096,14336),(8192,8192),(8192,28672),(10240,8192),(57344,8192)]"
shapes=$(python3 -c "print(','.join(f'{m}x{n}x{k}' for m in (65,80,120,127) for n,k in $fam))")
s=$(date +%s); timeout -k 5 200 ./gemm-bench --ours-module gpu_gemm_steps.ptx --csv $t/edges.csv --shapes $shapes --reps 12 --warmup 2 > $t/edges.log 2>&1; echo "edges exit $? ($(( $(date +%s) - s )) s)"
tar czf ${OUT:-/tmp/out}/s3H.tgz -C $t .
