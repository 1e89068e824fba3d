#!/usr/bin/env bash
# Run 108: the module's CTA-pair rows that were never timed, against the plan's rows, without a
# mask (pairs take no causal problem): the 192-row tiles in pairs at D 64 (d64_m192_c2, every seq)
# and 128 keys in pairs at D 128 (d128_n128_c2: the short rows' cells at 512 and 1k, and above).
# Alternating processes beside cuDNN; the bridge and module of bundle/r106 (production).
set -u; START=$(date +%s); BUDGET=${BUDGET:-280}
pack() { tar czf /tmp/c-out.tgz -C "$OUT" . && rm -rf "$OUT"/* && mv /tmp/c-out.tgz "$OUT/c-out.tgz"; ls -la "$OUT"; }
trap pack EXIT
root=$(pwd); A=$root/bundle/r106
left() { local l=$(( BUDGET - $(date +%s) + START )); [ $l -lt 1 ] && l=1; [ $l -lt $1 ] && echo $l || echo $1; }
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
cd $A
ab() { # name kernels process args...
  local name=$1 k=$2 p=$3; shift 3
  GPU_ATTENTION_KERNEL=$k GPU_ATTENTION_MODULE=$A/gpu_attention.ptx timeout -k 5 $(left 40) python3 bench_attention.py --lib ./libattention_bench.so --anchor none --impls ours,cudnn --rounds 3 --reps 5 --warmup 2 --csv $OUT/ab-$name-$p.csv "$@" > $OUT/ab-$name-$p.log 2>&1
  echo "ab $name $p rc=$?"; grep -E "^paper" $OUT/ab-$name-$p.log | sed 's/\[max.*//'; grep -E "^gpu-attention" $OUT/ab-$name-$p.log | sort | uniq -c
}
for p in 1 2; do
  ab d64_production none $p --shapes paper --only-d 64 --only-causal 0
  ab d64_m192_c2 d64_m192_c2 $p --shapes paper --only-d 64 --only-causal 0
  ab d128_production none $p --shapes paper --only-d 128 --only-causal 0
  ab d128_n128_c2 d128_n128_c2 $p --shapes paper --only-d 128 --only-causal 0
done
