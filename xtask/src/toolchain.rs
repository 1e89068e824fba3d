//! Checks that the pinned toolchain and its components are installed, with one-line advice.

use std::path::PathBuf;

use xshell::{Shell, cmd};

use crate::util::Result;

const SETUP: &str =
    "run `rustup toolchain install` in the repository root (it reads rust-toolchain.toml)";

/// The active toolchain's sysroot.
pub fn sysroot(sh: &Shell) -> Result<PathBuf> {
    let sysroot = cmd!(sh, "rustc --print sysroot")
        .quiet()
        .ignore_stderr()
        .read()
        .map_err(|_| format!("rustc is not available; {SETUP}"))?;
    Ok(PathBuf::from(sysroot.trim()))
}

/// The host triple of the active toolchain.
fn host_triple(sh: &Shell) -> Result<String> {
    let verbose = cmd!(sh, "rustc -vV")
        .quiet()
        .ignore_stderr()
        .read()
        .map_err(|_| format!("rustc is not available; {SETUP}"))?;
    verbose
        .lines()
        .find_map(|line| line.strip_prefix("host: "))
        .map(str::to_string)
        .ok_or_else(|| "cannot read the host triple from `rustc -vV`".to_string())
}

/// The directory of the LLVM tools shipped with the toolchain (`llvm-objdump`, the bitcode linker).
pub fn llvm_bin(sh: &Shell) -> Result<PathBuf> {
    Ok(sysroot(sh)?
        .join("lib/rustlib")
        .join(host_triple(sh)?)
        .join("bin"))
}

/// Fails with one line when the toolchain is not the pinned nightly or a component is missing.
pub fn check(sh: &Shell) -> Result {
    let version = cmd!(sh, "rustc --version")
        .quiet()
        .ignore_stderr()
        .read()
        .map_err(|_| format!("rustc is not available; {SETUP}"))?;
    let pinned = std::fs::read_to_string(crate::util::root().join("rust-toolchain.toml"))
        .map_err(crate::util::err("rust-toolchain.toml"))?;
    let channel = pinned
        .lines()
        .find_map(|l| l.trim().strip_prefix("channel = "))
        .map(|c| c.trim_matches('"').to_string())
        .unwrap_or_default();
    let date = channel.trim_start_matches("nightly-");
    if !version.contains("nightly") {
        return Err(format!(
            "the active rustc is `{}`, not the pinned {channel}; {SETUP}",
            version.trim()
        ));
    }
    let sysroot = sysroot(sh)?;
    let bin = llvm_bin(sh)?;
    let missing = [
        (
            "rust-src",
            sysroot.join("lib/rustlib/src/rust/library/core"),
        ),
        ("llvm-tools", bin.join("llvm-objdump")),
        (
            "llvm-bitcode-linker",
            bin.join("self-contained/llvm-bitcode-linker"),
        ),
    ]
    .into_iter()
    .find(|(_, path)| !path.exists());
    if let Some((component, path)) = missing {
        return Err(format!(
            "the `{component}` component of {channel} is missing ({} not found); {SETUP}",
            path.display()
        ));
    }
    if !sysroot.to_string_lossy().contains(date) {
        eprintln!(
            "warning: the active toolchain ({}) is not {channel}",
            sysroot.display()
        );
    }
    Ok(())
}
