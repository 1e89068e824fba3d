//! Every GPU artifact of the repository, built in one go (`cargo xtask build`, and the GPU step
//! of `test`): the kernels for each target of [`gpu`]'s table, the GEMM's module and the
//! toolkit's test module; each sm_90 module through the convergence check as it is built
//! ([`ptx_check`]; the GEMM's in its own task).
//! `cargo xtask build --only NAME` builds one of them ([`MODULES`]).

use std::path::PathBuf;

use xshell::Shell;

use crate::gpu::{self, AMD, NVPTX, NVPTX_SM100A};
use crate::ptx_check;
use crate::util::Result;

/// The modules [`build_all`] builds, in order, by the name `--only` takes (the build's folder
/// under `target/gpu/`, `gemm` for the GEMM's `sm_90a` and `hopper` for the toolkit's test
/// kernels' `sm_90a`, `attention` for the attention kernels', `attention-checked` for their
/// checked build).
pub const MODULES: [&str; 11] = [
    "sm_90",
    "sm_100a",
    "sm_90-checked",
    "sm_90-bench",
    "gemm",
    "hopper",
    "attention",
    "attention-checked",
    "gfx90a",
    "gfx942",
    "gfx1100",
];

/// Builds (and checks) the module `name` of [`MODULES`], and returns its path.
fn build_one(sh: &Shell, name: &str) -> Result<PathBuf> {
    match name {
        "sm_90" => {
            let sm90 = gpu::build(sh, &NVPTX)?;
            ptx_check::check_module("sm_90", &sm90)?;
            Ok(sm90)
        }
        "sm_100a" => gpu::build(sh, &NVPTX_SM100A),
        "sm_90-checked" => {
            let checked = gpu::build_checked(sh)?;
            ptx_check::check_module("checked", &checked)?;
            Ok(checked)
        }
        "sm_90-bench" => {
            let bench = gpu::build_bench(sh, false)?;
            ptx_check::check_module("bench", &bench)?;
            Ok(bench)
        }
        "gemm" => crate::gemm_kernel::build(sh),
        "hopper" => crate::hopper::build(sh),
        "attention" => crate::attention::build(sh),
        "attention-checked" => crate::attention::build_checked(sh),
        amd => match AMD.iter().find(|target| target.cpu == amd) {
            Some(target) => gpu::build(sh, target),
            None => Err(format!(
                "no GPU module is named `{name}`; `--only` takes one of: {}",
                MODULES.join(", ")
            )),
        },
    }
}

/// Builds the kernels for every GPU target, or with `only` the one module of that name
/// ([`MODULES`]; any other name is an error that lists them), and returns the artifacts.
pub fn build_all(sh: &Shell, only: Option<&str>) -> Result<Vec<String>> {
    let names: &[&str] = match only {
        Some(name) => &[name],
        None => &MODULES,
    };
    if let Some(unknown) = names.iter().find(|name| !MODULES.contains(name)) {
        return Err(format!(
            "no GPU module is named `{unknown}`; `--only` takes one of: {}",
            MODULES.join(", ")
        ));
    }
    println!(
        "building the device kernels (and the library): {}",
        names.join(", ")
    );
    names
        .iter()
        .map(|name| build_one(sh, name).map(|path| path.display().to_string()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_module_is_an_error_that_lists_the_names() {
        let sh = Shell::new().unwrap();
        let e = build_all(&sh, Some("sm_80")).unwrap_err();
        assert!(e.contains("`sm_80`"), "{e}");
        for name in MODULES {
            assert!(e.contains(name), "{e}");
        }
    }

    #[test]
    fn every_amd_target_and_every_gpu_folder_has_a_name() {
        for target in &AMD {
            assert!(MODULES.contains(&target.cpu), "{}", target.cpu);
        }
        for target in [&NVPTX, &NVPTX_SM100A] {
            assert!(MODULES.contains(&target.cpu), "{}", target.cpu);
        }
    }
}
