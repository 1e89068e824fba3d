#!/usr/bin/env bash
# Call K (carry bundle/s4-gemm, bundle/s4-K.sh): the transposing kernels 128 and 192 wide with split-K in clusters
# (skinny-128-ck, skinny-192-ck, step rows; partial tile in the ring): gemm-test --steps --quick, then M 96-192 by the
# small layers, every kernel.
set -u
export PATH=$PATH:/usr/local/cuda/bin
for dir in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$dir" ] && export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
root=$(cd "$(dirname "$0")/.." && pwd)
t=/tmp/o; mkdir -p $t
cd $root/bundle/s4-gemm
echo "gemm $(cat COMMIT); $(nvidia-smi --query-gpu=name,clocks.sm,power.limit --format=csv,noheader)"
s=$(date +%s); timeout -k 5 130 ./gemm-test gpu_gemm_steps.ptx --steps --quick > $t/steps-test.log 2>&1; echo "gemm-test --steps --quick exit $? ($(( $(date +%s) - s )) s)"; tail -n 1 $t/steps-test.log; grep "^FAIL" $t/steps-test.log | head -5
grep -cE "^PASS.*skinny-1[29]2?-ck|skinny1[29]2?_cluster_k|Skinny1[29]2?ClusterK" $t/steps-test.log
fam="[(2048,2048),(3072,2048),(3584,3584),(4096,4096),(4608,3584),(6144,4096),(2048,8192)]"
shapes=$(python3 -c "print(','.join(f'{m}x{n}x{k}' for m in (96,128,144,160,176,192) for n,k in $fam))")
s=$(date +%s); timeout -k 5 200 ./gemm-bench --ours-module gpu_gemm_steps.ptx --csv $t/ck.csv --shapes $shapes --reps 12 --warmup 2 > $t/ck.log 2>&1; echo "ck sweep exit $? ($(( $(date +%s) - s )) s)"
tar czf ${OUT:-/tmp/out}/s4K.tgz -C $t .
