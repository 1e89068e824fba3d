//! The GPU targets and how a crate is built for them.

use std::path::{Path, PathBuf};
use std::time::Instant;

use xshell::{Shell, cmd};

use crate::util::Result;

/// One GPU build: a target triple and a processor.
pub struct GpuTarget {
    /// Short name, also the target directory under `target/gpu/`.
    pub cpu: &'static str,
    /// The rustc target triple.
    pub triple: &'static str,
    /// Extra `-Ctarget-feature`s.
    pub features: &'static str,
    /// Extension of the linked artifact (`ptx`, `elf`).
    pub extension: &'static str,
}

/// NVIDIA: sm_90 with PTX ISA 8.0 (the `.acquire/.release` mbarrier forms, `expect_tx`,
/// `cp.async.bulk`, `fence.proxy.async`).
pub const NVPTX: GpuTarget = GpuTarget {
    cpu: "sm_90",
    triple: "nvptx64-nvidia-cuda",
    features: "+ptx80",
    extension: "ptx",
};

/// NVIDIA Blackwell sm_100a with PTX ISA 8.6: only to assemble `commit_mma` (`tcgen05.commit`),
/// which the H200 cannot run.
pub const NVPTX_SM100A: GpuTarget = GpuTarget {
    cpu: "sm_100a",
    triple: "nvptx64-nvidia-cuda",
    features: "+ptx86",
    extension: "ptx",
};

/// AMD: CDNA2 (wave64), CDNA3 (wave64), RDNA3 (wave32).
pub const AMD: [GpuTarget; 3] = [
    GpuTarget {
        cpu: "gfx90a",
        triple: "amdgcn-amd-amdhsa",
        features: "",
        extension: "elf",
    },
    GpuTarget {
        cpu: "gfx942",
        triple: "amdgcn-amd-amdhsa",
        features: "",
        extension: "elf",
    },
    GpuTarget {
        cpu: "gfx1100",
        triple: "amdgcn-amd-amdhsa",
        features: "",
        extension: "elf",
    },
];

/// The device-kernel crate: a no_std dependent of the library.
pub const KERNELS: &str = "tests/kernels";

/// Builds the kernels for `target` with the kernel crate's `features` (comma-separated), into
/// `target/gpu/<cpu>-<features with - for ,>`, and returns the artifact.
pub fn build_with_features_for(sh: &Shell, target: &GpuTarget, features: &str) -> Result<PathBuf> {
    let dir = features_dir(target, features);
    starting(
        &format!("{}-{}", target.cpu, features.replace(',', "-")),
        target,
    );
    let output = target.cargo_build_output_in(sh, KERNELS, &["--features", features], &dir)?;
    if !output.status.success() {
        eprintln!("{}", String::from_utf8_lossy(&output.stderr));
        return Err(format!(
            "building the kernels for {} (--features {features}) failed",
            target.cpu
        ));
    }
    let artifact = target.kernels_artifact_in(&dir);
    check_isa_of(target, &artifact)?;
    Ok(artifact)
}

/// [`ptx_isa_covers`] of a built PTX artifact (other targets' artifacts pass).
fn check_isa_of(target: &GpuTarget, artifact: &std::path::Path) -> Result<()> {
    if target.extension != "ptx" {
        return Ok(());
    }
    let ptx = std::fs::read_to_string(artifact)
        .map_err(|e| format!("reading {}: {e}", artifact.display()))?;
    ptx_isa_covers(&ptx).map_err(|e| format!("{}: {e}", artifact.display()))
}

/// Builds the sm_90 kernels with `features` (see [`build_with_features_for`]), timed.
pub fn build_with_features(sh: &Shell, features: &str) -> Result<PathBuf> {
    let start = Instant::now();
    let artifact = build_with_features_for(sh, &NVPTX, features)?;
    println!(
        "  {:<8} {:<22} {:>6.1} s  {}",
        format!("sm_90+{features}"),
        NVPTX.triple,
        start.elapsed().as_secs_f64(),
        artifact.display()
    );
    Ok(artifact)
}

/// Builds the kernels for `target` with the `checked` feature, into `target/gpu/<cpu>-checked`,
/// and returns the artifact.
pub fn build_checked_for(sh: &Shell, target: &GpuTarget) -> Result<PathBuf> {
    build_with_features_for(sh, target, "checked")
}

/// Builds the sm_90 kernels with the `checked` feature into `target/gpu/sm_90-checked`, timed.
pub fn build_checked(sh: &Shell) -> Result<PathBuf> {
    build_with_features(sh, "checked")
}

/// The sm_90 benchmark kernels (the `bench` feature), and with `checked` their checked build.
pub fn build_bench(sh: &Shell, checked: bool) -> Result<PathBuf> {
    build_with_features(sh, if checked { "bench,checked" } else { "bench" })
}

/// The line printed before a build starts (`name`: the build's folder under `target/gpu/`): a
/// build takes from seconds to minutes, and cargo's own output is kept for its failures.
pub fn starting(name: &str, target: &GpuTarget) {
    println!("  building {name} ({}) ...", target.triple);
}

/// The target directory of `target`'s build with `features`.
fn features_dir(target: &GpuTarget, features: &str) -> PathBuf {
    crate::util::root().join("target/gpu").join(format!(
        "{}-{}",
        target.cpu,
        features.replace(',', "-")
    ))
}

/// The PTX of [`build_checked`].
pub fn checked_artifact() -> PathBuf {
    NVPTX.kernels_artifact_in(&features_dir(&NVPTX, "checked"))
}

impl GpuTarget {
    /// The target directory of this build.
    pub fn target_dir(&self) -> PathBuf {
        crate::util::root().join("target/gpu").join(self.cpu)
    }

    /// The `CARGO_ENCODED_RUSTFLAGS` of this build.
    fn rustflags(&self) -> String {
        let mut flags = format!("-Ctarget-cpu={}", self.cpu);
        if !self.features.is_empty() {
            flags.push_str(&format!("\x1f-Ctarget-feature={}", self.features));
        }
        flags
    }

    /// Runs `cargo build --release` of `manifest_dir` for this target with `extra` arguments.
    /// Returns the command's output instead of failing, for compile-fail tests.
    pub fn cargo_build_output(
        &self,
        sh: &Shell,
        manifest_dir: &str,
        extra: &[&str],
    ) -> Result<std::process::Output> {
        self.cargo_build_output_in(sh, manifest_dir, extra, &self.target_dir())
    }

    /// As [`cargo_build_output`](Self::cargo_build_output), into `target_dir`.
    pub fn cargo_build_output_in(
        &self,
        sh: &Shell,
        manifest_dir: &str,
        extra: &[&str],
        target_dir: &Path,
    ) -> Result<std::process::Output> {
        self.cargo_build_output_with_flags(sh, manifest_dir, extra, target_dir, &self.rustflags())
    }

    /// As [`cargo_build_output_in`](Self::cargo_build_output_in), with `rustflags` (encoded as
    /// `CARGO_ENCODED_RUSTFLAGS`: separated by `\x1f`) in place of this target's processor and
    /// features: for compile-fail cases built with a wrong configuration on purpose. Give such a
    /// build its own `target_dir`, or it throws away the cache of the normal builds.
    pub fn cargo_build_output_with_flags(
        &self,
        sh: &Shell,
        manifest_dir: &str,
        extra: &[&str],
        target_dir: &Path,
        rustflags: &str,
    ) -> Result<std::process::Output> {
        let manifest = Path::new(manifest_dir).join("Cargo.toml");
        let triple = self.triple;
        cmd!(sh, "cargo build --release --manifest-path {manifest} --target {triple} -Zbuild-std=core --target-dir {target_dir} {extra...}")
            .env("CARGO_ENCODED_RUSTFLAGS", rustflags)
            .quiet()
            .ignore_status()
            .output()
            .map_err(crate::util::err("cannot run cargo"))
    }

    /// `cargo clippy -D warnings` of `manifest_dir` for this target with `extra` arguments (a
    /// device crate's lints, on the code its GPU build compiles), in its own target folder beside
    /// the build's.
    pub fn cargo_clippy(&self, sh: &Shell, manifest_dir: &str, extra: &[&str]) -> Result {
        let manifest = Path::new(manifest_dir).join("Cargo.toml");
        let triple = self.triple;
        let target_dir = self.target_dir().with_extension("clippy");
        cmd!(sh, "cargo clippy --release --manifest-path {manifest} --target {triple} -Zbuild-std=core --target-dir {target_dir} {extra...} -- -D warnings")
            .env("CARGO_ENCODED_RUSTFLAGS", self.rustflags())
            .run()
            .map_err(|_| format!("clippy found problems in {manifest_dir} for {} (above)", self.cpu))
    }

    /// Builds `manifest_dir` for this target; on failure, shows cargo's output.
    pub fn cargo_build(&self, sh: &Shell, manifest_dir: &str) -> Result {
        let output = self.cargo_build_output(sh, manifest_dir, &[])?;
        if !output.status.success() {
            eprintln!("{}", String::from_utf8_lossy(&output.stderr));
            return Err(format!(
                "building {manifest_dir} for {} ({}) failed",
                self.triple, self.cpu
            ));
        }
        Ok(())
    }

    /// The kernels' artifact of this target.
    pub fn kernels_artifact(&self) -> PathBuf {
        self.kernels_artifact_in(&self.target_dir())
    }

    /// The kernels' artifact of this target built into `target_dir`.
    fn kernels_artifact_in(&self, target_dir: &Path) -> PathBuf {
        target_dir
            .join(self.triple)
            .join("release")
            .join(format!("pipeline_kernels.{}", self.extension))
    }
}

/// Builds the device kernels (and so the library) for `target`, and returns the artifact.
pub fn build(sh: &Shell, target: &GpuTarget) -> Result<PathBuf> {
    let start = Instant::now();
    starting(target.cpu, target);
    target.cargo_build(sh, KERNELS)?;
    let artifact = target.kernels_artifact();
    if !artifact.exists() {
        return Err(format!(
            "the build for {} left no artifact at {}",
            target.cpu,
            artifact.display()
        ));
    }
    check_isa_of(target, &artifact)?;
    println!(
        "  {:<8} {:<22} {:>6.1} s  {}",
        target.cpu,
        target.triple,
        start.elapsed().as_secs_f64(),
        artifact.display()
    );
    Ok(artifact)
}

/// Instructions and the PTX ISA version each first appeared in (PTX ISA, each instruction's
/// "PTX ISA Notes"): a module that uses one must declare at least that `.version`, or the
/// driver's JIT refuses the whole module.
const PTX_ISA_OF: [(&str, (u32, u32)); 7] = [
    ("wgmma.", (8, 0)),
    ("setmaxnreg.", (8, 0)),
    ("cp.async.bulk.", (8, 0)),
    ("elect.sync", (8, 0)),
    ("st.async.", (8, 1)),
    ("red.async.", (8, 1)),
    ("tcgen05.", (8, 6)),
];

/// Whether `ptx`'s `.version` covers every instruction of [`PTX_ISA_OF`] it uses (an error that
/// names the instruction and both versions otherwise).
pub fn ptx_isa_covers(ptx: &str) -> Result<()> {
    let version = ptx
        .lines()
        .find_map(|l| l.trim().strip_prefix(".version "))
        .and_then(|v| {
            let (major, minor) = v.trim().split_once('.')?;
            Some((major.parse::<u32>().ok()?, minor.parse::<u32>().ok()?))
        })
        .ok_or("the PTX has no `.version MAJOR.MINOR` line")?;
    for (instruction, need) in PTX_ISA_OF {
        if version < need && ptx.contains(instruction) {
            return Err(format!(
                "the PTX uses `{instruction}`, which needs PTX ISA {}.{}, but declares .version {}.{} (build it with -Ctarget-feature=+ptx{}{})",
                need.0, need.1, version.0, version.1, need.0, need.1
            ));
        }
    }
    Ok(())
}
