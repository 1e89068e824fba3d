//! Running what the device runs: a device program's exit status read as the task's verdict (the
//! harness's statuses, `pipeline_suite::exit`), and bundles for a GPU machine without Rust
//! (files, the commit, a script). Used by every task that runs on or for the GPU; it imports
//! nothing of the crate but `util`.

use std::path::{Path, PathBuf};

use xshell::{Shell, cmd};

use crate::util::Result;

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
        .map_err(crate::util::err("create the bundle directory"))?;
    for (from, to) in files {
        sh.copy_file(from, dir.join(to))
            .map_err(crate::util::err("copy into the bundle"))?;
    }
    sh.write_file(dir.join("COMMIT"), commit(sh))
        .map_err(crate::util::err("write COMMIT"))?;
    let script_path = dir.join(script_name);
    sh.write_file(&script_path, script)
        .map_err(crate::util::err("write the bundle's script"))?;
    cmd!(sh, "chmod +x {script_path}")
        .run()
        .map_err(crate::util::err("chmod"))?;
    Ok(())
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
    run_judged(sh, what, program, args, |code, _, stderr| {
        verdict(what, code, stderr, ci)
    })
}

/// As [`run_device_program`] for a negative control: the program must end with a failed test
/// (`exit::TEST_FAILED`), and each test named in `failing` must be one of the failed (a `FAIL
/// <name>` line), which is a PASS line here; passing, or a named test passing, is an error (that
/// test cannot fail), and every other status is judged as [`verdict`] judges it (no driver in
/// CI is SKIPPED).
pub fn run_device_program_to_fail(
    sh: &Shell,
    what: &str,
    program: &Path,
    args: &[&Path],
    failing: &[&str],
    ci: bool,
) -> Result {
    run_judged(sh, what, program, args, |code, stdout, stderr| {
        let verdict = match to_fail(what, code, stderr, ci) {
            Verdict::Passed => each_failed(what, stdout, failing),
            other => other,
        };
        if verdict == Verdict::Passed {
            println!("PASS: {what} failed, as it must");
        }
        verdict
    })
}

/// The bundle sections' form of [`each_failed`], after a negative control whose output is
/// `$out/LOG`: each of `chains` must have a `FAIL NAME` line, and the programmatic refusal a
/// `PASS` line (a missing one sets the section's `status=1`).
pub fn each_chain_sh(log: &str, chains: &[&str]) -> String {
    format!(
        r#"for chain in {chains}; do
  grep -q "^FAIL $chain" "$out/{log}" || {{ echo "FAIL: $chain passed on the unwaited module: it cannot show a missing wait"; status=1; }}
done
grep -q "^PASS programmatic_refused_where_the_entries_do_not_wait" "$out/{log}" || {{ echo "FAIL: set_programmatic_launch was not refused on the unwaited module"; status=1; }}"#,
        chains = chains.join(" ")
    )
}

/// [`Verdict::Passed`] when every test of `failing` has a `FAIL <name>` line in `stdout`.
pub(crate) fn each_failed(what: &str, stdout: &str, failing: &[&str]) -> Verdict {
    let passed: Vec<&str> = failing
        .iter()
        .copied()
        .filter(|name| {
            !stdout
                .lines()
                .any(|l| l.strip_prefix("FAIL ").is_some_and(|r| r.starts_with(name)))
        })
        .collect();
    if passed.is_empty() {
        Verdict::Passed
    } else {
        Verdict::Failed(format!(
            "{what}: {} did not fail, and must: it cannot show the defect it is for",
            passed.join(", ")
        ))
    }
}

/// Runs `program`, prints its output, and turns `judge(status, stderr)` into the task's result
/// (a SKIPPED line for [`Verdict::Skipped`]).
fn run_judged(
    sh: &Shell,
    what: &str,
    program: &Path,
    args: &[&Path],
    judge: impl FnOnce(Option<i32>, &str, &str) -> Verdict,
) -> Result {
    let output = cmd!(sh, "{program} {args...}")
        .ignore_status()
        .quiet()
        .output()
        .map_err(crate::util::err("cannot run a device program"))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    print!("{stdout}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    match judge(output.status.code(), &stdout, &stderr) {
        Verdict::Passed => Ok(()),
        Verdict::Skipped(reason) => {
            println!("{what}: SKIPPED: {reason}");
            Ok(())
        }
        Verdict::Failed(message) => Err(message),
    }
}

/// The verdict on a negative control (see [`run_device_program_to_fail`]).
fn to_fail(what: &str, code: Option<i32>, stderr: &str, ci: bool) -> Verdict {
    use pipeline_suite::exit;
    match code.and_then(|c| u8::try_from(c).ok()) {
        Some(exit::TEST_FAILED) => Verdict::Passed,
        Some(exit::PASSED) => Verdict::Failed(format!(
            "{what}: every test passed, and it must fail: the tests cannot show the defect they are for"
        )),
        _ => verdict(what, code, stderr, ci),
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
    use super::{Verdict, verdict};
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
    fn a_negative_control_passes_only_by_failing_a_test() {
        use super::{each_failed, to_fail};
        assert_eq!(
            to_fail("control", code(exit::TEST_FAILED), "", false),
            Verdict::Passed
        );
        assert!(failed(to_fail("control", code(exit::PASSED), "", false)).contains("must fail"));
        assert!(matches!(
            to_fail("control", code(exit::NO_DRIVER), NO_DRIVER_LINE, true),
            Verdict::Skipped(_)
        ));
        for status in [exit::SETUP, exit::HUNG, exit::USAGE] {
            failed(to_fail("control", code(status), "error: x\n", true));
        }
        failed(to_fail("control", None, "", false));
        // Every named test must be among the failed.
        let out = "PASS a\nFAIL b: off by 1\nFAIL c\n";
        assert_eq!(each_failed("control", out, &["b", "c"]), Verdict::Passed);
        assert!(failed(each_failed("control", out, &["a", "b"])).contains("a did not fail"));
        assert!(failed(each_failed("control", out, &["d"])).contains("d did not fail"));
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
}
