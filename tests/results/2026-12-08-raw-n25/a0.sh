#!/usr/bin/env bash
# A short call (carry bundle/suite, bundle/common.sh, bundle/a0.sh): the scale step, the three examples
# (the embedded modules end to end), the pipeline suite, the toolkit's tests; each bounded by END.
TARNAME=a0; source "$(dirname "$0")/common.sh"
step scale 80 $h/gemm-bench --ours-module $h/gpu_gemm_steps.ptx --kernels skinny-80-r64-d,skinny-80-r64-dp,skinny-64-r64 --reps 10 --warmup 3 --shapes 80x256x7168,80x512x7168,80x1024x7168,80x2048x7168,80x3584x7168,80x4096x7168,160x256x7168,160x512x7168,160x1024x7168,160x2048x7168,160x3584x7168,160x4096x7168 --csv $t/scale.csv
(cd $t && tar rf ${OUT:-/tmp/out}/a0.tar scale.csv 2>/dev/null)
step gemm-example 60 $h/gemm-example
step attention-example 90 $h/attention-example
step example 40 $h/example-launcher $h/example_kernels.ptx
step pipeline 150 $h/pipeline-harness --ptx $h/pipeline_kernels.ptx
step hopper 120 $h/hopper-test $h/hopper_kernels.ptx
step attention 300 $h/attention-test $h/gpu_attention.ptx
echo "end ($(( $(date +%s) - s0 )) s)"
