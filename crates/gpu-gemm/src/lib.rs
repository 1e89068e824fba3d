//! A warp-specialized bf16 GEMM for Hopper (sm_90a) on gpu-pipeline: a no_std kernel crate that
//! uses the library as any user's crate would (issue 13).
//! D = alpha * A * B^T + beta * C; A: M x K row-major, B: N x K row-major, C, D: M x N row-major.
//! CTA tile 128 x 256 x 64; warpgroup 0 (one lane) loads A and B boxes with 2D tensor TMA
//! (128-byte swizzle) into a 4-stage ring; warpgroups 1 and 2 each multiply 64 rows with
//! `wgmma.m64n256k16`, keeping one stage in flight, then write D through shared memory with TMA
//! tensor stores (from registers when N % 8 != 0 or under split-K). When beta != 0, two more
//! lanes of warpgroup 0 bring C into the consumers' staging buffers through an
//! `EpiLoadPipeline` each. `setmaxnreg` moves registers from the producer warpgroup to the
//! consumers. Two persistent kernels run on narrower tiles instead, for shapes with too few
//! 128 x 256 tiles: 128 x 128 (`wgmma.m64n128k16`, 6 stages: [`Narrow`]) and 128 x 64
//! (`wgmma.m64n64k16`, 8 stages: [`Slim`]). The cluster kernel pairs two
//! CTAs on vertically adjacent tiles: each loads its own A and half of the shared B tile, which
//! TMA multicast writes into both CTAs.
#![no_std]
#![feature(
    abi_gpu_kernel,
    asm_experimental_arch,
    link_llvm_intrinsics,
    stdarch_nvptx
)]
#![feature(core_intrinsics, gpu_intrinsics, gpu_launch_sized_workgroup_mem)]
#![allow(internal_features, unsafe_op_in_unsafe_fn)]
#![allow(clippy::missing_safety_doc, clippy::undocumented_unsafe_blocks)]

mod abi;
#[rustfmt::skip]
mod wgmma;

/// The module's launch ABI version ([`abi::ABI_VERSION`]): the host crate reads this global when
/// it loads the module and refuses a module whose version differs from its own.
#[unsafe(no_mangle)]
pub static GPU_GEMM_ABI: u32 = abi::ABI_VERSION;

use gpu_pipeline::arch::nvptx as arch;
use gpu_pipeline::{
    ConsumerHalf, ConsumerStage, Cta, EpiLoadPipeline, MbarScope, MbarrierRef, NvidiaMbarBackend,
    ProducerConsumerPipeline, TensorMap,
};

const BM: u32 = 128;
const BK: u32 = 64;
const A_BYTES: u32 = BM * BK * 2; // 16 KiB
/// One 64 x 64 bf16 box of D (or C) in the TMA store's 128-byte-swizzled layout.
const BOX_BYTES: u32 = 64 * 64 * 2;
/// The epilogue's staging buffer of one consumer warpgroup: two boxes, which its 64 x 256 block
/// of D passes through a quarter (64 columns) at a time, alternately.
const STAGING_BYTES: u32 = 2 * BOX_BYTES;

/// A CTA tile's width: the columns of D it computes, the rows of B each stage holds, and the
/// `wgmma` N of each consumer warpgroup with its accumulators (N / 2 f32 per thread).
trait Width {
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

/// 128 x 256 tiles (`wgmma.m64n256k16`, 128 accumulators per consumer thread) in a ring of 4
/// stages of 48 KiB: the kernels' default.
struct Wide;
/// 128 x 128 tiles (`wgmma.m64n128k16`, 64 accumulators) in a ring of 6 stages of 32 KiB: twice
/// the tiles of [`Wide`] for shapes that have too few of those to fill the GPU (skinny M), with
/// less split-K or none.
struct Narrow;
/// 128 x 64 tiles (`wgmma.m64n64k16`, 32 accumulators) in a ring of 8 stages of 24 KiB: four
/// times the tiles of [`Wide`], for the smallest problems.
struct Slim;

impl Width for Wide {
    const BN: u32 = 256;
    type Acc = [f32; 128];
    const ZERO: Self::Acc = [0.0; 128];
    #[inline(always)]
    unsafe fn mma(acc: &mut Self::Acc, desc_a: u64, desc_b: u64, accumulate: bool) {
        // SAFETY: by the caller's contract.
        unsafe { wgmma::wgmma_m64n256k16_bf16(acc, desc_a, desc_b, accumulate) }
    }
    #[inline(always)]
    fn each_pair(acc: &Self::Acc, f: impl FnMut(u32, f32, f32)) {
        wgmma::each_pair_128(acc, f)
    }
    #[inline(always)]
    fn each_quad(acc: &Self::Acc, f: impl FnMut(u32, [f32; 4])) {
        wgmma::each_quad_128(acc, f)
    }
    #[inline(always)]
    fn map_quads(acc: &mut Self::Acc, f: impl FnMut(u32, [f32; 4]) -> [f32; 4]) {
        wgmma::map_quads_128(acc, f)
    }
}

impl Width for Narrow {
    const BN: u32 = 128;
    type Acc = [f32; 64];
    const ZERO: Self::Acc = [0.0; 64];
    #[inline(always)]
    unsafe fn mma(acc: &mut Self::Acc, desc_a: u64, desc_b: u64, accumulate: bool) {
        // SAFETY: by the caller's contract.
        unsafe { wgmma::wgmma_m64n128k16_bf16(acc, desc_a, desc_b, accumulate) }
    }
    #[inline(always)]
    fn each_pair(acc: &Self::Acc, f: impl FnMut(u32, f32, f32)) {
        wgmma::each_pair_64(acc, f)
    }
    #[inline(always)]
    fn each_quad(acc: &Self::Acc, f: impl FnMut(u32, [f32; 4])) {
        wgmma::each_quad_64(acc, f)
    }
    #[inline(always)]
    fn map_quads(acc: &mut Self::Acc, f: impl FnMut(u32, [f32; 4]) -> [f32; 4]) {
        wgmma::map_quads_64(acc, f)
    }
}

impl Width for Slim {
    const BN: u32 = 64;
    type Acc = [f32; 32];
    const ZERO: Self::Acc = [0.0; 32];
    #[inline(always)]
    unsafe fn mma(acc: &mut Self::Acc, desc_a: u64, desc_b: u64, accumulate: bool) {
        // SAFETY: by the caller's contract.
        unsafe { wgmma::wgmma_m64n64k16_bf16(acc, desc_a, desc_b, accumulate) }
    }
    #[inline(always)]
    fn each_pair(acc: &Self::Acc, f: impl FnMut(u32, f32, f32)) {
        wgmma::each_pair_32(acc, f)
    }
    #[inline(always)]
    fn each_quad(acc: &Self::Acc, f: impl FnMut(u32, [f32; 4])) {
        wgmma::each_quad_32(acc, f)
    }
    #[inline(always)]
    fn map_quads(acc: &mut Self::Acc, f: impl FnMut(u32, [f32; 4]) -> [f32; 4]) {
        wgmma::map_quads_32(acc, f)
    }
}

/// The dynamic shared memory of a kernel whose tiles are `bn` wide, in a ring of `stages`: the
/// stages (A's box, then B's), the two consumer warpgroups' staging buffers, then in the last KiB
/// the barriers: first the two warpgroups' epilogue-load barriers ([`c_stages`]), then the
/// ring's.
#[derive(Clone, Copy)]
struct Layout {
    bn: u32,
    stages: u32,
}

impl Layout {
    const fn of<W: Width, const ST: usize>() -> Self {
        Self {
            bn: W::BN,
            stages: ST as u32,
        }
    }

    /// B's box in a stage.
    const fn b_bytes(self) -> u32 {
        self.bn * BK * 2
    }

    const fn stage_bytes(self) -> u32 {
        A_BYTES + self.b_bytes()
    }

    /// Where consumer warpgroup `g`'s staging buffer starts.
    const fn staging_at(self, g: u32) -> usize {
        (self.stages * self.stage_bytes() + g * STAGING_BYTES) as usize
    }

    /// Where the barriers start.
    const fn barriers_at(self) -> usize {
        self.staging_at(2)
    }

    const fn ring_barriers_at(self) -> usize {
        self.barriers_at() + 2 * Epi::SMEM_BYTES
    }

    /// The word through which the consumers' first thread tells the others whether their CTA
    /// finished the last split of a tile ([`last_split`]): the last of the barriers' KiB.
    const fn split_flag_at(self) -> usize {
        self.barriers_at() + 1024 - 4
    }
}

/// The ring of the [`Wide`] kernels.
const WIDE: Layout = Layout::of::<Wide, 4>();
/// The ring of the [`Narrow`] kernel.
const NARROW: Layout = Layout::of::<Narrow, 6>();
/// The ring of the [`Slim`] kernel.
const SLIM: Layout = Layout::of::<Slim, 8>();
// Every layout fits the 227 KiB of dynamic shared memory a block may have on sm_90 (CUDA C++
// Programming Guide, "Compute Capabilities", Hopper), barriers included.
const _: () = assert!(WIDE.barriers_at() + 1024 <= 227 * 1024);
const _: () = assert!(NARROW.barriers_at() + 1024 <= 227 * 1024);
const _: () = assert!(SLIM.barriers_at() + 1024 <= 227 * 1024);
/// Consumer warps: 2 warpgroups of 4.
const CONSUMER_WARPS: u32 = 8;
/// Registers per thread after `setmaxnreg` (PTX ISA "setmaxnreg": 24 to 256, a multiple of 8):
/// the producer warpgroup gives up registers it does not use, the consumers take them for their
/// 128 accumulators. 128 x 40 + 256 x 232 = 64512 of the SM's 65536, no more than the launch's
/// 384 x 168 (`.maxntid 384` caps a thread at 168).
const PRODUCER_REGS: u32 = 40;
const CONSUMER_REGS: u32 = 232;

/// `griddepcontrol.launch_dependents;` (PTX ISA 7.8, sm_90, "Parallel Synchronization and
/// Communication Instructions: griddepcontrol"): a grid launched after this one with
/// programmatic stream serialization (the caller's next kernel) may be scheduled once every CTA
/// of this grid has executed it or exited. That grid's `griddepcontrol.wait` still waits for this
/// one to complete, so where this sits affects only when the dependent's CTAs may start.
#[inline(always)]
fn launch_dependents() {
    // SAFETY: a scheduling hint with no operands.
    unsafe {
        core::arch::asm!(
            "griddepcontrol.launch_dependents;",
            options(nostack, preserves_flags)
        )
    };
}

/// The ring of a kernel: `ST` stages, one producer arrival (the TMA lane's `arrive_expect_tx`)
/// per full barrier, `C` consumer arrivals per empty barrier, waits at scope `S`.
type Pipe<const ST: usize, const C: u32, S> =
    ProducerConsumerPipeline<ST, NvidiaMbarBackend<1, C, S>>;

/// C's way in when `beta != 0` (one per consumer warpgroup): the two boxes of its staging buffer
/// are the two stages. An epilogue-load thread of the producer warpgroup fills a stage with a
/// quarter of the warpgroup's 64 x 256 block of C (one 64 x 64 tensor load, one
/// `arrive_expect_tx`: producer arrival count 1); the warpgroup combines it with its
/// accumulators in place and stores it as D, and its store thread releases the stage once the
/// tensor store has read it (consumer arrival count 1).
type Epi = EpiLoadPipeline<2, NvidiaMbarBackend<1, 1>>;

/// Consumer warpgroup `g`'s epilogue-load pipeline, over its barriers at the start of
/// `layout`'s barriers.
///
/// # Safety
///
/// `smem` is the kernel's dynamic shared memory, laid out as `layout`; as
/// [`EpiLoadPipeline::new`].
#[inline(always)]
unsafe fn c_stages(smem: *mut u8, layout: Layout, g: u32) -> Epi {
    // SAFETY: two pipelines' barriers fit before the ring's, inside the last KiB.
    unsafe {
        Epi::new(
            smem.add(layout.barriers_at() + g as usize * Epi::SMEM_BYTES)
                .cast(),
        )
    }
}

/// `atom.acq_rel.gpu.global.add.u32 old, [counter], 1;` (PTX ISA 6.0, sm_70, "Parallel
/// Synchronization and Communication Instructions: atom"; "Memory Consistency Model"): adds 1 to
/// the counter and returns its value before. At GPU scope it is a release of what precedes it in
/// this thread (and what precedes that in causality order: other threads' writes before a
/// barrier this thread then passed), and an acquire of what the earlier adders released.
///
/// # Safety
///
/// `counter` is a 4-byte aligned word of global memory.
#[inline(always)]
unsafe fn count_acq_rel_gpu(counter: *mut u32) -> u32 {
    let before: u32;
    // SAFETY: by the contract; it orders memory, so no `nomem`.
    unsafe {
        core::arch::asm!(
            "atom.acq_rel.gpu.global.add.u32 {before}, [{counter}], 1;",
            before = out(reg32) before,
            counter = in(reg64) counter,
            options(nostack, preserves_flags),
        );
    }
    before
}

unsafe extern "llvm-intrinsic" {
    #[link_name = "llvm.nvvm.wgmma.fence.sync.aligned"]
    fn wgmma_fence();
    #[link_name = "llvm.nvvm.wgmma.commit_group.sync.aligned"]
    fn wgmma_commit_group();
    #[link_name = "llvm.nvvm.wgmma.wait_group.sync.aligned"]
    fn wgmma_wait_group(n: i64);
    // PTX ISA 8.0, sm_90a, "setmaxnreg": the warpgroup's per-thread register budget; both forms
    // are `.sync.aligned` (the whole warpgroup executes it).
    #[link_name = "llvm.nvvm.setmaxnreg.inc.sync.aligned.u32"]
    fn setmaxnreg_inc(regs: i32);
    #[link_name = "llvm.nvvm.setmaxnreg.dec.sync.aligned.u32"]
    fn setmaxnreg_dec(regs: i32);
    // PTX ISA 6.0, "bar, barrier": `barrier.sync.aligned id, count`, a named barrier of `count`
    // threads (convergent to LLVM).
    #[link_name = "llvm.nvvm.barrier.cta.sync.aligned.count"]
    fn barrier_sync_count(id: u32, count: u32);
}

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    unsafe { core::arch::nvptx::trap() }
}

fn dynamic_smem() -> *mut u8 {
    #[repr(C, align(1024))]
    struct Align1024(u8);
    core::intrinsics::gpu::gpu_launch_sized_workgroup_mem::<Align1024>().cast()
}

fn shared_addr(p: *const u8) -> u32 {
    let generic = p as u64;
    let shared: u64;
    // SAFETY: converts a shared-memory generic address.
    unsafe {
        core::arch::asm!("cvta.to.shared.u64 {s}, {g};", s = out(reg64) shared, g = in(reg64) generic, options(pure, nomem, nostack));
    }
    shared as u32
}

/// A K-major shared-memory matrix descriptor with 128-byte swizzle: start >> 4 in bits 0-13,
/// leading offset 1 in bits 16-29, stride offset 1024 >> 4 in bits 32-45, swizzle mode 1 in
/// bits 62-63.
fn descriptor(smem: u32) -> u64 {
    u64::from((smem & 0x3_FFFF) >> 4) | (1 << 16) | ((1024u64 >> 4) << 32) | (1 << 62)
}

fn bf16_to_f32(x: u16) -> f32 {
    f32::from_bits(u32::from(x) << 16)
}

/// `lo` and `hi` rounded to the nearest bf16 (ties to even) and packed, `lo` in the low half:
/// one `cvt.rn.bf16x2.f32 d, hi, lo` (PTX ISA 7.0, sm_80, "cvt": the first source goes to the
/// upper half).
#[inline(always)]
fn bf16x2(lo: f32, hi: f32) -> u32 {
    let packed: u32;
    // SAFETY: a register-only conversion.
    unsafe {
        core::arch::asm!(
            "cvt.rn.bf16x2.f32 {d}, {hi}, {lo};",
            d = out(reg32) packed,
            hi = in(reg32) hi,
            lo = in(reg32) lo,
            options(pure, nomem, nostack, preserves_flags),
        );
    }
    packed
}

/// Tiles in bands of this many tile rows: consecutive CTAs of a persistent grid work on a band of A
/// rows against the same columns of B, which keeps both in L2.
const GROUP: u32 = 8;

/// Which work units a CTA computes, in order: a unit is one tile, or one split of the K range of
/// one tile. The first `full` tiles (in the grouped order) are whole units; each later tile is
/// `splits` units. Without split-K `full` is every tile; with it, either none (the tiles leave
/// SMs idle) or the whole waves, so that only the last, partial wave is split (its tiles would
/// otherwise leave most SMs idle for a whole tile's time).
#[derive(Clone, Copy)]
struct Schedule {
    tiles_m: u32,
    tiles_n: u32,
    /// Splits of each tile after the first `full` (1: no split-K).
    splits: u32,
    /// Tiles computed whole, before the split ones.
    full: u32,
    /// The CTA's first unit and the stride between its units (persistent: blockIdx.x, gridDim.x).
    first: u32,
    stride: u32,
}

impl Schedule {
    /// The schedule of `tiles_m x tiles_n` tiles in `splits` parts (clamped to `1..=k_blocks`, so
    /// that no split is empty) for a CTA (or pair) whose units are `first, first + stride, ...`:
    /// all tiles split when they are fewer than `stride`, otherwise all but the last, partial
    /// wave whole.
    fn new(
        tiles_m: u32,
        tiles_n: u32,
        splits: u32,
        k_blocks: u32,
        first: u32,
        stride: u32,
    ) -> Self {
        let splits = splits.clamp(1, k_blocks);
        let tiles = tiles_m * tiles_n;
        let full = if splits == 1 {
            tiles
        } else if tiles >= stride {
            tiles - tiles % stride
        } else {
            0
        };
        Self {
            tiles_m,
            tiles_n,
            splits,
            full,
            first,
            stride,
        }
    }

    fn tiles(self) -> u32 {
        self.tiles_m * self.tiles_n
    }

    fn total(self) -> u32 {
        self.full + (self.tiles() - self.full) * self.splits
    }

    /// Unit `u`: its tile's index (in the grouped order), its split, and how many splits the tile
    /// has. A split tile's units are consecutive, so they run side by side on neighbouring CTAs.
    fn unit(self, u: u32) -> (u32, u32, u32) {
        if u < self.full {
            (u, 0, 1)
        } else {
            let v = u - self.full;
            (self.full + v / self.splits, v % self.splits, self.splits)
        }
    }

    /// The k-blocks `first..end` of split `split` of `parts` of `k_blocks` (at least one each,
    /// since the kernels clamp `splits` to `k_blocks`).
    fn k_range(split: u32, parts: u32, k_blocks: u32) -> (u32, u32) {
        (split * k_blocks / parts, (split + 1) * k_blocks / parts)
    }

    /// The split-K workspace slot of split tile `tile` (at least `full`), CTA `rank` of a cluster
    /// of `cluster`: one slot per CTA tile of the split tiles.
    fn slot(self, tile: u32, cluster: u32, rank: u32) -> u32 {
        (tile - self.full) * cluster + rank
    }

    /// The (row, column) of tile `t` in the grouped order: bands of `GROUP` tile rows, each band
    /// walked column by column.
    fn tile(self, t: u32) -> (u32, u32) {
        let per_band = GROUP * self.tiles_n;
        let band = t / per_band;
        let first_m = band * GROUP;
        let rows = if self.tiles_m - first_m < GROUP {
            self.tiles_m - first_m
        } else {
            GROUP
        };
        let within = t % per_band;
        (first_m + within % rows, within / rows)
    }
}

/// How a kernel is built: the steps of the issue, so that each can be measured against the one
/// before in the same run.
#[derive(Clone, Copy)]
struct Config {
    /// CTAs per cluster: 1, or 2 (vertically adjacent tiles sharing B through TMA multicast).
    cluster: u32,
    /// One elected lane per consumer warp releases a stage (`false`: every consumer thread does,
    /// the first kernel's way).
    warp_arrivals: bool,
    /// `setmaxnreg` moves registers from the producer warpgroup to the consumers.
    setmaxnreg: bool,
    /// D leaves through shared memory and TMA tensor stores (when N is a multiple of 8, the
    /// tensor map's stride rule), which run on while the warpgroup starts its next tile.
    tma_store: bool,
    /// The persistent schedule splits K as the launch's `splits` says (`false`: it ignores it,
    /// and the split-K code is not compiled in).
    split_k: bool,
}

/// The kernel body over `schedule`: warpgroup 0's first lane produces, warpgroups 1 and 2
/// consume; the ring runs on across the CTA's tiles, so the producer loads the next tile while the
/// consumers write the last one out.
///
/// `C` is the empty barriers' arrival count, `config.arrivals()` (each entry passes it as that
/// constant expression); `S` the waits' scope.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn gemm<W: Width, const ST: usize, const C: u32, S: MbarScope>(
    config: Config,
    schedule: Schedule,
    maps: *const TensorMap,
    out: Out,
    m: u32,
    n: u32,
    k: u32,
) {
    let tid = core::arch::nvptx::_thread_idx_x() as u32;
    // A kernel the caller launches after this one as a programmatic dependent may be scheduled
    // as soon as SMs free up (it waits for this grid's completion itself).
    launch_dependents();
    let smem = dynamic_smem();
    let layout = Layout::of::<W, ST>();
    // The ring's barriers end before the split flag, the barriers' KiB's last word.
    const {
        let layout = Layout::of::<W, ST>();
        assert!(layout.ring_barriers_at() + Pipe::<ST, C, S>::SMEM_BYTES <= layout.split_flag_at());
    };
    // SAFETY: the ring's barriers follow the two warpgroups' epilogue-load barriers.
    let pipe = unsafe { Pipe::<ST, C, S>::new(smem.add(layout.ring_barriers_at()).cast()) };
    // SAFETY: one thread initialises, then the block (or cluster) barrier.
    if tid == 0 {
        unsafe {
            pipe.init();
            c_stages(smem, layout, 0).init();
            c_stages(smem, layout, 1).init();
        }
    }
    let paired = config.cluster == 2;
    // The CTA's rank in its pair (0 alone).
    let rank = if paired {
        gpu_pipeline::cluster_cta_rank()
    } else {
        0
    };
    if paired {
        // SAFETY: every thread of both CTAs arrives once, then waits: the peer's barriers are
        // initialised (`init` ends with `fence.mbarrier_init.release.cluster`) before any remote
        // arrival or multicast reaches them.
        unsafe {
            arch::barrier_cluster_arrive_release();
            arch::barrier_cluster_wait_acquire();
        }
    } else {
        core::arch::nvptx::_syncthreads();
    }
    let k_blocks = k.div_ceil(BK);
    let (first, stride, total) = (schedule.first, schedule.stride, schedule.total());
    // Rows of A per CTA; a pair's cluster tile is `config.cluster` CTA tiles high.
    let cluster_rows = BM * config.cluster;

    if tid < 128 {
        if config.setmaxnreg {
            // SAFETY: the whole producer warpgroup executes it, converged.
            unsafe { setmaxnreg_dec(PRODUCER_REGS as i32) };
        }
        if tid == 0 {
            let producer = pipe.into_producer();
            let (map_a, map_b) = (maps, unsafe { maps.add(1) });
            let mut u = first;
            while u < total {
                let (tile, split, parts) = schedule.unit(u);
                let (tm, tn) = schedule.tile(tile);
                let (m0, n0) = ((tm * cluster_rows + rank * BM) as i32, (tn * W::BN) as i32);
                let (kb0, kb1) = Schedule::k_range(split, parts, k_blocks);
                for kb in kb0..kb1 {
                    // Both CTAs of a pair receive the whole stage: their own A, their half of
                    // B and the peer's half.
                    producer.produce_tma(layout.stage_bytes(), |stage| {
                        let bar = stage.barrier();
                        let base =
                            unsafe { smem.add((stage.index() * layout.stage_bytes()) as usize) };
                        let kc = (kb * BK) as i32;
                        // SAFETY: the stage is free in this CTA, and in a pair in the peer too
                        // (its consumers arrive on this CTA's empty barrier as well); 1024-aligned
                        // boxes of the maps' sizes (B: half the tile's rows in a pair, all alone).
                        unsafe {
                            bar.tensor_load::<2>(base, map_a, [kc, m0]);
                            if paired {
                                let half = layout.b_bytes() / 2;
                                bar.tensor_load_multicast::<2>(
                                    base.add((A_BYTES + rank * half) as usize),
                                    map_b,
                                    [kc, n0 + (rank * W::BN / 2) as i32],
                                    0b11,
                                );
                            } else {
                                bar.tensor_load::<2>(base.add(A_BYTES as usize), map_b, [kc, n0]);
                            }
                        }
                    });
                }
                u += stride;
            }
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
                    )
                };
            }
        }
    } else {
        if config.setmaxnreg {
            // SAFETY: each consumer warpgroup executes it whole, converged.
            unsafe { setmaxnreg_inc(CONSUMER_REGS as i32) };
        }
        consume::<W, ST, C, S>(
            config,
            schedule,
            smem,
            pipe.into_consumer(),
            tid - 128,
            rank,
            out,
            m,
            n,
            k_blocks,
        );
    }
    if paired {
        // SAFETY: as above. No CTA of a pair exits while its peer may still arrive on its empty
        // barriers (the consumers' last remote releases precede this barrier).
        unsafe {
            arch::barrier_cluster_arrive_release();
            arch::barrier_cluster_wait_acquire();
        }
    }
}

/// The consumer warpgroups' part of [`gemm`]: thread `th` of 256.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn consume<W: Width, const ST: usize, const C: u32, S: MbarScope>(
    config: Config,
    schedule: Schedule,
    smem: *mut u8,
    consumer: ConsumerHalf<ST, NvidiaMbarBackend<1, C, S>>,
    th: u32,
    rank: u32,
    out: Out,
    m: u32,
    n: u32,
    k_blocks: u32,
) {
    // Warpgroup g in {0, 1} multiplies rows 64 g .. 64 g + 63 of each tile.
    let g = th / 128;
    let w = (th % 128) / 32;
    let l = th % 32;
    // The other CTA of a pair.
    let peer = rank ^ 1;
    let cluster_rows = BM * config.cluster;
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
    let layout = Layout::of::<W, ST>();
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
    // through box `i % 2`, across tiles: a [`Slim`] tile has one quarter).
    let mut staged_quarters = 0u32;
    let (first, stride, total) = (schedule.first, schedule.stride, schedule.total());
    let mut u = first;
    while u < total {
        let (tile, split, parts) = schedule.unit(u);
        let (tm, tn) = schedule.tile(tile);
        let (m0, n0) = (tm * cluster_rows + rank * BM, tn * W::BN);
        let (kb0, kb1) = Schedule::k_range(split, parts, k_blocks);
        let mut previous = consumer.acquire();
        issue(&mut acc, previous.index(), true);
        if let Some(empty) = pending.take() {
            // The last tile's last quarter of D left through a C stage; once its tensor store has
            // read it, C may come in again (while this tile's MMAs run).
            gpu_pipeline::bulk_wait_group_read::<0>();
            empty.arrive();
        }
        for _ in kb0 + 1..kb1 {
            let stage = consumer.acquire();
            issue(&mut acc, stage.index(), false);
            // The previous stage's MMAs are done once at most this stage's group is pending.
            unsafe { wgmma_wait_group(1) };
            release(previous);
            previous = stage;
        }
        unsafe { wgmma_wait_group(0) };
        release(previous);
        // Whether `acc` holds the whole tile: it does without split-K; with it, in the CTA that
        // finishes the tile's last split, once it has added up the splits' partials.
        let whole = parts == 1 || {
            let work = Workspace::of::<W>(out.work, schedule, config.cluster);
            let slot = schedule.slot(tile, config.cluster, rank);
            // SAFETY: every consumer thread calls them with the same unit; the workspace is the
            // entries' contract's; the flag word is the layout's.
            unsafe {
                work.write_partial::<W>(&acc, slot, (split, parts), th);
                last_split::<W>(
                    &mut acc,
                    work,
                    slot,
                    (split, parts),
                    th,
                    smem.add(layout.split_flag_at()).cast(),
                )
            }
        };
        if !whole {
            // Another CTA writes this tile's D.
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
            let (row0, col0) = (m0 + g * 64 + 16 * w + l / 4, n0 + 2 * (l % 4));
            epilogue::<W>(&acc, row0, col0, out, m, n);
        }
        u += stride;
    }
    if config.tma_store && th % 128 == 0 {
        // The last tensor stores have written D (and finished reading the staging buffer, which
        // must outlive them).
        gpu_pipeline::bulk_wait_group::<0>();
        if let Some(empty) = pending {
            // Every C stage taken is given back (nothing loads into it any more).
            empty.arrive();
        }
    }
}

/// Warpgroup `g`'s MMAs of one stage, committed as one group: its 64 rows of the stage's A box
/// times the stage's B box, 4 `wgmma.m64nNk16` k-steps (N: `W::BN`), into `acc` (overwritten by
/// the first step when `first`).
///
/// # Safety
///
/// The stage `index` of the ring at `smem` (laid out as `layout`) is full; all 128 threads of the
/// warpgroup call it converged.
#[inline(always)]
unsafe fn mma_stage<W: Width>(
    acc: &mut W::Acc,
    smem: *mut u8,
    layout: Layout,
    index: u32,
    g: u32,
    first: bool,
) {
    let base = shared_addr(unsafe { smem.add((index * layout.stage_bytes()) as usize) });
    let a = base + g * 64 * 128; // 64 rows of 128 bytes
    let b = base + A_BYTES;
    unsafe { wgmma_fence() };
    for ks in 0..4u32 {
        // SAFETY: by the contract.
        unsafe {
            W::mma(
                acc,
                descriptor(a + ks * 32),
                descriptor(b + ks * 32),
                !(first && ks == 0),
            )
        };
    }
    unsafe { wgmma_commit_group() };
}

/// The TMA-store epilogue of one consumer warpgroup: its 64 x `W::BN` block of D (rows `at.0..`,
/// columns `at.1..`) leaves a quarter (64 columns; a [`Narrow`] block has two, a [`Slim`] one) at
/// a time, each staged in one box of `staging` (the CTA's quarter `i` in box `i % 2`) in the
/// 128-byte-swizzled layout and stored by the warpgroup's
/// first thread with a tensor store, which it does not wait for: the next quarter is staged in
/// the other box meanwhile, and the next tile's main loop runs while the last ones drain.
///
/// Without C, the CTA's quarters alternate between the boxes across tiles too (`staged` counts
/// the quarters staged before this call: a [`Slim`] tile has only one), and before a box is
/// written again, that thread waits until the store issued from it two quarters before has read
/// it (`cp.async.bulk.wait_group.read 1`: all but the newest group). With C
/// (`c_stages` is `Some`: beta != 0), each quarter of C arrives in the box through `c_stages` (see
/// [`Epi`]), in the layout D leaves in, so each thread combines and overwrites the same four
/// bytes; the store thread gives a stage back once its store has read it: a quarter's stage
/// after the next quarter's store is issued, the last one through `pending`, which the caller
/// arrives on once the next tile's MMAs are under way.
///
/// Swizzle (PTX ISA, "Tensor Copy: Swizzling Modes", 128B): the 16-byte chunk `j` of row `r`
/// of a box sits at chunk `j ^ (r % 8)`. A warp's 4-byte access covers rows `r .. r + 8` (lanes
/// `l / 4`) and one chunk of each: 8 distinct chunks of a 128-byte row stride, so 32 distinct
/// banks, without conflicts.
///
/// # Safety
///
/// All 128 threads of warpgroup `g` call it converged; `staging` is the warpgroup's two boxes,
/// 1024-byte aligned, used by nothing else (and `c_stages`' two stages); `map_d` is D's tensor
/// map (bf16, 2D, box 64 x 64, 128-byte swizzle) in global memory; `pending` is `None`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn store_through_smem<'e, W: Width>(
    acc: &W::Acc,
    staging: *mut u8,
    map_d: *const TensorMap,
    g: u32,
    w: u32,
    l: u32,
    at: (u32, u32),
    out: Out,
    c_stages: Option<&'e Epi>,
    pending: &mut Option<MbarrierRef<'e, Cta>>,
    staged: &mut u32,
) {
    let (row0, col0) = at;
    let first_box = *staged;
    *staged += W::BN / 64;
    let leader = w == 0 && l == 0;
    // The stage of the quarter before, to give back once its store has read it.
    let mut previous: Option<MbarrierRef<'e, Cta>> = None;
    // Called four times over rather than looped: LLVM does not unroll a loop this long, and its
    // jump table over the quarters (`brx.idx`) is a branch the PTX check does not follow.
    let mut quarter_out = |quarter: u32| {
        // With C: this quarter of C has landed in its stage (so the box's earlier store has read
        // it). The store thread keeps the stage's empty barrier to arrive on later.
        let stage = c_stages.map(|c| {
            let stage = c.acquire_consumer();
            let view = (stage.index(), stage.barrier());
            stage.release_without_signal();
            view
        });
        let box_index = match stage {
            Some((index, _)) => index,
            None => {
                if leader {
                    // The store issued from this box two quarters ago has read it.
                    gpu_pipeline::bulk_wait_group_read::<1>();
                }
                unsafe { warpgroup_sync(g) };
                (first_box + quarter) % 2
            }
        };
        // SAFETY: one of the warpgroup's two boxes.
        let buffer = unsafe { staging.add((box_index * BOX_BYTES) as usize) };
        W::each_pair(acc, |i, v0, v1| {
            // Accumulator pair i holds columns 8 (i / 4) + 2 (l % 4) (+1): this quarter's are
            // i / 4 in 8 quarter .. 8 quarter + 8.
            if i / 32 != quarter {
                return;
            }
            let r = 16 * w + l / 4 + 8 * ((i / 2) % 2);
            let byte = (8 * (i / 4) + 2 * (l % 4) - 64 * quarter) * 2;
            let offset = r * 128 + (((byte / 16) ^ (r % 8)) * 16) + byte % 16;
            // SAFETY: inside the box.
            let pair = unsafe { buffer.add(offset as usize).cast::<u32>() };
            // C's pair at this place (zeros outside C, as TMA fills them; their D is clipped).
            let c_pair = if stage.is_some() {
                unsafe { pair.read() }
            } else {
                0
            };
            unsafe { pair.write(scaled(out, v0, v1, c_pair)) };
        });
        // The staged values are visible to the tensor copy (async proxy) once every thread has
        // fenced and met the others.
        gpu_pipeline::fence_proxy_async();
        unsafe { warpgroup_sync(g) };
        if leader {
            // SAFETY: the box is staged; TMA clips rows and columns outside D.
            unsafe {
                gpu_pipeline::tensor_store::<2>(
                    map_d,
                    [(col0 + 64 * quarter) as i32, row0 as i32],
                    buffer,
                )
            };
            gpu_pipeline::bulk_commit_group();
            if let Some((_, empty)) = stage {
                if let Some(before) = previous.replace(empty) {
                    // The quarter before's store has read its stage.
                    gpu_pipeline::bulk_wait_group_read::<1>();
                    before.arrive();
                }
            }
        }
    };
    quarter_out(0);
    if W::BN >= 128 {
        quarter_out(1);
    }
    if W::BN == 256 {
        quarter_out(2);
        quarter_out(3);
    }
    *pending = previous;
}

/// The epilogue-load thread of consumer warpgroup `g`: for each tile of the CTA's schedule (one
/// split each), the warpgroup's 64 x `W::BN` block of C (rows `cluster_rows * tm + rows..`), a
/// quarter (one 64 x 64 box) at a time, into the stages of `c_stages` (the boxes of `staging`).
///
/// # Safety
///
/// Called by one thread; `staging` is the warpgroup's two boxes, 1024-byte aligned; `map_c` is
/// C's tensor map (bf16, 2D, box 64 x 64, 128-byte swizzle) in global memory.
#[inline(always)]
unsafe fn load_c<W: Width>(
    c_stages: &Epi,
    schedule: Schedule,
    staging: *mut u8,
    map_c: *const TensorMap,
    cluster_rows: u32,
    rows: u32,
) {
    let mut u = schedule.first;
    while u < schedule.total() {
        let (tile, _, parts) = schedule.unit(u);
        u += schedule.stride;
        if parts > 1 {
            // A split tile's D comes from the CTA that finishes it, which reads C from global
            // memory (`finish_split`, then `epilogue`).
            continue;
        }
        let (tm, tn) = schedule.tile(tile);
        let (row0, col0) = (tm * cluster_rows + rows, tn * W::BN);
        for quarter in 0..W::BN / 64 {
            c_stages.produce_tma(BOX_BYTES, |stage| {
                // SAFETY: the stage (its box) is free; 1024-aligned, the map's box size; TMA
                // fills what lies outside C with zeros.
                unsafe {
                    stage.barrier().tensor_load::<2>(
                        staging.add((stage.index() * BOX_BYTES) as usize),
                        map_c,
                        [(col0 + 64 * quarter) as i32, row0 as i32],
                    )
                };
            });
        }
    }
}

/// The 128 threads of consumer warpgroup `g` meet at named barrier `1 + g` (`barrier.sync.aligned
/// id, 128`; PTX ISA, "Parallel Synchronization and Communication Instructions: bar, barrier").
///
/// # Safety
///
/// Called by all 128 threads of the warpgroup, each warp converged.
#[inline(always)]
unsafe fn warpgroup_sync(g: u32) {
    unsafe { barrier_sync_count(1 + g, 128) };
}

/// The split-K workspace of a launch: first the partials, a block of 128 x `W::BN` f32 per slot
/// (a CTA tile of the split tiles: [`Schedule::slot`]) and split; then a counter per slot, of
/// the splits of its tile that have finished (zero before the launch, and zero again after it).
#[derive(Clone, Copy)]
struct Workspace {
    partials: *mut Quad,
    counters: *mut u32,
    /// Quads (four accumulators) of a consumer thread: `W::BN / 8`.
    quads: u32,
}

impl Workspace {
    /// The workspace at `work` of the schedule's split tiles, `cluster` CTAs per cluster.
    fn of<W: Width>(work: *mut u32, schedule: Schedule, cluster: u32) -> Self {
        let quads = W::BN / 8;
        let slots = (schedule.tiles() - schedule.full) * cluster;
        let partials = work.cast::<Quad>();
        // SAFETY (of the pointer arithmetic): the counters follow the partials inside the
        // workspace, by the entries' contract.
        let counters = unsafe {
            partials
                .add(slots as usize * schedule.splits as usize * quads as usize * 256)
                .cast::<u32>()
        };
        Self {
            partials,
            counters,
            quads,
        }
    }

    /// Where quad `q` (accumulators `4 q .. 4 q + 4`) of consumer thread `th` of split `split`
    /// (of `splits`) of slot `slot` lies: the slot's splits one after another, each `quads` x
    /// 256 quads, thread-fastest (a warp's store or load is 512 contiguous bytes).
    fn quad(self, slot: u32, (split, splits): (u32, u32), q: u32, th: u32) -> *mut Quad {
        let index = ((slot as usize * splits as usize + split as usize) * self.quads as usize
            + q as usize)
            * 256
            + th as usize;
        // SAFETY (of the pointer arithmetic): inside the partials, by the entries' contract.
        unsafe { self.partials.add(index) }
    }

    /// Consumer thread `th` writes its accumulators as split `split` (of `splits`) of slot
    /// `slot`.
    ///
    /// # Safety
    ///
    /// The workspace is the launch's; `slot` one of its slots, `split` below `splits`, the
    /// launch's splits.
    #[inline(always)]
    unsafe fn write_partial<W: Width>(self, acc: &W::Acc, slot: u32, split: (u32, u32), th: u32) {
        // SAFETY: by the contract.
        W::each_quad(acc, |q, v| unsafe {
            self.quad(slot, split, q, th).write(Quad(v))
        });
    }
}

/// Split-K's end of a split (of `parts`) of a tile in the CTA, once its consumer threads (`th`
/// of 256) have written their partials to slot `slot` of the workspace: the first thread counts
/// the split on the slot's counter. Returns whether this CTA finished the tile's last split. That
/// CTA has then added the splits' partials up into `acc`, in split order (so the sum is the same
/// whichever CTA finishes last), and reset the counter to zero for the next launch. Of two splits
/// of a tile up to 128 wide it reads only the other's partial (`a + b` is `b + a`, bit for bit);
/// otherwise every split's, its own too. No CTA waits for another: the last to arrive does the
/// work.
///
/// # Memory ordering
///
/// A split's partial is written by 256 threads, which then meet at a named barrier; only then
/// does the first of them add to the counter, with release semantics at GPU scope (cumulative:
/// the barrier put the others' writes before it). The CTA whose add sees `parts - 1` acquired
/// all of the earlier adds; its first thread tells the others through shared memory, after a
/// second barrier, so their reads of the partials come after the acquire.
///
/// # Safety
///
/// Every consumer thread of the CTA calls it, with the same arguments but `th` and `acc`, each
/// warp converged, after [`Workspace::write_partial`]; `work` is the launch's workspace, `slot`
/// one of its slots, computed in `parts` splits (one unit each) by this launch; `flag` is the
/// layout's [`Layout::split_flag_at`] word.
#[inline(always)]
unsafe fn last_split<W: Width>(
    acc: &mut W::Acc,
    work: Workspace,
    slot: u32,
    (split, parts): (u32, u32),
    th: u32,
    flag: *mut u32,
) -> bool {
    // Every consumer thread's partial is written before the first counts the split.
    // SAFETY (all accesses below): inside the workspace and the layout, by the contract.
    unsafe { consumers_sync() };
    if th == 0 {
        let counter = unsafe { work.counters.add(slot as usize) };
        let last = unsafe { count_acq_rel_gpu(counter) } + 1 == parts;
        if last {
            // Every split of this tile has counted: nothing else uses the counter in this launch.
            unsafe { counter.write(0) };
        }
        unsafe { flag.write(u32::from(last)) };
    }
    unsafe { consumers_sync() };
    let last = unsafe { flag.read() } != 0;
    // Of two splits, the own partial and the other's loads in flight take a [`Wide`] thread's
    // 128 accumulators twice over, more than its 232 registers (ptxas spilled): there the own
    // partial is read back too.
    if last && parts == 2 && W::BN <= 128 {
        W::map_quads(acc, |q, own| {
            let v = unsafe { work.quad(slot, (1 - split, 2), q, th).read().0 };
            [own[0] + v[0], own[1] + v[1], own[2] + v[2], own[3] + v[3]]
        });
    } else if last {
        W::map_quads(acc, |q, _| unsafe {
            work.quad(slot, (0, parts), q, th).read().0
        });
        for s in 1..parts {
            W::map_quads(acc, |q, sum| {
                let v = unsafe { work.quad(slot, (s, parts), q, th).read().0 };
                [sum[0] + v[0], sum[1] + v[1], sum[2] + v[2], sum[3] + v[3]]
            });
        }
    }
    last
}

/// The 256 consumer threads meet at named barrier 3 (`barrier.sync.aligned 3, 256`; PTX ISA,
/// "Parallel Synchronization and Communication Instructions: bar, barrier"), which orders their
/// memory accesses before it against each other's after it.
///
/// # Safety
///
/// Called by all 256 consumer threads, each warp converged.
#[inline(always)]
unsafe fn consumers_sync() {
    unsafe { barrier_sync_count(3, 2 * 128) };
}

/// Four accumulators, 16-byte aligned: one 128-bit store or load of the workspace.
#[derive(Clone, Copy)]
#[repr(C, align(16))]
struct Quad([f32; 4]);

/// Where a kernel writes: D, C (read when `beta != 0`), alpha and beta, and the split-K
/// workspace.
#[derive(Clone, Copy)]
struct Out {
    /// The tensor maps (A, B, and D for the TMA-store epilogue).
    maps: *const TensorMap,
    c: *const u16,
    d: *mut u16,
    alpha: f32,
    beta: f32,
    work: *mut u32,
}

/// Writes a thread's accumulators: thread (warp w, lane l) of a warpgroup holds rows
/// `16 w + l / 4` (+ 8) and columns `8 j + 2 (l % 4)` (+ 1) of its 64 x `W::BN` block, so `row0`
/// and `col0` are its first row and column in D.
///
/// A quarter of the block (64 columns, 16 pairs of a thread) at a time: first every pair of C the
/// quarter needs (when `beta != 0`), then the quarter's pairs of D. C may be D, so the compiler
/// keeps each load of C after every store of D before it; loaded a quarter ahead, the loads are
/// in flight together rather than one round trip per pair.
#[inline(always)]
fn epilogue<W: Width>(acc: &W::Acc, row0: u32, col0: u32, out: Out, m: u32, n: u32) {
    // Called once per quarter rather than looped, as in `store_through_smem`: the pairs' indices
    // into the quarter's C are then constants, and it stays in registers.
    epilogue_quarter::<W>(acc, 0, (row0, col0), out, m, n);
    if W::BN >= 128 {
        epilogue_quarter::<W>(acc, 1, (row0, col0), out, m, n);
    }
    if W::BN == 256 {
        epilogue_quarter::<W>(acc, 2, (row0, col0), out, m, n);
        epilogue_quarter::<W>(acc, 3, (row0, col0), out, m, n);
    }
}

/// Quarter `quarter` of [`epilogue`]: accumulator pair `i` of a thread is row
/// `row0 + 8 ((i / 2) % 2)`, columns `col0 + 8 (i / 4)` (+ 1); pairs `32 q .. 32 q + 32` are
/// quarter q's.
#[inline(always)]
fn epilogue_quarter<W: Width>(
    acc: &W::Acc,
    quarter: u32,
    (row0, col0): (u32, u32),
    out: Out,
    m: u32,
    n: u32,
) {
    let at = |i: u32| (row0 + 8 * ((i / 2) % 2), col0 + 8 * (i / 4));
    let mut c = [0u32; 16];
    if out.beta != 0.0 {
        W::each_pair(acc, |i, _, _| {
            if i / 32 == quarter {
                let (row, col) = at(i);
                c[((i / 2) % 16) as usize] = c_pair(out, row, col, m, n);
            }
        });
    }
    W::each_pair(acc, |i, v0, v1| {
        if i / 32 == quarter {
            let (row, col) = at(i);
            let packed = scaled(out, v0, v1, c[((i / 2) % 16) as usize]);
            d_pair(out, row, col, packed, m, n);
        }
    });
}

/// `alpha * (v0, v1) + beta * (c0, c1)` rounded to bf16 and packed, first element low, where
/// `c_pair` holds bf16 `c0` (low) and `c1` (high); C is not looked at when `beta == 0` (it may
/// hold anything, NaN included).
#[inline(always)]
fn scaled(out: Out, v0: f32, v1: f32, c_pair: u32) -> u32 {
    let (mut x0, mut x1) = (out.alpha * v0, out.alpha * v1);
    if out.beta != 0.0 {
        x0 += out.beta * bf16_to_f32(c_pair as u16);
        x1 += out.beta * bf16_to_f32((c_pair >> 16) as u16);
    }
    bf16x2(x0, x1)
}

/// C's elements at (`row`, `col`) and (`row`, `col + 1`), packed (the first low), those inside
/// M x N (0 outside). One 4-byte load when every row starts 4-byte aligned (N even; `col` is
/// always even), otherwise two 2-byte loads.
#[inline(always)]
fn c_pair(out: Out, row: u32, col: u32, m: u32, n: u32) -> u32 {
    if row >= m || col >= n {
        return 0;
    }
    let at = row as usize * n as usize + col as usize;
    // SAFETY (all loads): (row, col) and, when `col + 1 < n`, (row, col + 1) lie inside the
    // M x N matrix C, by the check above and the kernels' contract.
    if n % 2 == 0 {
        // `col` is even and `col + 1 < n`: the pair is whole and 4-byte aligned.
        unsafe { out.c.add(at).cast::<u32>().read() }
    } else {
        let c0 = u32::from(unsafe { out.c.add(at).read() });
        let c1 = if col + 1 < n {
            u32::from(unsafe { out.c.add(at + 1).read() })
        } else {
            0
        };
        c0 | (c1 << 16)
    }
}

/// Writes the packed pair of bf16 to D at (`row`, `col`) and (`row`, `col + 1`), the parts inside
/// M x N: one 4-byte store when N is even, otherwise two 2-byte stores.
#[inline(always)]
fn d_pair(out: Out, row: u32, col: u32, packed: u32, m: u32, n: u32) {
    if row >= m || col >= n {
        return;
    }
    let at = row as usize * n as usize + col as usize;
    // SAFETY (all stores): inside the M x N matrix D, as in `c_pair`.
    if n % 2 == 0 {
        unsafe { out.d.add(at).cast::<u32>().write(packed) };
    } else {
        unsafe { out.d.add(at).write(packed as u16) };
        if col + 1 < n {
            unsafe { out.d.add(at + 1).write((packed >> 16) as u16) };
        }
    }
}

impl Config {
    /// Whether D of a whole tile leaves through the staging buffers and tensor stores (and C,
    /// when read, comes in through them): with this configuration's TMA-store epilogue when
    /// N % 8 == 0 (the tensor maps' 16-byte row stride).
    const fn staged(self, n: u32) -> bool {
        self.tma_store && n % 8 == 0
    }

    /// The empty barriers' arrival count of this configuration.
    const fn arrivals(self) -> u32 {
        if self.warp_arrivals {
            CONSUMER_WARPS * self.cluster
        } else {
            2 * 128
        }
    }
}

/// The first kernel's configuration: every consumer thread releases, no `setmaxnreg`, no cluster.
/// It has no split-K either: without `setmaxnreg` a consumer thread has 168 registers, which its
/// 128 accumulators and the split-K code do not fit (ptxas spilled 40 bytes, run 41).
const FIRST: Config = Config {
    cluster: 1,
    warp_arrivals: false,
    setmaxnreg: false,
    tma_store: false,
    split_k: false,
};
/// One CTA, elected warp arrivals and `setmaxnreg`.
const SINGLE: Config = Config {
    cluster: 1,
    warp_arrivals: true,
    setmaxnreg: true,
    tma_store: true,
    split_k: true,
};
/// [`SINGLE`] without `setmaxnreg`, for the [`Slim`] kernel: its 32 accumulators fit the 168
/// registers a thread has at launch (ptxas gives it fewer, and ignored its `setmaxnreg` with
/// C7508, run 41).
const SLIM_CONFIG: Config = Config {
    setmaxnreg: false,
    ..SINGLE
};
/// [`SINGLE`] in CTA pairs with multicast B.
const PAIR: Config = Config {
    cluster: 2,
    ..SINGLE
};

/// The persistent schedule: CTA `b` (or CTA pair `b`) computes units `b, b + grid, ...` of
/// `splits` per cluster tile (clamped to 1..=k-blocks, so that no split is empty; 1 where the
/// configuration has no split-K).
#[inline(always)]
fn persistent<W: Width>(config: Config, m: u32, n: u32, k: u32, splits: u32) -> Schedule {
    // SAFETY: special-register reads.
    let (grid, block) = unsafe {
        (
            core::arch::nvptx::_grid_dim_x() as u32,
            core::arch::nvptx::_block_idx_x() as u32,
        )
    };
    Schedule::new(
        m.div_ceil(BM * config.cluster),
        n.div_ceil(W::BN),
        if config.split_k { splits } else { 1 },
        k.div_ceil(BK),
        block / config.cluster,
        grid / config.cluster,
    )
}

/// The parameters of every entry; the contract of each is the same:
///
/// # Safety
///
/// Launched with 384 threads (a 1D grid; the per-tile kernel: `(ceil(N/256), ceil(M/128))`;
/// the cluster kernel: clusters of (2, 1, 1) and an even grid) and the dynamic shared memory of
/// its [`Layout`] plus the barriers' KiB: `stages * (16 KiB + BN * 128) + 32 KiB + 1 KiB`
/// (BN 256 and 4 stages, 225 KiB; the [`Narrow`] kernel: BN 128 and 6 stages, and the [`Slim`]
/// kernel: BN 64 and 8 stages, also 225 KiB).
/// `maps[0]` is A (box 64 x 128), `maps[1]` B (box 64 x BN; the cluster kernel: 64 x 128), and,
/// when N % 8 == 0, `maps[2]` D and (when `beta != 0`) `maps[3]` C (boxes 64 x 64), all bf16
/// with 128-byte swizzle, in global memory; D and (when `beta != 0`) C hold M x N bf16 (C may
/// be D: each element of C is read before its element of D is written). With `splits > 1`
/// (persistent kernels only; the per-tile kernel and the first persistent kernel ignore it) the
/// split tiles (see [`Schedule::new`]: every tile, or those of the last, partial wave) go
/// through `work`, a
/// 16-byte aligned [`Workspace`] used by no other launch running at the same time: one slot per
/// CTA tile of the split tiles (`(tiles - full) * c`, c: CTAs per cluster) of
/// `min(splits, ceil(K / 64))` blocks of 128 x BN f32 each, then one u32 counter per slot, all
/// counters zero at the launch (each launch leaves them zero); with `splits <= 1` it is not
/// touched. The launch writes all of D either way ([`last_split`]).
macro_rules! entry {
    ($(#[$doc:meta])* $name:ident, $config:expr, $width:ty, $stages:literal, |$m:ident, $n:ident, $k:ident, $splits:ident| $schedule:expr) => {
        $(#[$doc])*
        ///
        /// # Safety
        ///
        /// See [`entry!`]: the launch, the tensor maps, the matrices and the workspace.
        #[unsafe(no_mangle)]
        #[allow(clippy::too_many_arguments)]
        pub unsafe extern "gpu-kernel" fn $name(
            maps: *const TensorMap,
            c: *const u16,
            d: *mut u16,
            $m: u32,
            $n: u32,
            $k: u32,
            alpha: f32,
            beta: f32,
            $splits: u32,
            work: *mut u32,
        ) {
            let out = Out {
                maps,
                c,
                d,
                alpha,
                beta,
                work,
            };
            let schedule = $schedule;
            unsafe {
                gemm::<$width, $stages, { $config.arrivals() }, Cta>(
                    $config, schedule, maps, out, $m, $n, $k,
                )
            }
        }
    };
}

entry!(
    /// One CTA per 128 x 256 tile of D (grid `(ceil(N/256), ceil(M/128))`), no split-K.
    gemm_bf16_ws,
    SINGLE,
    Wide,
    4,
    |m, n, k, splits| {
        let _ = splits;
        let (tiles_m, tiles_n) = (m.div_ceil(BM), n.div_ceil(Wide::BN));
        // SAFETY: special-register reads.
        let (x, y) = unsafe {
            (
                core::arch::nvptx::_block_idx_x() as u32,
                core::arch::nvptx::_block_idx_y() as u32,
            )
        };
        // One tile per CTA: its index in the grouped order, and a stride that ends the loop.
        Schedule::new(tiles_m, tiles_n, 1, 1, y * tiles_n + x, tiles_m * tiles_n)
    }
);

entry!(
    /// A persistent grid (one CTA per SM): CTA `b` computes units `b, b + grid, ...` in the
    /// grouped order of [`Schedule::tile`], with split-K when `splits > 1`.
    gemm_bf16_persistent,
    SINGLE,
    Wide,
    4,
    |m, n, k, splits| persistent::<Wide>(SINGLE, m, n, k, splits)
);

entry!(
    /// [`gemm_bf16_persistent`] on 128 x 128 tiles ([`Narrow`]: `wgmma.m64n128k16`, a ring of 6
    /// stages): twice the tiles, for shapes whose 128 x 256 tiles leave SMs idle.
    gemm_bf16_persistent_n128,
    SINGLE,
    Narrow,
    6,
    |m, n, k, splits| persistent::<Narrow>(SINGLE, m, n, k, splits)
);

entry!(
    /// [`gemm_bf16_persistent`] on 128 x 64 tiles ([`Slim`]: `wgmma.m64n64k16`, a ring of 8
    /// stages): four times the tiles, for the smallest problems.
    gemm_bf16_persistent_n64,
    SLIM_CONFIG,
    Slim,
    8,
    |m, n, k, splits| persistent::<Slim>(SLIM_CONFIG, m, n, k, splits)
);

entry!(
    /// The persistent kernel in CTA pairs (clusters of 2 along x): the pair computes 256 x 256
    /// cluster tiles, each CTA 128 rows; each CTA loads its A box and half of the B box,
    /// multicast to both, so B crosses L2 once per pair.
    gemm_bf16_cluster,
    PAIR,
    Wide,
    4,
    |m, n, k, splits| persistent::<Wide>(PAIR, m, n, k, splits)
);

entry!(
    /// The persistent kernel as first built (every consumer thread releases, no `setmaxnreg`, no
    /// split-K: `splits` is ignored): kept as the step before, measured against
    /// [`gemm_bf16_persistent`] in the same run.
    gemm_bf16_persistent_first,
    FIRST,
    Wide,
    4,
    |m, n, k, splits| persistent::<Wide>(FIRST, m, n, k, splits)
);

/// The first step, before warp specialization: one warpgroup (128 threads) per 64 x 256 tile of
/// D (grid `(ceil(N/256), ceil(M/64))`), with the same 4-stage ring, `wgmma` and register
/// epilogue as the others, but no producer warp: its thread 0 also issues the tensor loads, three
/// k-blocks ahead, between its MMAs; every thread releases each stage. `maps[0]` is A with a box
/// of 64 x 64; otherwise as [`entry!`] (`splits` and `work` are ignored; 128 threads).
///
/// # Safety
///
/// See [`entry!`]: the tensor maps, the matrices, and the launch (128 threads, the grid above).
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "gpu-kernel" fn gemm_bf16_single(
    maps: *const TensorMap,
    c: *const u16,
    d: *mut u16,
    m: u32,
    n: u32,
    k: u32,
    alpha: f32,
    beta: f32,
    splits: u32,
    work: *mut u32,
) {
    let _ = (splits, work);
    let out = Out {
        maps,
        c,
        d,
        alpha,
        beta,
        work: core::ptr::null_mut(),
    };
    // SAFETY: special-register reads.
    let (tid, x, y) = unsafe {
        (
            core::arch::nvptx::_thread_idx_x() as u32,
            core::arch::nvptx::_block_idx_x() as u32,
            core::arch::nvptx::_block_idx_y() as u32,
        )
    };
    let smem = dynamic_smem();
    // SAFETY: one thread initialises, then the block barrier.
    let pipe = unsafe {
        ProducerConsumerPipeline::<{ WIDE.stages as usize }, NvidiaMbarBackend<1, 128>>::new(
            smem.add(WIDE.ring_barriers_at()).cast(),
        )
    };
    if tid == 0 {
        unsafe { pipe.init() };
    }
    core::arch::nvptx::_syncthreads();
    let (producer, consumer) = pipe.split();
    let (m0, n0) = (y * 64, x * Wide::BN);
    let k_blocks = k.div_ceil(BK);
    // Thread 0 loads k-block `kb` into the next free stage.
    let load = |kb: u32| {
        producer.produce_tma(A_BYTES / 2 + WIDE.b_bytes(), |stage| {
            let bar = stage.barrier();
            let base = unsafe { smem.add((stage.index() * WIDE.stage_bytes()) as usize) };
            let kc = (kb * BK) as i32;
            // SAFETY: the stage is free; 1024-aligned boxes of the maps' sizes (A: 64 rows).
            unsafe {
                bar.tensor_load::<2>(base, maps, [kc, m0 as i32]);
                bar.tensor_load::<2>(base.add(A_BYTES as usize), maps.add(1), [kc, n0 as i32]);
            }
        })
    };
    let mut next = 0;
    if tid == 0 {
        while next < k_blocks.min(WIDE.stages - 1) {
            load(next);
            next += 1;
        }
    }
    let mut acc = Wide::ZERO;
    let mut previous = consumer.acquire();
    // SAFETY (each MMA): the stage is full; the whole warpgroup is here.
    unsafe { mma_stage::<Wide>(&mut acc, smem, WIDE, previous.index(), 0, true) };
    if tid == 0 && next < k_blocks {
        load(next);
        next += 1;
    }
    for _ in 1..k_blocks {
        let stage = consumer.acquire();
        unsafe { mma_stage::<Wide>(&mut acc, smem, WIDE, stage.index(), 0, false) };
        unsafe { wgmma_wait_group(1) };
        previous.release();
        previous = stage;
        if tid == 0 && next < k_blocks {
            load(next);
            next += 1;
        }
    }
    unsafe { wgmma_wait_group(0) };
    previous.release();
    let (w, l) = (tid / 32, tid % 32);
    epilogue::<Wide>(&acc, m0 + 16 * w + l / 4, n0 + 2 * (l % 4), out, m, n);
}
