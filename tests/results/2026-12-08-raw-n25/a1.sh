#!/usr/bin/env bash
# Call 1 (carry bundle/suite, bundle/common.sh, bundle/a1.sh): the suite bundle's run.sh, first part:
# the pipeline suite (plain, checked quick, broken), the three examples, the toolkit's tests, attention-test,
# the SDPA comparison and its negative control, the unwaited modules' chains, gemm-test, gemm-test --steps --quick.
TARNAME=a1; source "$(dirname "$0")/common.sh"
printf '.version 99.0\n.target sm_90\n.address_size 64\nthis is not PTX\n' > $t/invalid.ptx
timeout -k 10 60 $h/pipeline-harness --ptx $t/invalid.ptx > $t/invalid.log 2>&1; echo "invalid module: exit $? (must be 5): $(tail -n 1 $t/invalid.log)"
# How the 64 x 80 tiles' period per k-block scales with the CTAs running at once.
step scale 80 $h/gemm-bench --ours-module $h/gpu_gemm_steps.ptx --kernels skinny-80-r64-d,skinny-80-r64-dp,skinny-64-r64 --reps 10 --warmup 3 --shapes 80x256x7168,80x512x7168,80x1024x7168,80x2048x7168,80x3584x7168,80x4096x7168,160x256x7168,160x512x7168,160x1024x7168,160x2048x7168,160x3584x7168,160x4096x7168 --csv $t/scale.csv
(cd $t && tar rf ${OUT:-/tmp/out}/a1.tar scale.csv 2>/dev/null)
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
step gemm-test 300 $h/gemm-test $h/gpu_gemm.ptx
step gemm-unwaited 120 $h/gemm-test $h/gpu_gemm_unwaited.ptx --programmatic
step gemm-steps 300 $h/gemm-test $h/gpu_gemm_steps.ptx --steps --quick
echo "end ($(( $(date +%s) - s0 )) s)"
