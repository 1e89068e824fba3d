#!/usr/bin/env bash
# One call: (1) f5's short-K A/B (bench-old: main's rule; bench-new: cluster-K parts of at least 4 k-blocks), then
# (2) as much of f4 as fits: the ck_push module exact on every cluster-K case, its A/B against production on 20
# decode/small shapes (one round each), racecheck/synccheck. Steps past the call's time print SKIPPED (time).
set -u
export PATH=$PATH:/usr/local/cuda/bin
for dir in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$dir" ] && export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
root=$(cd "$(dirname "$0")/.." && pwd)
O=${OUT:-/tmp/out}; mkdir -p $O; t=/tmp/f6; mkdir -p $t
s0=$(date +%s); END=${END:-565}
echo "f6: $(nvidia-smi --query-gpu=name,clocks.sm,power.limit --format=csv,noheader); prod $(sha256sum $root/bundle/f5/gpu_gemm.ptx | cut -c1-12) push $(sha256sum $root/bundle/g12/gpu_gemm_ck_push.ptx | cut -c1-12)"
step() { local name=$1 lim=$2; shift 2; local left=$(( END - ($(date +%s) - s0) )); [ $left -lt 25 ] && { echo "$name: SKIPPED (time)"; return; }; [ $lim -gt $left ] && lim=$left; local s=$(date +%s); timeout -k 5 $lim "$@" > $t/$name.log 2>&1; local rc=$?; echo "$name: exit $rc ($(( $(date +%s) - s )) s) | $(grep -E 'passed|ERROR SUMMARY|RACECHECK SUMMARY' $t/$name.log | tail -n 2 | tr '\n' ' ' | cut -c1-200)"; grep "^FAIL" $t/$name.log | head -5; }
SH=$(python3 -c "
nk=[(2048,256),(4096,256),(2048,512),(4096,512),(8192,512),(896,896),(2048,768),(4096,768),(2048,1024),(4096,1024),(8192,1024),(14336,1024),(2048,1536),(4096,1536)]
print(','.join(f'{m}x{n}x{k}' for m in (1,4,16,32,64,96,128) for n,k in nk))")
cd $root/bundle/f5
for v in old new; do
  step short-$v 200 ./bench-$v --ours-module gpu_gemm.ptx --csv $t/short-$v.csv --shapes $SH --reps 10 --warmup 2
  awk '/^== /{s=$2} /median/{t=$1" "$5} /split\(s\)/{print s, t, $0}' $t/short-$v.log | sed "s/(clusters of 1..8.*//" | grep -vE "persistent|ours-cluster|192|128|s4" > $t/splits-$v.txt
done
tar czf $O/f6-short.tgz -C $t .
cd $root/bundle/g12
step push-test-ck 120 ./gemm-test gpu_gemm_ck_push.ptx --only=cluster_k
grep -E "cluster_k" $t/push-test-ck.log | grep -E "every part|never ran" | head -5
SH2=1x2048x256,1x2048x512,1x2048x1024,1x2048x2048,1x2048x4096,1x4096x4096,1x8192x1024,1x4608x3584,8x4096x4096,16x6144x4096,32x3072x2048,64x2048x2048,64x3072x2048,64x4096x4096,96x2048x2048,96x3584x3584,128x2048x2048,160x3584x3584,192x3584x3584,192x4096x4096
step ab-old-1 60 ./gemm-bench --ours-module gpu_gemm.ptx --csv $t/ab-old-1.csv --shapes $SH2 --reps 10 --warmup 2
step ab-new-1 60 ./gemm-bench --ours-module gpu_gemm_ck_push.ptx --csv $t/ab-new-1.csv --shapes $SH2 --reps 10 --warmup 2
step push-racecheck 100 compute-sanitizer --tool racecheck --error-exitcode 9 ./gemm-test gpu_gemm_ck_push.ptx --sanitize --only=cluster_k
step push-synccheck 60 compute-sanitizer --tool synccheck --error-exitcode 9 ./gemm-test gpu_gemm_ck_push.ptx --sanitize --only=cluster_k
step ab-old-2 60 ./gemm-bench --ours-module gpu_gemm.ptx --csv $t/ab-old-2.csv --shapes $SH2 --reps 10 --warmup 2
step ab-new-2 60 ./gemm-bench --ours-module gpu_gemm_ck_push.ptx --csv $t/ab-new-2.csv --shapes $SH2 --reps 10 --warmup 2
rm -f $t/short-*.csv $t/short-*.log $t/splits-*.txt
tar czf $O/f6-push.tgz -C $t .
echo "end ($(( $(date +%s) - s0 )) s)"
