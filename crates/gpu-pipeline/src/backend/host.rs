//! Host backends on std atomics: the real protocol code runs on CPU threads and under loom.
//!
//! - [`HostMbarBackend`] models an NVIDIA mbarrier: a pending-arrival count and a phase count in
//!   one 64-bit atomic word; waits test the parity of the phase, exactly as
//!   `mbarrier.try_wait.parity` does. It checks the parity arithmetic of the NVIDIA backend.
//! - [`HostCounterBackend`] is the counter protocol of the AMD backend: monotonic counters and
//!   the thresholds of [`crate::threshold`]. It checks that arithmetic.
//!
//! Both count one arrival per calling thread, like the GPU backends.
//!
//! # Memory ordering
//!
//! Every arrival is a read-modify-write with `Release` ordering and every wait ends with an
//! `Acquire` load. The RMWs on one word form a release sequence, so a waiter whose load reads the
//! value written by the last arrival of a phase synchronises with *every* arrival of that phase:
//! what each arriving thread wrote before arriving is visible after the wait. This is the
//! release/acquire contract of `mbarrier.arrive.release` / `try_wait.acquire`.

use core::marker::PhantomData;
use core::mem::MaybeUninit;

use super::{
    MAX_COUNTER_ARRIVALS, MAX_MBARRIER_ARRIVALS, PipelineBackend, Signal, check_arrive_counts,
};
use crate::primitive::{AtomicU64, Ordering, wait_round};
use crate::threshold;

/// Bits of an mbarrier-model word that hold the pending arrivals of the current phase.
const PENDING_MASK: u64 = 0xffff_ffff;
/// The phase count lives in the high 32 bits.
const PHASE_SHIFT: u32 = 32;

/// A handle to one barrier of a [`HostMbarBackend`]: a model of an mbarrier.
///
/// The handle borrows its barrier for `'a`, the borrow of the backend (or pipeline) it came
/// from: it cannot be used after the pipeline value is gone, so a safe `arrive` cannot reach
/// freed storage. Before API v2 it was a `Copy` raw pointer, and this compiled (and read freed
/// memory, which AddressSanitizer reports; `cargo xtask test` runs the host tests under it):
///
/// ```compile_fail,E0597
/// use std::mem::MaybeUninit;
/// use std::sync::atomic::AtomicU64;
/// use gpu_pipeline::{HostMbarBackend, ProducerConsumerPipeline};
///
/// let bar = {
///     let mut storage: Vec<MaybeUninit<AtomicU64>> = (0..2).map(|_| MaybeUninit::uninit()).collect();
///     // SAFETY: two words, initialised below, valid while `pipe` exists.
///     let pipe = unsafe { ProducerConsumerPipeline::<1, HostMbarBackend<1, 1>>::new(storage.as_mut_ptr()) };
///     unsafe { pipe.init() };
///     pipe.full_barrier(0)
/// }; // `pipe` and `storage` are gone here
/// bar.arrive();
/// ```
#[derive(Clone, Copy, Debug)]
pub struct HostMbarrier<'a> {
    word: &'a AtomicU64,
    expected: u32,
}

impl HostMbarrier<'_> {
    #[inline]
    fn word(&self) -> &AtomicU64 {
        self.word
    }

    /// The number of completed phases (the model's phase counter), modulo 2^32.
    #[must_use]
    pub fn phase(&self) -> u32 {
        (self.word().load(Ordering::Acquire) >> PHASE_SHIFT) as u32
    }

    /// Arrivals still missing for the current phase to complete.
    #[must_use]
    pub fn pending(&self) -> u32 {
        (self.word().load(Ordering::Acquire) & PENDING_MASK) as u32
    }

    /// One arrival (release). The last arrival of a phase completes it: the phase count moves
    /// on and the pending count is reloaded with the expected arrivals, as on an mbarrier.
    pub fn arrive(&self) {
        let word = self.word();
        let mut old = word.load(Ordering::Relaxed);
        loop {
            let pending = old & PENDING_MASK;
            let new = if pending <= 1 {
                let phase = (old >> PHASE_SHIFT).wrapping_add(1) & PENDING_MASK;
                (phase << PHASE_SHIFT) | u64::from(self.expected)
            } else {
                old - 1
            };
            match word.compare_exchange_weak(old, new, Ordering::Release, Ordering::Relaxed) {
                Ok(_) => return,
                Err(seen) => old = seen,
            }
        }
    }

    /// Whether the phase of parity `parity & 1` has completed (acquire if so): true when the
    /// current phase has the other parity, so the phase of this parity is the one just before it.
    #[must_use]
    pub fn try_wait_parity(&self, parity: u32) -> bool {
        let phase = (self.word().load(Ordering::Acquire) >> PHASE_SHIFT) as u32;
        (phase & 1) != (parity & 1)
    }

    /// The arrivals since `init`, modulo 2^32: `phase * expected + (expected - pending)`; the
    /// model's state is an exact count, so it is its own shadow in checked builds.
    #[must_use]
    pub fn arrivals(&self) -> u32 {
        let word = self.word().load(Ordering::Acquire);
        let phase = (word >> PHASE_SHIFT) as u32;
        let pending = (word & PENDING_MASK) as u32;
        phase
            .wrapping_mul(self.expected)
            .wrapping_add(self.expected - pending)
    }

    /// Blocks until [`try_wait_parity`](Self::try_wait_parity) holds.
    pub fn wait_parity(&self, parity: u32) {
        let mut round = 0;
        while !self.try_wait_parity(parity) {
            wait_round(&mut round);
        }
    }
}

// SAFETY: completion: a parity test of phase `n - 1` (`(n + 1) & 1`), exact under the protocol's
// bound like the mbarrier it models. Arrival unit: one CAS per `arrive`. Ordering: Release RMWs,
// Acquire loads (module docs). No reset: only the backend's `init` stores.
unsafe impl Signal for HostMbarrier<'_> {
    fn arrive(self) {
        HostMbarrier::arrive(&self);
    }

    fn completed(self, completions: u32) -> bool {
        self.try_wait_parity(completions.wrapping_add(1))
    }

    fn wait_completed(self, completions: u32, _ticks: Option<u32>) {
        self.wait_parity(completions.wrapping_add(1));
    }

    #[cfg(feature = "checked")]
    fn arrivals(self) -> u32 {
        HostMbarrier::arrivals(&self)
    }
}

/// A handle to one counter of a [`HostCounterBackend`].
///
/// Borrows its counter for `'a`, like [`HostMbarrier`].
#[derive(Clone, Copy, Debug)]
pub struct HostCounterSignal<'a> {
    word: &'a AtomicU64,
    /// The arrivals of one phase (the backend's arrive count for this signal).
    per_phase: u32,
}

impl HostCounterSignal<'_> {
    #[inline]
    fn word(&self) -> &AtomicU64 {
        self.word
    }

    /// The counter: arrivals since init.
    #[must_use]
    pub fn value(&self) -> u64 {
        self.word().load(Ordering::Acquire)
    }

    /// `n` arrivals in one atomic add (release): a wave's arriving lanes counted at once.
    pub fn arrive_n(&self, n: u32) {
        self.word().fetch_add(u64::from(n), Ordering::Release);
    }

    /// One arrival (release).
    pub fn arrive(&self) {
        self.arrive_n(1);
    }

    /// Whether the counter reached `threshold` (serial comparison modulo 2^32; acquire).
    #[must_use]
    pub fn reached(&self, threshold: u32) -> bool {
        threshold::reached(self.value() as u32, threshold)
    }
}

// SAFETY: completion: the thresholds of `crate::threshold`, exact under the protocol (its
// essay). Arrival unit: one `fetch_add(1)` per `arrive`. Ordering: Release adds, Acquire loads.
// No reset: counters only grow.
unsafe impl Signal for HostCounterSignal<'_> {
    fn arrive(self) {
        HostCounterSignal::arrive(&self);
    }

    fn completed(self, completions: u32) -> bool {
        self.reached(threshold::threshold(completions, self.per_phase))
    }

    fn wait_completed(self, completions: u32, _ticks: Option<u32>) {
        let target = threshold::threshold(completions, self.per_phase);
        let mut round = 0;
        while !self.reached(target) {
            wait_round(&mut round);
        }
    }

    #[cfg(feature = "checked")]
    fn arrivals(self) -> u32 {
        self.value() as u32
    }
}

/// What a host backend's signals are: the mbarrier model ([`MbarModel`]) or the counter
/// ([`CounterModel`]). Sealed.
pub trait HostModel: sealed::Sealed + Copy + core::fmt::Debug + 'static {
    /// The signal handed out for one word.
    type Signal<'a>: Signal;
    /// The largest arrive count of the hardware this models.
    const MAX_ARRIVALS: u32;
    /// A word's value after `init`, for a signal of `arrivals` per phase.
    fn initial(arrivals: u32) -> u64;
    /// The signal of `word`, whose phases take `arrivals` arrivals.
    fn signal(word: &AtomicU64, arrivals: u32) -> Self::Signal<'_>;
}

mod sealed {
    pub trait Sealed {}
}

/// The mbarrier model: a pending count and a phase count in one word ([`HostMbarrier`]).
#[derive(Clone, Copy, Debug)]
pub enum MbarModel {}

/// The counter model: a monotonic counter ([`HostCounterSignal`]).
#[derive(Clone, Copy, Debug)]
pub enum CounterModel {}

impl sealed::Sealed for MbarModel {}
impl sealed::Sealed for CounterModel {}

impl HostModel for MbarModel {
    type Signal<'a> = HostMbarrier<'a>;
    const MAX_ARRIVALS: u32 = MAX_MBARRIER_ARRIVALS;

    fn initial(arrivals: u32) -> u64 {
        u64::from(arrivals)
    }

    fn signal(word: &AtomicU64, arrivals: u32) -> HostMbarrier<'_> {
        HostMbarrier {
            word,
            expected: arrivals,
        }
    }
}

impl HostModel for CounterModel {
    type Signal<'a> = HostCounterSignal<'a>;
    const MAX_ARRIVALS: u32 = MAX_COUNTER_ARRIVALS;

    fn initial(_arrivals: u32) -> u64 {
        0
    }

    fn signal(word: &AtomicU64, arrivals: u32) -> HostCounterSignal<'_> {
        HostCounterSignal {
            word,
            per_phase: arrivals,
        }
    }
}

/// A host backend: `2 * STAGES` words of `M`'s model, full then empty. Use it through its two
/// names, [`HostMbarBackend`] and [`HostCounterBackend`].
///
/// Storage elements are `MaybeUninit<AtomicU64>`: `init` writes them.
#[derive(Clone, Copy, Debug)]
pub struct HostBackend<const PRODUCER_ARRIVALS: u32, const CONSUMER_ARRIVALS: u32, M: HostModel> {
    full: *const AtomicU64,
    empty: *const AtomicU64,
    stages: u32,
    model: PhantomData<M>,
}

/// The host model of the NVIDIA backend (see the module docs).
pub type HostMbarBackend<const PRODUCER_ARRIVALS: u32, const CONSUMER_ARRIVALS: u32> =
    HostBackend<PRODUCER_ARRIVALS, CONSUMER_ARRIVALS, MbarModel>;

/// The host model of the counter backend (see the module docs).
pub type HostCounterBackend<const PRODUCER_ARRIVALS: u32, const CONSUMER_ARRIVALS: u32> =
    HostBackend<PRODUCER_ARRIVALS, CONSUMER_ARRIVALS, CounterModel>;

// SAFETY: a description of atomics shared between threads; the signals it hands out borrow it.
unsafe impl<const P: u32, const C: u32, M: HostModel> Send for HostBackend<P, C, M> {}
// SAFETY: as above.
unsafe impl<const P: u32, const C: u32, M: HostModel> Sync for HostBackend<P, C, M> {}

impl<const P: u32, const C: u32, M: HostModel> HostBackend<P, C, M> {
    /// The signal at `base + stage`.
    #[inline]
    fn at(&self, base: *const AtomicU64, stage: u32, arrivals: u32) -> M::Signal<'_> {
        assert!(stage < self.stages, "stage index out of range");
        // SAFETY: `new`'s caller guarantees STAGES initialised words at `base` that outlive this
        // value and every borrow of it; the stage is in range (asserted).
        M::signal(unsafe { &*base.add(stage as usize) }, arrivals)
    }
}

// SAFETY: layout: full[] at the base, empty[] after it, 2 * STAGES words (no shadows: both models'
// words are exact counts). Signals: `full`/`empty` return the stage's word as `M`'s signal with P
// or C arrivals per phase (their `Signal` impls above). Constants: checked in `new`. Shadows:
// `init` writes every word.
unsafe impl<const P: u32, const C: u32, M: HostModel> PipelineBackend for HostBackend<P, C, M> {
    type Storage = MaybeUninit<AtomicU64>;
    type Signal<'a> = M::Signal<'a>;

    const PRODUCER_ARRIVALS: u32 = P;
    const CONSUMER_ARRIVALS: u32 = C;
    const MAX_ARRIVALS: u32 = M::MAX_ARRIVALS;

    unsafe fn new<const STAGES: usize>(storage: *mut MaybeUninit<AtomicU64>) -> Self {
        check_arrive_counts::<Self>();
        let full = storage.cast::<AtomicU64>().cast_const();
        Self {
            full,
            empty: full.wrapping_add(STAGES),
            stages: STAGES as u32,
            model: PhantomData,
        }
    }

    unsafe fn init<const STAGES: usize>(&self) {
        for stage in 0..STAGES {
            // SAFETY: the caller owns the storage exclusively during init; the words are
            // written before any other thread may read them (the caller's barrier).
            unsafe {
                self.full
                    .cast_mut()
                    .add(stage)
                    .write(AtomicU64::new(M::initial(P)));
                self.empty
                    .cast_mut()
                    .add(stage)
                    .write(AtomicU64::new(M::initial(C)));
            }
        }
    }

    unsafe fn full(&self, stage: u32) -> M::Signal<'_> {
        self.at(self.full, stage, P)
    }

    unsafe fn empty(&self, stage: u32) -> M::Signal<'_> {
        self.at(self.empty, stage, C)
    }
}
