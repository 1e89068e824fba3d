//! [`PipelineHalf`]: one side of a pipeline, written once for both sides.
//!
//! A half is a backend value (where the barriers are), the cursor of one [`Side`], and, in
//! checked builds, that side's diagnostics. The side decides which of a slot's signals the half
//! waits on and which it raises, and how many completions a lap needs
//! ([`Side::completions`]); everything else (wait, try, signal, step, acquire, the scopes) is the
//! same code for the producer ([`ProducerHalf`]) and the consumer ([`ConsumerHalf`]).
//!
//! A thread that only produces holds a `ProducerHalf`, and a consumer method on it does not
//! compile. [`ProducerConsumerPipeline`](crate::ProducerConsumerPipeline) holds both halves,
//! for code that follows the reference's names.

use core::cell::Cell;

use crate::backend::{
    MAX_TX_BYTES, MbarScope, NvidiaMbarBackend, PipelineBackend, barrier_bytes, barrier_elems,
};
use crate::checked::{Call, Diagnostics};
use crate::cursor::{Consumer, Cursor, Producer, Side, StageCount};
#[cfg(feature = "checked")]
use crate::guard::Guard;
use crate::stage::{Held, Stage, StageView};

/// One side of a ring of `STAGES` shared-memory slots synchronised by backend `B`: the
/// producer's ([`ProducerHalf`]) or the consumers' ([`ConsumerHalf`]).
///
/// Every thread of the kernel holds its own value, made by [`new`](Self::new) (or
/// [`ProducerConsumerPipeline::split`](crate::ProducerConsumerPipeline::split)) from the same
/// barrier storage; one thread calls [`init`](Self::init) and a block barrier follows.
///
/// The common loop is [`acquire`](Self::acquire) (wait for the slot, take a handle, move the
/// cursor on), use the slot, then release the handle. The low-level calls are
/// [`wait`](Self::wait) / [`try_wait`](Self::try_wait), [`signal`](Self::signal) and
/// [`step`](Self::step), on the cursor's current slot.
///
/// # Memory ordering
///
/// What producer threads write to slot `s` before signalling `full[s]` is visible to consumer
/// threads after their wait on `full[s]` for that lap returns; what consumers read or write
/// before signalling `empty[s]` happens before the producer's next writes to slot `s` after its
/// wait returns. Scope and proxy details are the backend's (NVIDIA needs
/// [`fence_proxy_async`](crate::fence_proxy_async) between generic and async-proxy accesses).
pub struct PipelineHalf<const STAGES: usize, B: PipelineBackend, S: Side> {
    backend: B,
    cursor: Cell<Cursor<STAGES, S>>,
    #[cfg(feature = "checked")]
    guard: Guard,
}

/// The producer half: it waits for *empty* slots, fills them, and signals *full*.
pub type ProducerHalf<const STAGES: usize, B> = PipelineHalf<STAGES, B, Producer>;

/// The consumer half: it waits for *full* slots, drains them, and signals *empty*.
pub type ConsumerHalf<const STAGES: usize, B> = PipelineHalf<STAGES, B, Consumer>;

impl<const STAGES: usize, B: PipelineBackend, S: Side> PipelineHalf<STAGES, B, S> {
    /// The number of barrier storage elements ([`barrier_elems`]): `2 * STAGES`, full then
    /// empty; checked builds add the backend's arrival shadows and one diagnostics word.
    pub const STORAGE_ELEMS: usize = barrier_elems::<B>(STAGES);

    /// The shared-memory bytes the barriers take ([`barrier_bytes`]; `16 * STAGES` without the
    /// `checked` feature).
    pub const SMEM_BYTES: usize = barrier_bytes::<B>(STAGES);

    /// The half of side `S` over the barrier storage at `storage`, its cursor at the side's
    /// start (slot 0; producer lap 1, consumer lap 0).
    ///
    /// Zero stages, or an arrive count of 0 or above the backend's maximum, fail to compile.
    ///
    /// # Safety
    ///
    /// - `storage` points to [`STORAGE_ELEMS`](Self::STORAGE_ELEMS) aligned `B::Storage`
    ///   elements (shared memory on a GPU), used for nothing else and valid while any value made
    ///   from it (pipeline, half, stage handle, signal) exists.
    /// - Before any thread uses a method other than `init`, exactly one thread has called `init`
    ///   on a value made from this storage, and a block-wide barrier (cluster-wide, if peers
    ///   arrive remotely) separates that call from the use.
    /// - Every thread that uses this side is counted in the side's arrive count, and arrives
    ///   exactly once per stage it passes (the stage handles and scopes do this).
    #[inline(always)]
    #[must_use]
    pub unsafe fn new(storage: *mut B::Storage) -> Self {
        // SAFETY: forwarded from this function's contract.
        unsafe { Self::with_backend(B::new::<STAGES>(storage), storage) }
    }

    /// The half over `storage` with its backend value already made (the whole pipeline makes
    /// one for both halves).
    ///
    /// # Safety
    ///
    /// As [`new`](Self::new); `backend` is `B::new::<STAGES>(storage)`.
    #[inline(always)]
    pub(crate) unsafe fn with_backend(backend: B, storage: *mut B::Storage) -> Self {
        let () = StageCount::<STAGES>::CHECK;
        #[cfg(not(feature = "checked"))]
        let _ = storage;
        Self {
            backend,
            cursor: Cell::new(Cursor::start()),
            // SAFETY: forwarded from this function's contract.
            #[cfg(feature = "checked")]
            guard: unsafe { Guard::new::<STAGES, B>(storage) },
        }
    }

    /// Initialises all barriers (phase 0, the backend's arrive counts), for both sides.
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
            self.guard.store(diagnostics)
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

    /// The cursor (slot and lap).
    #[inline(always)]
    #[must_use]
    pub fn cursor(&self) -> Cursor<STAGES, S> {
        self.cursor.get()
    }

    /// The index of the current slot, in `0..STAGES`.
    #[inline(always)]
    #[must_use]
    pub fn stage(&self) -> u32 {
        self.cursor.get().stage()
    }

    /// The signal this side waits on at slot `stage` (`full` for a consumer, `empty` for a
    /// producer).
    ///
    /// # Panics
    ///
    /// If `stage >= STAGES`.
    #[inline(always)]
    #[must_use]
    pub fn awaited_signal(&self, stage: u32) -> B::Signal<'_> {
        assert!((stage as usize) < STAGES, "stage index out of range");
        // SAFETY: checked just above.
        unsafe { S::awaited(self.backend.full(stage), self.backend.empty(stage)) }
    }

    /// The signal this side raises at slot `stage` (`empty` for a consumer, `full` for a
    /// producer).
    ///
    /// # Panics
    ///
    /// If `stage >= STAGES`.
    #[inline(always)]
    #[must_use]
    pub fn raised_signal(&self, stage: u32) -> B::Signal<'_> {
        assert!((stage as usize) < STAGES, "stage index out of range");
        // SAFETY: checked just above.
        unsafe { self.raised_at(stage) }
    }

    /// The raised signal at a stage known to be in range.
    ///
    /// # Safety
    ///
    /// `stage < STAGES`.
    #[inline(always)]
    unsafe fn raised_at(&self, stage: u32) -> B::Signal<'_> {
        // SAFETY: forwarded.
        unsafe { S::raised(self.backend.full(stage), self.backend.empty(stage)) }
    }

    /// Blocks until the other side has released the current slot for this side's lap
    /// (consumer: the producer filled it; producer: the consumers drained it).
    #[cfg_attr(feature = "checked", track_caller)]
    #[inline(always)]
    pub fn wait(&self) {
        self.wait_as(None, S::awaited(Call::WaitProducer, Call::WaitConsumer));
    }

    /// As [`wait`](Self::wait), with a suspend-time hint of `ticks` nanoseconds (the hardware
    /// may suspend the waiting thread up to that long per try and wakes it when the phase
    /// completes; ignored where the hardware has no such hint).
    #[cfg_attr(feature = "checked", track_caller)]
    #[inline(always)]
    pub fn wait_ticks(&self, ticks: u32) {
        self.wait_as(
            Some(ticks),
            S::awaited(Call::WaitProducer, Call::WaitConsumer),
        );
    }

    /// The wait, for `call` (checked builds: bounded, then the count check).
    #[cfg_attr(feature = "checked", track_caller)]
    #[inline(always)]
    pub(crate) fn wait_as(&self, ticks: Option<u32>, call: Call) {
        let cursor = self.cursor.get();
        #[cfg(not(feature = "checked"))]
        {
            let _ = call;
            // SAFETY: a cursor's stage is always below STAGES.
            let signal = unsafe {
                S::awaited(
                    self.backend.full(cursor.stage()),
                    self.backend.empty(cursor.stage()),
                )
            };
            crate::backend::Signal::wait_completed(signal, S::completions(cursor.lap()), ticks);
        }
        #[cfg(feature = "checked")]
        {
            let _ = ticks;
            self.guard.wait(self.backend, cursor, call);
        }
    }

    /// Whether the other side has released the current slot for this side's lap. Does not
    /// block for long. Pair it with [`wait_if_needed`](Self::wait_if_needed) to overlap other
    /// work with the wait.
    #[cfg_attr(feature = "checked", track_caller)]
    #[inline(always)]
    #[must_use]
    pub fn try_wait(&self) -> bool {
        let cursor = self.cursor.get();
        // SAFETY: a cursor's stage is always below STAGES.
        let signal = unsafe {
            S::awaited(
                self.backend.full(cursor.stage()),
                self.backend.empty(cursor.stage()),
            )
        };
        let ready = crate::backend::Signal::completed(signal, S::completions(cursor.lap()));
        // The previous wait's count check, after this probe (see `bounded_wait`).
        #[cfg(feature = "checked")]
        self.guard.after_try(
            self.backend,
            cursor,
            ready,
            S::awaited(Call::TryWaitProducer, Call::TryWaitConsumer),
        );
        ready
    }

    /// Waits unless an earlier [`try_wait`](Self::try_wait) already returned `true`.
    #[cfg_attr(feature = "checked", track_caller)]
    #[inline(always)]
    pub fn wait_if_needed(&self, already_ready: bool) {
        if !already_ready {
            self.wait();
        }
    }

    /// The calling thread arrives on the signal this side raises at the current slot (producer:
    /// `full`; consumer: `empty`). Does not step.
    #[inline(always)]
    pub fn signal(&self) {
        // SAFETY: a cursor's stage is always below STAGES.
        let signal = unsafe { self.raised_at(self.cursor.get().stage()) };
        crate::backend::Signal::arrive(signal);
    }

    /// Moves to the next slot (and lap, past the last slot). Does not signal.
    #[inline(always)]
    pub fn step(&mut self) {
        self.advance();
    }

    /// Moves the cursor on (through the cell: `acquire` takes `&self`).
    #[inline(always)]
    fn advance(&self) {
        self.cursor.set(self.cursor.get().stepped());
    }

    /// Waits, signals and steps, with no work in between.
    #[cfg_attr(feature = "checked", track_caller)]
    #[inline(always)]
    pub fn wait_signal_and_step(&mut self) {
        self.wait_as(
            None,
            S::awaited(Call::ConsumerSignalAndStep, Call::ProducerSignalAndStep),
        );
        self.signal();
        self.step();
    }

    /// Waits for the current slot, moves the cursor on, and returns a handle to the slot, which
    /// must be released ([`Stage::release`] or [`Stage::release_without_signal`]).
    ///
    /// Takes `&self`: several stages may be held at once, each released once (a consumer that
    /// keeps one stage in flight releases stage `k - 1` after issuing the work of stage `k`). A
    /// producer holding `P` stages at once and consumers holding `C` need `STAGES >= P + C - 1`,
    /// or each side can end up waiting for a stage the other holds ([`crate::stage`] docs).
    #[cfg_attr(feature = "checked", track_caller)]
    #[inline(always)]
    pub fn acquire(&self) -> Stage<'_, STAGES, B, S> {
        self.acquire_as(S::awaited(Call::AcquireConsumer, Call::AcquireProducer))
    }

    /// `acquire`, for `call`.
    #[cfg_attr(feature = "checked", track_caller)]
    #[inline(always)]
    pub(crate) fn acquire_as(&self, call: Call) -> Stage<'_, STAGES, B, S> {
        self.acquire_ticks_as(None, call)
    }

    /// As [`acquire`](Self::acquire), with a suspend-time hint of `ticks` nanoseconds per try
    /// ([`wait_ticks`](Self::wait_ticks)): the waiting thread may sleep in the barrier instead of
    /// spinning, leaving its issue slots to the warps that compute (CUTLASS's consumer waits pass
    /// 0x989680, ten million).
    #[cfg_attr(feature = "checked", track_caller)]
    #[inline(always)]
    pub fn acquire_ticks(&self, ticks: u32) -> Stage<'_, STAGES, B, S> {
        self.acquire_ticks_as(
            Some(ticks),
            S::awaited(Call::AcquireConsumer, Call::AcquireProducer),
        )
    }

    /// `acquire` with an optional hint, for `call`.
    #[cfg_attr(feature = "checked", track_caller)]
    #[inline(always)]
    fn acquire_ticks_as(&self, ticks: Option<u32>, call: Call) -> Stage<'_, STAGES, B, S> {
        self.wait_as(ticks, call);
        let stage = self.cursor.get().stage();
        self.advance();
        Stage::new(
            stage,
            // SAFETY: a cursor's stage is always below STAGES.
            unsafe { self.raised_at(stage) },
            self.held(),
        )
    }

    /// Waits for the current slot, runs `f` on it, then signals (the calling thread arrives on
    /// the raised signal). Returns what `f` returns. The closure gets a [`StageView`], without
    /// `arrive`: the scope signals on exit.
    #[cfg_attr(feature = "checked", track_caller)]
    #[inline(always)]
    pub fn with_stage<R>(&self, f: impl FnOnce(StageView<'_, B>) -> R) -> R {
        let stage = self.acquire_as(S::awaited(Call::Consume, Call::Produce));
        let result = f(stage.view());
        stage.release();
        result
    }

    /// Waits for the current slot and runs `f` with its handle, *without* signalling after:
    /// `f` makes the side's arrivals itself (lane-guarded `arrive`; a TMA producer's announced
    /// bytes and arrival: [`produce_tma`](ProducerHalf::produce_tma)).
    #[cfg_attr(feature = "checked", track_caller)]
    #[inline(always)]
    pub fn with_stage_explicit<R>(&self, f: impl FnOnce(&Stage<'_, STAGES, B, S>) -> R) -> R {
        let stage = self.acquire_as(S::awaited(Call::ConsumeExplicit, Call::ProduceExplicit));
        let result = f(&stage);
        stage.release_without_signal();
        result
    }

    /// Where stage handles count themselves (checked builds).
    #[inline(always)]
    fn held(&self) -> Held<'_> {
        #[cfg(feature = "checked")]
        return &self.guard.held;
        #[cfg(not(feature = "checked"))]
        return core::marker::PhantomData;
    }

    /// Checked builds: stops the kernel with a wrong-role record for `call` (the whole
    /// pipeline's run-time role check).
    #[cfg(feature = "checked")]
    #[cold]
    #[track_caller]
    pub(crate) fn wrong_role(&self, call: Call) -> ! {
        self.guard.wrong_role(self.backend, self.cursor.get(), call)
    }

    /// A half with its cursor at a given place, for the crate's own wrap tests.
    #[cfg(all(test, not(feature = "checked")))]
    pub(crate) fn at(backend: B, cursor: Cursor<STAGES, S>) -> Self {
        Self {
            backend,
            cursor: Cell::new(cursor),
        }
    }
}

impl<const STAGES: usize, B: PipelineBackend> ProducerHalf<STAGES, B> {
    /// [`with_stage`](Self::with_stage) under the producer's name: waits for a free slot, runs
    /// `f`, then signals `full`.
    #[cfg_attr(feature = "checked", track_caller)]
    #[inline(always)]
    pub fn produce<R>(&self, f: impl FnOnce(StageView<'_, B>) -> R) -> R {
        self.with_stage(f)
    }
}

impl<const STAGES: usize, const C: u32, Sc: MbarScope>
    ProducerHalf<STAGES, NvidiaMbarBackend<1, C, Sc>>
{
    /// TMA producer (mbarriers, producer arrive count 1): waits for a free slot, announces
    /// `tx_bytes` on its `full` barrier and arrives (`mbarrier.arrive.expect_tx`), runs `f` with
    /// the slot to issue the copies that complete on that barrier (for example
    /// [`MbarrierRef::tensor_load`](crate::MbarrierRef::tensor_load) on `stage.barrier()`), then
    /// moves on. The slot becomes full when all `tx_bytes` have landed.
    ///
    /// The safe form of [`MbarrierRef::arrive_expect_tx`](crate::MbarrierRef::arrive_expect_tx): with one producer arrival per phase
    /// the library knows the phase's announced bytes are this call's alone.
    ///
    /// # Panics
    ///
    /// If `tx_bytes > MAX_TX_BYTES` (2^20 - 1; no CTA's shared memory holds more). A constant
    /// `tx_bytes` costs no check.
    #[cfg_attr(feature = "checked", track_caller)]
    #[inline(always)]
    pub fn produce_tma<R>(
        &self,
        tx_bytes: u32,
        f: impl FnOnce(StageView<'_, NvidiaMbarBackend<1, C, Sc>>) -> R,
    ) -> R {
        assert!(
            tx_bytes <= MAX_TX_BYTES,
            "gpu-pipeline: produce_tma of more than 2^20 - 1 bytes"
        );
        self.with_stage_explicit(|stage| {
            // SAFETY: the producer arrive count is 1, and by `new`'s contract the one producing
            // thread arrives once per stage: after the wait for a free slot, the full barrier's
            // current phase has its one arrival pending and no bytes announced (only the unsafe
            // `expect_tx` and `arrive_expect_tx` announce any), so the phase's transaction count
            // is `tx_bytes`, in range (asserted above).
            unsafe { stage.barrier().arrive_expect_tx(tx_bytes) };
            f(stage.view())
        })
    }
}

impl<const STAGES: usize, B: PipelineBackend> ConsumerHalf<STAGES, B> {
    /// [`with_stage`](Self::with_stage) under the consumer's name: waits for a full slot, runs
    /// `f`, then signals `empty`.
    #[cfg_attr(feature = "checked", track_caller)]
    #[inline(always)]
    pub fn consume<R>(&self, f: impl FnOnce(StageView<'_, B>) -> R) -> R {
        self.with_stage(f)
    }
}

/// Checked builds: the last wait's count check is compared, and no stage may still be held,
/// when the half goes away.
#[cfg(feature = "checked")]
impl<const STAGES: usize, B: PipelineBackend, S: Side> Drop for PipelineHalf<STAGES, B, S> {
    #[inline(always)]
    fn drop(&mut self) {
        self.guard.finish(self.backend, self.cursor.get());
    }
}

impl<const STAGES: usize, B: PipelineBackend + core::fmt::Debug, S: Side> core::fmt::Debug
    for PipelineHalf<STAGES, B, S>
{
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("PipelineHalf")
            .field("backend", &self.backend)
            .field("cursor", &self.cursor.get())
            .finish()
    }
}
