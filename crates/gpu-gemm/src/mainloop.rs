//! The main loop: the producer's k-loop (tensor loads into the ring) and the consumers' (a
//! stage's `wgmma`s, then its release).

use gpu_gemm_plan::{BK, BM, Layout, Schedule};
#[cfg(feature = "l2_hints")]
use gpu_pipeline::L2Policy;
use gpu_pipeline::{
    ConsumerHalf, ConsumerStage, MbarScope, NvidiaMbarBackend, ProducerConsumerPipeline,
    ProducerHalf, TensorMap,
};

use gpu_hopper::arch::nvptx::{wgmma_commit_group, wgmma_fence, wgmma_wait_group};
use gpu_pipeline::arch::nvptx::cvta_to_shared;

use crate::tile::{Width, advance, descriptor};

/// The ring of a kernel: `ST` stages, one producer arrival (the TMA lane's `arrive_expect_tx`)
/// per full barrier, `C` consumer arrivals per empty barrier, waits at scope `S`.
pub(crate) type Pipe<const ST: usize, const C: u32, S> =
    ProducerConsumerPipeline<ST, NvidiaMbarBackend<1, C, S>>;

/// Whether a kernel of tiles `bn` wide (`swap_ab`: computing the transpose) loads a last tile
/// row that ends past M shifted inside M (its A box from row `M - BM`: no row of the box out of
/// bounds) and writes only the rows the tile row above did not ([`a_row0`]). Only where C is not
/// read (beta 0), and not in CTA pairs or the cluster-K kernels (the caller's conditions).
///
/// The 128 x 64 and 128 x 128 kernels do: with half of their A boxes past M they ran 35-38 %
/// slower at M = 192 than at M = 256 on the same tiles (run 58), and shifted they ran 1.29 and
/// 1.18 times as fast (geometric means over M = 192 and 320 by 8 layers, run 124, an H100).
/// The 128 x 192 and 128 x 256 kernels do not: the same run measured them 0.88 and 0.81 times
/// as fast shifted. The transposing kernels were not measured apart, and do not either. The
/// `shift_edge` feature's variant module (a measurement) shifts every kernel's.
pub(crate) const fn shifts_edge(bn: u32, swap_ab: bool) -> bool {
    cfg!(feature = "shift_edge") || (bn <= 128 && !swap_ab)
}

/// The bytes a stage of `layout` receives for a problem of `m` rows in tiles of `rows` rows
/// (`swap_ab`: a kernel that computes the transpose, whose A is the weights and whose boxes are
/// whole): B's box and A's of `abi::a_box_rows_of` rows, the host's box for A (below one tile, M rounded up to 8: the rows
/// past M are not loaded at all; M = 96 ran 5-21 % slower than M = 128 on the same grid of
/// 128 x 64 tiles with 128-row boxes zero-filled past M, run 117).
#[inline(always)]
pub(crate) fn stage_tx(layout: Layout, rows: u32, m: u32, swap_ab: bool) -> u32 {
    // B's box (`stage_bytes - a_bytes`: written so because `layout.b_bytes()`, the same value,
    // moved LLVM's PTX in every production kernel) and A's.
    layout.stage_bytes() - layout.a_bytes()
        + gpu_gemm_plan::abi::a_box_rows_of(swap_ab, rows, m) * 2 * BK
}

/// The first row of A that the tile starting at row `m0` loads: `m0`, or with `edge` (the
/// problem's M, where the kernel shifts its last tile row: [`shifts_edge`]) for a tile that ends
/// past M when M exceeds one tile, `M - BM`.
#[inline(always)]
pub(crate) fn a_row0(m0: u32, edge: Option<u32>) -> u32 {
    match edge {
        Some(m) if m > BM && m0 + BM > m => m - BM,
        _ => m0,
    }
}

/// The producer lane's k-loop over its units of `schedule`: each k-block's A box (this CTA's
/// tile rows, `cluster_rows / cluster` of them) and B box (the tile's `layout.bn` columns) into
/// the next free stage. In a pair, each CTA loads half of B's box and
/// multicasts it to both CTAs, so both receive the whole stage.
///
/// # Safety
///
/// One thread calls it; `smem` is the kernel's dynamic shared memory, laid out as `layout`;
/// `maps` are A's and B's tensor maps (boxes 64 x 128 and 64 x BN, or 64 x BN / 2 in a pair),
/// in global memory, and `stage_tx` the bytes their boxes bring a stage ([`stage_tx`] of the
/// problem, which A's box rows match); in a pair (`multicast`: the cluster ranks of both CTAs,
/// `rank` this CTA's in the pair) both CTAs run it and the peer's barriers are initialised. With the `l2_hints` feature, `hinted` (only without a pair) loads the A boxes
/// (a transposing kernel's weights, each read by one row of tiles: once where M fits one tile,
/// as in decode) with the L2 policy evict-first and the B boxes (its activations, which every
/// weight tile reads again) with evict-last (`MbarrierRef::tensor_load_hinted`): the feature's
/// variant module, a measurement (run 119: cuBLAS's decode kernel ran with 22 % L2 hits, ours
/// with 50-60 %). Without the feature the parameter and its code are not compiled, so the
/// production module is as it was.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn produce<W: Width, const ST: usize, const C: u32, S: MbarScope>(
    producer: ProducerHalf<ST, NvidiaMbarBackend<1, C, S>>,
    schedule: Schedule,
    smem: *mut u8,
    layout: Layout,
    maps: *const TensorMap,
    (k_blocks, cluster_rows): (u32, u32),
    rank: u32,
    multicast: Option<u16>,
    edge: Option<u32>,
    stage_tx: u32,
    #[cfg(feature = "l2_hints")] hinted: bool,
) {
    // SAFETY: B's map follows A's.
    let (map_a, map_b) = (maps, unsafe { maps.add(1) });
    #[cfg(feature = "l2_hints")]
    let policies = hinted.then(|| (L2Policy::evict_first(), L2Policy::evict_last()));
    let mut u = schedule.first;
    while u < schedule.total() {
        // A stream-K schedule's unit (an empty one has no k-blocks: nothing is loaded), or
        // split-K's, written out as before stream-K (the same values as `work` gives).
        let (tile, split, parts) = if schedule.workers != 0 {
            let w = schedule.work(u, k_blocks);
            (w.tile, w.part, w.parts)
        } else {
            schedule.unit(u)
        };
        let (tm, tn) = schedule.tile(tile);
        // A pair's CTA of rank 1 takes the lower half of the cluster tile (`rank` is 0 alone).
        let m0 = a_row0(tm * cluster_rows + rank * (cluster_rows / 2), edge) as i32;
        let n0 = (tn * layout.bn) as i32;
        let (kb0, kb1) = if schedule.workers != 0 {
            let w = schedule.work(u, k_blocks);
            (w.kb0, w.kb1)
        } else {
            Schedule::k_range(split, parts, k_blocks)
        };
        for kb in kb0..kb1 {
            // Both CTAs of a pair receive the whole stage: their own A, their half of
            // B and the peer's half.
            producer.produce_tma(stage_tx, |stage| {
                let bar = stage.barrier();
                // SAFETY: the stage's slot lies inside the layout.
                let base = unsafe { smem.add((stage.index() * layout.stage_bytes()) as usize) };
                let kc = (kb * BK) as i32;
                // SAFETY: the stage is free in this CTA, and in a pair in the peer too
                // (its consumers arrive on this CTA's empty barrier as well); 1024-aligned
                // boxes of the maps' sizes (B: half the tile's rows in a pair, all alone).
                unsafe {
                    #[cfg(feature = "l2_hints")]
                    if let Some((a_policy, b_policy)) = policies {
                        // The same boxes with L2 policies (single CTAs only).
                        bar.tensor_load_hinted::<2>(base, map_a, [kc, m0], a_policy);
                        let b = base.add(layout.a_bytes() as usize);
                        bar.tensor_load_hinted::<2>(b, map_b, [kc, n0], b_policy);
                        return;
                    }
                    bar.tensor_load::<2>(base, map_a, [kc, m0]);
                    if let Some(mask) = multicast {
                        let half = layout.b_bytes() / 2;
                        bar.tensor_load_multicast::<2>(
                            base.add((layout.a_bytes() + rank * half) as usize),
                            map_b,
                            [kc, n0 + (rank * layout.bn / 2) as i32],
                            mask,
                        );
                    } else {
                        bar.tensor_load::<2>(base.add(layout.a_bytes() as usize), map_b, [kc, n0]);
                    }
                }
            });
        }
        u += schedule.stride;
    }
}

/// A consumer warpgroup's k-loop of one unit, k-blocks `kb0..kb1`: `issue` a stage's MMAs as
/// soon as it is full, keeping one stage's group in flight; `release` each stage once its MMAs
/// are done. `after_first` runs once the first stage's MMAs are issued (the epilogue gives back
/// what the last unit still held, while these MMAs run).
#[inline(always)]
pub(crate) fn consume_unit<const ST: usize, const C: u32, S: MbarScope, A>(
    consumer: &ConsumerHalf<ST, NvidiaMbarBackend<1, C, S>>,
    acc: &mut A,
    (kb0, kb1): (u32, u32),
    issue: impl Fn(&mut A, u32, bool),
    release: impl Fn(ConsumerStage<'_, ST, NvidiaMbarBackend<1, C, S>>),
    after_first: impl FnOnce(),
) {
    let mut previous = consumer.acquire();
    issue(acc, previous.index(), true);
    after_first();
    for _ in kb0 + 1..kb1 {
        let stage = consumer.acquire();
        issue(acc, stage.index(), false);
        // The previous stage's MMAs are done once at most this stage's group is pending.
        // SAFETY: the whole warpgroup is here.
        unsafe { wgmma_wait_group::<1>() };
        release(previous);
        previous = stage;
    }
    // SAFETY: as above.
    unsafe { wgmma_wait_group::<0>() };
    release(previous);
}

/// Warpgroup `g`'s MMAs of one stage, committed as one group: its 64 rows of the stage's A box
/// times the stage's B box, 4 `wgmma.m64nNk16` k-steps (N: `W::BN`), into `acc` (overwritten by
/// the first step when `first`). Where the tile is twice `W::BN` wide
/// ([`Config::split_columns`](gpu_gemm_plan::Config::split_columns): 64-row tiles), the A box's
/// 64 rows times the B box's `W::BN` rows from `g * W::BN`: warpgroup g's column half.
///
/// # Safety
///
/// The stage `index` of the ring at `smem` (laid out as `layout`) is full; all 128 threads of the
/// warpgroup call it converged.
#[inline(always)]
pub(crate) unsafe fn mma_stage<W: Width>(
    acc: &mut W::Acc,
    smem: *mut u8,
    layout: Layout,
    index: u32,
    g: u32,
    first: bool,
) {
    // The ring's start in the shared window.
    // SAFETY: `smem` is this CTA's dynamic shared memory.
    let ring = unsafe { cvta_to_shared(smem) };
    // Warpgroup g's 64 rows of A (of 128 bytes each) and all of B's box, or with two column
    // halves all 64 rows of A and B's rows `g W::BN ..` (`halves`: the entry's constant).
    let halves = layout.bn / W::BN;
    let a_at = ring + (2 - halves) * g * 64 * 128;
    let b_at = ring + layout.a_bytes() + (halves - 1) * g * W::BN * 128;
    // Their descriptors in stage `index`, each a sum on the low word (`advance`: a descriptor's
    // low word is its address's 16-byte units plus a constant, in the whole shared window): A's
    // from its stage-0 word (the same in every stage, so hoisted out of the k-loop) and the
    // stage's offset, B's from A's and the constant distance between them (B follows A in the
    // stage). ptxas keeps these in uniform registers: the 64-row kernels' k-loop is 37
    // instructions a stage (44 with each stage's descriptors built from its address).
    let a = advance(descriptor(a_at) as u32, index * layout.stage_bytes());
    let b = a + u64::from((b_at - a_at) >> 4);
    // SAFETY: the whole warpgroup is here, converged.
    unsafe { wgmma_fence() };
    for ks in 0..4u64 {
        // Each k-step's 32 bytes as a 64-bit add to the whole descriptor (ptxas's `UIADD3.64`,
        // the high word kept in place; the low word's sum does not carry out: `advance`).
        // SAFETY: by the contract.
        unsafe { W::mma(acc, a + ks * 2, b + ks * 2, !(first && ks == 0)) };
    }
    // SAFETY: as the fence.
    unsafe { wgmma_commit_group() };
}
