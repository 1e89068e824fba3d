#!/usr/bin/env bash
# Call 1: attention A/B of the variants, then the untested pipeline/toolkit cases, then attention-test on two variants.
set -u
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/out}; mkdir -p "$out"
mi=bundle/mini
BUDGET=${BUDGET:-330} bash bundle/ab.sh
echo "== tma_after (plain, checked)"
timeout -k 5 60 $mi/pipeline-harness --ptx $mi/pipeline_kernels.ptx --filter tma_ 2>&1 | tail -n 12
timeout -k 5 60 $mi/pipeline-harness --ptx $mi/pipeline_kernels_checked.ptx --quick --filter tma_ 2>&1 | tail -n 12
echo "== hopper named_turns (plain, checked)"
timeout -k 5 60 $mi/hopper-test $mi/hopper_kernels.ptx --filter named_turns 2>&1 | tail -n 8
timeout -k 5 60 $mi/hopper-test $mi/hopper_kernels_checked.ptx --filter named_turns 2>&1 | tail -n 8
for v in ${TESTV:-late_seed turns_late_seed}; do
  echo "== attention-test --quick on $v"
  timeout -k 5 ${TT:-60} $mi/attention-test bundle/att/gpu_attention_$v.ptx --quick > $out/atest-$v.log 2>&1; echo "exit $?"
  grep -c "^PASS" $out/atest-$v.log; grep "^FAIL" $out/atest-$v.log | head -5; tail -n 1 $out/atest-$v.log
done
