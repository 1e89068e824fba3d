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

/// The suite bundle's section: the test, then the module's sm_90a assembly. Both bounded, both
/// fail the run.
pub const RUN_SH_SECTION: &str = r#"echo "== gpu-hopper: the toolkit's leaves the GEMM does not run (wgmma RS, f16, FP8, swizzles, fragments; TMA reductions and prefetches; griddepcontrol; named barriers; the ordered sequence), each against a host reference"
timeout -k 10 180 "$here/hopper-test" "$here/hopper_kernels.ptx" 2>&1 | tee "$out/hopper.log"
[ "${PIPESTATUS[0]}" -eq 0 ] || { echo "FAIL: the toolkit's device tests did not pass: $(grep -c '^FAIL' "$out/hopper.log") FAIL lines"; status=1; }

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

/// The final module of [`build`].
pub fn artifact() -> PathBuf {
    NVPTX_SM90A.target_dir().join(MODULE)
}

/// The test binary of [`build_test`].
pub fn test_binary() -> PathBuf {
    crate::util::root().join("target/release/hopper-test")
}

/// The files of the suite bundle: (built file, name in the bundle).
pub fn bundle_files() -> [(PathBuf, &'static str); 2] {
    [(artifact(), MODULE), (test_binary(), "hopper-test")]
}

/// Builds the kernel crate for sm_90a (in a target folder of its own beside the GEMM's),
/// checks the PTX, and writes the module to `target/gpu/sm_90a/hopper_kernels.ptx`.
pub fn build(sh: &Shell) -> Result<PathBuf> {
    let start = Instant::now();
    let target = &NVPTX_SM90A;
    let target_dir = target.target_dir().with_extension("hopper");
    crate::gpu::starting("hopper (sm_90a)", target);
    let output = target.cargo_build_output_in(sh, CRATE, &[], &target_dir)?;
    if !output.status.success() {
        eprintln!("{}", String::from_utf8_lossy(&output.stderr));
        return Err(format!("building {CRATE} (sm_90a) failed"));
    }
    let built = target_dir.join(target.triple).join("release").join(MODULE);
    let ptx =
        std::fs::read_to_string(&built).map_err(|e| format!("reading {}: {e}", built.display()))?;
    check_ptx(&ptx)?;
    let out = artifact();
    std::fs::create_dir_all(target.target_dir())
        .map_err(|e| format!("creating {}: {e}", target.target_dir().display()))?;
    std::fs::write(&out, &ptx).map_err(|e| format!("writing {}: {e}", out.display()))?;
    println!(
        "  {:<8} {:<22} {:>6.1} s  {} (no local memory)",
        "hopper",
        target.triple,
        start.elapsed().as_secs_f64(),
        out.display()
    );
    crate::ptx_check::check_module("hopper", &out)?;
    Ok(out)
}

/// What the module must not have: local memory (an accumulator array or the RS fragments indexed
/// with a variable would go there, and ptxas would serialise the wgmmas, so the test would not
/// test the form the kernels use).
fn check_ptx(ptx: &str) -> Result {
    if ptx.contains("__local_depot") || ptx.contains(".local") {
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
        assert_eq!(RUN_SH_SECTION.matches("timeout ").count(), 2);
        assert_eq!(RUN_SH_SECTION.matches("status=1").count(), 2);
        assert!(RUN_SH_SECTION.contains(r#"tee "$out/hopper.log""#));
        assert!(RUN_SH_SECTION.contains("ptxas -arch=sm_90a \"$here/hopper_kernels.ptx\""));
        assert!(!RUN_SH_SECTION.contains('@'), "a placeholder left unfilled");
    }

    #[test]
    fn local_memory_fails_the_check() {
        check_ptx("\twgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16 ...;\n").unwrap();
        assert!(check_ptx(".local .align 4 .b8 __local_depot0[64];\nwgmma.mma_async").is_err());
        assert!(check_ptx("ret;").is_err());
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
            check_ptx(&ptx).unwrap();
            crate::ptx_check::check_module("hopper", &path).unwrap();
        }
    }
}
