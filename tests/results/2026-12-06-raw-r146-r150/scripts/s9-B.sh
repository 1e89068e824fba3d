#!/usr/bin/env bash
# Suite call B (carry bundle/s9, bundle/s9-B.sh): the checked attention build, the sanitizers, ptxas.
# byte-identical to the one validated in runs 139-143): the pipeline suite, the three examples, the toolkit's device
# tests (plain, checked turns, broken), attention-test (plain), the SDPA comparison and its negative control, the
# unwaited attention module's chains, the pipeline's checked build (quick) and broken kernels. Each step bounded;
# steps that do not fit the call's time are printed SKIPPED (time).
set -u
export PATH=$PATH:/usr/local/cuda/bin
for dir in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$dir" ] && export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
h=$(cd "$(dirname "$0")/s9" && pwd)
t=/tmp/o; mkdir -p $t
echo "suite $(cat $h/COMMIT); $(nvidia-smi --query-gpu=name,clocks.sm,power.limit --format=csv,noheader)"
s0=$(date +%s); END=${END:-560}
step() { local name=$1 lim=$2; shift 2; local left=$(( END - ($(date +%s) - s0) )); [ $left -lt 20 ] && { echo "$name: SKIPPED (time)"; return; }; [ $lim -gt $left ] && lim=$left; local s=$(date +%s); timeout -k 5 $lim "$@" > $t/$name.log 2>&1; local rc=$?; echo "$name: exit $rc ($(( $(date +%s) - s )) s) | $(grep -cE '^PASS' $t/$name.log) PASS, $(grep -cE '^FAIL' $t/$name.log) FAIL | $(tail -n 1 $t/$name.log | cut -c1-160)"; grep -E "^FAIL" $t/$name.log | head -5 | cut -c1-200; (cd $t && tar rf ${OUT:-/tmp/out}/s9B.tar $name.log); }
step att-checked 200 $h/attention-test $h/gpu_attention_checked.ptx
step att-memcheck 150 compute-sanitizer --tool memcheck --error-exitcode 9 $h/attention-test $h/gpu_attention.ptx --sanitize
step pipe-synccheck 120 compute-sanitizer --tool synccheck --error-exitcode 9 $h/pipeline-harness --ptx $h/pipeline_kernels.ptx --quick --timeout-s 60
step att-synccheck 150 compute-sanitizer --tool synccheck --error-exitcode 9 $h/attention-test $h/gpu_attention.ptx --sanitize
step att-racecheck 200 compute-sanitizer --tool racecheck --error-exitcode 9 $h/attention-test $h/gpu_attention.ptx --sanitize
step ptxas-att 120 ptxas -arch=sm_90a -v $h/gpu_attention.ptx -o /tmp/att.cubin
grep -c C7513 $t/ptxas-att.log
echo "end ($(( $(date +%s) - s0 )) s)"
