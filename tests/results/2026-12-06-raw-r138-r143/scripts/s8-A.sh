#!/usr/bin/env bash
# Call A (carry bundle/s8, bundle/s8-A.sh): branch ck-pair-prod: skinny-192-ck, skinny-192-ckp and skinny-128-ckp in
# production (the transposing cluster-K kernels, the last two in CTA pairs sharing the activations' box by multicast).
# The small layers at M 96-192 every kernel; gemm-test full on the production module; racecheck of the pair kernels;
# the steps module's pair rows (quick); memcheck of the production module.
set -u
export PATH=$PATH:/usr/local/cuda/bin
for dir in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$dir" ] && export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
root=$(cd "$(dirname "$0")/.." && pwd)
t=/tmp/o; mkdir -p $t
cd $root/bundle/s8
echo "s8 $(cat COMMIT); $(nvidia-smi --query-gpu=name,clocks.sm,power.limit --format=csv,noheader); module sha $(sha256sum gpu_gemm.ptx | cut -c1-12)"
s0=$(date +%s)
step() { local name=$1 lim=$2; shift 2; local s=$(date +%s); timeout -k 5 $lim "$@" > $t/$name.log 2>&1; local rc=$?; echo "$name: exit $rc ($(( $(date +%s) - s )) s) | $(grep -E 'passed|ERROR SUMMARY|RACECHECK SUMMARY' $t/$name.log | tail -n 2 | tr '\n' ' ' | cut -c1-200)"; grep "^FAIL" $t/$name.log | head -5; }
fam="[(2048,2048),(3072,2048),(3584,3584),(4096,4096),(4608,3584),(2048,8192)]"
shapes=$(python3 -c "print(','.join(f'{m}x{n}x{k}' for m in (96,128,160,192) for n,k in $fam))")
step sweep 200 ./gemm-bench --ours-module gpu_gemm_steps.ptx --csv $t/sweep.csv --shapes $shapes --reps 12 --warmup 2
python3 summ.py $t/sweep.csv
grep -E "ckp|cluster_k_pair" $t/sweep.log | grep -i "split\|grid" | head -4
step gemm-test 170 ./gemm-test gpu_gemm.ptx
grep -E "cluster_k" $t/gemm-test.log | grep -E "every part|never ran"
left=$(( 430 - ($(date +%s) - s0) )); [ $left -gt 30 ] && step pair-racecheck $(( left < 110 ? left : 110 )) compute-sanitizer --tool racecheck --error-exitcode 9 ./gemm-test gpu_gemm.ptx --sanitize --only=cluster_k_pair
left=$(( 450 - ($(date +%s) - s0) )); [ $left -gt 30 ] && step steps-pairs 40 ./gemm-test gpu_gemm_steps.ptx --steps --quick --only=pair
left=$(( 460 - ($(date +%s) - s0) )); [ $left -gt 40 ] && step gemm-memcheck $left compute-sanitizer --tool memcheck --error-exitcode 9 ./gemm-test gpu_gemm.ptx --sanitize
tar czf ${OUT:-/tmp/out}/s8A.tgz -C $t .
