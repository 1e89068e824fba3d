#!/usr/bin/env bash
# Run 103 (carry bundle/r103): the final rule's module (the 192-row units not folded):
# attention-test, racecheck and synccheck on --sanitize, and the 128-key row against production
# for causal D 128 at 4k and 8k (FA3's causal tile; production runs 192 keys there).
set -u; START=$(date +%s); BUDGET=${BUDGET:-150}
pack() { tar czf /tmp/a-out.tgz -C "$OUT" . && rm -rf "$OUT"/* && mv /tmp/a-out.tgz "$OUT/a-out.tgz"; ls -la "$OUT"; }
trap pack EXIT
here=$(cd "$(dirname "$0")" && pwd); cd "$here"
left() { local l=$(( BUDGET - $(date +%s) + START )); [ $l -lt 1 ] && l=1; [ $l -lt $1 ] && echo $l || echo $1; }
for dir in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$dir" ] && export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
t0=$(date +%s); timeout -k 5 $(left 95) ./attention-test gpu_attention.ptx > $OUT/attention-test.log 2>&1
echo "attention-test rc=$? $(( $(date +%s) - t0 ))s"; grep -E "^FAIL|passed" $OUT/attention-test.log | cut -c1-220 | head -8
for tool in racecheck synccheck; do
  t0=$(date +%s); timeout -k 5 $(left 25) compute-sanitizer --tool $tool ./attention-test gpu_attention.ptx --sanitize > $OUT/sanitize-$tool.log 2>&1
  echo "$tool rc=$? $(( $(date +%s) - t0 ))s"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|passed" $OUT/sanitize-$tool.log | tail -3
done
for p in 1 2; do for v in production n128; do
  env $([ $v = n128 ] && echo GPU_ATTENTION_KERNEL=d128_n128) GPU_ATTENTION_MODULE=$here/gpu_attention.ptx timeout -k 5 $(left 20) python3 bench_attention.py --lib ./libattention_bench.so --anchor none --impls ours,cudnn --shapes paper --only-d 128 --only-causal 1 --rounds 3 --reps 5 --warmup 2 --csv $OUT/ab-$v-$p.csv > $OUT/ab-$v-$p.log 2>&1
  echo "ab $v $p rc=$?"; grep -E "^paper.*seq  (4096|8192|16384)" $OUT/ab-$v-$p.log | sed 's/\[max.*//'
done; done
