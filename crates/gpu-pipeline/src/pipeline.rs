//! [`ProducerConsumerPipeline`]: both halves of a pipeline in one value, under the reference's
//! method names.

use crate::backend::{MbarScope, NvidiaMbarBackend, PipelineBackend, barrier_bytes, barrier_elems};
use crate::checked::{Call, Diagnostics};
use crate::cursor::{Consumer, Cursor, Producer, Side};
use crate::half::{ConsumerHalf, PipelineHalf, ProducerHalf};
use crate::stage::{ConsumerStage, ProducerStage, StageView};

/// The reference's methods of one side on the whole pipeline, each forwarding to that side's
/// half after the checked build's role check: written once, expanded for the consumer and the
/// producer.
macro_rules! side_methods {
    (
        half: $half:ident, Side: $Side:ident, Stage: $Stage:ident,
        side: $side:literal, other: $other:literal, raised: $raised:literal, slot: $slot:literal,
        wait: $wait:ident, wait_ticks: $wait_ticks:ident, try_wait: $try_wait:ident,
        wait_if_needed: $wait_if_needed:ident, stage: $stage:ident, cursor: $cursor:ident,
        signal: $signal:ident, step: $step:ident, signal_and_step: $signal_and_step:ident,
        acquire: $acquire:ident, scope: $scope:ident, explicit: $explicit:ident,
        calls: [$c_wait:ident, $c_try:ident, $c_signal:ident, $c_step:ident,
            $c_signal_and_step:ident, $c_acquire:ident, $c_scope:ident, $c_explicit:ident],
    ) => {
        #[doc = concat!($side, ": blocks until the ", $other, " released the ", $side, "'s current slot ([`PipelineHalf::wait`]).")]
        #[cfg_attr(feature = "checked", track_caller)]
        #[inline(always)]
        pub fn $wait(&self) {
            self.$half(Call::$c_wait).wait();
        }

        #[doc = concat!($side, ": as [`", stringify!($wait), "`](Self::", stringify!($wait), "), with a suspend-time hint of `ticks` nanoseconds ([`PipelineHalf::wait_ticks`]).")]
        #[cfg_attr(feature = "checked", track_caller)]
        #[inline(always)]
        pub fn $wait_ticks(&self, ticks: u32) {
            self.$half(Call::$c_wait).wait_ticks(ticks);
        }

        #[doc = concat!($side, ": whether the ", $other, " released the current slot; does not block for long ([`PipelineHalf::try_wait`]).")]
        #[cfg_attr(feature = "checked", track_caller)]
        #[inline(always)]
        #[must_use]
        pub fn $try_wait(&self) -> bool {
            self.$half(Call::$c_try).try_wait()
        }

        #[doc = concat!($side, ": waits unless an earlier [`", stringify!($try_wait), "`](Self::", stringify!($try_wait), ") already returned `true`.")]
        #[cfg_attr(feature = "checked", track_caller)]
        #[inline(always)]
        pub fn $wait_if_needed(&self, already_ready: bool) {
            self.$half(Call::$c_wait).wait_if_needed(already_ready);
        }

        #[doc = concat!($side, ": the index of the current slot, in `0..STAGES`.")]
        #[inline(always)]
        #[must_use]
        pub fn $stage(&self) -> u32 {
            self.$half.stage()
        }

        #[doc = concat!($side, ": the cursor (slot and lap).")]
        #[inline(always)]
        #[must_use]
        pub fn $cursor(&self) -> Cursor<STAGES, $Side> {
            self.$half.cursor()
        }

        #[doc = concat!($side, ": the calling thread arrives on `", $raised, "` of the current slot. Does not step.")]
        #[cfg_attr(feature = "checked", track_caller)]
        #[inline(always)]
        pub fn $signal(&self) {
            self.$half(Call::$c_signal).signal();
        }

        #[doc = concat!($side, ": moves to the next slot (and lap, past the last slot). Does not signal.")]
        #[cfg_attr(feature = "checked", track_caller)]
        #[inline(always)]
        pub fn $step(&mut self) {
            self.$half(Call::$c_step);
            self.$half.step();
        }

        #[doc = concat!($side, ": waits for the ", $other, ", signals `", $raised, "`, and steps, with no work in between.")]
        #[cfg_attr(feature = "checked", track_caller)]
        #[inline(always)]
        pub fn $signal_and_step(&mut self) {
            self.$half(Call::$c_signal_and_step);
            self.$half.wait_signal_and_step();
        }

        #[doc = concat!($side, ": waits for the ", $other, " and returns a handle to the ", $slot, " slot, which must be released ([`Stage::release`](crate::Stage::release) or `release_without_signal`). Several may be held.")]
        #[cfg_attr(feature = "checked", track_caller)]
        #[inline(always)]
        pub fn $acquire(&self) -> $Stage<'_, STAGES, B> {
            self.$half(Call::$c_acquire).acquire_as(Call::$c_acquire)
        }

        #[doc = concat!($side, ": waits for the ", $other, ", runs `f` on the ", $slot, " slot, then signals `", $raised, "`. Returns what `f` returns.")]
        #[cfg_attr(feature = "checked", track_caller)]
        #[inline(always)]
        pub fn $scope<R>(&self, f: impl FnOnce(StageView<'_, B>) -> R) -> R {
            self.$half(Call::$c_scope).with_stage(f)
        }

        #[doc = concat!($side, ": waits for the ", $other, " and runs `f` with the stage handle, *without* signalling after: `f` makes the arrivals itself (one lane's `arrive_expect_tx`, lane-guarded `arrive`).")]
        #[cfg_attr(feature = "checked", track_caller)]
        #[inline(always)]
        pub fn $explicit<R>(&self, f: impl FnOnce(&$Stage<'_, STAGES, B>) -> R) -> R {
            self.$half(Call::$c_explicit).with_stage_explicit(f)
        }
    };
}

/// A ring of `STAGES` shared-memory slots between producer threads and consumer threads,
/// synchronised by backend `B` (whose type carries the arrive counts): a [`ProducerHalf`] and a
/// [`ConsumerHalf`] in one value, with the reference design's method names.
///
/// Every thread of the kernel holds its own value, made by [`new`](Self::new) from the same
/// barrier storage; one thread calls [`init`](Self::init) and a block barrier follows. A thread
/// then uses one side: producer threads the `producer_*`/`wait_consumer`/`acquire_producer`/
/// `produce` methods, consumer threads the `consumer_*`/`wait_producer`/`acquire_consumer`/
/// `consume` methods.
///
/// **Roles in the type.** [`split`](Self::split), [`into_producer`](Self::into_producer) and
/// [`into_consumer`](Self::into_consumer) give the halves, on which the other side's methods do
/// not exist: a consumer calling `produce` does not compile. On the whole value both sides'
/// methods exist, and only a `checked` build catches a thread that uses both (a wrong-role
/// record).
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
    producer: ProducerHalf<STAGES, B>,
    consumer: ConsumerHalf<STAGES, B>,
    /// Checked builds: the side this value has served, if any yet.
    #[cfg(feature = "checked")]
    side: core::cell::Cell<Option<crate::checked::Role>>,
}

impl<const STAGES: usize, B: PipelineBackend> ProducerConsumerPipeline<STAGES, B> {
    /// The number of barrier storage elements ([`barrier_elems`]): `2 * STAGES`, full then
    /// empty; checked builds add the backend's arrival shadows and one diagnostics word.
    pub const STORAGE_ELEMS: usize = barrier_elems::<B>(STAGES);

    /// The shared-memory bytes the barriers take ([`barrier_bytes`]; `16 * STAGES` without the
    /// `checked` feature).
    pub const SMEM_BYTES: usize = barrier_bytes::<B>(STAGES);

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
    /// As [`PipelineHalf::new`]: `storage` holds [`STORAGE_ELEMS`](Self::STORAGE_ELEMS) aligned
    /// elements, valid and used for nothing else while any value made from it exists; one
    /// thread's [`init`](Self::init) and a block barrier come before any other use; every thread
    /// of a side is counted in its arrive count and arrives once per stage it passes.
    #[inline(always)]
    #[must_use]
    pub unsafe fn new(storage: *mut B::Storage) -> Self {
        // SAFETY: forwarded from this function's contract.
        let backend = unsafe { B::new::<STAGES>(storage) };
        Self {
            // SAFETY: forwarded from this function's contract; `backend` is made from `storage`.
            producer: unsafe { PipelineHalf::with_backend(backend, storage) },
            // SAFETY: as above.
            consumer: unsafe { PipelineHalf::with_backend(backend, storage) },
            #[cfg(feature = "checked")]
            side: core::cell::Cell::new(None),
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
        // SAFETY: forwarded; the barriers are initialised once (by the producer half), the
        // diagnostics word is shared by both halves.
        unsafe { self.producer.init_with(diagnostics) };
    }

    /// The backend value (barrier locations), for backend-specific operations.
    #[inline(always)]
    #[must_use]
    pub fn backend(&self) -> &B {
        self.producer.backend()
    }

    /// The two halves, each with its own side's methods only.
    #[inline(always)]
    #[must_use]
    pub fn split(self) -> (ProducerHalf<STAGES, B>, ConsumerHalf<STAGES, B>) {
        (self.producer, self.consumer)
    }

    /// The producer half (for a thread that only produces).
    #[inline(always)]
    #[must_use]
    pub fn into_producer(self) -> ProducerHalf<STAGES, B> {
        self.producer
    }

    /// The consumer half (for a thread that only consumes).
    #[inline(always)]
    #[must_use]
    pub fn into_consumer(self) -> ConsumerHalf<STAGES, B> {
        self.consumer
    }

    /// Checked builds: records that this value serves side `S`, and stops the kernel if it served
    /// the other side before (the wrong-role mistake the halves rule out by type).
    #[cfg_attr(feature = "checked", track_caller)]
    #[inline(always)]
    fn claim<S: Side>(&self, half: &PipelineHalf<STAGES, B, S>, call: Call) {
        #[cfg(feature = "checked")]
        {
            use crate::checked::Role;
            let mine = if S::WAITS_ON_FULL {
                Role::Consumer
            } else {
                Role::Producer
            };
            match self.side.get() {
                None => self.side.set(Some(mine)),
                Some(used) if used != mine => half.wrong_role(call),
                Some(_) => {}
            }
        }
        #[cfg(not(feature = "checked"))]
        let _ = (half, call);
    }

    /// The producer half, after the role check.
    #[cfg_attr(feature = "checked", track_caller)]
    #[inline(always)]
    fn producer(&self, call: Call) -> &ProducerHalf<STAGES, B> {
        self.claim(&self.producer, call);
        &self.producer
    }

    /// The consumer half, after the role check.
    #[cfg_attr(feature = "checked", track_caller)]
    #[inline(always)]
    fn consumer(&self, call: Call) -> &ConsumerHalf<STAGES, B> {
        self.claim(&self.consumer, call);
        &self.consumer
    }

    side_methods! {
        half: consumer, Side: Consumer, Stage: ConsumerStage,
        side: "Consumer", other: "producer", raised: "empty", slot: "filled",
        wait: wait_producer, wait_ticks: wait_producer_ticks, try_wait: try_wait_producer,
        wait_if_needed: wait_producer_if_needed, stage: consumer_stage, cursor: consumer_cursor,
        signal: consumer_signal, step: consumer_step, signal_and_step: consumer_signal_and_step,
        acquire: acquire_consumer, scope: consume, explicit: consume_explicit,
        calls: [WaitProducer, TryWaitProducer, ConsumerSignal, ConsumerStep,
            ConsumerSignalAndStep, AcquireConsumer, Consume, ConsumeExplicit],
    }

    side_methods! {
        half: producer, Side: Producer, Stage: ProducerStage,
        side: "Producer", other: "consumers", raised: "full", slot: "free",
        wait: wait_consumer, wait_ticks: wait_consumer_ticks, try_wait: try_wait_consumer,
        wait_if_needed: wait_consumer_if_needed, stage: producer_stage, cursor: producer_cursor,
        signal: producer_signal, step: producer_step, signal_and_step: producer_signal_and_step,
        acquire: acquire_producer, scope: produce, explicit: produce_explicit,
        calls: [WaitConsumer, TryWaitConsumer, ProducerSignal, ProducerStep,
            ProducerSignalAndStep, AcquireProducer, Produce, ProduceExplicit],
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
    pub fn full_barrier(&self, stage: u32) -> B::Signal<'_> {
        self.producer.raised_signal(stage)
    }

    /// The `empty` barrier of slot `stage` (the one consumers signal and producers wait on).
    ///
    /// # Panics
    ///
    /// If `stage >= STAGES`.
    #[doc(alias = "consumer_mbar")]
    #[inline(always)]
    #[must_use]
    pub fn empty_barrier(&self, stage: u32) -> B::Signal<'_> {
        self.consumer.raised_signal(stage)
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
            producer: PipelineHalf::at(backend, producer),
            consumer: PipelineHalf::at(backend, consumer),
        }
    }
}

impl<const STAGES: usize, const C: u32, Sc: MbarScope>
    ProducerConsumerPipeline<STAGES, NvidiaMbarBackend<1, C, Sc>>
{
    /// Producer: [`ProducerHalf::produce_tma`] (waits for a free slot, announces `tx_bytes` and
    /// arrives on its `full` barrier, runs `f` to issue the copies, moves on), after the checked
    /// build's role check.
    ///
    /// # Panics
    ///
    /// If `tx_bytes > MAX_TX_BYTES` (2^20 - 1).
    #[cfg_attr(feature = "checked", track_caller)]
    #[inline(always)]
    pub fn produce_tma<R>(
        &self,
        tx_bytes: u32,
        f: impl FnOnce(StageView<'_, NvidiaMbarBackend<1, C, Sc>>) -> R,
    ) -> R {
        self.producer(Call::ProduceExplicit)
            .produce_tma(tx_bytes, f)
    }
}

impl<const STAGES: usize, B: PipelineBackend + core::fmt::Debug> core::fmt::Debug
    for ProducerConsumerPipeline<STAGES, B>
{
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("ProducerConsumerPipeline")
            .field("backend", self.backend())
            .field("producer", &self.producer.cursor())
            .field("consumer", &self.consumer.cursor())
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
