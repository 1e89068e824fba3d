//! Attention forward for Hopper (sm_90a) on gpu-pipeline and the gpu-hopper toolkit:
//! `O = softmax(scale · Q Kᵀ + mask) V` and the row log-sum-exp `LSE`, bf16 or f16, head
//! dimension 64, 128 or 256, fixed or variable-length batches, grouped-query heads, causal or not
//! (`gpu_attention_plan` is the problem and its rules; `gpu_attention_plan::abi` the launch ABI
//! and the kernel table this crate builds one entry per row of).
//!
//! Each CTA runs a producer warpgroup and two consumer warpgroups (three in the 192-row rows of
//! head dim 64) over a persistent schedule of work units (a block of 64 query rows per consumer
//! warpgroup, 128 or 192, of one head of one sequence, in the plan's order: causal blocks
//! longest first):
//!
//! ```text
//! warpgroup 0, one lane:  Q (once per unit) ─► Q stage      K_j ─► K ring      V_j ─► V ring
//! warpgroups 1, 2 (, 3):  64 query rows each: S = Q K_jᵀ (wgmma SS, K released once it completes),
//!                         the online softmax in base 2 (scale folded in), P packed to 16 bits in
//!                         registers, O += P V_j (wgmma RS, V read MN-major; V released once it
//!                         completes); then O / l and LSE from registers
//! ```
//!
//! Each table row (`gpu_attention_plan::abi`) says how its consumers run a block, by
//! measurement: in turn (its two products and its softmax; the warpgroups overlap each other as
//! the warp schedulers interleave them: head dim 64), or with FlashAttention-3's overlaps,
//! `overlap` (the scores of block j issued ahead of `P V` of block j - 1: head dims 128 and 256)
//! and `pingpong` (the warpgroups taking turns through the toolkit's ordered sequence: 128);
//! `lazy` keeps a warp's old maxima while they grow by at most 8 (256). A row of CTA pairs
//! (`cluster` 2) splits each unit's rows between the two CTAs of a cluster, each loading half of
//! every K and V block and multicasting it to both. `setmaxnreg` moves registers from the
//! producer warpgroup to the consumers. The crate has no inline assembly: its instructions are
//! the toolkit's and the library's leaves.
#![no_std]
#![feature(abi_gpu_kernel, stdarch_nvptx, stmt_expr_attributes)]
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(clippy::undocumented_unsafe_blocks, clippy::missing_safety_doc)]

mod element;
mod entries;
mod kernel;
mod softmax;

pub use entries::*;

/// The module's launch ABI version (the plan's `abi::ABI_VERSION`): the host crate reads this
/// global when it loads the module and refuses a module whose version differs from its own. The
/// `unwaited` feature's module xors `abi::ABI_UNWAITED` into it: its entries do not wait, so the
/// host launches it in stream order only.
#[unsafe(no_mangle)]
pub static GPU_ATTENTION_ABI: u32 = if cfg!(feature = "unwaited") {
    gpu_attention_plan::abi::ABI_VERSION ^ gpu_attention_plan::abi::ABI_UNWAITED
} else {
    gpu_attention_plan::abi::ABI_VERSION
};

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    // SAFETY: `trap` ends the kernel; nothing runs after it.
    unsafe { core::arch::nvptx::trap() }
}
