#!/usr/bin/env bash
# Short K (256-1536) at M 1-128, 98 shapes: gemm-bench built on main (bench-old, CLUSTER_K_MIN_BLOCKS 2) against the
# same built with CLUSTER_K_MIN_BLOCKS 4 (bench-new: cluster-K parts of at least 4 k-blocks), both on the production
# module (sha 076fe0a8026d), alternating processes: old, new. Every production kernel timed in the same rounds.
set -u
for dir in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$dir" ] && export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
root=$(cd "$(dirname "$0")/.." && pwd)
O=${OUT:-/tmp/out}; mkdir -p $O; t=/tmp/f5; mkdir -p $t
cd $root/bundle/f5
echo "f5: $(nvidia-smi --query-gpu=name,clocks.sm,power.limit --format=csv,noheader); sha $(sha256sum gpu_gemm.ptx | cut -c1-12)"
SH=$(python3 -c "
nk=[(2048,256),(4096,256),(2048,512),(4096,512),(8192,512),(896,896),(2048,768),(4096,768),(2048,1024),(4096,1024),(8192,1024),(14336,1024),(2048,1536),(4096,1536)]
print(','.join(f'{m}x{n}x{k}' for m in (1,4,16,32,64,96,128) for n,k in nk))")
s0=$(date +%s)
for v in old new; do
  s=$(date +%s); timeout -k 5 ${LIM:-200} ./bench-$v --ours-module gpu_gemm.ptx --csv $t/short-$v.csv --shapes $SH --reps 10 --warmup 2 > $t/short-$v.log 2>&1; echo "short-$v exit $? ($(( $(date +%s) - s )) s)"
  awk '/^== /{s=$2} /median/{t=$1" "$5} /split\(s\)/{print s, t, $0}' $t/short-$v.log | sed "s/(clusters of 1..8.*//" | grep -vE "persistent|ours-cluster|192|128|s4" > $t/splits-$v.txt
done
tar czf $O/f5.tgz -C $t .
echo "end ($(( $(date +%s) - s0 )) s)"
