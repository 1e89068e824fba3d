#!/usr/bin/env bash
# The FA4 call: production (wide stores in every two-warpgroup row) beside cuDNN, FA2 and FlashAttention-4.
set -u
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/out}; mkdir -p "$out/fa4"
rm -rf /tmp/a4 && mkdir -p /tmp/a4 && cp bundle/att4/run_attention.sh bundle/att4/bench_attention.py bundle/att4/COMMIT /tmp/a4/
xz -dc bundle/att4/libattention_bench.so.xz > /tmp/a4/libattention_bench.so && chmod +x /tmp/a4/libattention_bench.so
cp crates/gpu-attention-host/module/gpu_attention.ptx /tmp/a4/gpu_attention.ptx
echo "module sha $(sha256sum /tmp/a4/gpu_attention.ptx | cut -c1-12)"
ANCHORS=$PWD/bundle/att4/anchors ATTENTION_TIMEOUT=${FT:-500} OUT=$out/fa4 bash /tmp/a4/run_attention.sh --anchor fa4 --shapes paper 2>&1 | grep -v "^gpu-attention: attention_fwd" | tail -n 45
