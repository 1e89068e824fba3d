#!/usr/bin/env bash
# Carry bundle/. The refit's last step out of sample: g29's gemm-bench (the rule
# before) against g31's (the refit of n17 and n18), the same module, alternating processes, 60 shapes none of
# n17's or n18's (M 24-192 by six layers); then gemm-test with g31's host.
set -u
export PATH=$PATH:/usr/local/cuda/bin
for dir in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$dir" ] && export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
root=$(cd "$(dirname "$0")/.." && pwd); t=/tmp/n19; mkdir -p $t
M=$root/bundle/g29/gpu_gemm.ptx; NEW=$root/bundle/g31; OLD=$root/bundle/g29
s0=$(date +%s); END=${END:-540}
echo "$(cat $NEW/COMMIT); module $(sha256sum $M | cut -c1-12); $(nvidia-smi --query-gpu=name,clocks.sm,power.limit --format=csv,noheader)" | tee $t/head.txt
step() { local name=$1 lim=$2; shift 2; local left=$(( END - ($(date +%s) - s0) )); [ $left -lt 20 ] && { echo "$name: SKIPPED (time)"; return; }; [ $lim -gt $left ] && lim=$left; local s=$(date +%s); timeout -k 5 $lim "$@" > $t/$name.log 2>&1; local rc=$?; echo "$name: exit $rc ($(( $(date +%s) - s )) s) | $(grep -E 'passed|ERROR SUMMARY' $t/$name.log | tail -n 1 | cut -c1-200)" | tee -a $t/head.txt; grep -E "^FAIL|CHECK-FAIL|panicked|error" $t/$name.log | head -5; tar czf ${OUT:-/tmp/out}/n19.tgz -C $t . 2>/dev/null; }
FS=$(python3 -c "
ms=[24,36,52,64,76,100,128,144,160,192]
l=[(3840,3840),(5632,2048),(2048,5632),(7168,1536),(1024,4096),(4096,2816)]
print(','.join(f'{m}x{n}x{k}' for m in ms for n,k in l))")
cd $NEW
step fo-1 60 $OLD/gemm-bench --ours-module $M --csv $t/fo-1.csv --shapes $FS --reps 10 --warmup 2
step fn-1 60 $NEW/gemm-bench --ours-module $M --csv $t/fn-1.csv --shapes $FS --reps 10 --warmup 2
step fn-2 60 $NEW/gemm-bench --ours-module $M --csv $t/fn-2.csv --shapes $FS --reps 10 --warmup 2
step fo-2 60 $OLD/gemm-bench --ours-module $M --csv $t/fo-2.csv --shapes $FS --reps 10 --warmup 2
step full-test 260 $NEW/gemm-test $M
echo "end ($(( $(date +%s) - s0 )) s)" | tee -a $t/head.txt
tar czf ${OUT:-/tmp/out}/n19.tgz -C $t .
