#!/usr/bin/env bash
# Validation of the short-K clause on shapes it was not fitted to (run 146's 98 shapes were): bench-old (main's rule
# before) and bench-new (the clause, cluster-K parts of at least 4 k-blocks) alternating, two processes each, on the
# production module (sha 076fe0a8026d); every production kernel timed in the same rounds.
set -u
for dir in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$dir" ] && export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
root=$(cd "$(dirname "$0")/.." && pwd)
O=${OUT:-/tmp/out}; mkdir -p $O; t=/tmp/f8; mkdir -p $t
cd $root/bundle/f8
echo "f8: $(nvidia-smi --query-gpu=name,clocks.sm,power.limit --format=csv,noheader); sha $(sha256sum gpu_gemm.ptx | cut -c1-12)"
SH=$(python3 -c "
nk=[(1536,320),(3072,384),(5120,640),(6144,960),(3072,1280),(1536,1152),(2560,704),(4608,576)]
print(','.join(f'{m}x{n}x{k}' for m in (1,8,24,48,80,112) for n,k in nk))")
s0=$(date +%s)
for r in 1 2; do for v in old new; do
  s=$(date +%s); timeout -k 5 60 ./bench-$v --ours-module gpu_gemm.ptx --csv $t/val-$v-$r.csv --shapes $SH --reps 10 --warmup 2 > $t/val-$v-$r.log 2>&1; echo "val-$v-$r exit $? ($(( $(date +%s) - s )) s)"
done; done
tar czf $O/f8.tgz -C $t .
echo "end ($(( $(date +%s) - s0 )) s)"
