//! `cargo xtask bench-nvidia`: the benchmark kernels written with the library against their
//! hand-written CUDA C++ twins (`tests/bench/bench.cu`), side by side in one process.

use std::path::Path;

use xshell::{Shell, cmd};

use crate::gpu;
use crate::util::Result;

/// The bundle's run script: compile the C++ twins with nvcc and assemble the Rust PTX with the same
/// toolkit's ptxas (or take the cubins the build machine made with the same compiler version, in
/// `prebuilt/`), run both alternately, compare their SASS, and plot.
const RUN_BENCH_SH: &str = r#"#!/usr/bin/env bash
# gpu-pipeline benchmarks, self-contained: needs an NVIDIA driver, and the CUDA toolkit (nvcc, ptxas,
# cuobjdump) unless prebuilt/ holds the cubins; python3 for the plot (an SVG, standard library
# only). Results go to $OUT (or out/ beside this).
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-$here/out}
mkdir -p "$out"
{
  echo "commit: $(cat "$here/COMMIT")"
  echo "date:   $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.sm,clocks.mem --format=csv 2>&1
  command -v nvcc >/dev/null && nvcc --version | tail -n 2
} | tee "$out/machine.txt"
if [ -f "$here/prebuilt/bench_cpp.cubin" ]; then
  echo "== cubins compiled on the build machine (prebuilt/): $(cat "$here/prebuilt/TOOLKIT")" | tee -a "$out/machine.txt"
  cubins=$here/prebuilt
else
  command -v nvcc >/dev/null || { echo "error: nvcc not found: the C++ baseline needs the CUDA toolkit (or a bundle with prebuilt/)"; exit 2; }
  echo "== nvcc -arch=sm_90a -cubin bench.cu; ptxas -arch=sm_90a the Rust PTX"
  cubins=$out
  timeout 300 nvcc -arch=sm_90a -O3 -cubin -o "$out/bench_cpp.cubin" "$here/bench.cu" || { echo "nvcc failed"; exit 1; }
  timeout 300 ptxas -arch=sm_90a -O3 "$here/pipeline_kernels.ptx" -o "$out/bench_rust.cubin" || { echo "ptxas failed"; exit 1; }
  # The same kernels built with the library's `checked` feature, for the cost of hang diagnostics.
  timeout 300 ptxas -arch=sm_90a -O3 "$here/pipeline_kernels_checked.ptx" -o "$out/bench_rust_checked.cubin" || { echo "ptxas (checked) failed"; exit 1; }
fi
echo "== benchmarks"
timeout -k 10 ${BENCH_TIMEOUT:-330} "$here/pipeline-bench" --rust-cubin "$cubins/bench_rust.cubin" \
  --cpp-cubin "$cubins/bench_cpp.cubin" --checked-cubin "$cubins/bench_rust_checked.cubin" --out "$out" "$@" 2>&1 | tee "$out/bench.log"
status=${PIPESTATUS[0]}
if command -v cuobjdump >/dev/null; then
  echo "== SASS instruction counts, Rust vs C++ (sm_90a)"
  cuobjdump --dump-sass "$cubins/bench_rust.cubin" > "$out/rust.sass"
  cuobjdump --dump-sass "$cubins/bench_cpp.cubin" > "$out/cpp.sass"
  python3 "$here/sass_compare.py" "$out/rust.sass" "$out/cpp.sass" > "$out/sass_compare.txt"
  # Whole kernels for reading: the round trips, the counter ring, and one elected-lane ring in every
  # loop shape (where ptxas puts the YIELD of a wait loop).
  for k in bench_roundtrip_mbar_flat bench_roundtrip_counter_flat bench_ring_counter_s4_c1_thread_flat \
           bench_elect_s2_c1_warp_direct_llvm bench_elect_s2_c1_warp_direct_flat bench_elect_s2_c1_warp_direct_x4 \
           bench_elect_s2_c1_warp_flat bench_elect_s2_c1_warp_x4; do
    for side in rust cpp; do
      awk -v k="$k" '$0 ~ "Function : "k"$" {p=1; next} /Function :/ {p=0} p' "$out/$side.sass" \
        | grep -E '^\s+/\*[0-9a-f]{4}\*/' | grep -v NOP | sed -e 's@/\*[0-9a-f]*\*/@@' -e 's@ */\* 0x[0-9a-f]* \*/@@' > "$out/sass_${k}_$side.txt"
      [ -s "$out/sass_${k}_$side.txt" ] || rm -f "$out/sass_${k}_$side.txt"
    done
  done
  rm -f "$out/rust.sass" "$out/cpp.sass"
fi
rm -f "$out"/*.cubin
echo "== plot"
python3 "$here/plot.py" "$out/bench.csv" "$out/bench.svg" && echo "plot written: bench.svg"
exit $status
"#;

/// Builds the PTX and the bench binary, and writes the bundle into `dir`. Checks first that the PTX
/// holds every kernel the bench binary will launch (a missing one would only show on the GPU).
/// Where this machine has nvcc (the same toolkit version as the GPU machine, say), the cubins are
/// compiled here into `dir/prebuilt/`, so that the GPU machine only runs.
fn bundle(sh: &Shell, dir: &Path) -> Result {
    let ptx = gpu::build_bench(sh, false)?;
    let checked = gpu::build_bench(sh, true)?;
    let commit = crate::device::commit(sh);
    cmd!(
        sh,
        "cargo build --release -p pipeline-harness --bin pipeline-bench"
    )
    .env("GPU_PIPELINE_COMMIT", &commit)
    .run()
    .map_err(|_| "building the bench binary failed (above)".to_string())?;
    let root = crate::util::root();
    let bench = root.join("target/release/pipeline-bench");
    let needed = cmd!(sh, "{bench} --list-kernels")
        .quiet()
        .read()
        .map_err(|_| "pipeline-bench --list-kernels failed".to_string())?;
    let text = std::fs::read_to_string(&ptx).map_err(crate::util::err("cannot read the PTX"))?;
    let missing: Vec<&str> = needed
        .lines()
        .filter(|k| !text.contains(&format!(".entry {k}(")))
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "the kernels' PTX lacks benchmark kernels the bench binary launches: {}",
            missing.join(", ")
        ));
    }
    let mut files = vec![
        (bench, "pipeline-bench"),
        (root.join("tests/bench/bench.cu"), "bench.cu"),
        (root.join("tests/bench/sass_compare.py"), "sass_compare.py"),
        (root.join("tests/bench/plot.py"), "plot.py"),
    ];
    // With nvcc here the GPU machine gets the cubins (`prebuilt/`) and no PTX (the checked PTX
    // above all is large); without, it compiles the PTX itself.
    let prebuilt = has_nvcc(sh);
    if !prebuilt {
        files.push((ptx.clone(), "pipeline_kernels.ptx"));
        files.push((checked.clone(), "pipeline_kernels_checked.ptx"));
    }
    crate::device::write_bundle(sh, dir, &files, "run_bench.sh", RUN_BENCH_SH)?;
    if prebuilt {
        prebuild(sh, dir, &ptx, &checked)?;
    }
    Ok(())
}

/// Whether `nvcc` runs here.
fn has_nvcc(sh: &Shell) -> bool {
    cmd!(sh, "nvcc --version")
        .quiet()
        .ignore_stdout()
        .ignore_stderr()
        .run()
        .is_ok()
}

/// Compiles the C++ twins and assembles the Rust PTX (plain and checked) into `dir/prebuilt/` with
/// this machine's toolkit, and records its version in `prebuilt/TOOLKIT`.
fn prebuild(sh: &Shell, dir: &Path, ptx: &Path, checked: &Path) -> Result {
    let pre = dir.join("prebuilt");
    sh.create_dir(&pre)
        .map_err(crate::util::err("create prebuilt/"))?;
    let bench_cu = crate::util::root().join("tests/bench/bench.cu");
    let (cpp, rust, rust_checked) = (
        pre.join("bench_cpp.cubin"),
        pre.join("bench_rust.cubin"),
        pre.join("bench_rust_checked.cubin"),
    );
    println!("compiling the cubins here (nvcc found): {}", pre.display());
    cmd!(sh, "nvcc -arch=sm_90a -O3 -cubin -o {cpp} {bench_cu}")
        .quiet()
        .run()
        .map_err(|_| "nvcc bench.cu failed (above)".to_string())?;
    cmd!(sh, "ptxas -arch=sm_90a -O3 {ptx} -o {rust}")
        .run()
        .map_err(|_| "ptxas of the Rust PTX failed (above)".to_string())?;
    cmd!(sh, "ptxas -arch=sm_90a -O3 {checked} -o {rust_checked}")
        .run()
        .map_err(|_| "ptxas of the checked Rust PTX failed (above)".to_string())?;
    let version = cmd!(sh, "nvcc --version")
        .read()
        .map_err(crate::util::err("nvcc --version"))?;
    let last = version.lines().last().unwrap_or_default().to_string();
    sh.write_file(
        pre.join("TOOLKIT"),
        format!("nvcc -arch=sm_90a -O3 -cubin, ptxas -arch=sm_90a -O3: {last}\n"),
    )
    .map_err(crate::util::err("write prebuilt/TOOLKIT"))?;
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
    if !has_nvcc(sh) {
        return Err("nvcc not found: the C++ baseline is compiled with `nvcc -arch=sm_90a`; install the CUDA toolkit here, or use `cargo xtask bench-nvidia --bundle DIR` and run DIR/run_bench.sh on a GPU machine".into());
    }
    let dir = crate::util::root().join("target/bench-bundle");
    bundle(sh, &dir)?;
    let script = dir.join("run_bench.sh");
    let quick = if quick { vec!["--quick"] } else { vec![] };
    cmd!(sh, "{script} {quick...}")
        .run()
        .map_err(|_| "the benchmarks failed (above)".to_string())
}
