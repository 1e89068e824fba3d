//! The kernel body: the producer lane's loads and the consumer warpgroups' products, softmax
//! and epilogue, over the CTA's units of the persistent schedule.

use gpu_attention_plan::abi::{BARRIER_BYTES, KernelSpec, MAP_BYTES, MAPS, Params, UNIT_WORDS};
use gpu_attention_plan::mask::key_blocks;
use gpu_attention_plan::schedule::{Assignment, Unit, Units};
use gpu_attention_plan::{Batches, Mask};

/// Whether the persistent CTAs take each round's units in alternating order
/// ([`Assignment`]: the causal units' longest-first order then spreads over every CTA) rather
/// than the plain stride: on in the production module (run 92, causal seq 8k beside cuDNN in
/// alternating processes: D 128 589 TFLOP/s against the stride's 550-563, D 256 650 against
/// 584-586); the `strided` feature's variant module keeps the plain stride to measure against.
const BALANCED: bool = !cfg!(feature = "strided");

/// Whether the folded order ends on its last rounds sorted longest first
/// ([`Units::get_sorted_tail`]): the `folded_tail` feature's variant modules, to measure.
const SORTED_TAIL: bool = cfg!(feature = "folded_tail");

/// Whether a causal fixed batch's units come folded ([`Units::folded`]): by the plan's rule
/// ([`Units::folds`]) in the production module; never in the `longest_first` feature's variant
/// module and always in the `folded` one, to measure the rule against.
const fn fold(units: &Units<'_>, grid: u64) -> bool {
    if cfg!(feature = "longest_first") {
        false
    } else if cfg!(feature = "folded") {
        true
    } else {
        units.folds(grid)
    }
}

/// Whether the overlapped loop releases block j's K stage once the first quarter of its weights
/// is computed (an arrive that reads them: `MbarrierRef::arrive_after`) instead of as soon as
/// `S_j` is done: ptxas keeps the wait for `P_(j-1) V_(j-1)` below that arrive, a quarter into
/// the exponentials, where FlashAttention-3's SASS has its wait (after 23 of 88); production's
/// sits right after the first maximum (the helper's static SASS comparison of 2026-12-06). The
/// `late_k_release` feature's variant module; run 111 (an H100, with `seed_sums`): production's
/// speed at head dims 64 and 128, 3-6 % slower at 256. Not taken.
const LATE_K_RELEASE: bool = cfg!(feature = "late_k_release");
/// The suspend-time hint (ns) of the consumers' K and V waits (`acquire_ticks`: a waiting warp
/// may sleep in the barrier instead of spinning; CUTLASS passes ten million), or none: the
/// `kv_ticks` feature's variant module; run 111: 1.8 % slower at seq >= 2k. Not taken.
const KV_TICKS: Option<u32> = if cfg!(feature = "kv_ticks") {
    Some(0x0098_9680)
} else {
    None
};

/// Whether the overlapped loop rescales O for block j - 1 after it issues block j's scores
/// (FlashAttention-3's order: the tensor cores multiply `Q K_jᵀ` while the consumers scale O,
/// and nothing but packing P sits between `P_(j-2) V_(j-2)`'s completion and the next issue),
/// rather than as soon as `P_(j-2) V_(j-2)` completes: the `late_rescale` feature's variant
/// module, measured against production before it is taken.
const LATE_RESCALE: bool = cfg!(feature = "late_rescale");
/// Whether the overlapped loop waits for `P_(j-1) V_(j-1)` only once block j's weights are done
/// ([`wgmma::wait_group_after`]) rather than where ptxas puts that wait, right after the first
/// maximum (run 105's profile: the consumers' largest stall, 15 %): the `ordered_wait` feature's
/// variant module. Run 106 (an H100, A/B in alternating processes) measured it 5-10 % slower
/// in every cell (D 128 without a mask at 8k: 641 and 622 TFLOP/s against 691 and 688): with the
/// warpgroups taking turns, the early wait lets this warpgroup's rescale and packing run while
/// the other's products do, and the late one moves them onto the path to its next issue.
const ORDERED_WAIT: bool = cfg!(feature = "ordered_wait");
/// Whether (and after which fraction of the block's quads of weights) the overlapped loop waits
/// for `P_(j-1) V_(j-1)` inside the softmax: between ptxas's placement (after the first maximum)
/// and `ORDERED_WAIT`'s (after all of them); FlashAttention-3's SASS waits after about a
/// quarter of its exponentials (run 105). The `wait_quarter` and `wait_half` features' variant
/// modules: run 110 (an H100, alternating processes beside cuDNN, seq 8k) measured both slower
/// than production at head dims 128 and 256 (D 128 without a mask: 598 and 610 TFLOP/s after a
/// quarter, 380 and 373 after half, against 659 and 629; ptxas spills more in them), so the
/// earliest wait, ptxas's, stays; head dim 64 (whose loop has no such wait) read +3-5 %, the
/// spread between modules of different layout.
const WAIT_QUADS: Option<(u32, u32)> = if cfg!(feature = "wait_quarter") {
    Some((1, 4))
} else if cfg!(feature = "wait_half") {
    Some((1, 2))
} else {
    None
};
use gpu_hopper::arch::nvptx::{
    dynamic_smem_1024 as dynamic_smem, griddepcontrol_launch_dependents, griddepcontrol_wait,
    ld_global_nc_v4_u32, setmaxnreg_dec, setmaxnreg_inc,
};
use gpu_hopper::barrier::{BarrierRegistry, BarrierShadow};
use gpu_hopper::descriptor::{MatrixDescriptor, Swizzle};
use gpu_hopper::regs::RegisterSplit;
use gpu_hopper::sequence::{self, OrderedSequenceBarrier, SequenceStorage};
use gpu_hopper::turns::{NamedSequence, NamedTurns};
use gpu_hopper::warpgroup::WARPGROUP_THREADS;
use gpu_hopper::wgmma::{self, MmaRs, MmaSs, Shape};
use gpu_pipeline::arch::nvptx::cvta_to_shared;
use gpu_pipeline::{
    ConsumerStage, Cta, L2Policy, MbarrierRef, NvidiaMbarBackend, ProducerConsumerPipeline,
    TensorMap,
};

use crate::element::Element;
use crate::softmax::{
    Limits, Rows, finish, hold_p, pack, rescale_o, scores, weights, weights_hooked,
};

/// A ring of `ST` stages: one producer arrival (the TMA lane's `arrive_expect_tx`) per full
/// barrier, one arrival per consumer warp (`W` of them, each its lane 0) per empty barrier.
type Ring<const ST: usize, const W: u32> =
    ProducerConsumerPipeline<ST, NvidiaMbarBackend<1, W, Cta>>;

/// The register split of two consumer warpgroups (384 threads): the producer at 24, the
/// consumers at 240.
const REGS_2: RegisterSplit = RegisterSplit::new(384, 1, 2, 24);
const _: () = assert!(REGS_2.producer == 24 && REGS_2.consumer == 240);
/// The register split of three (512 threads): the producer at 24, the consumers at 160.
const REGS_3: RegisterSplit = RegisterSplit::new(512, 1, 3, 24);
const _: () = assert!(REGS_3.producer == 24 && REGS_3.consumer == 160);

/// Bytes of one 64-element span of `rows` rows: a tensor load's box, 128-byte swizzled.
const fn span_bytes(rows: u32) -> u32 {
    rows * 128
}

/// What a unit reads and writes: its sequence's first query and key token (in the tensors'
/// `seq` coordinate: 0 for a fixed batch, whose sequences are the maps' fourth coordinate), its
/// lengths, and its key blocks.
#[derive(Clone, Copy)]
struct Work {
    unit: Unit,
    /// The maps' sequence coordinate: `b` for a fixed batch, 0 for a variable-length one.
    seq_coord: i32,
    first_q: u32,
    first_k: u32,
    len_q: u32,
    len_k: u32,
    /// Key blocks read, and the first of them that needs the mask.
    blocks: u32,
    first_masked: u32,
}

/// The schedule's view of a launch.
#[derive(Clone, Copy)]
struct Launch {
    /// A fixed batch's units (a variable-length batch's are the table's).
    units: Units<'static>,
    /// The unit table of a variable-length batch (its address), or 0.
    table: u64,
    mask: Mask,
    block_m: u32,
    block_n: u32,
}

impl Launch {
    #[inline(always)]
    fn new(params: &Params, table: u64, (block_m, block_n): (u32, u32)) -> Self {
        let batches = Batches::Fixed {
            batch: params.batch,
            seq_q: params.seq_q,
            seq_k: params.seq_k,
        };
        let mask = if params.causal != 0 {
            Mask::Causal
        } else {
            Mask::None
        };
        Launch {
            units: Units::of(batches, params.heads_q, params.causal != 0, block_m),
            table: if params.varlen != 0 { table } else { 0 },
            mask,
            block_m,
            block_n,
        }
    }

    /// Unit `u`'s work.
    ///
    /// # Safety
    ///
    /// For a variable-length batch, `u` is below the table's `units`.
    #[inline(always)]
    unsafe fn work(&self, u: u64) -> Work {
        let (unit, seq_coord, first_q, len_q, first_k, len_k) = if self.table != 0 {
            let at = self.table + u * (UNIT_WORDS as u64 * 4);
            // SAFETY: record `u` of the table (the contract), 32-byte aligned (the table follows
            // the 128-byte maps); nothing writes it during the launch.
            let (a, b) = unsafe { (ld_global_nc_v4_u32(at), ld_global_nc_v4_u32(at + 16)) };
            let unit = Unit {
                sequence: a[0],
                head: a[1],
                m_block: a[2],
            };
            (unit, 0, a[3], b[0], b[1], b[2])
        } else {
            let unit = if SORTED_TAIL {
                self.units.get_sorted_tail(u)
            } else {
                self.units.get(u)
            };
            let batches = self.units.batches();
            let (_, len_q) = batches.queries(unit.sequence);
            let (_, len_k) = batches.keys(unit.sequence);
            (unit, unit.sequence as i32, 0, len_q, 0, len_k)
        };
        let (blocks, first_masked) = key_blocks(
            self.mask,
            (len_q, len_k),
            unit.m_block,
            (self.block_m, self.block_n),
        );
        Work {
            unit,
            seq_coord,
            first_q,
            first_k,
            len_q,
            len_k,
            blocks,
            first_masked,
        }
    }
}

/// The kernel body of table row `spec`: `E` its element, `S` the shape of `S = Q Kᵀ` per
/// warpgroup (`m64n{block_n}`), `O` that of `O += P V` (`m64n{head_dim}`), `ST` its stages, `G`
/// its consumer warpgroups (2 or 3), `W` their warps (`4 G`, Q's empty barrier's count) and `KW`
/// the K and V rings' empty barriers' count (`W` per CTA of the cluster: in a pair, the peer's
/// consumers free the slots this CTA's producer refills by multicast too).
///
/// # Safety
///
/// The entries' contract (`entries.rs`).
#[inline(always)]
pub(crate) unsafe fn forward<
    E,
    S,
    O,
    const ST: usize,
    const G: usize,
    const W: u32,
    const KW: u32,
>(
    spec: KernelSpec,
    params: Params,
) where
    E: Element,
    S: Shape + MmaSs<E::Input, E::Input>,
    O: Shape + MmaRs<E::Input, E::Input>,
{
    const {
        assert!(ST >= 1);
        assert!((G == 2 || G == 3) && W == 4 * G as u32);
        assert!(KW == W || KW == 2 * W);
    };
    debug_assert!(KW == W * spec.cluster);
    let paired = spec.cluster == 2;
    debug_assert!(S::N == spec.block_n && O::N == spec.head_dim);
    debug_assert!(spec.consumers as usize == G);
    // The late rescale with the conditional one would branch, warp by warp, between two
    // `wgmma`s in flight (the variant modules that rescale late take every rescale).
    debug_assert!(!(spec.lazy && LATE_RESCALE));
    let block_m = 64 * G as u32;
    // SAFETY: a special-register read.
    let tid = unsafe { core::arch::nvptx::_thread_idx_x() } as u32;
    let maps = params.maps as *const TensorMap;
    // A variable-length batch's unit table follows the maps (the contract).
    let table = params.maps + u64::from(MAPS * MAP_BYTES);
    if tid == 0 {
        // SAFETY: the three maps in global memory (the contract).
        unsafe {
            for i in 0..MAPS as usize {
                gpu_pipeline::prefetch_tensor_map(maps.add(i));
            }
        }
    }
    // A kernel launched after this one as a programmatic dependent (the next layer's GEMM) may
    // be scheduled as SMs free up; it waits for this grid's completion itself.
    griddepcontrol_launch_dependents();
    let smem = dynamic_smem();
    let bars = spec.barriers_at() as usize;
    let order_at = bars + Ring::<1, W>::SMEM_BYTES + 2 * Ring::<ST, KW>::SMEM_BYTES;
    // The named barriers' shadow (checked builds; zero-sized otherwise) after the sequence's
    // storage, both 8-byte aligned.
    let shadow_at = order_at + size_of::<SequenceStorage<1, G>>();
    const {
        assert!(
            Ring::<1, W>::SMEM_BYTES
                + 2 * Ring::<ST, KW>::SMEM_BYTES
                + size_of::<SequenceStorage<1, G>>()
                + size_of::<BarrierShadow>()
                <= BARRIER_BYTES as usize
                && size_of::<SequenceStorage<1, G>>() % 8 == 0,
            "the attention kernel's barriers outgrew their KiB"
        )
    };
    // SAFETY: inside the barriers' KiB (asserted above).
    let order_storage = unsafe { smem.add(order_at) }.cast::<SequenceStorage<1, G>>();
    // SAFETY: inside the barriers' KiB, 8-byte aligned (asserted above).
    let shadow = unsafe { smem.add(shadow_at) }.cast::<BarrierShadow>();
    // SAFETY: the barriers' KiB holds the three pipelines' barriers (the plan's assertion).
    let (q_pipe, k_pipe, v_pipe) = unsafe {
        (
            Ring::<1, W>::new(smem.add(bars).cast()),
            Ring::<ST, KW>::new(smem.add(bars + Ring::<1, W>::SMEM_BYTES).cast()),
            Ring::<ST, KW>::new(
                smem.add(bars + Ring::<1, W>::SMEM_BYTES + Ring::<ST, KW>::SMEM_BYTES)
                    .cast(),
            ),
        )
    };
    if tid == 0 {
        // SAFETY: one thread initialises, then the block barrier.
        unsafe {
            q_pipe.init();
            k_pipe.init();
            v_pipe.init();
            // Every thread of a consumer warpgroup arrives on its turn's barrier.
            let _ = sequence::init::<1, G>(order_storage, WARPGROUP_THREADS);
            let _ = BARRIERS.init(shadow);
        }
    }
    if paired {
        // SAFETY: every thread of both CTAs arrives once, then waits: the peer's barriers are
        // initialised (`init` ends with `fence.mbarrier_init.release.cluster`) before any remote
        // arrival or multicast reaches them (PTX ISA, "barrier.cluster").
        unsafe { gpu_pipeline::cluster_sync() }
    } else {
        // SAFETY: every thread of the block reaches it, converged.
        unsafe { core::arch::nvptx::_syncthreads() };
    }
    // A row of pairs launched otherwise than its contract says (not in clusters of two, or on a
    // problem whose two halves would read different key blocks) would fault on the peer's
    // barriers or wait for it forever: it ends here instead, every CTA alike.
    if paired
        && (gpu_hopper::arch::nvptx::cluster_nctarank() != 2
            || params.causal != 0
            || params.varlen != 0)
    {
        // SAFETY: ends the kernel (the launch broke the entries' contract).
        unsafe { core::arch::nvptx::trap() };
    }
    // The CTA's rank in its pair (0 alone): its half of each unit's rows and of each K and V
    // block's loads.
    let rank = if paired {
        gpu_pipeline::cluster_cta_rank()
    } else {
        0
    };
    // Launched as a programmatic dependent (the host's `set_programmatic_launch`), this grid may
    // start while the kernel before it in the stream still runs: each thread waits here for that
    // grid's completion and its memory before any access below to global memory (Q, K, V, a
    // variable-length batch's unit table, O, LSE). The setup above reads only the tensor maps,
    // which a copy earlier in the stream wrote: right before this grid (`run`'s upload, which
    // this grid then follows in full stream order, the programmatic edge being a kernel's only)
    // or before the kernel before it (a prepared `launch_raw`), complete either way before this
    // grid starts. Launched otherwise, the
    // wait returns at once. PTX ISA, "griddepcontrol". (The `unwaited` feature's module drops
    // it: the broken variant attention-test's programmatic chain must fail on.)
    if !cfg!(feature = "unwaited") {
        griddepcontrol_wait();
    }
    // A unit is `unit_rows` query rows: this CTA's `block_m` of them start at `rank * block_m`.
    let unit_rows = spec.unit_rows();
    debug_assert!(unit_rows == block_m * spec.cluster);
    let launch = Launch::new(&params, table, (unit_rows, spec.block_n));
    // SAFETY: special-register reads.
    let (first, stride) = unsafe {
        (
            core::arch::nvptx::_block_idx_x() as u64,
            core::arch::nvptx::_grid_dim_x() as u64,
        )
    };
    // A pair takes the units of its cluster's index, both CTAs the same ones.
    let (first, stride) = if paired {
        (first / 2, stride / 2)
    } else {
        (first, stride)
    };
    let count = u64::from(params.units);
    // The order of the units, the same in every thread (folded: for the alternating rounds).
    let launch = Launch {
        units: launch
            .units
            .folded(BALANCED && fold(&launch.units, stride), stride),
        ..launch
    };
    if tid < 128 {
        // SAFETY: the whole producer warpgroup, converged.
        unsafe {
            if G == 2 {
                setmaxnreg_dec::<{ REGS_2.producer }>()
            } else {
                setmaxnreg_dec::<{ REGS_3.producer }>()
            }
        };
        if tid == 0 {
            let (q_prod, k_prod, v_prod) = (
                q_pipe.into_producer(),
                k_pipe.into_producer(),
                v_pipe.into_producer(),
            );
            let spans = spec.spans();
            let kv_bytes = spec.kv_stage_bytes();
            let group = params.group;
            let mut units = Assignment::new(first, stride, count, BALANCED);
            while units.unit() < count {
                let u = units.unit();
                // SAFETY: `u < units`.
                let work = unsafe { launch.work(u) };
                let h = work.unit.head;
                let row0 = (work.first_q + work.unit.m_block * unit_rows + rank * block_m) as i32;
                q_prod.produce_tma(spec.q_bytes(), |stage| {
                    let bar = stage.barrier();
                    for g in 0..G as u32 {
                        for s in 0..spans {
                            // SAFETY: Q's tile is free (the stage's wait); boxes of 64 x 64
                            // rows at 1024-byte-aligned places inside it.
                            unsafe {
                                bar.tensor_load::<4>(
                                    smem.add(((g * spans + s) * span_bytes(64)) as usize),
                                    maps,
                                    [
                                        (s * 64) as i32,
                                        h as i32,
                                        row0 + (g * 64) as i32,
                                        work.seq_coord,
                                    ],
                                )
                            };
                        }
                    }
                });
                let kv_head = (h / group) as i32;
                for j in 0..work.blocks {
                    let key0 = (work.first_k + j * spec.block_n) as i32;
                    k_prod.produce_tma(kv_bytes, |stage| {
                        let bar = stage.barrier();
                        let at = spec.k_at(stage.index());
                        for s in 0..spans {
                            // SAFETY: the stage is free (in a pair in both CTAs: the peer's
                            // consumers arrive on this CTA's empty barrier too); K's map
                            // follows Q's.
                            unsafe {
                                load_kv(
                                    bar,
                                    smem.add((at + s * span_bytes(spec.block_n)) as usize),
                                    maps.add(1),
                                    [(s * 64) as i32, kv_head, key0, work.seq_coord],
                                    spec,
                                    rank,
                                )
                            };
                        }
                    });
                    v_prod.produce_tma(kv_bytes, |stage| {
                        let bar = stage.barrier();
                        let at = spec.v_at(stage.index());
                        for s in 0..spans {
                            // SAFETY: as K's; V's map follows K's.
                            unsafe {
                                load_kv(
                                    bar,
                                    smem.add((at + s * span_bytes(spec.block_n)) as usize),
                                    maps.add(2),
                                    [(s * 64) as i32, kv_head, key0, work.seq_coord],
                                    spec,
                                    rank,
                                )
                            };
                        }
                    });
                }
                units.advance();
            }
        }
    } else {
        // SAFETY: each consumer warpgroup, whole and converged.
        unsafe {
            if G == 2 {
                setmaxnreg_inc::<{ REGS_2.consumer }>()
            } else {
                setmaxnreg_inc::<{ REGS_3.consumer }>()
            }
        };
        let th = tid - 128;
        let (q_cons, k_cons, v_cons) = (
            q_pipe.into_consumer(),
            k_pipe.into_consumer(),
            v_pipe.into_consumer(),
        );
        // SAFETY: every lane of the warp, converged.
        let g = unsafe { gpu_pipeline::arch::nvptx::shfl_sync_idx(u32::MAX, th / 128, 0) };
        let t = th % 128;
        // The peer CTA of a pair, whose producer refills this CTA's K and V slots too.
        let peer = paired.then_some(rank ^ 1);
        // SAFETY: initialised by thread 0 with the same arrivals, before the block barrier.
        let grid = unsafe { sequence::handles::<1, G>(order_storage, WARPGROUP_THREADS) };
        // The two warpgroups take turns issuing their `wgmma`s (FlashAttention-3's ping-pong):
        // while one runs its softmax, the tensor cores run the other's products.
        let mut order = OrderedSequenceBarrier::<_, 1, G>::new(grid, g);
        // With `NAMED_TURNS`, a pingpong row's turns on named barriers instead, the warpgroup
        // index from the thread index itself: the PTX check proves it warpgroup-uniform (it
        // does not follow a shuffle).
        let mut named = (NAMED_TURNS && spec.pingpong && G == 2).then(|| {
            // SAFETY: initialised by thread 0 before the block barrier; the registry's barriers
            // are used only through these handles. Two consumer warpgroups: `th` is below 256
            // (the row's 384 threads, the producer's 128 first), so the group is 0 or 1.
            unsafe { TURNS.group_unchecked(BARRIERS.handles(shadow), th / 128) }
        });
        if let Some(named) = &named {
            // SAFETY: each consumer warpgroup, whole and converged, before its first turn.
            unsafe { named.begin() };
        }
        let (w, l) = (t / 32, t % 32);
        // SAFETY: `smem` is this CTA's dynamic shared memory.
        let base = unsafe { cvta_to_shared(smem) };
        let q_smem = base + g * spec.spans() * span_bytes(64);
        // The softmax takes a positive factor (its maxima are of the raw scores): a negative
        // scale negates S in the wgmma instead (its A-scale immediate), and a zero one becomes
        // the smallest normal (every weight 1, as for 0; a hidden key's minus infinity stays so).
        let negate = params.scale_log2 < 0.0;
        let scale_log2 = params.scale_log2.abs().max(f32::MIN_POSITIVE);
        let mut units = Assignment::new(first, stride, count, BALANCED);
        while units.unit() < count {
            let u = units.unit();
            // SAFETY: `u < units`.
            let work = unsafe { launch.work(u) };
            let m0 = work.unit.m_block * unit_rows + rank * block_m + g * 64 + 16 * w + l / 4;
            let rows_at = [m0, m0 + 8];
            let limit = rows_at.map(|r| match launch.mask {
                Mask::None => work.len_k as i32,
                Mask::Causal => {
                    let n = r as i64 + 1 + work.len_k as i64 - work.len_q as i64;
                    n.clamp(0, work.len_k as i64) as i32
                }
            });
            let mut rows = Rows::START;
            let mut o = O::ZERO;
            // Q's stage is released once the unit's last product with Q is done (so the next
            // unit's Q comes in while this one finishes), or at once when the unit reads no key
            // block: taken out of the `ManuallyDrop` exactly once either way.
            let mut q = core::mem::ManuallyDrop::new(q_cons.acquire());
            let mask_of = #[inline(always)]
            |j: u32| {
                (j >= work.first_masked).then_some(Limits {
                    limit,
                    col0: (j * spec.block_n + 2 * (l % 4)) as i32,
                })
            };
            if work.blocks == 0 {
                // SAFETY: taken once, here (the blocks below do not run).
                release(unsafe { core::mem::ManuallyDrop::take(&mut q) }, l);
            } else if !spec.overlap {
                // Each block in turn: its scores, their softmax, its P V; the two warpgroups
                // overlap each other's softmax and products as the scheduler interleaves them.
                for j in 0..work.blocks {
                    let kst = k_cons.acquire();
                    let mut s = in_turn(
                        spec,
                        (&mut order, &mut named),
                        #[inline(always)]
                        || issue_s::<E, S>(spec, q_smem, base + spec.k_at(kst.index()), negate),
                    );
                    // SAFETY: the whole warpgroup.
                    unsafe { wgmma::wait_group::<0>() };
                    wgmma::fence_accumulators::<S>(&mut s);
                    release_kv(kst, l, peer);
                    if j + 1 == work.blocks {
                        // SAFETY: the unit's last product with Q is done; taken once.
                        release(unsafe { core::mem::ManuallyDrop::take(&mut q) }, l);
                    }
                    let rescale =
                        scores::<S, E>(&mut rows, &mut s, scale_log2, mask_of(j), spec.lazy);
                    rescale_o::<O>(&mut o, rescale, spec.lazy);
                    let vst = v_cons.acquire();
                    in_turn(
                        spec,
                        (&mut order, &mut named),
                        #[inline(always)]
                        || issue_pv::<E, S, O>(spec, &mut o, &s, base + spec.v_at(vst.index())),
                    );
                    // SAFETY: the whole warpgroup.
                    unsafe { wgmma::wait_group::<0>() };
                    wgmma::fence_accumulators::<O>(&mut o);
                    release_kv(vst, l, peer);
                }
            } else {
                // Block 0: its scores, then P_0 (O is still zero: no rescale needed).
                let kst = k_cons.acquire();
                let mut p = in_turn(
                    spec,
                    (&mut order, &mut named),
                    #[inline(always)]
                    || issue_s::<E, S>(spec, q_smem, base + spec.k_at(kst.index()), negate),
                );
                // SAFETY: the whole warpgroup.
                unsafe { wgmma::wait_group::<0>() };
                wgmma::fence_accumulators::<S>(&mut p);
                release_kv(kst, l, peer);
                if work.blocks == 1 {
                    // SAFETY: the unit's only product with Q is done; taken once.
                    release(unsafe { core::mem::ManuallyDrop::take(&mut q) }, l);
                }
                let _ = scores::<S, E>(&mut rows, &mut p, scale_log2, mask_of(0), spec.lazy);
                // With `LATE_RESCALE`, O's factors for the P waiting to be multiplied (1: none
                // yet, O is zero).
                let mut pending = [1.0f32; 2];
                // Blocks 1..: S_j is issued ahead of O += P_{j-1} V_{j-1}, so the softmax of
                // S_j runs while the tensor cores multiply P_{j-1} V_{j-1}.
                for j in 1..work.blocks {
                    let (kst, vst) = match KV_TICKS {
                        Some(t) => (k_cons.acquire_ticks(t), v_cons.acquire_ticks(t)),
                        None => (k_cons.acquire(), v_cons.acquire()),
                    };
                    let mut s = in_turn(
                        spec,
                        (&mut order, &mut named),
                        #[inline(always)]
                        || {
                            let s = issue_s::<E, S>(
                                spec,
                                q_smem,
                                base + spec.k_at(kst.index()),
                                negate,
                            );
                            if LATE_RESCALE {
                                // No group writes O now (P_(j-2) V_(j-2) completed last
                                // iteration); S_j's is in flight and does not touch it.
                                rescale_o::<O>(&mut o, pending, spec.lazy);
                            }
                            issue_pv::<E, S, O>(spec, &mut o, &p, base + spec.v_at(vst.index()));
                            s
                        },
                    );
                    // SAFETY: the whole warpgroup: S_j's group is done (at most the newer,
                    // P V's, is pending).
                    unsafe { wgmma::wait_group::<1>() };
                    wgmma::fence_accumulators::<S>(&mut s);
                    // With `LATE_K_RELEASE`, K's stage is released inside the softmax below.
                    let kst = if LATE_K_RELEASE {
                        Some(kst)
                    } else {
                        release_kv(kst, l, peer);
                        None
                    };
                    if j + 1 == work.blocks {
                        // SAFETY: the unit's last product with Q is done; taken once.
                        release(unsafe { core::mem::ManuallyDrop::take(&mut q) }, l);
                    }
                    // The weights in f32 while P_(j-1) V_(j-1) runs; P_j is packed once it is
                    // done (its A registers are read until then).
                    // With `WAIT_QUADS`, the wait for P V comes once the weights of the first
                    // quads are done (ordered after the last of them).
                    let rescale = if let Some((num, den)) = WAIT_QUADS {
                        weights_hooked::<S>(
                            &mut rows,
                            &mut s,
                            scale_log2,
                            (mask_of(j), spec.lazy),
                            S::N / 8 * num / den - 1,
                            |done| {
                                // SAFETY: the whole warpgroup, converged (the hook runs in every
                                // thread at the same quad); O's address is never 0.
                                unsafe { wgmma::wait_group_after::<0>(done, params.o) };
                            },
                        )
                    } else if let Some(kst) = &kst {
                        // K's release (lane 0's arrival) ordered after the first quarter of the
                        // weights. SAFETY: `params.o` is O's device address, never 0 (the
                        // host's contract, as for `wait_group_after`).
                        let nonzero = unsafe { core::num::NonZeroU64::new_unchecked(params.o) };
                        let bar = kst.barrier();
                        weights_hooked::<S>(
                            &mut rows,
                            &mut s,
                            scale_log2,
                            (mask_of(j), spec.lazy),
                            S::N / 32 - 1,
                            |done| {
                                if l == 0 {
                                    bar.arrive_after(done, nonzero);
                                }
                            },
                        )
                    } else {
                        weights::<S>(&mut rows, &mut s, scale_log2, mask_of(j), spec.lazy)
                    };
                    if let Some(kst) = kst {
                        // Lane 0 arrived in the weights; in a pair lane 1 arrives on the peer's.
                        release_kv_remote(kst, l, peer);
                    }
                    // P V is done after either wait.
                    if WAIT_QUADS.is_some() {
                        // Waited for inside the weights.
                    } else if ORDERED_WAIT {
                        // Not before the weights are done (their sums come last), so that they
                        // run while P V does; O's address is never 0.
                        let after = rows.sum[0].to_bits() ^ rows.sum[1].to_bits();
                        // SAFETY: the whole warpgroup.
                        unsafe { wgmma::wait_group_after::<0>(after, params.o) };
                    } else {
                        // SAFETY: the whole warpgroup.
                        unsafe { wgmma::wait_group::<0>() };
                    }
                    wgmma::fence_accumulators::<O>(&mut o);
                    hold_p::<S>(&mut p);
                    release_kv(vst, l, peer);
                    if LATE_RESCALE {
                        pending = rescale;
                    } else {
                        rescale_o::<O>(&mut o, rescale, spec.lazy);
                    }
                    pack::<S, E>(&mut s);
                    p = s;
                }
                if LATE_RESCALE {
                    rescale_o::<O>(&mut o, pending, spec.lazy);
                }
                let vst = v_cons.acquire();
                in_turn(
                    spec,
                    (&mut order, &mut named),
                    #[inline(always)]
                    || issue_pv::<E, S, O>(spec, &mut o, &p, base + spec.v_at(vst.index())),
                );
                // SAFETY: the whole warpgroup.
                unsafe { wgmma::wait_group::<0>() };
                wgmma::fence_accumulators::<O>(&mut o);
                release_kv(vst, l, peer);
            }
            let (inv, lse) = finish(&rows);
            // SAFETY: O and LSE hold the problem's extents (the contract); rows past the
            // sequence are not written.
            unsafe { write_out::<E, O, G>(&params, &work, &o, rows_at, inv, lse, l) };
            units.advance();
        }
        if let Some(named) = named {
            // SAFETY: each consumer warpgroup, whole and converged, after its last turn; both
            // run the same units (each its 64 rows of the unit's queries), a turn per product,
            // so they take the same turns.
            unsafe { named.end() };
        }
    }
    if paired {
        // SAFETY: every thread of both CTAs arrives once, then waits: no CTA of a pair exits
        // while its peer may still arrive on its empty barriers or multicast into its shared
        // memory (the consumers' last remote releases precede this barrier).
        unsafe { gpu_pipeline::cluster_sync() }
    }
}

/// Whether single CTAs load K and V with the L2 policy evict-last
/// (`MbarrierRef::tensor_load_hinted`), as FlashAttention-3's mainloop does for K: every query
/// block of a head reads the head's K and V again. The `kv_evict_last` feature's variant module,
/// a measurement; CTA pairs (multicast) load as before.
const KV_EVICT_LAST: bool = cfg!(feature = "kv_evict_last");

/// One 64-column span of a K or V block into the stage at `dst`: the whole block (`block_n`
/// rows), or in a pair this CTA's half (rows `rank * block_n / 2` on), multicast to both CTAs at
/// the same place, each CTA's full barrier counting both halves' bytes.
///
/// # Safety
///
/// The stage is free in every CTA it is written to; `map` is K's or V's, its boxes
/// [`KernelSpec::kv_box_rows`] rows; `dst` is the span's place in the stage, 1024-byte aligned;
/// in a pair both CTAs are alive and lay out their shared memory alike.
#[inline(always)]
unsafe fn load_kv(
    bar: MbarrierRef<'_, Cta>,
    dst: *mut u8,
    map: *const TensorMap,
    [col, head, key0, seq]: [i32; 4],
    spec: KernelSpec,
    rank: u32,
) {
    if spec.cluster == 2 {
        let half = spec.kv_box_rows();
        // SAFETY: the caller's contract; the half's rows start at a multiple of 8 rows (the
        // plan's assertion), a 1024-byte boundary of the 128-byte swizzle.
        unsafe {
            bar.tensor_load_multicast::<4>(
                dst.add((rank * span_bytes(half)) as usize),
                map,
                [col, head, key0 + (rank * half) as i32, seq],
                0b11,
            )
        };
    } else if KV_EVICT_LAST {
        // SAFETY: the caller's contract.
        unsafe {
            bar.tensor_load_hinted::<4>(dst, map, [col, head, key0, seq], L2Policy::evict_last())
        };
    } else {
        // SAFETY: the caller's contract.
        unsafe { bar.tensor_load::<4>(dst, map, [col, head, key0, seq]) };
    }
}

/// Runs `f` (a warpgroup's `wgmma` issues) in this warpgroup's turn (when the row says
/// `pingpong`): on the named turns where the kernel made them ([`NAMED_TURNS`]), else on
/// `order`; then hands the turn to the other warpgroup.
#[inline(always)]
fn in_turn<S: sequence::Signals, R, const G: usize>(
    spec: KernelSpec,
    (order, named): (
        &mut OrderedSequenceBarrier<S, 1, G>,
        &mut Option<NamedSequence<'_, 2>>,
    ),
    f: impl FnOnce() -> R,
) -> R {
    // `named` is only ever `Some` with `NAMED_TURNS`; testing the constant too keeps the
    // production module's code as it was (its PTX changed without it).
    if let (true, Some(named)) = (NAMED_TURNS, named) {
        // SAFETY: the whole warpgroup, converged (the consumers' loop); both consumer
        // warpgroups took `begin` and take the same turns; the registry `BARRIERS` holds the
        // turns' ids, used by nothing else.
        let turn = unsafe { named.wait() };
        let r = f();
        // SAFETY: as the wait: `f` (the warpgroup's `wgmma` issues, `.aligned`) has no branch
        // that leaves a lane out.
        unsafe { turn.arrive() };
        r
    } else if spec.pingpong {
        let turn = order.wait();
        let r = f();
        turn.arrive();
        r
    } else {
        f()
    }
}

/// Whether a row with `pingpong` and two consumer warpgroups takes its turns on two named
/// barriers ([`TURNS`]: `bar.sync` / `bar.arrive`, FlashAttention-3's warp-scheduler barriers,
/// which wait in hardware) rather than on the ordered sequence's mbarriers (a `try_wait` loop:
/// run 105's profile, 2.9 k stall samples there and twice FA3's branches). The `named_turns`
/// feature's variant module: run 111 (an H100, one process) measured it 0.6 % faster than
/// production at seq >= 2k (0.988 to 1.03 per cell), under the 2 % that would take it.
const NAMED_TURNS: bool = cfg!(feature = "named_turns");

/// Whether O of a row with head dimension `d` and `g` consumer warpgroups leaves in 16-byte
/// stores after a transpose within each quad ([`write_out_wide`]) rather than in each thread's
/// 4-byte column pairs: in every row of two consumer warpgroups (128 query rows by 128 keys; every
/// row of head dims 128 and 256, and head dim 64's rows for seq 512 and 1k with a causal mask),
/// the narrow stores in the rows of three (head dim 64's 192 query rows, from 1k keys without a
/// mask).
///
/// Run 111 (an H100, one process, the then production module against the `wide_store` variant,
/// wide everywhere): at head dims 128 and 256 wide was faster on every cell (seq >= 2k: +1.4 % to
/// +15 %; 512 and 1k: +10 % to +23 %); at 64 the rows of two gained 9-14 %, the rows of three lost
/// on four of six cells from 2k keys (to -4.9 %). Run 114 (an H100) tested this choice's module
/// (`attention-test`, 174 of 174) and timed it beside FlashAttention-3 and cuDNN: +9.5 %, +13.6 %
/// and +9.7 % on head dim 64's seq 512, causal 512 and causal 1k cells over wide from 128 only.
/// The `wide_store` variant takes the wide stores everywhere, `narrow_store` nowhere (the
/// earlier production stores), to measure.
const fn wide_store(g: usize) -> bool {
    if cfg!(feature = "wide_store") {
        true
    } else if cfg!(feature = "narrow_store") {
        false
    } else {
        g == 2
    }
}

/// The turns of [`NAMED_TURNS`]: the two consumer warpgroups on named barriers 1 and 2.
const TURNS: NamedTurns<2> = NamedTurns::new("attention: consumer warpgroups' turns", 1, 128);

/// The kernels' named barriers: the registry refuses id 0 and two users of one id at compile
/// time, and in checked builds bounds and counts every sync (its shadow in the barriers' KiB).
const BARRIERS: BarrierRegistry = BarrierRegistry::new(&[TURNS.barriers()]);

/// Issues `S = Q Kᵀ` of one warpgroup (its 64 rows of Q at `q_smem`, the K stage at `k_smem`;
/// `-Q Kᵀ` when `negate`) as one committed group, and returns the accumulators in flight.
#[inline(always)]
fn issue_s<E: Element, S: Shape + MmaSs<E::Input, E::Input>>(
    spec: KernelSpec,
    q_smem: u32,
    k_smem: u32,
    negate: bool,
) -> S::Acc {
    let mut s = S::ZERO;
    // The accumulators' (ignored) zeros are defined before the fence: an instruction that
    // defines a wgmma's input registers inside its pipeline stage makes ptxas serialise every
    // wgmma of the kernel (its C7513).
    wgmma::fence_accumulators::<S>(&mut s);
    // SAFETY: the whole warpgroup calls it converged (the consumers' loop); Q's and K's stages
    // are full.
    unsafe {
        wgmma::fence();
        // Each k-step's descriptors are the stage's, advanced (one add each: the start field
        // of the sum is the sum's start, as the tiles lie below 256 KiB).
        let (q_desc, k_desc) = (
            MatrixDescriptor::k_major(q_smem, Swizzle::B128),
            MatrixDescriptor::k_major(k_smem, Swizzle::B128),
        );
        let at = |ks: u32| {
            let (span, within) = (ks / 4, (ks % 4) * 32);
            (
                q_desc.advance(span * span_bytes(64) + within).0,
                k_desc.advance(span * span_bytes(spec.block_n) + within).0,
            )
        };
        // One branch around the whole stage: nothing but the wgmmas and their descriptors
        // between its first and its last.
        if negate {
            unrolled(spec.head_dim / 16, |ks| {
                let (a, b) = at(ks);
                S::mma_ss::<-1, 1, 0, 0>(&mut s, a, b, ks > 0);
            });
            wgmma::commit_group();
        } else {
            unrolled(spec.head_dim / 16, |ks| {
                let (a, b) = at(ks);
                S::mma_ss::<1, 1, 0, 0>(&mut s, a, b, ks > 0);
            });
            wgmma::commit_group();
        }
    }
    s
}

/// Issues `O += P V` of one warpgroup (the V stage at `v_smem`) as one committed group; P is
/// `p`'s packed registers (quads `2 j`, `2 j + 1`: k-step `j`). V is MN-major: its 64-column
/// spans `block_n * 128` bytes apart (LBO), the 8-row groups along K 1024 bytes apart (SBO); one
/// k16 step is 16 rows of 128 bytes.
#[inline(always)]
fn issue_pv<E: Element, S: Shape, O: Shape + MmaRs<E::Input, E::Input>>(
    spec: KernelSpec,
    o: &mut O::Acc,
    p: &S::Acc,
    v_smem: u32,
) {
    let v_desc = MatrixDescriptor::mn_major(v_smem, Swizzle::B128, span_bytes(spec.block_n), 1024);
    let mut lo = [0u32; 2];
    // P and O are pinned where they are computed (`scores`, `rescale_o`): no instruction
    // defines them here, while the scores' group may still be in flight.
    // SAFETY: the whole warpgroup calls it converged; V's stage is full; P and O were written
    // before the fence.
    unsafe {
        wgmma::fence();
        S::each_quad(p, |quad, v| {
            if quad % 2 == 0 {
                lo = [v[0].to_bits(), v[2].to_bits()];
            } else {
                O::mma_rs::<1, 1, 1>(
                    o,
                    [lo[0], lo[1], v[0].to_bits(), v[2].to_bits()],
                    v_desc.advance((quad / 2) * 16 * 128).0,
                    true,
                );
            }
        });
        wgmma::commit_group();
    }
}

/// Calls `f(0)`, .., `f(n - 1)` for a constant `n <= 16`, written out: a loop of `wgmma`s that
/// LLVM left rolled would compute each descriptor at run time (and the PTX check counts each
/// kernel's `wgmma`s unrolled).
#[inline(always)]
fn unrolled(n: u32, mut f: impl FnMut(u32)) {
    debug_assert!(n <= 16);
    macro_rules! calls {
        ($($i:literal)*) => { $( if $i < n { f($i) } )* };
    }
    calls!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15);
}

/// Releases a K or V stage whose MMAs are done, as [`release`]; in a pair lane 1 also arrives on
/// the peer's barrier, whose producer refills this CTA's slot with its multicast half: a
/// write-after-read whose reads `wgmma.wait_group` completed, with nothing to publish, so the
/// arrival releases at CTA scope (`arrive_remote_cta`).
#[inline(always)]
fn release_kv<const N: usize, const W: u32>(
    stage: ConsumerStage<'_, N, NvidiaMbarBackend<1, W, Cta>>,
    lane: u32,
    peer: Option<u32>,
) {
    if lane == 0 {
        stage.arrive();
    }
    release_kv_remote(stage, lane, peer);
}

/// The rest of [`release_kv`] once lane 0 arrived on the stage's own barrier (there, or the
/// `late_k_release` variant's arrival inside the weights): in a pair lane 1 arrives on the
/// peer's.
#[inline(always)]
fn release_kv_remote<const N: usize, const W: u32>(
    stage: ConsumerStage<'_, N, NvidiaMbarBackend<1, W, Cta>>,
    lane: u32,
    peer: Option<u32>,
) {
    if let Some(peer) = peer
        && lane == 1
    {
        // SAFETY: launched in pairs; the peer initialised its barriers before the first cluster
        // barrier and does not exit before the last one.
        unsafe { stage.barrier().arrive_remote_cta(peer) };
    }
    stage.release_without_signal();
}

/// Releases a stage whose MMAs are done (the warp's `wgmma.wait_group` saw them complete): lane
/// 0 of each consumer warp arrives.
#[inline(always)]
fn release<const N: usize, const W: u32>(
    stage: ConsumerStage<'_, N, NvidiaMbarBackend<1, W, Cta>>,
    lane: u32,
) {
    release_kv(stage, lane, None);
}

/// A thread's part of a unit's O (its two rows, scaled by `inv`) and, from the first lane of
/// each row group, its rows' `LSE`. `G` is the kernel's consumer warpgroups, which with the head
/// dimension picks the stores ([`wide_store`]).
///
/// # Safety
///
/// `params.o` and `params.lse` hold the problem's extents.
#[inline(always)]
unsafe fn write_out<E: Element, O: Shape, const G: usize>(
    params: &Params,
    work: &Work,
    o: &O::Acc,
    rows_at: [u32; 2],
    inv: [f32; 2],
    lse: [f32; 2],
    l: u32,
) {
    let [batch_stride, seq_stride, head_stride] = params.o_strides;
    let h = u64::from(work.unit.head);
    let base = |r: u32| {
        let seq = if params.varlen != 0 {
            0
        } else {
            u64::from(work.unit.sequence) * batch_stride
        };
        seq + u64::from(work.first_q + r) * seq_stride + h * head_stride
    };
    let live = rows_at.map(|r| r < work.len_q);
    let at = rows_at.map(base);
    let out = params.o as *mut u16;
    if const { wide_store(G) } {
        // SAFETY: forwarded (the same rows and columns, 16 bytes at a time).
        unsafe { write_out_wide::<E, O>(out, o, live, at, inv, l) };
    } else {
        // Each thread its two columns of every 8-column group, a 4-byte store each (a warp's
        // store covers half of each 32-byte sector it touches: run 105's `ncu` counted twice
        // the ideal sectors).
        O::each_quad(o, |q, v| {
            let col = u64::from(8 * q + 2 * (l % 4));
            if live[0] {
                // SAFETY: inside O (the contract), 4-byte aligned (strides of 8 elements, even
                // column).
                unsafe {
                    out.add((at[0] + col) as usize)
                        .cast::<u32>()
                        .write(E::pack(v[0] * inv[0], v[1] * inv[0]))
                };
            }
            if live[1] {
                // SAFETY: as above.
                unsafe {
                    out.add((at[1] + col) as usize)
                        .cast::<u32>()
                        .write(E::pack(v[2] * inv[1], v[3] * inv[1]))
                };
            }
        });
    }
    if l % 4 == 0 {
        let lse_out = params.lse as *mut f32;
        for r in 0..2 {
            if live[r] {
                let row = u64::from(rows_at[r]);
                let index = if params.varlen != 0 {
                    h * u64::from(params.tokens_q) + u64::from(work.first_q) + row
                } else {
                    (u64::from(work.unit.sequence) * u64::from(params.heads_q) + h)
                        * u64::from(params.seq_q)
                        + row
                };
                // SAFETY: inside LSE (the contract).
                unsafe { lse_out.add(index as usize).write(lse[r]) };
            }
        }
    }
}

/// O's rows in 16-byte stores ([`wide_store`]): the four threads of a quad exchange their packed
/// columns (a 4 x 4 transpose in two butterfly rounds, `shfl.sync.bfly` with lane masks 1 and 2)
/// so that each holds 8 adjacent columns of one 8-column group, and store them at once: a
/// warp's store then covers whole sectors (8 rows of 64 bytes), with a quarter of the stores.
///
/// # Safety
///
/// As [`write_out`], and `out + at[r]` is 16-byte aligned (strides of 8 elements; O's address a
/// multiple of 16 bytes). Every lane of the warp calls it, converged (the exchanges).
#[inline(always)]
unsafe fn write_out_wide<E: Element, O: Shape>(
    out: *mut u16,
    o: &O::Acc,
    live: [bool; 2],
    at: [u64; 2],
    inv: [f32; 2],
    l: u32,
) {
    const { assert!(O::N % 32 == 0 && O::N <= 256) };
    // The packed words of each row, by 8-column group (constant indices once `each_quad` is
    // unrolled: registers, not local memory; the build's check fails otherwise).
    let mut words = [[0u32; 32]; 2];
    O::each_quad(o, |q, v| {
        words[0][q as usize] = E::pack(v[0] * inv[0], v[1] * inv[0]);
        words[1][q as usize] = E::pack(v[2] * inv[1], v[3] * inv[1]);
    });
    let lane = l % 4;
    // Group `group` of four 8-column groups (32 columns), row `r`: unrolled by hand, so that
    // every index into `words` is a constant.
    let store = |group: u32, r: usize, a: [u32; 4]| {
        let chunk = quad_transpose(a, lane);
        let (live, at) = if r == 0 {
            (live[0], at[0])
        } else {
            (live[1], at[1])
        };
        if live {
            let col = u64::from(8 * (4 * group + lane));
            // SAFETY: inside O (the contract), 16-byte aligned (the contract: strides and
            // column multiples of 8 elements).
            unsafe {
                out.add((at + col) as usize)
                    .cast::<Words16>()
                    .write(Words16(chunk))
            };
        }
    };
    macro_rules! groups {
        ($($g:literal)*) => {$(
            if $g < O::N / 32 {
                store($g, 0, [words[0][4 * $g], words[0][4 * $g + 1], words[0][4 * $g + 2], words[0][4 * $g + 3]]);
                store($g, 1, [words[1][4 * $g], words[1][4 * $g + 1], words[1][4 * $g + 2], words[1][4 * $g + 3]]);
            }
        )*};
    }
    groups!(0 1 2 3 4 5 6 7);
}

/// Four 32-bit words stored at once (`st.v4.b32`: the alignment makes LLVM emit one store).
#[repr(C, align(16))]
struct Words16([u32; 4]);

/// The 4 x 4 transpose across the four lanes of a quad: lane `lane` (0..4) gives its words
/// `a[0..4]` and gets `[a_0[lane], a_1[lane], a_2[lane], a_3[lane]]`, word `lane` of each of the
/// quad's lanes in lane order. Two butterfly rounds: with lane mask 1 the pairs of words (0, 1)
/// and (2, 3) swap their off-diagonal halves, with lane mask 2 the pairs (0, 2) and (1, 3).
#[inline(always)]
fn quad_transpose([a0, a1, a2, a3]: [u32; 4], lane: u32) -> [u32; 4] {
    // One exchange of a pair of words `(x, y)` with the lane `lane ^ mask`: the low lane of the
    // pair keeps `x` and sends `y`, the high one the opposite, and each puts what it gets where
    // it sent from.
    let swap = |x: u32, y: u32, mask: u32| {
        let high = lane & mask != 0;
        // SAFETY: every lane of the warp, converged (the caller's contract).
        let got = unsafe {
            gpu_hopper::arch::nvptx::shfl_sync_bfly_f32(
                u32::MAX,
                f32::from_bits(if high { x } else { y }),
                mask,
            )
        }
        .to_bits();
        if high { (got, y) } else { (x, got) }
    };
    let ((a0, a1), (a2, a3)) = (swap(a0, a1, 1), swap(a2, a3, 1));
    let ((a0, a2), (a1, a3)) = (swap(a0, a2, 2), swap(a1, a3, 2));
    [a0, a1, a2, a3]
}
