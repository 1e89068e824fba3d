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
//! Built on gpu-pipeline's [`Signal`]: on the GPU the signals are an [`MbarrierGrid`] over a
//! [`SequenceStorage`] in shared memory (initialised with [`init`]), on the host a
//! [`SignalArray`] of gpu-pipeline's host mbarrier models, which the tests below run.
//!
//! # Checked builds
//!
//! With the `checked` feature (gpu-pipeline's hang diagnostics) every [`wait`] is bounded by the
//! budget of the view's [`Diagnostics`] (set with `with_diagnostics`), and every arrival is
//! counted (in the storage's counts on the GPU). A mistake ends the kernel with a gpu-pipeline
//! `HangRecord` instead of a hang or a silent reordering:
//!
//! | mistake | record |
//! |---|---|
//! | a group takes fewer turns than the next one waits for, exits, or blocks | HANG, 0 of N arrivals of the previous group |
//! | fewer threads take turns in a group than the `arrivals` given to `init` | HANG, k of N arrivals |
//! | more threads take turns than `arrivals` (phases complete early) | WRONG ARRIVAL COUNT at a completion, or HANG with the surplus |
//! | a [`Turn`] dropped without `arrive` (an early `return` holding it) | TURN NOT HANDED ON, naming the `wait` that took it |
//!
//! The count check at a completion is exact with two or more groups (the previous group's next
//! arrivals on a barrier need the waiter's own arrival first); with one group it is skipped.
//!
//! A view of more rings or groups than its signals does not compile (it would wait on barriers
//! outside them; found by a review, 2026-12-05):
//!
//! ```compile_fail,E0080
//! use std::mem::MaybeUninit;
//! use std::sync::atomic::AtomicU64;
//! use gpu_hopper::sequence::{OrderedSequenceBarrier, SignalArray};
//! use gpu_pipeline::{HostMbarBackend, ProducerConsumerPipeline, barrier_elems};
//!
//! type Backend = HostMbarBackend<1, 1>;
//! let mut storage: Vec<MaybeUninit<AtomicU64>> =
//!     (0..barrier_elems::<Backend>(1)).map(|_| MaybeUninit::uninit()).collect();
//! // SAFETY: the storage, initialised below, alive for the example.
//! let pipe = unsafe { ProducerConsumerPipeline::<1, Backend>::new(storage.as_mut_ptr()) };
//! // SAFETY: before anyone uses the barriers.
//! unsafe { pipe.init() };
//! // Signals of one ring and two groups ...
//! let signals = SignalArray::<_, 1, 2> {
//!     signals: [[pipe.full_barrier(0), pipe.empty_barrier(0)]],
//!     arrivals: 1,
//! };
//! // ... in a view of two rings and two groups.
//! let view = OrderedSequenceBarrier::<_, 2, 2>::new(signals, 0);
//! ```
//!
//! [`wait`]: OrderedSequenceBarrier::wait

use core::marker::PhantomData;

#[cfg(feature = "checked")]
use gpu_pipeline::checked::{BarrierWait, Call, Fault, Role};
use gpu_pipeline::{Diagnostics, Mbarrier, MbarrierRef, Signal};

/// The `DEPTH x GROUPS` signals of an ordered sequence, ring-major, and the arrivals each expects
/// per phase (the threads of one group that call [`Turn::arrive`]).
pub trait Signals: Copy {
    /// One signal.
    type Signal: Signal;
    /// The rings: [`OrderedSequenceBarrier`] of `DEPTH` rings takes only signals of as many.
    const DEPTH: usize;
    /// The groups: [`OrderedSequenceBarrier`] of `GROUPS` groups takes only signals of as many.
    const GROUPS: usize;
    /// The signal of ring `ring`, group `group`.
    fn get(&self, ring: usize, group: usize) -> Self::Signal;
    /// The arrivals each signal expects per phase.
    fn arrivals(&self) -> u32;

    /// One arrival on the signal of ring `ring`, group `group` (checked builds also count it).
    #[inline(always)]
    fn arrive(&self, ring: usize, group: usize) {
        self.get(ring, group).arrive();
    }

    /// Checked builds: the arrivals the signal of ring `ring`, group `group` has received since
    /// `init`, modulo 2^32, never one that has not happened (`None`: not counted).
    #[cfg(feature = "checked")]
    fn count(&self, ring: usize, group: usize) -> Option<u32>;

    /// Checked builds: the low 32 bits of the signals' address, for records.
    #[cfg(feature = "checked")]
    fn storage(&self) -> u32 {
        0
    }
}

/// Signals given as an array (ring-major) with their arrivals per phase: the host tests' models,
/// or handles a kernel made itself.
#[derive(Clone, Copy, Debug)]
pub struct SignalArray<S: Signal, const DEPTH: usize, const GROUPS: usize> {
    /// The signals, `signals[ring][group]`.
    pub signals: [[S; GROUPS]; DEPTH],
    /// The arrivals each expects per phase.
    pub arrivals: u32,
}

impl<S: Signal, const DEPTH: usize, const GROUPS: usize> Signals for SignalArray<S, DEPTH, GROUPS> {
    type Signal = S;
    const DEPTH: usize = DEPTH;
    const GROUPS: usize = GROUPS;
    #[inline(always)]
    fn get(&self, ring: usize, group: usize) -> S {
        self.signals[ring][group]
    }
    #[inline(always)]
    fn arrivals(&self) -> u32 {
        self.arrivals
    }
    #[cfg(feature = "checked")]
    #[inline(always)]
    fn count(&self, ring: usize, group: usize) -> Option<u32> {
        Some(self.signals[ring][group].arrivals())
    }
}

/// The shared memory of an ordered sequence: `DEPTH x GROUPS` mbarriers (ring-major), and in
/// checked builds a 32-bit arrival count per barrier. Size a kernel's
/// layout with `size_of::<SequenceStorage<DEPTH, GROUPS>>()`, from the same build as the device
/// code (checked builds' storage is larger).
#[repr(C, align(8))]
pub struct SequenceStorage<const DEPTH: usize, const GROUPS: usize> {
    _barriers: [[Mbarrier; GROUPS]; DEPTH],
    #[cfg(feature = "checked")]
    _counts: [[u32; GROUPS]; DEPTH],
}

/// The `DEPTH * GROUPS` mbarriers of a [`SequenceStorage`] in shared memory, from [`init`] or
/// [`handles`]. A signal's address is computed, not looked up: an array of handles indexed by
/// the turn would live in local memory on the GPU.
#[derive(Clone, Copy, Debug)]
pub struct MbarrierGrid<'a, const DEPTH: usize, const GROUPS: usize> {
    base: u32,
    arrivals: u32,
    borrow: PhantomData<&'a SequenceStorage<DEPTH, GROUPS>>,
}

impl<const DEPTH: usize, const GROUPS: usize> MbarrierGrid<'_, DEPTH, GROUPS> {
    /// Checked builds: the shared address of the count of ring `ring`, group `group`.
    #[cfg(feature = "checked")]
    #[inline(always)]
    fn count_addr(&self, ring: usize, group: usize) -> u32 {
        assert!(
            ring < DEPTH && group < GROUPS,
            "gpu-hopper: ring or group outside an ordered sequence's storage"
        );
        self.base + 8 * (DEPTH * GROUPS) as u32 + 4 * (ring * GROUPS + group) as u32
    }
}

impl<'a, const DEPTH: usize, const GROUPS: usize> Signals for MbarrierGrid<'a, DEPTH, GROUPS> {
    type Signal = MbarrierRef<'a>;
    const DEPTH: usize = DEPTH;
    const GROUPS: usize = GROUPS;

    /// # Panics
    ///
    /// If `ring >= DEPTH` or `group >= GROUPS` (there is no such barrier in the storage). The
    /// sequence's own calls pass indices below them, and the check folds away there.
    #[inline(always)]
    fn get(&self, ring: usize, group: usize) -> MbarrierRef<'a> {
        assert!(
            ring < DEPTH && group < GROUPS,
            "gpu-hopper: ring or group outside an ordered sequence's storage"
        );
        let index = (ring * GROUPS + group) as u32;
        // SAFETY: `base` is the first of the storage's initialised mbarriers (the contract of
        // `handles`), and `index` is below `DEPTH * GROUPS` (checked above).
        unsafe { MbarrierRef::from_shared_addr(self.base + 8 * index) }
    }

    #[inline(always)]
    fn arrivals(&self) -> u32 {
        self.arrivals
    }

    #[inline(always)]
    fn arrive(&self, ring: usize, group: usize) {
        self.get(ring, group).arrive();
        // The count follows the arrival (an arrival is a release and would wait for a count
        // made before it): a count is never ahead of the arrivals.
        #[cfg(feature = "checked")]
        // SAFETY: the count of this barrier, inside the checked storage (`handles`' contract).
        unsafe {
            gpu_pipeline::arch::nvptx::red_relaxed_cta_shared_add_u32(
                self.count_addr(ring, group),
                1,
            )
        };
    }

    #[cfg(feature = "checked")]
    #[inline(always)]
    fn count(&self, ring: usize, group: usize) -> Option<u32> {
        // SAFETY: as in `arrive`.
        Some(unsafe {
            gpu_pipeline::arch::nvptx::ld_relaxed_cta_shared_u32(self.count_addr(ring, group))
        })
    }

    #[cfg(feature = "checked")]
    #[inline(always)]
    fn storage(&self) -> u32 {
        self.base
    }
}

/// One thread's view of an ordered-sequence barrier: the signals, its group, and the turns it
/// has taken. Each thread of a group holds its own copy and takes the same turns.
#[derive(Clone, Copy, Debug)]
pub struct OrderedSequenceBarrier<S: Signals, const DEPTH: usize, const GROUPS: usize> {
    signals: S,
    group: u32,
    turn: u32,
    #[cfg(feature = "checked")]
    diagnostics: Diagnostics,
}

/// A turn being taken: the ordered work runs while it is held; [`arrive`](Self::arrive) hands
/// the turn to the next group. In checked builds a turn that goes out of scope without `arrive`
/// ends the kernel with a record (the next group would wait for it forever).
#[must_use = "the next group waits until this turn is handed on with `arrive`"]
pub struct Turn<'a, S: Signals, const DEPTH: usize, const GROUPS: usize> {
    barrier: &'a mut OrderedSequenceBarrier<S, DEPTH, GROUPS>,
    /// Checked builds: the `wait` that took the turn, which a record of a dropped turn names
    /// (drop glue has no location of the user's).
    #[cfg(feature = "checked")]
    taken: &'static core::panic::Location<'static>,
}

impl<S: Signals, const DEPTH: usize, const GROUPS: usize> OrderedSequenceBarrier<S, DEPTH, GROUPS> {
    const SHAPE: () = {
        assert!(
            DEPTH >= 1 && GROUPS >= 1 && DEPTH * GROUPS <= 64,
            "gpu-hopper: an ordered-sequence barrier has 1 or more rings and groups (at most 64 barriers)"
        );
        assert!(
            S::DEPTH == DEPTH && S::GROUPS == GROUPS,
            "gpu-hopper: an ordered-sequence barrier's rings and groups are its signals' (a view of more would wait on barriers outside them)"
        );
    };

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
            #[cfg(feature = "checked")]
            diagnostics: Diagnostics::DEFAULT,
        }
    }

    /// The same view with `diagnostics`: the label that names the sequence in checked builds'
    /// hang records and the budget of each [`wait`](Self::wait) (ignored without the `checked`
    /// feature).
    #[must_use]
    pub fn with_diagnostics(self, diagnostics: Diagnostics) -> Self {
        #[cfg(not(feature = "checked"))]
        let _ = diagnostics;
        Self {
            #[cfg(feature = "checked")]
            diagnostics,
            ..self
        }
    }

    /// The turns this thread has completed.
    #[must_use]
    pub fn turns(&self) -> u32 {
        self.turn
    }

    /// Waits for this group's next turn (1): the previous group has handed it on, on this
    /// turn's ring. In checked builds the wait is bounded by the budget, and a completion with
    /// more arrivals than the turn needs (with 2 or more groups, where the count is exact) ends
    /// the kernel with a record.
    #[cfg_attr(feature = "checked", track_caller)]
    pub fn wait(&mut self) -> Turn<'_, S, DEPTH, GROUPS> {
        let ring = self.turn as usize % DEPTH;
        let lap = self.turn / DEPTH as u32;
        let completions = lap + u32::from(self.group != 0);
        let signal = self.signals.get(ring, self.group as usize);
        #[cfg(not(feature = "checked"))]
        signal.wait_completed(completions, None);
        #[cfg(feature = "checked")]
        {
            let record = self.record(Call::SequenceWait, completions);
            let (signals, group) = (self.signals, self.group as usize);
            record.wait(
                move || signal.completed(completions),
                move || signals.count(ring, group),
            );
            // Exact with two or more groups: the previous group's next arrivals on this barrier
            // need this thread's own arrival of this turn first. With one group, the group's
            // faster threads may already have arrived for this turn.
            if GROUPS >= 2
                && let Some(count) = signals.count(ring, group)
                && (count.wrapping_sub(record.expected) as i32) > 0
            {
                record.fail(Fault::WrongCount, Some(count));
            }
        }
        Turn {
            barrier: self,
            #[cfg(feature = "checked")]
            taken: core::panic::Location::caller(),
        }
    }

    /// Checked builds: the record fields of this view's current turn, awaiting `completions`.
    #[cfg(feature = "checked")]
    #[inline(always)]
    fn record(&self, call: Call, completions: u32) -> BarrierWait {
        let arrivals = self.signals.arrivals();
        BarrierWait {
            call,
            role: Role::Participant,
            diagnostics: self.diagnostics,
            storage: self.signals.storage(),
            stages: DEPTH as u32,
            stage: self.turn % DEPTH as u32,
            sub_stage: self.group,
            lap: self.turn / DEPTH as u32,
            per_phase: arrivals,
            expected: completions.wrapping_mul(arrivals),
            held: GROUPS as u32,
        }
    }
}

impl<S: Signals, const DEPTH: usize, const GROUPS: usize> Turn<'_, S, DEPTH, GROUPS> {
    /// Hands the turn to the next group (2): one arrival (a release) on its barrier of this ring.
    pub fn arrive(self) {
        let this = core::mem::ManuallyDrop::new(self);
        // SAFETY: `this` is never used or dropped again: the reference is moved out once.
        let b = unsafe { core::ptr::read(&this.barrier) };
        let ring = b.turn as usize % DEPTH;
        let next = (b.group as usize + 1) % GROUPS;
        b.signals.arrive(ring, next);
        b.turn = b.turn.wrapping_add(1);
    }
}

/// Checked builds: a turn dropped without `arrive` stops the kernel with a record that names the
/// `wait` that took it.
#[cfg(feature = "checked")]
impl<S: Signals, const DEPTH: usize, const GROUPS: usize> Drop for Turn<'_, S, DEPTH, GROUPS> {
    fn drop(&mut self) {
        let b = &*self.barrier;
        let completions = b.turn / DEPTH as u32 + u32::from(b.group != 0);
        let ring = b.turn as usize % DEPTH;
        b.record(Call::SequenceTurnDropped, completions).fail_at(
            Fault::StageNotReleased,
            b.signals.count(ring, b.group as usize),
            self.taken,
        );
    }
}

/// Initialises the mbarriers of `storage` (ring-major) for `arrivals` arrivals per phase (the
/// threads of one group that call [`Turn::arrive`]), and returns their grid. One thread calls
/// it, then a block barrier before anyone waits (the other threads take [`handles`]).
///
/// # Safety
///
/// `storage` is a valid [`SequenceStorage`] in this CTA's shared memory that nobody else uses
/// until the block barrier after this call, and that nothing else uses while the grid lives
/// (`'a`); `arrivals` is in 1..=2^20 - 1.
#[must_use]
pub unsafe fn init<'a, const DEPTH: usize, const GROUPS: usize>(
    storage: *mut SequenceStorage<DEPTH, GROUPS>,
    arrivals: u32,
) -> MbarrierGrid<'a, DEPTH, GROUPS> {
    // SAFETY: the caller's contract.
    let grid = unsafe { handles::<DEPTH, GROUPS>(storage, arrivals) };
    for ring in 0..DEPTH {
        for group in 0..GROUPS {
            // SAFETY: exclusive access before the block barrier (the caller's contract).
            unsafe { grid.get(ring, group).init(arrivals) };
        }
    }
    // Checked builds: the counts, as 8-byte words from the first (the storage is 8-byte aligned
    // and padded to 8 bytes, so an odd number of counts ends inside it).
    #[cfg(feature = "checked")]
    for word in 0..(DEPTH * GROUPS).div_ceil(2) as u32 {
        // SAFETY: inside the storage, exclusive before the block barrier (the caller's contract).
        unsafe {
            gpu_pipeline::arch::nvptx::st_shared_u64(grid.count_addr(0, 0) + 8 * word, 0);
        }
    }
    grid
}

/// The grid of the mbarriers of `storage`, initialised by [`init`] with the same `arrivals`
/// before use.
///
/// # Safety
///
/// As [`init`], after it and a block barrier.
#[must_use]
pub unsafe fn handles<'a, const DEPTH: usize, const GROUPS: usize>(
    storage: *mut SequenceStorage<DEPTH, GROUPS>,
    arrivals: u32,
) -> MbarrierGrid<'a, DEPTH, GROUPS> {
    MbarrierGrid {
        // SAFETY: the caller's contract: a pointer into this CTA's shared memory.
        base: unsafe { gpu_pipeline::arch::nvptx::cvta_to_shared(storage.cast()) },
        arrivals,
        borrow: PhantomData,
    }
}

#[cfg(test)]
mod tests {
    use std::mem::MaybeUninit;
    use std::sync::Mutex;
    use std::sync::atomic::AtomicU64;
    use std::vec::Vec;

    use gpu_pipeline::{HostMbarBackend, HostMbarrier, ProducerConsumerPipeline, barrier_elems};

    use super::{OrderedSequenceBarrier, SignalArray};

    /// `DEPTH x GROUPS` host mbarrier models expecting `ARRIVALS` arrivals per phase (the full
    /// and empty barriers of a host pipeline of `STAGES` slots), given to `body`.
    fn with_signals<
        const DEPTH: usize,
        const GROUPS: usize,
        const ARRIVALS: u32,
        const STAGES: usize,
        R,
    >(
        body: impl FnOnce(SignalArray<HostMbarrier<'_>, DEPTH, GROUPS>) -> R,
    ) -> R {
        assert_eq!(2 * STAGES, DEPTH * GROUPS);
        type Backend<const A: u32> = HostMbarBackend<A, A>;
        let elems = barrier_elems::<Backend<ARRIVALS>>(STAGES);
        let mut storage: Vec<MaybeUninit<AtomicU64>> =
            (0..elems).map(|_| MaybeUninit::uninit()).collect();
        // SAFETY: the backend's storage, initialised below, alive for the whole test.
        let pipe = unsafe {
            ProducerConsumerPipeline::<STAGES, Backend<ARRIVALS>>::new(storage.as_mut_ptr())
        };
        // SAFETY: before any thread uses the barriers.
        unsafe { pipe.init() };
        let all: Vec<_> = (0..STAGES as u32)
            .flat_map(|s| [pipe.full_barrier(s), pipe.empty_barrier(s)])
            .collect();
        body(SignalArray {
            signals: core::array::from_fn(|r| core::array::from_fn(|g| all[r * GROUPS + g])),
            arrivals: ARRIVALS,
        })
    }

    /// Runs `GROUPS` groups of `THREADS` threads, each taking `turns` turns, and returns the
    /// log of (group, turn) entered while holding the turn, once per group (its thread 0).
    fn run<const DEPTH: usize, const GROUPS: usize, const THREADS: u32, const STAGES: usize>(
        turns: u32,
    ) -> Vec<(u32, u32)> {
        with_signals::<DEPTH, GROUPS, THREADS, STAGES, _>(|signals| {
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
        })
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

    /// Checked builds: runs `threads[g]` threads in group `g`, thread `(g, t)` doing
    /// `body(g, t, sequence)`, over signals of `ARRIVALS` arrivals per phase with a 50 ms budget,
    /// and returns the panic messages (the records) of the threads that stopped.
    #[cfg(feature = "checked")]
    use std::string::String;

    #[cfg(feature = "checked")]
    use super::Turn;

    #[cfg(feature = "checked")]
    fn misuse<const DEPTH: usize, const GROUPS: usize, const ARRIVALS: u32, const STAGES: usize>(
        threads: [u32; GROUPS],
        body: impl Fn(
            u32,
            u32,
            &mut OrderedSequenceBarrier<SignalArray<HostMbarrier<'_>, DEPTH, GROUPS>, DEPTH, GROUPS>,
        ) + Sync,
    ) -> Vec<String> {
        // Every run here must report: 1 s, not 50 ms, so that a loaded machine does not starve
        // a waiter of a correct turn past its budget before the misuse shows.
        let diagnostics = gpu_pipeline::Diagnostics {
            label: 7,
            wait_budget_us: 1_000_000,
        };
        with_signals::<DEPTH, GROUPS, ARRIVALS, STAGES, _>(|signals| {
            let messages = Mutex::new(Vec::new());
            std::thread::scope(|scope| {
                for group in 0..GROUPS as u32 {
                    for thread in 0..threads[group as usize] {
                        let (messages, body) = (&messages, &body);
                        scope.spawn(move || {
                            let mut sequence =
                                OrderedSequenceBarrier::<_, DEPTH, GROUPS>::new(signals, group)
                                    .with_diagnostics(diagnostics);
                            let result =
                                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                                    body(group, thread, &mut sequence)
                                }));
                            if let Err(payload) = result {
                                let text = payload
                                    .downcast_ref::<String>()
                                    .cloned()
                                    .unwrap_or_default();
                                messages.lock().unwrap().push(text);
                            }
                        });
                    }
                }
            });
            messages.into_inner().unwrap()
        })
    }

    #[cfg(feature = "checked")]
    fn turns<S: super::Signals, const D: usize, const G: usize>(
        sequence: &mut OrderedSequenceBarrier<S, D, G>,
        n: u32,
    ) {
        for _ in 0..n {
            sequence.wait().arrive();
        }
    }

    /// Group 1 takes 3 turns, group 0 wants 5: group 0's fifth wait (turn 4) gets no arrival.
    #[cfg(feature = "checked")]
    #[test]
    fn a_group_that_stops_early_is_reported() {
        let messages = misuse::<1, 2, 1, 1>([1, 1], |group, _, sequence| {
            turns(sequence, if group == 0 { 5 } else { 3 });
        });
        assert_eq!(messages.len(), 1, "{messages:?}");
        let m = &messages[0];
        assert!(
            m.starts_with("gpu-hopper ordered sequence HANG (wait budget spent): sequence 7"),
            "{m}"
        );
        assert!(
            m.contains("1 rings, 2 groups), group 0 in `OrderedSequenceBarrier::wait`"),
            "{m}"
        );
        assert!(m.contains("turn 4 (ring 0, lap 4)"), "{m}");
        assert!(
            m.contains("0 of 1 arrivals of group 1 for this turn"),
            "{m}"
        );
        assert!(m.contains("sequence.rs"), "{m}");
    }

    /// Barriers of 3 arrivals per phase for groups of 2 threads: the first wait of group 1
    /// sees 2 of 3.
    #[cfg(feature = "checked")]
    #[test]
    fn fewer_threads_than_arrivals_are_reported() {
        let messages = misuse::<2, 2, 3, 2>([2, 2], |_, _, sequence| turns(sequence, 4));
        assert!(!messages.is_empty());
        assert!(
            messages
                .iter()
                .any(|m| m.contains("group 1 in `OrderedSequenceBarrier::wait`")
                    && m.contains("2 of 3 arrivals of group 0 for this turn")),
            "{messages:?}"
        );
        assert!(messages.iter().all(|m| m.contains("HANG")), "{messages:?}");
    }

    /// Two threads in group 0 where one arrival per phase is expected: a waiter sees more
    /// arrivals than its turn completes with (group 1, or group 0's slower thread), at its
    /// completion or, when the barrier ran two phases ahead and its parity no longer tells them
    /// apart, when its wait expires.
    #[cfg(feature = "checked")]
    #[test]
    fn more_threads_than_arrivals_are_reported() {
        let messages = misuse::<1, 2, 1, 1>([2, 1], |_, _, sequence| turns(sequence, 6));
        assert!(
            messages
                .iter()
                .any(|m| m.contains("in `OrderedSequenceBarrier::wait`")
                    && m.contains("arrivals more than this turn completes with")
                    && m.contains("more threads that take turns than the arrivals per phase")),
            "{messages:?}"
        );
    }

    /// A turn dropped without `arrive` is reported where it is dropped; the next group then
    /// waits in vain and reports too.
    #[cfg(feature = "checked")]
    #[test]
    fn a_dropped_turn_is_reported() {
        let messages = misuse::<2, 2, 1, 2>([1, 1], |group, _, sequence| {
            turns(sequence, 1);
            if group == 0 {
                let turn: Turn<'_, _, 2, 2> = sequence.wait();
                drop(turn);
            } else {
                turns(sequence, 1);
            }
        });
        assert!(
            messages.iter().any(|m| m
                .starts_with("gpu-hopper ordered sequence TURN NOT HANDED ON")
                && m.contains("group 0 in `(a Turn taken here, dropped without arrive)`")
                && m.contains("turn 1 (ring 1, lap 0)")
                && m.contains("group 1 waits for this turn forever")
                // The line of the `wait` that took the turn, not drop glue's in core.
                && m.contains("src/sequence.rs:")
                && !m.contains("ptr/mod.rs")),
            "{messages:?}"
        );
        assert!(
            messages
                .iter()
                .any(|m| m.contains("HANG") && m.contains("group 1 in")),
            "{messages:?}"
        );
    }

    /// A correct run of a checked build reports nothing (no false alarm from the counts).
    #[cfg(feature = "checked")]
    #[test]
    fn a_correct_sequence_reports_nothing() {
        let messages = misuse::<2, 3, 4, 3>([4, 4, 4], |_, _, sequence| turns(sequence, 40));
        assert!(messages.is_empty(), "{messages:?}");
    }
}
