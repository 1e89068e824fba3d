//! A CTA tile's width as a type: `Tile<BN>` is the toolkit's `m64nBN` shape, the tile of a table
//! row whose layout is `BN` columns wide, with its bf16 `wgmma` and its accumulators.

use gpu_hopper::descriptor::MatrixDescriptor;
use gpu_hopper::wgmma::{Bf16, M64, MmaSs, Shape};

/// The tile `BN` columns wide (a table row's `layout.bn`): each consumer warpgroup computes
/// 64 x BN of it with `wgmma.m64nBNk16` (BN / 2 accumulators per thread). A width without a
/// generated form is a compile error (no `MmaSs` for it).
pub(crate) type Tile<const BN: u32> = M64<BN>;

/// A CTA tile's width: the columns of D it computes, the rows of B each stage holds, and the
/// `wgmma` of each consumer warpgroup with its accumulators (`Shape::Acc`, visited through
/// `Shape::each_pair`, `each_quad`, `map_quads`).
pub(crate) trait Width: Shape + MmaSs<Bf16, Bf16> {
    /// Columns of D per CTA tile.
    const BN: u32 = <Self as Shape>::N;

    /// One `wgmma.mma_async` k16 step of width `BN`, A and B K-major in shared memory, not
    /// scaled, not transposed; `accumulate == false` overwrites the accumulators.
    ///
    /// # Safety
    ///
    /// As [`MmaSs::mma_ss`].
    #[inline(always)]
    unsafe fn mma(acc: &mut Self::Acc, desc_a: u64, desc_b: u64, accumulate: bool) {
        // SAFETY: by the caller's contract.
        unsafe { Self::mma_ss::<1, 1, 0, 0>(acc, desc_a, desc_b, accumulate) }
    }
}

impl<T: Shape + MmaSs<Bf16, Bf16>> Width for T {}

/// The K-major shared-memory matrix descriptor of A's and B's boxes at `smem` (a shared-window
/// address), swizzled as the plan's `SWIZZLE` says (128 bytes, the tensor maps' too).
pub(crate) const fn descriptor(smem: u32) -> u64 {
    MatrixDescriptor::k_major(smem, gpu_gemm_plan::SWIZZLE).0
}

/// The high word of every [`descriptor`]: the stride field and the swizzle mode, constants of
/// the plan's layout (the start address lies in the low word: bits 0-13, beside the unused
/// leading-offset field at 16-29).
const DESCRIPTOR_HI: u32 = (descriptor(0) >> 32) as u32;
const _: () = assert!(
    (descriptor(0x3_7FF0) >> 32) as u32 == DESCRIPTOR_HI,
    "a descriptor's high word does not depend on its address"
);

/// [`descriptor`]`(smem + bytes)` from the low word `lo` of `descriptor(smem)`, for a k-step
/// inside a stage: `bytes >> 4` added to the low word as a 32-bit sum, then the constant high
/// word beside it, so that each k-step costs one 32-bit add rather than a descriptor of its own
/// (masks, shifts, a 64-bit pair; LLVM turned a 64-bit form of this into an add with carry). The
/// start field (bits 0-13: the address's bits 4-17) takes the sum without carrying out: the
/// address plus `bytes` stays inside the shared window (below 228 KiB of 256).
#[inline(always)]
pub(crate) const fn advance(lo: u32, bytes: u32) -> u64 {
    ((DESCRIPTOR_HI as u64) << 32) | (lo + (bytes >> 4)) as u64
}

// `advance` is `descriptor` of the advanced address for every 16-byte-aligned stage address in
// the shared window (up to its 228 KiB) and each k-step of a stage (0, 32, 64, 96 bytes).
const _: () = {
    let mut addr = 0;
    while addr < 228 * 1024 {
        let mut ks = 0;
        while ks < 4 {
            assert!(
                advance(descriptor(addr) as u32, ks * 32) == descriptor(addr + ks * 32),
                "advance differs from the descriptor of the advanced address"
            );
            ks += 1;
        }
        addr += 16;
    }
};
