#!/usr/bin/env bash
# Run 97, call 2 (carry bundle/r96): the alternating-process A/B at seq 8k beside cuDNN of the
# run-96 candidates (the 192-row kernels at D 64, lazy_rescale at D 256 and GQA D 128), two
# processes each, in turn; then the stream-K timing; then the FA3 call on production.
set -u; START=$(date +%s); BUDGET=${BUDGET:-570}
pack() { tar czf /tmp/next2-out.tgz -C "$OUT" . && rm -rf "$OUT"/* && mv /tmp/next2-out.tgz "$OUT/next2-out.tgz"; ls -la "$OUT"; }
trap pack EXIT
here=$(cd "$(dirname "$0")" && pwd); cd "$here"
left() { local l=$(( BUDGET - $(date +%s) + START )); [ $l -lt 1 ] && l=1; [ $l -lt $1 ] && echo $l || echo $1; }
for dir in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$dir" ] && export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
ab() { # name process module [env...]
  local name=$1 p=$2 file=$3; shift 3
  env "$@" GPU_ATTENTION_MODULE=$here/$file timeout -k 5 $(left 30) python3 bench_attention.py --lib ./libattention_bench.so --anchor none --impls ours,cudnn --shapes paper --only-seq 8192 --rounds 3 --reps 5 --warmup 2 --csv $OUT/ab-$name-$p.csv > $OUT/ab-$name-$p.log 2>&1
  echo "ab $name $p rc=$?"; grep -E "^(paper|gqa)" $OUT/ab-$name-$p.log | sed 's/\[max.*//' | tail -8
}
for p in 1 2; do
  ab production $p gpu_attention.ptx X=1
  ab m192 $p gpu_attention.ptx GPU_ATTENTION_CONSUMERS=3
  ab lazy_rescale $p gpu_attention_lazy_rescale.ptx X=1
done
cd "$here/gemm"
SK=768x3072x2048,512x4608x3584,384x6144x4096,1024x4608x3584,768x6144x4096,192x10240x8192,256x4608x3584,768x3584x3584,128x3072x2048,1024x3072x2048,8192x8192x8192
t0=$(date +%s); timeout -k 5 $(left 150) ./gemm-bench --ours-module gpu_gemm_steps.ptx --shapes $SK --reps 8 --warmup 2 --csv $OUT/stream-k.csv > $OUT/stream-k.log 2>&1; echo "stream-k rc=$? $(( $(date +%s) - t0 ))s"
cd "$here"
t0=$(date +%s)
ANCHORS=$here/anchors ATTENTION_TIMEOUT=$(left 300) OUT=$OUT/attention bash run_attention.sh --anchor fa3 --rounds 3 --reps 5 --warmup 2 > $OUT/attention-run.log 2>&1
echo "attention fa3 rc=$? $(( $(date +%s) - t0 ))s"
