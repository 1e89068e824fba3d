#!/usr/bin/env bash
# Run 102 (carry bundle/r102): the folded order as a permutation of the schedule's places (no new
# Assignment state) and its rule (8 batch heads > grid, count >= 4 grid). attention-test,
# the A/B production against longest_first (causal 2k/4k/8k, and without a mask at 8k: the cost
# of the folded code where it does not run), the FA3 call, gemm-test --quick and --programmatic,
# sanitizers.
set -u; START=$(date +%s); BUDGET=${BUDGET:-420}
pack() { tar czf /tmp/a-out.tgz -C "$OUT" . && rm -rf "$OUT"/* && mv /tmp/a-out.tgz "$OUT/a-out.tgz"; ls -la "$OUT"; }
trap pack EXIT
here=$(cd "$(dirname "$0")" && pwd); cd "$here"
left() { local l=$(( BUDGET - $(date +%s) + START )); [ $l -lt 1 ] && l=1; [ $l -lt $1 ] && echo $l || echo $1; }
for dir in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$dir" ] && export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
t0=$(date +%s); timeout -k 5 $(left 110) ./attention-test gpu_attention.ptx > $OUT/attention-test.log 2>&1
echo "attention-test rc=$? $(( $(date +%s) - t0 ))s"; grep -E "^FAIL|passed" $OUT/attention-test.log | cut -c1-220 | head -12
ab() { # name module process seq causal
  local name=$1 mod=$2 p=$3 seq=$4 c=$5
  GPU_ATTENTION_MODULE=$here/$mod timeout -k 5 $(left 30) python3 bench_attention.py --lib ./libattention_bench.so --anchor none --impls ours,cudnn --shapes paper --only-seq $seq --only-causal $c --rounds 3 --reps 5 --warmup 2 --csv $OUT/ab-$name-$seq-$c-$p.csv > $OUT/ab-$name-$seq-$c-$p.log 2>&1
  echo "ab $name $seq causal=$c $p rc=$?"; grep -E "^(paper|gqa)" $OUT/ab-$name-$seq-$c-$p.log | sed 's/\[max.*//' | tail -6
}
for p in 1 2; do
  for sc in "8192 1" "8192 0" "4096 1" "2048 1"; do
    set -- $sc
    ab production gpu_attention.ptx $p $1 $2
    ab longest gpu_attention_longest_first.ptx $p $1 $2
  done
done
t0=$(date +%s)
ANCHORS=$here/anchors ATTENTION_TIMEOUT=$(left 60) OUT=$OUT/attention bash run_attention.sh --anchor fa3 --rounds 3 --reps 5 --warmup 2 > $OUT/attention-run.log 2>&1
echo "attention fa3 rc=$? $(( $(date +%s) - t0 ))s"
for tool in memcheck racecheck; do
  t0=$(date +%s); timeout -k 5 $(left 30) compute-sanitizer --tool $tool ./attention-test gpu_attention.ptx --sanitize > $OUT/sanitize-$tool.log 2>&1
  echo "$tool rc=$? $(( $(date +%s) - t0 ))s"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|passed" $OUT/sanitize-$tool.log | tail -3
done
for flag in --programmatic --quick; do
  t0=$(date +%s); (cd gemm && timeout -k 5 $(left 45) ./gemm-test gpu_gemm.ptx $flag > $OUT/gemm-test$flag.log 2>&1)
  echo "gemm-test $flag rc=$? $(( $(date +%s) - t0 ))s"; grep -E "^FAIL|passed" $OUT/gemm-test$flag.log | cut -c1-200 | tail -4
done
