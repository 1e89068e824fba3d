#!/usr/bin/env bash
# Carry bundle/. The deep rings in CTA pairs (skinny-*-r64-dp: activations multicast to two
# vertically adjacent 64-row weight tiles): exact (gemm-test --steps --only=_deep_pair), racecheck
# of a quick subset, timed beside every kernel and cuBLAS on M 16-192 by six layers (two
# processes), and ncu --set full of the 80-wide pair at 160 x 3584 x 3584.
set -u
export PATH=$PATH:/usr/local/cuda/bin
for dir in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$dir" ] && export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
root=$(cd "$(dirname "$0")/.." && pwd); t=/tmp/n13; mkdir -p $t
N=$root/bundle/g25
s0=$(date +%s); END=${END:-540}
echo "$(cat $N/COMMIT); $(nvidia-smi --query-gpu=name,clocks.sm,power.limit --format=csv,noheader)"
step() { local name=$1 lim=$2; shift 2; local left=$(( END - ($(date +%s) - s0) )); [ $left -lt 20 ] && { echo "$name: SKIPPED (time)"; return; }; [ $lim -gt $left ] && lim=$left; local s=$(date +%s); timeout -k 5 $lim "$@" > $t/$name.log 2>&1; local rc=$?; echo "$name: exit $rc ($(( $(date +%s) - s )) s) | $(grep -E 'passed|ERROR SUMMARY' $t/$name.log | tail -n 1 | cut -c1-200)"; grep -E "^FAIL|CHECK-FAIL|panicked|error" $t/$name.log | head -5; tar czf ${OUT:-/tmp/out}/n13.tgz -C $t . 2>/dev/null; }
DS=$(python3 -c "
l=[(3584,3584),(4608,3584),(2048,2048),(4096,4096),(11008,4096),(4096,11008)]
print(','.join(f'{a}x{n}x{k}' for a in (16,32,48,64,80,96,128,160,192) for n,k in l))")
cd $N
step pair-test 130 ./gemm-test $N/gpu_gemm_steps.ptx --steps --only=_deep_pair
step bench-1 75 ./gemm-bench --ours-module $N/gpu_gemm_steps.ptx --csv $t/b-1.csv --shapes $DS --reps 10 --warmup 2
step race 60 compute-sanitizer --tool racecheck ./gemm-test $N/gpu_gemm_steps.ptx --sanitize --steps --only=80_r64_deep_pair
step bench-2 75 ./gemm-bench --ours-module $N/gpu_gemm_steps.ptx --csv $t/b-2.csv --shapes $DS --reps 10 --warmup 2
step ncu-pair 60 ncu --set full --csv --page details --filter-mode global --kernel-name "regex:^gemm_bf16_skinny80_r64_deep_pair\$" --launch-skip 31 --launch-count 1 ./gemm-bench --ours-module $N/gpu_gemm_steps.ptx --shapes 160x3584x3584 --reps 3 --warmup 1
echo "end ($(( $(date +%s) - s0 )) s)"
