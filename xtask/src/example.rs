//! The example kernel crate (`examples/kernel-crate`, whose README is the guide to a kernel crate
//! of one's own), built the way its user builds it: `cargo build --release` run in its own
//! folders, so that what is tested is its `.cargo/config.toml` and `rust-toolchain.toml`, not the
//! xtask's flags. `test-nvidia` runs its launcher (and puts both into the bundle).

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

/// The bundle's section for the example (placeholder `@EXAMPLE@` of `nvidia::RUN_SH`): the
/// launcher must exit 0 (every word right) within the time limit, or the run fails. Its own
/// timeout is 10 s; `timeout` bounds the process as a whole.
pub const RUN_SH_SECTION: &str = r#"echo "== examples/kernel-crate: the README's standalone kernel crate, run by its cudarc launcher"
timeout -k 10 60 "$here/example-launcher" "$here/example_kernels.ptx" 2>&1 | tee "$out/example.log"
[ "${PIPESTATUS[0]}" -eq 0 ] || { echo "FAIL: the example launcher did not pass"; status=1; }"#;

/// The files of the example in the bundle: (built file, name in the bundle).
pub fn bundle_files() -> [(PathBuf, &'static str); 2] {
    [
        (ptx(), "example_kernels.ptx"),
        (launcher(), "example-launcher"),
    ]
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

/// Builds the kernel's PTX and the launcher (release), each from its own folder, and returns them.
pub fn build(sh: &Shell) -> Result<(PathBuf, PathBuf)> {
    println!("building {DIR} from its own folders, as its user would:");
    user_cargo(sh, KERNEL, &["build", "--release", "--locked"])?;
    user_cargo(sh, HOST, &["build", "--release", "--locked"])?;
    let (ptx, launcher) = (ptx(), launcher());
    for artifact in [&ptx, &launcher] {
        if !artifact.exists() {
            return Err(format!(
                "the build of {DIR} left no {} (the README says it is there)",
                artifact.display()
            ));
        }
    }
    println!("  {}\n  {}", ptx.display(), launcher.display());
    crate::ptx_check::check_module("example", &ptx)?;
    Ok((ptx, launcher))
}

/// What CI checks of the example beyond [`build`]: formatting of both crates, clippy on both
/// (the kernel for nvptx64, through its config), and the launcher's unit tests (its data check).
pub fn check(sh: &Shell) -> Result<(PathBuf, PathBuf)> {
    println!(
        "checking {DIR} (its copies of the toolchain and exit statuses; fmt, clippy, the launcher's tests):"
    );
    check_copies()?;
    for dir in [KERNEL, HOST] {
        user_cargo(sh, dir, &["fmt", "--check"])?;
        user_cargo(
            sh,
            dir,
            &["clippy", "--release", "--locked", "--", "-D", "warnings"],
        )?;
    }
    user_cargo(sh, HOST, &["test", "--release", "--locked"])?;
    build(sh)
}

/// Runs the launcher on the example's PTX here and judges its exit status like the harness's
/// ([`verdict`](crate::device::verdict): the launcher uses the same statuses). `ci`: a missing
/// driver is a SKIPPED line.
pub fn run(sh: &Shell, ci: bool) -> Result {
    println!("== {DIR}: the README's standalone kernel crate, run by its cudarc launcher");
    crate::device::run_device_program(sh, DIR, &launcher(), &[&ptx()], ci)
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

#[cfg(test)]
mod tests {
    use super::*;

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
        let names: Vec<&str> = bundle_files().iter().map(|(_, name)| *name).collect();
        for name in names {
            assert!(RUN_SH_SECTION.contains(&format!("$here/{name}")), "{name}");
        }
    }
}
