//! The kernel body: one producer warpgroup and two consumer warpgroups over a ring that runs on
//! across the CTA's units of its schedule, composed from the main loop, the epilogues and
//! split-K.

use gpu_gemm_plan::{
    BK, BM, CONSUMER_REGS, Config, Grid, KernelSpec, Layout, PRODUCER_REGS, Schedule,
};
#[cfg(feature = "ck_push")]
use gpu_pipeline::arch::nvptx::{barrier_cluster_arrive_relaxed, barrier_cluster_wait_acquire};
use gpu_pipeline::{
    ConsumerHalf, ConsumerStage, Cta, MbarScope, MbarrierRef, NvidiaMbarBackend, TensorMap,
    prefetch_tensor_map,
};

use crate::cluster_k;
use crate::epilogue::{
    EPILOGUE_BARRIERS, Epi, Out, c_stages, epilogue, epilogue_from, load_c, store_through_smem,
};
use crate::mainloop::{Pipe, a_row0, consume_unit, mma_stage, produce, shifts_edge, stage_tx};
use crate::split_k::{SPLIT_K_BARRIERS, Workspace, last_split};
use crate::tile::Width;
use gpu_hopper::arch::nvptx::{
    dynamic_smem_1024 as dynamic_smem, griddepcontrol_launch_dependents as launch_dependents,
    griddepcontrol_wait, setmaxnreg_dec, setmaxnreg_inc,
};
use gpu_hopper::barrier::{BarrierRegistry, BarrierShadow, Barriers};

/// The kernel's named barriers, from its pieces' lists: two of them on one hardware id would be
/// a compile error here (id 0 is `__syncthreads`', which the registry refuses to hand out).
pub(crate) const BARRIERS: BarrierRegistry =
    BarrierRegistry::new(&[EPILOGUE_BARRIERS, SPLIT_K_BARRIERS]);
// Evaluated (and so checked) in every build, used or not.
const _: BarrierRegistry = BARRIERS;
// The GEMM has no checked build: its barriers' shadow is zero-sized, so it needs no place in the
// shared-memory layout. A checked build of the toolkit would need one (and a plan that knows it).
const _: () = assert!(
    core::mem::size_of::<BarrierShadow>() == 0,
    "gpu-gemm: built with gpu-hopper's `checked` feature, whose named barriers need shared memory the GEMM's layout does not reserve"
);

/// The handles of [`BARRIERS`].
#[inline(always)]
fn barriers() -> Barriers<'static> {
    // SAFETY: `BarrierShadow` is zero-sized (above), so any aligned pointer is a valid one, and
    // there is nothing to initialise.
    unsafe { BARRIERS.handles(core::ptr::NonNull::dangling().as_ptr()) }
}

/// The kernel body over `schedule`: warpgroup 0's first lane produces, warpgroups 1 and 2
/// consume; the ring runs on across the CTA's tiles, so the producer loads the next tile while the
/// consumers write the last one out.
///
/// `C` is the empty barriers' arrival count, `config.arrivals()` (each entry passes it as that
/// constant expression); `S` the waits' scope; `H` the warpgroups across a tile's columns: 1,
/// or 2 for [`Config::split_columns`] (tiles `2 W::BN` wide and [`BM`] / 2 high, warpgroup `g`
/// on columns `g W::BN ..`).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn gemm<W: Width, const ST: usize, const C: u32, S: MbarScope, const H: u32>(
    config: Config,
    schedule: Schedule,
    maps: *const TensorMap,
    out: Out,
    m: u32,
    n: u32,
    k: u32,
) {
    // SAFETY: a special-register read.
    let tid = unsafe { core::arch::nvptx::_thread_idx_x() } as u32;
    if tid == 0 {
        // The first tensor load or store through a map fetches its descriptor from global memory
        // on the critical path; fetched now, it comes in while the barriers are initialised.
        // SAFETY: `maps[0]` and `maps[1]` are A's and B's maps in global memory, `maps[2]` D's
        // when the epilogue stages D (N % 8 == 0) and `maps[3]` C's when it also reads C (the
        // entries' contract).
        unsafe {
            prefetch_tensor_map(maps);
            prefetch_tensor_map(maps.add(1));
            if config.staged(n) {
                prefetch_tensor_map(maps.add(2));
                if out.beta != 0.0 {
                    prefetch_tensor_map(maps.add(3));
                }
            }
        }
    }
    // A kernel the caller launches after this one as a programmatic dependent may be scheduled
    // as soon as SMs free up (it waits for this grid's completion itself).
    launch_dependents();
    let smem = dynamic_smem();
    let layout = const { Layout::ring(W::BN * H, ST as u32, BM / H) };
    // The ring's barriers end before the split flag, the barriers' KiB's last word.
    const {
        assert!(H == 1 || H == 2);
        let layout = Layout::ring(W::BN * H, ST as u32, BM / H);
        assert!(
            layout.ring_barriers_at(Epi::SMEM_BYTES) + Pipe::<ST, C, S>::SMEM_BYTES
                <= layout.split_flag_at()
        );
        // A pushing cluster-K kernel's reduce barrier lies between them.
        #[cfg(feature = "ck_push")]
        assert!(
            !cluster_k::push::pushes(layout)
                || layout.ring_barriers_at(Epi::SMEM_BYTES) + Pipe::<ST, C, S>::SMEM_BYTES
                    <= cluster_k::push::reduce_barrier_at(layout)
        );
    };
    // SAFETY: the ring's barriers follow the two warpgroups' epilogue-load barriers.
    let pipe =
        unsafe { Pipe::<ST, C, S>::new(smem.add(layout.ring_barriers_at(Epi::SMEM_BYTES)).cast()) };
    if tid == 0 {
        // SAFETY: one thread initialises, then the block (or cluster) barrier.
        unsafe {
            pipe.init();
            c_stages(smem, layout, 0).init();
            c_stages(smem, layout, 1).init();
        }
        #[cfg(feature = "ck_push")]
        if config.cluster_k && cluster_k::push::pushes(layout) {
            // The reduction's barrier (one arrival: its expected bytes; the parts' pushes
            // complete them), made visible to the cluster's CTAs before any pushes to it (the
            // cluster barrier split around the main loop below).
            // SAFETY: one thread initialises, before the block barrier below; count 1.
            unsafe { cluster_k::push::reduce_barrier(smem, layout).init(1) };
            gpu_pipeline::fence_mbarrier_init();
        }
    }
    let paired = config.cluster == 2;
    // A cluster-K kernel's parts of K: the CTAs of its cluster (in pairs: half of them), each
    // the part of its rank (`cluster_k::place`).
    let parts = if config.cluster_k {
        cluster_k::parts(config.cluster)
    } else {
        1
    };
    // The CTA's place: its part of K, its rank in its pair (0 alone: the tile row it takes of
    // the cluster tile, and the half of B's box it loads for both), and the cluster ranks of
    // the pair's CTAs (the multicast's destinations; the peer, whose producer also fills this
    // CTA's stages).
    let (part, rank, peer) = if config.cluster_k {
        cluster_k::place(paired, parts)
    } else if paired {
        // (The peer is not used: `consume` takes it from the rank.)
        (0, gpu_pipeline::cluster_cta_rank(), 0)
    } else {
        (0, 0, 0)
    };
    // The CTAs a multicast of this CTA's half of B's box reaches: both of its pair (a pair
    // kernel's cluster is the pair: ranks 0 and 1).
    let multicast = if config.cluster_k {
        (1u16 << peer) | (1u16 << (part + rank * parts))
    } else {
        0b11
    };
    if config.cluster_k {
        // The schedule gives this CTA one unit, part `part` of its tile, when the launch kept
        // the entries' contract (a grid of tiles x parts CTAs in clusters of `parts`, parts at
        // most the k-blocks): otherwise its cluster would add up partials nobody wrote.
        let (_, split, splits) = schedule.unit(schedule.first);
        if schedule.first >= schedule.total() || split != part || splits != parts {
            // SAFETY: ends the kernel (the launch broke the entries' contract).
            unsafe { core::arch::nvptx::trap() };
        }
    }
    if paired {
        // SAFETY: every thread of both CTAs arrives once, then waits: the peer's barriers are
        // initialised (`init` ends with `fence.mbarrier_init.release.cluster`) before any remote
        // arrival or multicast reaches them.
        unsafe { gpu_pipeline::cluster_sync() }
    } else {
        // SAFETY: every thread of the block reaches it, converged.
        unsafe { core::arch::nvptx::_syncthreads() };
    }
    // A pushing cluster-K kernel (the `ck_push` variant) arrives here on the cluster barrier
    // that makes every CTA's reduce barrier visible, and waits on it only before its first push
    // (the consumers) or its exit (the producer warpgroup): no wait on the main loop's path.
    #[cfg(feature = "ck_push")]
    let push = config.cluster_k && !paired && parts > 1 && cluster_k::push::pushes(layout);
    #[cfg(feature = "ck_push")]
    if push {
        // SAFETY: every thread of every CTA of the cluster arrives once (`push` is the same in
        // all of them) and waits once, below.
        unsafe { barrier_cluster_arrive_relaxed() };
    }
    // Launched as a programmatic dependent (the host's `set_programmatic_launch`), this grid may
    // start while the kernel before it in the stream still runs: each thread waits here for that
    // grid's completion and its memory before any access below to global memory (A, B and C, the
    // workspace, D). The setup above overlaps that kernel's end: it reads only the tensor maps,
    // which a copy earlier in the stream wrote: right before this grid (a plan `run` makes, an
    // upload this grid then follows in full stream order, the programmatic edge being a
    // kernel's only) or before the kernel before it (a kept plan), complete either way before
    // this grid starts (ABI version 3 and later). Launched
    // otherwise, the wait returns at once. PTX ISA, "griddepcontrol". (The `unwaited` feature's
    // module drops it: the broken variant gemm-test's programmatic chain must fail on.)
    if !cfg!(feature = "unwaited") {
        griddepcontrol_wait();
    }
    let k_blocks = k.div_ceil(BK);
    // Rows of A per CTA; a pair's cluster tile is `config.cluster` CTA tiles high.
    let cluster_rows = BM / H * config.cluster;
    // M, where the last tile row's A box is shifted inside it (`a_row0`).
    let edge =
        (shifts_edge(W::BN, config.swap_ab) && !paired && !config.cluster_k && out.beta == 0.0)
            .then_some(m);

    if tid < 128 {
        if config.setmaxnreg {
            // SAFETY: the whole producer warpgroup executes it, converged.
            unsafe { setmaxnreg_dec::<PRODUCER_REGS>() };
        }
        if tid == 0 {
            // SAFETY: this CTA's one producer lane; the maps are the entries' contract's.
            unsafe {
                produce::<W, ST, C, S>(
                    pipe.into_producer(),
                    schedule,
                    smem,
                    layout,
                    maps,
                    (k_blocks, cluster_rows),
                    rank,
                    paired.then_some(multicast),
                    edge,
                    stage_tx(layout, BM / H, m, config.swap_ab),
                    #[cfg(feature = "l2_hints")]
                    (config.swap_ab && !paired),
                )
            };
        } else if tid == 32 || tid == 64 {
            let g = tid / 32 - 1;
            if config.staged(n) && out.beta != 0.0 {
                // SAFETY: `maps[3]` is C's map (N % 8 == 0 and beta != 0); the buffer is
                // warpgroup g's.
                unsafe {
                    load_c::<W>(
                        &c_stages(smem, layout, g),
                        schedule,
                        smem.add(layout.staging_at(g)),
                        maps.add(3),
                        cluster_rows,
                        rank * BM + g * 64,
                        k_blocks,
                    )
                };
            }
        }
    } else {
        if config.setmaxnreg {
            // SAFETY: each consumer warpgroup executes it whole, converged.
            unsafe { setmaxnreg_inc::<CONSUMER_REGS>() };
        }
        if config.cluster_k {
            // SAFETY: the two consumer warpgroups, whole; this CTA's one unit (checked above).
            unsafe {
                consume_part::<W, ST, C, S>(
                    schedule,
                    smem,
                    pipe.into_consumer(),
                    tid - 128,
                    (rank, paired.then_some(peer)),
                    (part, parts),
                    out,
                    (m, n),
                    k_blocks,
                )
            };
        } else {
            // SAFETY: the two consumer warpgroups, whole; the layout, maps and matrices are the
            // entries' contract's.
            unsafe {
                consume::<W, ST, C, S, H>(
                    config,
                    schedule,
                    smem,
                    pipe.into_consumer(),
                    tid - 128,
                    rank,
                    out,
                    (m, n),
                    k_blocks,
                    edge,
                )
            };
        }
    }
    // The pushing variant's consumers added up their slices in `consume_part`; its threads
    // leave once every CTA's reduce barrier was visible to them (none skips the wait it
    // arrived for).
    #[cfg(feature = "ck_push")]
    let parts = if push {
        if tid < 128 {
            // SAFETY: this thread's wait on the phase it arrived on above (the consumers
            // waited in `consume_part`). The CTA exits once its consumers saw every push to it.
            unsafe { barrier_cluster_wait_acquire() };
        }
        1
    } else {
        parts
    };
    if parts > 1 {
        // Every CTA of the cluster has written its partial tile (released by each writer's
        // arrival, acquired by every wait); then the consumers add up their slices of the tile
        // from every CTA's partial; the second barrier keeps each CTA's partial (its shared
        // memory) alive until every CTA's reads of it are done.
        // SAFETY: every thread of the cluster's CTAs reaches both barriers once, in order (the
        // launch's one unit per CTA, checked above).
        unsafe { gpu_pipeline::cluster_sync() }
        if tid >= 128 {
            let (tile, _, _) = schedule.unit(schedule.first);
            let (tm, tn) = schedule.tile(tile);
            // SAFETY: every CTA of the cluster wrote its partial of this tile before the barrier
            // above, and keeps it until the barrier below; the kernel computes the transpose
            // (the entries check it of every cluster-K row); the parts of this CTA's tile are
            // the CTAs of ranks `rank * parts ..` (`cluster_k::place`).
            unsafe {
                cluster_k::reduce_slice::<W>(
                    smem,
                    layout,
                    tid - 128,
                    (part, parts, rank * parts),
                    (tm * cluster_rows + rank * BM, tn * W::BN),
                    out,
                    m,
                    n,
                )
            };
        }
        // SAFETY: as above.
        unsafe { gpu_pipeline::cluster_sync() }
    }
    if paired {
        // SAFETY: as above. No CTA of a pair exits while its peer may still arrive on its empty
        // barriers (the consumers' last remote releases precede this barrier).
        unsafe { gpu_pipeline::cluster_sync() }
    }
}

/// The consumer warpgroup (0 or 1) of consumer thread `th` (of 256), broadcast from lane 0:
/// every lane has the same value, and ptxas then knows it, so that what is computed from it (the
/// stages' `wgmma` descriptors) may live in uniform registers.
///
/// # Safety
///
/// Every lane of the calling warp executes it (`shfl.sync` with the full mask).
#[inline(always)]
unsafe fn consumer_warpgroup(th: u32) -> u32 {
    // SAFETY: by the contract.
    unsafe { gpu_pipeline::arch::nvptx::shfl_sync_idx(!0, th / 128, 0) }
}

/// The consumer warpgroups' part of [`gemm`]: thread `th` of 256.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn consume<W: Width, const ST: usize, const C: u32, S: MbarScope, const H: u32>(
    config: Config,
    schedule: Schedule,
    smem: *mut u8,
    consumer: ConsumerHalf<ST, NvidiaMbarBackend<1, C, S>>,
    th: u32,
    rank: u32,
    out: Out,
    (m, n): (u32, u32),
    k_blocks: u32,
    edge: Option<u32>,
) {
    // Warpgroup g in {0, 1} multiplies rows 64 g .. 64 g + 63 of each tile, or with two column
    // halves (`H` 2) its 64 rows by columns `g W::BN ..`.
    // SAFETY: every lane of the warp is here (the consumer warpgroups run whole).
    let g = unsafe { consumer_warpgroup(th) };
    let w = (th % 128) / 32;
    let l = th % 32;
    // This thread's first row and column of D in a tile whose first row and column are `row0`
    // and `col0` (its warpgroup's block: `(2 - H) 64 g` rows below, `(H - 1) g W::BN` columns
    // right).
    let row = |row0: u32| row0 + (2 - H) * g * 64 + 16 * w + l / 4;
    let col = |col0: u32| col0 + (H - 1) * g * W::BN + 2 * (l % 4);
    // The other CTA of a pair.
    let peer = rank ^ 1;
    let cluster_rows = BM / H * config.cluster;
    // Releases a stage whose MMAs are done: every thread arrives, or one lane per warp (and a
    // second lane on the peer CTA's barrier, whose producer also writes this slot).
    let release = |stage: ConsumerStage<'_, ST, NvidiaMbarBackend<1, C, S>>| {
        if !config.warp_arrivals {
            stage.release();
            return;
        }
        if l == 0 {
            stage.arrive();
        }
        if config.cluster == 2 && l == 1 {
            // The peer's producer refills this slot here (its multicast half of B): a
            // write-after-read, whose reads (this warp's wgmmas) `wgmma.wait_group` completed.
            // Nothing is published, so the arrival releases at CTA scope, and both sides wait
            // at CTA scope (the data itself arrives by TMA complete-tx).
            // SAFETY: launched as pairs; the peer initialised its barriers before the first
            // cluster barrier and does not exit before the last one.
            unsafe { stage.barrier().arrive_remote_cta(peer) };
        }
        stage.release_without_signal();
    };
    let layout = const { Layout::ring(W::BN * H, ST as u32, BM / H) };
    let mut acc = W::ZERO;
    let issue = |acc: &mut W::Acc, index: u32, first: bool| unsafe {
        // SAFETY: the stage is full; the whole warpgroup is here.
        mma_stage::<W>(acc, smem, layout, index, g, first)
    };
    let staged = config.staged(n);
    // SAFETY: this warpgroup's epilogue-load barriers, initialised by `gemm`.
    let c_stages = (staged && out.beta != 0.0).then(|| unsafe { c_stages(smem, layout, g) });
    // The store thread's release of the C stage of its last quarter of D, due once that quarter's
    // tensor store has read it.
    let mut pending: Option<MbarrierRef<'_, Cta>> = None;
    // Quarters of D this warpgroup has staged so far (without C, quarter `i` of the CTA's goes
    // through box `i % 2`, across tiles: a 64-wide tile has one quarter).
    let mut staged_quarters = 0u32;
    let (first, stride, total) = (schedule.first, schedule.stride, schedule.total());
    let mut u = first;
    while u < total {
        // A stream-K schedule's unit, or split-K's (written out as before stream-K: the same
        // values as `work` gives; the split-K kernels' PTX still moved, in layout only).
        let (tile, split, parts, kb0, kb1) = if schedule.workers != 0 {
            let w = schedule.work(u, k_blocks);
            if w.parts == 0 {
                // An empty unit: the producer loaded nothing for it.
                u += stride;
                continue;
            }
            (w.tile, w.part, w.parts, w.kb0, w.kb1)
        } else {
            let (tile, split, parts) = schedule.unit(u);
            let (kb0, kb1) = Schedule::k_range(split, parts, k_blocks);
            (tile, split, parts, kb0, kb1)
        };
        let (tm, tn) = schedule.tile(tile);
        // A pair's CTA of rank 1 takes the lower half of the cluster tile, as in `produce`.
        let (m0, n0) = (
            tm * cluster_rows + rank * (cluster_rows / 2),
            tn * layout.bn,
        );
        // The accumulators' first row: `m0`, or below it where the A box was shifted inside M.
        let a0 = a_row0(m0, edge);
        // The closures go by reference (`&F: Fn`): by value, or as `&impl Fn` parameters, LLVM
        // schedules the kernels' code differently (the PTX changes), for no gain.
        #[allow(clippy::needless_borrows_for_generic_args)]
        consume_unit(&consumer, &mut acc, (kb0, kb1), &issue, &release, || {
            if let Some(empty) = pending.take() {
                // The last tile's last quarter of D left through a C stage; once its tensor store
                // has read it, C may come in again (while this tile's MMAs run).
                gpu_pipeline::bulk_wait_group_read::<0>();
                empty.arrive();
            }
        });
        // Whether `acc` holds the whole tile: it does without split-K; with it, in the CTA that
        // finishes the tile's last split, once it has added up the splits' partials.
        let whole = parts == 1 || {
            let work = Workspace::of::<W>(out.work, schedule, config.cluster);
            let slot = schedule.slot(tile, config.cluster, rank);
            // The thread's first row (of two, 8 apart) is inside D.
            let live = row(a0) < m;
            // SAFETY: every consumer thread calls them with the same unit; the workspace is the
            // entries' contract's; the flag word is the layout's.
            unsafe {
                work.write_partial::<W>(&acc, slot, (split, parts), th, live);
                last_split::<W>(
                    &mut acc,
                    work,
                    slot,
                    (split, parts),
                    th,
                    live,
                    smem.add(layout.split_flag_at()).cast(),
                    barriers(),
                )
            }
        };
        if !whole {
            // Another CTA writes this tile's D.
        } else if a0 != m0 {
            // A shifted tile (beta 0): rows `a0..m0` are the tile row above's.
            epilogue_from::<W>(&acc, (row(a0), col(n0)), out, (m0, m), n);
        } else if staged && (parts == 1 || c_stages.is_none()) {
            // SAFETY: the buffer is this warpgroup's; `maps[2]` is D's map (N % 8 == 0); C comes
            // through `c_stages` when beta != 0 (which loads C only for tiles not split: a split
            // tile with C goes out from registers, below).
            unsafe {
                let staging = smem.add(layout.staging_at(g));
                let map_d = out.maps.add(2);
                let at = (m0 + g * 64, n0);
                store_through_smem::<W>(
                    &acc,
                    staging,
                    map_d,
                    g,
                    w,
                    l,
                    at,
                    out,
                    c_stages.as_ref(),
                    &mut pending,
                    &mut staged_quarters,
                );
            }
        } else {
            epilogue::<W>(&acc, row(m0), col(n0), out, m, n);
        }
        u += stride;
    }
    if config.tma_store && th % 128 == 0 {
        // The last tensor stores have written D (and finished reading the staging buffer, which
        // must outlive them). With the `store_read` feature (a measurement module), only their
        // reads of the staging buffer are waited for, as CUTLASS's epilogues do at the end: the
        // grid's completion, which a stream or a programmatic dependent's `griddepcontrol.wait`
        // waits for, includes its writes.
        #[cfg(not(feature = "store_read"))]
        gpu_pipeline::bulk_wait_group::<0>();
        #[cfg(feature = "store_read")]
        gpu_pipeline::bulk_wait_group_read::<0>();
        if let Some(empty) = pending {
            // Every C stage taken is given back (nothing loads into it any more).
            empty.arrive();
        }
    }
}

/// The consumer warpgroups' part of [`gemm`] in a cluster-K kernel (`Config::cluster_k`): thread
/// `th` of 256 computes the CTA's one unit, part `split` of `parts` of K of one tile, and leaves it
/// in the CTA's partial tile for the cluster's reduction ([`cluster_k`]); a tile in one part (a
/// launch without clusters, or of one pair) goes to D from registers. `rank` is the CTA's in its
/// pair (0 alone), `peer` the pair's other CTA's cluster rank (`None` alone).
///
/// # Safety
///
/// The two consumer warpgroups call it, whole; the CTA has one unit in `schedule`, part `split`
/// of `parts`; the layout, maps and matrices are the entries' contract's.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn consume_part<W: Width, const ST: usize, const C: u32, S: MbarScope>(
    schedule: Schedule,
    smem: *mut u8,
    consumer: ConsumerHalf<ST, NvidiaMbarBackend<1, C, S>>,
    th: u32,
    (rank, peer): (u32, Option<u32>),
    (split, parts): (u32, u32),
    out: Out,
    (m, n): (u32, u32),
    k_blocks: u32,
) {
    // The k-range comes from `split` and `parts` as `gemm` read them from the cluster's special
    // registers (uniform: `S2UR`), not from the schedule's unit, whose division of the block
    // index by the cluster's size ptxas 13.0 computes in vector registers: a loop bounded by
    // those kept its stage index and descriptors there too (67 instructions a k-block against 38
    // this way; SASS of 2026-12-07). They are equal: `gemm`'s launch check traps otherwise.
    // SAFETY: every lane of the warp is here (the consumer warpgroups run whole).
    let g = unsafe { consumer_warpgroup(th) };
    let (w, l) = ((th % 128) / 32, th % 32);
    // The cluster-K kernels' ring (128-row slots: the entries' check). A deep ring's body, which
    // instantiates this function but never runs it, needs the constant to evaluate: there its
    // stages do not fit 128-row slots, and `Layout::ring` gives the narrow one.
    let layout = const { Layout::ring(W::BN, ST as u32, BM / 2) };
    // One lane per consumer warp releases a stage (`Config::warp_arrivals`), and in a pair a
    // second lane on the peer's barrier, whose producer also fills this slot (as `consume`).
    let release = |stage: ConsumerStage<'_, ST, NvidiaMbarBackend<1, C, S>>| {
        if l == 0 {
            stage.arrive();
        }
        if let Some(peer) = peer
            && l == 1
        {
            // SAFETY: launched in pairs; the peer initialised its barriers before the first
            // cluster barrier and does not exit before the last one.
            unsafe { stage.barrier().arrive_remote_cta(peer) };
        }
        stage.release_without_signal();
    };
    let issue = |acc: &mut W::Acc, index: u32, first: bool| unsafe {
        // SAFETY: the stage is full; the whole warpgroup is here.
        mma_stage::<W>(acc, smem, layout, index, g, first)
    };
    let (tile, _, _) = schedule.unit(schedule.first);
    let (tm, tn) = schedule.tile(tile);
    let mut acc = W::ZERO;
    #[allow(clippy::needless_borrows_for_generic_args)]
    consume_unit(
        &consumer,
        &mut acc,
        Schedule::k_range(split, parts, k_blocks),
        &issue,
        &release,
        || {},
    );
    #[cfg(feature = "ck_push")]
    if parts > 1 && cluster_k::push::pushes(layout) && peer.is_none() {
        let bar = cluster_k::push::reduce_barrier(smem, layout);
        // SAFETY: this thread arrived on the cluster barrier in `gemm` (every CTA's reduce
        // barrier initialised and fenced before it); after the wait every push may land.
        unsafe { barrier_cluster_wait_acquire() };
        if th == 0 {
            // SAFETY: the barrier's one expected arrival, in its first phase; the bytes (at
            // most 30 KiB) stay in range.
            unsafe { bar.arrive_expect_tx(cluster_k::push::pushed_bytes(split, parts, W::BN)) };
        }
        // SAFETY: every CTA of the cluster initialised its reduce barrier, made visible above,
        // and expects these bytes; none exits before its barrier's phase completes (below); a
        // transposing kernel uses no staging buffer otherwise; tiles up to 64 wide (`pushes`).
        unsafe { cluster_k::push::push_partial::<W>(&acc, smem, layout, th, (split, parts, 0)) };
        bar.wait_parity(0);
        // SAFETY: every other part's rows of this part's slice arrived (the phase completed).
        unsafe {
            cluster_k::push::add_pushed::<W>(
                &acc,
                smem,
                layout,
                th,
                (split, parts),
                (tm * BM, tn * W::BN),
                out,
                (m, n),
            )
        };
        return;
    }
    if parts > 1 {
        if cluster_k::in_ring(layout) {
            // The partial tile overwrites the ring: both warpgroups' MMAs have completed (each
            // waited for its last group in `consume_unit`); this barrier (split-K's, of the 256
            // consumer threads, which a cluster-K kernel does not use otherwise) orders them
            // before any write. Every stage was filled and consumed, so no tensor load is in
            // flight.
            // SAFETY: the 256 consumer threads, each warp converged.
            unsafe { barriers().sync(SPLIT_K_BARRIERS[0]) };
        }
        // SAFETY: the layout's staging buffers, which nothing else uses in this kernel, or the
        // ring, which nothing reads or writes any more (above); the cluster barrier after this
        // call orders the writes before any read.
        unsafe { cluster_k::write_partial::<W>(&acc, smem, layout, th) };
    } else {
        let m0 = if peer.is_some() {
            (2 * tm + rank) * BM
        } else {
            tm * BM
        };
        let (row0, col0) = (m0 + g * 64 + 16 * w + l / 4, tn * W::BN + 2 * (l % 4));
        epilogue::<W>(&acc, row0, col0, out, m, n);
    }
}

/// The persistent schedule: CTA `b` (or CTA pair `b`) computes units `b, b + grid, ...` of
/// `splits` per cluster tile (clamped to 1..=k-blocks, so that no split is empty; 1 where the
/// configuration has no split-K); a stream-K kernel's, with `splits` workers
/// ([`Schedule::stream_k`]). Tiles of `rows x cols` (a row's `rows` and `layout.bn`).
#[inline(always)]
fn persistent(
    config: Config,
    (rows, cols): (u32, u32),
    m: u32,
    n: u32,
    k: u32,
    splits: u32,
) -> Schedule {
    // SAFETY: special-register reads.
    let (grid, block) = unsafe {
        (
            core::arch::nvptx::_grid_dim_x() as u32,
            core::arch::nvptx::_block_idx_x() as u32,
        )
    };
    if config.stream_k {
        // `splits` is the workers (clusters: a pair's CTAs walk its units together).
        return Schedule::stream_k(
            m.div_ceil(rows * config.cluster),
            n.div_ceil(cols),
            k.div_ceil(BK),
            splits,
            block / config.cluster,
            grid / config.cluster,
        );
    }
    Schedule::new(
        m.div_ceil(rows * config.cluster),
        n.div_ceil(cols),
        if config.split_k { splits } else { 1 },
        k.div_ceil(BK),
        block / config.cluster,
        grid / config.cluster,
    )
}

/// The schedule of an entry of `spec` for this CTA: per tile, the one tile at the block's
/// `(x, y)` (its index in the grouped order, and a stride that ends the loop); persistent,
/// [`persistent`]. Tiles of the row's `rows` by its `layout.bn` columns.
#[inline(always)]
pub(crate) fn schedule_of(spec: KernelSpec, m: u32, n: u32, k: u32, splits: u32) -> Schedule {
    let (rows, cols) = (spec.rows, spec.layout.bn);
    match spec.grid {
        Grid::PerTile => {
            let (tiles_m, tiles_n) = (m.div_ceil(rows), n.div_ceil(cols));
            // SAFETY: special-register reads.
            let (x, y) = unsafe {
                (
                    core::arch::nvptx::_block_idx_x() as u32,
                    core::arch::nvptx::_block_idx_y() as u32,
                )
            };
            Schedule::new(tiles_m, tiles_n, 1, 1, y * tiles_n + x, tiles_m * tiles_n)
        }
        Grid::Persistent => persistent(spec.config, (rows, cols), m, n, k, splits),
        Grid::ClusterK => {
            // SAFETY: special-register reads.
            let (grid, block) = unsafe {
                (
                    core::arch::nvptx::_grid_dim_x() as u32,
                    core::arch::nvptx::_block_idx_x() as u32,
                )
            };
            // The parts are the cluster's CTAs (the launch's `splits`, which they must equal),
            // in pairs half of them: a pair's cluster computes a cluster tile of two tile rows,
            // its unit `cluster * parts + part` of the schedule over cluster tiles.
            let c = spec.config.cluster;
            let parts = cluster_k::parts(c);
            let (first, stride) = if c == 1 {
                (block, grid)
            } else {
                let size = parts * c;
                (block / size * parts + block % size % parts, grid / c)
            };
            Schedule::new(
                m.div_ceil(rows * c),
                n.div_ceil(cols),
                parts,
                k.div_ceil(BK),
                first,
                stride,
            )
        }
    }
}
