#!/usr/bin/env bash
# One device call: the suite bundle (invalid module, suite, checked suite, broken kernels,
# synccheck, ptxas), the benchmarks, then the split tests against the library at a8da397 (the
# defect's evidence: they must fail there).
set -u
root=$OUT
cd "$(dirname "$0")/.."
start=$(date +%s)
(OUT=$root/suite bash target/bundle/suite/run.sh) > "$root/suite_run.log" 2>&1
echo "suite run.sh exit $? after $(( $(date +%s) - start )) s" | tee -a "$root/suite_run.log"
(OUT=$root/bench BENCH_TIMEOUT=300 bash target/bundle/bench/run_bench.sh) > "$root/bench_run.log" 2>&1
echo "run_bench.sh exit $? after $(( $(date +%s) - start )) s" | tee -a "$root/bench_run.log"
timeout -k 5 90 target/bundle/suite/pipeline-harness --ptx target/old-a8da397-kernels.ptx --filter split --timeout-s 10 > "$root/old_split.log" 2>&1
echo "harness on the a8da397 library's split kernels: exit $? after $(( $(date +%s) - start )) s" | tee -a "$root/old_split.log"
grep -E "passed|FAIL|SKIPPED|PASS invalid|ERROR SUMMARY|exit" "$root/suite_run.log" | tail -n 20
grep -E "^(round trip|ring|counter ring|elected s2, 1 consumer warp, per-warp)" "$root/bench/bench.log" | head -n 30
tail -n 12 "$root/bench/bench.log"
tail -n 8 "$root/old_split.log"
