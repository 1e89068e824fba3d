#!/usr/bin/env bash
# Run 100, call A (carry bundle/r100: the production module of the commit in COMMIT, attention-test, the bench bridge,
# FA3's wheel): attention-test on every row (the new plan's and the measurement rows),
# sdpa_test, the A/B at seq 1k and 8k beside cuDNN (production, whose D 128 rows above
# short_keys are pairs; the single-CTA D 128 row; the pairs at D 64 and of 128 keys at D 128),
# the FA3 call on production, ptxas -v, compute-sanitizer on the --sanitize cases.
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
t0=$(date +%s); timeout -k 5 $(left 220) ./attention-test gpu_attention.ptx > $OUT/attention-test.log 2>&1
rc=$?; echo "attention-test rc=$rc $(( $(date +%s) - t0 ))s"; grep -E "^FAIL|passed" $OUT/attention-test.log | cut -c1-220 | head -12
# The pairs' A/B only where every case of theirs passed and the test ended (a hang would cost 40 s a process).
pairs_ok=1; { [ $rc -ne 0 ] || grep -q "^FAIL.*_c2" $OUT/attention-test.log; } && pairs_ok=0; echo "pairs_ok=$pairs_ok"
tail -3 $OUT/attention-test.log | cut -c1-200
t0=$(date +%s); GPU_ATTENTION_MODULE=$here/gpu_attention.ptx timeout -k 5 $(left 60) python3 sdpa_test.py --lib ./libattention_bench.so --seed $(date +%s) > $OUT/sdpa.log 2>&1
echo "sdpa_test rc=$? $(( $(date +%s) - t0 ))s"; grep -E "^FAIL|^sdpa-test" $OUT/sdpa.log | cut -c1-200 | tail -4
ab() { # name process seq [env...]
  local name=$1 p=$2 seq=$3; shift 3
  env "$@" GPU_ATTENTION_MODULE=$here/gpu_attention.ptx timeout -k 5 $(left 40) python3 bench_attention.py --lib ./libattention_bench.so --anchor none --impls ours,cudnn --shapes paper --only-seq $seq --rounds 3 --reps 5 --warmup 2 --csv $OUT/ab-$name-$seq-$p.csv > $OUT/ab-$name-$seq-$p.log 2>&1
  echo "ab $name $seq $p rc=$?"; grep -E "^(paper|gqa)" $OUT/ab-$name-$seq-$p.log | sed 's/\[max.*//' | tail -8
}
for p in 1 2; do
  for seq in 8192 1024; do
    ab production $p $seq X=1
    ab single $p $seq GPU_ATTENTION_KERNEL=d128_n192
    [ $pairs_ok = 1 ] && ab pairs64 $p $seq GPU_ATTENTION_KERNEL=d64_m192_c2
    [ $pairs_ok = 1 ] && ab pairs128 $p $seq GPU_ATTENTION_KERNEL=d128_n128_c2
  done
done
t0=$(date +%s)
ANCHORS=$here/anchors ATTENTION_TIMEOUT=$(left 200) OUT=$OUT/attention bash run_attention.sh --anchor fa3 --rounds 3 --reps 5 --warmup 2 > $OUT/attention-run.log 2>&1
echo "attention fa3 rc=$? $(( $(date +%s) - t0 ))s"
t0=$(date +%s); timeout -k 5 $(left 90) ptxas -arch=sm_90a -v gpu_attention.ptx -o /tmp/a.cubin > $OUT/ptxas.log 2>&1
echo "ptxas rc=$? $(( $(date +%s) - t0 ))s"; grep -E "Compiling entry|registers|spill|C7513" $OUT/ptxas.log | sed 's/ptxas info    ://' | paste - - - | cut -c1-200 | head -20
for tool in memcheck racecheck synccheck; do
  t0=$(date +%s); timeout -k 5 $(left 120) compute-sanitizer --tool $tool ./attention-test gpu_attention.ptx --sanitize > $OUT/sanitize-$tool.log 2>&1
  echo "$tool rc=$? $(( $(date +%s) - t0 ))s"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|passed" $OUT/sanitize-$tool.log | tail -3
done
