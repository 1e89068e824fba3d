#!/usr/bin/env bash
# Run 119: ncu of (1) attention, D 128 causal at 8k keys, ours (production) against FA3, with the
# stall sources; (2) the GEMM at 96 x 3584 x 3584 (ours: persistent-128 in 4 splits) against cuBLAS.
set -u; START=$(date +%s); BUDGET=${BUDGET:-470}
pack() { tar czf /tmp/n-out.tgz -C "$OUT" . && rm -rf "$OUT"/* && mv /tmp/n-out.tgz "$OUT/n-out.tgz"; ls -la "$OUT"; }
trap pack EXIT
root=$(pwd)
left() { local l=$(( BUDGET - $(date +%s) + START )); [ $l -lt 1 ] && l=1; [ $l -lt $1 ] && echo $l || echo $1; }
for dir in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$dir" ] && export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
A=$root/bundle/pa; G=$root/bundle/gemm2
mkdir -p /tmp/attention-site
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/attention-site $A/anchors/fa3/*.whl
export PYTHONPATH=/tmp/attention-site
SEC="--section SpeedOfLight --section ComputeWorkloadAnalysis --section InstructionStats --section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats --section MemoryWorkloadAnalysis --section SourceCounters"
cd $A
t0=$(date +%s)
GPU_ATTENTION_MODULE=$root/crates/gpu-attention-host/module/gpu_attention.ptx timeout -k 5 $(left 200) ncu $SEC --import-source no -k regex:'attention_fwd|device_kernel|[Ff]lash' --launch-count 4 -o $OUT/att \
  python3 bench_attention.py --lib ./libattention_bench.so --anchor fa3 --impls ours,fa3 --shapes paper --only-d 128 --only-seq 8192 --only-causal 1 --rounds 1 --reps 1 --warmup 0 > $OUT/ncu-att-run.log 2>&1
echo "ncu attention rc=$? $(( $(date +%s) - t0 ))s"; grep -v "^==PROF==" $OUT/ncu-att-run.log | tail -4
if [ -f $OUT/att.ncu-rep ]; then
  ncu --import $OUT/att.ncu-rep --print-details all > $OUT/ncu-att.txt 2>&1
  ncu --import $OUT/att.ncu-rep --page raw --csv > $OUT/ncu-att-raw.csv 2>&1
  ncu --import $OUT/att.ncu-rep --page source --csv --print-source sass > $OUT/ncu-att-sass.csv 2>&1
  grep -E "^  [a-zA-Z_].*\(|Duration|Compute \(SM\) Throughput|Registers Per|Issue Slots Busy|No Eligible" $OUT/ncu-att.txt | cut -c1-160 | head -30
fi
cd $G
GS="--section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats --section LaunchStats --section Occupancy --section SourceCounters --import-source no"
t0=$(date +%s)
timeout -k 5 $(left 150) ncu $GS -k regex:'gemm_bf16_persistent_n128$' --filter-mode per-launch-config --launch-skip 2 --launch-count 1 -o $OUT/g-ours \
  ./gemm-bench --quick --shapes 96x3584x3584 --reps 4 --warmup 1 > $OUT/ncu-g-ours-run.log 2>&1
echo "ncu gemm ours rc=$? $(( $(date +%s) - t0 ))s"
t0=$(date +%s)
timeout -k 5 $(left 150) ncu $GS -k regex:'nvjet|xmma|cutlass|sm90' --filter-mode per-launch-config --launch-skip 2 --launch-count 1 -o $OUT/g-cublas \
  ./gemm-bench --quick --shapes 96x3584x3584 --reps 4 --warmup 1 > $OUT/ncu-g-cublas-run.log 2>&1
echo "ncu gemm cublas rc=$? $(( $(date +%s) - t0 ))s"
for r in g-ours g-cublas; do
  if [ -f $OUT/$r.ncu-rep ]; then
    ncu --import $OUT/$r.ncu-rep --print-details all > $OUT/ncu-$r.txt 2>&1
    ncu --import $OUT/$r.ncu-rep --page raw --csv > $OUT/ncu-$r-raw.csv 2>&1
    grep -E "^  [a-zA-Z_].*\(|Duration|DRAM Throughput|Memory Throughput|Compute \(SM\) Throughput" $OUT/ncu-$r.txt | cut -c1-180 | head -60
  fi
done
