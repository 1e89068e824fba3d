//! Host-side tasks: lints, the host test suite, the loom models, the packaged library.

use xshell::{Shell, cmd};

use crate::util::Result;

/// `cargo fmt --check` and `cargo clippy -D warnings` over the host workspace and the device crates.
pub fn lint(sh: &Shell) -> Result {
    println!("checking formatting and lints:");
    cmd!(sh, "cargo fmt --all -- --check").run().map_err(|_| {
        "`cargo fmt --all -- --check` found unformatted code; run `cargo fmt --all`".to_string()
    })?;
    for manifest in [
        "tests/kernels/Cargo.toml",
        "tests/compile-fail/Cargo.toml",
        "crates/gpu-gemm/Cargo.toml",
    ] {
        cmd!(sh, "cargo fmt --manifest-path {manifest} -- --check")
            .run()
            .map_err(|_| {
                format!(
                    "{manifest} has unformatted code; run `cargo fmt --manifest-path {manifest}`"
                )
            })?;
    }
    cmd!(sh, "cargo clippy --workspace --all-targets -- -D warnings")
        .run()
        .map_err(|_| "clippy found problems (above)".to_string())?;
    cmd!(
        sh,
        "cargo clippy --workspace --all-targets --features gpu-pipeline/checked,protocol-tests/checked -- -D warnings"
    )
    .run()
    .map_err(|_| "clippy found problems with the `checked` feature (above)".to_string())?;
    println!("  fmt and clippy clean");
    Ok(())
}

/// The host tests: library unit tests and doc tests, the protocol tests (stress, traces, drop
/// checks) on both host backends, the harness and xtask tests (the xtask's include the tidy
/// checks of `tidy.rs`). Release mode: the stress tests move over 100,000 items per
/// configuration. Then the library's unit tests and the broken protocols of
/// `tests/host/tests/checked.rs` with the `checked` feature.
pub fn test(sh: &Shell) -> Result {
    println!("running the host tests:");
    cmd!(sh, "cargo test --workspace --release")
        .run()
        .map_err(|_| "host tests failed (above)".to_string())?;
    println!("running the host tests of checked builds (hang diagnostics):");
    cmd!(
        sh,
        "cargo test --release -p gpu-pipeline -p protocol-tests --features gpu-pipeline/std,gpu-pipeline/checked,protocol-tests/checked --lib --test checked"
    )
    .run()
    .map_err(|_| "host tests of checked builds failed (above)".to_string())
}

/// The host tests of the safe API under AddressSanitizer (in their own target directory): the
/// API, halves and drop tests must run clean, and the control
/// (`tests/host/examples/use_after_free_control.rs`, a use-after-free of a signal made with
/// `unsafe` on purpose) must be caught, which shows the sanitizer is active.
pub fn asan(sh: &Shell) -> Result {
    println!("running the host API tests under AddressSanitizer:");
    let flags = "-Zsanitizer=address";
    let target = "x86_64-unknown-linux-gnu";
    cmd!(
        sh,
        "cargo test -p protocol-tests --target {target} --target-dir target/asan --test api --test halves --test drop --test split"
    )
    .env("RUSTFLAGS", flags)
    .env("RUSTDOCFLAGS", flags)
    .run()
    .map_err(|_| "host tests under AddressSanitizer failed (above)".to_string())?;
    let control = cmd!(
        sh,
        "cargo run -q -p protocol-tests --target {target} --target-dir target/asan --example use_after_free_control"
    )
    .env("RUSTFLAGS", flags)
    .ignore_status()
    .output()
    .map_err(|e| format!("running the AddressSanitizer control: {e}"))?;
    let stderr = String::from_utf8_lossy(&control.stderr);
    if control.status.success() || !stderr.contains("heap-use-after-free") {
        return Err(format!(
            "the AddressSanitizer control was not caught (exit {:?}): the sanitizer is not active, so the clean run above proves nothing\n{stderr}",
            control.status.code()
        ));
    }
    println!("  clean; the control's use-after-free was caught (heap-use-after-free)");
    Ok(())
}

/// The loom model checks of the protocol (`--cfg loom`, in their own target directory).
pub fn loom(sh: &Shell) -> Result {
    println!("running the loom models:");
    cmd!(
        sh,
        "cargo test -p protocol-tests --release --test loom --target-dir target/loom -- --nocapture"
    )
    .env("RUSTFLAGS", "--cfg loom")
    .run()
    .map_err(|_| "loom models failed (above)".to_string())
}

/// The library as a user gets it from a registry: `cargo package -p gpu-pipeline` (which builds
/// the packaged crate on its own), then the packaged crate's doc tests outside the workspace,
/// among them the README example that the package carries (`crates/gpu-pipeline/README.md`).
/// A clean clone packages as it is; where the package's files have uncommitted changes (a
/// working tree), they are packaged with `--allow-dirty`, and the step says so.
pub fn package(sh: &Shell) -> Result {
    println!("packaging gpu-pipeline and running the packaged crate's doc tests:");
    let dirty = cmd!(sh, "git status --porcelain -- crates/gpu-pipeline")
        .quiet()
        .read()
        .map_err(crate::util::err("`git status` of crates/gpu-pipeline"))?;
    let allow_dirty = if dirty.trim().is_empty() {
        None
    } else {
        println!("  crates/gpu-pipeline has uncommitted changes: packaged with --allow-dirty");
        Some("--allow-dirty")
    };
    cmd!(sh, "cargo package -p gpu-pipeline {allow_dirty...}")
        .run()
        .map_err(|_| "`cargo package -p gpu-pipeline` failed (above)".to_string())?;
    let manifest = sh
        .read_file("crates/gpu-pipeline/Cargo.toml")
        .map_err(crate::util::err("read crates/gpu-pipeline/Cargo.toml"))?;
    let version = manifest
        .lines()
        .find_map(|line| line.strip_prefix("version = \""))
        .and_then(|rest| rest.strip_suffix('"'))
        .ok_or("crates/gpu-pipeline/Cargo.toml has no `version = \"...\"` line")?;
    let target = std::env::var("CARGO_TARGET_DIR").unwrap_or_else(|_| "target".to_string());
    let packaged = format!("{target}/package/gpu-pipeline-{version}/Cargo.toml");
    let doctest_dir = format!("{target}/package-doctest");
    cmd!(
        sh,
        "cargo test --doc --features std --manifest-path {packaged} --target-dir {doctest_dir}"
    )
    .run()
    .map_err(|_| "the packaged crate's doc tests failed (above)".to_string())?;
    println!("  packaged; its doc tests passed");
    Ok(())
}
