//! **The place where the Rust GEMM under test plugs in.**
//!
//! Until the GEMM kernel crate and its host API exist, [`ours`] returns `None` and the benchmark
//! prints [`SKIPPED`] for every shape: no number is ever made up.
//!
//! To add it (issue 13): depend on the host API crate in `tests/gemm-bench/Cargo.toml`, write a
//! type that implements [`Gemm`](crate::gemm::Gemm) over it (the `Operands` are raw device
//! addresses of row-major bf16 matrices, A: M x K, B: N x K, C and D: M x N; C holds NaN when
//! beta is 0 and must not be read), and return it from [`ours`]:
//!
//! ```ignore
//! struct Ours { gemm: gpu_gemm::Gemm }
//! impl Gemm for Ours {
//!     fn name(&self) -> String { "ours".into() }
//!     fn prepare(&mut self, _: &mut Timer, p: &Problem, _: &Operands) -> Result<(), String> {
//!         // choose the tile configuration, build the tensor maps for p.shape
//!     }
//!     fn run(&mut self, stream: &CudaStream, p: &Problem, o: &Operands) -> Result<(), String> {
//!         self.gemm.launch(stream, p.alpha, o.a, o.b, p.beta, o.c, o.d)  // no synchronisation
//!     }
//! }
//! pub fn ours(device: &Device, module: Option<&Path>) -> Result<Option<Box<dyn Gemm>>, String> {
//!     Ok(Some(Box::new(Ours { gemm: gpu_gemm::Gemm::new(&device.ctx, module)? })))
//! }
//! ```
//!
//! The rest follows on its own: it is timed in the same rounds as the baselines, checked against
//! `cublasGemmEx` on random data and bit for bit on integer data, checked exactly against the host
//! reference on the small shapes, and reported with its ratio to each baseline. `--ours-module
//! FILE` (the kernel's PTX or cubin, which the bundle will carry) reaches [`ours`] as `module`.

use std::path::Path;

use crate::cuda::Device;
use crate::gemm::Gemm;

/// What the benchmark prints for every shape while there is no GEMM under test.
pub const SKIPPED: &str = "ours: SKIPPED (no GEMM kernel yet)";

/// The GEMM under test, or `None` while it does not exist.
pub fn ours(device: &Device, module: Option<&Path>) -> Result<Option<Box<dyn Gemm>>, String> {
    let _ = device;
    match module {
        Some(path) => Err(format!(
            "--ours-module {}: there is no GEMM under test in this build yet",
            path.display()
        )),
        None => Ok(None),
    }
}
