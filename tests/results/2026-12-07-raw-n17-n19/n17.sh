#!/usr/bin/env bash
# Carry bundle/. (1) g29 (desc-hoist + cluster-K k-range from uniform registers, prod 6f42c8cb7b06) against
# g27 (main, f40348112b94), alternating processes on 15 shapes; (2) g29's steps module (every kernel) on DS
# (M 16-192 by six layers) and SH (n7's 54 out-of-sample shapes): the refit's sweep; (3) gemm-test
# of g29's production module, then the step kernels' (--only=r64).
set -u
export PATH=$PATH:/usr/local/cuda/bin
for dir in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$dir" ] && export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
root=$(cd "$(dirname "$0")/.." && pwd); t=/tmp/n17; mkdir -p $t
N=$root/bundle/g29; O=$root/bundle/g27
s0=$(date +%s); END=${END:-555}
echo "$(cat $N/COMMIT); new $(sha256sum $N/gpu_gemm.ptx | cut -c1-12) old $(sha256sum $O/gpu_gemm.ptx | cut -c1-12); $(nvidia-smi --query-gpu=name,clocks.sm,power.limit --format=csv,noheader)" | tee $t/head.txt
step() { local name=$1 lim=$2; shift 2; local left=$(( END - ($(date +%s) - s0) )); [ $left -lt 20 ] && { echo "$name: SKIPPED (time)"; return; }; [ $lim -gt $left ] && lim=$left; local s=$(date +%s); timeout -k 5 $lim "$@" > $t/$name.log 2>&1; local rc=$?; echo "$name: exit $rc ($(( $(date +%s) - s )) s) | $(grep -E 'passed|ERROR SUMMARY' $t/$name.log | tail -n 1 | cut -c1-200)" | tee -a $t/head.txt; grep -E "^FAIL|CHECK-FAIL|panicked|error" $t/$name.log | head -5; tar czf ${OUT:-/tmp/out}/n17.tgz -C $t . 2>/dev/null; }
PS=8x4096x14336,96x3584x3584,160x3584x3584,128x4096x4096,192x4608x3584,64x2048x2048,16x4096x4096,1x4096x4096,32x14336x4096,1024x1024x1024,384x11008x4096,768x3072x2048,40x3000x1496,80x3584x3584,48x4096x4096
DS=$(python3 -c "
l=[(3584,3584),(4608,3584),(2048,2048),(4096,4096),(11008,4096),(4096,11008)]
print(','.join(f'{a}x{n}x{k}' for a in (16,32,48,64,80,96,128,160,192) for n,k in l))")
SH=$(python3 -c "
d=[(2560,2560),(7680,2560),(5120,5120),(1280,5120),(11008,2048),(2048,11008)]
s=[(4096,512),(2048,768),(7168,384),(3072,1024),(1024,1536),(4608,640)]
m=[(2304,768),(3584,640),(1792,896),(4608,512),(2048,1024),(6144,704)]
r=[f'{a}x{n}x{k}' for a in (20,36,56) for n,k in d]+[f'{a}x{n}x{k}' for a in (72,96,104) for n,k in s]+[f'{a}x{n}x{k}' for a in (144,176,192) for n,k in m]
print(','.join(r))")
cd $N
step full-test 150 ./gemm-test $N/gpu_gemm.ptx
step pn-1 40 ./gemm-bench --ours-module $N/gpu_gemm.ptx --csv $t/pn-1.csv --shapes $PS --reps 10 --warmup 2
step po-1 40 ./gemm-bench --ours-module $O/gpu_gemm.ptx --csv $t/po-1.csv --shapes $PS --reps 10 --warmup 2
step ds-1 85 ./gemm-bench --ours-module $N/gpu_gemm_steps.ptx --csv $t/ds-1.csv --shapes $DS --reps 10 --warmup 2
step sh-1 85 ./gemm-bench --ours-module $N/gpu_gemm_steps.ptx --csv $t/sh-1.csv --shapes $SH --reps 10 --warmup 2
step po-2 40 ./gemm-bench --ours-module $O/gpu_gemm.ptx --csv $t/po-2.csv --shapes $PS --reps 10 --warmup 2
step pn-2 40 ./gemm-bench --ours-module $N/gpu_gemm.ptx --csv $t/pn-2.csv --shapes $PS --reps 10 --warmup 2
step ck-test 90 ./gemm-test $N/gpu_gemm_steps.ptx --steps --only=cluster_k
step r64-test 120 ./gemm-test $N/gpu_gemm_steps.ptx --steps --only=r64
echo "end ($(( $(date +%s) - s0 )) s)" | tee -a $t/head.txt
tar czf ${OUT:-/tmp/out}/n17.tgz -C $t .
