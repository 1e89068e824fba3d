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

/// [`descriptor`]`(smem + bytes)` from the low word `lo` of `descriptor(smem)`: `bytes >> 4`
/// added to the low word as a 32-bit sum, then the constant high word beside it, so that a
/// k-step or a stage of the ring costs one add rather than a descriptor of its own (masks,
/// shifts, a 64-bit pair). The start field (bits 0-13: the address's bits 4-17) takes the sum
/// without carrying out while `smem + bytes` stays inside the shared window (below 228 KiB of
/// 256): the check below.
#[inline(always)]
pub(crate) const fn advance(lo: u32, bytes: u32) -> u64 {
    ((DESCRIPTOR_HI as u64) << 32) | (lo + (bytes >> 4)) as u64
}

// A descriptor's low word is the one of address 0 plus the address's 16-byte units, for every
// 16-byte-aligned address of the shared window (up to its 228 KiB): so `advance(descriptor(x),
// y)` is `descriptor(x + y)` wherever `x + y` lies in the window (a stage's k-steps, a ring's
// stages).
const _: () = {
    let lo0 = descriptor(0) as u32;
    let mut addr = 0;
    while addr < 228 * 1024 {
        assert!(
            descriptor(addr) == advance(lo0, addr),
            "a descriptor's low word is not the address's 16-byte units plus a constant"
        );
        addr += 16;
    }
};
