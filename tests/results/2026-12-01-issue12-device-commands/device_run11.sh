#!/usr/bin/env bash
# Issue 12, fourth device call (run 11), final: the suite bundle (suite, checked suite, broken kernels, synccheck,
# invalid module, the example crate's launcher) and the benchmarks, after the harness became a library, the bench list moved to tests/suite and the misuse table was written once.
set -u
root=$OUT
cd "$(dirname "$0")/.."
start=$(date +%s)
(OUT=$root/suite bash target/bundle/suite/run.sh) > "$root/suite_run.log" 2>&1
echo "suite run.sh exit $? after $(( $(date +%s) - start )) s" | tee -a "$root/suite_run.log"
(OUT=$root/bench BENCH_TIMEOUT=300 bash target/bundle/bench/run_bench.sh) > "$root/bench_run.log" 2>&1
echo "run_bench.sh exit $? after $(( $(date +%s) - start )) s" | tee -a "$root/bench_run.log"
tar czf "$root/logs.tgz" -C "$root" suite bench suite_run.log bench_run.log && rm -rf "$root/suite" "$root/bench"
grep -E "passed|FAIL|PASS invalid|ERROR SUMMARY|example|SKIPPED" "$root/suite_run.log" | tail -n 14
grep -E "inflight|role_pair" "$root/suite_run.log" | head -20
