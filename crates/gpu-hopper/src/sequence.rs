//! The ordered-sequence barrier: `GROUPS` groups of threads (warpgroups) take turns, in order,
//! on `DEPTH` independent rings of mbarriers (CUTLASS's `OrderedSequenceBarrier`). FA3's
//! ping-pong of two consumer warpgroups (one's softmax overlaps the other's GEMMs) and the
//! ping-pong GEMM (one warpgroup's epilogue overlaps the other's mainloop) are it with
//! `GROUPS = 2`, `DEPTH = 2`: ring 0 orders the mainloops, ring 1 the epilogues.
//!
//! ```text
//! barrier[s][g]: an mbarrier per ring s and group g, counting the arrivals of group g - 1
//!
//! group g, turn k (k = 0, 1, ...), ring s = k % DEPTH, lap = k / DEPTH:
//!   (1) wait     barrier[s][g] has completed lap + (g > 0) phases     -> `wait`
//!                (group 0's first lap passes at once: it goes first)
//!       ... the group's ordered work ...
//!   (2) arrive   on barrier[s][(g + 1) % GROUPS]; next turn            -> `Turn::arrive`
//! ```
//!
//! On ring `s` the turns `k ≡ s (mod DEPTH)` of all groups therefore run in the order
//! group 0, 1, .., GROUPS - 1, 0, 1, ..; turns on different rings do not wait for each other.
//! A barrier receives one group's arrivals per phase and is waited on by the next group only,
//! which cannot fall a phase behind: the parity waits of an mbarrier are exact.
//!
//! Built on gpu-pipeline's [`Signal`]: on the GPU the signals are an [`MbarrierGrid`] of
//! mbarriers (initialised with [`init`]), on the host arrays of gpu-pipeline's host mbarrier
//! models, which the tests below run.

use core::marker::PhantomData;

use gpu_pipeline::{Mbarrier, MbarrierRef, Signal};

/// The `DEPTH x GROUPS` signals of an ordered sequence, ring-major.
pub trait Signals: Copy {
    /// One signal.
    type Signal: Signal;
    /// The signal of ring `ring`, group `group`.
    fn get(&self, ring: usize, group: usize) -> Self::Signal;
}

impl<S: Signal, const DEPTH: usize, const GROUPS: usize> Signals for [[S; GROUPS]; DEPTH] {
    type Signal = S;
    #[inline(always)]
    fn get(&self, ring: usize, group: usize) -> S {
        self[ring][group]
    }
}

/// `DEPTH * GROUPS` consecutive mbarriers in shared memory, ring-major, from [`init`] or
/// [`handles`]. A signal's address is computed, not looked up: an array of handles indexed by
/// the turn would live in local memory on the GPU.
#[derive(Clone, Copy, Debug)]
pub struct MbarrierGrid<'a, const GROUPS: usize> {
    base: u32,
    borrow: PhantomData<&'a Mbarrier>,
}

impl<'a, const GROUPS: usize> Signals for MbarrierGrid<'a, GROUPS> {
    type Signal = MbarrierRef<'a>;
    #[inline(always)]
    fn get(&self, ring: usize, group: usize) -> MbarrierRef<'a> {
        let index = (ring * GROUPS + group) as u32;
        // SAFETY: `base` is the first of the grid's initialised mbarriers (the contract of
        // `handles`), and `index` is below `DEPTH * GROUPS` (the sequence's ring and group).
        unsafe { MbarrierRef::from_shared_addr(self.base + 8 * index) }
    }
}

/// One thread's view of an ordered-sequence barrier: the signals, its group, and the turns it
/// has taken. Each thread of a group holds its own copy and takes the same turns.
#[derive(Clone, Copy, Debug)]
pub struct OrderedSequenceBarrier<S: Signals, const DEPTH: usize, const GROUPS: usize> {
    signals: S,
    group: u32,
    turn: u32,
}

/// A turn being taken: the ordered work runs while it is held; [`arrive`](Self::arrive) hands
/// the turn to the next group.
#[must_use = "the next group waits until this turn is handed on with `arrive`"]
pub struct Turn<'a, S: Signals, const DEPTH: usize, const GROUPS: usize> {
    barrier: &'a mut OrderedSequenceBarrier<S, DEPTH, GROUPS>,
}

impl<S: Signals, const DEPTH: usize, const GROUPS: usize> OrderedSequenceBarrier<S, DEPTH, GROUPS> {
    const SHAPE: () = assert!(
        DEPTH >= 1 && GROUPS >= 1 && DEPTH * GROUPS <= 64,
        "gpu-hopper: an ordered-sequence barrier has 1 or more rings and groups (at most 64 barriers)"
    );

    /// The view of a thread of group `group` (0..GROUPS) over `signals` (ring-major), whose
    /// barriers expect, per phase, the arrivals of one group (the threads of a group that call
    /// [`Turn::arrive`]), and have received none yet.
    ///
    /// # Panics
    ///
    /// If `group >= GROUPS`.
    #[must_use]
    pub fn new(signals: S, group: u32) -> Self {
        let () = Self::SHAPE;
        assert!(
            (group as usize) < GROUPS,
            "gpu-hopper: group {group} of an ordered sequence of {GROUPS}"
        );
        Self {
            signals,
            group,
            turn: 0,
        }
    }

    /// The turns this thread has completed.
    #[must_use]
    pub fn turns(&self) -> u32 {
        self.turn
    }

    /// Waits for this group's next turn (1): the previous group has handed it on, on this
    /// turn's ring.
    pub fn wait(&mut self) -> Turn<'_, S, DEPTH, GROUPS> {
        let ring = self.turn as usize % DEPTH;
        let lap = self.turn / DEPTH as u32;
        let completions = lap + u32::from(self.group != 0);
        self.signals
            .get(ring, self.group as usize)
            .wait_completed(completions, None);
        Turn { barrier: self }
    }
}

impl<S: Signals, const DEPTH: usize, const GROUPS: usize> Turn<'_, S, DEPTH, GROUPS> {
    /// Hands the turn to the next group (2): one arrival (a release) on its barrier of this ring.
    pub fn arrive(self) {
        let b = self.barrier;
        let ring = b.turn as usize % DEPTH;
        let next = (b.group as usize + 1) % GROUPS;
        b.signals.get(ring, next).arrive();
        b.turn = b.turn.wrapping_add(1);
    }
}

/// Initialises the `DEPTH * GROUPS` mbarriers at `storage` (ring-major) for `arrivals` arrivals
/// per phase, and returns their grid. One thread calls it, then a block barrier before anyone
/// waits (the other threads take [`handles`]).
///
/// # Safety
///
/// `storage` points to `DEPTH * GROUPS` [`Mbarrier`]s in this CTA's shared memory that nobody
/// else uses until the barrier after this call, valid for `'a`; `arrivals` is in
/// 1..=2^20 - 1.
#[must_use]
pub unsafe fn init<'a, const DEPTH: usize, const GROUPS: usize>(
    storage: *mut Mbarrier,
    arrivals: u32,
) -> MbarrierGrid<'a, GROUPS> {
    // SAFETY: the caller's contract.
    let grid = unsafe { handles::<DEPTH, GROUPS>(storage) };
    for ring in 0..DEPTH {
        for group in 0..GROUPS {
            // SAFETY: exclusive access before the block barrier (the caller's contract).
            unsafe { grid.get(ring, group).init(arrivals) };
        }
    }
    grid
}

/// The grid of the `DEPTH * GROUPS` mbarriers at `storage` (ring-major), initialised by
/// [`init`] before use.
///
/// # Safety
///
/// As [`init`], after it and a block barrier.
#[must_use]
pub unsafe fn handles<'a, const DEPTH: usize, const GROUPS: usize>(
    storage: *mut Mbarrier,
) -> MbarrierGrid<'a, GROUPS> {
    MbarrierGrid {
        // SAFETY: the caller's contract: a pointer into this CTA's shared memory.
        base: unsafe { gpu_pipeline::arch::nvptx::cvta_to_shared(storage.cast()) },
        borrow: PhantomData,
    }
}

#[cfg(test)]
mod tests {
    use std::mem::MaybeUninit;
    use std::sync::Mutex;
    use std::sync::atomic::AtomicU64;
    use std::vec::Vec;

    use gpu_pipeline::{HostMbarBackend, ProducerConsumerPipeline};

    use super::OrderedSequenceBarrier;

    /// Runs `GROUPS` groups of `THREADS` threads, each taking `turns` turns, and returns the
    /// log of (group, turn) entered while holding the turn, once per group (its thread 0).
    fn run<const DEPTH: usize, const GROUPS: usize, const THREADS: u32, const STAGES: usize>(
        turns: u32,
    ) -> Vec<(u32, u32)> {
        assert_eq!(2 * STAGES, DEPTH * GROUPS);
        let mut storage: Vec<MaybeUninit<AtomicU64>> =
            (0..2 * STAGES).map(|_| MaybeUninit::uninit()).collect();
        // The host pipeline's full and empty barriers are mbarrier models that each expect
        // `THREADS` arrivals per phase: the signals of the sequence.
        // SAFETY: `2 * STAGES` words, initialised below, alive for the whole test.
        let pipe = unsafe {
            ProducerConsumerPipeline::<STAGES, HostMbarBackend<THREADS, THREADS>>::new(
                storage.as_mut_ptr(),
            )
        };
        // SAFETY: before any thread uses the barriers.
        unsafe { pipe.init() };
        let all: Vec<_> = (0..STAGES as u32)
            .flat_map(|s| [pipe.full_barrier(s), pipe.empty_barrier(s)])
            .collect();
        let signals: [[_; GROUPS]; DEPTH] =
            core::array::from_fn(|r| core::array::from_fn(|g| all[r * GROUPS + g]));
        let log = Mutex::new(Vec::new());
        std::thread::scope(|scope| {
            for group in 0..GROUPS as u32 {
                for thread in 0..THREADS {
                    let log = &log;
                    scope.spawn(move || {
                        let mut sequence =
                            OrderedSequenceBarrier::<_, DEPTH, GROUPS>::new(signals, group);
                        for turn in 0..turns {
                            let held = sequence.wait();
                            if thread == 0 {
                                log.lock().unwrap().push((group, turn));
                            }
                            std::thread::yield_now();
                            held.arrive();
                        }
                        assert_eq!(sequence.turns(), turns);
                    });
                }
            }
        });
        log.into_inner().unwrap()
    }

    /// On each ring, the turns are taken group 0, 1, .., GROUPS - 1, 0, ..: the i-th entry of
    /// ring `s` is group `i % GROUPS`'s turn `s + DEPTH * (i / GROUPS)`.
    fn check<const DEPTH: usize, const GROUPS: usize>(log: &[(u32, u32)], turns: u32) {
        assert_eq!(log.len() as u32, GROUPS as u32 * turns);
        for ring in 0..DEPTH as u32 {
            let order: Vec<(u32, u32)> = log
                .iter()
                .copied()
                .filter(|&(_, t)| t % DEPTH as u32 == ring)
                .collect();
            for (i, &(group, turn)) in order.iter().enumerate() {
                let i = i as u32;
                assert_eq!(
                    (group, turn),
                    (i % GROUPS as u32, ring + DEPTH as u32 * (i / GROUPS as u32)),
                    "ring {ring}, entry {i} of {order:?}"
                );
            }
        }
    }

    #[test]
    fn depth_1_groups_2_threads_1() {
        let log = run::<1, 2, 1, 1>(50);
        check::<1, 2>(&log, 50);
    }

    #[test]
    fn depth_2_groups_2_threads_4() {
        let log = run::<2, 2, 4, 2>(40);
        check::<2, 2>(&log, 40);
    }

    #[test]
    fn depth_2_groups_3_threads_2() {
        let log = run::<2, 3, 2, 3>(30);
        check::<2, 3>(&log, 30);
    }

    #[test]
    fn depth_3_groups_2_threads_1() {
        let log = run::<3, 2, 1, 3>(31);
        check::<3, 2>(&log, 31);
    }

    /// The check sees a wrong order: without the sequence barrier the log is interleaved freely.
    #[test]
    fn the_order_check_rejects_a_swapped_log() {
        let mut log = run::<1, 2, 1, 1>(4);
        log.swap(0, 1);
        assert!(std::panic::catch_unwind(|| check::<1, 2>(&log, 4)).is_err());
    }
}
