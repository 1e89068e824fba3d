#!/usr/bin/env bash
# Run 110: the wait for the previous P V after a quarter / half of each block's weights
# (gpu_attention_wait_quarter.ptx / _wait_half.ptx) against production, seq 8k, every head dim,
# alternating processes beside cuDNN; then attention-test on the faster variant.
set -u; START=$(date +%s); BUDGET=${BUDGET:-230}
pack() { tar czf /tmp/e-out.tgz -C "$OUT" . && rm -rf "$OUT"/* && mv /tmp/e-out.tgz "$OUT/e-out.tgz"; ls -la "$OUT"; }
trap pack EXIT
root=$(pwd); A=$root/bundle/r110
left() { local l=$(( BUDGET - $(date +%s) + START )); [ $l -lt 1 ] && l=1; [ $l -lt $1 ] && echo $l || echo $1; }
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
cd $A
ab() { # name module process
  local name=$1 mod=$2 p=$3
  GPU_ATTENTION_MODULE=$A/$mod timeout -k 5 $(left 30) python3 bench_attention.py --lib ./libattention_bench.so --anchor none --impls ours,cudnn --rounds 3 --reps 5 --warmup 2 --csv $OUT/ab-$name-$p.csv --shapes grid --only-seq 8192 > $OUT/ab-$name-$p.log 2>&1
  echo "ab $name $p rc=$?"; grep -E "^paper" $OUT/ab-$name-$p.log | sed 's/\[max.*//'
}
for p in 1 2; do
  ab production gpu_attention.ptx $p
  ab quarter gpu_attention_wait_quarter.ptx $p
  ab half gpu_attention_wait_half.ptx $p
done
best=$(python3 - "$OUT" <<'PY'
import csv, glob, math, sys
out = sys.argv[1]
def gm(name):
    v = [float(r["tflops"]) for f in glob.glob(f"{out}/ab-{name}-*.csv") for r in csv.DictReader(open(f)) if r["impl"] == "ours" and r["tflops"] not in ("", "nan")]
    return math.exp(sum(map(math.log, v)) / len(v)) if v else 0
g = {n: gm(n) for n in ("production", "quarter", "half")}
print(" ".join(f"{n}={v:.1f}" for n, v in g.items()), file=sys.stderr)
print(max(("quarter", "half"), key=lambda n: g[n]))
PY
)
echo "faster variant: $best"
mod=gpu_attention_wait_$best.ptx
t0=$(date +%s); timeout -k 5 $(left 110) ./attention-test $mod > $OUT/attention-test-$best.log 2>&1
echo "attention-test ($best) rc=$? $(( $(date +%s) - t0 ))s"; grep -E "^FAIL|passed" $OUT/attention-test-$best.log | cut -c1-200 | head -6; grep -c "^PASS" $OUT/attention-test-$best.log
