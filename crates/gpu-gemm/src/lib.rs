//! A warp-specialized bf16 GEMM for Hopper (sm_90a) on gpu-pipeline: a no_std kernel crate that
//! uses the library as any user's crate would.
//! D = alpha * A * B^T + beta * C; A: M x K row-major, B: N x K row-major, C, D: M x N row-major.
//! CTA tile 128 x 256 x 64; warpgroup 0 (one lane) loads A and B boxes with 2D tensor TMA
//! (128-byte swizzle) into a 4-stage ring; warpgroups 1 and 2 each multiply 64 rows with
//! `wgmma.m64n256k16`, keeping one stage in flight, then write D through shared memory with TMA
//! tensor stores (from registers when N % 8 != 0 or under split-K). When beta != 0, two more
//! lanes of warpgroup 0 bring C into the consumers' staging buffers through an
//! `EpiLoadPipeline` each. `setmaxnreg` moves registers from the producer warpgroup to the
//! consumers. Two persistent kernels run on narrower tiles instead, for shapes with too few
//! 128 x 256 tiles: 128 x 128 (`wgmma.m64n128k16`, 6 stages) and 128 x 64
//! (`wgmma.m64n64k16`, 8 stages). The cluster kernel pairs two
//! CTAs on vertically adjacent tiles: each loads its own A and half of the shared B tile, which
//! TMA multicast writes into both CTAs.
//!
//! The kernels are built from the rows of the plan's table (`gpu_gemm_plan::KERNELS`): `entries`
//! has one line per row; the body is `kernel` (composing `mainloop`, `epilogue` and `split_k`);
//! `tile` gives a row's tile width its `wgmma` (the toolkit's). The crate has no inline assembly:
//! its instructions are the toolkit's and the library's leaves. With the `steps` feature the
//! module also holds the kernels kept to show the design's steps (`gpu_gemm_plan::STEPS`).
#![no_std]
#![feature(abi_gpu_kernel, stdarch_nvptx)]
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(clippy::undocumented_unsafe_blocks, clippy::missing_safety_doc)]

mod cluster_k;
mod entries;
mod epilogue;
mod kernel;
mod mainloop;
mod split_k;
mod tile;

pub use entries::*;

/// The module's launch ABI version (the plan's `abi::ABI_VERSION`): the host crate reads this
/// global when it loads the module and refuses a module whose version differs from its own. The
/// `unwaited` feature's module or-s `abi::ABI_UNWAITED` into it: its entries do not wait, so the
/// host launches it in stream order only.
#[unsafe(no_mangle)]
pub static GPU_GEMM_ABI: u32 = if cfg!(feature = "unwaited") {
    gpu_gemm_plan::abi::ABI_VERSION | gpu_gemm_plan::abi::ABI_UNWAITED
} else {
    gpu_gemm_plan::abi::ABI_VERSION
};

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    // SAFETY: `trap` ends the kernel; nothing runs after it.
    unsafe { core::arch::nvptx::trap() }
}
