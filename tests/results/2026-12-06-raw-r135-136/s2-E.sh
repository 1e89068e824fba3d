#!/usr/bin/env bash
# Next session, the FA4 call (carry bundle/s2-fa4, bundle/s2-E.sh; ~56 MB with the tree: check first): the plan of this commit
#  beside cuDNN, FA2 and FlashAttention-4 (4.0.0b18), `n192` (the 192-key row) as the A/B on the cells the new causal D 128 rule moved.
set -u
cd "$(dirname "$0")/.."
t=/tmp/o; mkdir -p $t
rm -rf /tmp/a4 && mkdir -p /tmp/a4 && cp bundle/s2-fa4/run_attention.sh bundle/s2-fa4/bench_attention.py bundle/s2-fa4/COMMIT /tmp/a4/
xz -dc bundle/s2-fa4/libattention_bench.so.xz > /tmp/a4/libattention_bench.so && chmod +x /tmp/a4/libattention_bench.so
cp crates/gpu-attention-host/module/gpu_attention.ptx /tmp/a4/gpu_attention.ptx
echo "module sha $(sha256sum /tmp/a4/gpu_attention.ptx | cut -c1-12)"
ANCHORS=$PWD/bundle/s2-fa4/anchors ATTENTION_TIMEOUT=${FT:-500} OUT=$t/fa4 bash /tmp/a4/run_attention.sh --anchor fa4 --shapes paper --modules n192=@d128_n192 2>&1 | grep -v "^gpu-attention: attention_fwd" | tail -n 45
tar czf ${OUT:-/tmp/out}/s2E.tgz -C $t .
