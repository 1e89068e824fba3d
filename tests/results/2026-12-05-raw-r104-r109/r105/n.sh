#!/usr/bin/env bash
# Run 105: ncu of (1) our attention against FA3 at D 128, seq 8k (no mask; GQA rows too), with the
# stall sources; (2) the GEMM at 768x3072x2048 (ours against cuBLAS) and its stream-K kernels.
set -u; START=$(date +%s); BUDGET=${BUDGET:-480}
pack() { tar czf /tmp/n-out.tgz -C "$OUT" . && rm -rf "$OUT"/* && mv /tmp/n-out.tgz "$OUT/n-out.tgz"; ls -la "$OUT"; }
trap pack EXIT
root=$(pwd)
left() { local l=$(( BUDGET - $(date +%s) + START )); [ $l -lt 1 ] && l=1; [ $l -lt $1 ] && echo $l || echo $1; }
for dir in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$dir" ] && export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
A=$root/bundle/r104; G=$root/bundle/r100gemm
mkdir -p /tmp/attention-site
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/attention-site $A/anchors/fa3/*.whl
export PYTHONPATH=/tmp/attention-site
SEC="--section SpeedOfLight --section ComputeWorkloadAnalysis --section InstructionStats --section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats --section MemoryWorkloadAnalysis --section SourceCounters"
cd $A
t0=$(date +%s)
GPU_ATTENTION_MODULE=$A/gpu_attention.ptx timeout -k 5 $(left 200) ncu $SEC --import-source no -k regex:'attention_fwd|device_kernel|[Ff]lash' --launch-count 8 -o $OUT/att \
  python3 bench_attention.py --lib ./libattention_bench.so --anchor fa3 --impls ours,fa3 --shapes paper --only-d 128 --only-seq 8192 --only-causal 0 --rounds 1 --reps 1 --warmup 0 > $OUT/ncu-att-run.log 2>&1
echo "ncu attention rc=$? $(( $(date +%s) - t0 ))s"; tail -5 $OUT/ncu-att-run.log
if [ -f $OUT/att.ncu-rep ]; then
  ncu --import $OUT/att.ncu-rep --print-details all > $OUT/ncu-att.txt 2>&1
  ncu --import $OUT/att.ncu-rep --page raw --csv > $OUT/ncu-att-raw.csv 2>&1
  ncu --import $OUT/att.ncu-rep --page source --csv --print-source sass > $OUT/ncu-att-sass.csv 2>&1
  grep -E "^  [a-zA-Z_].*\(|Duration|Compute \(SM\) Throughput|Registers Per" $OUT/ncu-att.txt | cut -c1-160 | head -24
  ls -la $OUT
fi
cd $G
t0=$(date +%s)
timeout -k 5 $(left 100) ncu --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis \
  --launch-skip 30 --launch-count 12 ./gemm-bench --shapes 768x3072x2048 --reps 3 --warmup 2 > $OUT/ncu-768x3072x2048.log 2>&1
echo "ncu gemm rc=$? $(( $(date +%s) - t0 ))s"; grep -E "^  [a-z_0-9]+.*\(|Duration|Compute \(SM\) Throughput" $OUT/ncu-768x3072x2048.log | cut -c1-160 | head -40
t0=$(date +%s)
timeout -k 5 $(left 120) ncu --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats --section SourceCounters --import-source no \
  -k regex:'persistent_sk|persistent_n128_sk|gemm_bf16_persistent$' --launch-count 6 -o $OUT/sk ./gemm-bench --ours-module gpu_gemm_steps.ptx --shapes 768x3072x2048 --reps 2 --warmup 1 > $OUT/ncu-sk-run.log 2>&1
echo "ncu stream-k rc=$? $(( $(date +%s) - t0 ))s"
if [ -f $OUT/sk.ncu-rep ]; then
  ncu --import $OUT/sk.ncu-rep --print-details all > $OUT/ncu-sk.txt 2>&1
  ncu --import $OUT/sk.ncu-rep --page raw --csv > $OUT/ncu-sk-raw.csv 2>&1
  ncu --import $OUT/sk.ncu-rep --page source --csv --print-source sass > $OUT/ncu-sk-sass.csv 2>&1
  grep -E "^  [a-z_0-9]+.*\(|Duration|Throughput|L2 Hit|DRAM" $OUT/ncu-sk.txt | cut -c1-160 | head -40
fi
