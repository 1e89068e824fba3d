#!/usr/bin/env bash
# Next session, call A (~5 min; carry bundle/s2-att, bundle/s2-suite/attention-test (copy it to bundle/s2-at/), bundle/s2-A.sh):
#  attention-test on the shipped module (the new causal D 128 case at 4200 keys), then the FA3 call of record with the
#  new plan (causal D 128 on 128-key blocks up to 4096 keys) and `n192` (the 192-key row) as the A/B on the changed cells.
set -u
cd "$(dirname "$0")/.."
t=/tmp/o; mkdir -p $t
a=$PWD/bundle/s2-att
echo "att $(cat $a/COMMIT); $(nvidia-smi --query-gpu=name,clocks.sm,power.limit --format=csv,noheader)"
timeout -k 5 200 bundle/s2-at/attention-test crates/gpu-attention-host/module/gpu_attention.ptx > $t/atest.log 2>&1; echo "attention-test exit $?"
grep -c "^PASS" $t/atest.log; grep "^FAIL" $t/atest.log | head; tail -n 1 $t/atest.log
cp crates/gpu-attention-host/module/gpu_attention.ptx $a/gpu_attention.ptx
ATTENTION_TIMEOUT=300 OUT=$t/fa3 bash $a/run_attention.sh --anchor fa3 --shapes paper --modules n192=@d128_n192 2>&1 | grep -v "^gpu-attention: attention_fwd" | tail -n 45
tar czf ${OUT:-/tmp/out}/s2A.tgz -C $t .
