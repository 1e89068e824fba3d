//! [`ProducerConsumerPipeline`]: the protocol, over any [`PipelineBackend`].

use crate::backend::PipelineBackend;
use crate::checked::{Call, Diagnostics};
use crate::cursor::{Consumer, Cursor, Producer, StageCount};
use crate::stage::{ConsumerStage, ProducerStage, StageView};

#[cfg(feature = "checked")]
use crate::checked::{self, DiagnosticsWord, Fault, NO_SUB_STAGE};
use crate::checked::{ROLE_CONSUMER, ROLE_PRODUCER};
#[cfg(feature = "checked")]
use core::panic::Location;

/// A ring of `STAGES` shared-memory slots between producer threads and consumer threads,
/// synchronised by backend `B` (whose type carries the arrive counts).
///
/// Every thread of the kernel holds its own value, made by [`new`](Self::new) from the same
/// barrier storage; one thread calls [`init`](Self::init) and a block barrier follows. A thread
/// then uses one side: producer threads the `producer_*`/`wait_consumer`/`acquire_producer`/
/// `produce` methods, consumer threads the `consumer_*`/`wait_producer`/`acquire_consumer`/
/// `consume` methods. Each side keeps its own [`Cursor`].
///
/// The slot memory itself is the kernel's: index it with the stage index.
///
/// # Memory ordering
///
/// What producer threads write to slot `s` before signalling `full[s]` (a handle's `release`,
/// [`producer_signal`](Self::producer_signal), ...) is visible to consumer threads after their
/// wait on `full[s]` for that lap returns; what consumers read or write before signalling
/// `empty[s]` happens before the producer's next writes to slot `s` after its wait returns.
/// Scope and proxy details are the backend's (see its docs: NVIDIA needs
/// [`fence_proxy_async`](crate::fence_proxy_async) between generic and async-proxy accesses).
///
/// # Checked builds
///
/// With the `checked` feature every wait is bounded and every arrival counted; a hang or a wrong
/// arrival count stops the kernel with a record naming this pipeline, the role, stage, lap and
/// the source line of the call (see [`checked`](crate::checked)). The storage then takes
/// [`STORAGE_ELEMS`](Self::STORAGE_ELEMS) elements, more than `2 * STAGES`.
pub struct ProducerConsumerPipeline<const STAGES: usize, B: PipelineBackend> {
    backend: B,
    producer: Cursor<STAGES, Producer>,
    consumer: Cursor<STAGES, Consumer>,
    #[cfg(feature = "checked")]
    diagnostics: DiagnosticsWord,
    /// Checked builds: the side this value has served (0: none yet, else `ROLE_* + 1`).
    #[cfg(feature = "checked")]
    side: core::cell::Cell<u32>,
    /// Checked builds: the count check of the last completed wait, compared at the next wait (or
    /// when the value is dropped), so that the shared-memory read of the shadow is not waited
    /// for on the way out of a wait.
    #[cfg(feature = "checked")]
    pending: core::cell::Cell<Option<PendingCheck>>,
}

/// A completed wait's count check, not yet compared (see `ProducerConsumerPipeline::pending`).
#[cfg(feature = "checked")]
#[derive(Clone, Copy)]
struct PendingCheck {
    role: u32,
    stage: u32,
    lap: u32,
    expected: u32,
    observed: u32,
    call: Call,
    location: &'static Location<'static>,
}

impl<const STAGES: usize, B: PipelineBackend> ProducerConsumerPipeline<STAGES, B> {
    /// The number of barrier storage elements: `B::ELEMS_PER_STAGE * STAGES` (`2 * STAGES`, full
    /// then empty, unless the backend pads); checked builds add the backend's arrival shadows and
    /// one diagnostics word.
    pub const STORAGE_ELEMS: usize = if cfg!(feature = "checked") {
        (B::ELEMS_PER_STAGE + B::SHADOW_ELEMS_PER_STAGE) * STAGES + 1
    } else {
        B::ELEMS_PER_STAGE * STAGES
    };

    /// The shared-memory bytes the barriers take: `STORAGE_ELEMS * size_of::<B::Storage>()`
    /// (`2 * STAGES * 8` without the `checked` feature).
    pub const SMEM_BYTES: usize = Self::STORAGE_ELEMS * core::mem::size_of::<B::Storage>();

    /// The shared-memory bytes the barriers take (the value of [`SMEM_BYTES`](Self::SMEM_BYTES)).
    #[doc(alias = "smem_bytes_required")]
    #[inline(always)]
    #[must_use]
    pub const fn smem_bytes() -> usize {
        Self::SMEM_BYTES
    }

    /// A pipeline over the barrier storage at `storage`, both cursors at their start
    /// (producer: slot 0, lap 1; consumer: slot 0, lap 0).
    ///
    /// Zero stages, or an arrive count of 0 or above the backend's maximum, fail to compile.
    ///
    /// # Safety
    ///
    /// - `storage` points to [`STORAGE_ELEMS`](Self::STORAGE_ELEMS) aligned `B::Storage`
    ///   elements (shared memory on a GPU) used for nothing else while any pipeline value made
    ///   from it is in use.
    /// - Before any thread uses a method other than `init`, exactly one thread has called
    ///   [`init`](Self::init) on a value made from this storage, and a block-wide barrier
    ///   (cluster-wide, if peers arrive remotely) separates that call from the use.
    /// - Every thread that uses a side of the pipeline is counted in that side's arrive count,
    ///   and arrives exactly once per stage it passes (the stage handles and scopes do this).
    #[inline(always)]
    #[must_use]
    pub unsafe fn new(storage: *mut B::Storage) -> Self {
        let () = StageCount::<STAGES>::CHECK;
        #[cfg(feature = "checked")]
        let () = CheckedStorage::<B>::CHECK;
        Self {
            // SAFETY: forwarded from this function's contract.
            backend: unsafe { B::new::<STAGES>(storage) },
            producer: Cursor::start(),
            consumer: Cursor::start(),
            // SAFETY: the diagnostics word is the last of the STORAGE_ELEMS 8-byte elements.
            #[cfg(feature = "checked")]
            diagnostics: unsafe {
                DiagnosticsWord::new(storage.cast(), storage.add(Self::STORAGE_ELEMS - 1).cast())
            },
            #[cfg(feature = "checked")]
            side: core::cell::Cell::new(0),
            #[cfg(feature = "checked")]
            pending: core::cell::Cell::new(None),
        }
    }

    /// Initialises all barriers (phase 0, the backend's arrive counts).
    ///
    /// # Safety
    ///
    /// Called by exactly one thread, before any other use, and followed by a block-wide barrier
    /// (see [`new`](Self::new)).
    #[doc(alias = "init_mbars")]
    #[doc(alias = "init_barriers")]
    #[inline(always)]
    pub unsafe fn init(&self) {
        // SAFETY: forwarded from this function's contract.
        unsafe { self.init_with(Diagnostics::DEFAULT) }
    }

    /// As [`init`](Self::init), with the label and wait budget that checked builds use for this
    /// pipeline (see [`Diagnostics`]). Builds without the `checked` feature ignore `diagnostics`.
    ///
    /// # Safety
    ///
    /// As [`init`](Self::init).
    #[inline(always)]
    pub unsafe fn init_with(&self, diagnostics: Diagnostics) {
        // SAFETY: forwarded from this function's contract.
        unsafe { self.backend.init::<STAGES>() };
        #[cfg(feature = "checked")]
        // SAFETY: the caller is the initialising thread, before the block barrier.
        unsafe {
            self.diagnostics.store(diagnostics.word())
        };
        #[cfg(not(feature = "checked"))]
        let _ = diagnostics;
    }

    /// The backend value (barrier locations), for backend-specific operations.
    #[inline(always)]
    #[must_use]
    pub fn backend(&self) -> &B {
        &self.backend
    }

    // ---------------------------------------------------------------- consumer side

    /// Consumer: blocks until the producer filled the consumer's current slot.
    #[cfg_attr(feature = "checked", track_caller)]
    #[inline(always)]
    pub fn wait_producer(&self) {
        self.wait_full_as(None, Call::WaitProducer);
    }

    /// Checked builds: reads the shadow of the barrier a wait of `role` just completed on, for a
    /// comparison with the exact count at the next wait ([`settle`](Self::settle)).
    #[cfg(feature = "checked")]
    #[inline(always)]
    fn defer_check(
        &self,
        role: u32,
        stage: u32,
        lap: u32,
        call: Call,
        location: &'static Location<'static>,
    ) {
        let (expected, observed, _) = counts(self.backend, role, stage, lap);
        self.pending.set(Some(PendingCheck {
            role,
            stage,
            lap,
            expected,
            observed,
            call,
            location,
        }));
    }

    /// Checked builds: compares the pending count check, if any; stops the kernel on a mismatch.
    #[cfg(feature = "checked")]
    #[inline(always)]
    fn settle(&self) {
        if let Some(check) = self.pending.take() {
            // Only a count above the exact one is a fault here: NVIDIA shadow increments follow
            // their arrivals, so a fresh completion may not show the last ones yet.
            if (check.observed.wrapping_sub(check.expected) as i32) > 0 {
                fail::<STAGES, B>(
                    self.backend,
                    self.diagnostics,
                    check.role,
                    check.stage,
                    check.lap,
                    Fault::WrongCount,
                    check.call,
                    0,
                    check.location,
                );
            }
        }
    }

    /// Checked builds: records that this value serves `role`'s side, and stops the kernel if it
    /// served the other side before (the wrong-role mistake).
    #[cfg_attr(feature = "checked", track_caller)]
    #[inline(always)]
    fn claim(&self, role: u32, call: Call) {
        #[cfg(feature = "checked")]
        {
            let used = self.side.get();
            if used != role + 1 {
                if used == 0 {
                    self.side.set(role + 1);
                } else {
                    let (stage, lap) = if role == ROLE_CONSUMER {
                        (self.consumer.stage(), self.consumer.lap())
                    } else {
                        (self.producer.stage(), self.producer.lap())
                    };
                    fail::<STAGES, B>(
                        self.backend,
                        self.diagnostics,
                        role,
                        stage,
                        lap,
                        Fault::WrongRole,
                        call,
                        0,
                        Location::caller(),
                    );
                }
            }
        }
        #[cfg(not(feature = "checked"))]
        let _ = (role, call);
    }

    /// The consumer's wait on `full`, for `call` (checked builds: bounded, then the count check).
    #[cfg_attr(feature = "checked", track_caller)]
    #[inline(always)]
    fn wait_full_as(&self, ticks: Option<u32>, call: Call) {
        self.claim(ROLE_CONSUMER, call);
        let (stage, lap) = (self.consumer.stage(), self.consumer.lap());
        #[cfg(not(feature = "checked"))]
        {
            let _ = call;
            // SAFETY: a cursor's stage is always below STAGES.
            unsafe { self.backend.wait_full(stage, lap, ticks) };
        }
        #[cfg(feature = "checked")]
        {
            let _ = ticks;
            let location = Location::caller();
            // The slow path gets copies, never `&self`: a pipeline whose address escapes to a
            // non-inlined function loses LLVM's address-space inference (flat atomics on AMD).
            let (backend, diagnostics) = (self.backend, self.diagnostics);
            checked::bounded_wait(
                // SAFETY: a cursor's stage is always below STAGES.
                move || unsafe { backend.try_full(stage, lap) },
                || self.settle(),
                move || diagnostics.load(),
                move |elapsed| {
                    fail::<STAGES, B>(
                        backend,
                        diagnostics,
                        ROLE_CONSUMER,
                        stage,
                        lap,
                        Fault::Timeout,
                        call,
                        elapsed,
                        location,
                    )
                },
            );
            self.defer_check(ROLE_CONSUMER, stage, lap, call, location);
        }
    }

    /// Consumer: as [`wait_producer`](Self::wait_producer), with a suspend-time hint of `ticks`
    /// nanoseconds (the hardware may suspend the waiting thread up to that long per try and wakes
    /// it when the phase completes; ignored where the hardware has no such hint).
    #[cfg_attr(feature = "checked", track_caller)]
    #[inline(always)]
    pub fn wait_producer_ticks(&self, ticks: u32) {
        self.wait_full_as(Some(ticks), Call::WaitProducer);
    }

    /// Consumer: whether the producer filled the consumer's current slot. Does not block for long.
    ///
    /// Pair it with [`wait_producer_if_needed`](Self::wait_producer_if_needed) to overlap
    /// other work with the wait.
    #[cfg_attr(feature = "checked", track_caller)]
    #[inline(always)]
    #[must_use]
    pub fn try_wait_producer(&self) -> bool {
        self.claim(ROLE_CONSUMER, Call::TryWaitProducer);
        // SAFETY: a cursor's stage is always below STAGES.
        let ready = unsafe {
            self.backend
                .try_full(self.consumer.stage(), self.consumer.lap())
        };
        // The previous wait's count check, after this probe (see `bounded_wait`).
        #[cfg(feature = "checked")]
        self.settle();
        #[cfg(feature = "checked")]
        if ready {
            self.defer_check(
                ROLE_CONSUMER,
                self.consumer.stage(),
                self.consumer.lap(),
                Call::TryWaitProducer,
                Location::caller(),
            );
        }
        ready
    }

    /// Consumer: waits for the producer unless an earlier
    /// [`try_wait_producer`](Self::try_wait_producer) already returned `true`.
    #[cfg_attr(feature = "checked", track_caller)]
    #[inline(always)]
    pub fn wait_producer_if_needed(&self, already_ready: bool) {
        if !already_ready {
            self.wait_producer();
        }
    }

    /// Consumer: the index of the consumer's current slot, in `0..STAGES`.
    #[inline(always)]
    #[must_use]
    pub fn consumer_stage(&self) -> u32 {
        self.consumer.stage()
    }

    /// Consumer: the consumer's cursor (slot and lap).
    #[inline(always)]
    #[must_use]
    pub fn consumer_cursor(&self) -> Cursor<STAGES, Consumer> {
        self.consumer
    }

    /// Consumer: the calling thread arrives on `empty` of the consumer's current slot
    /// (the slot may be refilled once all consumer arrivals are in). Does not step.
    #[cfg_attr(feature = "checked", track_caller)]
    #[inline(always)]
    pub fn consumer_signal(&self) {
        self.claim(ROLE_CONSUMER, Call::ConsumerSignal);
        // SAFETY: a cursor's stage is always below STAGES.
        unsafe { self.backend.arrive_empty(self.consumer.stage()) };
    }

    /// Consumer: moves to the next slot (and lap, past the last slot). Does not signal.
    #[cfg_attr(feature = "checked", track_caller)]
    #[inline(always)]
    pub fn consumer_step(&mut self) {
        self.claim(ROLE_CONSUMER, Call::ConsumerStep);
        self.consumer.step();
    }

    /// Consumer: waits for the producer, signals `empty`, and steps, with no work in between.
    /// For pure synchronisation roles (for example, a scheduler warp throttling a loader).
    #[cfg_attr(feature = "checked", track_caller)]
    #[inline(always)]
    pub fn consumer_signal_and_step(&mut self) {
        self.wait_full_as(None, Call::ConsumerSignalAndStep);
        self.consumer_signal();
        self.consumer_step();
    }

    /// Consumer: waits for the producer and returns a handle to the filled slot, which must be
    /// released ([`ConsumerStage::release`] or [`ConsumerStage::release_without_signal`]).
    #[cfg_attr(feature = "checked", track_caller)]
    #[inline(always)]
    pub fn acquire_consumer(&mut self) -> ConsumerStage<'_, STAGES, B> {
        self.wait_full_as(None, Call::AcquireConsumer);
        ConsumerStage::new(self)
    }

    /// Consumer: waits for the producer, runs `f` on the filled slot, then signals `empty` and
    /// steps. Returns what `f` returns.
    #[cfg_attr(feature = "checked", track_caller)]
    #[inline(always)]
    pub fn consume<R>(&mut self, f: impl FnOnce(StageView<B>) -> R) -> R {
        self.wait_full_as(None, Call::Consume);
        let stage = ConsumerStage::new(self);
        let result = f(stage.view());
        stage.release();
        result
    }

    /// Consumer: waits for the producer, runs `f` with the stage handle, then steps *without*
    /// signalling: `f` must make the consumer arrivals itself ([`ConsumerStage::arrive`] from the
    /// lanes that count, or an arrival through [`ConsumerStage::barrier`]).
    #[cfg_attr(feature = "checked", track_caller)]
    #[inline(always)]
    pub fn consume_explicit<R>(&mut self, f: impl FnOnce(&ConsumerStage<'_, STAGES, B>) -> R) -> R {
        self.wait_full_as(None, Call::ConsumeExplicit);
        let stage = ConsumerStage::new(self);
        let result = f(&stage);
        stage.release_without_signal();
        result
    }

    // ---------------------------------------------------------------- producer side

    /// Producer: blocks until the consumers released the producer's current slot.
    /// On the first pass over the ring it returns at once.
    #[cfg_attr(feature = "checked", track_caller)]
    #[inline(always)]
    pub fn wait_consumer(&self) {
        self.wait_empty_as(None, Call::WaitConsumer);
    }

    /// The producer's wait on `empty`, for `call` (checked builds: bounded, then the count check).
    #[cfg_attr(feature = "checked", track_caller)]
    #[inline(always)]
    fn wait_empty_as(&self, ticks: Option<u32>, call: Call) {
        self.claim(ROLE_PRODUCER, call);
        let (stage, lap) = (self.producer.stage(), self.producer.lap());
        #[cfg(not(feature = "checked"))]
        {
            let _ = call;
            // SAFETY: a cursor's stage is always below STAGES.
            unsafe { self.backend.wait_empty(stage, lap, ticks) };
        }
        #[cfg(feature = "checked")]
        {
            let _ = ticks;
            let location = Location::caller();
            // The slow path gets copies, never `&self`: a pipeline whose address escapes to a
            // non-inlined function loses LLVM's address-space inference (flat atomics on AMD).
            let (backend, diagnostics) = (self.backend, self.diagnostics);
            checked::bounded_wait(
                // SAFETY: a cursor's stage is always below STAGES.
                move || unsafe { backend.try_empty(stage, lap) },
                || self.settle(),
                move || diagnostics.load(),
                move |elapsed| {
                    fail::<STAGES, B>(
                        backend,
                        diagnostics,
                        ROLE_PRODUCER,
                        stage,
                        lap,
                        Fault::Timeout,
                        call,
                        elapsed,
                        location,
                    )
                },
            );
            self.defer_check(ROLE_PRODUCER, stage, lap, call, location);
        }
    }

    /// Producer: as [`wait_consumer`](Self::wait_consumer), with a suspend-time hint of `ticks` ns.
    #[cfg_attr(feature = "checked", track_caller)]
    #[inline(always)]
    pub fn wait_consumer_ticks(&self, ticks: u32) {
        self.wait_empty_as(Some(ticks), Call::WaitConsumer);
    }

    /// Producer: whether the consumers released the producer's current slot.
    #[cfg_attr(feature = "checked", track_caller)]
    #[inline(always)]
    #[must_use]
    pub fn try_wait_consumer(&self) -> bool {
        self.claim(ROLE_PRODUCER, Call::TryWaitConsumer);
        // SAFETY: a cursor's stage is always below STAGES.
        let ready = unsafe {
            self.backend
                .try_empty(self.producer.stage(), self.producer.lap())
        };
        // The previous wait's count check, after this probe (see `bounded_wait`).
        #[cfg(feature = "checked")]
        self.settle();
        #[cfg(feature = "checked")]
        if ready {
            self.defer_check(
                ROLE_PRODUCER,
                self.producer.stage(),
                self.producer.lap(),
                Call::TryWaitConsumer,
                Location::caller(),
            );
        }
        ready
    }

    /// Producer: waits for the consumers unless an earlier
    /// [`try_wait_consumer`](Self::try_wait_consumer) already returned `true`.
    #[cfg_attr(feature = "checked", track_caller)]
    #[inline(always)]
    pub fn wait_consumer_if_needed(&self, already_ready: bool) {
        if !already_ready {
            self.wait_consumer();
        }
    }

    /// Producer: the index of the producer's current slot, in `0..STAGES`.
    #[inline(always)]
    #[must_use]
    pub fn producer_stage(&self) -> u32 {
        self.producer.stage()
    }

    /// Producer: the producer's cursor (slot and lap).
    #[inline(always)]
    #[must_use]
    pub fn producer_cursor(&self) -> Cursor<STAGES, Producer> {
        self.producer
    }

    /// Producer: the calling thread arrives on `full` of the producer's current slot.
    /// Does not step.
    #[cfg_attr(feature = "checked", track_caller)]
    #[inline(always)]
    pub fn producer_signal(&self) {
        self.claim(ROLE_PRODUCER, Call::ProducerSignal);
        // SAFETY: a cursor's stage is always below STAGES.
        unsafe { self.backend.arrive_full(self.producer.stage()) };
    }

    /// Producer: moves to the next slot (and lap, past the last slot). Does not signal.
    #[cfg_attr(feature = "checked", track_caller)]
    #[inline(always)]
    pub fn producer_step(&mut self) {
        self.claim(ROLE_PRODUCER, Call::ProducerStep);
        self.producer.step();
    }

    /// Producer: waits for the consumers, signals `full`, and steps, with no work in between.
    #[cfg_attr(feature = "checked", track_caller)]
    #[inline(always)]
    pub fn producer_signal_and_step(&mut self) {
        self.wait_empty_as(None, Call::ProducerSignalAndStep);
        self.producer_signal();
        self.producer_step();
    }

    /// Producer: waits for the consumers and returns a handle to the free slot, which must be
    /// released ([`ProducerStage::release`] or [`ProducerStage::release_without_signal`]).
    #[cfg_attr(feature = "checked", track_caller)]
    #[inline(always)]
    pub fn acquire_producer(&mut self) -> ProducerStage<'_, STAGES, B> {
        self.wait_empty_as(None, Call::AcquireProducer);
        ProducerStage::new(self)
    }

    /// Producer: waits for the consumers, runs `f` on the free slot, then signals `full` and
    /// steps. Returns what `f` returns.
    #[cfg_attr(feature = "checked", track_caller)]
    #[inline(always)]
    pub fn produce<R>(&mut self, f: impl FnOnce(StageView<B>) -> R) -> R {
        self.wait_empty_as(None, Call::Produce);
        let stage = ProducerStage::new(self);
        let result = f(stage.view());
        stage.release();
        result
    }

    /// Producer: waits for the consumers, runs `f` with the stage handle, then steps *without*
    /// signalling: `f` makes the producer arrivals itself (for example one lane's
    /// `arrive_expect_tx` followed by bulk copies completing on the barrier).
    #[cfg_attr(feature = "checked", track_caller)]
    #[inline(always)]
    pub fn produce_explicit<R>(&mut self, f: impl FnOnce(&ProducerStage<'_, STAGES, B>) -> R) -> R {
        self.wait_empty_as(None, Call::ProduceExplicit);
        let stage = ProducerStage::new(self);
        let result = f(&stage);
        stage.release_without_signal();
        result
    }

    // ---------------------------------------------------------------- barriers

    /// The `full` barrier of slot `stage` (the one producers signal and consumers wait on).
    ///
    /// # Panics
    ///
    /// If `stage >= STAGES`.
    #[doc(alias = "producer_mbar")]
    #[inline(always)]
    #[must_use]
    pub fn full_barrier(&self, stage: u32) -> B::Handle {
        assert!((stage as usize) < STAGES, "stage index out of range");
        // SAFETY: checked just above.
        unsafe { self.backend.full_handle(stage) }
    }

    /// The `empty` barrier of slot `stage` (the one consumers signal and producers wait on).
    ///
    /// # Panics
    ///
    /// If `stage >= STAGES`.
    #[doc(alias = "consumer_mbar")]
    #[inline(always)]
    #[must_use]
    pub fn empty_barrier(&self, stage: u32) -> B::Handle {
        assert!((stage as usize) < STAGES, "stage index out of range");
        // SAFETY: checked just above.
        unsafe { self.backend.empty_handle(stage) }
    }

    // ---------------------------------------------------------------- tests

    /// Constructs a pipeline with cursors at given places, for the crate's own wrap tests.
    #[cfg(all(test, not(feature = "checked")))]
    pub(crate) fn with_cursors(
        backend: B,
        producer: Cursor<STAGES, Producer>,
        consumer: Cursor<STAGES, Consumer>,
    ) -> Self {
        Self {
            backend,
            producer,
            consumer,
        }
    }
}

// ---------------------------------------------------------------- checked builds

/// The expected and counted arrivals of the barrier `role` waits on at (`stage`, `lap`), and its
/// count per phase: `full[s]` after consumer lap `p` is `(p + 1) * P` exactly, `empty[s]` before
/// producer lap `q` is `(q - 1) * C` exactly (see the `checked` module for why).
#[cfg(feature = "checked")]
#[inline(always)]
fn counts<B: PipelineBackend>(backend: B, role: u32, stage: u32, lap: u32) -> (u32, u32, u32) {
    // SAFETY: the callers pass a cursor's stage, below STAGES.
    unsafe {
        if role == ROLE_CONSUMER {
            let expected = crate::threshold::full_threshold(lap, B::PRODUCER_ARRIVALS);
            (expected, backend.arrivals_full(stage), B::PRODUCER_ARRIVALS)
        } else {
            let expected = crate::threshold::empty_threshold(lap, B::CONSUMER_ARRIVALS);
            (
                expected,
                backend.arrivals_empty(stage),
                B::CONSUMER_ARRIVALS,
            )
        }
    }
}

/// Stops the kernel with a record of the pipeline's state for `role` at (`stage`, `lap`).
#[cfg(feature = "checked")]
#[cold]
#[inline(never)]
#[allow(clippy::too_many_arguments)]
fn fail<const STAGES: usize, B: PipelineBackend>(
    backend: B,
    diagnostics: DiagnosticsWord,
    role: u32,
    stage: u32,
    lap: u32,
    fault: Fault,
    call: Call,
    elapsed_ns: u64,
    location: &'static Location<'static>,
) -> ! {
    let (expected, observed, per_phase) = counts(backend, role, stage, lap);
    checked::fail(&checked::Report {
        fault,
        call,
        role,
        diagnostics: diagnostics.load(),
        storage: diagnostics.storage(),
        stages: STAGES as u32,
        stage,
        sub_stage: NO_SUB_STAGE,
        lap,
        per_phase,
        expected,
        observed,
        tracked: true,
        elapsed_ns,
        location,
    })
}

/// Checked builds: the last wait's count check is compared when the value goes away.
#[cfg(feature = "checked")]
impl<const STAGES: usize, B: PipelineBackend> Drop for ProducerConsumerPipeline<STAGES, B> {
    #[inline(always)]
    fn drop(&mut self) {
        // On the host, a second panic while unwinding would abort the process.
        #[cfg(feature = "std")]
        if std::thread::panicking() {
            return;
        }
        self.settle();
    }
}

/// Checked builds keep the diagnostics word in one storage element: it must be 8 bytes.
#[cfg(feature = "checked")]
struct CheckedStorage<B>(core::marker::PhantomData<B>);

#[cfg(feature = "checked")]
impl<B: PipelineBackend> CheckedStorage<B> {
    const CHECK: () = assert!(
        core::mem::size_of::<B::Storage>() == 8 && core::mem::align_of::<B::Storage>() >= 8,
        "gpu-pipeline: the checked feature needs a backend whose storage elements are 8 bytes, 8-byte aligned"
    );
}

impl<const STAGES: usize, B: PipelineBackend + core::fmt::Debug> core::fmt::Debug
    for ProducerConsumerPipeline<STAGES, B>
{
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("ProducerConsumerPipeline")
            .field("backend", &self.backend)
            .field("producer", &self.producer)
            .field("consumer", &self.consumer)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    #[cfg(not(feature = "checked"))]
    use core::mem::MaybeUninit;
    #[cfg(not(feature = "checked"))]
    use std::vec::Vec;

    use super::*;
    use crate::HostCounterBackend;
    #[cfg(not(feature = "checked"))]
    use crate::HostMbarBackend;
    #[cfg(not(feature = "checked"))]
    use crate::primitive::AtomicU64;

    #[cfg(not(feature = "checked"))]
    /// Storage for a host backend, initialised by `init` and then set to the state the barriers
    /// reach after `laps` complete laps: counters at `laps * arrivals`, mbarrier phase `laps`.
    fn storage_after_laps<
        const STAGES: usize,
        B: PipelineBackend<Storage = MaybeUninit<AtomicU64>>,
    >(
        laps: u32,
        counter: bool,
    ) -> Vec<MaybeUninit<AtomicU64>> {
        let mut storage: Vec<MaybeUninit<AtomicU64>> =
            (0..2 * STAGES).map(|_| MaybeUninit::uninit()).collect();
        for (i, word) in storage.iter_mut().enumerate() {
            let arrivals = u64::from(if i < STAGES {
                B::PRODUCER_ARRIVALS
            } else {
                B::CONSUMER_ARRIVALS
            });
            let value = if counter {
                u64::from(laps) * arrivals
            } else {
                (u64::from(laps) << 32) | arrivals
            };
            word.write(AtomicU64::new(value));
        }
        storage
    }

    #[cfg(not(feature = "checked"))]
    /// Runs one producer and one consumer, alternately on this thread, for `items` items from a
    /// state `laps` laps in, checking that no wait ever blocks wrongly or passes early.
    fn run_across_wrap<
        const STAGES: usize,
        B: PipelineBackend<Storage = MaybeUninit<AtomicU64>>,
    >(
        counter: bool,
    ) {
        let laps = u32::MAX - 1;
        let mut storage = storage_after_laps::<STAGES, B>(laps, counter);
        // SAFETY: `storage` holds 2 * STAGES initialised words and outlives the pipelines.
        let backend = unsafe { B::new::<STAGES>(storage.as_mut_ptr()) };
        let mut producer = ProducerConsumerPipeline::<STAGES, B>::with_cursors(
            backend,
            Cursor::at(0, laps.wrapping_add(1)),
            Cursor::at(0, laps),
        );
        // SAFETY: as above.
        let backend = unsafe { B::new::<STAGES>(storage.as_mut_ptr()) };
        let mut consumer = ProducerConsumerPipeline::<STAGES, B>::with_cursors(
            backend,
            Cursor::at(0, laps.wrapping_add(1)),
            Cursor::at(0, laps),
        );
        for item in 0..10 * STAGES {
            // Every slot is free at the start of a lap, none is full yet.
            assert!(
                producer.try_wait_consumer(),
                "item {item}: producer blocked on a free slot"
            );
            assert!(
                !consumer.try_wait_producer(),
                "item {item}: consumer passed before the fill"
            );
            // One thread makes all the arrivals of each side.
            producer.wait_consumer();
            for _ in 0..B::PRODUCER_ARRIVALS {
                producer.producer_signal();
            }
            producer.producer_step();
            assert!(
                consumer.try_wait_producer(),
                "item {item}: consumer blocked on a full slot"
            );
            if STAGES == 1 {
                assert!(
                    !producer.try_wait_consumer(),
                    "item {item}: producer passed a full slot"
                );
            }
            consumer.wait_producer();
            for _ in 0..B::CONSUMER_ARRIVALS {
                consumer.consumer_signal();
            }
            consumer.consumer_step();
        }
        assert_eq!(consumer.consumer_cursor().lap(), laps.wrapping_add(10));
        assert_eq!(producer.producer_cursor().lap(), laps.wrapping_add(11));
    }

    #[test]
    #[cfg(not(feature = "checked"))]
    fn counter_protocol_runs_across_the_lap_wrap() {
        run_across_wrap::<1, HostCounterBackend<1, 1>>(true);
        run_across_wrap::<3, HostCounterBackend<4, 128>>(true);
    }

    #[test]
    #[cfg(not(feature = "checked"))]
    fn parity_protocol_runs_across_the_lap_wrap() {
        run_across_wrap::<1, HostMbarBackend<1, 1>>(false);
        run_across_wrap::<3, HostMbarBackend<4, 128>>(false);
    }

    #[test]
    fn smem_bytes_is_two_elements_per_stage() {
        // Checked builds add the NVIDIA shadows (one element per stage) and the diagnostics word.
        let checked = cfg!(feature = "checked");
        assert_eq!(
            ProducerConsumerPipeline::<4, HostCounterBackend<1, 1>>::SMEM_BYTES,
            if checked { 72 } else { 64 }
        );
        assert_eq!(
            ProducerConsumerPipeline::<3, crate::NvidiaMbarBackend<1, 1>>::smem_bytes(),
            if checked { 80 } else { 48 }
        );
    }
}
