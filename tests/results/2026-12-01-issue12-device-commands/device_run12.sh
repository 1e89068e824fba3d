#!/usr/bin/env bash
# Issue 12, fifth device call (run 12): the CTA-pair kernels of issue 12's suite (role_pair_s*,
# role_pair_both_s*) built against the library before API v2 (30d0e8a, with tests/kernels/src/role.rs
# and the role-pair list taken from issue 12), run by that tree's harness: the odd CTA's producer
# of role_pair_both must hang there (it waits on consumer barriers only the leader's release fed).
set -u
cd "$(dirname "$0")/.."
./target/bundle-old/pipeline-harness --ptx target/bundle-old/pipeline_kernels.ptx --filter role_pair --timeout-s 10 > "$OUT/role-pair-on-30d0e8a.log" 2>&1
echo "harness exit $?" >> "$OUT/role-pair-on-30d0e8a.log"
cat "$OUT/role-pair-on-30d0e8a.log"
# Second command of run 12 (same device session), one kernel on its own after the first hang:
# ./target/bundle-old/pipeline-harness --ptx target/bundle-old/pipeline_kernels.ptx --filter role_pair_both --timeout-s 10
