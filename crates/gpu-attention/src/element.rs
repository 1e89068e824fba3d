//! The element types: each one's `wgmma` input and its packing of two f32 into a register.

use gpu_hopper::arch::nvptx::{cvt_rn_bf16x2_f32, cvt_rn_f16x2_f32};
use gpu_hopper::wgmma::{Bf16, F16, Input};

/// A 16-bit element type of Q, K, V, P and O.
pub(crate) trait Element {
    /// Its `wgmma` input type.
    type Input: Input;
    /// `lo` and `hi` rounded to nearest even and packed, `lo` in the low half (the element of
    /// the lower column: the A-fragment and memory order).
    fn pack(lo: f32, hi: f32) -> u32;
}

impl Element for Bf16 {
    type Input = Bf16;
    #[inline(always)]
    fn pack(lo: f32, hi: f32) -> u32 {
        cvt_rn_bf16x2_f32(lo, hi)
    }
}

impl Element for F16 {
    type Input = F16;
    #[inline(always)]
    fn pack(lo: f32, hi: f32) -> u32 {
        cvt_rn_f16x2_f32(lo, hi)
    }
}
