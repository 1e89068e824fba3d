#!/usr/bin/env bash
set -u
export PATH=$PATH:/usr/local/cuda/bin
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/out}; mkdir -p "$out/nB"
for dir in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$dir" ] && export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
g=$PWD/bundle/next-gemm; cd $g
echo "gemm $(cat COMMIT); $(nvidia-smi --query-gpu=name,clocks.sm,power.limit --format=csv,noheader)"
timeout -k 5 90 ./gemm-test gpu_gemm_l2_hints.ptx --quick > $out/nB/l2-test.log 2>&1; echo "gemm-test l2_hints: exit $?"; tail -n 1 $out/nB/l2-test.log
timeout -k 5 60 ./gemm-test gpu_gemm_shift_edge.ptx --quick > $out/nB/shift-test.log 2>&1; echo "gemm-test shift_edge: exit $?"; tail -n 1 $out/nB/shift-test.log
shapes=$(python3 -c "
fam=[(3072,2048),(4608,3584),(3584,3584),(4096,4096),(10240,8192),(8192,8192),(8192,28672),(57344,8192)]
print(','.join(f'{m}x{n}x{k}' for m in (1,16,64,96) for n,k in fam))")
for mod in gpu_gemm_steps gpu_gemm_l2_hints; do
  s=$(date +%s); timeout -k 5 120 ./gemm-bench --ours-module $mod.ptx --csv $out/nB/$mod.csv --shapes $shapes --reps 20 --warmup 2 > $out/nB/$mod.log 2>&1; echo "gemm-bench $mod: exit $? $(( $(date +%s) - s )) s"
done
shapes=$(python3 -c "
fam=[(3072,2048),(4608,3584),(3584,3584),(4096,4096),(10240,8192),(8192,8192),(8192,28672),(57344,8192)]
print(','.join(f'{m}x{n}x{k}' for m in (192,320) for n,k in fam))")
for mod in gpu_gemm_steps gpu_gemm_shift_edge; do
  s=$(date +%s); timeout -k 5 120 ./gemm-bench --ours-module $mod.ptx --csv $out/nB/e-$mod.csv --shapes $shapes --reps 12 --warmup 2 > $out/nB/e-$mod.log 2>&1; echo "gemm-bench $mod: exit $? $(( $(date +%s) - s )) s"
done
