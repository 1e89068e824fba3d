#!/usr/bin/env bash
# store_read module: exact on the quick cases, A/B against production on 10 mid/large shapes (alternating processes).
set -u
export PATH=$PATH:/usr/local/cuda/bin
for dir in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$dir" ] && export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
root=$(cd "$(dirname "$0")/.." && pwd); t=/tmp/f7; mkdir -p $t
cd $root/bundle/g12
s0=$(date +%s); END=${END:-250}
step() { local name=$1 lim=$2; shift 2; local left=$(( END - ($(date +%s) - s0) )); [ $left -lt 20 ] && { echo "$name: SKIPPED (time)"; return; }; [ $lim -gt $left ] && lim=$left; local s=$(date +%s); timeout -k 5 $lim "$@" > $t/$name.log 2>&1; local rc=$?; echo "$name: exit $rc ($(( $(date +%s) - s )) s) | $(grep -E 'passed|ERROR SUMMARY' $t/$name.log | tail -n 1 | cut -c1-200)"; grep "^FAIL" $t/$name.log | head -5; }
step sr-test 90 ./gemm-test gpu_gemm_store_read.ptx --quick
SR=256x4096x4096,384x11008x4096,512x4096x4096,768x3072x2048,1024x1024x1024,1024x4096x4096,2048x2048x2048,2048x4096x14336,4096x4096x4096,8192x8192x8192
for r in 1 2; do
  step ab-old-$r 60 ./gemm-bench --ours-module gpu_gemm.ptx --csv $t/ab-old-$r.csv --shapes $SR --reps 10 --warmup 2
  step ab-new-$r 60 ./gemm-bench --ours-module gpu_gemm_store_read.ptx --csv $t/ab-new-$r.csv --shapes $SR --reps 10 --warmup 2
done
tar czf ${OUT:-/tmp/out}/f7.tgz -C $t .
echo "end ($(( $(date +%s) - s0 )) s)"
