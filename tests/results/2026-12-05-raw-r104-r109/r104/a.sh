#!/usr/bin/env bash
# Run 104 (carry bundle/r104, the commit in COMMIT): attention-test and memcheck on the final
# module; the varlen A/B: the production bridge against the bridge built with varlen_folded
# (the folded unit table for causal varlen), alternating processes beside cuDNN; the cost of the
# folding code without a mask at D 64 (production against the longest_first module, 2k and 8k);
# the folded order's sorted tail (by the rule; folded everywhere) against production; the FA3 call.
set -u; START=$(date +%s); BUDGET=${BUDGET:-540}
pack() { tar czf /tmp/a-out.tgz -C "$OUT" . && rm -rf "$OUT"/* && mv /tmp/a-out.tgz "$OUT/a-out.tgz"; ls -la "$OUT"; }
trap pack EXIT
here=$(cd "$(dirname "$0")" && pwd); cd "$here"
# The variant modules travel xz-packed (the carry limit); unpacked here, or in a writable copy.
[ -w "$here" ] || { mkdir -p /tmp/r104 && cp -r "$here"/. /tmp/r104/ && here=/tmp/r104 && cd "$here"; }
python3 -c "import lzma,glob; [open(f[:-3],'wb').write(lzma.open(f).read()) for f in glob.glob('*.ptx.xz')]"
left() { local l=$(( BUDGET - $(date +%s) + START )); [ $l -lt 1 ] && l=1; [ $l -lt $1 ] && echo $l || echo $1; }
for dir in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$dir" ] && export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
t0=$(date +%s); timeout -k 5 $(left 110) ./attention-test gpu_attention.ptx > $OUT/attention-test.log 2>&1
echo "attention-test rc=$? $(( $(date +%s) - t0 ))s"; grep -E "^FAIL|passed" $OUT/attention-test.log | cut -c1-220 | head -8
# Every causal fixed case folded, the sorted tail too (the variant module folds all of them).
t0=$(date +%s); timeout -k 5 $(left 100) ./attention-test gpu_attention_folded_everywhere_tail.ptx > $OUT/attention-test-folded-tail.log 2>&1
echo "attention-test (folded everywhere, sorted tail) rc=$? $(( $(date +%s) - t0 ))s"; grep -E "^FAIL|passed" $OUT/attention-test-folded-tail.log | cut -c1-220 | head -8
t0=$(date +%s); timeout -k 5 $(left 30) compute-sanitizer --tool memcheck ./attention-test gpu_attention.ptx --sanitize > $OUT/sanitize-memcheck.log 2>&1
echo "memcheck rc=$? $(( $(date +%s) - t0 ))s"; grep -E "ERROR SUMMARY|passed" $OUT/sanitize-memcheck.log | tail -2
t0=$(date +%s); GPU_ATTENTION_MODULE=$here/gpu_attention.ptx timeout -k 5 $(left 40) python3 sdpa_test.py --lib ./libattention_bench.so --seed $(date +%s) > $OUT/sdpa.log 2>&1
echo "sdpa_test rc=$? $(( $(date +%s) - t0 ))s"; grep -E "^FAIL|^sdpa-test" $OUT/sdpa.log | tail -2
ab() { # name lib module process args...
  local name=$1 lib=$2 mod=$3 p=$4; shift 4
  GPU_ATTENTION_MODULE=$here/$mod timeout -k 5 $(left 40) python3 bench_attention.py --lib ./$lib --anchor none --impls ours,cudnn --rounds 3 --reps 5 --warmup 2 --csv $OUT/ab-$name-$p.csv "$@" > $OUT/ab-$name-$p.log 2>&1
  echo "ab $name $p rc=$?"; grep -E "^(paper|gqa|varlen)" $OUT/ab-$name-$p.log | sed 's/\[max.*//' | tail -6
}
for p in 1 2; do
  ab varlen_production libattention_bench.so gpu_attention.ptx $p --shapes paper --only-d 128 --only-seq 2048 --only-causal 1
  ab varlen_folded libattention_bench_folded.so gpu_attention.ptx $p --shapes paper --only-d 128 --only-seq 2048 --only-causal 1
done
for p in 1 2; do for seq in 8192 2048; do
  ab d64_production-$seq libattention_bench.so gpu_attention.ptx $p --shapes paper --only-d 64 --only-seq $seq --only-causal 0
  ab d64_longest-$seq libattention_bench.so gpu_attention_longest_first.ptx $p --shapes paper --only-d 64 --only-seq $seq --only-causal 0
done; done
# The folded order's tail sorted longest first (Units::with_sorted_tail): by the rule, and folded
# everywhere (D 64's 192-row units among them), against production, causal.
for p in 1 2; do for seq in 2048 8192; do
  ab tail_production-$seq libattention_bench.so gpu_attention.ptx $p --shapes paper --only-seq $seq --only-causal 1
  ab tail_rule-$seq libattention_bench.so gpu_attention_folded_tail.ptx $p --shapes paper --only-seq $seq --only-causal 1
  ab tail_everywhere-$seq libattention_bench.so gpu_attention_folded_everywhere_tail.ptx $p --shapes paper --only-seq $seq --only-causal 1
done; done
t0=$(date +%s)
ANCHORS=$here/anchors ATTENTION_TIMEOUT=$(left 120) OUT=$OUT/attention bash run_attention.sh --anchor fa3 --rounds 3 --reps 5 --warmup 2 > $OUT/attention-run.log 2>&1
echo "attention fa3 rc=$? $(( $(date +%s) - t0 ))s"
