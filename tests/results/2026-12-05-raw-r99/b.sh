#!/usr/bin/env bash
# Run 99 (carry bundle/r99): the production module of COMMIT (the plan's pairs at D 128, an f16
# pair row) under attention-test and sdpa_test; then whether causal D 128 at short sequences
# lost speed since run 97: run 97's production (old/: modules of 723b6c0, host of 3a93dcf)
# against this one, alternating processes, ours beside cuDNN.
set -u; START=$(date +%s); BUDGET=${BUDGET:-300}
pack() { tar czf /tmp/b-out.tgz -C "$OUT" . && rm -rf "$OUT"/* && mv /tmp/b-out.tgz "$OUT/b-out.tgz"; ls -la "$OUT"; }
trap pack EXIT
here=$(cd "$(dirname "$0")" && pwd); cd "$here"
left() { local l=$(( BUDGET - $(date +%s) + START )); [ $l -lt 1 ] && l=1; [ $l -lt $1 ] && echo $l || echo $1; }
for dir in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$dir" ] && export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
ab() { # name process dir
  local name=$1 p=$2 dir=$3
  (cd $dir && GPU_ATTENTION_MODULE=$here/$dir/gpu_attention.ptx timeout -k 5 $(left 40) python3 bench_attention.py --lib ./libattention_bench.so --anchor none --impls ours,cudnn --shapes paper --only-d 128 --only-causal 1 --rounds 3 --reps 5 --warmup 2 --csv $OUT/ab-$name-$p.csv > $OUT/ab-$name-$p.log 2>&1)
  echo "ab $name $p rc=$?"; grep -E "^(paper)" $OUT/ab-$name-$p.log | sed 's/\[max.*//' | head -6
}
for p in 1 2; do ab new $p . ; ab old $p old; done
t0=$(date +%s); timeout -k 5 $(left 200) ./attention-test gpu_attention.ptx > $OUT/attention-test.log 2>&1
echo "attention-test rc=$? $(( $(date +%s) - t0 ))s"; grep -E "^FAIL|passed" $OUT/attention-test.log | cut -c1-220 | head -12
t0=$(date +%s); GPU_ATTENTION_MODULE=$here/gpu_attention.ptx timeout -k 5 $(left 60) python3 sdpa_test.py --lib ./libattention_bench.so --seed $(date +%s) > $OUT/sdpa.log 2>&1
echo "sdpa_test rc=$? $(( $(date +%s) - t0 ))s"; grep -E "^FAIL|^sdpa-test" $OUT/sdpa.log | cut -c1-200 | tail -4
