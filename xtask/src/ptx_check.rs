//! The PTX convergence check (`crates/ptx-uniform`) on every sm_90 module the build makes besides
//! the GEMM's (which `gemm_kernel::check_ptx` checks with its own expectations): the device test
//! kernels plain, checked and for the benchmarks, the example kernel crate, and the toolkit's
//! test kernels (sm_90a, `hopper`). One line per module. And the bless of the checker's fixtures (`--bless` of `snapshots` and `test`).
//!
//! No module built here has a finding, so there is no list of accepted ones: the deliberately
//! broken kernels of the checked build (`tests/kernels/src/broken.rs`) break the pipeline
//! protocols (a missing release, a double arrival, a wrong lap), not convergence, and their
//! failure reports trap, which the checker takes as the end of the kernel. A finding fails the
//! build; a kernel that must diverge on purpose would be listed here with its reason.

use std::path::Path;

use crate::util::Result;

/// Checks the module at `path` (`what` names it in the line printed) and prints one line: its
/// entries, the `.aligned` instructions checked, its branches. Fails with every finding.
pub fn check_module(what: &str, path: &Path) -> Result {
    let ptx =
        std::fs::read_to_string(path).map_err(|e| format!("reading {}: {e}", path.display()))?;
    let reports = ptx_uniform::check(&ptx).map_err(|e| {
        format!(
            "{what} ({}) fails the PTX convergence check (an .aligned instruction on a path only part of its warp or warpgroup takes):\n{e}",
            path.display()
        )
    })?;
    println!("  {}", summary(what, &reports));
    Ok(())
}

/// The line [`check_module`] prints.
fn summary(what: &str, reports: &[ptx_uniform::EntryReport]) -> String {
    let sum = |f: fn(&ptx_uniform::EntryReport) -> usize| reports.iter().map(f).sum::<usize>();
    format!(
        "{:<8} convergence: {} entries clean, {} .aligned ({} wgmma.mma_async) on uniform paths; {} conditional branches, {} lane-divergent, {} only warp-uniform",
        what,
        reports.len(),
        sum(|r| r.aligned),
        sum(|r| r.wgmmas),
        sum(|r| r.branches),
        sum(|r| r.lane_divergent),
        sum(|r| r.warp_divergent),
    )
}

/// The checker's fixtures: `crates/ptx-uniform/tests/fixtures/*.ptx`, each with its expected
/// report `*.expected` (compared by that crate's `tests/fixtures.rs`).
fn fixtures() -> std::path::PathBuf {
    crate::util::root().join("crates/ptx-uniform/tests/fixtures")
}

/// Rewrites every fixture's expected report from the checker's current output.
pub fn bless_fixtures() -> Result {
    let dir = fixtures();
    let entries = std::fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut blessed = 0;
    for entry in entries {
        let path = entry.map_err(|e| format!("{}: {e}", dir.display()))?.path();
        if path.extension().is_none_or(|e| e != "ptx") {
            continue;
        }
        let ptx = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let expected = path.with_extension("expected");
        std::fs::write(&expected, ptx_uniform::render(&ptx))
            .map_err(|e| format!("{}: {e}", expected.display()))?;
        blessed += 1;
    }
    println!(
        "  blessed {blessed} expected reports of the convergence check in {}",
        dir.display()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_divergent_module_fails_naming_the_module_and_the_instruction() {
        let dir = std::env::temp_dir().join(format!("xtask-ptx-check-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("divergent.ptx");
        let fixture = fixtures().join("lane_divergent.ptx");
        std::fs::copy(&fixture, &path).unwrap();
        let e = check_module("test", &path).unwrap_err();
        assert!(
            e.contains("test (") && e.contains("`bar.sync` must be executed"),
            "{e}"
        );
        std::fs::copy(fixtures().join("uniform_branch.ptx"), &path).unwrap();
        check_module("test", &path).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_summary_adds_up_the_entries() {
        let ptx = std::fs::read_to_string(fixtures().join("warp_uniform.ptx")).unwrap();
        let reports = ptx_uniform::analyse(&ptx).unwrap();
        let line = summary("sm_90", &reports);
        assert!(
            line.contains("2 entries clean, 8 .aligned (1 wgmma.mma_async)"),
            "{line}"
        );
        assert!(
            line.contains("2 conditional branches, 0 lane-divergent, 1 only warp-uniform"),
            "{line}"
        );
    }

    /// The device test kernels of the last build pass, plain and checked, where they exist
    /// (`cargo xtask build`; the build itself checks them, and the example's, every time; this
    /// test shows the numbers).
    #[test]
    fn the_built_modules_pass() {
        let modules = [
            ("sm_90", crate::gpu::NVPTX.kernels_artifact()),
            ("checked", crate::gpu::checked_artifact()),
        ];
        for (what, path) in modules {
            if path.exists() {
                check_module(what, &path).unwrap();
            }
        }
    }
}
