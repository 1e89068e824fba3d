#!/usr/bin/env bash
# Carry bundle/. The consumers' descriptors in uniform registers (the warpgroup index broadcast
# from lane 0; k-steps advanced in the low word): (1) the new production module (g26) against
# the old (g24, fa1bd79e85ed), alternating processes, one binary (g26's gemm-bench); (2) the
# steps module timed on M 16-192 by six layers; (3) gemm-test of the new production module.
set -u
export PATH=$PATH:/usr/local/cuda/bin
for dir in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$dir" ] && export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
root=$(cd "$(dirname "$0")/.." && pwd); t=/tmp/n14; mkdir -p $t
N=$root/bundle/g26; O=$root/bundle/g24
s0=$(date +%s); END=${END:-370}
echo "$(cat $N/COMMIT); new prod $(sha256sum $N/gpu_gemm.ptx | cut -c1-12) old $(sha256sum $O/gpu_gemm.ptx | cut -c1-12); $(nvidia-smi --query-gpu=name,clocks.sm,power.limit --format=csv,noheader)"
step() { local name=$1 lim=$2; shift 2; local left=$(( END - ($(date +%s) - s0) )); [ $left -lt 20 ] && { echo "$name: SKIPPED (time)"; return; }; [ $lim -gt $left ] && lim=$left; local s=$(date +%s); timeout -k 5 $lim "$@" > $t/$name.log 2>&1; local rc=$?; echo "$name: exit $rc ($(( $(date +%s) - s )) s) | $(grep -E 'passed|ERROR SUMMARY' $t/$name.log | tail -n 1 | cut -c1-200)"; grep -E "^FAIL|CHECK-FAIL|panicked|error" $t/$name.log | head -5; tar czf ${OUT:-/tmp/out}/n14.tgz -C $t . 2>/dev/null; }
PS=8192x8192x8192,4096x4096x4096,2048x2048x2048,1024x1024x1024,512x4096x4096,256x11008x4096,1x4096x4096,16x4096x4096,64x2048x2048,128x4096x4096,192x4608x3584,384x11008x4096,768x3072x2048,2048x14336x4096,96x3584x3584,160x3584x3584,32x14336x4096,8x4096x14336,3x1000x2056,40x3000x1496
DS=$(python3 -c "
l=[(3584,3584),(4608,3584),(2048,2048),(4096,4096),(11008,4096),(4096,11008)]
print(','.join(f'{a}x{n}x{k}' for a in (16,32,48,64,80,96,128,160,192) for n,k in l))")
cd $N
step pn-1 40 ./gemm-bench --ours-module $N/gpu_gemm.ptx --csv $t/pn-1.csv --shapes $PS --reps 10 --warmup 2
step po-1 40 ./gemm-bench --ours-module $O/gpu_gemm.ptx --csv $t/po-1.csv --shapes $PS --reps 10 --warmup 2
step po-2 40 ./gemm-bench --ours-module $O/gpu_gemm.ptx --csv $t/po-2.csv --shapes $PS --reps 10 --warmup 2
step pn-2 40 ./gemm-bench --ours-module $N/gpu_gemm.ptx --csv $t/pn-2.csv --shapes $PS --reps 10 --warmup 2
#step steps-1 75 ./gemm-bench --ours-module $N/gpu_gemm_steps.ptx --csv $t/s-1.csv --shapes $DS --reps 10 --warmup 2
step full-test 200 ./gemm-test $N/gpu_gemm.ptx
echo "end ($(( $(date +%s) - s0 )) s)"
