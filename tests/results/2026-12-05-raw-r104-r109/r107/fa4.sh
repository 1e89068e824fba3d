#!/usr/bin/env bash
# The FA4 call (carry bundle/r104fa4: the attention bench at the COMMIT, FA4 4.0.0b18
# packed): ours against FlashAttention-4, cuDNN and torch's flash at head dim 128 (the paper's
# shapes), then 64 and 256 at seq 8k as far as the time goes (CuTe DSL compiles each shape on
# its first call). 570 s in all.
set -u; START=$(date +%s)
# At most 8 files come back from $OUT: everything is packed into one archive when the script ends.
pack() { tar czf /tmp/fa4-out.tgz -C "$OUT" . && rm -rf "$OUT"/* && mv /tmp/fa4-out.tgz "$OUT/fa4-out.tgz"; ls -la "$OUT"; }
trap pack EXIT
here=$(cd "$(dirname "$0")" && pwd); cd "$here"
# The bridge travels xz-packed (the carry limit): unpacked here, or in a writable copy.
[ -w "$here" ] || { mkdir -p /tmp/r107fa4 && cp -r "$here"/. /tmp/r107fa4/ && here=/tmp/r107fa4 && cd "$here"; }
python3 -c "import lzma; open('libattention_bench.so','wb').write(lzma.open('libattention_bench.so.xz').read())" && chmod +x libattention_bench.so
left() { local l=$(( ${BUDGET:-570} - $(date +%s) + START )); [ $l -lt 1 ] && l=1; [ $l -lt $1 ] && echo $l || echo $1; }
echo "attention commit $(cat COMMIT)"
t0=$(date +%s)
ANCHORS=$here/anchors ATTENTION_TIMEOUT=$(left 330) OUT=$OUT/fa4-d128 bash run_attention.sh --anchor fa4 --only-d 128 --rounds 3 --reps 5 --warmup 2 > $OUT/fa4-d128.log 2>&1
echo "fa4 d128 rc=$? $(( $(date +%s) - t0 ))s"; grep -iE "error|geomean|Traceback" $OUT/fa4-d128.log | tail -6
for d in 64 256; do
  t0=$(date +%s)
  ANCHORS=$here/anchors ATTENTION_TIMEOUT=$(left 110) OUT=$OUT/fa4-d$d bash run_attention.sh --anchor fa4 --only-d $d --only-seq 8192 --rounds 3 --reps 5 --warmup 2 > $OUT/fa4-d$d.log 2>&1
  echo "fa4 d$d rc=$? $(( $(date +%s) - t0 ))s"; grep -iE "error|Traceback|^paper" $OUT/fa4-d$d.log | sed 's/\[max.*//' | tail -6
done
