//! Device tests of the `gpu-hopper` toolkit's leaves that the GEMM does not run: `wgmma` with A
//! from registers (RS) and the f16 and FP8 forms, the 32- and 64-byte swizzles and the
//! interleaved layout of the matrix descriptor, the register fragments, TMA reductions (add,
//! min, max) and box prefetches, `griddepcontrol`, named barriers as producer/consumer
//! signals, and the ordered-sequence barrier on real mbarriers.
//!
//! A `#![no_std]` kernel crate for nvptx64 sm_90a (its own workspace root, built by the xtask
//! into `target/gpu/sm_90a-hopper/.../hopper_kernels.ptx`), using the toolkit and the library
//! as any kernel crate would: it has no inline assembly of its own. What the kernels and the
//! host test (`tests/hopper-test`) agree on is [`layout`], which the host compiles too.

#![no_std]
#![feature(abi_gpu_kernel, stdarch_nvptx)]
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(clippy::undocumented_unsafe_blocks, clippy::missing_safety_doc)]

#[macro_use]
pub mod layout;

#[cfg(feature = "checked")]
mod broken;
mod named;
mod pdl;
mod sequence;
mod tma;
mod wgmma;

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    // SAFETY: `trap` ends the kernel; nothing runs after it.
    unsafe { core::arch::nvptx::trap() }
}

/// The calling thread's index in its (one-dimensional) block.
#[inline(always)]
fn thread() -> u32 {
    gpu_pipeline::arch::nvptx::tid()[0]
}

/// The block's index in its (one-dimensional) grid.
#[inline(always)]
fn block() -> u32 {
    gpu_pipeline::arch::nvptx::ctaid()[0]
}

/// The block's threads (x).
#[inline(always)]
fn block_threads() -> u32 {
    gpu_pipeline::arch::nvptx::ntid()[0]
}

/// The block-wide barrier (`bar.sync 0`, the convergent `_syncthreads` intrinsic).
///
/// # Safety
///
/// Every thread of the block calls it, warp-converged.
#[inline(always)]
unsafe fn sync_threads() {
    // SAFETY: the caller's contract.
    unsafe { core::arch::nvptx::_syncthreads() }
}
