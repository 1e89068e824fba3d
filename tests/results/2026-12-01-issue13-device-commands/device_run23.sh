#!/usr/bin/env bash
# Issue 13, run 23: the suite bundle (suite, checked suite, broken kernels, synccheck,
# invalid module, the example crate's launcher) after the review mends (the TMA kernels share their setup); no benchmarks.
set -u
root=$OUT
cd "$(dirname "$0")/.."
start=$(date +%s)
(OUT=$root/suite bash target/bundle/suite/run.sh) > "$root/suite_run.log" 2>&1
echo "suite run.sh exit $? after $(( $(date +%s) - start )) s" | tee -a "$root/suite_run.log"
tar czf "$root/logs.tgz" -C "$root" suite suite_run.log && rm -rf "$root/suite"
grep -E "passed|FAIL|PASS invalid|ERROR SUMMARY|example|SKIPPED" "$root/suite_run.log" | tail -n 14
grep -E "tma|gemm:" "$root/suite_run.log" | head -20
