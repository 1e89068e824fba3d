#!/usr/bin/env bash
# Fifth device call: the benchmarks with the C++ twins waiting as the library does; every log
# packed in one archive.
set -u
root=$OUT
cd "$(dirname "$0")/.."
(OUT=$root/bench BENCH_TIMEOUT=300 bash target/bundle/bench/run_bench.sh) > "$root/bench_run.log" 2>&1
echo "run_bench.sh exit $?" | tee -a "$root/bench_run.log"
tar czf "$root/logs.tgz" -C "$root" bench bench_run.log && rm -rf "$root/bench"
grep -A9 "^wait loops" "$root/bench_run.log"
grep -A22 "^cycles per round" "$root/bench_run.log"
grep -E "^elected .*direct" "$root/bench_run.log" | head -16
