#!/usr/bin/env bash
# Carry bundle/g19, bundle/g17, bundle/n5.sh. The default of ae2f713 (g19: 64-row tiles first,
# cluster-K unsplit below 16 k-blocks) against the rule before (g17: 755db5c) on 54 shapes
# neither rule was fitted to, alternating processes new/old/new/old; then the production module
# of g19 exactly (gemm-test --only=r64, memcheck), --host-time, --check, the full gemm-test.
set -u
export PATH=$PATH:/usr/local/cuda/bin
for dir in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$dir" ] && export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
root=$(cd "$(dirname "$0")/.." && pwd); t=/tmp/n5; mkdir -p $t
N=$root/bundle/g19; O=$root/bundle/g17
s0=$(date +%s); END=${END:-420}
echo "new $(cat $N/COMMIT) prod $(sha256sum $N/gpu_gemm.ptx | cut -c1-12); old $(cat $O/COMMIT) prod $(sha256sum $O/gpu_gemm.ptx | cut -c1-12); $(nvidia-smi --query-gpu=name,clocks.sm,power.limit --format=csv,noheader)"
step() { local name=$1 lim=$2; shift 2; local left=$(( END - ($(date +%s) - s0) )); [ $left -lt 20 ] && { echo "$name: SKIPPED (time)"; return; }; [ $lim -gt $left ] && lim=$left; local s=$(date +%s); timeout -k 5 $lim "$@" > $t/$name.log 2>&1; local rc=$?; echo "$name: exit $rc ($(( $(date +%s) - s )) s) | $(grep -E 'passed|ERROR SUMMARY|RACECHECK SUMMARY' $t/$name.log | tail -n 1 | cut -c1-200)"; grep "^FAIL" $t/$name.log | head -5; tar czf ${OUT:-/tmp/out}/n5.tgz -C $t . 2>/dev/null; }
SH=$(python3 -c "
d=[(3072,3072),(9216,3072),(3584,3584),(4608,3584),(6144,4096),(1536,8192)]
s=[(3072,640),(5120,384),(2560,1280),(1536,1152),(6144,832),(3584,512)]
m=[(2048,640),(4096,896),(3072,512),(2560,768),(1536,960),(5120,576)]
r=[f'{a}x{n}x{k}' for a in (24,40,48) for n,k in d]+[f'{a}x{n}x{k}' for a in (80,112,120) for n,k in s]+[f'{a}x{n}x{k}' for a in (152,168,184) for n,k in m]
print(','.join(r))")
cd $N
step new-1 75 ./gemm-bench --ours-module $N/gpu_gemm.ptx --csv $t/new-1.csv --shapes $SH --reps 10 --warmup 2
step old-1 75 $O/gemm-bench --ours-module $O/gpu_gemm.ptx --csv $t/old-1.csv --shapes $SH --reps 10 --warmup 2
step r64-test 100 ./gemm-test $N/gpu_gemm.ptx --only=r64
# ncu: every kernel's duration (one pass each) at 160 x 2048 x 512 (the class furthest from
# cuBLAS), 64 x 4096 x 2048 and 1 x 2048 x 2048 (decode, furthest): ours against cuBLAS's kernels.
if command -v ncu >/dev/null && [ $(( END - ($(date +%s) - s0) )) -gt 60 ]; then
  timeout -k 5 70 ncu --metrics gpu__time_duration.sum,launch__grid_size,launch__block_size,launch__cluster_dim_x,launch__registers_per_thread,sm__cycles_elapsed.avg --csv --launch-count 500 ./gemm-bench --ours-module $N/gpu_gemm.ptx --shapes 160x2048x512,64x4096x2048,1x2048x2048 --reps 1 --warmup 0 > $t/ncu.csv 2> $t/ncu.err
  echo "ncu exit $? lines $(wc -l < $t/ncu.csv)"; tail -3 $t/ncu.err
  tar czf ${OUT:-/tmp/out}/n5.tgz -C $t .
fi
step new-2 75 ./gemm-bench --ours-module $N/gpu_gemm.ptx --csv $t/new-2.csv --shapes $SH --reps 10 --warmup 2
step old-2 75 $O/gemm-bench --ours-module $O/gpu_gemm.ptx --csv $t/old-2.csv --shapes $SH --reps 10 --warmup 2
step host-time 60 ./gemm-bench --host-time --ours-module $N/gpu_gemm.ptx --csv $t/host-time.csv
grep -iE "run|graph|cublas" $t/host-time.log | head -20
step r64-memcheck 80 compute-sanitizer --tool memcheck --error-exitcode 9 ./gemm-test $N/gpu_gemm.ptx --only=r64 --sanitize
step check 120 ./gemm-bench --check --ours-module $N/gpu_gemm.ptx
tail -n 1 $t/check.log
step full-test 200 ./gemm-test $N/gpu_gemm.ptx
tar czf ${OUT:-/tmp/out}/n5.tgz -C $t .
echo "end ($(( $(date +%s) - s0 )) s)"
echo "end2 ($(( $(date +%s) - s0 )) s)"
