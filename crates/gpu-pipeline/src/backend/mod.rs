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

pub use counter::{AmdCounterBackend, CounterRef, lds_data_fence};
#[cfg(any(feature = "std", test))]
pub use host::{HostCounterBackend, HostCounterSignal, HostMbarBackend, HostMbarrier};
pub use nvidia::{
    Cluster, Cta, MbarScope, Mbarrier, MbarrierRef, NvidiaMbarBackend, fence_proxy_async,
};

/// The arrive-count limit of mbarrier: `mbarrier.init` takes a count in `1..=2^20 - 1`
/// (PTX ISA, "Parallel Synchronization and Communication Instructions: mbarrier.init" and
/// "Contents of the mbarrier object": the expected arrival count is at most 2^20 - 1).
pub const MAX_MBARRIER_ARRIVALS: u32 = (1 << 20) - 1;

pub use crate::threshold::MAX_COUNTER_ARRIVALS;

/// A hardware mechanism for the two signals of each pipeline slot.
///
/// A backend value is a small `Copy` description of where the barrier storage lives (pointers
/// into shared memory); every thread of a kernel holds its own copy. The arrive counts are
/// associated constants, not fields, for that reason: a count written by the one thread that
/// initialises the barriers would not be seen by the copies in other threads.
///
/// **The arrival unit.** An arrive count is the number of *threads* that call an arrive
/// method per phase, on every backend. A warp in which all 32 lanes call
/// [`arrive_full`](Self::arrive_full) contributes 32.
///
/// **Laps.** `wait_*` and `try_*` take the waiting side's lap, as kept by
/// [`Cursor`](crate::Cursor): a consumer on lap `p` waits for the `(p + 1)`-th completion of
/// `full[stage]`; a producer on lap `q` (which starts at 1) waits for the `(q - 1)`-th
/// completion of `empty[stage]`, so its first pass never blocks.
///
/// # Safety
///
/// An implementation guarantees, for storage handed to [`new`](Self::new) and initialised by
/// [`init`](Self::init):
///
/// - **Layout.** It uses exactly [`storage_elems`](Self::storage_elems)`(STAGES)` elements of
///   `Storage`: `full[0..STAGES)` then `empty[0..STAGES)`, and touches no memory outside them.
/// - **Completion.** A wait for lap `l` returns, and a try for lap `l` returns `true`, only
///   after the signal has received `(l + 1) * PRODUCER_ARRIVALS` arrivals in total (full), or
///   `(l - 1) * CONSUMER_ARRIVALS` (empty), counting modulo the backend's period; and a wait
///   returns once that many arrivals have happened (no lost wake-up).
/// - **Arrival unit.** Each thread that calls `arrive_*` counts exactly one arrival.
/// - **Memory ordering.** An arrive is a *release* and a wait or successful try is an
///   *acquire*, at least at thread-block scope: memory operations a thread performed before
///   its arrive happen before the memory operations a waiter performs after the wait that
///   the arrive helped complete.
/// - **No reset.** Nothing but `init` reinitialises a signal; arrivals are never lost.
/// - **Constants.** `1 <= PRODUCER_ARRIVALS, CONSUMER_ARRIVALS <= MAX_ARRIVALS`, checked at
///   compile time in [`new`](Self::new) (use [`check_arrive_counts`]).
/// - **Shadows (checked builds).** `arrivals_full`/`arrivals_empty` count every arrival made
///   through the backend and the handles it gives out, never one that has not happened (an
///   increment may follow its arrival, and be seen late). `init` zeroes them.
pub unsafe trait PipelineBackend: Copy {
    /// One barrier's storage in shared memory (an mbarrier object, a 64-bit counter).
    type Storage;
    /// What [`full_handle`](Self::full_handle) and [`empty_handle`](Self::empty_handle) return:
    /// a reference to one barrier, with the backend's extras (NVIDIA: TMA `expect_tx`).
    type Handle: Copy;

    /// Threads that arrive on a slot's *full* signal per phase.
    const PRODUCER_ARRIVALS: u32;
    /// Threads that arrive on a slot's *empty* signal per phase.
    const CONSUMER_ARRIVALS: u32;
    /// The largest arrive count this backend's hardware accepts.
    const MAX_ARRIVALS: u32;

    /// `Storage` elements per stage for the two signals: 2 (one each), more for a backend that
    /// pads its signals apart.
    const ELEMS_PER_STAGE: usize = 2;

    /// `Storage` elements per stage that checked builds add for arrival shadows (NVIDIA: one
    /// 8-byte element, the two 32-bit shadows of a stage's barriers). 0 for backends whose
    /// signals are readable arrival counts.
    const SHADOW_ELEMS_PER_STAGE: usize = 0;

    /// The number of `Storage` elements the backend uses for `stages` stages:
    /// `ELEMS_PER_STAGE * stages`, plus `SHADOW_ELEMS_PER_STAGE * stages` in checked builds.
    /// Derived from the constants; implementations set those, not this.
    #[inline(always)]
    #[must_use]
    fn storage_elems(stages: usize) -> usize {
        if cfg!(feature = "checked") {
            (Self::ELEMS_PER_STAGE + Self::SHADOW_ELEMS_PER_STAGE) * stages
        } else {
            Self::ELEMS_PER_STAGE * stages
        }
    }

    /// Describes the barrier storage at `storage`.
    ///
    /// # Safety
    ///
    /// `storage` points to `storage_elems(STAGES)` properly aligned elements of `Storage`
    /// (in shared memory on a GPU) that stay valid, and are used for nothing else, while any
    /// copy of the returned value is used.
    unsafe fn new<const STAGES: usize>(storage: *mut Self::Storage) -> Self;

    /// Initialises all `2 * STAGES` signals: phase 0, no arrivals.
    ///
    /// # Safety
    ///
    /// Called by exactly one thread, while no other thread uses the storage, and followed by a
    /// block-wide barrier (or, on NVIDIA clusters, `fence.mbarrier_init` and a cluster barrier)
    /// before any other thread uses it.
    unsafe fn init<const STAGES: usize>(&self);

    /// Blocks until `full[stage]` completed the lap a consumer on `lap` needs.
    /// `ticks` is a suspend-time hint in nanoseconds; backends without one ignore it.
    ///
    /// # Safety
    ///
    /// `stage < STAGES`, the `STAGES` this value was made with.
    unsafe fn wait_full(&self, stage: u32, lap: u32, ticks: Option<u32>);
    /// Blocks until `empty[stage]` completed the lap a producer on `lap` needs.
    ///
    /// # Safety
    ///
    /// `stage < STAGES`, the `STAGES` this value was made with.
    unsafe fn wait_empty(&self, stage: u32, lap: u32, ticks: Option<u32>);
    /// Whether `full[stage]` has completed the lap a consumer on `lap` needs. Never blocks for long.
    ///
    /// # Safety
    ///
    /// `stage < STAGES`, the `STAGES` this value was made with.
    #[must_use]
    unsafe fn try_full(&self, stage: u32, lap: u32) -> bool;
    /// Whether `empty[stage]` has completed the lap a producer on `lap` needs.
    ///
    /// # Safety
    ///
    /// `stage < STAGES`, the `STAGES` this value was made with.
    #[must_use]
    unsafe fn try_empty(&self, stage: u32, lap: u32) -> bool;
    /// The calling thread arrives on `full[stage]` (release).
    ///
    /// # Safety
    ///
    /// `stage < STAGES`, the `STAGES` this value was made with.
    unsafe fn arrive_full(&self, stage: u32);
    /// The calling thread arrives on `empty[stage]` (release).
    ///
    /// # Safety
    ///
    /// `stage < STAGES`, the `STAGES` this value was made with.
    unsafe fn arrive_empty(&self, stage: u32);
    /// A handle to `full[stage]`.
    ///
    /// # Safety
    ///
    /// `stage < STAGES`, the `STAGES` this value was made with.
    #[must_use]
    unsafe fn full_handle(&self, stage: u32) -> Self::Handle;
    /// A handle to `empty[stage]`.
    ///
    /// # Safety
    ///
    /// `stage < STAGES`, the `STAGES` this value was made with.
    #[must_use]
    unsafe fn empty_handle(&self, stage: u32) -> Self::Handle;

    /// Checked builds: the arrivals `full[stage]` has received since `init`, modulo 2^32,
    /// counting every arrival made through this backend and its handles.
    ///
    /// # Safety
    ///
    /// `stage < STAGES`, the `STAGES` this value was made with.
    #[cfg(feature = "checked")]
    #[must_use]
    unsafe fn arrivals_full(&self, stage: u32) -> u32;

    /// Checked builds: the arrivals `empty[stage]` has received since `init`, modulo 2^32.
    ///
    /// # Safety
    ///
    /// `stage < STAGES`, the `STAGES` this value was made with.
    #[cfg(feature = "checked")]
    #[must_use]
    unsafe fn arrivals_empty(&self, stage: u32) -> u32;
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
