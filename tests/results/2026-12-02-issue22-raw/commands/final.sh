#!/usr/bin/env bash
# Issue 22, run 46, the final run: the whole suite bundle (run.sh), the broken kernels once more
# with a cold JIT cache, and the GEMM benchmark on the language-model shapes and 8192^3 (10 rounds
# after 3 warm-ups, random data, alternating with cuBLAS) to show the host API's changes cost
# nothing. At most 8 files come back, so the suite's logs are packed.
set -u
here=$(cd "$(dirname "$0")" && pwd); root=$OUT; cd "$here"
start=$SECONDS
(OUT=$root/suite bash "$here/run.sh") > "$root/suite_run.log" 2>&1
echo "run.sh exit $? in $((SECONDS-start)) s" | tee -a "$root/suite_run.log"
grep -E " passed|^FAIL|ERROR SUMMARY|RACECHECK SUMMARY|^gemm:|checks passed|SKIPPED|^PASS (load|d_|c_|prepared|run_)" "$root/suite_run.log" | tail -n 40
tar -C "$root" -czf "$root/suite.tgz" suite && rm -rf "$root/suite"
echo "== broken kernels, cold JIT cache"
start=$SECONDS
CUDA_CACHE_PATH=$(mktemp -d) timeout -k 5 240 ./pipeline-harness --ptx pipeline_kernels_checked.ptx --broken > "$root/broken_cold.log" 2>&1
echo "exit $? in $((SECONDS-start)) s"; grep -E "loaded in this process|broken kernels:|^FAIL" "$root/broken_cold.log"
echo "== GEMM benchmark (llm shapes and 8192^3)"
for dir in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$dir" ] && export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
start=$SECONDS
timeout -k 5 200 ./gemm-bench --ours-module gpu_gemm.ptx --shapes llm,8192x8192x8192 --reps 10 --warmup 3 --csv "$root/gemm.csv" > "$root/gemm_bench.log" 2>&1
echo "exit $? in $((SECONDS-start)) s"; sed -n '/== summary/,$p' "$root/gemm_bench.log" | head -n 30 | cut -c1-220
