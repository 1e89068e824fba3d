//! The toolkit's device tests (`tests/hopper-kernels`, run by `tests/hopper-test`): the module's
//! sm_90a build and its checks, the test binary, their files and section in the suite bundle,
//! and the run on this machine (`cargo xtask test-nvidia`).

use std::path::PathBuf;
use std::time::Instant;

use xshell::{Shell, cmd};

use crate::gemm_kernel::NVPTX_SM90A;
use crate::util::Result;

/// The kernel crate.
pub const CRATE: &str = "tests/hopper-kernels";

/// The final module's file name under `target/gpu/sm_90a/`.
const MODULE: &str = "hopper_kernels.ptx";
/// The checked build's (feature `checked`: the toolkit's hang diagnostics and the broken
/// kernels).
const MODULE_CHECKED: &str = "hopper_kernels_checked.ptx";

/// The suite bundle's section: the test, the named turns again on the checked build, the broken
/// kernels, then the module's sm_90a assembly. Each bounded, each fails the run.
pub const RUN_SH_SECTION: &str = r#"echo "== gpu-hopper: the toolkit's leaves the GEMM does not run (wgmma RS, f16, FP8, swizzles, fragments; TMA reductions and prefetches; griddepcontrol; named barriers; the ordered sequence; the named turns), each against a host reference"
timeout -k 10 180 "$here/hopper-test" "$here/hopper_kernels.ptx" 2>&1 | tee "$out/hopper.log"
[ "${PIPESTATUS[0]}" -eq 0 ] || { echo "FAIL: the toolkit's device tests did not pass: $(grep -c '^FAIL' "$out/hopper.log") FAIL lines"; status=1; }

echo "== gpu-hopper: the named turns on the checked build's counted barriers (no false alarm, the same order)"
timeout -k 10 180 "$here/hopper-test" "$here/hopper_kernels_checked.ptx" --filter named_turns 2>&1 | tee "$out/hopper_checked_turns.log"
[ "${PIPESTATUS[0]}" -eq 0 ] || { echo "FAIL: the named turns on the checked build: $(grep -c '^FAIL' "$out/hopper_checked_turns.log") FAIL lines"; status=1; }

echo "== gpu-hopper: broken kernels of the checked build (named barriers, the ordered sequence): each must end within 1 s with the record that says its mistake"
timeout -k 10 180 "$here/hopper-test" "$here/hopper_kernels_checked.ptx" --broken 2>&1 | tee "$out/hopper_broken.log"
[ "${PIPESTATUS[0]}" -eq 0 ] || { echo "FAIL: the toolkit's broken kernels: $(grep -c '^FAIL' "$out/hopper_broken.log") FAIL lines"; status=1; }

echo "== gpu-hopper: ptxas -arch=sm_90a of the toolkit's test module"
if command -v ptxas >/dev/null; then
  if timeout 120 ptxas -arch=sm_90a "$here/hopper_kernels.ptx" -o "$out/hopper_sm90a.cubin" 2>"$out/ptxas_hopper.log"; then
    echo "ptxas: the module assembles for sm_90a ($(grep -c . "$out/ptxas_hopper.log") lines of warnings)"
    rm -f "$out/hopper_sm90a.cubin"
  else
    cat "$out/ptxas_hopper.log"; echo "FAIL: ptxas rejected the toolkit's test module"; status=1
  fi
else
  echo "SKIPPED: ptxas not found"
fi"#;

/// The plain module of [`build`].
pub fn artifact() -> PathBuf {
    NVPTX_SM90A.target_dir().join(MODULE)
}

/// The checked module of [`build`].
pub fn checked_artifact() -> PathBuf {
    NVPTX_SM90A.target_dir().join(MODULE_CHECKED)
}

/// The test binary of [`build_test`].
pub fn test_binary() -> PathBuf {
    crate::util::root().join("target/release/hopper-test")
}

/// The files of the suite bundle: (built file, name in the bundle).
pub fn bundle_files() -> [(PathBuf, &'static str); 3] {
    [
        (artifact(), MODULE),
        (checked_artifact(), MODULE_CHECKED),
        (test_binary(), "hopper-test"),
    ]
}

/// Builds the kernel crate for sm_90a twice (in target folders of their own beside the GEMM's),
/// plain and `checked`, checks the PTX, and writes the modules to
/// `target/gpu/sm_90a/hopper_kernels.ptx` and `hopper_kernels_checked.ptx`; returns the plain
/// one's path.
pub fn build(sh: &Shell) -> Result<PathBuf> {
    let out = build_one(sh, false)?;
    build_one(sh, true)?;
    Ok(out)
}

/// One of [`build`]'s two modules.
fn build_one(sh: &Shell, checked: bool) -> Result<PathBuf> {
    let start = Instant::now();
    let target = &NVPTX_SM90A;
    let (suffix, extra, name, module): (_, &[&str], _, _) = if checked {
        (
            "hopper-checked",
            &["--features", "checked"],
            "hopper (checked)",
            MODULE_CHECKED,
        )
    } else {
        ("hopper", &[], "hopper", MODULE)
    };
    let target_dir = target.target_dir().with_extension(suffix);
    crate::gpu::starting(&format!("{name} (sm_90a)"), target);
    let output = target.cargo_build_output_in(sh, CRATE, extra, &target_dir)?;
    if !output.status.success() {
        eprintln!("{}", String::from_utf8_lossy(&output.stderr));
        return Err(format!("building {CRATE} ({name}, sm_90a) failed"));
    }
    // Cargo names the cdylib after the crate, whatever the features.
    let built = target_dir.join(target.triple).join("release").join(MODULE);
    let ptx =
        std::fs::read_to_string(&built).map_err(|e| format!("reading {}: {e}", built.display()))?;
    check_ptx(&ptx, checked)?;
    let out = target.target_dir().join(module);
    std::fs::create_dir_all(target.target_dir())
        .map_err(|e| format!("creating {}: {e}", target.target_dir().display()))?;
    std::fs::write(&out, &ptx).map_err(|e| format!("writing {}: {e}", out.display()))?;
    println!(
        "  {:<8} {:<22} {:>6.1} s  {}{}",
        if checked { "hopper+c" } else { "hopper" },
        target.triple,
        start.elapsed().as_secs_f64(),
        out.display(),
        if checked { "" } else { " (no local memory)" }
    );
    crate::ptx_check::check_module(if checked { "hopper-checked" } else { "hopper" }, &out)?;
    Ok(out)
}

/// What the module must not have: local memory (an accumulator array or the RS fragments indexed
/// with a variable would go there, and ptxas would serialise the wgmmas, so the test would not
/// test the form the kernels use); and what it must have: the wgmmas and, in the checked build,
/// the broken kernels. The checked build may use local memory (its record writer's).
fn check_ptx(ptx: &str, checked: bool) -> Result {
    crate::gpu::ptx_isa_covers(ptx)
        .map_err(|e| format!("the toolkit's test module ({CRATE}): {e}"))?;
    if checked {
        for case in layout::BROKEN_CASES {
            if !ptx.contains(&format!(".entry {}(", case.name)) {
                return Err(format!(
                    "the toolkit's checked test module ({CRATE}) has no kernel `{}`",
                    case.name
                ));
            }
        }
    } else if ptx.contains("__local_depot") || ptx.contains(".local") {
        return Err(format!(
            "the toolkit's test module ({CRATE}) uses local memory (an accumulator or fragment array indexed with a variable?)"
        ));
    }
    if !ptx.contains("wgmma.mma_async") {
        return Err(format!(
            "the toolkit's test module ({CRATE}) has no wgmma.mma_async"
        ));
    }
    Ok(())
}

/// The kernels' and the host test's shared layout (the broken cases' names, for the check).
#[allow(dead_code, unused_macros)]
#[path = "../../tests/hopper-kernels/src/layout.rs"]
mod layout;

/// Builds the test binary (release, with the commit baked in).
pub fn build_test(sh: &Shell) -> Result {
    let commit = crate::device::commit(sh);
    cmd!(sh, "cargo build --release -p hopper-test")
        .env("GPU_PIPELINE_COMMIT", &commit)
        .run()
        .map_err(|_| "building hopper-test failed (above)".to_string())
}

/// Runs the test on this machine, with the harness's verdict: in `ci`, only a missing driver
/// may be SKIPPED.
pub fn run(sh: &Shell, ci: bool) -> Result {
    println!("== gpu-hopper: the toolkit's leaves the GEMM does not run, against host references");
    let module = artifact();
    crate::device::run_device_program(
        sh,
        "gpu-hopper device tests",
        &test_binary(),
        &[&module],
        ci,
    )?;
    println!("== gpu-hopper: the named turns on the checked build's counted barriers");
    let checked = checked_artifact();
    crate::device::run_device_program(
        sh,
        "gpu-hopper named turns, checked build",
        &test_binary(),
        &[
            &checked,
            std::path::Path::new("--filter"),
            std::path::Path::new("named_turns"),
        ],
        ci,
    )?;
    println!("== gpu-hopper: broken kernels of the checked build");
    crate::device::run_device_program(
        sh,
        "gpu-hopper broken kernels",
        &test_binary(),
        &[&checked, std::path::Path::new("--broken")],
        ci,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_run_sh_section_runs_every_bundled_file_bounded() {
        for (_, name) in bundle_files() {
            assert!(RUN_SH_SECTION.contains(&format!("$here/{name}")), "{name}");
        }
        assert_eq!(RUN_SH_SECTION.matches("timeout ").count(), 4);
        assert_eq!(RUN_SH_SECTION.matches("status=1").count(), 4);
        assert!(RUN_SH_SECTION.contains(r#"tee "$out/hopper.log""#));
        assert!(RUN_SH_SECTION.contains(r#""$here/hopper_kernels_checked.ptx" --broken"#));
        assert!(
            RUN_SH_SECTION.contains(r#""$here/hopper_kernels_checked.ptx" --filter named_turns"#)
        );
        assert!(RUN_SH_SECTION.contains("ptxas -arch=sm_90a \"$here/hopper_kernels.ptx\""));
        assert!(!RUN_SH_SECTION.contains('@'), "a placeholder left unfilled");
    }

    /// The header of a module built for PTX ISA 8.0, as the fixtures' first lines.
    const HEADER: &str = ".version 8.0\n.target sm_90a\n.address_size 64\n";

    #[test]
    fn local_memory_fails_the_check() {
        check_ptx(
            &format!("{HEADER}\twgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16 ...;\n"),
            false,
        )
        .unwrap();
        assert!(
            check_ptx(
                &format!("{HEADER}.local .align 4 .b8 __local_depot0[64];\nwgmma.mma_async"),
                false
            )
            .is_err()
        );
        assert!(check_ptx(&format!("{HEADER}ret;"), false).is_err());
        // A module whose header is older than its instructions.
        let old = HEADER.replace("8.0", "7.8");
        let e = check_ptx(&format!("{old}\twgmma.fence.sync.aligned;\n"), false).unwrap_err();
        assert!(e.contains("PTX ISA 8.0"), "{e}");
    }

    /// The checked build must hold every broken case's kernel.
    #[test]
    fn a_missing_broken_kernel_fails_the_check() {
        let all: String = layout::BROKEN_CASES
            .iter()
            .map(|c| format!(".visible .entry {}(\n", c.name))
            .collect();
        let ptx = format!("{HEADER}{all}wgmma.mma_async");
        check_ptx(&ptx, true).unwrap();
        let without = ptx.replace(".entry broken_sequence_stops(", ".entry other(");
        let message = check_ptx(&without, true).unwrap_err();
        assert!(message.contains("`broken_sequence_stops`"), "{message}");
    }

    #[test]
    fn the_module_path_is_under_the_sm90a_target() {
        assert!(artifact().ends_with("target/gpu/sm_90a/hopper_kernels.ptx"));
    }

    /// The built module passes the convergence check, where it exists (`cargo xtask build`).
    #[test]
    fn the_built_module_passes() {
        let path = artifact();
        if path.exists() {
            let ptx = std::fs::read_to_string(&path).unwrap();
            check_ptx(&ptx, false).unwrap();
            crate::ptx_check::check_module("hopper", &path).unwrap();
        }
        let path = checked_artifact();
        if path.exists() {
            let ptx = std::fs::read_to_string(&path).unwrap();
            check_ptx(&ptx, true).unwrap();
            crate::ptx_check::check_module("hopper-checked", &path).unwrap();
        }
    }
}
