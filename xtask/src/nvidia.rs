//! `cargo xtask test-nvidia`: builds the kernels' PTX and the cudarc harness, then runs the device
//! suite here, or writes a bundle that runs on a GPU machine without Rust.

use std::path::{Path, PathBuf};

use xshell::{Shell, cmd};

use crate::Result;
use crate::gpu::{self, NVPTX};

/// The bundle's run script: the suite, the suite under synccheck (reduced item counts), the
/// sm_90a assembly of the module, and the SASS of the barrier probes. Logs go to `$OUT` if set,
/// else to `out/` beside the script.
const RUN_SH: &str = r#"#!/usr/bin/env bash
# The gpu-pipeline device suite, self-contained: needs an NVIDIA driver, and CUDA's
# compute-sanitizer, ptxas and cuobjdump for the extra checks (skipped, and said so, when absent).
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-$here/out}
mkdir -p "$out"
status=0
{
  echo "commit: $(cat "$here/COMMIT")"
  echo "date:   $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.sm --format=csv 2>&1 || echo "nvidia-smi: not available"
} | tee "$out/machine.txt"

echo "== device suite"
# Every run is bounded: a hung kernel must never hold the machine.
timeout -k 10 180 "$here/pipeline-harness" --ptx "$here/pipeline_kernels.ptx" "$@" 2>&1 | tee "$out/suite.log"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1

echo "== device suite, checked build (hang diagnostics on: bounded waits, arrival shadows; quick)"
timeout -k 10 180 "$here/pipeline-harness" --ptx "$here/pipeline_kernels_checked.ptx" --quick 2>&1 | tee "$out/suite_checked.log"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1

echo "== broken kernels, checked build: each must end within 1 s with the right diagnosis"
timeout -k 10 300 "$here/pipeline-harness" --ptx "$here/pipeline_kernels_checked.ptx" --broken 2>&1 | tee "$out/broken.log"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1

echo "== device suite under compute-sanitizer --tool synccheck (quick: reduced item counts)"
if command -v compute-sanitizer >/dev/null; then
  timeout -k 10 240 compute-sanitizer --tool synccheck --error-exitcode 9 "$here/pipeline-harness" --ptx "$here/pipeline_kernels.ptx" --quick --timeout-s 60 >"$out/synccheck.log" 2>&1
  rc=$?
  tail -n 4 "$out/synccheck.log"
  [ $rc -eq 0 ] || { echo "synccheck run failed (exit $rc)"; status=1; }
else
  echo "SKIPPED: compute-sanitizer not found"
fi

echo "== ptxas -arch=sm_90a and the SASS of the barrier probes"
if command -v ptxas >/dev/null && command -v cuobjdump >/dev/null; then
  if timeout 120 ptxas -arch=sm_90a "$here/pipeline_kernels.ptx" -o "$out/kernels_sm90a.cubin" 2>"$out/ptxas.log"; then
    echo "ptxas: the module assembles for sm_90a"
    cuobjdump --dump-sass "$out/kernels_sm90a.cubin" > "$out/sass_all.txt"
    awk '/Function : probe_/{p=1} /Function : [^p]/{p=0} p' "$out/sass_all.txt" > "$out/sass_probes.txt"
    echo "SASS of the probes written ($(grep -c 'Function : probe_' "$out/sass_probes.txt") functions)"
    rm -f "$out/sass_all.txt" "$out/kernels_sm90a.cubin"
  else
    cat "$out/ptxas.log"; echo "ptxas rejected the module"; status=1
  fi
else
  echo "SKIPPED: ptxas/cuobjdump not found"
fi

echo "== ptxas -arch=sm_100a: commit_mma (tcgen05.commit) assembles for Blackwell (not runnable on this GPU)"
if command -v ptxas >/dev/null && command -v cuobjdump >/dev/null; then
  if timeout 120 ptxas -arch=sm_100a "$here/pipeline_kernels_sm100a.ptx" -o "$out/kernels_sm100a.cubin" 2>"$out/ptxas_sm100a.log"; then
    echo "ptxas: the sm_100a module assembles"
    cuobjdump --dump-sass "$out/kernels_sm100a.cubin" | awk '/Function : probe_commit_mma/{p=1} /Function : [^p]/{p=0} /Function : probe_[^c]/{p=0} p' > "$out/sass_sm100a_commit_mma.txt"
    grep -E "Function|UTCBAR|ELECT" "$out/sass_sm100a_commit_mma.txt" | sed 's@/\*[^*]*\*/@@g' | head -20
    rm -f "$out/kernels_sm100a.cubin"
  else
    cat "$out/ptxas_sm100a.log"; echo "ptxas rejected the sm_100a module"; status=1
  fi
else
  echo "SKIPPED: ptxas/cuobjdump not found"
fi
exit $status
"#;

/// Builds the PTX and the harness (release), and returns the harness path.
fn build(sh: &Shell) -> Result<std::path::PathBuf> {
    gpu::build(sh, &NVPTX)?;
    gpu::build_checked(sh)?;
    gpu::build(sh, &gpu::NVPTX_SM100A)?;
    let commit = commit(sh);
    cmd!(sh, "cargo build --release -p pipeline-harness")
        .env("GPU_PIPELINE_COMMIT", &commit)
        .run()
        .map_err(|_| "building the harness failed (above)".to_string())?;
    Ok(crate::root().join("target/release/pipeline-harness"))
}

/// The current commit, marked `-dirty` when the tree has changes.
pub fn commit(sh: &Shell) -> String {
    let head = cmd!(sh, "git rev-parse --short=12 HEAD")
        .quiet()
        .ignore_stderr()
        .read()
        .unwrap_or_else(|_| "unknown".into());
    let dirty = cmd!(sh, "git status --porcelain")
        .quiet()
        .ignore_stderr()
        .read()
        .map(|s| !s.trim().is_empty())
        .unwrap_or(false);
    if dirty { format!("{head}-dirty") } else { head }
}

/// Writes a bundle directory: `files` copied in (source, name), `COMMIT`, and an executable
/// `script_name` with `script`. Shared by the suite and the benchmark bundles.
pub fn write_bundle(
    sh: &Shell,
    dir: &Path,
    files: &[(PathBuf, &str)],
    script_name: &str,
    script: &str,
) -> Result {
    sh.create_dir(dir)
        .map_err(crate::err("create the bundle directory"))?;
    for (from, to) in files {
        sh.copy_file(from, dir.join(to))
            .map_err(crate::err("copy into the bundle"))?;
    }
    sh.write_file(dir.join("COMMIT"), commit(sh))
        .map_err(crate::err("write COMMIT"))?;
    let script_path = dir.join(script_name);
    sh.write_file(&script_path, script)
        .map_err(crate::err("write the bundle's script"))?;
    cmd!(sh, "chmod +x {script_path}")
        .run()
        .map_err(crate::err("chmod"))?;
    Ok(())
}

/// Writes the self-contained suite bundle into `dir`.
fn bundle(sh: &Shell, harness: &Path, dir: &Path) -> Result {
    let files = [
        (harness.to_path_buf(), "pipeline-harness"),
        (NVPTX.kernels_artifact(), "pipeline_kernels.ptx"),
        (
            gpu::NVPTX_SM100A.kernels_artifact(),
            "pipeline_kernels_sm100a.ptx",
        ),
        (gpu::checked_artifact(), "pipeline_kernels_checked.ptx"),
    ];
    write_bundle(sh, dir, &files, "run.sh", RUN_SH)?;
    println!(
        "bundle written to {}: run `{}/run.sh` on a machine with an NVIDIA GPU (no Rust needed)",
        dir.display(),
        dir.display()
    );
    Ok(())
}

/// The task. `ci`: a missing driver is a SKIPPED line, not an error.
pub fn test(
    sh: &Shell,
    bundle_dir: Option<&Path>,
    quick: bool,
    filter: Option<&str>,
    ci: bool,
) -> Result {
    let harness = build(sh)?;
    if let Some(dir) = bundle_dir {
        return bundle(sh, &harness, dir);
    }
    let unchecked = NVPTX.kernels_artifact().display().to_string();
    let checked = gpu::checked_artifact().display().to_string();
    // The suite; the suite on the checked build (no false alarms); the broken kernels.
    let runs: [(&str, &str, &[&str]); 3] = [
        ("device suite", &unchecked, &[]),
        ("device suite, checked build", &checked, &["--quick"]),
        ("broken kernels, checked build", &checked, &["--broken"]),
    ];
    for (what, ptx, extra) in runs {
        let mut args = vec!["--ptx".to_string(), ptx.to_string()];
        args.extend(extra.iter().map(|a| a.to_string()));
        if quick && !args.iter().any(|a| a == "--quick" || a == "--broken") {
            args.push("--quick".into());
        }
        if let Some(filter) = filter {
            args.extend(["--filter".to_string(), filter.to_string()]);
        }
        println!("== {what}");
        let output = cmd!(sh, "{harness} {args...}")
            .ignore_status()
            .quiet()
            .output()
            .map_err(crate::err("cannot run the harness"))?;
        print!("{}", String::from_utf8_lossy(&output.stdout));
        let stderr = String::from_utf8_lossy(&output.stderr);
        match output.status.code() {
            Some(0) => {}
            Some(2) if ci => {
                println!(
                    "test-nvidia: SKIPPED: {} (the harness and PTX were built)",
                    stderr.trim().trim_start_matches("error: ")
                );
                return Ok(());
            }
            Some(2) => {
                return Err(format!(
                    "{}; to run elsewhere: `cargo xtask test-nvidia --bundle DIR`, copy DIR to the GPU machine, run DIR/run.sh",
                    stderr.trim().trim_start_matches("error: ")
                ));
            }
            _ => {
                eprint!("{stderr}");
                return Err(format!("{what} failed (above)"));
            }
        }
    }
    Ok(())
}
