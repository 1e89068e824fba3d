//! The Hopper (sm_90a) toolkit: what every warp-specialized sm_90 kernel needs beside the
//! pipelines of `gpu-pipeline`.
//!
//! | module | what |
//! |---|---|
//! | [`wgmma`] | `wgmma.mma_async` (bf16, f16, e4m3, e5m2; A from shared memory or registers), fence / commit / wait, register fragments |
//! | [`descriptor`] | the shared-memory matrix descriptor and the swizzled layouts (pure) |
//! | [`regs`] | `setmaxnreg` with the register budget derived from the role split |
//! | [`barrier`] | named barriers, and the registry that makes an id collision a compile error |
//! | [`sequence`] | the ordered-sequence barrier (warpgroups taking turns: ping-pong) |
//! | [`turns`] | warpgroups taking turns on named barriers (the hardware waits; FlashAttention-3's ping-pong) |
//! | [`tma`] | tensor copies, stores, reductions, prefetches |
//! | [`schedule`] | tile schedulers |
//! | [`warpgroup`] | a thread's warpgroup, warp and lane; the elected lane (`elect_one`) |
//! | [`math`] | `2^x` on the FMA pipe (pure; to move exponentials off the MUFU) |
//! | [`arch`] | the leaves: one instruction each, the only inline assembly |
//!
//! # Targets
//!
//! `nvptx64-nvidia-cuda` with `RUSTFLAGS="-Ctarget-cpu=sm_90a -Ctarget-feature=+ptx80"`
//! (`-Zbuild-std=core`): `wgmma` and `setmaxnreg` exist only on sm_90a, so anything else is a
//! compile error that names the flag. On the host every leaf exists and panics with its
//! instruction's name; the pure parts (descriptors, fragments, budgets, registries, the
//! sequence barrier over host mbarrier models) run and are tested there.

#![no_std]
#![cfg_attr(
    target_arch = "nvptx64",
    feature(
        asm_experimental_arch,
        link_llvm_intrinsics,
        core_intrinsics,
        gpu_intrinsics,
        gpu_launch_sized_workgroup_mem
    )
)]
#![cfg_attr(target_arch = "nvptx64", allow(internal_features))]
#![warn(missing_docs)]
#![warn(clippy::undocumented_unsafe_blocks)]

#[cfg(test)]
extern crate std;

/// The wait budgets of the checked build's host tests of named barriers (the registry's and the
/// turns'), one pair for both.
#[cfg(all(test, feature = "checked"))]
mod wait_budget {
    /// A correct run's budget: long enough that a loaded machine never starves a waiter past it
    /// (50 ms reported a false hang when `.ci/run` shared the CPUs with a build, 2026-12-06).
    pub(crate) const CORRECT_US: u32 = 10_000_000;
    /// The budget of a run that must hang: the report comes after it.
    pub(crate) const HANG_US: u32 = 1_000_000;
}

// wgmma.mma_async and setmaxnreg are sm_90a-only: LLVM cannot select their intrinsics for
// plain sm_90 (`Cannot select: intrinsic %llvm.nvvm.wgmma.wait_group.sync.aligned`), and ptxas
// rejects the inline forms (`not supported on .target 'sm_90'`). rustc reports
// `target_feature = "sm_90a"` only for `-Ctarget-cpu=sm_90a`.
#[cfg(all(target_arch = "nvptx64", not(target_feature = "sm_90a")))]
compile_error!(
    "gpu-hopper: nvptx64 builds need sm_90a: add -Ctarget-cpu=sm_90a to RUSTFLAGS \
     (RUSTFLAGS=\"-Ctarget-cpu=sm_90a -Ctarget-feature=+ptx80\"). The toolkit emits wgmma and \
     setmaxnreg, which exist only with the architecture-specific `a` features of sm_90."
);
#[cfg(all(target_arch = "nvptx64", not(target_feature = "ptx80")))]
compile_error!(
    "gpu-hopper: nvptx64 builds need PTX ISA 8.0 or newer: add -Ctarget-feature=+ptx80 to RUSTFLAGS \
     (RUSTFLAGS=\"-Ctarget-cpu=sm_90a -Ctarget-feature=+ptx80\"): wgmma, setmaxnreg and the bulk \
     tensor copies need PTX ISA 8.0."
);

pub mod arch;
pub mod barrier;
pub mod descriptor;
pub mod math;
pub mod regs;
pub mod schedule;
pub mod sequence;
pub mod tma;
pub mod turns;
pub mod warpgroup;
pub mod wgmma;
