#!/usr/bin/env bash
# Carry bundle/g17, bundle/n3.sh: the 64-row transposing kernels (split_columns; steps module)
# checked exactly and timed against every production kernel (gemm-bench: their columns split by
# the global split-K as the host's rule says; bench-r64u: the same host built with the 64-row rows
# unsplit, split_k false in its plan only); the production module's cluster-K kernels on
# gemm-test's part-count cases under CLUSTER_K_SPLIT_FROM.
set -u
export PATH=$PATH:/usr/local/cuda/bin
for dir in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$dir" ] && export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
root=$(cd "$(dirname "$0")/.." && pwd); t=/tmp/n3; mkdir -p $t; cd $root/bundle/g17
s0=$(date +%s); END=${END:-570}
echo "g17 $(cat COMMIT); $(nvidia-smi --query-gpu=name,clocks.sm,power.limit --format=csv,noheader); prod $(sha256sum gpu_gemm.ptx | cut -c1-12) steps $(sha256sum gpu_gemm_steps.ptx | cut -c1-12)"
step() { local name=$1 lim=$2; shift 2; local left=$(( END - ($(date +%s) - s0) )); [ $left -lt 20 ] && { echo "$name: SKIPPED (time)"; return; }; [ $lim -gt $left ] && lim=$left; local s=$(date +%s); timeout -k 5 $lim "$@" > $t/$name.log 2>&1; local rc=$?; echo "$name: exit $rc ($(( $(date +%s) - s )) s) | $(grep -E 'passed|ERROR SUMMARY|RACECHECK SUMMARY' $t/$name.log | tail -n 1 | cut -c1-200)"; grep "^FAIL" $t/$name.log | head -5; tar czf ${OUT:-/tmp/out}/n3.tgz -C $t . 2>/dev/null; }
( timeout 300 ptxas -arch=sm_90a -v gpu_gemm_steps.ptx -o /tmp/steps.cubin > $t/ptxas.log 2>&1; echo "ptxas exit $?" >> $t/ptxas.log ) &
SH=$(python3 -c "
nk=[(2048,256),(4096,256),(2048,512),(4096,512),(8192,512),(896,896),(2048,768),(4096,768),(2048,1024),(4096,1024),(8192,1024),(14336,1024),(2048,1536),(4096,1536)]
dk=[(2048,2048),(4096,2048),(2048,4096),(4096,4096),(1024,4096),(8192,2048)]
s=[f'{m}x{n}x{k}' for m in (1,4,16,32,64,96,128) for n,k in nk]+[f'{m}x{n}x{k}' for m in (1,16,64) for n,k in dk]
print(','.join(s))")
step bench-1 130 ./gemm-bench --ours-module gpu_gemm_steps.ptx --csv $t/bench-1.csv --shapes $SH --reps 10 --warmup 2
step r64u-1 130 ./bench-r64u --ours-module gpu_gemm_steps.ptx --csv $t/r64u-1.csv --shapes $SH --reps 10 --warmup 2
step r64-test 200 ./gemm-test gpu_gemm_steps.ptx --steps --only=r64
step bench-2 130 ./gemm-bench --ours-module gpu_gemm_steps.ptx --csv $t/bench-2.csv --shapes $SH --reps 10 --warmup 2
step r64u-2 130 ./bench-r64u --ours-module gpu_gemm_steps.ptx --csv $t/r64u-2.csv --shapes $SH --reps 10 --warmup 2
step ck-test 150 ./gemm-test gpu_gemm.ptx --only=cluster_k
grep -E "every part count|never ran" $t/ck-test.log
for tool in memcheck racecheck; do
  step r64-$tool 90 compute-sanitizer --tool $tool --error-exitcode 9 ./gemm-test gpu_gemm_steps.ptx --steps --only=r64 --sanitize
done
step check 120 ./gemm-bench --check --ours-module gpu_gemm_steps.ptx
tail -n 1 $t/check.log; grep -c "FAIL" $t/check.log
grep -A2 "Function properties for gemm_bf16_skinny[0-9]*_r64" $t/ptxas.log | grep -E "Function|stack|registers"; tail -n 1 $t/ptxas.log; grep -c C75 $t/ptxas.log
tar czf ${OUT:-/tmp/out}/n3.tgz -C $t .
echo "end ($(( $(date +%s) - s0 )) s)"
