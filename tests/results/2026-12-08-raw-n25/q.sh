TARNAME=a4; source bundle/common.sh
step gemm-quick 100 $h/gemm-test $h/gpu_gemm.ptx --quick
grep -E "passed|^FAIL" $t/gemm-quick.log | tail -3
