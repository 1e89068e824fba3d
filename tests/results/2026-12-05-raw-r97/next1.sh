#!/usr/bin/env bash
# Run 97, call 1 (carry bundle/r96; gemm-test and attention-test rebuilt at the HEAD of 2026-12-05
# 13:00, see NOTE): every test, with time enough: gemm-test on production (the fresh-thread
# prepare fix), the unwaited control, attention-test (300 s: the H100 host needed more than 100),
# sdpa_test.py with its negative control, gemm-bench --check (fixed shapes and 16 drawn).
set -u; START=$(date +%s); BUDGET=${BUDGET:-570}
pack() { tar czf /tmp/next1-out.tgz -C "$OUT" . && rm -rf "$OUT"/* && mv /tmp/next1-out.tgz "$OUT/next1-out.tgz"; ls -la "$OUT"; }
trap pack EXIT
here=$(cd "$(dirname "$0")" && pwd)
left() { local l=$(( BUDGET - $(date +%s) + START )); [ $l -lt 1 ] && l=1; [ $l -lt $1 ] && echo $l || echo $1; }
for dir in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$dir" ] && export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
cd "$here/gemm"
t0=$(date +%s); timeout -k 5 $(left 170) ./gemm-test gpu_gemm.ptx > $OUT/gemm-test.log 2>&1; echo "gemm-test rc=$? $(( $(date +%s) - t0 ))s"
grep -E "^FAIL|passed|prepare_on" $OUT/gemm-test.log | cut -c1-200 | tail -6
t0=$(date +%s); timeout -k 5 $(left 30) ./gemm-test gpu_gemm_unwaited.ptx --programmatic > $OUT/unwaited.log 2>&1
echo "unwaited rc=$? (must be 1) $(( $(date +%s) - t0 ))s"; grep -E "^(PASS|FAIL)|passed" $OUT/unwaited.log | cut -c1-160
cd "$here"
t0=$(date +%s); timeout -k 5 $(left 300) ./attention-test gpu_attention.ptx > $OUT/attention-test.log 2>&1
echo "attention-test rc=$? $(( $(date +%s) - t0 ))s"; grep -E "^FAIL|passed" $OUT/attention-test.log | cut -c1-200 | head -8
t0=$(date +%s); GPU_ATTENTION_MODULE=$here/gpu_attention.ptx timeout -k 5 $(left 60) python3 sdpa_test.py --lib ./libattention_bench.so --seed $(date +%s) > $OUT/sdpa.log 2>&1
echo "sdpa_test rc=$? $(( $(date +%s) - t0 ))s"; grep -E "^FAIL|^sdpa-test|seed" $OUT/sdpa.log | cut -c1-200 | tail -4
cd "$here/gemm"
t0=$(date +%s); timeout -k 5 $(left 200) ./gemm-bench --check --ours-module gpu_gemm_steps.ptx > $OUT/check.log 2>&1; echo "check rc=$? $(( $(date +%s) - t0 ))s"
grep -E "passed|failed|^FAIL|seed" $OUT/check.log | cut -c1-200 | tail -6
