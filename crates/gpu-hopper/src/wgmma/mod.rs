//! Warpgroup matrix multiply-accumulate (`wgmma`, sm_90a): the `mma_async` forms, typed by
//! shape and input types, their fence / commit / wait, and the register fragments.
//!
//! A warpgroup (four consecutive warps, 128 threads, the first warp's index a multiple of 4)
//! computes a 64 x N tile of f32 accumulators D, N / 2 per thread ([`Shape::Acc`]), from a
//! 64 x K tile of A and a K x N tile of B (K = 16 for 16-bit inputs, 32 for 8-bit ones).
//! B is always in shared memory, described by a matrix descriptor
//! ([`crate::descriptor::MatrixDescriptor`]); A is in shared memory too ([`MmaSs`]) or in the
//! threads' registers ([`MmaRs`], four `u32` per thread: see [`fragment`]).
//!
//! ```text
//! fence()                          registers and shared memory written before are seen
//! mma_ss / mma_rs  (k steps)       asynchronous; d, and a for RS, are in flight
//! commit_group()                   closes a group of mma_async
//! wait_group::<N>()                at most N groups pending: the others' d may be read
//! ```
//!
//! The forms exist for N in 8, 16, 24, 32, 40, 48, 64, 80, 96, 128, 176, 192 and 256 (`NS` in
//! `xtask/src/codegen.rs`; adding one is one line there) and for the inputs bf16 x bf16, f16 x
//! f16, e4m3 x e4m3,
//! e5m2 x e5m2, e4m3 x e5m2 and e5m2 x e4m3. A shape or pair without a form does not
//! implement the trait: a compile error. The immediates are const generics, checked at
//! compile time: `SCALE_A`, `SCALE_B` in {1, -1}, `TRANS_A`, `TRANS_B` in {0, 1} (16-bit
//! inputs only; 8-bit inputs must leave them 0).
//!
//! ```no_run
//! use gpu_hopper::wgmma::{self, Bf16, M64, MmaSs, Shape};
//! # unsafe fn step(desc_a: u64, desc_b: u64) {
//! let mut d = <M64<256> as Shape>::ZERO;
//! // SAFETY (all four): a converged warpgroup, valid descriptors (the example's assumption).
//! unsafe {
//!     wgmma::fence();
//!     <M64<256> as MmaSs<Bf16, Bf16>>::mma_ss::<1, 1, 0, 0>(&mut d, desc_a, desc_b, false);
//!     wgmma::commit_group();
//!     wgmma::wait_group::<0>();
//! }
//! # }
//! ```
//!
//! A transpose of 8-bit inputs does not compile:
//!
//! ```compile_fail,E0080
//! use gpu_hopper::wgmma::{E4m3, M64, MmaSs, Shape};
//! let mut d = <M64<64> as Shape>::ZERO;
//! // error: "e4m3/e5m2 wgmma has no transpose"
//! unsafe { <M64<64> as MmaSs<E4m3, E4m3>>::mma_ss::<1, 1, 1, 0>(&mut d, 0, 0, false) };
//! ```
//!
//! Nor does a scale other than 1 or -1, or an N without a form:
//!
//! ```compile_fail,E0080
//! use gpu_hopper::wgmma::{Bf16, M64, MmaSs, Shape};
//! let mut d = <M64<64> as Shape>::ZERO;
//! unsafe { <M64<64> as MmaSs<Bf16, Bf16>>::mma_ss::<2, 1, 0, 0>(&mut d, 0, 0, false) };
//! ```
//!
//! ```compile_fail,E0277
//! use gpu_hopper::wgmma::{Bf16, M64, MmaSs, Shape};
//! let mut d = [0.0f32; 28];
//! unsafe { <M64<56> as MmaSs<Bf16, Bf16>>::mma_ss::<1, 1, 0, 0>(&mut d, 0, 0, false) };
//! ```

pub mod fragment;

/// The [`MmaSs`] and [`MmaRs`] impls of shape `M64<$n>` and inputs `$a`, `$b` (16-bit: with
/// the transpose immediates) on their generated leaves (`arch::wgmma::*`); one line per form in
/// `generated.rs`.
macro_rules! forms_16bit {
    ($n:literal, $a:ident, $b:ident, $ss:ident :: $ss_leaf:ident, $rs:ident :: $rs_leaf:ident) => {
        // SAFETY: the leaves are this shape's and these inputs' `wgmma.mma_async`, SS and RS.
        unsafe impl super::MmaSs<$a, $b> for M64<$n> {
            #[inline(always)]
            unsafe fn mma_ss<
                const SCALE_A: i32,
                const SCALE_B: i32,
                const TRANS_A: u32,
                const TRANS_B: u32,
            >(
                d: &mut <Self as Shape>::Acc,
                desc_a: u64,
                desc_b: u64,
                scale_d: bool,
            ) {
                const { super::check_scale(SCALE_A, SCALE_B) };
                const { super::check_trans(TRANS_A, TRANS_B) };
                // SAFETY: the caller's contract is the leaf's; the immediates were checked.
                unsafe {
                    crate::arch::wgmma::$ss::$ss_leaf::<SCALE_A, SCALE_B, TRANS_A, TRANS_B>(
                        d, desc_a, desc_b, scale_d,
                    )
                }
            }
        }
        // SAFETY: as the `MmaSs` impl above.
        unsafe impl super::MmaRs<$a, $b> for M64<$n> {
            #[inline(always)]
            unsafe fn mma_rs<const SCALE_A: i32, const SCALE_B: i32, const TRANS_B: u32>(
                d: &mut <Self as Shape>::Acc,
                a: [u32; 4],
                desc_b: u64,
                scale_d: bool,
            ) {
                const { super::check_scale(SCALE_A, SCALE_B) };
                const { super::check_trans(0, TRANS_B) };
                // SAFETY: the caller's contract is the leaf's; the immediates were checked.
                unsafe {
                    crate::arch::wgmma::$rs::$rs_leaf::<SCALE_A, SCALE_B, TRANS_B>(
                        d, a, desc_b, scale_d,
                    )
                }
            }
        }
    };
}

/// As [`forms_16bit!`] for 8-bit inputs: no transpose immediates (both must be 0).
macro_rules! forms_8bit {
    ($n:literal, $a:ident, $b:ident, $ss:ident :: $ss_leaf:ident, $rs:ident :: $rs_leaf:ident) => {
        // SAFETY: the leaves are this shape's and these inputs' `wgmma.mma_async`, SS and RS.
        unsafe impl super::MmaSs<$a, $b> for M64<$n> {
            #[inline(always)]
            unsafe fn mma_ss<
                const SCALE_A: i32,
                const SCALE_B: i32,
                const TRANS_A: u32,
                const TRANS_B: u32,
            >(
                d: &mut <Self as Shape>::Acc,
                desc_a: u64,
                desc_b: u64,
                scale_d: bool,
            ) {
                const { super::check_scale(SCALE_A, SCALE_B) };
                const { super::check_untransposed(TRANS_A, TRANS_B) };
                // SAFETY: the caller's contract is the leaf's; the immediates were checked.
                unsafe {
                    crate::arch::wgmma::$ss::$ss_leaf::<SCALE_A, SCALE_B>(
                        d, desc_a, desc_b, scale_d,
                    )
                }
            }
        }
        // SAFETY: as the `MmaSs` impl above.
        unsafe impl super::MmaRs<$a, $b> for M64<$n> {
            #[inline(always)]
            unsafe fn mma_rs<const SCALE_A: i32, const SCALE_B: i32, const TRANS_B: u32>(
                d: &mut <Self as Shape>::Acc,
                a: [u32; 4],
                desc_b: u64,
                scale_d: bool,
            ) {
                const { super::check_scale(SCALE_A, SCALE_B) };
                const { super::check_untransposed(0, TRANS_B) };
                // SAFETY: the caller's contract is the leaf's; the immediates were checked.
                unsafe {
                    crate::arch::wgmma::$rs::$rs_leaf::<SCALE_A, SCALE_B>(d, a, desc_b, scale_d)
                }
            }
        }
    };
}

#[rustfmt::skip]
mod generated;

pub use crate::arch::nvptx::{
    wgmma_commit_group as commit_group, wgmma_fence as fence, wgmma_wait_group as wait_group,
};

/// [`wait_group`] that waits no earlier than `after` is computed: ptxas schedules a wait
/// (`WARPGROUP.DEPBAR`) as early in its basic block as the registers allow, above independent
/// work the PTX puts before it. An online softmax that overlaps a `P V` product ends up behind
/// the wait for that product: the overlap is lost (run 105's profile of the attention kernels:
/// the consumers' largest stall, 15 % of them, on that wait). Here a guarded `trap` that reads
/// `after` sits before the wait ([`trap_if_both_zero`](crate::arch::nvptx::trap_if_both_zero)),
/// so a value computed last by that work (the softmax's row sums) orders the wait after all of
/// it. Whether that is faster is the kernel's to measure: in gpu-attention's loop, where two
/// warpgroups take turns, it was 5-10 % slower (run 106), so production keeps the plain wait.
///
/// `nonzero` is never zero but opaque to ptxas (a kernel parameter that no branch compares,
/// such as an output's address); were it zero with `after` zero too, the kernel would trap.
///
/// # Safety
///
/// As [`wait_group`]: the whole warpgroup executes it converged.
#[inline(always)]
pub unsafe fn wait_group_after<const N: u32>(after: u32, nonzero: u64) {
    crate::arch::nvptx::trap_if_both_zero(after, nonzero);
    // SAFETY: by the contract.
    unsafe { wait_group::<N>() }
}

/// Passes every accumulator of `d` through
/// [`register_fence_f32`](crate::arch::nvptx::register_fence_f32): after a [`wait_group`] that
/// covers the `wgmma`s writing `d`, the compiler cannot move a use of `d` above the wait (it
/// sees the values redefined here); before an `mma_async` that reads `d`, every write of it
/// is placed before. CUTLASS's `warpgroup_fence_operand`.
#[inline(always)]
pub fn fence_accumulators<S: Shape>(d: &mut S::Acc) {
    S::map_quads(d, |_, v| v.map(crate::arch::nvptx::register_fence_f32));
}

/// The `m64nN` shape marker: implements [`Shape`] for each generated N.
#[derive(Clone, Copy, Debug)]
pub struct M64<const N: u32>;

/// A `m64nN` shape: its N, its accumulator array and unrolled visits of it.
///
/// The visits are written out (generated) because a loop that indexed the accumulators with a
/// variable would send all of them to local memory, and ptxas would then serialize the wgmmas.
pub trait Shape {
    /// Columns of the tile.
    const N: u32;
    /// One thread's accumulators, `[f32; N / 2]`; their places in the tile are
    /// [`fragment::accumulator`].
    type Acc: Copy;
    /// Zeroed accumulators.
    const ZERO: Self::Acc;
    /// Calls `f(i, d[i], d[i + 1])` for every even `i`: two accumulators side by side in a row
    /// (columns `c` and `c + 1`).
    fn each_pair(d: &Self::Acc, f: impl FnMut(u32, f32, f32));
    /// Calls `f(q, [d[4 q], .., d[4 q + 3]])` for `q` in `0..N / 8`.
    fn each_quad(d: &Self::Acc, f: impl FnMut(u32, [f32; 4]));
    /// Replaces each quad `d[4 q .. 4 q + 4]` with `f(q, quad)`.
    fn map_quads(d: &mut Self::Acc, f: impl FnMut(u32, [f32; 4]) -> [f32; 4]);
}

mod sealed {
    pub trait Sealed {}
}

/// An input type of `wgmma`.
pub trait Input: sealed::Sealed {
    /// The PTX type name (`.bf16`, `.e4m3`, ...).
    const PTX: &'static str;
    /// Bits per element.
    const BITS: u32;
    /// The K of one instruction: 256 bits of a row, 16 or 32 elements.
    const K: u32 = 256 / Self::BITS;
}

macro_rules! input {
    ($name:ident, $ptx:literal, $bits:literal, $doc:literal) => {
        #[doc = $doc]
        #[derive(Clone, Copy, Debug)]
        pub struct $name;
        impl sealed::Sealed for $name {}
        impl Input for $name {
            const PTX: &'static str = $ptx;
            const BITS: u32 = $bits;
        }
    };
}

input!(Bf16, ".bf16", 16, "bfloat16 inputs (K = 16).");
input!(F16, ".f16", 16, "IEEE half inputs (K = 16).");
input!(E4m3, ".e4m3", 8, "FP8 E4M3 inputs (K = 32).");
input!(E5m2, ".e5m2", 8, "FP8 E5M2 inputs (K = 32).");

/// `wgmma.mma_async` with A and B in shared memory, f32 accumulators.
///
/// # Safety
///
/// An implementation is the `wgmma.mma_async` of its shape and input types with A from the
/// descriptor `desc_a`, B from `desc_b`, accumulating into `d` when `scale_d`.
pub unsafe trait MmaSs<A: Input, B: Input>: Shape {
    /// One `wgmma.mma_async` of the shape: `d = A B (+ d if scale_d)`, with A and B scaled by
    /// `SCALE_A`, `SCALE_B` (1 or -1) and read MN-major where `TRANS_A`, `TRANS_B` are 1.
    ///
    /// # Safety
    ///
    /// The whole warpgroup executes it converged (no lane-dependent control flow around it),
    /// after [`fence`]; the descriptors describe valid shared memory laid out as they say; `d`
    /// is not read or written by other instructions until a [`wait_group`] covers it.
    unsafe fn mma_ss<
        const SCALE_A: i32,
        const SCALE_B: i32,
        const TRANS_A: u32,
        const TRANS_B: u32,
    >(
        d: &mut Self::Acc,
        desc_a: u64,
        desc_b: u64,
        scale_d: bool,
    );
}

/// `wgmma.mma_async` with A in registers (four `u32` per thread, [`fragment`]) and B in shared
/// memory, f32 accumulators: attention's P V, where P is the previous product in registers.
///
/// # Safety
///
/// As [`MmaSs`], with A from the registers `a`.
pub unsafe trait MmaRs<A: Input, B: Input>: Shape {
    /// One `wgmma.mma_async` of the shape with A from registers (see [`MmaSs::mma_ss`]); only
    /// B can be transposed.
    ///
    /// # Safety
    ///
    /// As [`MmaSs::mma_ss`]; `a` is also in flight (not rewritten) until the wait.
    unsafe fn mma_rs<const SCALE_A: i32, const SCALE_B: i32, const TRANS_B: u32>(
        d: &mut Self::Acc,
        a: [u32; 4],
        desc_b: u64,
        scale_d: bool,
    );
}

/// The scale immediates: 1 or -1 (PTX ISA, "wgmma.mma_async": `imm-scale-a`, `imm-scale-b`).
const fn check_scale(a: i32, b: i32) {
    assert!(
        (a == 1 || a == -1) && (b == 1 || b == -1),
        "gpu-hopper: wgmma's SCALE_A and SCALE_B are 1 or -1"
    );
}

/// The transpose immediates of 16-bit inputs: 0 or 1 (`imm-trans-a`, `imm-trans-b`).
const fn check_trans(a: u32, b: u32) {
    assert!(
        a <= 1 && b <= 1,
        "gpu-hopper: wgmma's TRANS_A and TRANS_B are 0 or 1"
    );
}

/// 8-bit inputs have no transpose immediates: both operands are K-major.
const fn check_untransposed(a: u32, b: u32) {
    assert!(
        a == 0 && b == 0,
        "gpu-hopper: e4m3/e5m2 wgmma has no transpose: A and B are K-major (TRANS_A = TRANS_B = 0)"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs<S: Shape>(d: &S::Acc) -> std::vec::Vec<(u32, f32, f32)> {
        let mut seen = std::vec::Vec::new();
        S::each_pair(d, |i, x, y| seen.push((i, x, y)));
        seen
    }

    #[test]
    fn visits_cover_every_accumulator_once_in_order() {
        let mut d = [0.0f32; 128];
        for (i, x) in d.iter_mut().enumerate() {
            *x = i as f32;
        }
        let seen = pairs::<M64<256>>(&d);
        assert_eq!(seen.len(), 64);
        for (k, (i, x, y)) in seen.into_iter().enumerate() {
            assert_eq!(
                (i, x, y),
                (2 * k as u32, (2 * k) as f32, (2 * k + 1) as f32)
            );
        }
        let mut quads = 0;
        <M64<256>>::each_quad(&d, |q, v| {
            assert_eq!(
                v,
                [
                    4.0 * q as f32,
                    4.0 * q as f32 + 1.0,
                    4.0 * q as f32 + 2.0,
                    4.0 * q as f32 + 3.0
                ]
            );
            quads += 1;
        });
        assert_eq!(quads, 32);
        <M64<256>>::map_quads(&mut d, |q, v| v.map(|x| x + q as f32));
        assert_eq!(d[127], 127.0 + 31.0);
        assert_eq!(d[4], 4.0 + 1.0);
    }

    #[test]
    fn each_shape_has_n_over_2_accumulators() {
        fn len<S: Shape>() -> usize {
            core::mem::size_of::<S::Acc>() / 4
        }
        assert_eq!(len::<M64<16>>(), 8);
        assert_eq!(len::<M64<32>>(), 16);
        assert_eq!(len::<M64<64>>(), 32);
        assert_eq!(len::<M64<80>>(), 40);
        assert_eq!(len::<M64<96>>(), 48);
        assert_eq!(len::<M64<128>>(), 64);
        assert_eq!(len::<M64<176>>(), 88);
        assert_eq!(len::<M64<192>>(), 96);
        assert_eq!(len::<M64<256>>(), 128);
        assert_eq!(<M64<192> as Shape>::N, 192);
    }

    #[test]
    fn k_follows_the_element_width() {
        assert_eq!((Bf16::K, F16::K, E4m3::K, E5m2::K), (16, 16, 32, 32));
    }
}
