//! The online softmax of one consumer thread, in base 2 with the scale folded in, over the
//! accumulators of `S = Q Kᵀ` as `wgmma` leaves them (`gpu_hopper::wgmma::fragment`): thread
//! `t` of a warpgroup holds two rows, `16 w + l / 4` and 8 below (warp `w`, lane `l`), in the
//! quads `[row 0 col c, row 0 col c + 1, row 1 col c, row 1 col c + 1]`, `c = 8 q + 2 (l % 4)`;
//! the four lanes `l % 4` of a row group hold a row between them, so row maxima and sums take
//! two butterfly shuffles.
//!
//! Per key block: `s' = scale · log2(e) · s` (minus infinity where the mask hides a key), the
//! running maximum `m` of `s'` per row, `p = 2^(s' - m)` (one fused multiply-add from `s`), the running sum `l = l · 2^(m_old - m) +
//! Σ p` (each thread its own columns' part, added up across the four lanes at the end), and O
//! rescaled by `2^(m_old - m)`. A row that has seen no key yet has `m = -inf`; its exponents use
//! 0 instead, so `p` and the rescale are 0, never NaN.
//!
//! In a row with the plan's `KernelSpec::lazy` (head dim 256; every row of the `lazy_rescale`
//! feature's variant module, none of `eager_rescale`'s), a warp whose rows' maxima all grow by
//! at most [`LAZY_GROWTH`] in a block keeps its old
//! maxima as the exponents' base (FlashAttention-4's conditional rescaling): its weights are then
//! at most `2^LAZY_GROWTH`, still exact to the 16-bit format's relative precision, and O and the
//! sums need no rescale for that block. `m` is then the base actually used, not the maximum, and
//! `LSE = ln 2 · (m + log2 l)` holds for any base: the result is the same function.

use gpu_hopper::arch::nvptx::shfl_sync_bfly_f32;
use gpu_hopper::arch::nvptx::{
    ex2_approx_ftz_f32 as ex2, fma_rn_f32 as fma, lg2_approx_ftz_f32 as lg2,
    register_fence_f32 as fence,
};
use gpu_hopper::math::exp2_fma;
use gpu_hopper::wgmma::Shape;
use gpu_pipeline::arch::nvptx::vote_all_sync;

use crate::element::Element;

/// Whether a block's row sums start from the old sums rescaled, rather than from zero with the
/// old ones added after (the same sum in another order): the `seed_sums` feature's variant
/// module (the static SASS comparison of 2026-12-06: it moves O's rescale into the
/// exponentials' gaps, as FlashAttention-3's SASS has it); run 111 (an H100): production's speed
/// (1.000 at seq >= 2k). Not taken.
const SEED_SUMS: bool = cfg!(feature = "seed_sums");

/// One quad of scores in every `EXP_FMA_EVERY` takes its exponentials on the FMA pipe
/// ([`exp2_fma`]) instead of the MUFU's `ex2` (0: none): the `exp_fma_4` and `exp_fma_3`
/// features' variant modules, which move a quarter or a third of the exponentials, measured
/// against production before either is taken.
const EXP_FMA_EVERY: u32 = if cfg!(feature = "exp_fma_3") {
    3
} else if cfg!(feature = "exp_fma_4") {
    4
} else {
    0
};

/// How far (in base-2 units) a row's maximum may grow before its warp takes the new maxima:
/// weights up to `2^8`, as FlashAttention-4.
pub(crate) const LAZY_GROWTH: f32 = 8.0;

/// `2^x` for the weights of quad `q`: `ex2.approx.ftz`, or [`exp2_fma`] for the quads
/// [`EXP_FMA_EVERY`] moves to the FMA pipe (both exact at 0 and +0 at minus infinity).
#[inline(always)]
fn exp2_of_quad(q: u32, x: f32) -> f32 {
    if EXP_FMA_EVERY != 0 && q % EXP_FMA_EVERY == EXP_FMA_EVERY - 1 {
        exp2_fma(x, fma)
    } else {
        ex2(x)
    }
}

/// A thread's two rows: the running maximum of `s'` and its part of the running sum.
#[derive(Clone, Copy)]
pub(crate) struct Rows {
    pub max: [f32; 2],
    pub sum: [f32; 2],
}

/// The keys a thread's two rows see in the current block, when the block needs the mask: key
/// column `c` (in the sequence) of row `r` is seen when `c < limit[r]`; `col0` is the thread's
/// first column (`n0 + 2 (l % 4)`).
#[derive(Clone, Copy)]
pub(crate) struct Limits {
    pub limit: [i32; 2],
    pub col0: i32,
}

impl Rows {
    pub(crate) const START: Rows = Rows {
        max: [f32::NEG_INFINITY; 2],
        sum: [0.0; 2],
    };
}

/// The maximum of `x` over the four lanes of its row group.
#[inline(always)]
fn quad_max(x: f32) -> f32 {
    // SAFETY: every lane of the warp calls it (the consumer warps run it converged).
    let x = x.max(unsafe { shfl_sync_bfly_f32(u32::MAX, x, 1) });
    // SAFETY: as above.
    x.max(unsafe { shfl_sync_bfly_f32(u32::MAX, x, 2) })
}

/// The sum of `x` over the four lanes of its row group.
#[inline(always)]
fn quad_sum(x: f32) -> f32 {
    // SAFETY: every lane of the warp calls it.
    let x = x + unsafe { shfl_sync_bfly_f32(u32::MAX, x, 1) };
    // SAFETY: as above.
    x + unsafe { shfl_sync_bfly_f32(u32::MAX, x, 2) }
}

/// One key block's scores: `s` becomes P, packed to 16 bits in place (quad `[p(c), p(c+1)]` of
/// each row as one register: `[row 0's pair, -, row 1's pair, -]`, the A fragment `mma_rs` takes
/// from quads `2 j` and `2 j + 1` for k-step `j`; each register pinned where it is written, see
/// [`rescale_o`]), and `rows` moves on. Returns the factors O's rows must be rescaled by
/// ([`rescale_o`]), once no `wgmma` writes O any more.
#[inline(always)]
pub(crate) fn scores<S: Shape, E: Element>(
    rows: &mut Rows,
    s: &mut S::Acc,
    scale_log2: f32,
    mask: Option<Limits>,
    lazy: bool,
) -> [f32; 2] {
    softmax_step::<S>(rows, s, scale_log2, mask, lazy, |_, p| {
        // The unused slots are left to be dropped.
        [
            fence(f32::from_bits(E::pack(p[0], p[1]))),
            0.0,
            fence(f32::from_bits(E::pack(p[2], p[3]))),
            0.0,
        ]
    })
}

/// [`scores`] without the packing: `s` holds the weights in f32 (for the overlapped loop,
/// which packs them with [`pack`] once the `mma_rs` reading the previous P is done).
#[inline(always)]
pub(crate) fn weights<S: Shape>(
    rows: &mut Rows,
    s: &mut S::Acc,
    scale_log2: f32,
    mask: Option<Limits>,
    lazy: bool,
) -> [f32; 2] {
    softmax_step::<S>(rows, s, scale_log2, mask, lazy, |_, p| p)
}

/// [`weights`] that calls `hook`, once the weights of quads `0..=hook_quad` are computed, with
/// their bits folded by exclusive or: a value that needs every one of them and none of the later
/// quads', so what `hook` orders after it runs after those quads and may overlap the rest (the
/// `wait_quarter` and `wait_half` variants' wait for the previous P V, the `late_k_release`
/// variant's K release).
#[inline(always)]
pub(crate) fn weights_hooked<S: Shape>(
    rows: &mut Rows,
    s: &mut S::Acc,
    scale_log2: f32,
    (mask, lazy): (Option<Limits>, bool),
    hook_quad: u32,
    hook: impl Fn(u32),
) -> [f32; 2] {
    let chain = core::cell::Cell::new(0u32);
    softmax_step::<S>(rows, s, scale_log2, mask, lazy, |q, p| {
        if q <= hook_quad {
            chain.set(
                chain.get() ^ (p[0].to_bits() ^ p[1].to_bits()) ^ (p[2].to_bits() ^ p[3].to_bits()),
            );
        }
        if q == hook_quad {
            hook(chain.get());
        }
        p
    })
}

/// One key block's step: `s` becomes `out(q, 2^(s · scale_log2 - m))` quad by quad (0 where the
/// mask hides a key), and `rows` moves on; returns O's rescale factors (exactly 1 for both rows
/// where the warp kept its bases: `lazy`).
///
/// `scale_log2 > 0`: the maxima are taken of the raw scores (hidden keys minus infinity), and
/// each weight is one `2^(s · scale_log2 - m)` (a fused multiply-add and an `ex2`).
#[inline(always)]
fn softmax_step<S: Shape>(
    rows: &mut Rows,
    s: &mut S::Acc,
    scale_log2: f32,
    mask: Option<Limits>,
    lazy: bool,
    out: impl Fn(u32, [f32; 4]) -> [f32; 4],
) -> [f32; 2] {
    // A weight may reach `2^LAZY_GROWTH` where the warp keeps its bases: past the FMA pipe's
    // exponential's domain (the variant modules that use it take every rescale).
    debug_assert!(!(lazy && EXP_FMA_EVERY != 0));
    if let Some(Limits { limit, col0 }) = mask {
        S::map_quads(s, |q, v| {
            let c = col0 + 8 * q as i32;
            let keep = |x: f32, c: i32, lim: i32| if c < lim { x } else { f32::NEG_INFINITY };
            [
                keep(v[0], c, limit[0]),
                keep(v[1], c + 1, limit[0]),
                keep(v[2], c, limit[1]),
                keep(v[3], c + 1, limit[1]),
            ]
        });
    }
    let mut max = [f32::NEG_INFINITY; 2];
    S::each_quad(s, |_, v| {
        max[0] = max[0].max(v[0].max(v[1]));
        max[1] = max[1].max(v[2].max(v[3]));
    });
    // In base-2 units, with the running maxima.
    let max = max.map(quad_max).map(|m| m * scale_log2);
    let max = [max[0].max(rows.max[0]), max[1].max(rows.max[1])];
    // With `lazy`, the warp keeps its old bases while no row's maximum grew past them by
    // more than `LAZY_GROWTH` (a row that still sees no key keeps minus infinity). The vote is
    // warp-uniform: the consumer warps run here converged.
    let keep = lazy && {
        let near = |r: usize| {
            max[r] == rows.max[r]
                || (rows.max[r] != f32::NEG_INFINITY && max[r] - rows.max[r] <= LAZY_GROWTH)
        };
        // SAFETY: every lane of the warp votes (the consumer warps run converged).
        unsafe { vote_all_sync(u32::MAX, near(0) && near(1)) }
    };
    let max = if keep { rows.max } else { max };
    let base = max.map(|m| if m == f32::NEG_INFINITY { 0.0 } else { m });
    let rescale = [ex2(rows.max[0] - base[0]), ex2(rows.max[1] - base[1])];
    rows.max = max;
    // With `SEED_SUMS`, the sums start from the old ones rescaled (FlashAttention-3's order): the
    // rescale's exponential is then needed first, and O's rescale can fill the exponentials'
    // gaps instead of trailing them.
    let mut sum = if !SEED_SUMS {
        [0.0f32; 2]
    } else if keep {
        rows.sum
    } else {
        [rows.sum[0] * rescale[0], rows.sum[1] * rescale[1]]
    };
    S::map_quads(s, |q, v| {
        let p = [
            exp2_of_quad(q, fma(v[0], scale_log2, -base[0])),
            exp2_of_quad(q, fma(v[1], scale_log2, -base[0])),
            exp2_of_quad(q, fma(v[2], scale_log2, -base[1])),
            exp2_of_quad(q, fma(v[3], scale_log2, -base[1])),
        ];
        sum[0] += p[0] + p[1];
        sum[1] += p[2] + p[3];
        out(q, p)
    });
    if SEED_SUMS {
        rows.sum = sum;
        return if keep { [1.0; 2] } else { rescale };
    }
    if keep {
        rows.sum = [rows.sum[0] + sum[0], rows.sum[1] + sum[1]];
        return [1.0; 2];
    }
    rows.sum = [
        rows.sum[0] * rescale[0] + sum[0],
        rows.sum[1] * rescale[1] + sum[1],
    ];
    rescale
}

/// The weights of `s` packed to 16 bits in place, the `mma_rs` A fragment (quad `[p(c), p(c+1)]`
/// of each row as one register: `[row 0's pair, -, row 1's pair, -]`; k-step `j` takes quads `2 j`
/// and `2 j + 1`), each register pinned where it is written (see [`rescale_o`]): call it only
/// while no `wgmma` reads registers (an in-flight `mma_rs` reads its A registers until its wait,
/// and LLVM, which does not know that, reuses them).
#[inline(always)]
pub(crate) fn pack<S: Shape, E: Element>(s: &mut S::Acc) {
    S::map_quads(s, |_, v| {
        // The unused slots are left to be dropped.
        [
            fence(f32::from_bits(E::pack(v[0], v[1]))),
            0.0,
            fence(f32::from_bits(E::pack(v[2], v[3]))),
            0.0,
        ]
    });
}

/// Keeps P's registers (quads' slots 0 and 2) as they are up to here: after the wait that
/// retires the `mma_rs` reading them, so that LLVM does not give them to other values while the
/// product is in flight.
#[inline(always)]
pub(crate) fn hold_p<S: Shape>(p: &mut S::Acc) {
    S::map_quads(p, |_, v| [fence(v[0]), v[1], fence(v[2]), v[3]]);
}

/// O's rows times the factors [`scores`] returned. The results pass through a register fence:
/// they are defined here, before the next `wgmma` is issued, and LLVM cannot sink them between
/// a later group's issue and the `O += P V` that reads them (an instruction that defines a
/// `wgmma`'s input registers while a group is in flight makes ptxas serialise every `wgmma` of
/// the kernel: its C7513).
///
/// With `lazy`, factors of exactly 1 for both rows leave O as it is (every lane of a warp that
/// kept its bases; a lane whose rows' maxima did not move, alone).
#[inline(always)]
pub(crate) fn rescale_o<O: Shape>(o: &mut O::Acc, rescale: [f32; 2], lazy: bool) {
    if lazy && rescale == [1.0; 2] {
        return;
    }
    O::map_quads(o, |_, v| {
        [
            fence(v[0] * rescale[0]),
            fence(v[1] * rescale[0]),
            fence(v[2] * rescale[1]),
            fence(v[3] * rescale[1]),
        ]
    });
}

/// The end of a unit: each row's factor `1 / l` for O (0 for a row that saw no key) and its
/// `LSE = ln 2 · (m + log2 l)` (minus infinity for a row that saw no key).
#[inline(always)]
pub(crate) fn finish(rows: &Rows) -> ([f32; 2], [f32; 2]) {
    let sum = rows.sum.map(quad_sum);
    let mut inv = [0.0f32; 2];
    let mut lse = [f32::NEG_INFINITY; 2];
    for r in 0..2 {
        if sum[r] > 0.0 {
            inv[r] = 1.0 / sum[r];
            lse[r] = core::f32::consts::LN_2 * (rows.max[r] + lg2(sum[r]));
        }
    }
    (inv, lse)
}
