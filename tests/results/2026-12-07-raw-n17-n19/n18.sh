#!/usr/bin/env bash
# Carry bundle/. (1) gemm-test of g29's production module (6f42c8cb7b06) with g30's host (the
# default refitted to n17); (2) the refit out of sample: g29's gemm-bench (the rule
# before) against g30's (the refit), the same module, alternating processes, 60 shapes none of
# n17's (M 40-184 by six layers).
set -u
export PATH=$PATH:/usr/local/cuda/bin
for dir in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$dir" ] && export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
root=$(cd "$(dirname "$0")/.." && pwd); t=/tmp/n18; mkdir -p $t
M=$root/bundle/g29/gpu_gemm.ptx; NEW=$root/bundle/g30; OLD=$root/bundle/g29
s0=$(date +%s); END=${END:-540}
echo "$(cat $NEW/COMMIT); module $(sha256sum $M | cut -c1-12); $(nvidia-smi --query-gpu=name,clocks.sm,power.limit --format=csv,noheader)" | tee $t/head.txt
step() { local name=$1 lim=$2; shift 2; local left=$(( END - ($(date +%s) - s0) )); [ $left -lt 20 ] && { echo "$name: SKIPPED (time)"; return; }; [ $lim -gt $left ] && lim=$left; local s=$(date +%s); timeout -k 5 $lim "$@" > $t/$name.log 2>&1; local rc=$?; echo "$name: exit $rc ($(( $(date +%s) - s )) s) | $(grep -E 'passed|ERROR SUMMARY' $t/$name.log | tail -n 1 | cut -c1-200)" | tee -a $t/head.txt; grep -E "^FAIL|CHECK-FAIL|panicked|error" $t/$name.log | head -5; tar czf ${OUT:-/tmp/out}/n18.tgz -C $t . 2>/dev/null; }
VS=$(python3 -c "
ms=[40,44,60,88,112,120,136,152,168,184]
l=[(3072,3072),(6144,2048),(2560,4096),(8192,1024),(1536,6144),(4864,2432)]
print(','.join(f'{m}x{n}x{k}' for m in ms for n,k in l))")
cd $NEW
step vo-1 60 $OLD/gemm-bench --ours-module $M --csv $t/vo-1.csv --shapes $VS --reps 10 --warmup 2
step vn-1 60 $NEW/gemm-bench --ours-module $M --csv $t/vn-1.csv --shapes $VS --reps 10 --warmup 2
step full-test 260 $NEW/gemm-test $M
step vn-2 60 $NEW/gemm-bench --ours-module $M --csv $t/vn-2.csv --shapes $VS --reps 10 --warmup 2
step vo-2 60 $OLD/gemm-bench --ours-module $M --csv $t/vo-2.csv --shapes $VS --reps 10 --warmup 2
echo "end ($(( $(date +%s) - s0 )) s)" | tee -a $t/head.txt
tar czf ${OUT:-/tmp/out}/n18.tgz -C $t .
