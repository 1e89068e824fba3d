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
        "tests/hopper-kernels/Cargo.toml",
        "tests/compile-fail/Cargo.toml",
        "crates/gpu-gemm/Cargo.toml",
        "crates/gpu-attention/Cargo.toml",
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
        "cargo clippy --workspace --all-targets --features gpu-pipeline/checked,protocol-tests/checked,gpu-hopper/checked -- -D warnings"
    )
    .run()
    .map_err(|_| "clippy found problems with the `checked` feature (above)".to_string())?;
    // The GEMM kernel crate is its own workspace, built only for its GPU target: its lints
    // (every `unsafe` block's SAFETY comment among them) run there.
    // Both modules' code: the production kernels, and with `steps` the step kernels too.
    for extra in [
        &[][..],
        &["--features", "steps"][..],
        &["--features", "l2_hints"][..],
        &["--features", "ck_push"][..],
        &["--features", "store_read"][..],
    ] {
        crate::gemm_kernel::NVPTX_SM90A.cargo_clippy(sh, crate::gemm_kernel::CRATE, extra)?;
    }
    // The attention kernels, likewise, and their checked build's.
    for extra in [
        &[][..],
        &["--features", "overlap,pingpong,strided"][..],
        &["--features", "checked,named_turns,wide_store"][..],
        &["--features", "narrow_store"][..],
        &["--features", "kv_evict_last"][..],
    ] {
        crate::gemm_kernel::NVPTX_SM90A.cargo_clippy(sh, crate::attention::CRATE, extra)?;
    }
    // The toolkit's test kernels, likewise.
    for extra in [&[][..], &["--features", "checked"][..]] {
        crate::gemm_kernel::NVPTX_SM90A.cargo_clippy(sh, crate::hopper::CRATE, extra)?;
    }
    println!("  fmt and clippy clean");
    Ok(())
}

/// The host tests: library unit tests and doc tests, the protocol tests (stress, traces, drop
/// checks) on both host backends, the harness and xtask tests (the xtask's include the tidy
/// checks of `tidy.rs`). Release mode: the stress tests move over 100,000 items per
/// configuration. Then the library's unit tests and the broken protocols of
/// `tests/host/tests/checked.rs` with the `checked` feature, and the toolkit's (gpu-hopper's
/// named barriers and ordered-sequence barrier, misused on host threads); and the attention
/// plan's with its host reference (feature `std`).
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
    .map_err(|_| "host tests of checked builds failed (above)".to_string())?;
    cmd!(
        sh,
        "cargo test --release -p gpu-hopper --features gpu-hopper/checked,gpu-pipeline/std --lib"
    )
    .run()
    .map_err(|_| "host tests of the toolkit's checked build failed (above)".to_string())?;
    println!("running the attention plan's host reference tests (feature std):");
    cmd!(
        sh,
        "cargo test --release -p gpu-attention-plan --features std"
    )
    .run()
    .map_err(|_| "the attention plan's reference tests failed (above)".to_string())
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

/// The crates a user can take from a registry, in `cargo publish` order (each after the crates
/// it depends on). `gpu-gemm-host` carries its GEMM module (`module/gpu_gemm.ptx`, which
/// `cargo xtask codegen` writes), so its package is a user's whole GEMM.
const PUBLISHABLE: [&str; 8] = [
    "gpu-pipeline",
    "gpu-hopper",
    "gpu-gemm-plan",
    "gpu-attention-plan",
    "gpu-hopper-host",
    "gpu-gemm-host",
    "gpu-attention-host",
    "ptx-uniform",
];

/// The host-side crates whose `rust-version` (the workspace's) is checked with that stable
/// toolchain: the publishable ones (the two kernel hosts are host-only).
const STABLE_CHECKED: [&str; 8] = [
    "gpu-pipeline",
    "gpu-hopper",
    "gpu-gemm-plan",
    "gpu-attention-plan",
    "gpu-hopper-host",
    "ptx-uniform",
    "gpu-gemm-host",
    "gpu-attention-host",
];

/// The dry run's own target directory: its packages (`package/`), the local registry through
/// which they reach each other (`package/tmp-registry`), and their builds.
const PUBLISH_TARGET: &str = "target/publish";

/// The crates as a user gets them from a registry:
///
/// - `cargo publish --dry-run` of every crate of [`PUBLISHABLE`] at once: each is packaged and
///   built on its own from its package, the path dependencies between them resolved through a
///   local registry of the packages just made (cargo's multi-package publish), and nothing is
///   uploaded;
/// - the packaged library's doc tests outside the workspace, among them the README example that
///   the package carries (`crates/gpu-pipeline/README.md`);
/// - the packages of [`NEWEST_CHECKED`] against the newest dependencies they allow (a user's
///   graph), where every other build uses the lock file's;
/// - the host builds of [`STABLE_CHECKED`] with the stable toolchain of the workspace's
///   `rust-version` (installed with rustup if missing), so that the version the manifests state
///   is one that builds them (`cargo check`, the repository's lock file).
///
/// A clean clone packages as it is; where the packages' files have uncommitted changes (a
/// working tree), they are packaged with `--allow-dirty`, and the step says so.
pub fn package(sh: &Shell) -> Result {
    println!(
        "packaging {} (cargo publish --dry-run):",
        PUBLISHABLE.join(", ")
    );
    let folders: Vec<String> = PUBLISHABLE
        .iter()
        .map(|name| format!("crates/{name}"))
        .collect();
    let dirty = cmd!(sh, "git status --porcelain -- {folders...}")
        .quiet()
        .read()
        .map_err(crate::util::err("`git status` of the publishable crates"))?;
    let allow_dirty = if dirty.trim().is_empty() {
        None
    } else {
        println!("  the packages' folders have uncommitted changes: packaged with --allow-dirty");
        Some("--allow-dirty")
    };
    forget_previous_dry_run(sh)?;
    let packages: Vec<String> = PUBLISHABLE.iter().map(|name| format!("-p{name}")).collect();
    cmd!(
        sh,
        "cargo publish --dry-run {allow_dirty...} {packages...} --target-dir {PUBLISH_TARGET}"
    )
    .run()
    .map_err(|_| "`cargo publish --dry-run` failed (above)".to_string())?;
    let packaged = format!(
        "{PUBLISH_TARGET}/package/gpu-pipeline-{}/Cargo.toml",
        version_of(sh, "gpu-pipeline")?
    );
    let doctest_dir = format!("{PUBLISH_TARGET}/doctest");
    println!("running the packaged gpu-pipeline's doc tests:");
    cmd!(
        sh,
        "cargo test --doc --features std --manifest-path {packaged} --target-dir {doctest_dir}"
    )
    .run()
    .map_err(|_| "the packaged crate's doc tests failed (above)".to_string())?;
    for name in NEWEST_CHECKED {
        newest(sh, name)?;
    }
    stable(sh)?;
    println!(
        "  packaged; the doc tests passed; the newest dependencies build; the host builds pass on their rust-version"
    );
    Ok(())
}

/// Removes what an earlier dry run left for the next to reuse. Cargo takes a registry's package
/// of a given name and version to be the same bytes forever: it unpacks it into
/// `$CARGO_HOME/registry/src/<registry>/` once, and keeps its build as long as the name, version
/// and registry stay the same. The dry run's local registry serves this working tree's packages
/// under their unchanged versions from the same path every run, so without this a second run
/// verifies each crate against its dependencies as the first run packaged them (seen here: a
/// crate that used a macro added since failed to compile against the earlier package). So the
/// dry run's target directory goes, and so do the unpacked copies of these packages from every
/// registry cargo names after a local path (a folder whose name starts with `-`; the crates.io
/// folder is never touched).
fn forget_previous_dry_run(sh: &Shell) -> Result {
    sh.remove_path(PUBLISH_TARGET).map_err(crate::util::err(
        "remove the previous dry run's target directory",
    ))?;
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| std::path::Path::new(&home).join(".cargo")))
        .ok_or("neither CARGO_HOME nor HOME is set: cannot find cargo's registry cache")?;
    let Ok(registries) = std::fs::read_dir(cargo_home.join("registry/src")) else {
        return Ok(()); // nothing unpacked yet
    };
    let mut unpacked = Vec::new();
    for name in PUBLISHABLE {
        unpacked.push(format!("{name}-{}", version_of(sh, name)?));
    }
    for registry in registries.flatten() {
        if !registry.file_name().to_string_lossy().starts_with('-') {
            continue;
        }
        for package in &unpacked {
            let path = registry.path().join(package);
            if path.exists() {
                sh.remove_path(&path)
                    .map_err(crate::util::err("remove a stale unpacked package"))?;
            }
        }
    }
    Ok(())
}

/// The `version` of `crates/{name}/Cargo.toml`.
fn version_of(sh: &Shell, name: &str) -> Result<String> {
    let manifest = sh
        .read_file(format!("crates/{name}/Cargo.toml"))
        .map_err(crate::util::err("read a publishable crate's manifest"))?;
    manifest_value(&manifest, "version")
        .map(str::to_string)
        .ok_or_else(|| format!("crates/{name}/Cargo.toml has no `version = \"...\"` line"))
}

/// The packaged crates that are also built against the newest releases their requirements allow
/// (what a user's graph resolves: cudarc is a caret requirement, `0.19.10`), beside the lock
/// file's versions, which are the requirements' lowest and which every other build uses. Their
/// dependencies on the other publishable crates, which are not on the registry yet, resolve to
/// those crates' packages from the same dry run (`patch.crates-io`, [`newest`]).
const NEWEST_CHECKED: [&str; 2] = ["gpu-hopper-host", "gpu-gemm-host"];

/// `cargo update`, then `cargo check`, of the package the dry run left unpacked in
/// [`PUBLISH_TARGET`], in its own target directory; prints the cudarc it resolved.
fn newest(sh: &Shell, name: &str) -> Result {
    let unpacked = format!("{PUBLISH_TARGET}/package/{name}-{}", version_of(sh, name)?);
    let packaged = format!("{unpacked}/Cargo.toml");
    let newest_dir = format!("{PUBLISH_TARGET}/newest");
    // The other publishable crates as the dry run packaged them: a user's graph gets them from
    // the registry, where they are not yet. A patch the graph does not use is only a warning.
    let mut patches = Vec::new();
    for other in PUBLISHABLE.iter().filter(|other| **other != name) {
        let dir = crate::util::root().join(format!(
            "{PUBLISH_TARGET}/package/{other}-{}",
            version_of(sh, other)?
        ));
        patches.push("--config".to_string());
        patches.push(format!(
            "patch.crates-io.{other}.path={:?}",
            dir.display().to_string()
        ));
    }
    println!("building the packaged {name} against the newest dependencies it allows:");
    let update_patches = patches.clone();
    cmd!(
        sh,
        "cargo update --manifest-path {packaged} {update_patches...}"
    )
    .run()
    .map_err(|_| format!("`cargo update` of the packaged {name} failed (above)"))?;
    cmd!(
        sh,
        "cargo check --manifest-path {packaged} --target-dir {newest_dir} {patches...}"
    )
    .run()
    .map_err(|_| {
        format!("the packaged {name} does not build with the newest dependencies it allows (above)")
    })?;
    let lock = sh
        .read_file(format!("{unpacked}/Cargo.lock"))
        .map_err(crate::util::err("read the packaged crate's Cargo.lock"))?;
    let cudarc = lock
        .split("[[package]]")
        .find(|entry| entry.contains("name = \"cudarc\""))
        .and_then(|entry| manifest_value(entry.trim_start(), "version"));
    if let Some(cudarc) = cudarc {
        println!("  {name} builds with cudarc {cudarc}");
    }
    Ok(())
}

/// `cargo check` of [`STABLE_CHECKED`] with the stable toolchain of the workspace's
/// `rust-version`, in its own target directory: twice, with `gpu-pipeline`'s `std` and with
/// `std` and `checked` (the `checked` feature compiles code of its own, which the first check
/// does not see).
fn stable(sh: &Shell) -> Result {
    let workspace = sh
        .read_file("Cargo.toml")
        .map_err(crate::util::err("read Cargo.toml"))?;
    let rust_version = manifest_value(&workspace, "rust-version")
        .ok_or("Cargo.toml's [workspace.package] has no `rust-version = \"...\"` line")?;
    // rustup names a toolchain by its full version; "1.95" would be a second, separate install.
    let toolchain = if rust_version.matches('.').count() == 1 {
        format!("{rust_version}.0")
    } else {
        rust_version.to_string()
    };
    println!("checking the host builds with Rust {toolchain} (the workspace's rust-version):");
    let toolchain_arg = format!("+{toolchain}");
    let installed = cmd!(sh, "rustc {toolchain_arg} --version")
        .quiet()
        .ignore_stderr()
        .read()
        .is_ok();
    if !installed {
        cmd!(sh, "rustup toolchain install {toolchain} --profile minimal")
            .run()
            .map_err(|_| format!("`rustup toolchain install {toolchain}` failed (above)"))?;
    }
    let packages: Vec<String> = STABLE_CHECKED
        .iter()
        .map(|name| format!("-p{name}"))
        .collect();
    let toolchain_arg = format!("+{toolchain}");
    for features in ["gpu-pipeline/std", "gpu-pipeline/std,gpu-pipeline/checked"] {
        let packages = &packages;
        cmd!(
            sh,
            "cargo {toolchain_arg} check --locked {packages...} --features {features} --target-dir target/stable"
        )
        .env_remove("RUSTUP_TOOLCHAIN")
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .run()
        .map_err(|_| {
            format!(
                "the host crates do not build with Rust {toolchain}, the workspace's rust-version, \
                 with --features {features} (above): raise `rust-version` in Cargo.toml and the \
                 crates' READMEs, or avoid the newer feature"
            )
        })?;
    }
    Ok(())
}

/// The value of the first `key = "value"` line of a manifest.
fn manifest_value<'a>(manifest: &'a str, key: &str) -> Option<&'a str> {
    manifest.lines().find_map(|line| {
        line.strip_prefix(key)?
            .trim_start()
            .strip_prefix("= \"")?
            .strip_suffix('"')
    })
}
