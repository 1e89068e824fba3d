//! The examples, built the way their users build them: `cargo build --release` run in their own
//! folders, so that what is tested is their `.cargo/config.toml` and `rust-toolchain.toml`, not
//! the xtask's flags.
//!
//! - `examples/kernel-crate` (its README is the guide to a kernel crate of one's own): a kernel
//!   crate and its launcher. `test-nvidia` runs the launcher (and puts both into the bundle).
//! - `examples/gemm`: a program on `gpu-gemm-host`, on stable Rust. Beyond its build here, the
//!   check does what its README tells a user, in a fresh directory outside the repository
//!   ([`gemm_as_the_readme_says`]); `test-nvidia` runs it (and puts it into the bundle).

use std::path::{Path, PathBuf};

use xshell::{Shell, cmd};

use crate::util::Result;

/// The example's folder, relative to the repository root.
pub const DIR: &str = "examples/kernel-crate";
/// The kernel crate (built for nvptx64 by its own `.cargo/config.toml`).
const KERNEL: &str = "examples/kernel-crate/kernel";
/// The launcher (a host binary on cudarc).
const HOST: &str = "examples/kernel-crate/host";

/// The kernel crate's PTX, relative to its folder: where a user finds it after the build.
const PTX: &str = "target/nvptx64-nvidia-cuda/release/example_kernels.ptx";
/// The launcher binary, relative to its folder.
const LAUNCHER: &str = "target/release/example-launcher";

/// The GEMM example's folder, relative to the repository root.
pub const GEMM_DIR: &str = "examples/gemm";
/// Its program, relative to its folder.
const GEMM_PROGRAM: &str = "target/release/gemm-example";
/// The path of its dependency on gpu-gemm-host, as its Cargo.toml has it (quoted): what its
/// README's `sed` replaces with the user's clone.
const GEMM_DEPENDENCY_PATH: &str = "\"../../crates/gpu-gemm-host\"";
/// The attention example: a user's program on gpu-attention-host, on stable Rust.
pub const ATTENTION_DIR: &str = "examples/attention";
/// Its program, under its folder.
const ATTENTION_PROGRAM: &str = "target/release/attention-example";

/// The folder name its README copies it to.
const GEMM_COPY: &str = "my-gemm";

/// Environment variables that would replace the example's own configuration with the caller's:
/// the toolchain (rustup sets `RUSTUP_TOOLCHAIN` for every command under `cargo xtask`, which
/// would hide the example's `rust-toolchain.toml`), the flags, the target, the target directory,
/// build-std and the profile. A user's shell has none of them set.
const OVERRIDES: &[&str] = &[
    "RUSTUP_TOOLCHAIN",
    "RUSTUP_TOOLCHAIN_SOURCE",
    "RUSTFLAGS",
    "CARGO_ENCODED_RUSTFLAGS",
    "CARGO_BUILD_RUSTFLAGS",
    "CARGO_TARGET_NVPTX64_NVIDIA_CUDA_RUSTFLAGS",
    "CARGO_TARGET_NVPTX64_NVIDIA_CUDA_LINKER",
    "CARGO_BUILD_TARGET",
    "CARGO_TARGET_DIR",
    "CARGO_BUILD_TARGET_DIR",
    "CARGO_UNSTABLE_BUILD_STD",
    "CARGO_PROFILE_RELEASE_PANIC",
    "CARGO_PROFILE_RELEASE_LTO",
];

/// The bundle's section for the examples (placeholder `@EXAMPLE@` of `nvidia::RUN_SH`): the
/// launcher must exit 0 (every word right) and the GEMM example 0 (D right) within the time
/// limit, or the run fails. The launcher's own timeout is 10 s; `timeout` bounds each process as
/// a whole.
pub const RUN_SH_SECTION: &str = r#"echo "== examples/kernel-crate: the README's standalone kernel crate, run by its cudarc launcher"
timeout -k 10 60 "$here/example-launcher" "$here/example_kernels.ptx" 2>&1 | tee "$out/example.log"
[ "${PIPESTATUS[0]}" -eq 0 ] || { echo "FAIL: the example launcher did not pass"; status=1; }

echo "== examples/gemm: a user's program on gpu-gemm-host (its embedded module), checked exactly"
timeout -k 10 120 "$here/gemm-example" 2>&1 | tee "$out/gemm-example.log"
[ "${PIPESTATUS[0]}" -eq 0 ] || { echo "FAIL: the GEMM example did not pass"; status=1; }

echo "== examples/attention: a user's program on gpu-attention-host (its embedded module), checked against f64"
timeout -k 10 180 "$here/attention-example" 2>&1 | tee "$out/attention-example.log"
[ "${PIPESTATUS[0]}" -eq 0 ] || { echo "FAIL: the attention example did not pass"; status=1; }"#;

/// The files of the examples in the bundle: (built file, name in the bundle).
pub fn bundle_files() -> [(PathBuf, &'static str); 4] {
    [
        (ptx(), "example_kernels.ptx"),
        (launcher(), "example-launcher"),
        (gemm_program(), "gemm-example"),
        (attention_program(), "attention-example"),
    ]
}

/// The attention example's program after [`build`].
pub fn attention_program() -> PathBuf {
    crate::util::root()
        .join(ATTENTION_DIR)
        .join(ATTENTION_PROGRAM)
}

/// The GEMM example's program after [`build`].
pub fn gemm_program() -> PathBuf {
    crate::util::root().join(GEMM_DIR).join(GEMM_PROGRAM)
}

/// The kernel crate's PTX after [`build`].
pub fn ptx() -> PathBuf {
    crate::util::root().join(KERNEL).join(PTX)
}

/// The launcher after [`build`].
pub fn launcher() -> PathBuf {
    crate::util::root().join(HOST).join(LAUNCHER)
}

/// Runs `cargo {args}` in `dir` (relative to the root) as a user would: from that folder, with
/// the committed `Cargo.lock` (`--locked` where cargo resolves), and none of [`OVERRIDES`].
fn user_cargo(sh: &Shell, dir: &str, args: &[&str]) -> Result {
    let _folder = sh.push_dir(crate::util::root().join(dir));
    let mut command = cmd!(sh, "cargo {args...}");
    for name in OVERRIDES {
        command = command.env_remove(name);
    }
    command.run().map_err(|_| {
        format!(
            "`cargo {}` in {dir} failed (above); a user following the README would fail the same way",
            args.join(" ")
        )
    })
}

/// Builds the kernel's PTX, the launcher, the GEMM example and the attention example (release),
/// each from its own folder.
pub fn build(sh: &Shell) -> Result {
    println!("building {DIR} and {GEMM_DIR} from their own folders, as their users would:");
    user_cargo(sh, KERNEL, &["build", "--release", "--locked"])?;
    user_cargo(sh, HOST, &["build", "--release", "--locked"])?;
    user_cargo(sh, GEMM_DIR, &["build", "--release", "--locked"])?;
    user_cargo(sh, ATTENTION_DIR, &["build", "--release", "--locked"])?;
    let (ptx, launcher, gemm, attention) = (ptx(), launcher(), gemm_program(), attention_program());
    for artifact in [&ptx, &launcher, &gemm, &attention] {
        if !artifact.exists() {
            return Err(format!(
                "the build of {DIR} left no {} (the README says it is there)",
                artifact.display()
            ));
        }
    }
    println!(
        "  {}\n  {}\n  {}\n  {}",
        ptx.display(),
        launcher.display(),
        gemm.display(),
        attention.display()
    );
    crate::ptx_check::check_module("example", &ptx)
}

/// What CI checks of the examples beyond [`build`]: formatting of every crate, clippy on each
/// (the kernel for nvptx64, through its config), the launcher's and the GEMM example's unit
/// tests, then the GEMM example as its README says ([`gemm_as_the_readme_says`]).
pub fn check(sh: &Shell) -> Result {
    println!(
        "checking {DIR} and {GEMM_DIR} (their copies of the toolchain and exit statuses; fmt, clippy, their tests):"
    );
    check_copies()?;
    check_gemm_copies()?;
    for dir in [KERNEL, HOST, GEMM_DIR, ATTENTION_DIR] {
        user_cargo(sh, dir, &["fmt", "--check"])?;
        user_cargo(
            sh,
            dir,
            &["clippy", "--release", "--locked", "--", "-D", "warnings"],
        )?;
    }
    user_cargo(sh, HOST, &["test", "--release", "--locked"])?;
    user_cargo(sh, GEMM_DIR, &["test", "--release", "--locked"])?;
    build(sh)?;
    gemm_as_the_readme_says(sh)
}

/// Does what `examples/gemm/README.md` tells a user, from a fresh directory outside the
/// repository: copies the example (`cp -r`), points its path dependency at this checkout (the
/// README's `sed`), and runs `cargo run --release` there, with none of [`OVERRIDES`]. Passes
/// when the program passes (a GPU here), or when it ends as documented without a driver: the
/// no-driver line and status [`NO_DRIVER`](pipeline_suite::exit::NO_DRIVER). Anything else
/// fails, with the program's output.
pub fn gemm_as_the_readme_says(sh: &Shell) -> Result {
    let root = crate::util::root();
    let fresh = std::env::temp_dir().join(format!("gpu-gemm-example-{}", std::process::id()));
    if fresh.starts_with(&root) {
        return Err(format!(
            "the temporary directory {} is inside the repository; set TMPDIR to a folder outside it",
            fresh.display()
        ));
    }
    println!(
        "running {GEMM_DIR} as its README says, from {} (outside the repository):",
        fresh.display()
    );
    sh.remove_path(&fresh)
        .map_err(crate::util::err("remove an earlier fresh directory"))?;
    sh.create_dir(&fresh)
        .map_err(crate::util::err("create the fresh directory"))?;
    let copy = fresh.join(GEMM_COPY);
    let example = root.join(GEMM_DIR);
    cmd!(sh, "cp -r {example} {copy}")
        .run()
        .map_err(crate::util::err("copy the example"))?;
    // A fresh clone has no build folder; the one of this checkout's build stays behind.
    sh.remove_path(copy.join("target"))
        .map_err(crate::util::err("remove the copied build folder"))?;
    let manifest = copy.join("Cargo.toml");
    let text = sh
        .read_file(&manifest)
        .map_err(crate::util::err("read the copied Cargo.toml"))?;
    let host_crate = format!("\"{}\"", root.join("crates/gpu-gemm-host").display());
    if !text.contains(GEMM_DEPENDENCY_PATH) {
        return Err(format!(
            "{GEMM_DIR}/Cargo.toml has no {GEMM_DEPENDENCY_PATH}, which its README's `sed` rewrites: make them agree"
        ));
    }
    sh.write_file(&manifest, text.replace(GEMM_DEPENDENCY_PATH, &host_crate))
        .map_err(crate::util::err("rewrite the copied Cargo.toml"))?;
    let _folder = sh.push_dir(&copy);
    let mut command = cmd!(sh, "cargo run --release");
    for name in OVERRIDES {
        command = command.env_remove(name);
    }
    let output = command
        .ignore_status()
        .output()
        .map_err(crate::util::err("cannot run cargo"))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    print!("{stdout}");
    let verdict = readme_run_verdict(output.status.code(), &stdout, &stderr);
    drop(_folder);
    sh.remove_path(&fresh)
        .map_err(crate::util::err("remove the fresh directory"))?;
    let line = verdict?;
    println!("  {line}");
    Ok(())
}

/// The verdict on `cargo run --release` of the copied GEMM example: what it printed, in words,
/// or the failure with its output. Cargo's own lines go to stderr before the program's, and
/// cargo exits with the program's status.
fn readme_run_verdict(code: Option<i32>, stdout: &str, stderr: &str) -> Result<String> {
    use pipeline_suite::exit;
    let program_error = stderr
        .lines()
        .find(|line| line.starts_with("error: opening GPU"));
    match code.and_then(|code| u8::try_from(code).ok()) {
        Some(exit::PASSED) if stdout.starts_with("PASS") => {
            Ok(format!("passed: {}", stdout.trim()))
        }
        Some(exit::NO_DRIVER)
            if program_error.is_some_and(|line| line.contains("no CUDA driver")) =>
        {
            Ok(format!(
                "no CUDA driver here: the program printed the documented line and exited {}: {}",
                exit::NO_DRIVER,
                program_error.unwrap_or_default()
            ))
        }
        _ => Err(format!(
            "`cargo run --release` of {GEMM_DIR}, copied as its README says, ended with {code:?} (expected {} with a PASS line, or {} with the no-driver line):\n{stdout}{stderr}",
            exit::PASSED,
            exit::NO_DRIVER
        )),
    }
}

/// Runs the launcher on the example's PTX here and judges its exit status like the harness's
/// ([`verdict`](crate::device::verdict): the launcher uses the same statuses). `ci`: a missing
/// driver is a SKIPPED line.
pub fn run(sh: &Shell, ci: bool) -> Result {
    println!("== {DIR}: the README's standalone kernel crate, run by its cudarc launcher");
    crate::device::run_device_program(sh, DIR, &launcher(), &[&ptx()], ci)?;
    println!("== {GEMM_DIR}: a user's program on gpu-gemm-host (its embedded module)");
    crate::device::run_device_program(sh, GEMM_DIR, &gemm_program(), &[], ci)?;
    println!("== {ATTENTION_DIR}: a user's program on gpu-attention-host (its embedded module)");
    crate::device::run_device_program(sh, ATTENTION_DIR, &attention_program(), &[], ci)
}

/// The `pub const NAME: u8 = N;` lines of `source`: the launcher's copy of the exit statuses.
fn exit_statuses(source: &str) -> Vec<(String, u8)> {
    source
        .lines()
        .filter_map(|line| {
            let rest = line.trim().strip_prefix("pub const ")?;
            let (name, value) = rest.split_once(": u8 = ")?;
            let value = value.strip_suffix(';')?.parse().ok()?;
            Some((name.to_string(), value))
        })
        .collect()
}

/// The `channel = "..."` of a `rust-toolchain.toml`.
fn channel(toolchain_file: &str) -> Option<&str> {
    toolchain_file.lines().find_map(|line| {
        let value = line.trim().strip_prefix("channel")?.trim_start();
        Some(value.strip_prefix('=')?.trim().trim_matches('"'))
    })
}

/// Reads a file of the repository.
fn read(path: impl AsRef<Path>) -> Result<String> {
    let path = crate::util::root().join(path);
    std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))
}

/// The two things the example copies instead of depending on the repository: the toolchain
/// channel (its own `rust-toolchain.toml`) and the exit statuses (`pipeline_suite::exit`, which
/// [`verdict`](crate::device::verdict) and the bundle's `run.sh` read). Fails with one line when
/// either drifted.
fn check_copies() -> Result {
    let root = read("rust-toolchain.toml")?;
    let example = read(Path::new(DIR).join("rust-toolchain.toml"))?;
    if channel(&example).is_none() || channel(&example) != channel(&root) {
        return Err(format!(
            "{DIR}/rust-toolchain.toml pins {:?}, the repository {:?}: make them the same",
            channel(&example),
            channel(&root)
        ));
    }
    use pipeline_suite::exit;
    let expected: Vec<(String, u8)> = [
        ("PASSED", exit::PASSED),
        ("TEST_FAILED", exit::TEST_FAILED),
        ("USAGE", exit::USAGE),
        ("HUNG", exit::HUNG),
        ("NO_DRIVER", exit::NO_DRIVER),
        ("SETUP", exit::SETUP),
    ]
    .iter()
    .map(|&(name, value)| (name.to_string(), value))
    .collect();
    let copied = exit_statuses(&read(Path::new(HOST).join("src/main.rs"))?);
    if copied != expected {
        return Err(format!(
            "{HOST}/src/main.rs `mod exit` is {copied:?}, but pipeline_suite::exit is {expected:?}: copy the numbers again"
        ));
    }
    Ok(())
}

/// The two things the GEMM example copies: its toolchain is the stable Rust of the workspace's
/// `rust-version` (the host crate's; rustup's name for it, with the patch number), and its exit
/// statuses are those of `pipeline_suite::exit` of the same names.
fn check_gemm_copies() -> Result {
    let workspace = read("Cargo.toml")?;
    let rust_version = workspace
        .lines()
        .find_map(|line| line.strip_prefix("rust-version = \""))
        .and_then(|rest| rest.strip_suffix('"'))
        .ok_or("Cargo.toml has no `rust-version = \"...\"` line")?;
    let toolchain = read(Path::new(GEMM_DIR).join("rust-toolchain.toml"))?;
    let want = format!("{rust_version}.0");
    if channel(&toolchain) != Some(want.as_str()) {
        return Err(format!(
            "{GEMM_DIR}/rust-toolchain.toml pins {:?}, the workspace's rust-version is {rust_version}: pin \"{want}\"",
            channel(&toolchain)
        ));
    }
    use pipeline_suite::exit;
    let copied = exit_statuses(&read(Path::new(GEMM_DIR).join("src/main.rs"))?);
    let known = [
        ("PASSED", exit::PASSED),
        ("TEST_FAILED", exit::TEST_FAILED),
        ("USAGE", exit::USAGE),
        ("HUNG", exit::HUNG),
        ("NO_DRIVER", exit::NO_DRIVER),
        ("SETUP", exit::SETUP),
    ];
    for (name, value) in &copied {
        if !known.contains(&(name.as_str(), *value)) {
            return Err(format!(
                "{GEMM_DIR}/src/main.rs has the exit status {name} = {value}, which pipeline_suite::exit does not (its statuses are {known:?}): copy the number"
            ));
        }
    }
    for needed in ["PASSED", "NO_DRIVER"] {
        if !copied.iter().any(|(name, _)| name == needed) {
            return Err(format!(
                "{GEMM_DIR}/src/main.rs has no exit status {needed}"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gemm_example_copies_the_toolchain_and_exit_statuses() {
        check_gemm_copies().unwrap();
    }

    /// The README's steps are the ones [`gemm_as_the_readme_says`] takes.
    #[test]
    fn the_gemm_readme_gives_the_steps_the_check_takes() {
        let readme = read(Path::new(GEMM_DIR).join("README.md")).unwrap();
        assert!(readme.contains(&format!("cp -r gpu-pipeline/{GEMM_DIR} {GEMM_COPY}")));
        assert!(readme.contains(&format!("sed -i 's|{GEMM_DEPENDENCY_PATH}|")));
        assert!(readme.contains("cargo run --release\n"));
        let manifest = read(Path::new(GEMM_DIR).join("Cargo.toml")).unwrap();
        assert!(manifest.contains(&format!(
            "gpu-gemm-host = {{ path = {GEMM_DEPENDENCY_PATH} }}"
        )));
        // The status the README documents for a machine without a driver.
        let no_driver = format!("exits with status {}", pipeline_suite::exit::NO_DRIVER);
        assert!(readme.contains(&no_driver), "{no_driver}");
    }

    #[test]
    fn the_readme_run_passes_only_as_documented() {
        use pipeline_suite::exit;
        let cargo = "   Compiling gemm-example v0.1.0\n    Finished `release` profile\n     Running `target/release/gemm-example`\n";
        let no_driver = format!(
            "{cargo}error: opening GPU 0: gemm: no CUDA driver (libcuda.so cannot be loaded): run this on ...\n"
        );
        let code = |c: u8| Some(i32::from(c));
        assert!(readme_run_verdict(code(exit::NO_DRIVER), "", &no_driver).is_ok());
        assert!(readme_run_verdict(code(exit::PASSED), "PASS: D = A * B^T\n", cargo).is_ok());
        // Another status with the line, the status without it, a failed build, a FAIL line.
        assert!(readme_run_verdict(code(exit::SETUP), "", &no_driver).is_err());
        assert!(readme_run_verdict(code(exit::NO_DRIVER), "", cargo).is_err());
        assert!(readme_run_verdict(Some(101), "", "error: could not compile").is_err());
        assert!(readme_run_verdict(code(exit::TEST_FAILED), "", "FAIL: D[0][0]").is_err());
        assert!(readme_run_verdict(None, "", &no_driver).is_err());
    }

    #[test]
    fn exit_statuses_are_read_from_const_lines() {
        let source = "mod exit {\n    /// Passed.\n    pub const PASSED: u8 = 0;\n    pub const NO_DRIVER: u8 = 4;\n    pub const OTHER: u32 = 9;\n}\n";
        assert_eq!(
            exit_statuses(source),
            [("PASSED".to_string(), 0), ("NO_DRIVER".to_string(), 4)]
        );
    }

    #[test]
    fn the_example_copies_the_toolchain_and_the_exit_statuses_exactly() {
        check_copies().unwrap();
    }

    #[test]
    fn channel_is_read_from_a_toolchain_file() {
        let file = "# comment\n[toolchain]\nchannel = \"nightly-2026-10-29\"\n";
        assert_eq!(channel(file), Some("nightly-2026-10-29"));
        assert_eq!(channel("[toolchain]\n"), None);
    }

    #[test]
    fn the_kernel_crate_config_sets_the_flags_the_library_requires() {
        let config = read(Path::new(KERNEL).join(".cargo/config.toml")).unwrap();
        for needed in [
            "target = \"nvptx64-nvidia-cuda\"",
            "\"-Ctarget-cpu=sm_90\"",
            "\"-Ctarget-feature=+ptx80\"",
            "build-std = [\"core\"]",
        ] {
            assert!(config.contains(needed), "the config lacks {needed}");
        }
        // The PTX name follows the package name; the README and the launcher name it.
        let manifest = read(Path::new(KERNEL).join("Cargo.toml")).unwrap();
        assert!(manifest.contains("name = \"example-kernels\""));
        assert!(PTX.ends_with("example_kernels.ptx"));
    }

    #[test]
    fn the_path_dependencies_reach_the_library() {
        for dir in [KERNEL, HOST] {
            let manifest = read(Path::new(dir).join("Cargo.toml")).unwrap();
            let path = manifest
                .lines()
                .find_map(|l| l.strip_prefix("gpu-pipeline = { path = \""))
                .and_then(|l| l.split('"').next())
                .unwrap_or_else(|| panic!("{dir}/Cargo.toml has no gpu-pipeline path dependency"));
            let library = crate::util::root().join(dir).join(path).join("Cargo.toml");
            assert!(
                read(&library).unwrap().contains("name = \"gpu-pipeline\""),
                "{}",
                library.display()
            );
        }
    }

    #[test]
    fn the_run_sh_section_requires_the_launcher_to_pass() {
        assert!(
            RUN_SH_SECTION.contains("\"$here/example-launcher\" \"$here/example_kernels.ptx\"")
        );
        assert!(RUN_SH_SECTION.contains("timeout "));
        assert!(RUN_SH_SECTION.contains("[ \"${PIPESTATUS[0]}\" -eq 0 ] || {"));
        assert!(RUN_SH_SECTION.contains("status=1"));
        assert!(RUN_SH_SECTION.contains("\"$here/gemm-example\" 2>&1"));
        assert!(RUN_SH_SECTION.contains("\"$here/attention-example\" 2>&1"));
        assert_eq!(RUN_SH_SECTION.matches("status=1").count(), 3);
        let names: Vec<&str> = bundle_files().iter().map(|(_, name)| *name).collect();
        for name in names {
            assert!(RUN_SH_SECTION.contains(&format!("$here/{name}")), "{name}");
        }
    }
}
