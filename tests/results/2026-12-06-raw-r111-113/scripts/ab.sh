#!/usr/bin/env bash
# One-process A/B: production attention module vs variant modules, beside cuDNN. BUDGET seconds for the bench.
set -u
cd "$(dirname "$0")/.."
here=bundle/att
out=${OUT:-/tmp/out}
mkdir -p "$out/ab"
m=""
for pair in nt=named_turns ws=wide_store seed=seed_sums late=late_seed ticks=kv_ticks tls=turns_late_seed tlst=turns_late_seed_ticks; do
  f=$here/gpu_attention_${pair#*=}.ptx
  [ -f "$f" ] && m="$m${m:+,}${pair%%=*}=$PWD/$f"
done
echo "modules: $m"
ATTENTION_TIMEOUT=${BUDGET:-400} OUT=$out/ab bash $here/run_attention.sh --anchor none --impls ours,cudnn --modules "$m" \
  --only-d ${DS:-128,64,256} --only-seq ${SEQS:-8192,4096,2048,1024,512} --rounds ${ROUNDS:-5} --reps ${REPS:-10} 2>&1 | tail -n 60
python3 bundle/summ.py "$out/ab/attention.csv" | tee "$out/ab/summary.txt"
