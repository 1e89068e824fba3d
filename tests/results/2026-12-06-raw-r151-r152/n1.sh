#!/usr/bin/env bash
# Next session's first call (carry bundle/g16, bundle/f8, bundle/n1.sh; ~4 min): (1) gemm-test on main's production
# module with the new every-part-count cases (parts of at least 4 k-blocks) -- cluster-K kernels first, then the full
# run; (2) the short-K clause's out-of-sample check (f8: bench-old = the rule before, bench-new = main's clause);
# (3) bench-min8 against bench-new on run 146's shapes (is the unsplit cluster-K form faster up to 15 k-blocks?).
set -u
export PATH=$PATH:/usr/local/cuda/bin
for dir in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$dir" ] && export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
root=$(cd "$(dirname "$0")/.." && pwd); t=/tmp/n1; mkdir -p $t
s0=$(date +%s); END=${END:-560}
step() { local name=$1 lim=$2; shift 2; local left=$(( END - ($(date +%s) - s0) )); [ $left -lt 20 ] && { echo "$name: SKIPPED (time)"; return; }; [ $lim -gt $left ] && lim=$left; local s=$(date +%s); timeout -k 5 $lim "$@" > $t/$name.log 2>&1; local rc=$?; echo "$name: exit $rc ($(( $(date +%s) - s )) s) | $(grep -E 'passed|ERROR SUMMARY' $t/$name.log | tail -n 1 | cut -c1-200)"; grep "^FAIL" $t/$name.log | head -5; }
cd $root/bundle/g16
echo "g16 $(cat COMMIT); $(nvidia-smi --query-gpu=name,clocks.sm,power.limit --format=csv,noheader); prod $(sha256sum gpu_gemm.ptx 2>/dev/null | cut -c1-12)"
step ck-test 150 ./gemm-test $root/bundle/f8/gpu_gemm.ptx --only=cluster_k
grep -E "every part count|never ran" $t/ck-test.log
cd $root/bundle/f8
bash $root/bundle/f8.sh
# (3) the cluster-K form unsplit up to 15 k-blocks (bench-min8: CLUSTER_K_MIN_BLOCKS 8, so the short-K clause takes
# it below 16 k-blocks) against main's clause (bench-new), run 146's 98 shapes, alternating, two rounds.
SH=$(python3 -c "
nk=[(2048,256),(4096,256),(2048,512),(4096,512),(8192,512),(896,896),(2048,768),(4096,768),(2048,1024),(4096,1024),(8192,1024),(14336,1024),(2048,1536),(4096,1536)]
print(','.join(f'{m}x{n}x{k}' for m in (1,4,16,32,64,96,128) for n,k in nk))")
for r in 1 2; do for v in new min8; do
  step short-$v-$r 60 ./bench-$v --ours-module gpu_gemm.ptx --csv $t/short-$v-$r.csv --shapes $SH --reps 10 --warmup 2
done; done
cd $root/bundle/g16
step gemm-test 300 ./gemm-test $root/bundle/f8/gpu_gemm.ptx
tar czf ${OUT:-/tmp/out}/n1.tgz -C $t .
echo "end ($(( $(date +%s) - s0 )) s)"
