#!/usr/bin/env bash
# Suite call A (carry bundle/s9, bundle/s9-A.sh): the non-GEMM half of main's suite bundle (the GEMM module is
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
step() { local name=$1 lim=$2; shift 2; local left=$(( END - ($(date +%s) - s0) )); [ $left -lt 20 ] && { echo "$name: SKIPPED (time)"; return; }; [ $lim -gt $left ] && lim=$left; local s=$(date +%s); timeout -k 5 $lim "$@" > $t/$name.log 2>&1; local rc=$?; echo "$name: exit $rc ($(( $(date +%s) - s )) s) | $(grep -cE '^PASS' $t/$name.log) PASS, $(grep -cE '^FAIL' $t/$name.log) FAIL | $(tail -n 1 $t/$name.log | cut -c1-160)"; grep -E "^FAIL" $t/$name.log | head -5 | cut -c1-200; (cd $t && tar rf ${OUT:-/tmp/out}/s9A.tar $name.log); }
step pipeline 150 $h/pipeline-harness --ptx $h/pipeline_kernels.ptx
step example 40 $h/example-launcher $h/example_kernels.ptx
step gemm-example 60 $h/gemm-example
step attention-example 90 $h/attention-example
step hopper 120 $h/hopper-test $h/hopper_kernels.ptx
step hopper-turns 60 $h/hopper-test $h/hopper_kernels_checked.ptx --filter named_turns
step hopper-broken 90 $h/hopper-test $h/hopper_kernels_checked.ptx --broken
step attention 300 $h/attention-test $h/gpu_attention.ptx
step sdpa 200 env GPU_ATTENTION_MODULE=$h/gpu_attention.ptx python3 $h/sdpa_test.py --lib $h/libattention_bench.so
step sdpa-perturb 90 env GPU_ATTENTION_MODULE=$h/gpu_attention.ptx python3 $h/sdpa_test.py --lib $h/libattention_bench.so --cases 4 --perturb
step att-unwaited 120 $h/attention-test $h/gpu_attention_unwaited.ptx --programmatic
step pipeline-checked 120 $h/pipeline-harness --ptx $h/pipeline_kernels_checked.ptx --quick
step pipeline-broken 120 $h/pipeline-harness --ptx $h/pipeline_kernels_checked.ptx --broken
echo "end ($(( $(date +%s) - s0 )) s)"
