#!/usr/bin/env bash
# Issue 22, run 45: the fixed host API and library, the new tests, and the GEMM under the sanitizers, timed.
set -u
here=$(cd "$(dirname "$0")" && pwd); out=${OUT:-$here/out}; mkdir -p "$out"; cd "$here"
echo "commit: $(cat COMMIT)"
echo "== gemm-test (exact cases, boundary tests)"
start=$SECONDS
timeout -k 5 300 ./gemm-test gpu_gemm.ptx > "$out/gemm.log" 2>&1; echo "exit $? in $((SECONDS-start)) s"
grep -E "^FAIL|boundary|passed|load_|stream|context|prepared" "$out/gemm.log" | grep -v "^PASS gemm_bf16" | head -30
echo "== suite: role pairs (plain, then synccheck)"
timeout -k 5 120 ./pipeline-harness --ptx pipeline_kernels.ptx --filter role_pair --quick --timeout-s 30 2>&1 | tail -3
timeout -k 5 200 compute-sanitizer --tool synccheck --error-exitcode 9 ./pipeline-harness --ptx pipeline_kernels.ptx --filter role_pair --quick --timeout-s 60 > "$out/pairs-synccheck.log" 2>&1
echo "synccheck exit $?"; grep -E "Barrier error|ERROR SUMMARY|passed" "$out/pairs-synccheck.log" | tail -3
echo "== broken kernels (checked build)"
timeout -k 5 200 ./pipeline-harness --ptx pipeline_kernels_checked.ptx --broken > "$out/broken.log" 2>&1; echo "exit $?"
grep -E "hold_too_many|not_in_pair|passed" "$out/broken.log" | head -12
for tool in memcheck synccheck racecheck; do
  echo "== gemm-test --sanitize under $tool"
  start=$SECONDS
  timeout -k 5 150 compute-sanitizer --tool "$tool" --error-exitcode 9 ./gemm-test gpu_gemm.ptx --sanitize > "$out/gemm-$tool.log" 2>&1
  echo "exit $? in $((SECONDS-start)) s"; grep -E "passed|ERROR SUMMARY|RACECHECK SUMMARY|Race|Error" "$out/gemm-$tool.log" | head -6
done
