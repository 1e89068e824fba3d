#!/usr/bin/env bash
# Carry bundle/. (1) the pairs sharing A (step kernels *_pa) exact and timed in the steps
# module beside every kernel and cuBLAS; (2) cuBLAS's kernel per shape (ncu over torch's
# F.linear); (3) the default of 7d42e81 (g22's production module and gemm-bench) against
# ae2f713 (g19) on 54 new shapes, alternating; (4) the full gemm-test of the production module.
set -u
export PATH=$PATH:/usr/local/cuda/bin
for dir in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$dir" ] && export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
root=$(cd "$(dirname "$0")/.." && pwd); t=/tmp/n7; mkdir -p $t
N=$root/bundle/g22; O=$root/bundle/g19
s0=$(date +%s); END=${END:-530}
echo "new $(cat $N/COMMIT); old $(cat $O/COMMIT) prod $(sha256sum $O/gpu_gemm.ptx | cut -c1-12); $(nvidia-smi --query-gpu=name,clocks.sm,power.limit --format=csv,noheader)"
step() { local name=$1 lim=$2; shift 2; local left=$(( END - ($(date +%s) - s0) )); [ $left -lt 20 ] && { echo "$name: SKIPPED (time)"; return; }; [ $lim -gt $left ] && lim=$left; local s=$(date +%s); timeout -k 5 $lim "$@" > $t/$name.log 2>&1; local rc=$?; echo "$name: exit $rc ($(( $(date +%s) - s )) s) | $(grep -E 'passed|ERROR SUMMARY' $t/$name.log | tail -n 1 | cut -c1-200)"; grep "^FAIL" $t/$name.log | head -5; tar czf ${OUT:-/tmp/out}/n7.tgz -C $t . 2>/dev/null; }
SH=$(python3 -c "
d=[(2560,2560),(7680,2560),(5120,5120),(1280,5120),(11008,2048),(2048,11008)]
s=[(4096,512),(2048,768),(7168,384),(3072,1024),(1024,1536),(4608,640)]
m=[(2304,768),(3584,640),(1792,896),(4608,512),(2048,1024),(6144,704)]
r=[f'{a}x{n}x{k}' for a in (20,36,56) for n,k in d]+[f'{a}x{n}x{k}' for a in (72,96,104) for n,k in s]+[f'{a}x{n}x{k}' for a in (144,176,192) for n,k in m]
print(','.join(r))")
PA=$(python3 -c "
l=[(3584,3584),(4608,3584),(2048,2048),(4096,4096),(3072,512),(5120,384)]
print(','.join(f'{a}x{n}x{k}' for a in (80,96,128,160,192,256) for n,k in l))")
CS=24x4608x3584,40x3072x3072,48x6144x4096,32x1536x8192,16x2048x2048,64x2048x2048,64x4096x4096,1x4096x4096,96x3584x3584,112x5120x384,80x2560x1280,120x6144x832,160x2048x512,184x4096x896,168x3072x512,152x2560x768,160x3584x3584,192x4608x3584,256x4096x4096,384x11008x4096,768x3072x2048,1024x1024x1024
cd $N
step pa-test 110 ./gemm-test $N/gpu_gemm_steps.ptx --steps --only=_pa
step pa-bench-1 100 ./gemm-bench --ours-module $N/gpu_gemm_steps.ptx --csv $t/pa-1.csv --shapes $PA --reps 10 --warmup 2
M="gpu__time_duration.sum,launch__grid_size,launch__cluster_dim_x,launch__cluster_dim_y,launch__registers_per_thread,launch__shared_mem_per_block_dynamic,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sector_hit_rate.pct"
if command -v ncu >/dev/null; then
  s=$(date +%s); timeout -k 5 80 ncu --metrics $M --csv python3 $root/bundle/census.py $CS > $t/census.csv 2> $t/census.err
  echo "census exit $? ($(( $(date +%s) - s )) s) lines $(wc -l < $t/census.csv)"; tail -2 $t/census.err
  tar czf ${OUT:-/tmp/out}/n7.tgz -C $t .
fi
step new-1 60 ./gemm-bench --ours-module $N/gpu_gemm.ptx --csv $t/new-1.csv --shapes $SH --reps 10 --warmup 2
step old-1 60 $O/gemm-bench --ours-module $O/gpu_gemm.ptx --csv $t/old-1.csv --shapes $SH --reps 10 --warmup 2
step pa-bench-2 100 ./gemm-bench --ours-module $N/gpu_gemm_steps.ptx --csv $t/pa-2.csv --shapes $PA --reps 10 --warmup 2
step new-2 60 ./gemm-bench --ours-module $N/gpu_gemm.ptx --csv $t/new-2.csv --shapes $SH --reps 10 --warmup 2
step old-2 60 $O/gemm-bench --ours-module $O/gpu_gemm.ptx --csv $t/old-2.csv --shapes $SH --reps 10 --warmup 2
step full-test 300 ./gemm-test $N/gpu_gemm.ptx
echo "end ($(( $(date +%s) - s0 )) s)"
