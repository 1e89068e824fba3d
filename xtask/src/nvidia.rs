//! `cargo xtask test-nvidia`: builds the kernels' PTX and the cudarc harness, then runs the device
//! suite here, or writes a bundle that runs on a GPU machine without Rust.

use std::path::Path;

use xshell::{Shell, cmd};

use crate::device::{self, Verdict};
use crate::example;
use crate::gpu::{self, NVPTX};
use crate::util::Result;

/// The bundle's run script: a deliberately invalid module (the harness must fail with the setup
/// status), the suite, the suite under synccheck (reduced item counts), the sm_90a assembly of
/// the module, the SASS of the barrier probes, and the examples: the kernel crate's launcher and
/// the GEMM example (`@EXAMPLE@`, [`example::RUN_SH_SECTION`]). Logs go to `$OUT` if set, else to `out/` beside
/// the script. `@SETUP@`, `@NO_DRIVER@`, `@EXAMPLE@`, `@GEMM@` (the GEMM's test and its check
/// against cuBLAS, [`crate::gemm_kernel::run_sh_section`]) and `@HOPPER@` (the toolkit's device
/// tests, [`crate::hopper::RUN_SH_SECTION`]) are filled in by [`run_sh`].
const RUN_SH: &str = r#"#!/usr/bin/env bash
# The gpu-pipeline device suite, self-contained: needs an NVIDIA driver, cuBLAS (CUDA 13:
# libcublas.so.13, libcublasLt.so.13) for the GEMM's check against it, and CUDA's
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

echo "== a module the driver rejects fails the harness (exit @SETUP@, CUDA setup error; not @NO_DRIVER@, no driver; not 0)"
# CI machines without a GPU may skip the suite only when the harness says "no driver"; this proves
# on the GPU that a rejected module is a failure with its own status, never that skip.
printf '.version 99.0\n.target sm_90\n.address_size 64\nthis is not PTX\n' > "$out/invalid.ptx"
timeout -k 10 60 "$here/pipeline-harness" --ptx "$out/invalid.ptx" >"$out/invalid_ptx.log" 2>&1
rc=$?
if [ $rc -eq @SETUP@ ]; then
  echo "PASS invalid module: exit $rc: $(tail -n 1 "$out/invalid_ptx.log")"
else
  echo "FAIL invalid module: the harness exited $rc, expected @SETUP@ (CUDA setup error):"
  cat "$out/invalid_ptx.log"
  status=1
fi
rm -f "$out/invalid.ptx"

echo "== device suite"
# Every run is bounded: a hung kernel must never hold the machine.
timeout -k 10 180 "$here/pipeline-harness" --ptx "$here/pipeline_kernels.ptx" "$@" 2>&1 | tee "$out/suite.log"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1

@EXAMPLE@

@GEMM@

@HOPPER@

@ATTENTION@

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

/// [`RUN_SH`] with the harness's exit statuses filled in from `pipeline_suite::exit`, and the
/// example's section.
fn run_sh() -> String {
    use pipeline_suite::exit;
    RUN_SH
        .replace("@SETUP@", &exit::SETUP.to_string())
        .replace("@NO_DRIVER@", &exit::NO_DRIVER.to_string())
        .replace("@EXAMPLE@", example::RUN_SH_SECTION)
        .replace("@GEMM@", &crate::gemm_kernel::run_sh_section())
        .replace("@HOPPER@", crate::hopper::RUN_SH_SECTION)
        .replace("@ATTENTION@", &crate::attention::run_sh_section())
}

/// Builds the PTX, the harness (release), the examples (the kernel crate with its launcher, the
/// GEMM example), the GEMM's test and benchmark (for its `--check` pass), and the toolkit's test
/// module and binary, and returns the harness path.
fn build(sh: &Shell) -> Result<std::path::PathBuf> {
    example::build(sh)?;
    gpu::build(sh, &NVPTX)?;
    gpu::build_checked(sh)?;
    gpu::build(sh, &gpu::NVPTX_SM100A)?;
    crate::gemm_kernel::build(sh)?;
    crate::gemm_kernel::build_unwaited(sh)?;
    crate::hopper::build(sh)?;
    crate::hopper::build_test(sh)?;
    crate::attention::build(sh)?;
    crate::attention::build_unwaited(sh)?;
    crate::attention::build_checked(sh)?;
    crate::attention::build_test(sh)?;
    let commit = device::commit(sh);
    cmd!(sh, "cargo build --release -p gemm-test")
        .run()
        .map_err(|_| "building the GEMM test failed (above)".to_string())?;
    cmd!(sh, "cargo build --release -p pipeline-harness")
        .env("GPU_PIPELINE_COMMIT", &commit)
        .run()
        .map_err(|_| "building the harness failed (above)".to_string())?;
    // The GEMM's correctness pass against cuBLAS (`gemm-bench --check`).
    crate::gemm_kernel::build_bench(sh)?;
    Ok(crate::util::root().join("target/release/pipeline-harness"))
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
    let files: Vec<_> = files
        .into_iter()
        .chain(example::bundle_files())
        .chain(crate::gemm_kernel::bundle_files())
        .chain(crate::hopper::bundle_files())
        .chain(crate::attention::bundle_files())
        .collect();
    device::write_bundle(sh, dir, &files, "run.sh", &run_sh())?;
    println!(
        "bundle written to {}: run `{}/run.sh` on a machine with an NVIDIA GPU and cuBLAS (no Rust needed)",
        dir.display(),
        dir.display()
    );
    Ok(())
}

/// The task. `ci`: a missing CUDA driver (and only that) is a SKIPPED line, not an error; see
/// [`device::verdict`].
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
            .map_err(crate::util::err("cannot run the harness"))?;
        print!("{}", String::from_utf8_lossy(&output.stdout));
        let stderr = String::from_utf8_lossy(&output.stderr);
        match device::verdict(what, output.status.code(), &stderr, ci) {
            Verdict::Passed => {}
            Verdict::Skipped(reason) => {
                // The other runs need the driver too.
                println!(
                    "test-nvidia: SKIPPED: {reason} (the harness and PTX were built; the checked-build suite and the broken kernels are skipped too)"
                );
                // The example's launcher, the GEMM test and the toolkit's test too: each must
                // reach the same verdict on its own.
                example::run(sh, ci)?;
                crate::gemm_kernel::run(sh, ci)?;
                crate::hopper::run(sh, ci)?;
                return crate::attention::run(sh, ci);
            }
            Verdict::Failed(message) => return Err(message),
        }
    }
    example::run(sh, ci)?;
    crate::gemm_kernel::run(sh, ci)?;
    crate::hopper::run(sh, ci)?;
    crate::attention::run(sh, ci)
}

#[cfg(test)]
mod tests {
    use super::run_sh;
    use pipeline_suite::exit;

    #[test]
    fn run_sh_requires_the_setup_status_for_an_invalid_module() {
        let script = run_sh();
        for placeholder in [
            "@SETUP@",
            "@NO_DRIVER@",
            "@EXAMPLE@",
            "@GEMM@",
            "@HOPPER@",
            "@ATTENTION@",
        ] {
            assert!(super::RUN_SH.contains(placeholder), "{placeholder}");
            assert!(!script.contains(placeholder), "{placeholder} left unfilled");
        }
        assert!(script.contains(".version 99.0"));
        assert!(script.contains(&format!("if [ $rc -eq {} ]; then", exit::SETUP)));
        assert!(script.contains("status=1"));
        assert_ne!(exit::SETUP, exit::NO_DRIVER);
        assert_ne!(exit::SETUP, exit::PASSED);
    }

    #[test]
    fn run_sh_runs_the_example_and_fails_unless_it_passes() {
        let script = run_sh();
        assert!(script.contains(crate::example::RUN_SH_SECTION));
        // Between the suite and the checked build, inside the run (before `exit $status`).
        let example = script.find("$here/example-launcher").unwrap();
        assert!(script.find("echo \"== device suite\"\n").unwrap() < example);
        assert!(example < script.find("exit $status").unwrap());
    }

    #[test]
    fn run_sh_runs_the_gemm_test_and_its_check_against_cublas() {
        let script = run_sh();
        assert!(script.contains(&crate::gemm_kernel::run_sh_section()));
        let test = script.find("\"$here/gemm-test\"").unwrap();
        let check = script.find("\"$here/gemm-bench\" --check").unwrap();
        assert!(test < check);
        assert!(check < script.find("exit $status").unwrap());
    }

    #[test]
    fn run_sh_runs_the_toolkit_tests_after_the_gemm_and_fails_unless_they_pass() {
        let script = run_sh();
        assert!(script.contains(crate::hopper::RUN_SH_SECTION));
        let test = script.find("\"$here/hopper-test\"").unwrap();
        assert!(script.find("\"$here/gemm-test\"").unwrap() < test);
        assert!(test < script.find("exit $status").unwrap());
    }
}
