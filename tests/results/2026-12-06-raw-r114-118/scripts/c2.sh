#!/usr/bin/env bash
# Call: the new M = 192 default timed through the host API, then a slim FA3 call (D 128, 2k and 8k, GQA).
set -u
export PATH=$PATH:/usr/local/cuda/bin
cd "$(dirname "$0")/.."
g=$PWD/bundle/gemm
out=${OUT:-/tmp/out}; mkdir -p "$out/c2"
for dir in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$dir" ] && export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
echo "gemm $(cat $g/COMMIT); $(nvidia-smi --query-gpu=name,clocks.sm,power.limit --format=csv,noheader)"
timeout -k 5 ${GT:-70} $g/gemm-bench --ours-module $g/gpu_gemm_steps.ptx --csv $out/c2/m192.csv --shapes 192x3072x2048,192x2048x2048,192x2048x8192,192x4608x3584,192x3584x3584,192x4096x4096,192x6144x4096,768x3072x2048 --reps 8 --warmup 2 > $out/c2/m192.log 2>&1; echo "gemm-bench exit $?"
python3 bundle/gsumm.py $out/c2/m192.csv | cut -c1-170
ATTENTION_TIMEOUT=${AT:-150} OUT=$out/c2/fa3 bash bundle/att2/run_attention.sh --anchor fa3 --shapes paper --only-d 128 --only-seq 2048,8192 2>&1 | grep -v "^gpu-attention: attention_fwd" | tail -n 14
