#!/usr/bin/env bash
# Run 146 (bundle g11 = main ed69502's gemm-bench and production module, sha 076fe0a8026d): short K (256-1536) at M 1-128,
# every production kernel in the same rounds, twice (two processes), for the default's short-K choice.
set -u
for dir in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$dir" ] && export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
root=$(cd "$(dirname "$0")/.." && pwd)
O=${OUT:-/tmp/out}; mkdir -p $O
cd $root/bundle/g11
echo "g11 $(cat COMMIT); $(nvidia-smi --query-gpu=name,clocks.sm,power.limit --format=csv,noheader); sha $(sha256sum gpu_gemm.ptx | cut -c1-12)"
SH=$(python3 -c "
nk=[(2048,256),(4096,256),(2048,512),(4096,512),(8192,512),(896,896),(2048,768),(4096,768),(2048,1024),(4096,1024),(8192,1024),(14336,1024),(2048,1536),(4096,1536)]
print(','.join(f'{m}x{n}x{k}' for m in (1,4,16,32,64,96,128) for n,k in nk))")
for r in 1; do
  s=$(date +%s); timeout -k 5 140 ./gemm-bench --ours-module gpu_gemm.ptx --csv $O/short-$r.csv --shapes $SH --reps 10 --warmup 2 > /tmp/short-$r.log 2>&1; echo "short-$r exit $? ($(( $(date +%s) - s )) s)"
  awk '/^== /{s=$2} /split\(s\)/{print s, $0}' /tmp/short-$r.log | sed "s/(clusters of 1..8.*//" > $O/splits-$r.txt
done
