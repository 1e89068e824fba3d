//! Stage handles: linear-style values that must be released exactly once.
//!
//! [`ProducerStage`] and [`ConsumerStage`] borrow the pipeline mutably for as long as they live,
//! so no other stage of the same pipeline value can be acquired meanwhile, and are consumed by
//! `release(self)` or `release_without_signal(self)`: a released handle cannot be used again
//! (it has moved).
//!
//! # Dropping a handle without releasing it
//!
//! Forgetting to release a stage leaves the other side waiting forever: the classic silent hang.
//! So a handle must not simply be dropped.
//!
//! - **With `panic = "abort"` (every GPU target)** dropping a handle **fails to compile**. The
//!   `Drop` impl refers to an associated constant whose evaluation panics, and rustc evaluates it
//!   exactly when it instantiates the handle's drop glue: when some code path of the kernel drops
//!   a handle. The release methods move the handle into `ManuallyDrop`, so a released handle has
//!   no drop. Under `panic = "abort"` there are no unwinding paths, so a handle alive across a
//!   call that may panic does not create a drop either: the only drops are the ones written (or
//!   implied by a branch that forgets to release).
//!   This is the rustc "mentioned items" rule: constants used by any function that is
//!   instantiated are evaluated, even on paths the optimiser would delete, so the error does not
//!   depend on the optimisation level. The check is sound in the sense that it never accepts a
//!   drop; `core::mem::forget` remains possible (leaking is safe in Rust) and is the user's choice.
//! - **With `panic = "unwind"` (host tests)** the drop is caught at run time: it panics with the
//!   same message (unless the thread is already panicking, with the `std` feature).

#[cfg(panic = "abort")]
use core::marker::PhantomData;
use core::mem::ManuallyDrop;

use crate::backend::PipelineBackend;
use crate::pipeline::ProducerConsumerPipeline;

/// The slot a `produce`/`consume` scope runs on: its index and its barrier.
///
/// A scope signals on exit, so the view offers no `arrive`.
#[derive(Clone, Copy, Debug)]
pub struct StageView<B: PipelineBackend> {
    index: u32,
    barrier: B::Handle,
}

impl<B: PipelineBackend> StageView<B> {
    /// The slot index, in `0..STAGES`.
    #[inline(always)]
    #[must_use]
    pub fn index(&self) -> u32 {
        self.index
    }

    /// The slot's barrier: `full` in a `produce` scope, `empty` in a `consume` scope.
    #[doc(alias = "mbar")]
    #[inline(always)]
    #[must_use]
    pub fn barrier(&self) -> B::Handle {
        self.barrier
    }
}

/// Fails the build when evaluated; see the module docs.
#[cfg(panic = "abort")]
struct DropCheck<T>(PhantomData<T>);

#[cfg(panic = "abort")]
impl<T> DropCheck<T> {
    const PRODUCER_STAGE_DROPPED: () = panic!(
        "gpu-pipeline: a ProducerStage is dropped without being released. Call `release()` (signal full and step) or `release_without_signal()` on every path, or use `produce(|stage| ...)`; a stage that is never released hangs the consumers."
    );
    const CONSUMER_STAGE_DROPPED: () = panic!(
        "gpu-pipeline: a ConsumerStage is dropped without being released. Call `release()` (signal empty and step) or `release_without_signal()` on every path, or use `consume(|stage| ...)`; a stage that is never released hangs the producer."
    );
}

/// Reports a dropped handle at run time, where unwinding makes the compile-time check impossible.
#[cfg(not(panic = "abort"))]
#[cold]
#[track_caller]
fn dropped_at_run_time(what: &str, side: &str) {
    #[cfg(feature = "std")]
    if std::thread::panicking() {
        return;
    }
    panic!(
        "gpu-pipeline: a {what} was dropped without being released; call `release()` or `release_without_signal()` on every path (a stage that is never released hangs the {side})"
    );
}

/// A producer's hold on one free slot, from [`ProducerConsumerPipeline::acquire_producer`].
///
/// Fill the slot `index()`, then [`release`](Self::release) it: that signals `full` and steps
/// the producer. For producers whose arrival is made otherwise (one lane's
/// `arrive_expect_tx` for TMA, lane-guarded [`arrive`](Self::arrive)), use
/// [`release_without_signal`](Self::release_without_signal).
///
/// Unlike Mojo's `ProducerStage.release()`, which only steps, `release` here signals: the common
/// case cannot forget the signal.
#[must_use = "a ProducerStage must be released with `release()` or `release_without_signal()`: a stage that is never released hangs the consumers"]
pub struct ProducerStage<'p, const STAGES: usize, B: PipelineBackend> {
    pipeline: &'p mut ProducerConsumerPipeline<STAGES, B>,
    index: u32,
}

impl<'p, const STAGES: usize, B: PipelineBackend> ProducerStage<'p, STAGES, B> {
    #[inline(always)]
    pub(crate) fn new(pipeline: &'p mut ProducerConsumerPipeline<STAGES, B>) -> Self {
        let index = pipeline.producer_stage();
        Self { pipeline, index }
    }

    /// The slot index, in `0..STAGES`.
    #[inline(always)]
    #[must_use]
    pub fn index(&self) -> u32 {
        self.index
    }

    /// The slot's `full` barrier, for signalling through hardware extras (NVIDIA: TMA
    /// `arrive_expect_tx` and bulk copies completing on it).
    #[doc(alias = "mbar")]
    #[inline(always)]
    #[must_use]
    pub fn barrier(&self) -> B::Handle {
        // SAFETY: a stage handle's index is the cursor's stage, below STAGES.
        unsafe { self.pipeline.backend().full_handle(self.index) }
    }

    /// The calling thread arrives on the slot's `full` barrier, for lane-guarded signalling;
    /// finish with [`release_without_signal`](Self::release_without_signal).
    #[inline(always)]
    pub fn arrive(&self) {
        // SAFETY: a stage handle's index is the cursor's stage, below STAGES.
        unsafe { self.pipeline.backend().arrive_full(self.index) };
    }

    /// A copyable view of the slot (index and barrier).
    #[inline(always)]
    #[must_use]
    pub fn view(&self) -> StageView<B> {
        StageView {
            index: self.index,
            barrier: self.barrier(),
        }
    }

    /// Signals `full` (the calling thread arrives) and steps the producer.
    #[doc(alias = "commit")]
    #[inline(always)]
    pub fn release(self) {
        let this = ManuallyDrop::new(self);
        // SAFETY: a stage handle's index is the cursor's stage, below STAGES.
        unsafe { this.pipeline.backend().arrive_full(this.index) };
        // SAFETY: `this` is never used or dropped again; the reference is moved out once.
        let pipeline = unsafe { core::ptr::read(&this.pipeline) };
        pipeline.producer_step();
    }

    /// Steps the producer without signalling: the arrivals were made otherwise.
    #[inline(always)]
    pub fn release_without_signal(self) {
        let this = ManuallyDrop::new(self);
        // SAFETY: `this` is never used or dropped again; the reference is moved out once.
        let pipeline = unsafe { core::ptr::read(&this.pipeline) };
        pipeline.producer_step();
    }
}

impl<const STAGES: usize, B: PipelineBackend> Drop for ProducerStage<'_, STAGES, B> {
    #[inline(always)]
    fn drop(&mut self) {
        #[cfg(panic = "abort")]
        let () = DropCheck::<Self>::PRODUCER_STAGE_DROPPED;
        #[cfg(not(panic = "abort"))]
        dropped_at_run_time("ProducerStage", "consumers");
    }
}

/// A consumer's hold on one filled slot, from [`ProducerConsumerPipeline::acquire_consumer`].
///
/// Read the slot `index()`, then [`release`](Self::release) it: that signals `empty` and steps
/// the consumer. For lane-guarded signalling, call [`arrive`](Self::arrive) from the lanes that
/// count and finish with [`release_without_signal`](Self::release_without_signal).
#[must_use = "a ConsumerStage must be released with `release()` or `release_without_signal()`: a stage that is never released hangs the producer"]
pub struct ConsumerStage<'p, const STAGES: usize, B: PipelineBackend> {
    pipeline: &'p mut ProducerConsumerPipeline<STAGES, B>,
    index: u32,
}

impl<'p, const STAGES: usize, B: PipelineBackend> ConsumerStage<'p, STAGES, B> {
    #[inline(always)]
    pub(crate) fn new(pipeline: &'p mut ProducerConsumerPipeline<STAGES, B>) -> Self {
        let index = pipeline.consumer_stage();
        Self { pipeline, index }
    }

    /// The slot index, in `0..STAGES`.
    #[inline(always)]
    #[must_use]
    pub fn index(&self) -> u32 {
        self.index
    }

    /// The slot's `empty` barrier, for specialised signalling (for example an arrival on a
    /// cluster peer's barrier).
    #[doc(alias = "mbar")]
    #[inline(always)]
    #[must_use]
    pub fn barrier(&self) -> B::Handle {
        // SAFETY: a stage handle's index is the cursor's stage, below STAGES.
        unsafe { self.pipeline.backend().empty_handle(self.index) }
    }

    /// The calling thread arrives on the slot's `empty` barrier, for lane-guarded signalling:
    /// `if lane < n { stage.arrive() }` then [`release_without_signal`](Self::release_without_signal).
    #[inline(always)]
    pub fn arrive(&self) {
        // SAFETY: a stage handle's index is the cursor's stage, below STAGES.
        unsafe { self.pipeline.backend().arrive_empty(self.index) };
    }

    /// A copyable view of the slot (index and barrier).
    #[inline(always)]
    #[must_use]
    pub fn view(&self) -> StageView<B> {
        StageView {
            index: self.index,
            barrier: self.barrier(),
        }
    }

    /// Signals `empty` (the calling thread arrives) and steps the consumer.
    #[inline(always)]
    pub fn release(self) {
        let this = ManuallyDrop::new(self);
        // SAFETY: a stage handle's index is the cursor's stage, below STAGES.
        unsafe { this.pipeline.backend().arrive_empty(this.index) };
        // SAFETY: `this` is never used or dropped again; the reference is moved out once.
        let pipeline = unsafe { core::ptr::read(&this.pipeline) };
        pipeline.consumer_step();
    }

    /// Steps the consumer without signalling: the arrivals were made with
    /// [`arrive`](Self::arrive) or through the barrier.
    #[inline(always)]
    pub fn release_without_signal(self) {
        let this = ManuallyDrop::new(self);
        // SAFETY: `this` is never used or dropped again; the reference is moved out once.
        let pipeline = unsafe { core::ptr::read(&this.pipeline) };
        pipeline.consumer_step();
    }
}

impl<const STAGES: usize, B: PipelineBackend> Drop for ConsumerStage<'_, STAGES, B> {
    #[inline(always)]
    fn drop(&mut self) {
        #[cfg(panic = "abort")]
        let () = DropCheck::<Self>::CONSUMER_STAGE_DROPPED;
        #[cfg(not(panic = "abort"))]
        dropped_at_run_time("ConsumerStage", "producer");
    }
}
