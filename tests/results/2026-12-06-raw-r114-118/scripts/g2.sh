#!/usr/bin/env bash
# The transposing kernels 128 and 192 rows of A wide: exact tests, then M 96-256 x 16 layers with every kernel.
set -u
export PATH=$PATH:/usr/local/cuda/bin
cd "$(dirname "$0")/.."
g=$PWD/bundle/gemm2
out=${OUT:-/tmp/out}; mkdir -p "$out/g2"
for dir in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$dir" ] && export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
t0=$(date +%s); total=${TOTAL:-520}
left() { echo $(( total - ($(date +%s) - t0) )); }
echo "gemm $(cat $g/COMMIT); $(nvidia-smi --query-gpu=name,clocks.sm,power.limit --format=csv,noheader)"
timeout -k 5 ${GT:-150} $g/gemm-test $g/gpu_gemm_steps.ptx --steps --quick > $out/g2/gemm-test-steps.log 2>&1; echo "gemm-test --steps --quick exit $?"
grep -c "^PASS" $out/g2/gemm-test-steps.log; grep "^FAIL" $out/g2/gemm-test-steps.log | head -5; tail -n 1 $out/g2/gemm-test-steps.log
grep -c "PASS.*skinny1[29]" $out/g2/gemm-test-steps.log
i=0
for chunk in ${CHUNKS:-192,128 96,256}; do
  i=$((i+1)); l=$(left); [ $l -lt 40 ] && { echo "stop: $l s left"; break; }
  shapes=$(python3 -c "
fam=[(3072,2048),(2048,2048),(16384,2048),(2048,8192),(4608,3584),(3584,3584),(37888,3584),(3584,18944),(6144,4096),(4096,4096),(28672,4096),(4096,14336),(10240,8192),(8192,8192),(57344,8192),(8192,28672)]
print(','.join(f'{m}x{n}x{k}' for m in map(int,'$chunk'.split(',')) for n,k in fam))")
  timeout -k 5 $((l - 10)) $g/gemm-bench --ours-module $g/gpu_gemm_steps.ptx --csv $out/g2/sweep-$i.csv --shapes $shapes --reps ${REPS:-10} --warmup 2 > $out/g2/sweep-$i.log 2>&1
  echo "chunk $chunk exit $? left $(left) s"
  [ -f $out/g2/sweep-$i.csv ] && python3 bundle/gsumm.py $out/g2/sweep-$i.csv | cut -c1-190
done
