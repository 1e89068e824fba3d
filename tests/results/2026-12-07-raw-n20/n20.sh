#!/usr/bin/env bash
# Carry bundle/. (1) Branch refit2 out of sample: g33's gemm-bench (main 0d80799) against g32's
# (refit2 4ca29ed), the same module (g29), six processes alternating, the 72 shapes (M 18-46, K 5120-18944)
# where the two rules differ. (2) ncu --set full at 160 x 3584 x 3584 on the current loop: skinny-80-r64-d,
# its pair (-dp), persistent-64, persistent-128, and cuBLAS's nvjet.
set -u
export PATH=$PATH:/usr/local/cuda/bin
for dir in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$dir" ] && export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
root=$(cd "$(dirname "$0")/.." && pwd); t=/tmp/n20; mkdir -p $t
M=$root/bundle/g29/gpu_gemm.ptx; NEW=$root/bundle/g32; OLD=$root/bundle/g33; S=$root/bundle/g29/gpu_gemm_steps.ptx
s0=$(date +%s); END=${END:-560}
echo "$(cat $NEW/COMMIT) vs $(cat $OLD/COMMIT); module $(sha256sum $M | cut -c1-12); $(nvidia-smi --query-gpu=name,clocks.sm,power.limit --format=csv,noheader)" | tee $t/head.txt
step() { local name=$1 lim=$2; shift 2; local left=$(( END - ($(date +%s) - s0) )); [ $left -lt 20 ] && { echo "$name: SKIPPED (time)"; return; }; [ $lim -gt $left ] && lim=$left; local s=$(date +%s); timeout -k 5 $lim "$@" > $t/$name.log 2>&1; local rc=$?; echo "$name: exit $rc ($(( $(date +%s) - s )) s) | $(grep -E 'passed|ERROR SUMMARY' $t/$name.log | tail -n 1 | cut -c1-200)" | tee -a $t/head.txt; grep -E "^FAIL|CHECK-FAIL|panicked|error" $t/$name.log | head -5; tar czf ${OUT:-/tmp/out}/n20.tgz -C $t . 2>/dev/null; }
FS=$(cat $root/bundle/n20-shapes.txt)
cd $NEW
step ro-1 70 $OLD/gemm-bench --ours-module $M --csv $t/ro-1.csv --shapes $FS --reps 10 --warmup 2
step rn-1 70 $NEW/gemm-bench --ours-module $M --csv $t/rn-1.csv --shapes $FS --reps 10 --warmup 2
step rn-2 70 $NEW/gemm-bench --ours-module $M --csv $t/rn-2.csv --shapes $FS --reps 10 --warmup 2
step ro-2 70 $OLD/gemm-bench --ours-module $M --csv $t/ro-2.csv --shapes $FS --reps 10 --warmup 2
step ro-3 70 $OLD/gemm-bench --ours-module $M --csv $t/ro-3.csv --shapes $FS --reps 10 --warmup 2
step rn-3 70 $NEW/gemm-bench --ours-module $M --csv $t/rn-3.csv --shapes $FS --reps 10 --warmup 2
s=160x3584x3584
for k in gemm_bf16_skinny80_r64_deep gemm_bf16_skinny80_r64_deep_pair gemm_bf16_persistent_n64 gemm_bf16_persistent_n128; do
  step ncu-$k 60 ncu --set full --csv --page details --filter-mode global --kernel-name "regex:^$k\$" --launch-skip 31 --launch-count 1 \
    $OLD/gemm-bench --ours-module $S --shapes $s --reps 3 --warmup 1
done
cd $root
step ncu-cublas 60 ncu --set full --csv --page details --kernel-name "regex:nvjet" --launch-skip 1 --launch-count 1 python3 $root/bundle/census.py $s
echo "end ($(( $(date +%s) - s0 )) s)" | tee -a $t/head.txt
tar czf ${OUT:-/tmp/out}/n20.tgz -C $t .
