#!/usr/bin/env bash
# Issue 12, third device call: the suite bundle again (the CTA-pair leader-only kernel: the odd producer acquires), no benchmarks (run 8 measured them at this library).
# invalid module, the example crate's launcher) and the benchmarks, at the API v2 redesign.
set -u
root=$OUT
cd "$(dirname "$0")/.."
start=$(date +%s)
(OUT=$root/suite bash target/bundle/suite/run.sh) > "$root/suite_run.log" 2>&1
echo "suite run.sh exit $? after $(( $(date +%s) - start )) s" | tee -a "$root/suite_run.log"
tar czf "$root/logs.tgz" -C "$root" suite suite_run.log && rm -rf "$root/suite"
grep -E "passed|FAIL|PASS invalid|ERROR SUMMARY|example|SKIPPED" "$root/suite_run.log" | tail -n 14
grep -E "inflight|role_pair" "$root/suite_run.log" | head -20
