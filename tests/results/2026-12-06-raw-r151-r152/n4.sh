#!/usr/bin/env bash
# The short form of n3.sh (run when little device time is left; carry bundle/g17, bundle/n4.sh):
# the 64-row kernels timed against every production kernel on 60 shapes (one process), then
# gemm-test on them, then the production cluster-K kernels' part-count cases.
set -u
export PATH=$PATH:/usr/local/cuda/bin
for dir in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$dir" ] && export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
root=$(cd "$(dirname "$0")/.." && pwd); t=/tmp/n4; mkdir -p $t ${OUT:-/tmp/out}; cd $root/bundle/g17
s0=$(date +%s); END=${END:-140}
echo "g17 $(cat COMMIT); $(nvidia-smi --query-gpu=name,clocks.sm,power.limit --format=csv,noheader)"
step() { local name=$1 lim=$2; shift 2; local left=$(( END - ($(date +%s) - s0) )); [ $left -lt 15 ] && { echo "$name: SKIPPED (time)"; return; }; [ $lim -gt $left ] && lim=$left; local s=$(date +%s); timeout -k 5 $lim "$@" > $t/$name.log 2>&1; local rc=$?; echo "$name: exit $rc ($(( $(date +%s) - s )) s) | $(grep -E 'passed' $t/$name.log | tail -n 1 | cut -c1-200)"; grep "^FAIL" $t/$name.log | head -5; tar czf ${OUT:-/tmp/out}/n4.tgz -C $t . 2>/dev/null; }
SH=$(python3 -c "
nk=[(2048,256),(4096,256),(2048,512),(4096,512),(8192,512),(896,896),(2048,768),(4096,768),(2048,1024),(4096,1024),(8192,1024),(14336,1024),(2048,1536),(4096,1536)]
dk=[(2048,2048),(4096,2048),(2048,4096),(4096,4096),(1024,4096),(8192,2048)]
s=[f'{m}x{n}x{k}' for m in (1,16,64) for n,k in nk]+[f'{m}x{n}x{k}' for m in (1,16,64) for n,k in dk]
print(','.join(s))")
step bench-1 70 ./gemm-bench --ours-module gpu_gemm_steps.ptx --csv $t/bench-1.csv --shapes $SH --reps 10 --warmup 2
step r64-test 60 ./gemm-test gpu_gemm_steps.ptx --steps --only=r64
step ck-test 100 ./gemm-test gpu_gemm.ptx --only=cluster_k
grep -E "every part count|never ran" $t/ck-test.log
echo "end ($(( $(date +%s) - s0 )) s)"
