//! The mechanism under the protocol: how a signal is raised and waited on.
//!
//! [`PipelineBackend`] is the one trait every backend implements. The protocol above it
//! ([`ProducerConsumerPipeline`](crate::ProducerConsumerPipeline)) decides which slot and which
//! lap; a backend only maps "wait until signal X of slot `s` has completed lap `l`" and
//! "arrive on signal X of slot `s`" onto hardware.
//!
//! | backend | where | storage element | lap mapping |
//! |---|---|---|---|
//! | [`NvidiaMbarBackend`] | nvptx64 (sm_90, PTX ISA 8.0) | `mbarrier` (8 bytes) | parity `lap & 1` |
//! | [`AmdCounterBackend`] | amdgcn (and nvptx64, sm_90, PTX ISA 8.0, to test and measure the counter protocol) | 64-bit LDS counter | threshold from the lap |
//! | [`HostMbarBackend`] | host, `std` feature | a model of an mbarrier on one atomic | parity `lap & 1` |
//! | [`HostCounterBackend`] | host, `std` feature | atomic counter | threshold from the lap |
//!
//! [`DefaultBackend`] picks the natural backend of the target being compiled: this is the one
//! place where the target chooses a backend.

mod counter;
#[cfg(any(feature = "std", test))]
mod host;
mod nvidia;

pub use counter::{AmdCounterBackend, CounterBackend, CounterRef, lds_data_fence};
#[cfg(any(feature = "std", test))]
pub use host::{
    CounterModel, HostBackend, HostCounterBackend, HostCounterSignal, HostMbarBackend,
    HostMbarrier, HostModel, MbarModel,
};
#[doc(hidden)]
pub use nvidia::tensor_coords;
pub use nvidia::{
    Cluster, Cta, L2Policy, MAX_TX_BYTES, MBARRIER_BYTES, MbarScope, Mbarrier, MbarrierRef,
    NvidiaMbarBackend, TensorMap, bulk_commit_group, bulk_copy_to_global, bulk_wait_group,
    bulk_wait_group_read, cluster_cta_rank, cluster_sync, elect_one, fence_mbarrier_init,
    fence_proxy_async, prefetch_tensor_map, tensor_store,
};

/// The arrive-count limit of mbarrier: `mbarrier.init` takes a count in `1..=2^20 - 1`
/// (PTX ISA, "Parallel Synchronization and Communication Instructions: mbarrier.init" and
/// "Contents of the mbarrier object": the expected arrival count is at most 2^20 - 1).
pub const MAX_MBARRIER_ARRIVALS: u32 = (1 << 20) - 1;

pub use crate::threshold::MAX_COUNTER_ARRIVALS;

/// One signal of a pipeline slot, as a backend hands it out: a reference to an mbarrier, a
/// counter, or a host model of either, valid for the borrow `'a` it was made under.
///
/// A signal moves through *phases*: a phase completes when it has received its arrivals (the
/// arrive count of the side that raises it), and the signal then starts the next one. Both
/// pipeline sides speak of the phases a signal has completed since `init`: a consumer on lap `p`
/// needs `p + 1` completions of `full`, a producer on lap `q` needs `q - 1` completions of
/// `empty` ([`Side::completions`](crate::Side::completions)). Counts are modulo 2^32.
///
/// # Safety
///
/// An implementation guarantees, for a signal handed out by a [`PipelineBackend`] whose storage
/// was initialised by [`PipelineBackend::init`]:
///
/// - **Completion.** [`completed`](Self::completed)`(n)` returns `true`, and
///   [`wait_completed`](Self::wait_completed)`(n, _)` returns, only once the signal completed `n`
///   phases, provided the signal has completed no more than `n` phases (the protocol's bound: a
///   signal never runs a full phase ahead of its waiter, so NVIDIA's one parity bit and the
///   counters' serial comparison are exact); and `wait_completed` does return once it has (no
///   lost wake-up).
/// - **Arrival unit.** Each call of [`arrive`](Self::arrive) by a thread is exactly one arrival.
/// - **Memory ordering.** An arrive is a *release* and a wait, or a `completed` that returns
///   `true`, an *acquire*, at least at thread-block scope.
/// - **No reset.** Only `init` reinitialises a signal; arrivals are never lost.
pub unsafe trait Signal: Copy {
    /// The calling thread arrives: one arrival, a release.
    fn arrive(self);

    /// Whether the signal has completed `completions` phases. Never blocks for long.
    #[must_use]
    fn completed(self, completions: u32) -> bool;

    /// Blocks until the signal has completed `completions` phases. `ticks` is a suspend-time
    /// hint in nanoseconds; signals without one ignore it.
    fn wait_completed(self, completions: u32, ticks: Option<u32>);

    /// Checked builds: the arrivals this signal has received since `init`, modulo 2^32, counting
    /// every arrival made through the library (a shadow count on NVIDIA, the counter itself on
    /// counter backends), never one that has not happened; 0 for an NVIDIA handle made from an
    /// address, which has no shadow.
    #[cfg(feature = "checked")]
    #[must_use]
    fn arrivals(self) -> u32;
}

/// A hardware mechanism for the two signals of each pipeline slot: it lays them out in shared
/// memory, initialises them, and hands out the [`Signal`] of a slot.
///
/// A backend value is a small `Copy` description of where the barrier storage lives (pointers
/// into shared memory); every thread of a kernel holds its own copy. The arrive counts are
/// associated constants, not fields, for that reason: a count written by the one thread that
/// initialises the barriers would not be seen by the copies in other threads.
///
/// **The arrival unit.** An arrive count is the number of *threads* that call an arrive
/// method per phase, on every backend. A warp in which all 32 lanes arrive on a slot's `full`
/// signal contributes 32.
///
/// # Safety
///
/// An implementation guarantees, for storage handed to [`new`](Self::new) and initialised by
/// [`init`](Self::init):
///
/// - **Layout.** It uses exactly the [`barrier_elems`]`::<Self>(STAGES)` elements of `Storage`
///   that the layout formula gives (`full[0..STAGES)`, `empty[0..STAGES)`, then checked builds'
///   shadows), and touches no memory outside them (the diagnostics word, the last element in
///   checked builds, is the pipeline's).
/// - **Signals.** [`full`](Self::full)`(s)` and [`empty`](Self::empty)`(s)` return the same
///   signal every time for the same `s`, distinct for distinct `(side, s)`, each a [`Signal`]
///   (completion, arrival unit, ordering, no reset) whose phases complete after
///   `PRODUCER_ARRIVALS` arrivals (full) or `CONSUMER_ARRIVALS` arrivals (empty).
/// - **Constants.** `1 <= PRODUCER_ARRIVALS, CONSUMER_ARRIVALS <= MAX_ARRIVALS`, checked at
///   compile time in [`new`](Self::new) (use [`check_arrive_counts`]).
/// - **Shadows (checked builds).** `init` zeroes what [`Signal::arrivals`] reads.
pub unsafe trait PipelineBackend: Copy {
    /// One barrier's storage in shared memory (an mbarrier object, a 64-bit counter).
    type Storage;
    /// The signal of one slot, borrowed from the backend value: [`MbarrierRef`] (with the TMA
    /// extras), [`CounterRef`], or a host model.
    type Signal<'a>: Signal
    where
        Self: 'a;

    /// Threads that arrive on a slot's *full* signal per phase.
    const PRODUCER_ARRIVALS: u32;
    /// Threads that arrive on a slot's *empty* signal per phase.
    const CONSUMER_ARRIVALS: u32;
    /// The largest arrive count this backend's hardware accepts.
    const MAX_ARRIVALS: u32;

    /// `Storage` elements per stage that checked builds add for arrival shadows (NVIDIA: one
    /// 8-byte element, the two 32-bit shadows of a stage's barriers). 0 for backends whose
    /// signals are readable arrival counts.
    const SHADOW_ELEMS_PER_STAGE: usize = 0;

    /// Describes the barrier storage at `storage`.
    ///
    /// # Safety
    ///
    /// `storage` points to [`barrier_elems`]`::<Self>(STAGES)` properly aligned elements of
    /// `Storage` (in shared memory on a GPU) that stay valid, and are used for nothing else,
    /// while the returned value, any copy of it, or any signal borrowed from one exists.
    unsafe fn new<const STAGES: usize>(storage: *mut Self::Storage) -> Self;

    /// Initialises all `2 * STAGES` signals: phase 0, no arrivals.
    ///
    /// # Safety
    ///
    /// Called by exactly one thread, while no other thread uses the storage, and followed by a
    /// block-wide barrier (or, on NVIDIA clusters, `fence.mbarrier_init` and a cluster barrier)
    /// before any other thread uses it.
    unsafe fn init<const STAGES: usize>(&self);

    /// The *full* signal of slot `stage` (producers arrive, consumers wait).
    ///
    /// # Safety
    ///
    /// `stage < STAGES`, the `STAGES` this value was made with.
    #[must_use]
    unsafe fn full(&self, stage: u32) -> Self::Signal<'_>;

    /// The *empty* signal of slot `stage` (consumers arrive, producers wait).
    ///
    /// # Safety
    ///
    /// `stage < STAGES`, the `STAGES` this value was made with.
    #[must_use]
    unsafe fn empty(&self, stage: u32) -> Self::Signal<'_>;
}

/// The most shared-memory bytes the barrier region of a `stages`-stage pipeline takes over any
/// backend of this crate, in either build (with or without the `checked` feature): `2 * stages`
/// 8-byte signals, plus, in checked builds, at most one 8-byte shadow element per stage (NVIDIA)
/// and the diagnostics word. For a host program that sizes shared memory for kernels it did not
/// build itself (the device suite's harness runs both builds); a kernel uses [`barrier_bytes`].
#[must_use]
pub const fn barrier_bytes_any_build(stages: usize) -> usize {
    (3 * stages + 1) * 8
}

/// The number of `B::Storage` elements a pipeline of `stages` stages over backend `B` takes:
/// the layout formula, written once. `full[0..stages)` and `empty[0..stages)`; checked builds add
/// `B::SHADOW_ELEMS_PER_STAGE * stages` shadow elements and one diagnostics word.
#[must_use]
pub const fn barrier_elems<B: PipelineBackend>(stages: usize) -> usize {
    if cfg!(feature = "checked") {
        (2 + B::SHADOW_ELEMS_PER_STAGE) * stages + 1
    } else {
        2 * stages
    }
}

/// The shared-memory bytes of a pipeline's barrier region: [`barrier_elems`] elements of
/// `B::Storage` (`16 * stages` without the `checked` feature). Kernels size their shared memory
/// with this (or the pipelines' `SMEM_BYTES`, which is this), never with their own formula.
#[must_use]
pub const fn barrier_bytes<B: PipelineBackend>(stages: usize) -> usize {
    barrier_elems::<B>(stages) * core::mem::size_of::<B::Storage>()
}

/// Compile-time check of a backend's arrive counts; evaluate it from [`PipelineBackend::new`].
pub struct ArriveCounts<B>(core::marker::PhantomData<B>);

impl<B: PipelineBackend> ArriveCounts<B> {
    /// Fails the build when an arrive count is 0 or above `B::MAX_ARRIVALS`.
    pub const CHECK: () = {
        assert!(
            B::PRODUCER_ARRIVALS >= 1,
            "gpu-pipeline: the producer arrive count must be at least 1 (it is the number of threads that arrive on `full` per phase)"
        );
        assert!(
            B::CONSUMER_ARRIVALS >= 1,
            "gpu-pipeline: the consumer arrive count must be at least 1 (it is the number of threads that arrive on `empty` per phase)"
        );
        assert!(
            B::PRODUCER_ARRIVALS <= B::MAX_ARRIVALS,
            "gpu-pipeline: the producer arrive count is above the backend's maximum (mbarrier: 2^20 - 1; counter backends: 1024 threads)"
        );
        assert!(
            B::CONSUMER_ARRIVALS <= B::MAX_ARRIVALS,
            "gpu-pipeline: the consumer arrive count is above the backend's maximum (mbarrier: 2^20 - 1; counter backends: 1024 threads)"
        );
    };
}

/// Evaluates [`ArriveCounts::CHECK`] for `B`: call it in every backend's `new`.
#[inline(always)]
pub const fn check_arrive_counts<B: PipelineBackend>() {
    let () = ArriveCounts::<B>::CHECK;
}

/// The natural backend of the target being compiled, with the given arrive counts:
/// [`NvidiaMbarBackend`] on nvptx64, [`AmdCounterBackend`] on
/// amdgcn, [`HostMbarBackend`] on the host (with the `std` feature).
#[cfg(target_arch = "nvptx64")]
pub type DefaultBackend<const PRODUCER_ARRIVALS: u32, const CONSUMER_ARRIVALS: u32> =
    NvidiaMbarBackend<PRODUCER_ARRIVALS, CONSUMER_ARRIVALS>;

/// The natural backend of the target being compiled, with the given arrive counts:
/// [`NvidiaMbarBackend`] on nvptx64, [`AmdCounterBackend`] on
/// amdgcn, [`HostMbarBackend`] on the host (with the `std` feature).
#[cfg(target_arch = "amdgpu")]
pub type DefaultBackend<const PRODUCER_ARRIVALS: u32, const CONSUMER_ARRIVALS: u32> =
    AmdCounterBackend<PRODUCER_ARRIVALS, CONSUMER_ARRIVALS>;

/// The natural backend of the target being compiled, with the given arrive counts:
/// [`NvidiaMbarBackend`] on nvptx64, [`AmdCounterBackend`] on
/// amdgcn, [`HostMbarBackend`] on the host (with the `std` feature).
#[cfg(all(
    not(any(target_arch = "nvptx64", target_arch = "amdgpu")),
    any(feature = "std", test)
))]
pub type DefaultBackend<const PRODUCER_ARRIVALS: u32, const CONSUMER_ARRIVALS: u32> =
    HostMbarBackend<PRODUCER_ARRIVALS, CONSUMER_ARRIVALS>;

#[cfg(test)]
mod tests {
    use super::*;

    /// The bound covers every backend of the crate in this build (the tests run with and without
    /// the `checked` feature).
    #[test]
    fn barrier_bytes_any_build_bounds_every_backend() {
        for stages in 1..=16 {
            let bound = barrier_bytes_any_build(stages);
            assert!(barrier_bytes::<NvidiaMbarBackend<1, 1>>(stages) <= bound);
            assert!(barrier_bytes::<NvidiaMbarBackend<1, 1, Cluster>>(stages) <= bound);
            assert!(barrier_bytes::<CounterBackend<1, 1>>(stages) <= bound);
            assert!(barrier_bytes::<HostMbarBackend<1, 1>>(stages) <= bound);
            assert!(barrier_bytes::<HostCounterBackend<1, 1>>(stages) <= bound);
        }
        if cfg!(feature = "checked") {
            assert_eq!(
                barrier_bytes::<NvidiaMbarBackend<1, 1>>(4),
                barrier_bytes_any_build(4)
            );
        }
    }
}
