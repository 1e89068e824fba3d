#!/usr/bin/env bash
# Run 120: ncu of our GEMM kernels at 96 x 3584 x 3584 (the default persistent-128 in 4 splits, skinny-64, skinny-32-ck), beside run 119's cuBLAS profile.
set -u
for dir in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$dir" ] && export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
export PATH=/usr/local/cuda/bin:$PATH
G=$(pwd)/bundle/gemm2; cd $G
GS="--section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats --section LaunchStats --section Occupancy --section SourceCounters --import-source no"
timeout -k 5 200 ncu $GS -k regex:'gemm_bf16_persistent_n128$|gemm_bf16_skinny64$|gemm_bf16_skinny32_cluster_k$' --filter-mode per-launch-config --launch-skip 2 --launch-count 1 -o $OUT/g-ours \
  ./gemm-bench --quick --ours-module gpu_gemm_steps.ptx --shapes 96x3584x3584 --reps 4 --warmup 1 > $OUT/ncu-g-ours-run.log 2>&1
echo "ncu gemm ours rc=$?"
ncu --import $OUT/g-ours.ncu-rep --print-details all > $OUT/ncu-g-ours.txt 2>&1
ncu --import $OUT/g-ours.ncu-rep --page raw --csv > $OUT/ncu-g-ours-raw.csv 2>&1
ncu --import $OUT/g-ours.ncu-rep --page source --csv --print-source sass > $OUT/ncu-g-ours-sass.csv 2>&1
grep -E "^  [a-zA-Z_].*\(|    Duration|DRAM Throughput|L2 Hit Rate  |Grid Size  " $OUT/ncu-g-ours.txt | cut -c1-150 | head -80
gzip $OUT/ncu-g-ours-sass.csv $OUT/g-ours.ncu-rep
