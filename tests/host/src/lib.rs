//! Shared helpers of the host tests of `gpu-pipeline`; the tests themselves live in `tests/`.
//!
//! - [`Ring`]: owns the barrier storage and the slots of one pipeline, initialises the barriers,
//!   and hands out pipeline values (one per thread) and slots.
//! - [`Slot`]: a slot cell without synchronisation of its own (`std`'s `UnsafeCell`, or loom's
//!   under `--cfg loom`), so that a protocol bug is a real data race (and a loom failure).
//! - [`HostBackend`]: what the tests need to know about the two host backends beyond
//!   [`PipelineBackend`]: a name, and how many phases a signal completed.
//! - [`XorShift64`] and [`seed_from_time`]: fresh payload data every run.
//! - [`run_with_watchdog`] (not under loom): runs worker threads and fails with a message naming
//!   the configuration, instead of hanging, when they stop making progress (no item moved for a
//!   stall window, [`STALL`] in the tests), however long the whole run takes.
//!
//! The same code compiles with and without `--cfg loom`: barrier storage is allocated through
//! [`PipelineBackend::Storage`], which the library switches to loom's atomics.

use core::mem::MaybeUninit;

use gpu_pipeline::{
    HostCounterBackend, HostCounterSignal, HostMbarBackend, HostMbarrier, PipelineBackend,
    ProducerConsumerPipeline,
};

#[cfg(loom)]
use loom::cell::UnsafeCell;
#[cfg(not(loom))]
use std::cell::UnsafeCell;

// ------------------------------------------------------------------------------------ slots

/// One slot of a ring: plain memory without synchronisation of its own.
///
/// Every access is `unsafe`: the caller promises that the pipeline protocol orders it against
/// every conflicting access. Under loom the cell checks that promise (a conflicting access that
/// is not ordered by happens-before fails the model).
pub struct Slot<T>(UnsafeCell<T>);

impl<T> Slot<T> {
    /// A slot holding `value`.
    pub fn new(value: T) -> Self {
        Self(UnsafeCell::new(value))
    }

    /// Reads the slot through `f`.
    ///
    /// # Safety
    ///
    /// No write to this slot may be concurrent with the call (the caller holds the slot as a
    /// consumer after its wait, or as the only producer writing that part of it).
    pub unsafe fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        #[cfg(loom)]
        return self.0.with(f);
        #[cfg(not(loom))]
        return f(self.0.get());
    }

    /// Writes the slot through `f`.
    ///
    /// # Safety
    ///
    /// No access to the parts of the slot that `f` touches may be concurrent with the call.
    pub unsafe fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        #[cfg(loom)]
        return self.0.with_mut(f);
        #[cfg(not(loom))]
        return f(self.0.get());
    }
}

// SAFETY: a `Slot` is shared between producer and consumer threads by design; every access
// goes through the `unsafe` methods above, whose callers order them with the pipeline.
unsafe impl<T: Send> Sync for Slot<T> {}

// ------------------------------------------------------------------------------------ ring

/// A raw pointer that may cross threads, for code that hands barrier storage to threads itself.
#[derive(Clone, Copy, Debug)]
pub struct SendPtr<T>(pub *mut T);

// SAFETY: the pointer is only a value; whoever dereferences it answers for the access.
unsafe impl<T> Send for SendPtr<T> {}
// SAFETY: as above.
unsafe impl<T> Sync for SendPtr<T> {}

/// The barrier storage and the slots of one pipeline of `STAGES` stages over backend `B`.
///
/// [`Ring::new`] allocates and initialises the barriers (the calling thread is the one thread
/// that runs `init`); threads spawned afterwards are ordered after the initialisation by the
/// spawn, which plays the block barrier. Share the ring with `Arc` (it is `Sync`), and make
/// one pipeline value per thread with [`pipeline`](Self::pipeline).
pub struct Ring<const STAGES: usize, B: PipelineBackend, T> {
    /// `STORAGE_ELEMS` storage elements from `Box::into_raw`, freed in `Drop`.
    barriers: *mut [MaybeUninit<B::Storage>],
    slots: Box<[Slot<T>]>,
}

// SAFETY: the barrier storage is only touched through the backend (atomics); the slots are
// `Sync` when their contents may be sent.
unsafe impl<const STAGES: usize, B: PipelineBackend, T: Send> Sync for Ring<STAGES, B, T> {}
// SAFETY: the ring owns its allocations.
unsafe impl<const STAGES: usize, B: PipelineBackend, T: Send> Send for Ring<STAGES, B, T> {}

impl<const STAGES: usize, B: PipelineBackend, T> Ring<STAGES, B, T> {
    /// A ring whose slots hold `slot(index)`, with freshly initialised barriers.
    pub fn new(slot: impl FnMut(usize) -> T) -> Self {
        Self::with_diagnostics(slot, gpu_pipeline::Diagnostics::DEFAULT)
    }

    /// As [`new`](Self::new), initialised with `diagnostics` (label and wait budget of checked
    /// builds).
    pub fn with_diagnostics(
        mut slot: impl FnMut(usize) -> T,
        diagnostics: gpu_pipeline::Diagnostics,
    ) -> Self {
        let elems = ProducerConsumerPipeline::<STAGES, B>::STORAGE_ELEMS;
        assert_eq!(elems, gpu_pipeline::barrier_elems::<B>(STAGES));
        let barriers = Box::into_raw(Box::<[B::Storage]>::new_uninit_slice(elems));
        let ring = Self {
            barriers,
            slots: (0..STAGES).map(|i| Slot::new(slot(i))).collect(),
        };
        // SAFETY: the storage is fresh and owned by this thread; no other thread can see it yet.
        unsafe { ring.pipeline().init_with(diagnostics) };
        ring
    }

    /// The barrier storage, as the pipeline constructor takes it.
    pub fn barrier_ptr(&self) -> SendPtr<B::Storage> {
        SendPtr(self.barriers.cast::<B::Storage>())
    }

    /// A pipeline value over this ring's barriers, both cursors at the start.
    ///
    /// # Safety
    ///
    /// The value must not be used after the ring is dropped (keep an `Arc` of the ring beside
    /// it), and every thread that uses a side must be counted in that side's arrive count and
    /// pass every stage (the contract of [`ProducerConsumerPipeline::new`]).
    pub unsafe fn pipeline(&self) -> ProducerConsumerPipeline<STAGES, B> {
        // SAFETY: `2 * STAGES` aligned elements that live as long as the ring; the rest is the
        // caller's promise.
        unsafe { ProducerConsumerPipeline::new(self.barrier_ptr().0) }
    }

    /// Slot `index` (a stage index from the pipeline).
    pub fn slot(&self, index: u32) -> &Slot<T> {
        &self.slots[index as usize]
    }
}

impl<const STAGES: usize, B: PipelineBackend, T> Drop for Ring<STAGES, B, T> {
    fn drop(&mut self) {
        // SAFETY: `barriers` came from `Box::into_raw` and is freed once, here. The elements
        // are `MaybeUninit`, so nothing is dropped in them.
        drop(unsafe { Box::from_raw(self.barriers) });
    }
}

// ------------------------------------------------------------------------------------ backends

/// A host backend, as the tests see it: a name and a read-out of its signals.
pub trait HostBackend: PipelineBackend + Send + Sync + 'static {
    /// The backend's type name, for messages.
    const NAME: &'static str;

    /// How many phases (laps) the signal behind `handle` completed, given its arrive count.
    /// The mbarrier model: its phase count. The counter backend: value / arrivals.
    fn completed_phases(handle: &Self::Signal<'_>, arrivals: u32) -> u64;

    /// How many arrivals the signal's current, incomplete phase has received.
    /// The mbarrier model: arrivals - pending. The counter backend: value % arrivals.
    fn arrivals_in_phase(handle: &Self::Signal<'_>, arrivals: u32) -> u32;
}

impl<const P: u32, const C: u32> HostBackend for HostMbarBackend<P, C> {
    const NAME: &'static str = "HostMbarBackend";

    fn completed_phases(handle: &HostMbarrier<'_>, _arrivals: u32) -> u64 {
        u64::from(handle.phase())
    }

    fn arrivals_in_phase(handle: &HostMbarrier<'_>, arrivals: u32) -> u32 {
        arrivals - handle.pending()
    }
}

impl<const P: u32, const C: u32> HostBackend for HostCounterBackend<P, C> {
    const NAME: &'static str = "HostCounterBackend";

    fn completed_phases(handle: &HostCounterSignal<'_>, arrivals: u32) -> u64 {
        handle.value() / u64::from(arrivals)
    }

    fn arrivals_in_phase(handle: &HostCounterSignal<'_>, arrivals: u32) -> u32 {
        (handle.value() % u64::from(arrivals)) as u32
    }
}

/// The state of one signal: (completed phases, arrivals in the current phase).
pub fn signal_state<B: HostBackend>(handle: &B::Signal<'_>, arrivals: u32) -> (u64, u32) {
    (
        B::completed_phases(handle, arrivals),
        B::arrivals_in_phase(handle, arrivals),
    )
}

// ------------------------------------------------------------------------------------ data

/// Marsaglia's xorshift64: a small, fast, seedable generator for payload values.
#[derive(Clone, Copy, Debug)]
pub struct XorShift64(u64);

impl XorShift64 {
    /// A generator; a zero seed (the one fixed point of xorshift) is replaced.
    pub fn new(seed: u64) -> Self {
        Self(if seed == 0 {
            0x9e37_79b9_7f4a_7c15
        } else {
            seed
        })
    }

    /// The next value (never 0).
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
}

/// A seed from the clock, different on every run (print it in failure messages).
pub fn seed_from_time() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    // Mix in a per-call counter so that runs started in the same clock tick differ.
    static CALLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mut mix = XorShift64::new(nanos ^ call.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    mix.next();
    mix.next()
}

// ------------------------------------------------------------------------------------ watchdog

/// A worker thread for [`run_with_watchdog`]: a name for messages and its body.
#[cfg(not(loom))]
pub type Worker<R> = (String, Box<dyn FnOnce() -> R + Send>);

/// The stall window of the host tests: a run in which no item moved for this long has hung.
///
/// A healthy item takes microseconds; a loaded machine (a cargo build beside the tests) may
/// deschedule a thread for a while, but not for seconds on end. A run that is merely slow keeps
/// moving and is never failed, however long it takes.
#[cfg(not(loom))]
pub const STALL: std::time::Duration = std::time::Duration::from_secs(20);

/// Runs `workers` on their own threads and returns their results in order.
///
/// Fails (panics) with a message that names `config` when a worker panics, or when the run stops
/// making progress: `progress` returns a count of the items moved so far (by all workers
/// together; any count that changes whenever an item moves will do) and a description of how
/// far each worker got, and the run fails when neither that count changed nor a worker finished
/// for `stall`. The whole run may take as long as it needs, so a loaded machine slows a run down
/// without failing it. The threads of a run that stalled are left behind (they own what they
/// use), so a hang becomes a failed test, not a hung test binary.
#[cfg(not(loom))]
pub fn run_with_watchdog<R: Send + 'static>(
    config: &str,
    stall: std::time::Duration,
    workers: Vec<Worker<R>>,
    progress: impl Fn() -> (u64, String),
) -> Vec<R> {
    use std::panic::{AssertUnwindSafe, catch_unwind};
    use std::sync::mpsc::{self, RecvTimeoutError};
    use std::time::{Duration, Instant};

    let started = Instant::now();
    let count = workers.len();
    let (tx, rx) = mpsc::channel();
    let mut names = Vec::with_capacity(count);
    let mut handles = Vec::with_capacity(count);
    for (index, (name, body)) in workers.into_iter().enumerate() {
        names.push(name.clone());
        let tx = tx.clone();
        let handle = std::thread::Builder::new()
            .name(name)
            .spawn(move || {
                let outcome = catch_unwind(AssertUnwindSafe(body));
                // The receiver is gone only when the run already failed.
                let _ = tx.send((index, outcome));
            })
            .expect("spawning a worker thread");
        handles.push(handle);
    }
    drop(tx);

    // The progress count is sampled a few times per stall window; the window restarts whenever
    // the count changed or a worker finished since the last sample.
    let poll = (stall / 4).clamp(Duration::from_millis(1), Duration::from_millis(250));
    let mut moved = progress().0;
    let mut last_move = Instant::now();
    let mut results: Vec<Option<R>> = (0..count).map(|_| None).collect();
    let mut finished = 0;
    while finished < count {
        match rx.recv_timeout(poll) {
            Ok((index, Ok(result))) => {
                results[index] = Some(result);
                finished += 1;
                last_move = Instant::now();
            }
            Ok((index, Err(payload))) => {
                let message = payload
                    .downcast_ref::<String>()
                    .map(String::as_str)
                    .or_else(|| payload.downcast_ref::<&str>().copied())
                    .unwrap_or("(non-string panic payload)");
                panic!("{config}: worker `{}` panicked: {message}", names[index]);
            }
            Err(RecvTimeoutError::Timeout) => {
                let (now_moved, description) = progress();
                if now_moved != moved {
                    moved = now_moved;
                    last_move = Instant::now();
                } else if last_move.elapsed() >= stall {
                    let missing: Vec<&str> = results
                        .iter()
                        .zip(&names)
                        .filter(|(result, _)| result.is_none())
                        .map(|(_, name)| name.as_str())
                        .collect();
                    panic!(
                        "watchdog: {config}: no progress for {stall:?} (stuck at {moved} items moved, {:.1?} into the run); still running: {missing:?}; progress: {description}",
                        started.elapsed()
                    );
                }
            }
            Err(RecvTimeoutError::Disconnected) => {
                unreachable!("every worker reports before it drops its sender")
            }
        }
    }
    for handle in handles {
        handle
            .join()
            .expect("a worker that reported its result cannot panic afterwards");
    }
    results
        .into_iter()
        .map(|result| result.expect("every worker reported"))
        .collect()
}
