#!/usr/bin/env bash
# Run 121: the transposing kernels in CTA pairs (activations multicast): exact tests, then decode and small-mid shapes with every kernel.
set -u
export PATH=$PATH:/usr/local/cuda/bin
cd "$(dirname "$0")/.."
g=$PWD/bundle/gemm3
out=${OUT:-/tmp/out}; mkdir -p "$out/g3"
for dir in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$dir" ] && export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
t0=$(date +%s); total=${TOTAL:-300}
left() { echo $(( total - ($(date +%s) - t0) )); }
echo "gemm $(cat $g/COMMIT); $(nvidia-smi --query-gpu=name,clocks.sm,power.limit --format=csv,noheader)"
timeout -k 5 ${GT:-90} $g/gemm-test $g/gpu_gemm_steps.ptx --steps --quick > $out/g3/gemm-test-steps.log 2>&1; echo "gemm-test --steps --quick exit $?"
grep -c "^PASS" $out/g3/gemm-test-steps.log; grep "^FAIL" $out/g3/gemm-test-steps.log | head -5; tail -n 1 $out/g3/gemm-test-steps.log
grep -c "PASS.*_pair " $out/g3/gemm-test-steps.log
i=0
for chunk in ${CHUNKS:-1,8,32,64 96,128}; do
  i=$((i+1)); l=$(left); [ $l -lt 30 ] && { echo "stop: $l s left"; break; }
  shapes=$(python3 -c "
fam=[(3072,2048),(2048,2048),(4608,3584),(3584,3584),(6144,4096),(4096,4096),(10240,8192),(8192,8192)]
print(','.join(f'{m}x{n}x{k}' for m in map(int,'$chunk'.split(',')) for n,k in fam))")
  timeout -k 5 $((l - 5)) $g/gemm-bench --ours-module $g/gpu_gemm_steps.ptx --csv $out/g3/sweep-$i.csv --shapes $shapes --reps ${REPS:-10} --warmup 2 > $out/g3/sweep-$i.log 2>&1
  echo "chunk $chunk exit $? left $(left) s"
  [ -f $out/g3/sweep-$i.csv ] && python3 bundle/gsumm3.py $out/g3/sweep-$i.csv | cut -c1-200
done
