//! Every GPU artifact of the repository, built in one go (`cargo xtask build`, and the GPU step
//! of `test`): the kernels for each target of [`gpu`]'s table and the GEMM's module.

use xshell::Shell;

use crate::gpu::{self, AMD, NVPTX, NVPTX_SM100A};
use crate::util::Result;

/// Builds the kernels for every GPU target.
pub fn build_all(sh: &Shell) -> Result<Vec<String>> {
    println!("building the device kernels (and the library) for every GPU target:");
    let mut artifacts = vec![
        gpu::build(sh, &NVPTX)?.display().to_string(),
        gpu::build(sh, &NVPTX_SM100A)?.display().to_string(),
        gpu::build_checked(sh)?.display().to_string(),
        gpu::build_bench(sh, false)?.display().to_string(),
    ];
    artifacts.push(crate::gemm_kernel::build(sh)?.display().to_string());
    for target in &AMD {
        artifacts.push(gpu::build(sh, target)?.display().to_string());
    }
    Ok(artifacts)
}
