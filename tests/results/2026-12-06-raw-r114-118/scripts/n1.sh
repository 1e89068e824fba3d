#!/usr/bin/env bash
# Next call 1 (~8 min): attention-test on the wide_store_two variant (adopt if it passes), then the FA3 call of record on production.
set -u
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/out}; mkdir -p "$out/n1"
a=bundle/att3
echo "attention bundle $(cat $a/COMMIT); $(nvidia-smi --query-gpu=name,clocks.sm,power.limit --format=csv,noheader)"
timeout -k 5 ${AT:-170} bundle/vs1/attention-test $a/gpu_attention_wide_store_two.ptx > $out/n1/atest-wst.log 2>&1; echo "attention-test wide_store_two exit $?"
grep -c "^PASS" $out/n1/atest-wst.log; grep "^FAIL" $out/n1/atest-wst.log | head -5; tail -n 1 $out/n1/atest-wst.log
ATTENTION_TIMEOUT=${FT:-330} OUT=$out/n1/fa3 bash $a/run_attention.sh --anchor fa3 --shapes paper --modules wst=$PWD/$a/gpu_attention_wide_store_two.ptx 2>&1 | grep -v "^gpu-attention: attention_fwd" | tail -n 45
