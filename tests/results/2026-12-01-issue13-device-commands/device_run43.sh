#!/usr/bin/env bash
# Issue 13, run 43 (session 5), the final run: split-K only inside the kernel, the register
# epilogue loading a quarter of C ahead, the default on 128 x 64 tiles for the smallest shapes.
# The whole suite bundle of `cargo xtask test-nvidia --bundle` (suite, checked suite, broken
# kernels, synccheck, example, gemm-test exact on every kernel, gemm-bench --check against
# cuBLAS), the benchmark bundle of `cargo xtask bench-gemm --bundle` over all shapes (20 rounds
# after 5 warm-ups, with its ptxas -v gate), the benchmark at beta 1 on three shapes (10 rounds),
# and Nsight Compute's kernel times at the two smallest shapes. At most 8 files come back, so the
# suite's and beta 1's logs are packed.
set -u
root=$OUT
cd "$(dirname "$0")/../../.."
b=target/gemm-bundle
(OUT=$root/suite bash target/bundle/suite/run.sh) > "$root/suite_run.log" 2>&1
echo "suite run.sh exit $?" | tee -a "$root/suite_run.log"
grep -E " passed|FAIL|ERROR SUMMARY|^gemm:|checks passed|SKIPPED" "$root/suite_run.log" | tail -n 24
mkdir -p "$root/gemm"
(OUT=$root/gemm GEMM_TIMEOUT=420 bash $b/run_gemm.sh --shapes all) > "$root/gemm_run.log" 2>&1
echo "run_gemm.sh exit $?" | tee -a "$root/gemm_run.log"
grep -E "ptxas:|FAIL" "$root/gemm_run.log" | head -n 12
sed -n '/== summary/,$p' "$root/gemm_run.log" | head -n 24
mkdir -p "$root/gemm-beta1"
(OUT=$root/gemm-beta1 GEMM_TIMEOUT=150 bash $b/run_gemm.sh --beta 1 --reps 10 --warmup 3 --shapes 8192x8192x8192,128x4096x4096,1024x1024x1024) > "$root/gemm-beta1/run.log" 2>&1
echo "run_gemm.sh --beta 1 exit $?" | tee -a "$root/gemm-beta1/run.log"
sed -n '/== summary/,$p' "$root/gemm-beta1/run.log" | head -n 6 | cut -c1-200
for dir in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$dir" ] && export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
timeout 150 /usr/local/cuda/bin/ncu --metrics gpu__time_duration.sum,launch__grid_size \
  --csv $b/gemm-bench --ours-module $b/gpu_gemm.ptx --shapes 128x4096x4096,1024x1024x1024 --reps 1 --warmup 1 --no-gate > "$root/ncu.csv" 2> "$root/ncu.err"
echo "ncu exit $?"
gzip -9 "$root/ncu.csv"
rm -f "$root"/gemm*/gpu_gemm.cubin "$root/ncu.err"
tar czf "$root/suite.tgz" -C "$root" suite suite_run.log && rm -rf "$root/suite" "$root/suite_run.log"
tar czf "$root/gemm-beta1.tgz" -C "$root" gemm-beta1 && rm -rf "$root/gemm-beta1"
find "$root" -type f | sort
