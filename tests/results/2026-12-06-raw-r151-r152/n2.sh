#!/usr/bin/env bash
# The suite's GEMM half on main's binaries (g16, c7b937d) and production module (f8/gpu_gemm.ptx, 076fe0a8026d):
# gemm-bench --check, gemm-test --sanitize under memcheck/synccheck/racecheck.
set -u
export PATH=$PATH:/usr/local/cuda/bin
for dir in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$dir" ] && export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
root=$(cd "$(dirname "$0")/.." && pwd); t=/tmp/n2; mkdir -p $t; cd $root/bundle/g16
cp $root/bundle/f8/gpu_gemm.ptx $t/prod.ptx
echo "g16 $(cat COMMIT); $(nvidia-smi --query-gpu=name,clocks.sm --format=csv,noheader); prod $(sha256sum $t/prod.ptx | cut -c1-12)"
s0=$(date +%s)
step() { local name=$1 lim=$2; shift 2; local s=$(date +%s); timeout -k 5 $lim "$@" > $t/$name.log 2>&1; local rc=$?; echo "$name: exit $rc ($(( $(date +%s) - s )) s) | $(grep -E 'passed|ERROR SUMMARY|RACECHECK SUMMARY|FAIL' $t/$name.log | tail -n 2 | tr '\n' ' ' | cut -c1-200)"; }
step gemm-check 150 ./gemm-bench --check --ours-module gpu_gemm_steps.ptx
grep -E "FAIL" $t/gemm-check.log | head -5; tail -n 2 $t/gemm-check.log
for tool in memcheck synccheck racecheck; do
  left=$(( 560 - ($(date +%s) - s0) )); [ $left -lt 30 ] && { echo "$tool: SKIPPED (time)"; continue; }
  step gemm-$tool $left compute-sanitizer --tool $tool --error-exitcode 9 ./gemm-test $t/prod.ptx --sanitize
done
tar czf ${OUT:-/tmp/out}/n2.tgz -C $t --exclude prod.ptx .
echo "end ($(( $(date +%s) - s0 )) s)"
