#!/usr/bin/env bash
# Issue 22, the tests that must fail on the library and host API of bf6166c (run 44).
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-$here/out}; mkdir -p "$out"
cd "$here"
echo "commit: $(cat COMMIT)" | tee "$out/machine.txt"
nvidia-smi --query-gpu=name,driver_version --format=csv | tee -a "$out/machine.txt"
echo "== one-sided CTA pairs, no sanitizer (data must be right)"
timeout -k 5 120 ./pipeline-harness --ptx pipeline_kernels.ptx --filter role_pair --quick --timeout-s 30 2>&1 | tee "$out/pairs.log" | tail -12
for t in role_pair_s2 role_pair_both_s2 role_pair_even_s2_p1_c1 role_pair_odd_s4_p1_c1 role_pair_odd_s2_p2_c2 role_pair_even_s4_p2_c2; do
  echo "== synccheck $t"
  timeout -k 5 120 compute-sanitizer --tool synccheck --error-exitcode 9 ./pipeline-harness --ptx pipeline_kernels.ptx --filter "$t" --quick --timeout-s 60 > "$out/synccheck-$t.log" 2>&1
  echo "exit $?"; grep -m3 -E "Barrier error|Missing wait|ERROR SUMMARY|passed" "$out/synccheck-$t.log"
done
echo "== gemm-test --boundary"
timeout -k 5 200 ./gemm-test gpu_gemm.ptx --boundary 2>&1 | tee "$out/boundary.log"
echo "exit ${PIPESTATUS[0]}"
