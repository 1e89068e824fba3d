#!/usr/bin/env bash
# Verification of the new production modules, then the GEMM sweep (chunked, each chunk its own CSV) while time lasts.
set -u
export PATH=$PATH:/usr/local/cuda/bin
cd "$(dirname "$0")/.."
s=$PWD/bundle/vs; g=$PWD/bundle/gemm
out=${OUT:-/tmp/out}; mkdir -p "$out/v"
for dir in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$dir" ] && export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
t0=$(date +%s); total=${TOTAL:-570}
left() { echo $(( total - ($(date +%s) - t0) )); }
echo "commit $(cat $s/COMMIT); $(nvidia-smi --query-gpu=name,clocks.sm,power.limit --format=csv,noheader)"
if [ -z "${SKIPTEST:-}" ]; then
echo "== attention-test (production module)"
timeout -k 5 ${AT:-170} $s/attention-test $s/gpu_attention.ptx > $out/v/attention-test.log 2>&1; echo "exit $?"
grep -c "^PASS" $out/v/attention-test.log; grep "^FAIL" $out/v/attention-test.log | head -5; tail -n 1 $out/v/attention-test.log
echo "== gemm-test (production module)"
timeout -k 5 ${GT:-120} $s/gemm-test $s/gpu_gemm.ptx > $out/v/gemm-test.log 2>&1; echo "exit $?"
grep -c "^PASS" $out/v/gemm-test.log; grep "^FAIL" $out/v/gemm-test.log | head -5; tail -n 1 $out/v/gemm-test.log
grep "persistent_n192\|persistent-192" $out/v/gemm-test.log | head -3
echo "== examples (embedded modules)"
timeout -k 5 60 $s/gemm-example > $out/v/gemm-example.log 2>&1; echo "gemm-example exit $?: $(tail -n 1 $out/v/gemm-example.log)"
timeout -k 5 90 $s/attention-example > $out/v/attention-example.log 2>&1; echo "attention-example exit $?: $(tail -n 1 $out/v/attention-example.log)"
fi
echo "== sweep, left $(left) s"
i=0
for chunk in ${CHUNKS:-384,512,768,1024 96,128,192,256 2048,4096}; do
  i=$((i+1)); l=$(left); [ $l -lt 40 ] && { echo "stop: $l s left"; break; }
  shapes=$(python3 -c "
import sys
fam=[(3072,2048),(2048,2048),(16384,2048),(2048,8192),(4608,3584),(3584,3584),(37888,3584),(3584,18944),(6144,4096),(4096,4096),(28672,4096),(4096,14336),(10240,8192),(8192,8192),(57344,8192),(8192,28672)]
print(','.join(f'{m}x{n}x{k}' for m in map(int,'$chunk'.split(',')) for n,k in fam))")
  timeout -k 5 $((l - 10)) $g/gemm-bench --ours-module $g/gpu_gemm_steps.ptx --csv $out/v/sweep-$i.csv --shapes $shapes --reps ${REPS:-8} --warmup 2 > $out/v/sweep-$i.log 2>&1
  echo "chunk $chunk exit $? left $(left) s"
  [ -f $out/v/sweep-$i.csv ] && python3 bundle/gsumm.py $out/v/sweep-$i.csv | cut -c1-150
done
