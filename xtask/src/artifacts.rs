//! Every GPU artifact of the repository, built in one go (`cargo xtask build`, and the GPU step
//! of `test`): the kernels for each target of [`gpu`]'s table and the GEMM's module; each sm_90
//! module through the convergence check as it is built ([`ptx_check`]; the GEMM's in its own task).

use xshell::Shell;

use crate::gpu::{self, AMD, NVPTX, NVPTX_SM100A};
use crate::ptx_check;
use crate::util::Result;

/// Builds the kernels for every GPU target.
pub fn build_all(sh: &Shell) -> Result<Vec<String>> {
    println!("building the device kernels (and the library) for every GPU target:");
    let sm90 = gpu::build(sh, &NVPTX)?;
    ptx_check::check_module("sm_90", &sm90)?;
    let sm100a = gpu::build(sh, &NVPTX_SM100A)?;
    let checked = gpu::build_checked(sh)?;
    ptx_check::check_module("checked", &checked)?;
    let bench = gpu::build_bench(sh, false)?;
    ptx_check::check_module("bench", &bench)?;
    let mut artifacts: Vec<String> = [sm90, sm100a, checked, bench]
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    artifacts.push(crate::gemm_kernel::build(sh)?.display().to_string());
    for target in &AMD {
        artifacts.push(gpu::build(sh, target)?.display().to_string());
    }
    Ok(artifacts)
}
