//! `cargo xtask test-nvidia`: builds the kernels' PTX and the cudarc harness, then runs the device
//! suite here, or writes a bundle that runs on a GPU machine without Rust.

use std::path::{Path, PathBuf};

use xshell::{Shell, cmd};

use crate::Result;
use crate::example;
use crate::gpu::{self, NVPTX};

/// The bundle's run script: a deliberately invalid module (the harness must fail with the setup
/// status), the suite, the suite under synccheck (reduced item counts), the sm_90a assembly of
/// the module, the SASS of the barrier probes, and the example kernel crate's launcher
/// (`@EXAMPLE@`, [`example::RUN_SH_SECTION`]). Logs go to `$OUT` if set, else to `out/` beside
/// the script. `@SETUP@`, `@NO_DRIVER@`, `@EXAMPLE@` and `@GEMM@` (the GEMM's test and its check
/// against cuBLAS, [`crate::gemm_kernel::run_sh_section`]) are filled in by [`run_sh`].
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
}

/// Builds the PTX, the harness (release), the example kernel crate with its launcher, and the
/// GEMM's test and benchmark (for its `--check` pass), and returns the harness path.
fn build(sh: &Shell) -> Result<std::path::PathBuf> {
    example::build(sh)?;
    gpu::build(sh, &NVPTX)?;
    gpu::build_checked(sh)?;
    gpu::build(sh, &gpu::NVPTX_SM100A)?;
    crate::gemm_kernel::build(sh)?;
    let commit = commit(sh);
    cmd!(sh, "cargo build --release -p gpu-gemm-host")
        .run()
        .map_err(|_| "building the GEMM test failed (above)".to_string())?;
    cmd!(sh, "cargo build --release -p pipeline-harness")
        .env("GPU_PIPELINE_COMMIT", &commit)
        .run()
        .map_err(|_| "building the harness failed (above)".to_string())?;
    // The GEMM's correctness pass against cuBLAS (`gemm-bench --check`).
    crate::gemm::build_bench(sh)?;
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
    let files: Vec<_> = files
        .into_iter()
        .chain(example::bundle_files())
        .chain(crate::gemm_kernel::bundle_files())
        .collect();
    write_bundle(sh, dir, &files, "run.sh", &run_sh())?;
    println!(
        "bundle written to {}: run `{}/run.sh` on a machine with an NVIDIA GPU and cuBLAS (no Rust needed)",
        dir.display(),
        dir.display()
    );
    Ok(())
}

/// The task. `ci`: a missing CUDA driver (and only that) is a SKIPPED line, not an error; see
/// [`verdict`].
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
        match verdict(what, output.status.code(), &stderr, ci) {
            Verdict::Passed => {}
            Verdict::Skipped(reason) => {
                // The other runs need the driver too.
                println!(
                    "test-nvidia: SKIPPED: {reason} (the harness and PTX were built; the checked-build suite and the broken kernels are skipped too)"
                );
                // The example's launcher and the GEMM test too: each must reach the same
                // verdict on its own.
                example::run(sh, ci)?;
                return crate::gemm_kernel::run(sh, ci);
            }
            Verdict::Failed(message) => return Err(message),
        }
    }
    example::run(sh, ci)?;
    crate::gemm_kernel::run(sh, ci)
}

/// What one run of the harness (or of the example's launcher, which uses the same statuses)
/// means for the task.
#[derive(Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Every test passed.
    Passed,
    /// Nothing could run because this machine has no CUDA driver (only in CI): the reason.
    Skipped(String),
    /// Anything else: the task's error message.
    Failed(String),
}

/// Runs `program` with `args` (a device program with the harness's exit statuses: the example's
/// launcher, the GEMM test), prints its output, and turns its status into the task's result by
/// [`verdict`]: in `ci`, only a missing driver is a SKIPPED line.
pub fn run_device_program(
    sh: &Shell,
    what: &str,
    program: &Path,
    args: &[&Path],
    ci: bool,
) -> Result {
    let output = cmd!(sh, "{program} {args...}")
        .ignore_status()
        .quiet()
        .output()
        .map_err(crate::err("cannot run a device program"))?;
    print!("{}", String::from_utf8_lossy(&output.stdout));
    let stderr = String::from_utf8_lossy(&output.stderr);
    match verdict(what, output.status.code(), &stderr, ci) {
        Verdict::Passed => Ok(()),
        Verdict::Skipped(reason) => {
            println!("{what}: SKIPPED: {reason}");
            Ok(())
        }
        Verdict::Failed(message) => Err(message),
    }
}

/// The verdict on the run `what` from the harness's exit status `code` (`None`: killed by a
/// signal) and its stderr; `ci`: running under `cargo xtask ci`. The statuses are
/// `pipeline_suite::exit`, which the harness uses too. Only a missing driver in CI is skipped:
/// a module the driver rejects, a failed allocation, an unsupported GPU fail like a failed test.
pub fn verdict(what: &str, code: Option<i32>, stderr: &str, ci: bool) -> Verdict {
    use pipeline_suite::exit;

    let said = stderr.trim();
    let line = said.strip_prefix("error: ").unwrap_or(said);
    // The harness's own words, after a summary that ends with "(above)" for stdout.
    let with_stderr = |summary: String| {
        if said.is_empty() {
            summary
        } else {
            format!("{summary}\n{said}")
        }
    };
    let Some(code) = code else {
        return Verdict::Failed(with_stderr(format!(
            "{what}: the harness was killed by a signal (output above)"
        )));
    };
    let status = u8::try_from(code).ok();
    Verdict::Failed(match status {
        Some(exit::PASSED) => return Verdict::Passed,
        Some(exit::NO_DRIVER) if ci => return Verdict::Skipped(line.to_string()),
        Some(exit::NO_DRIVER) => format!(
            "{what}: no CUDA driver on this machine (libcuda.so cannot be loaded); run `cargo xtask test-nvidia --bundle DIR`, copy DIR to a machine with an NVIDIA GPU and run DIR/run.sh there"
        ),
        Some(exit::SETUP) => format!("{what}: CUDA setup error: {line}"),
        Some(exit::TEST_FAILED) => with_stderr(format!("{what}: a test failed (above)")),
        Some(exit::HUNG) => with_stderr(format!(
            "{what}: a kernel hung; the harness stopped at that test (above)"
        )),
        Some(exit::USAGE) => format!(
            "{what}: the harness refused the command line the xtask gave it (an xtask bug): {line}"
        ),
        _ => with_stderr(format!(
            "{what}: the harness ended with exit status {code}, which is none of `pipeline_suite::exit` (a panic is 101)"
        )),
    })
}

#[cfg(test)]
mod tests {
    use super::{Verdict, run_sh, verdict};
    use pipeline_suite::exit;

    const NO_DRIVER_LINE: &str = "error: no CUDA driver found (libcuda.so could not be loaded); run on a machine with an NVIDIA GPU and its driver\n";
    const REJECTED_LINE: &str = "error: the driver rejected the PTX module: DriverError(CUDA_ERROR_INVALID_IMAGE, \"device kernel image is invalid\")\n";

    fn code(status: u8) -> Option<i32> {
        Some(i32::from(status))
    }

    fn failed(verdict: Verdict) -> String {
        match verdict {
            Verdict::Failed(message) => message,
            other => panic!("expected a failure, got {other:?}"),
        }
    }

    #[test]
    fn passed_is_passed_in_both_modes() {
        for ci in [false, true] {
            assert_eq!(
                verdict("suite", code(exit::PASSED), "", ci),
                Verdict::Passed
            );
        }
    }

    #[test]
    fn no_driver_in_ci_is_skipped_with_the_reason() {
        assert_eq!(
            verdict("suite", code(exit::NO_DRIVER), NO_DRIVER_LINE, true),
            Verdict::Skipped(
                "no CUDA driver found (libcuda.so could not be loaded); run on a machine with an NVIDIA GPU and its driver".into()
            )
        );
    }

    #[test]
    fn no_driver_outside_ci_is_an_error_that_points_to_the_bundle() {
        let message = failed(verdict(
            "device suite",
            code(exit::NO_DRIVER),
            NO_DRIVER_LINE,
            false,
        ));
        assert!(message.contains("no CUDA driver"), "{message}");
        assert!(
            message.contains("cargo xtask test-nvidia --bundle DIR"),
            "{message}"
        );
        assert_eq!(message.lines().count(), 1, "{message}");
    }

    #[test]
    fn a_rejected_module_is_an_error_in_both_modes() {
        for ci in [false, true] {
            let message = failed(verdict(
                "device suite",
                code(exit::SETUP),
                REJECTED_LINE,
                ci,
            ));
            assert!(message.contains("device suite"), "{message}");
            assert!(message.contains("CUDA_ERROR_INVALID_IMAGE"), "{message}");
            assert!(!message.contains("SKIPPED"), "{message}");
        }
    }

    #[test]
    fn a_failed_test_and_a_hung_kernel_are_errors_in_both_modes() {
        for ci in [false, true] {
            let message = failed(verdict("device suite", code(exit::TEST_FAILED), "", ci));
            assert!(message.contains("failed"), "{message}");
            let message = failed(verdict("device suite", code(exit::HUNG), "", ci));
            assert!(message.contains("hung"), "{message}");
        }
    }

    #[test]
    fn a_usage_error_is_an_error_in_both_modes_not_a_skip() {
        for ci in [false, true] {
            let message = failed(verdict(
                "device suite",
                code(exit::USAGE),
                "error: unknown argument `--bogus`\nusage: pipeline-harness ...\n",
                ci,
            ));
            assert!(message.contains("--bogus"), "{message}");
        }
    }

    #[test]
    fn unknown_statuses_and_signals_are_errors_in_both_modes() {
        for ci in [false, true] {
            for status in [6, 9, 101, 124, 137, 255, -1] {
                let message = failed(verdict("device suite", Some(status), "boom\n", ci));
                assert!(message.contains(&status.to_string()), "{message}");
                assert!(message.contains("boom"), "{message}");
            }
            let message = failed(verdict("device suite", None, "", ci));
            assert!(message.contains("signal"), "{message}");
        }
    }

    #[test]
    fn every_status_of_the_harness_has_a_meaning() {
        for status in [
            exit::PASSED,
            exit::TEST_FAILED,
            exit::USAGE,
            exit::HUNG,
            exit::NO_DRIVER,
            exit::SETUP,
        ] {
            assert!(exit::meaning(i32::from(status)).is_some(), "{status}");
        }
        assert_eq!(exit::meaning(101), None);
    }

    #[test]
    fn run_sh_requires_the_setup_status_for_an_invalid_module() {
        let script = run_sh();
        for placeholder in ["@SETUP@", "@NO_DRIVER@", "@EXAMPLE@", "@GEMM@"] {
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
}
