#!/usr/bin/env bash
# Call G: gemm-test's memcheck on the production module with the loader's text check (run 128: 12 API errors, exit 9); the new default around M 160-192.
set -u
export PATH=$PATH:/usr/local/cuda/bin
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/out}; mkdir -p "$out/nG"
for dir in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$dir" ] && export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
g=$PWD/bundle/g6; mod=$PWD/crates/gpu-gemm-host/module/gpu_gemm.ptx
cd $g
s=$(date +%s); timeout -k 5 120 compute-sanitizer --tool memcheck --error-exitcode 9 ./gemm-test $mod --sanitize > $out/nG/gemm-memcheck.log 2>&1; echo "memcheck exit $? ($(( $(date +%s) - s )) s)"; tail -n 2 $out/nG/gemm-memcheck.log
shapes=$(python3 -c "
fam=[(3072,2048),(4608,3584),(3584,3584),(4096,4096),(10240,8192),(8192,8192),(8192,28672),(57344,8192)]
print(','.join(f'{m}x{n}x{k}' for m in (160,176,184,192) for n,k in fam))")
s=$(date +%s); timeout -k 5 170 ./gemm-bench --ours-module gpu_gemm_steps.ptx --csv $out/nG/confirm.csv --shapes $shapes --reps 12 --warmup 2 > $out/nG/confirm.log 2>&1; echo "confirm exit $? ($(( $(date +%s) - s )) s)"
