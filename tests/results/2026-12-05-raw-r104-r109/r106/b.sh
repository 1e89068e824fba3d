#!/usr/bin/env bash
# Run 106: the ordered wait (gpu_attention_ordered_wait.ptx: the overlapped loop's wait for the
# previous P V ordered after the softmax, which ptxas otherwise hoists above it) against
# production: attention-test on the variant, the A/B (alternating processes, beside cuDNN), ncu of
# the variant at D 128 8k; ncu of the GEMM's stream-K kernels at 768x3072x2048 (past the checks).
set -u; START=$(date +%s); BUDGET=${BUDGET:-480}
pack() { tar czf /tmp/b-out.tgz -C "$OUT" . && rm -rf "$OUT"/* && mv /tmp/b-out.tgz "$OUT/b-out.tgz"; ls -la "$OUT"; }
trap pack EXIT
root=$(pwd); A=$root/bundle/r106; G=$root/bundle/r100gemm
left() { local l=$(( BUDGET - $(date +%s) + START )); [ $l -lt 1 ] && l=1; [ $l -lt $1 ] && echo $l || echo $1; }
for dir in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$dir" ] && export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
cd $A
t0=$(date +%s); timeout -k 5 $(left 110) ./attention-test gpu_attention_ordered_wait.ptx > $OUT/attention-test-ordered.log 2>&1
echo "attention-test (ordered wait) rc=$? $(( $(date +%s) - t0 ))s"; grep -E "^FAIL|passed" $OUT/attention-test-ordered.log | cut -c1-200 | head -6
ab() { # name module process args...
  local name=$1 mod=$2 p=$3; shift 3
  GPU_ATTENTION_MODULE=$A/$mod timeout -k 5 $(left 40) python3 bench_attention.py --lib ./libattention_bench.so --anchor none --impls ours,cudnn --rounds 3 --reps 5 --warmup 2 --csv $OUT/ab-$name-$p.csv "$@" > $OUT/ab-$name-$p.log 2>&1
  echo "ab $name $p rc=$?"; grep -E "^(paper|gqa|varlen)" $OUT/ab-$name-$p.log | sed 's/\[max.*//' | tail -8
}
for p in 1 2; do for seq in 8192 2048; do
  ab production-$seq gpu_attention.ptx $p --shapes paper --only-seq $seq
  ab ordered-$seq gpu_attention_ordered_wait.ptx $p --shapes paper --only-seq $seq
done; done
t0=$(date +%s)
SEC="--section SpeedOfLight --section WarpStateStats --section SchedulerStats --section SourceCounters"
GPU_ATTENTION_MODULE=$A/gpu_attention_ordered_wait.ptx timeout -k 5 $(left 90) ncu $SEC --import-source no -k regex:'attention_fwd' --launch-count 2 -o $OUT/att-ordered \
  python3 bench_attention.py --lib ./libattention_bench.so --anchor none --impls ours --shapes paper --only-d 128 --only-seq 8192 --only-causal 0 --rounds 1 --reps 1 --warmup 0 > $OUT/ncu-att-run.log 2>&1
echo "ncu attention rc=$? $(( $(date +%s) - t0 ))s"
if [ -f $OUT/att-ordered.ncu-rep ]; then
  ncu --import $OUT/att-ordered.ncu-rep --print-details all > $OUT/ncu-att-ordered.txt 2>&1
  ncu --import $OUT/att-ordered.ncu-rep --page source --csv --print-source sass > $OUT/ncu-att-ordered-sass.csv 2>&1
  rm -f $OUT/att-ordered.ncu-rep
  grep -E "^  [a-zA-Z_].*\(|Duration|Compute \(SM\) Throughput" $OUT/ncu-att-ordered.txt | cut -c1-120 | head -8
fi
cd $G
t0=$(date +%s)
timeout -k 5 $(left 100) ncu --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats --section SourceCounters --import-source no \
  -k regex:'persistent_sk|persistent_n128_sk|gemm_bf16_persistent$' --launch-skip 93 --launch-count 12 -o $OUT/sk ./gemm-bench --ours-module gpu_gemm_steps.ptx --shapes 768x3072x2048 --reps 2 --warmup 1 > $OUT/ncu-sk-run.log 2>&1
echo "ncu stream-k rc=$? $(( $(date +%s) - t0 ))s"
if [ -f $OUT/sk.ncu-rep ]; then
  ncu --import $OUT/sk.ncu-rep --print-details all > $OUT/ncu-sk.txt 2>&1
  ncu --import $OUT/sk.ncu-rep --page source --csv --print-source sass > $OUT/ncu-sk-sass.csv 2>&1
  rm -f $OUT/sk.ncu-rep
  grep -E "^  [a-z_0-9]+.*\(|Duration" $OUT/ncu-sk.txt | cut -c1-120 | head -30
fi
