#!/usr/bin/env bash
# Call 2 (carry bundle/suite, bundle/common.sh, bundle/a2.sh): the suite bundle's run.sh, second part:
# attention's checked build, the sanitizers (attention, the GEMM, the pipelines' synccheck), ptxas -v of the
# attention module, gemm-bench --check on the steps module against cuBLAS.
TARNAME=a2; source "$(dirname "$0")/common.sh"
step att-checked 200 $h/attention-test $h/gpu_attention_checked.ptx
step gemm-check 150 $h/gemm-bench --check --ours-module $h/gpu_gemm_steps.ptx
step att-memcheck 150 compute-sanitizer --tool memcheck --error-exitcode 9 $h/attention-test $h/gpu_attention.ptx --sanitize
step gemm-memcheck 150 compute-sanitizer --tool memcheck --error-exitcode 9 $h/gemm-test $h/gpu_gemm.ptx --sanitize
step pipe-synccheck 120 compute-sanitizer --tool synccheck --error-exitcode 9 $h/pipeline-harness --ptx $h/pipeline_kernels.ptx --quick --timeout-s 60
step att-synccheck 150 compute-sanitizer --tool synccheck --error-exitcode 9 $h/attention-test $h/gpu_attention.ptx --sanitize
step gemm-synccheck 150 compute-sanitizer --tool synccheck --error-exitcode 9 $h/gemm-test $h/gpu_gemm.ptx --sanitize
step att-racecheck 200 compute-sanitizer --tool racecheck --error-exitcode 9 $h/attention-test $h/gpu_attention.ptx --sanitize
step gemm-racecheck 200 compute-sanitizer --tool racecheck --error-exitcode 9 $h/gemm-test $h/gpu_gemm.ptx --sanitize
step ptxas-att 120 ptxas -arch=sm_90a -v $h/gpu_attention.ptx -o /tmp/att.cubin
echo "C7513 lines: $(grep -c C7513 $t/ptxas-att.log)"
echo "end ($(( $(date +%s) - s0 )) s)"
