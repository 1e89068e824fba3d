#!/usr/bin/env bash
# Issue 13, run 35 (session 3): split-K inside clusters (gemm_bf16_cluster_splitk) and the
# cvt.rn.bf16x2 epilogue. gemm-test (exact, every kernel), gemm-bench --check (every kernel
# against cuBLAS and the host reference), then the benchmark bundle over all shapes, 8 rounds.
set -u
root=$OUT
cd "$(dirname "$0")/.."
for dir in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$dir" ] && export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
timeout -k 5 150 target/bundle/suite/gemm-test target/bundle/suite/gpu_gemm.ptx > "$root/gemm-test.log" 2>&1
echo "gemm-test exit $?" | tee -a "$root/gemm-test.log"
grep -v "^PASS" "$root/gemm-test.log"
grep -c "^PASS" "$root/gemm-test.log"
grep "cluster_splitk.*splits [^1]" "$root/gemm-test.log"
/usr/bin/time -f "gemm-check wall %e s" timeout -k 5 240 target/bundle/suite/gemm-bench --check --ours-module target/bundle/suite/gpu_gemm.ptx > "$root/gemm-check.log" 2>&1
echo "gemm-bench --check exit $?" | tee -a "$root/gemm-check.log"
grep -v "^PASS" "$root/gemm-check.log" | tail -8
mkdir -p "$root/gemm"
(OUT=$root/gemm GEMM_TIMEOUT=300 bash target/gemm-bundle/run_gemm.sh --reps 8 --warmup 3 --shapes all) > "$root/gemm_run.log" 2>&1
echo "run_gemm.sh exit $?" | tee -a "$root/gemm_run.log"
grep -E "ptxas:|FAIL" "$root/gemm_run.log" | head
sed -n '/== summary/,$p' "$root/gemm_run.log"
