#!/usr/bin/env bash
# Run n24, call 1 (replaces n23): (a) branch ksplit at 2cf2279 (bundle/c24): exactness of the four
# k-step rows (unsplit: partials added in shared memory; split: both halves to the workspace),
# quick then full; timing of the k-step rows against their twins and our production kernels at
# mid M (the M 128-192 gap) and decode (split-K) shapes, two processes; ncu of -d vs -dk;
# (b) bundle/c21's A/B of the M 33..=48 clause out of sample (old = refit2 host, new = main).
set -u
export PATH=$PATH:/usr/local/cuda/bin
for dir in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$dir" ] && export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
r=$(pwd); t=/tmp/n24; mkdir -p $t; s0=$(date +%s); END=${END:-575}
c2=$r/bundle/c24; c1=$r/bundle/c21; S=$c2/gpu_gemm_steps.ptx; M=$c1/gpu_gemm.ptx
echo "n24; steps $(sha256sum $S | cut -c1-12) ($(cat $c2/COMMIT)) module $(sha256sum $M | cut -c1-12); $(nvidia-smi --query-gpu=name,clocks.sm,power.limit --format=csv,noheader)" | tee $t/head.txt
step() { local name=$1 lim=$2; shift 2; local left=$(( END - ($(date +%s) - s0) )); [ $left -lt 15 ] && { echo "$name: SKIPPED (time)" | tee -a $t/head.txt; return; }; [ $lim -gt $left ] && lim=$left; local s=$(date +%s); timeout -k 5 $lim "$@" > $t/$name.log 2>&1; local rc=$?; echo "$name: exit $rc ($(( $(date +%s) - s )) s) | $(grep -E 'passed|ERROR SUMMARY' $t/$name.log | tail -n 1 | cut -c1-200)" | tee -a $t/head.txt; grep -E "^FAIL|CHECK-FAIL|panicked|error" $t/$name.log | head -5; tar czf ${OUT:-/tmp/out}/n24.tgz -C $t . 2>/dev/null; }
FS=160x3584x3584,128x3584x3584,96x3584x3584,144x3840x3840,192x3584x3584,160x5632x2048,128x2048x2048,64x4096x4096,32x4096x4096,64x2048x2048,32x14336x4096,8x4096x14336,48x4096x11008,24x2048x5632
KS=skinny-32-r64,skinny-32-r64-k,skinny-64-r64,skinny-64-r64-k,skinny-80-r64-d,skinny-80-r64-dk,skinny-96-r64-d,skinny-96-r64-dk,persistent-64,persistent-128,skinny-128
step test 45 $c2/gemm-test $S --steps --quick --only=_steps
step t-1 50 $c2/gemm-bench --ours-module $S --kernels $KS --csv $t/t-1.csv --shapes $FS --reps 10 --warmup 2
step t-2 50 $c2/gemm-bench --ours-module $S --kernels $KS --csv $t/t-2.csv --shapes $FS --reps 10 --warmup 2
AS=$(cat $c1/shapes.txt)
step mo-1 50 $c1/old/gemm-bench --ours-module $M --csv $t/mo-1.csv --shapes $AS --reps 10 --warmup 2
step mn-1 50 $c1/new/gemm-bench --ours-module $M --csv $t/mn-1.csv --shapes $AS --reps 10 --warmup 2
step mn-2 50 $c1/new/gemm-bench --ours-module $M --csv $t/mn-2.csv --shapes $AS --reps 10 --warmup 2
step mo-2 50 $c1/old/gemm-bench --ours-module $M --csv $t/mo-2.csv --shapes $AS --reps 10 --warmup 2
step test-full 100 $c2/gemm-test $S --steps --only=_steps
for k in gemm_bf16_skinny80_r64_deep_steps gemm_bf16_skinny80_r64_deep; do
  step rep-$k 45 ncu --set full --import-source no -o $t/$k --filter-mode global --kernel-name "regex:^$k\$" --launch-skip 20 --launch-count 1 $c2/gemm-bench --ours-module $S --kernels skinny-80-r64-d,skinny-80-r64-dk --shapes 160x3584x3584 --reps 20 --warmup 2
  step src-$k 30 bash -c "ncu -i $t/$k.ncu-rep --page details --csv > $t/det-$k.csv; ncu -i $t/$k.ncu-rep --page source --print-source sass --csv > $t/src-$k.csv"
  rm -f $t/$k.ncu-rep
done
echo "end ($(( $(date +%s) - s0 )) s)" | tee -a $t/head.txt
tar czf ${OUT:-/tmp/out}/n24.tgz -C $t .
