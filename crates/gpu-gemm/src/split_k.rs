//! Split-K's end of a split: partials to the workspace, and the in-kernel reduction by the CTA
//! that finishes a tile's last split.

use gpu_gemm_plan::Schedule;

use crate::tile::Width;
use gpu_hopper::arch::nvptx::atom_add_acq_rel_gpu_global_u32 as count_acq_rel_gpu;
use gpu_hopper::barrier::{Barriers, NamedBarrier};

/// The split-K workspace of a launch: first the partials, a block of 128 x `W::BN` f32 per slot
/// (a CTA tile of the split tiles: [`Schedule::slot`]) and split; then a counter per slot, of
/// the splits of its tile that have finished (zero before the launch, and zero again after it).
#[derive(Clone, Copy)]
pub(crate) struct Workspace {
    partials: *mut Quad,
    counters: *mut u32,
    /// Quads (four accumulators) of a consumer thread: `W::BN / 8`.
    quads: u32,
    /// Partial blocks per slot of a stream-K schedule: its `splits`, the most parts of a tile
    /// (0 for split-K's, whose split tiles all have `splits` parts: a tile's own count is used).
    per_slot: u32,
}

impl Workspace {
    /// The workspace at `work` of the schedule's split tiles, `cluster` CTAs per cluster.
    pub(crate) fn of<W: Width>(work: *mut u32, schedule: Schedule, cluster: u32) -> Self {
        let quads = W::BN / 8;
        let slots = (schedule.tiles() - schedule.full) * cluster;
        let partials = work.cast::<Quad>();
        // SAFETY: pointer arithmetic only: the counters follow the partials inside the
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
            per_slot: if schedule.workers != 0 {
                schedule.splits
            } else {
                0
            },
        }
    }

    /// Where quad `q` (accumulators `4 q .. 4 q + 4`) of consumer thread `th` of split `split`
    /// (of the tile's `splits`; stream-K: of at most `per_slot`) of slot `slot` lies: the slot's
    /// splits one after another, each `quads` x 256 quads, thread-fastest (a warp's store or load
    /// is 512 contiguous bytes).
    fn quad(self, slot: u32, (split, splits): (u32, u32), q: u32, th: u32) -> *mut Quad {
        let per_slot = if self.per_slot != 0 {
            self.per_slot
        } else {
            splits
        };
        let index = ((slot as usize * per_slot as usize + split as usize) * self.quads as usize
            + q as usize)
            * 256
            + th as usize;
        // SAFETY: pointer arithmetic only, inside the partials, by the entries' contract.
        unsafe { self.partials.add(index) }
    }

    /// Consumer thread `th` writes its accumulators as split `split` (of `splits`) of slot
    /// `slot`, if `live`: its rows are inside D (a thread's accumulators are two rows of the tile,
    /// the first of them below M). Rows past M are never stored, so their partials are neither
    /// written nor read: of a decode shape's tile (M = 1 in 128 rows) 4 threads of 256 move
    /// partials.
    ///
    /// # Safety
    ///
    /// The workspace is the launch's; `slot` one of its slots, `split` below `splits`, the
    /// launch's splits.
    #[inline(always)]
    pub(crate) unsafe fn write_partial<W: Width>(
        self,
        acc: &W::Acc,
        slot: u32,
        split: (u32, u32),
        th: u32,
        live: bool,
    ) {
        if !live {
            return;
        }
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
/// otherwise every split's, its own too. Threads whose rows are past M (not `live`) read
/// nothing: their accumulators are never stored. No CTA waits for another: the last to arrive
/// does the work.
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
// Eight arguments: the unit (slot, split and parts), the thread (index and whether its rows
// are inside D), the flag word and the barriers. Folding two into a tuple changes the kernels'
// PTX (LLVM schedules it differently), which the H200 runs of 38f5c7b verified as it is.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(crate) unsafe fn last_split<W: Width>(
    acc: &mut W::Acc,
    work: Workspace,
    slot: u32,
    (split, parts): (u32, u32),
    th: u32,
    live: bool,
    flag: *mut u32,
    barriers: Barriers<'_>,
) -> bool {
    // Every consumer thread's partial is written before the first counts the split.
    // SAFETY: every consumer thread calls it, by the contract.
    unsafe { consumers_sync(barriers) };
    if th == 0 {
        // SAFETY: the slot's counter, inside the workspace (the contract).
        let counter = unsafe { work.counters.add(slot as usize) };
        // SAFETY: a 4-byte aligned word of global memory.
        let last = unsafe { count_acq_rel_gpu(counter) } + 1 == parts;
        if last {
            // Every split of this tile has counted: nothing else uses the counter in this launch.
            // SAFETY: as above.
            unsafe { counter.write(0) };
        }
        // SAFETY: the layout's flag word, read by the others after the barrier below.
        unsafe { flag.write(u32::from(last)) };
    }
    // SAFETY: as the first barrier.
    unsafe { consumers_sync(barriers) };
    // SAFETY: written by the first thread before the barrier.
    let last = unsafe { flag.read() } != 0;
    // Of two splits, the own partial and the other's loads in flight take a 256-wide tile's
    // thread's 128 accumulators twice over, more than its 232 registers (ptxas spills): there
    // the own partial is read back too.
    if !live {
        // Rows past M: nothing to add up.
    } else if last && parts == 2 && W::BN <= 128 {
        W::map_quads(acc, |q, own| {
            // SAFETY: the other split's partial, written before its CTA counted (acquired above).
            let v = unsafe { work.quad(slot, (1 - split, 2), q, th).read().0 };
            [own[0] + v[0], own[1] + v[1], own[2] + v[2], own[3] + v[3]]
        });
    } else if last {
        // SAFETY: the first split's partial, written before its CTA counted (acquired above).
        W::map_quads(acc, |q, _| unsafe {
            work.quad(slot, (0, parts), q, th).read().0
        });
        let mut first = 1;
        // Tiles up to 64 wide (the decode kernels' and the 128 x 64 kernel's; 32 accumulators a
        // thread at most): four splits' loads at once, added in split order, so that a tile of
        // many splits waits for a quarter of the round trips to L2. Wider tiles have no
        // registers for them.
        if W::BN <= 64 {
            while first + 4 <= parts {
                W::map_quads(acc, |q, sum| {
                    // SAFETY: splits `first` to `first + 3`'s partials, as above.
                    let v = unsafe {
                        [0, 1, 2, 3].map(|i| work.quad(slot, (first + i, parts), q, th).read().0)
                    };
                    let mut sum = sum;
                    for v in v {
                        sum = [sum[0] + v[0], sum[1] + v[1], sum[2] + v[2], sum[3] + v[3]];
                    }
                    sum
                });
                first += 4;
            }
        }
        for s in first..parts {
            W::map_quads(acc, |q, sum| {
                // SAFETY: split `s`'s partial, as above.
                let v = unsafe { work.quad(slot, (s, parts), q, th).read().0 };
                [sum[0] + v[0], sum[1] + v[1], sum[2] + v[2], sum[3] + v[3]]
            });
        }
    }
    last
}

/// Split-K's named barrier: the two consumer warpgroups, registered with the kernel's others in
/// `kernel::BARRIERS` (the cluster-K kernels wider than 64 meet on it too, before their partial
/// tile overwrites the ring: `kernel::consume_part`).
pub(crate) const SPLIT_K_BARRIERS: &[NamedBarrier] = &[NamedBarrier::new(
    "split-K: the 256 consumer threads",
    3,
    2 * 128,
)];

/// The 256 consumer threads meet at named barrier 3 (`barrier.sync.aligned 3, 256`; PTX ISA,
/// "Parallel Synchronization and Communication Instructions: bar, barrier"), which orders their
/// memory accesses before it against each other's after it.
///
/// # Safety
///
/// Called by all 256 consumer threads, each warp converged.
#[inline(always)]
unsafe fn consumers_sync(barriers: Barriers<'_>) {
    // SAFETY: by the contract; the registered barrier of the 256 consumer threads.
    unsafe { barriers.sync(SPLIT_K_BARRIERS[0]) };
}

/// Four accumulators, 16-byte aligned: one 128-bit store or load of the workspace.
#[derive(Clone, Copy)]
#[repr(C, align(16))]
struct Quad([f32; 4]);
