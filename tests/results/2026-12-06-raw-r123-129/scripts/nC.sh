#!/usr/bin/env bash
# Call C: FA3's varlen CHECK-FAIL of call A: the varlen rows with the inputs checked after every call, three ways.
set -u
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/out}; mkdir -p "$out/nC"
a=bundle/next-att
cp crates/gpu-attention-host/module/gpu_attention.ptx $a/gpu_attention.ptx
i=0
for args in "--modules n128=@d128_n128,kv=$PWD/$a/gpu_attention_kv_evict_last.ptx" "" "--impls fa3" "--impls ours,fa3 --modules kv=$PWD/$a/gpu_attention_kv_evict_last.ptx" "--modules n128=@d128_n128,kv=$PWD/$a/gpu_attention_kv_evict_last.ptx"; do
  i=$((i+1)); s=$(date +%s)
  echo "== $i: $args"
  ATTENTION_TIMEOUT=120 OUT=$out/nC/$i bash $a/run_attention.sh --anchor fa3 --shapes paper --only-kind varlen $args 2>&1 | grep -E "^varlen|Error|error" | tail -n 6
  echo "($(( $(date +%s) - s )) s)"
done
