#!/usr/bin/env bash
# Issue 13, run 21 (final of the session): the suite bundle (suite, checked, broken, synccheck,
# example, the GEMM's exact test) and the GEMM benchmark bundle (default rounds, square and
# language-model shapes), at the same commit.
set -u
root=$OUT
cd "$(dirname "$0")/.."
(OUT=$root/suite bash target/bundle/suite/run.sh) > "$root/suite_run.log" 2>&1
echo "suite run.sh exit $?" | tee -a "$root/suite_run.log"
(OUT=$root/gemm GEMM_TIMEOUT=420 bash target/gemm-bundle/run_gemm.sh --shapes all) > "$root/gemm_run.log" 2>&1
echo "run_gemm.sh exit $?" | tee -a "$root/gemm_run.log"
tar czf "$root/logs.tgz" -C "$root" suite gemm suite_run.log gemm_run.log && rm -rf "$root/suite" "$root/gemm"
grep -E " passed|FAIL|ERROR SUMMARY|gemm:|time gemm" "$root/suite_run.log" | tail -n 12
sed -n '/== summary/,$p' "$root/gemm_run.log"
