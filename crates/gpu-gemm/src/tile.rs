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
pub(crate) fn descriptor(smem: u32) -> u64 {
    MatrixDescriptor::k_major(smem, gpu_gemm_plan::SWIZZLE).0
}
