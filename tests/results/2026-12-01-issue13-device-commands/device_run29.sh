#!/usr/bin/env bash
# Issue 13, run 29: split-K in two passes (partials, then gemm_bf16_splitk_reduce over the whole GPU; run 28: the last-split fixup kept 16 SMs busy reading 1 MiB each)
# (and the default kernel chosen by tile count). gemm-test (exact, every kernel; split problems launched twice from one preparation),
# then the new correctness pass against cuBLAS (gemm-bench --check, random and integer data),
# then the benchmark bundle in quick mode over all shapes.
set -u
root=$OUT
cd "$(dirname "$0")/.."
for dir in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$dir" ] && export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
timeout -k 5 150 target/bundle/suite/gemm-test target/bundle/suite/gpu_gemm.ptx > "$root/gemm-test.log" 2>&1
echo "gemm-test exit $?" | tee -a "$root/gemm-test.log"
grep -v "^PASS" "$root/gemm-test.log"
grep "splits [^1]" "$root/gemm-test.log" | head -12
/usr/bin/time -f "gemm-check wall %e s" timeout -k 5 240 target/bundle/suite/gemm-bench --check --ours-module target/bundle/suite/gpu_gemm.ptx > "$root/gemm-check.log" 2>&1
echo "gemm-bench --check exit $?" | tee -a "$root/gemm-check.log"
grep -v "^PASS" "$root/gemm-check.log" | tail -25
mkdir -p "$root/gemm"
(OUT=$root/gemm GEMM_TIMEOUT=400 bash target/gemm-bundle/run_gemm.sh --quick --shapes all) > "$root/gemm_run.log" 2>&1
echo "run_gemm.sh exit $?" | tee -a "$root/gemm_run.log"
grep -E "ptxas:|FAIL" "$root/gemm_run.log" | head
sed -n '/== summary/,$p' "$root/gemm_run.log"
