#!/usr/bin/env bash
# Issue 22, run 47: the RolePipeline test kernels after they took the try/ticks/run-time-index
# forms: plain (full item counts), on the checked build, under synccheck.
set -u
here=$(cd "$(dirname "$0")" && pwd); out=${OUT:-$here/out}; mkdir -p "$out"; cd "$here"
echo "commit: $(cat COMMIT)"
timeout -k 5 120 ./pipeline-harness --ptx pipeline_kernels.ptx --filter role --timeout-s 30 > "$out/roles.log" 2>&1; echo "plain exit $?"; grep -E "^(PASS|FAIL)|passed" "$out/roles.log"
timeout -k 5 120 ./pipeline-harness --ptx pipeline_kernels_checked.ptx --filter role --quick --timeout-s 60 > "$out/roles_checked.log" 2>&1; echo "checked exit $?"; tail -n 1 "$out/roles_checked.log"
timeout -k 5 200 compute-sanitizer --tool synccheck --error-exitcode 9 ./pipeline-harness --ptx pipeline_kernels.ptx --filter role --quick --timeout-s 60 > "$out/roles_synccheck.log" 2>&1; echo "synccheck exit $?"; grep -E "passed|ERROR SUMMARY" "$out/roles_synccheck.log"
