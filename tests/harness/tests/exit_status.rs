//! The exit status of the harness binaries, run as the xtask runs them (`pipeline_suite::exit`).
//!
//! Only a machine without a CUDA driver may give [`exit::NO_DRIVER`] (which `cargo xtask ci`
//! turns into `SKIPPED`); a bad command line is [`exit::USAGE`], and a module the driver rejects
//! is [`exit::SETUP`]. These tests run on any machine: where the driver library can be loaded,
//! the invalid module must give `SETUP` instead of `NO_DRIVER`.

use std::path::PathBuf;
use std::process::{Command, Output};

use pipeline_suite::exit;

const HARNESS: &str = env!("CARGO_BIN_EXE_pipeline-harness");
const BENCH: &str = env!("CARGO_BIN_EXE_pipeline-bench");

/// PTX that no driver accepts: a PTX ISA version that does not exist, then garbage.
const INVALID_PTX: &str = ".version 99.0\n.target sm_90\n.address_size 64\nthis is not PTX\n";

/// Whether this machine can load the CUDA driver library.
fn driver_present() -> bool {
    // SAFETY: tries to load the driver library (running its initialisers, as any CUDA program
    // does) and unloads it again; nothing else is touched.
    unsafe { cudarc::driver::sys::is_culib_present() }
}

/// A file with `contents` in a directory of its own under the target directory.
fn file(name: &str, contents: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("exit_status_{}_{name}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("creating a temporary directory");
    let path = dir.join(name);
    std::fs::write(&path, contents).expect("writing a temporary file");
    path
}

/// Runs `exe` with `args` and returns its output.
fn run(exe: &str, args: &[&str]) -> Output {
    Command::new(exe)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {exe}: {e}"))
}

/// The exit status, with the output in the message when it is not `expected`.
fn assert_status(what: &str, output: &Output, expected: u8) {
    assert_eq!(
        output.status.code(),
        Some(i32::from(expected)),
        "{what}: expected exit {expected} ({}); stdout:\n{}\nstderr:\n{}",
        exit::meaning(i32::from(expected)).unwrap_or("?"),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// The error message: exactly one line on stderr, starting with `error: `.
fn one_line_error(what: &str, output: &Output) -> String {
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    let lines: Vec<&str> = stderr.lines().collect();
    assert!(
        lines.len() == 1 && lines[0].starts_with("error: "),
        "{what}: expected one line `error: ...` on stderr, got:\n{stderr}"
    );
    lines[0].to_string()
}

#[test]
fn suite_without_a_driver_exits_no_driver_with_one_line_or_setup_with_one() {
    let ptx = file("invalid.ptx", INVALID_PTX);
    let output = run(HARNESS, &["--ptx", ptx.to_str().unwrap()]);
    if driver_present() {
        assert_status("the suite on an invalid module", &output, exit::SETUP);
    } else {
        assert_status("the suite without a driver", &output, exit::NO_DRIVER);
        let line = one_line_error("the suite without a driver", &output);
        assert!(line.contains("no CUDA driver"), "{line}");
        assert!(line.contains("--bundle"), "{line}");
    }
}

#[test]
fn broken_kernels_without_a_driver_exit_no_driver_once_or_setup() {
    let ptx = file("invalid_broken.ptx", INVALID_PTX);
    let output = run(HARNESS, &["--ptx", ptx.to_str().unwrap(), "--broken"]);
    if driver_present() {
        assert_status(
            "the broken kernels on an invalid module",
            &output,
            exit::SETUP,
        );
    } else {
        assert_status(
            "the broken kernels without a driver",
            &output,
            exit::NO_DRIVER,
        );
        let line = one_line_error("the broken kernels without a driver", &output);
        assert!(line.contains("no CUDA driver"), "{line}");
    }
}

#[test]
fn one_broken_kernel_without_a_driver_exits_no_driver_or_setup() {
    let ptx = file("invalid_broken_one.ptx", INVALID_PTX);
    let name = pipeline_suite::BROKEN[0].name;
    let output = run(
        HARNESS,
        &["--broken-one", name, "--ptx", ptx.to_str().unwrap()],
    );
    let expected = if driver_present() {
        exit::SETUP
    } else {
        exit::NO_DRIVER
    };
    assert_status("one broken kernel", &output, expected);
}

#[test]
fn a_missing_ptx_file_is_a_setup_error() {
    let output = run(HARNESS, &["--ptx", "/nonexistent/pipeline_kernels.ptx"]);
    assert_status("a missing PTX file", &output, exit::SETUP);
    let line = one_line_error("a missing PTX file", &output);
    assert!(line.contains("cargo xtask build"), "{line}");
}

#[test]
fn bad_arguments_exit_usage_not_no_driver() {
    let ptx = file("args.ptx", INVALID_PTX);
    let ptx = ptx.to_str().unwrap();
    for args in [
        &["--bogus"][..],
        &["--ptx"],
        &["--quick"],
        &["--ptx", ptx, "--timeout-s", "soon"],
        &["--ptx", ptx, "--broken-one", "no_such_broken_kernel"],
    ] {
        let output = run(HARNESS, args);
        assert_status(&format!("pipeline-harness {args:?}"), &output, exit::USAGE);
    }
    assert_ne!(exit::USAGE, exit::NO_DRIVER);
}

#[test]
fn bench_exits_usage_for_bad_arguments_and_no_driver_or_setup_without_one() {
    let output = run(BENCH, &[]);
    assert_status("pipeline-bench without arguments", &output, exit::USAGE);
    let ptx = file("bench.ptx", INVALID_PTX);
    let ptx = ptx.to_str().unwrap();
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let output = run(
        BENCH,
        &[
            "--rust-ptx",
            ptx,
            "--rust-cubin",
            ptx,
            "--cpp-cubin",
            ptx,
            "--out",
            out.to_str().unwrap(),
        ],
    );
    if driver_present() {
        assert_status("pipeline-bench on an invalid module", &output, exit::SETUP);
    } else {
        assert_status("pipeline-bench without a driver", &output, exit::NO_DRIVER);
        one_line_error("pipeline-bench without a driver", &output);
    }
}
