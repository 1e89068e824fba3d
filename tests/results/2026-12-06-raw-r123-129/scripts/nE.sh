#!/usr/bin/env bash
set -u
cd "$(dirname "$0")/.."
a=$PWD/bundle/next-att
cp crates/gpu-attention-host/module/gpu_attention.ptx $a/gpu_attention.ptx
export GPU_ATTENTION_MODULE=$a/gpu_attention.ptx
timeout 200 python3 bundle/dbg/dbg_varlen.py $a $a/libattention_bench.so 2>&1 | grep -v "^gpu-attention: attention_fwd" | tail -80
