#!/usr/bin/env bash
# GEMM: exact step-kernel checks, mid-M timing of every kernel, ncu launch stats of cuBLAS's kernels.
set -u
export PATH=$PATH:/usr/local/cuda/bin
cd "$(dirname "$0")/.."
g=$PWD/bundle/gemm
out=${OUT:-/tmp/out}; mkdir -p "$out/g"
for dir in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$dir" ] && export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
echo "commit $(cat $g/COMMIT) + persistent-192-sk; $(nvidia-smi --query-gpu=name,clocks.sm,power.limit --format=csv,noheader)"
ptxas -arch=sm_90a -v $g/gpu_gemm_steps.ptx -o /tmp/s.cubin 2>&1 | grep -A1 "properties for gemm_" | grep -B1 "[1-9][0-9]* bytes stack" | grep -o "gemm_[a-z0-9_]*\|[0-9]* bytes stack frame" | paste - - 
if [ -z "${SKIPTEST:-}" ]; then
echo "== gemm-test --steps --quick"
timeout -k 5 ${TT:-150} $g/gemm-test $g/gpu_gemm_steps.ptx --steps --quick > $out/g/steps-test.log 2>&1; echo "exit $?"
grep -c "^PASS" $out/g/steps-test.log; grep "^FAIL" $out/g/steps-test.log | head; tail -n 2 $out/g/steps-test.log
fi
SK=768x3072x2048,512x4608x3584,384x6144x4096,1024x4608x3584,768x6144x4096,192x10240x8192,256x4608x3584,768x3584x3584,128x3072x2048,1024x3072x2048,384x11008x4096,2048x3072x2048
echo "== bench"
timeout -k 5 ${GT:-240} $g/gemm-bench --ours-module $g/gpu_gemm_steps.ptx --csv $out/g/sk.csv --shapes ${SHAPES:-$SK} --reps 8 --warmup 2 > $out/g/sk.log 2>&1; echo "exit $?"
python3 bundle/gsumm.py $out/g/sk.csv
if [ -n "${NCU:-}" ] && command -v ncu >/dev/null; then
  for s in ${NCU_SHAPES:-768x3072x2048 384x6144x4096 1x2048x2048 64x4096x4096}; do
    timeout 120 ncu --section LaunchStats --metrics gpu__time_duration.sum --kernel-id :::1 --launch-count 80 \
      $g/gemm-bench --ours-module $g/gpu_gemm_steps.ptx --shapes $s --reps 1 --warmup 0 --quick > $out/g/ncu-$s.log 2>&1
    echo "== ncu $s"; python3 bundle/ncu_names.py $out/g/ncu-$s.log
  done
fi
