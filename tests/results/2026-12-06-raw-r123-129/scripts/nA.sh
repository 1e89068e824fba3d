#!/usr/bin/env bash
# Call A: the hinted tensor loads' device test (plain, checked), then the FA3 call with ours, n128 (causal D128 on 128-key blocks), kv (K/V evict-last).
set -u
export PATH=$PATH:/usr/local/cuda/bin
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/out}; mkdir -p "$out/nA"
m=bundle/next-mini; a=bundle/next-att
echo "bundles $(cat $m/COMMIT) $(cat $a/COMMIT); $(nvidia-smi --query-gpu=name,clocks.sm,power.limit --format=csv,noheader)"
for p in pipeline_kernels pipeline_kernels_checked; do
  timeout -k 5 60 $m/pipeline-harness --ptx $m/$p.ptx --filter tma_ > $out/nA/tma-$p.log 2>&1; echo "pipeline-harness $p --filter tma_: exit $?"; tail -n 2 $out/nA/tma-$p.log
done
cp crates/gpu-attention-host/module/gpu_attention.ptx $a/gpu_attention.ptx
start=$(date +%s)
ATTENTION_TIMEOUT=${FT:-470} OUT=$out/nA/fa3 bash $a/run_attention.sh --anchor fa3 --shapes paper --modules n128=@d128_n128,kv=$PWD/$a/gpu_attention_kv_evict_last.ptx 2>&1 | grep -v "^gpu-attention: attention_fwd" | tail -n 50
echo "fa3 call took $(( $(date +%s) - start )) s"
