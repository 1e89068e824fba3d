#!/usr/bin/env bash
# Seventh device call: the suite bundle again, after the review's refactor of the test kernels'
# block setup (the library is unchanged since run 6); every log packed in one archive.
set -u
root=$OUT
cd "$(dirname "$0")/.."
(OUT=$root/suite bash target/bundle/suite/run.sh) > "$root/suite_run.log" 2>&1
echo "suite run.sh exit $?" | tee -a "$root/suite_run.log"
tar czf "$root/logs.tgz" -C "$root" suite suite_run.log && rm -rf "$root/suite"
grep -E "passed|FAIL|PASS invalid|ERROR SUMMARY|exit" "$root/suite_run.log" | tail -n 10
