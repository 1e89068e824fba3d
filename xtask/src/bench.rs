//! `cargo xtask bench-nvidia`: the benchmark kernels written with the library against their
//! hand-written CUDA C++ twins (`tests/bench/bench.cu`), side by side in one process.

use std::path::Path;

use xshell::{Shell, cmd};

use crate::Result;
use crate::gpu::{self, NVPTX};

/// The bundle's run script: compile the C++ twins with nvcc, assemble the Rust PTX with the same
/// ptxas, run both alternately, compare their SASS, and plot.
const RUN_BENCH_SH: &str = r#"#!/usr/bin/env bash
# gpu-pipeline benchmarks, self-contained: needs an NVIDIA driver and the CUDA toolkit (nvcc, ptxas,
# cuobjdump), and python3 with matplotlib for the plot. Results go to $OUT (or out/ beside this).
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-$here/out}
mkdir -p "$out"
{
  echo "commit: $(cat "$here/COMMIT")"
  echo "date:   $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.sm,clocks.mem --format=csv 2>&1
  nvcc --version | tail -n 2
} | tee "$out/machine.txt"
command -v nvcc >/dev/null || { echo "error: nvcc not found: the C++ baseline needs the CUDA toolkit"; exit 2; }
echo "== nvcc -arch=sm_90a -cubin bench.cu; ptxas -arch=sm_90a the Rust PTX"
timeout 300 nvcc -arch=sm_90a -O3 -cubin -o "$out/bench_cpp.cubin" "$here/bench.cu" || { echo "nvcc failed"; exit 1; }
timeout 300 ptxas -arch=sm_90a -O3 "$here/pipeline_kernels.ptx" -o "$out/bench_rust.cubin" || { echo "ptxas failed"; exit 1; }
# The same kernels built with the library's `checked` feature, for the cost of hang diagnostics.
timeout 300 ptxas -arch=sm_90a -O3 "$here/pipeline_kernels_checked.ptx" -o "$out/bench_rust_checked.cubin" || { echo "ptxas (checked) failed"; exit 1; }
# The C++-only counter variants that need PTX ISA 8.6, each in its own cubin: a toolkit without
# those forms loses only their rows.
extra=()
for v in RESTRICT FENCE_RELEASE; do
  if timeout 120 nvcc -arch=sm_90a -O3 -cubin -DBENCH_ONLY_$v -o "$out/bench_cpp_$v.cubin" "$here/bench.cu"; then
    extra+=(--cpp-extra "$out/bench_cpp_$v.cubin")
  else
    echo "nvcc -DBENCH_ONLY_$v failed: those variant rows stay empty"
  fi
done
echo "== benchmarks"
timeout -k 10 ${BENCH_TIMEOUT:-330} "$here/pipeline-bench" --rust-ptx "$here/pipeline_kernels.ptx" --rust-cubin "$out/bench_rust.cubin" \
  --cpp-cubin "$out/bench_cpp.cubin" "${extra[@]}" --checked-cubin "$out/bench_rust_checked.cubin" --out "$out" "$@" 2>&1 | tee "$out/bench.log"
status=${PIPESTATUS[0]}
echo "== SASS instruction counts, Rust vs C++ (sm_90a)"
cuobjdump --dump-sass "$out/bench_rust.cubin" > "$out/rust.sass"
cuobjdump --dump-sass "$out/bench_cpp.cubin" > "$out/cpp.sass"
for v in RESTRICT FENCE_RELEASE; do
  [ -f "$out/bench_cpp_$v.cubin" ] && cuobjdump --dump-sass "$out/bench_cpp_$v.cubin" >> "$out/cpp.sass"
done
python3 "$here/sass_compare.py" "$out/rust.sass" "$out/cpp.sass" | tee "$out/sass_compare.txt"
for k in bench_roundtrip_mbar bench_roundtrip_counter; do
  for side in rust cpp; do
    awk -v k="$k" '$0 ~ "Function : "k"$" {p=1; next} /Function :/ {p=0} p' "$out/$side.sass" \
      | grep -E '^\s+/\*[0-9a-f]{4}\*/' | grep -v NOP | sed -e 's@/\*[0-9a-f]*\*/@@' -e 's@ */\* 0x[0-9a-f]* \*/@@' > "$out/sass_${k}_$side.txt"
  done
done
# The counter kernels and their variants, whole, for reading the arrive and wait.
for side in rust cpp; do
  awk '/Function :/ {p = ($3 ~ /^(var_|bench_ring_counter|bench_roundtrip_counter)/)} p' "$out/$side.sass" \
    | grep -E 'Function :|^\s+/\*[0-9a-f]{4}\*/' | grep -v NOP | sed -e 's@/\*[0-9a-f]*\*/@@' -e 's@ */\* 0x[0-9a-f]* \*/@@' > "$out/sass_counter_variants_$side.txt"
done
rm -f "$out/rust.sass" "$out/cpp.sass" "$out"/*.cubin
echo "== plot"
python3 "$here/plot.py" "$out/bench.csv" "$out/bench.png" && echo "plot written: bench.png"
exit $status
"#;

/// Builds the PTX and the bench binary, and writes the bundle into `dir`. Checks first that the PTX
/// holds every kernel the bench binary will launch (a missing one would only show on the GPU).
fn bundle(sh: &Shell, dir: &Path) -> Result {
    let ptx = gpu::build(sh, &NVPTX)?;
    let checked = gpu::build_checked(sh)?;
    let commit = crate::nvidia::commit(sh);
    cmd!(
        sh,
        "cargo build --release -p pipeline-harness --bin pipeline-bench"
    )
    .env("GPU_PIPELINE_COMMIT", &commit)
    .run()
    .map_err(|_| "building the bench binary failed (above)".to_string())?;
    let root = crate::root();
    let bench = root.join("target/release/pipeline-bench");
    let needed = cmd!(sh, "{bench} --list-kernels")
        .quiet()
        .read()
        .map_err(|_| "pipeline-bench --list-kernels failed".to_string())?;
    let ptx = std::fs::read_to_string(&ptx).map_err(crate::err("cannot read the PTX"))?;
    let missing: Vec<&str> = needed
        .lines()
        .filter(|k| !ptx.contains(&format!(".entry {k}(")))
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "the kernels' PTX lacks benchmark kernels the bench binary launches: {}",
            missing.join(", ")
        ));
    }
    let files = [
        (root.join("target/release/pipeline-bench"), "pipeline-bench"),
        (NVPTX.kernels_artifact(), "pipeline_kernels.ptx"),
        (checked, "pipeline_kernels_checked.ptx"),
        (root.join("tests/bench/bench.cu"), "bench.cu"),
        (root.join("tests/bench/sass_compare.py"), "sass_compare.py"),
        (root.join("tests/bench/plot.py"), "plot.py"),
    ];
    crate::nvidia::write_bundle(sh, dir, &files, "run_bench.sh", RUN_BENCH_SH)?;
    Ok(())
}

/// The task: with `bundle_dir`, only write the bundle; otherwise write it under `target/` and run
/// it here (which needs a GPU and the CUDA toolkit).
pub fn run(sh: &Shell, bundle_dir: Option<&Path>, quick: bool) -> Result {
    if let Some(dir) = bundle_dir {
        bundle(sh, dir)?;
        println!(
            "bench bundle written to {}: run `{}/run_bench.sh` on a machine with an NVIDIA GPU and the CUDA toolkit",
            dir.display(),
            dir.display()
        );
        return Ok(());
    }
    if cmd!(sh, "nvcc --version")
        .quiet()
        .ignore_stdout()
        .ignore_stderr()
        .run()
        .is_err()
    {
        return Err("nvcc not found: the C++ baseline is compiled with `nvcc -arch=sm_90a`; install the CUDA toolkit here, or use `cargo xtask bench-nvidia --bundle DIR` and run DIR/run_bench.sh on a GPU machine".into());
    }
    let dir = crate::root().join("target/bench-bundle");
    bundle(sh, &dir)?;
    let script = dir.join("run_bench.sh");
    let quick = if quick { vec!["--quick"] } else { vec![] };
    cmd!(sh, "{script} {quick...}")
        .run()
        .map_err(|_| "the benchmarks failed (above)".to_string())
}
