#!/usr/bin/env bash
# Next session, call D (~8 min; carry bundle/s2-gemm, bundle/s2-D.sh): the short_a_box module (never run): gemm-test --quick on it,
#  then M 72, 96, 112 over the 16 layers in two processes, the steps module (production kernels) and the short_a_box module,
#  each kernel's time over cuBLAS's in its process (compare with bundle/cmp2.py-style ratios).
set -u
export PATH=$PATH:/usr/local/cuda/bin
cd "$(dirname "$0")/.."
for dir in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$dir" ] && export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
t=/tmp/o; mkdir -p $t
g=$PWD/bundle/s2-gemm; cd $g
echo "gemm $(cat COMMIT); $(nvidia-smi --query-gpu=name,clocks.sm,power.limit --format=csv,noheader)"
timeout -k 5 100 ./gemm-test gpu_gemm_short_a_box.ptx --quick > $t/short-test.log 2>&1; echo "gemm-test short_a_box: exit $?"; tail -n 1 $t/short-test.log
fam="[(3072,2048),(2048,2048),(16384,2048),(2048,8192),(4608,3584),(3584,3584),(37888,3584),(3584,18944),(6144,4096),(4096,4096),(28672,4096),(4096,14336),(10240,8192),(8192,8192),(57344,8192),(8192,28672)]"
shapes=$(python3 -c "print(','.join(f'{m}x{n}x{k}' for m in (72,96,112) for n,k in $fam))")
for mod in gpu_gemm_steps gpu_gemm_short_a_box; do
  s=$(date +%s); timeout -k 5 200 ./gemm-bench --ours-module $mod.ptx --csv $t/$mod.csv --shapes $shapes --reps 12 --warmup 2 > $t/$mod.log 2>&1; echo "gemm-bench $mod: exit $? ($(( $(date +%s) - s )) s)"
done
tar czf ${OUT:-/tmp/out}/s2D.tgz -C $t .
