#!/usr/bin/env bash
# Call S (carry bundle/s3-suite, bundle/s3-S.sh): the GEMM half of the suite bundle on the new production module
# (ABI 5: A's box of M rows below one tile; skinny-192 in production): gemm-test full, the unwaited negative control,
# the steps module --quick, gemm-bench --check, gemm-example, gemm-test --sanitize under memcheck/synccheck/racecheck.
set -u
export PATH=$PATH:/usr/local/cuda/bin
for dir in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$dir" ] && export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
cd "$(dirname "$0")/s3-suite"
t=/tmp/o; mkdir -p $t
echo "suite $(cat COMMIT); $(nvidia-smi --query-gpu=name,clocks.sm,power.limit --format=csv,noheader); gemm module sha $(sha256sum gpu_gemm.ptx | cut -c1-12)"
s0=$(date +%s)
step() { local name=$1 lim=$2; shift 2; local s=$(date +%s); timeout -k 5 $lim "$@" > $t/$name.log 2>&1; local rc=$?; echo "$name: exit $rc ($(( $(date +%s) - s )) s) | $(grep -E 'passed|ERROR SUMMARY|RACECHECK SUMMARY|FAIL' $t/$name.log | tail -n 2 | tr '\n' ' ' | cut -c1-200)"; }
step gemm-test 150 ./gemm-test gpu_gemm.ptx
grep "^FAIL" $t/gemm-test.log | head -5
step gemm-unwaited 60 ./gemm-test gpu_gemm_unwaited.ptx --programmatic
grep -E "^(FAIL|PASS) programmatic" $t/gemm-unwaited.log | head -4
step gemm-steps 100 ./gemm-test gpu_gemm_steps.ptx --steps --quick
grep "^FAIL" $t/gemm-steps.log | head -5
step gemm-check 100 ./gemm-bench --check --ours-module gpu_gemm_steps.ptx
grep -E "FAIL" $t/gemm-check.log | head -5; tail -n 2 $t/gemm-check.log
step gemm-example 40 ./gemm-example
for tool in memcheck synccheck racecheck; do
  left=$(( 570 - ($(date +%s) - s0) )); [ $left -lt 30 ] && { echo "$tool: SKIPPED (time)"; continue; }
  step gemm-$tool $left compute-sanitizer --tool $tool --error-exitcode 9 ./gemm-test gpu_gemm.ptx --sanitize
done
tar czf ${OUT:-/tmp/out}/s3S.tgz -C $t .
