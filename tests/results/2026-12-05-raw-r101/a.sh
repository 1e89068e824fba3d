#!/usr/bin/env bash
# Run 101 (carry bundle/r101): the folded causal order. attention-test (one reference per case now)
# on the production module, sdpa_test, the causal A/B in alternating processes beside cuDNN
# (production = the plan's rule, longest_first = the former order everywhere, folded = folded
# everywhere), the FA3 call on production, gemm-test (the launch_config refactor), sanitizers.
set -u; START=$(date +%s); BUDGET=${BUDGET:-570}
pack() { tar czf /tmp/a-out.tgz -C "$OUT" . && rm -rf "$OUT"/* && mv /tmp/a-out.tgz "$OUT/a-out.tgz"; ls -la "$OUT"; }
trap pack EXIT
here=$(cd "$(dirname "$0")" && pwd); cd "$here"
left() { local l=$(( BUDGET - $(date +%s) + START )); [ $l -lt 1 ] && l=1; [ $l -lt $1 ] && echo $l || echo $1; }
for dir in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$dir" ] && export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
t0=$(date +%s); timeout -k 5 $(left 150) ./attention-test gpu_attention.ptx > $OUT/attention-test.log 2>&1
echo "attention-test rc=$? $(( $(date +%s) - t0 ))s"; grep -E "^FAIL|passed" $OUT/attention-test.log | cut -c1-220 | head -12
t0=$(date +%s); GPU_ATTENTION_MODULE=$here/gpu_attention.ptx timeout -k 5 $(left 40) python3 sdpa_test.py --lib ./libattention_bench.so --seed $(date +%s) > $OUT/sdpa.log 2>&1
echo "sdpa_test rc=$? $(( $(date +%s) - t0 ))s"; grep -E "^FAIL|^sdpa-test" $OUT/sdpa.log | cut -c1-200 | tail -3
ab() { # name module process seq
  local name=$1 mod=$2 p=$3 seq=$4
  GPU_ATTENTION_MODULE=$here/$mod timeout -k 5 $(left 40) python3 bench_attention.py --lib ./libattention_bench.so --anchor none --impls ours,cudnn --shapes paper --only-seq $seq --only-causal 1 --rounds 3 --reps 5 --warmup 2 --csv $OUT/ab-$name-$seq-$p.csv > $OUT/ab-$name-$seq-$p.log 2>&1
  echo "ab $name $seq $p rc=$?"; grep -E "^(paper|gqa)" $OUT/ab-$name-$seq-$p.log | sed 's/\[max.*//' | tail -6
}
for p in 1 2; do
  for seq in 2048 4096 1024 8192; do
    ab production gpu_attention.ptx $p $seq
    ab longest gpu_attention_longest_first.ptx $p $seq
    [ $seq = 8192 ] && ab folded gpu_attention_folded.ptx $p $seq
  done
done
t0=$(date +%s)
ANCHORS=$here/anchors ATTENTION_TIMEOUT=$(left 120) OUT=$OUT/attention bash run_attention.sh --anchor fa3 --rounds 3 --reps 5 --warmup 2 > $OUT/attention-run.log 2>&1
echo "attention fa3 rc=$? $(( $(date +%s) - t0 ))s"
t0=$(date +%s); (cd gemm && timeout -k 5 $(left 120) ./gemm-test gpu_gemm.ptx > $OUT/gemm-test.log 2>&1)
echo "gemm-test rc=$? $(( $(date +%s) - t0 ))s"; grep -E "^FAIL|passed" $OUT/gemm-test.log | cut -c1-200 | tail -5
for tool in memcheck racecheck; do
  t0=$(date +%s); timeout -k 5 $(left 60) compute-sanitizer --tool $tool ./attention-test gpu_attention.ptx --sanitize > $OUT/sanitize-$tool.log 2>&1
  echo "$tool rc=$? $(( $(date +%s) - t0 ))s"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|passed" $OUT/sanitize-$tool.log | tail -3
done
