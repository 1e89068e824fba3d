#!/usr/bin/env bash
# Run 109: the plan's short pairs (bf16, no mask, 513..1024 keys: d64_m192_c2, d128_n128_c2)
# against the former plan (bundle/r106's bridge), at 768 and 1024 keys, alternating processes.
set -u; START=$(date +%s); BUDGET=${BUDGET:-200}
pack() { tar czf /tmp/d-out.tgz -C "$OUT" . && rm -rf "$OUT"/* && mv /tmp/d-out.tgz "$OUT/d-out.tgz"; ls -la "$OUT"; }
trap pack EXIT
root=$(pwd); A=$root/bundle/r106; N=$root/bundle/r109x
left() { local l=$(( BUDGET - $(date +%s) + START )); [ $l -lt 1 ] && l=1; [ $l -lt $1 ] && echo $l || echo $1; }
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
cd $A
ab() { # name lib process args...
  local name=$1 lib=$2 p=$3; shift 3
  timeout -k 5 $(left 40) python3 bench_attention.py --lib $lib --anchor none --impls ours,cudnn --rounds 3 --reps 5 --warmup 2 --csv $OUT/ab-$name-$p.csv "$@" > $OUT/ab-$name-$p.log 2>&1
  echo "ab $name $p rc=$?"; grep -E "^paper" $OUT/ab-$name-$p.log | sed 's/\[max.*//'; grep -E "^gpu-attention" $OUT/ab-$name-$p.log | sort | uniq -c
}
for p in 1 2; do for seq in 768 1024; do
  ab former-$seq $A/libattention_bench.so $p --shapes grid --only-seq $seq --only-causal 0
  ab pairs-$seq $N/libattention_bench_new.so $p --shapes grid --only-seq $seq --only-causal 0
done; done
