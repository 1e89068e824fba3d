#!/usr/bin/env bash
# Call G (carry bundle/s3-gemm, bundle/s2-att, bundle/s3-G.sh): the new default (ABI 5 short A boxes, the p64 long-K clause,
# skinny-192 on wide layers at M 144-176) at M 72,96,112 / 144,160,176 by 16 layers, every kernel; then attention's GQA rows
# (plan: CTA pairs of n192 without a mask) against n192 single CTAs, 9 rounds.
set -u
export PATH=$PATH:/usr/local/cuda/bin
for dir in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$dir" ] && export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
root=$(cd "$(dirname "$0")/.." && pwd)
t=/tmp/o; mkdir -p $t
g=$root/bundle/s3-gemm; cd $g
echo "gemm $(cat COMMIT); $(nvidia-smi --query-gpu=name,clocks.sm,power.limit --format=csv,noheader)"
fam="[(3072,2048),(2048,2048),(16384,2048),(2048,8192),(4608,3584),(3584,3584),(37888,3584),(3584,18944),(6144,4096),(4096,4096),(28672,4096),(4096,14336),(10240,8192),(8192,8192),(57344,8192),(8192,28672)]"
for ms in "72,96,112" "144,160,176"; do
  shapes=$(python3 -c "print(','.join(f'{m}x{n}x{k}' for m in ($ms,) for n,k in $fam))")
  s=$(date +%s); timeout -k 5 150 ./gemm-bench --ours-module gpu_gemm_steps.ptx --csv $t/sweep-${ms//,/-}.csv --shapes $shapes --reps 12 --warmup 2 > $t/sweep-${ms//,/-}.log 2>&1; echo "sweep $ms exit $? ($(( $(date +%s) - s )) s)"
done
a=$root/bundle/s2-att
cp $root/crates/gpu-attention-host/module/gpu_attention.ptx $a/gpu_attention.ptx
ATTENTION_TIMEOUT=150 OUT=$t/gqa bash $a/run_attention.sh --anchor fa3 --only-kind gqa --rounds 9 --modules n192=@d128_n192 2>&1 | grep -E "^gqa|CHECK" | head
tar czf ${OUT:-/tmp/out}/s3G.tgz -C $t .
