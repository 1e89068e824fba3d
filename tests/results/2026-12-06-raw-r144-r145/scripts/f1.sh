#!/usr/bin/env bash
# Fixed-cost probe (main ed69502, production module sha 076fe0a8026d): K swept at fixed (M, N), every production kernel and
# cuBLAS; then ncu of every distinct launch at 1x2048x2048 and 96x3584x3584.
set -u
for dir in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$dir" ] && export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
export PATH=/usr/local/cuda/bin:$PATH
root=$(cd "$(dirname "$0")/.." && pwd)
t=${OUT:-/tmp/out}; mkdir -p $t
cd $root/bundle/g9
echo "g9 $(cat COMMIT); $(nvidia-smi --query-gpu=name,clocks.sm,power.limit --format=csv,noheader); module sha $(sha256sum gpu_gemm.ptx | cut -c1-12)"
S1=1x2048x64,1x2048x256,1x2048x512,1x2048x1024,1x2048x2048,1x2048x4096,1x2048x8192,1x8192x64,1x8192x1024,1x8192x8192
S2=96x3584x64,96x3584x448,96x3584x896,96x3584x1792,96x3584x3584,96x3584x7168,96x2048x64,96x2048x2048
s=$(date +%s); timeout -k 5 150 ./gemm-bench --ours-module gpu_gemm.ptx --csv $t/k1.csv --shapes $S1,$S2 --reps 10 --warmup 2 > $t/k1.log 2>&1; echo "k1 exit $? ($(( $(date +%s) - s )) s)"
GS="--section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis --metrics gpu__time_duration.sum,sm__cycles_active.avg,sm__cycles_active.max,sm__cycles_elapsed.max,smsp__warps_launched.sum"
for sh in 1x2048x2048 96x3584x3584; do
  s=$(date +%s)
  timeout -k 5 120 ncu $GS --filter-mode per-launch-config --launch-count 1 -o $t/p-$sh ./gemm-bench --ours-module gpu_gemm.ptx --shapes $sh --reps 1 --warmup 0 > $t/ncu-$sh-run.log 2>&1
  echo "ncu $sh exit $? ($(( $(date +%s) - s )) s)"
  ncu --import $t/p-$sh.ncu-rep --page raw --csv > $t/ncu-$sh-raw.csv 2>&1
  ncu --import $t/p-$sh.ncu-rep --print-details all > $t/ncu-$sh.txt 2>&1
done
cd $t && tar czf f1.tgz *.log *.csv *.txt && rm -f *.log *.csv *.txt && ls -la
