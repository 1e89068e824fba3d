#!/usr/bin/env bash
# Next session, call B (~7 min; carry bundle/s2-gemm, bundle/s2-B.sh): the GEMM default at M 129-176 (second_row_a_quarter, not yet
#  timed as the default; MS="129,144 160,176") or the M 576, 704, 960 chunk run 128 lost (MS="576 704 960"), over the 16 layers of the four families, every kernel.
set -u
export PATH=$PATH:/usr/local/cuda/bin
cd "$(dirname "$0")/.."
for dir in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$dir" ] && export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
t=/tmp/o; mkdir -p $t
g=$PWD/bundle/s2-gemm; cd $g
echo "gemm $(cat COMMIT); $(nvidia-smi --query-gpu=name,clocks.sm,power.limit --format=csv,noheader)"
fam="[(3072,2048),(2048,2048),(16384,2048),(2048,8192),(4608,3584),(3584,3584),(37888,3584),(3584,18944),(6144,4096),(4096,4096),(28672,4096),(4096,14336),(10240,8192),(8192,8192),(57344,8192),(8192,28672)]"
for ms in ${MS:-129,144 160,176}; do
  shapes=$(python3 -c "print(','.join(f'{m}x{n}x{k}' for m in ($ms,) for n,k in $fam))")
  s=$(date +%s); timeout -k 5 ${SW:-140} ./gemm-bench --ours-module gpu_gemm_steps.ptx --csv $t/sweep-${ms//,/-}.csv --shapes $shapes --reps 12 --warmup 2 > $t/sweep-${ms//,/-}.log 2>&1; echo "sweep $ms exit $? ($(( $(date +%s) - s )) s)"
done
tar czf ${OUT:-/tmp/out}/s2B.tgz -C $t .
