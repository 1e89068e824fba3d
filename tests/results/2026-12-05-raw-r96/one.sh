#!/usr/bin/env bash
# Run 96, one call (carry bundle/r96), cut to 560 s, for a session that may get one machine only:
# first what checks the code that has not yet run on a GPU (the full gemm-test and attention-test
# on production, the programmatic and capture negative controls, the step kernels exact with
# stream-K among them, exp_fma_3 against its bound), then the measurements that decide defaults:
# stream-K against every kernel and cuBLAS on the shapes it is for, attention's variants at seq 8k
# (lazy_rescale, built at the next commit from the same kernel sources plus that feature)
# beside cuDNN (D 64 with the 192-row kernel too), host time.
set -u; START=$(date +%s); BUDGET=${BUDGET:-560}
pack() { tar czf /tmp/one-out.tgz -C "$OUT" . && rm -rf "$OUT"/* && mv /tmp/one-out.tgz "$OUT/one-out.tgz"; ls -la "$OUT"; }
trap pack EXIT
here=$(cd "$(dirname "$0")" && pwd)
left() { local l=$(( BUDGET - $(date +%s) + START )); [ $l -lt 1 ] && l=1; [ $l -lt $1 ] && echo $l || echo $1; }
for dir in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$dir" ] && export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
cd "$here/gemm"; echo "gemm commit $(cat COMMIT)"
t0=$(date +%s); timeout -k 5 $(left 170) ./gemm-test gpu_gemm.ptx > $OUT/gemm-test.log 2>&1; echo "gemm-test rc=$? $(( $(date +%s) - t0 ))s"
grep -E "^FAIL|passed|programmatic|prepare_on" $OUT/gemm-test.log | cut -c1-200 | tail -14
t0=$(date +%s); timeout -k 5 $(left 30) ./gemm-test gpu_gemm_unwaited.ptx --programmatic > $OUT/unwaited.log 2>&1
echo "unwaited rc=$? (must be 1) $(( $(date +%s) - t0 ))s"; grep -E "^(PASS|FAIL)|passed" $OUT/unwaited.log | cut -c1-200
t0=$(date +%s); timeout -k 5 $(left 70) ./gemm-test gpu_gemm_steps.ptx --steps --quick > $OUT/steps-test.log 2>&1
echo "gemm-test --steps rc=$? $(( $(date +%s) - t0 ))s"; grep -E "^FAIL|passed" $OUT/steps-test.log | tail -6
cd "$here"; echo "attention commit $(cat COMMIT)"
t0=$(date +%s); timeout -k 5 $(left 100) ./attention-test gpu_attention.ptx > $OUT/attention-test.log 2>&1
echo "attention-test rc=$? $(( $(date +%s) - t0 ))s"; grep -E "^FAIL|passed|programmatic|capture" $OUT/attention-test.log | cut -c1-200 | head -14
t0=$(date +%s); timeout -k 5 $(left 20) ./attention-test-before gpu_attention.ptx --capture > $OUT/attention-capture-before.log 2>&1
echo "capture tests, host without the capture check: rc=$? (must be 1) $(( $(date +%s) - t0 ))s"; grep -E "^(PASS|FAIL)|passed" $OUT/attention-capture-before.log | cut -c1-220
t0=$(date +%s); timeout -k 5 $(left 25) ./attention-test gpu_attention_unwaited.ptx --programmatic > $OUT/attention-unwaited.log 2>&1
echo "attention unwaited rc=$? (must be 1) $(( $(date +%s) - t0 ))s"; grep -E "^(PASS|FAIL)|passed" $OUT/attention-unwaited.log | cut -c1-200
t0=$(date +%s); GPU_ATTENTION_MODULE=$here/gpu_attention.ptx timeout -k 5 $(left 70) python3 sdpa_test.py --lib ./libattention_bench.so > $OUT/sdpa.log 2> $OUT/sdpa.err
echo "sdpa_test rc=$? $(( $(date +%s) - t0 ))s"; grep -E "^FAIL|^SKIPPED|^sdpa-test" $OUT/sdpa.log | cut -c1-220 | tail -8; tail -3 $OUT/sdpa.err
t0=$(date +%s); GPU_ATTENTION_MODULE=$here/gpu_attention.ptx timeout -k 5 $(left 20) python3 sdpa_test.py --lib ./libattention_bench.so --cases 4 --perturb > $OUT/sdpa-perturb.log 2>&1
echo "sdpa_test --perturb rc=$? (must be 1) $(( $(date +%s) - t0 ))s"; grep -E "^sdpa-test" $OUT/sdpa-perturb.log
t0=$(date +%s); GPU_ATTENTION_MODULE=$here/gpu_attention_lazy_rescale.ptx timeout -k 5 $(left 40) python3 sdpa_test.py --lib ./libattention_bench.so --cases 24 --seed 2 > $OUT/sdpa-lazy.log 2>&1
echo "sdpa_test lazy_rescale rc=$? $(( $(date +%s) - t0 ))s"; grep -E "^FAIL|^sdpa-test" $OUT/sdpa-lazy.log | cut -c1-220 | tail -4
t0=$(date +%s); timeout -k 5 $(left 25) ./attention-test gpu_attention_lazy_rescale.ptx --quick > $OUT/attention-test-lazy.log 2>&1
echo "attention-test lazy_rescale rc=$? $(( $(date +%s) - t0 ))s"; grep -E "^FAIL|passed" $OUT/attention-test-lazy.log | head -4
t0=$(date +%s); timeout -k 5 $(left 25) ./attention-test gpu_attention_exp_fma_3.ptx --quick --exp-error=1.1e-4 > $OUT/attention-test-exp3.log 2>&1
echo "attention-test exp_fma_3 rc=$? $(( $(date +%s) - t0 ))s"; grep -E "^FAIL|passed" $OUT/attention-test-exp3.log | head -4
ab() { # name module only-d [env...]
  local name=$1 file=$2 d=$3; shift 3
  t0=$(date +%s)
  env "$@" GPU_ATTENTION_MODULE=$here/$file timeout -k 5 $(left 30) python3 bench_attention.py --lib ./libattention_bench.so --anchor none --impls ours,cudnn --shapes paper --only-seq 8192 $d --rounds 3 --reps 5 --warmup 2 --csv $OUT/ab-$name.csv > $OUT/ab-$name.log 2>&1
  echo "ab $name rc=$? $(( $(date +%s) - t0 ))s"; grep -E "^paper|error|Traceback" $OUT/ab-$name.log | sed 's/\[max.*//' | tail -7
}
ab production gpu_attention.ptx "" X=1
ab lazy_rescale gpu_attention_lazy_rescale.ptx "" X=1
ab late_rescale gpu_attention_late_rescale.ptx "" X=1
ab exp_fma_3 gpu_attention_exp_fma_3.ptx "" X=1
ab m192 gpu_attention.ptx "--only-d 64" GPU_ATTENTION_CONSUMERS=3
cd "$here/gemm"
SK=768x3072x2048,512x4608x3584,384x6144x4096,1024x4608x3584,768x6144x4096,192x10240x8192,256x4608x3584,768x3584x3584,128x3072x2048,1024x3072x2048,8192x8192x8192
t0=$(date +%s); timeout -k 5 $(left 120) ./gemm-bench --ours-module gpu_gemm_steps.ptx --shapes $SK --reps 8 --warmup 2 --csv $OUT/stream-k.csv > $OUT/stream-k.log 2>&1; echo "stream-k rc=$? $(( $(date +%s) - t0 ))s"
python3 - "$OUT/stream-k.csv" <<'PY' 2>&1 | head -40
import csv, sys, collections
rows = list(csv.DictReader(open(sys.argv[1])))
by = collections.defaultdict(dict)
for r in rows: by[r["shape"]][r["implementation"]] = float(r["median_ms"])
for s, d in by.items():
    cub = min(d.get("cublasGemmEx", 9e9), d.get("cublasLt-heuristic", 9e9))
    keys = ["ours", "ours-persistent", "ours-persistent-sk", "ours-persistent-128", "ours-persistent-128-sk", "ours-cluster", "ours-cluster-sk"]
    print(s, " ".join(f"{k[5:] or 'default'}={cub / d[k]:.3f}" for k in keys if k in d))
PY
t0=$(date +%s); timeout -k 5 $(left 50) ./gemm-bench --host-time --ours-module gpu_gemm.ptx --reps 10 --csv $OUT/host-time.csv > $OUT/host-time.log 2>&1
echo "host-time rc=$? $(( $(date +%s) - t0 ))s"; grep -E "^==|run-hit|launch-raw|graph|cublas" $OUT/host-time.log | head -24
