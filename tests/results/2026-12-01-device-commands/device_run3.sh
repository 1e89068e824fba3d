#!/usr/bin/env bash
# Third device call: the suite bundle and the benchmarks again, at the commit with the wait loop's first try apart
# (cold retry loop); every log packed in one archive.
set -u
root=$OUT
cd "$(dirname "$0")/.."
start=$(date +%s)
(OUT=$root/suite bash target/bundle/suite/run.sh) > "$root/suite_run.log" 2>&1
echo "suite run.sh exit $? after $(( $(date +%s) - start )) s" | tee -a "$root/suite_run.log"
(OUT=$root/bench BENCH_TIMEOUT=300 bash target/bundle/bench/run_bench.sh) > "$root/bench_run.log" 2>&1
echo "run_bench.sh exit $? after $(( $(date +%s) - start )) s" | tee -a "$root/bench_run.log"
tar czf "$root/logs.tgz" -C "$root" suite bench suite_run.log bench_run.log && rm -rf "$root/suite" "$root/bench"
grep -E "passed|FAIL|PASS invalid|ERROR SUMMARY" "$root/suite_run.log" | tail -n 8
grep -A8 "^wait loop" "$root/bench_run.log"
grep -E "^(elected s(1|2|4|8), (1|4) consumer warps?, per-(warp|thread), direct|ring s|round trip, 1)" "$root/bench_run.log" | head -n 40
