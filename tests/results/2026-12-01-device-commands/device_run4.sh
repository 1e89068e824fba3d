#!/usr/bin/env bash
# Fourth device call: the benchmarks only (the library is that of run 3), for the wait-loop table's
# test_wait variants; every log packed in one archive.
set -u
root=$OUT
cd "$(dirname "$0")/.."
(OUT=$root/bench BENCH_TIMEOUT=300 bash target/bundle/bench/run_bench.sh) > "$root/bench_run.log" 2>&1
echo "run_bench.sh exit $?" | tee -a "$root/bench_run.log"
tar czf "$root/logs.tgz" -C "$root" bench bench_run.log && rm -rf "$root/bench"
grep -A9 "^wait loops" "$root/bench_run.log"
