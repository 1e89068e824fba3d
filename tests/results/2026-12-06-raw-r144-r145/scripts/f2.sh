#!/usr/bin/env bash
# Run 145 (bundle g10: main ed69502 + the cluster-K kernels' second cluster barrier split, arrival before D's stores):
# A/B old (run 139's module, gpu_gemm_old.ptx) vs new (gpu_gemm.ptx) in alternating processes; gemm-test on the new module;
# racecheck and synccheck of the cluster-K kernels; ncu of the cluster-K kernels' stalls at 1x2048x2048.
set -u
export PATH=$PATH:/usr/local/cuda/bin
for dir in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$dir" ] && export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
root=$(cd "$(dirname "$0")/.." && pwd)
t=/tmp/o; mkdir -p $t ${OUT:-/tmp/out}
cd $root/bundle/g10
echo "g10 $(cat COMMIT)+split; $(nvidia-smi --query-gpu=name,clocks.sm,power.limit --format=csv,noheader); new sha $(sha256sum gpu_gemm.ptx | cut -c1-12) old sha $(sha256sum gpu_gemm_old.ptx | cut -c1-12)"
s0=$(date +%s)
step() { local name=$1 lim=$2; shift 2; local s=$(date +%s); timeout -k 5 $lim "$@" > $t/$name.log 2>&1; local rc=$?; echo "$name: exit $rc ($(( $(date +%s) - s )) s) | $(grep -E 'passed|ERROR SUMMARY|RACECHECK SUMMARY' $t/$name.log | tail -n 2 | tr '\n' ' ' | cut -c1-200)"; grep "^FAIL" $t/$name.log | head -5; (cd $t && tar rf ${OUT:-/tmp/out}/f2.tar $name.log $(ls $name*.csv 2>/dev/null)); }
SH=1x2048x256,1x2048x512,1x2048x1024,1x2048x2048,1x2048x4096,1x4096x4096,1x8192x1024,1x4608x3584,8x4096x4096,16x6144x4096,32x3072x2048,64x2048x2048,64x3072x2048,64x4096x4096,96x2048x2048,96x3584x3584,128x2048x2048,160x3584x3584,192x3584x3584,192x4096x4096
for r in 1 2; do
  step ab-old-$r 60 ./gemm-bench --ours-module gpu_gemm_old.ptx --csv $t/ab-old-$r.csv --shapes $SH --reps 10 --warmup 2
  step ab-new-$r 60 ./gemm-bench --ours-module gpu_gemm.ptx --csv $t/ab-new-$r.csv --shapes $SH --reps 10 --warmup 2
done
step gemm-test 200 ./gemm-test gpu_gemm.ptx
grep -E "cluster_k" $t/gemm-test.log | grep -E "every part|never ran"
left=60
[ $left -gt 30 ] && { timeout -k 5 $left ncu --section WarpStateStats --section LaunchStats --metrics gpu__time_duration.sum -k regex:cluster_k --filter-mode per-launch-config --launch-count 1 -o $t/p-new ./gemm-bench --ours-module gpu_gemm.ptx --shapes 1x2048x2048 --reps 1 --warmup 0 > $t/ncu-run.log 2>&1; echo "ncu exit $?"; ncu --import $t/p-new.ncu-rep --print-details all > $t/ncu-new.txt 2>&1; rm -f $t/p-new.ncu-rep; (cd $t && tar rf ${OUT:-/tmp/out}/f2.tar ncu-new.txt ncu-run.log); }
left=$(( 470 - ($(date +%s) - s0) )); [ $left -gt 30 ] && step ck-racecheck $(( left > 100 ? 100 : left )) compute-sanitizer --tool racecheck --error-exitcode 9 ./gemm-test gpu_gemm.ptx --sanitize --only=cluster_k
left=$(( 470 - ($(date +%s) - s0) )); [ $left -gt 30 ] && step ck-synccheck $left compute-sanitizer --tool synccheck --error-exitcode 9 ./gemm-test gpu_gemm.ptx --sanitize --only=cluster_k
echo end
