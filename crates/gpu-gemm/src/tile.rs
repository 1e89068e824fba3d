//! A CTA tile's width as a type: `Tile<BN>` is the tile of a table row whose layout is `BN`
//! columns wide, with the `wgmma` of that width and its accumulators.

use crate::wgmma;

/// A CTA tile's width: the columns of D it computes, the rows of B each stage holds, and the
/// `wgmma` N of each consumer warpgroup with its accumulators (N / 2 f32 per thread).
pub(crate) trait Width {
    /// Columns of D per CTA tile.
    const BN: u32;
    /// A consumer thread's accumulators.
    type Acc: Copy;
    const ZERO: Self::Acc;
    /// One `wgmma.mma_async` k16 step of width `BN`.
    ///
    /// # Safety
    ///
    /// As the generated `wgmma_m64n*k16_bf16` it calls.
    unsafe fn mma(acc: &mut Self::Acc, desc_a: u64, desc_b: u64, accumulate: bool);
    /// `f(i, acc[i], acc[i + 1])` for every even `i`, unrolled.
    fn each_pair(acc: &Self::Acc, f: impl FnMut(u32, f32, f32));
    /// `f(q, acc[4 q .. 4 q + 4])` for every `q`, unrolled.
    fn each_quad(acc: &Self::Acc, f: impl FnMut(u32, [f32; 4]));
    /// `acc[4 q .. 4 q + 4] = f(q, acc[4 q .. 4 q + 4])` for every `q`, unrolled.
    fn map_quads(acc: &mut Self::Acc, f: impl FnMut(u32, [f32; 4]) -> [f32; 4]);
}

/// The tile `BN` columns wide (a table row's `layout.bn`): 256 (`wgmma.m64n256k16`, 128
/// accumulators per consumer thread), 128 (64) or 64 (32). Another width is a compile error (no
/// `Width` for it) until its `wgmma` is generated and a line below added.
pub(crate) struct Tile<const BN: u32>;

/// `Width` for `Tile<$bn>` over the generated `wgmma` of that width and its `$acc` accumulators.
macro_rules! width {
    ($bn:literal, $acc:literal, $mma:ident, $pair:ident, $quad:ident, $map:ident) => {
        impl Width for Tile<$bn> {
            const BN: u32 = $bn;
            type Acc = [f32; $acc];
            const ZERO: Self::Acc = [0.0; $acc];
            #[inline(always)]
            unsafe fn mma(acc: &mut Self::Acc, desc_a: u64, desc_b: u64, accumulate: bool) {
                // SAFETY: by the caller's contract.
                unsafe { wgmma::$mma(acc, desc_a, desc_b, accumulate) }
            }
            #[inline(always)]
            fn each_pair(acc: &Self::Acc, f: impl FnMut(u32, f32, f32)) {
                wgmma::$pair(acc, f)
            }
            #[inline(always)]
            fn each_quad(acc: &Self::Acc, f: impl FnMut(u32, [f32; 4])) {
                wgmma::$quad(acc, f)
            }
            #[inline(always)]
            fn map_quads(acc: &mut Self::Acc, f: impl FnMut(u32, [f32; 4]) -> [f32; 4]) {
                wgmma::$map(acc, f)
            }
        }
    };
}

width!(
    256,
    128,
    wgmma_m64n256k16_bf16,
    each_pair_128,
    each_quad_128,
    map_quads_128
);
width!(
    128,
    64,
    wgmma_m64n128k16_bf16,
    each_pair_64,
    each_quad_64,
    map_quads_64
);
width!(
    64,
    32,
    wgmma_m64n64k16_bf16,
    each_pair_32,
    each_quad_32,
    map_quads_32
);

/// A K-major shared-memory matrix descriptor with 128-byte swizzle: start >> 4 in bits 0-13,
/// leading offset 1 in bits 16-29, stride offset 1024 >> 4 in bits 32-45, swizzle mode 1 in
/// bits 62-63.
pub(crate) fn descriptor(smem: u32) -> u64 {
    u64::from((smem & 0x3_FFFF) >> 4) | (1 << 16) | ((1024u64 >> 4) << 32) | (1 << 62)
}
