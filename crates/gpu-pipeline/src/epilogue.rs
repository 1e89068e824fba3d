//! [`EpiLoadPipeline`]: the epilogue-load warp feeding the epilogue store warps.
//!
//! For residual epilogues `D = accum + beta * C`: one epilogue-load thread brings each tile of `C`
//! into a stage with one TMA transaction (producer arrive count 1: its `arrive_expect_tx`), and the
//! four epilogue warps (128 threads, consumer arrive count 128) read it, add it to their
//! accumulators and release the stage.

use crate::backend::{NvidiaMbarBackend, PipelineBackend};
use crate::pipeline::ProducerConsumerPipeline;
use crate::stage::{ConsumerStage, ProducerStage, StageView};

/// An epilogue-load pipeline of `STAGES` stages (typically 2) over backend `B`, by default
/// mbarriers with 1 producer arrival (the TMA transaction) and 128 consumer arrivals (four
/// epilogue warps).
///
/// A thin layer over [`ProducerConsumerPipeline`] with the reference's method names, and
/// [`produce_tma`](Self::produce_tma), which cannot forget the `expect_tx`.
pub struct EpiLoadPipeline<const STAGES: usize, B: PipelineBackend = NvidiaMbarBackend<1, 128>> {
    pipeline: ProducerConsumerPipeline<STAGES, B>,
}

impl<const STAGES: usize, B: PipelineBackend> EpiLoadPipeline<STAGES, B> {
    /// The shared-memory bytes of the barriers (`2 * STAGES` of them).
    pub const SMEM_BYTES: usize = ProducerConsumerPipeline::<STAGES, B>::SMEM_BYTES;

    /// An epilogue-load pipeline over the barrier storage at `storage`.
    ///
    /// # Safety
    ///
    /// As [`ProducerConsumerPipeline::new`].
    #[inline(always)]
    #[must_use]
    pub unsafe fn new(storage: *mut B::Storage) -> Self {
        // SAFETY: forwarded.
        let pipeline = unsafe { ProducerConsumerPipeline::new(storage) };
        Self { pipeline }
    }

    /// Initialises the barriers with the backend's arrive counts (1 and 128 by default).
    ///
    /// # Safety
    ///
    /// As [`ProducerConsumerPipeline::init`]: one thread, then a block barrier.
    #[doc(alias = "init_barriers")]
    #[inline(always)]
    pub unsafe fn init(&self) {
        // SAFETY: forwarded.
        unsafe { self.pipeline.init() }
    }

    /// As [`init`](Self::init), with the label and wait budget of checked builds (see
    /// [`ProducerConsumerPipeline::init_with`]).
    ///
    /// # Safety
    ///
    /// As [`init`](Self::init).
    #[inline(always)]
    pub unsafe fn init_with(&self, diagnostics: crate::Diagnostics) {
        // SAFETY: forwarded.
        unsafe { self.pipeline.init_with(diagnostics) }
    }

    /// The underlying pipeline, for everything else.
    #[inline(always)]
    pub fn pipeline(&mut self) -> &mut ProducerConsumerPipeline<STAGES, B> {
        &mut self.pipeline
    }

    /// Load warp: waits for the store warps to free the current stage.
    #[cfg_attr(feature = "checked", track_caller)]
    #[inline(always)]
    pub fn wait_consumer(&self) {
        self.pipeline.wait_consumer();
    }

    /// Load warp: the `full` barrier of the current stage, for the TMA transaction.
    #[inline(always)]
    #[must_use]
    pub fn producer_mbar(&self) -> B::Signal<'_> {
        self.pipeline.full_barrier(self.pipeline.producer_stage())
    }

    /// Load warp: the current stage index.
    #[inline(always)]
    #[must_use]
    pub fn producer_stage(&self) -> u32 {
        self.pipeline.producer_stage()
    }

    /// Load warp: moves to the next stage (no signal).
    #[inline(always)]
    pub fn producer_step(&mut self) {
        self.pipeline.producer_step();
    }

    /// Load warp: waits for a free stage and returns its handle.
    #[cfg_attr(feature = "checked", track_caller)]
    #[inline(always)]
    pub fn acquire_producer(&self) -> ProducerStage<'_, STAGES, B> {
        self.pipeline.acquire_producer()
    }

    /// Load warp: waits for a free stage and runs `f` with the handle, *without* signalling
    /// after: `f` makes the producer arrival (the TMA's `arrive_expect_tx`).
    ///
    /// The reference calls this `produce`; here `produce` always means "signal on exit"
    /// ([`ProducerConsumerPipeline::produce`]), so the reference's name is only a search alias.
    /// [`produce_tma`](Self::produce_tma) also makes the arrival, and cannot forget it.
    #[doc(alias = "produce")]
    #[cfg_attr(feature = "checked", track_caller)]
    #[inline(always)]
    pub fn produce_explicit<R>(&self, f: impl FnOnce(&ProducerStage<'_, STAGES, B>) -> R) -> R {
        self.pipeline.produce_explicit(f)
    }

    /// Store warps: waits for the load warp to fill the current stage.
    #[cfg_attr(feature = "checked", track_caller)]
    #[inline(always)]
    pub fn wait_producer(&self) {
        self.pipeline.wait_producer();
    }

    /// Store warps: the current stage index.
    #[inline(always)]
    #[must_use]
    pub fn consumer_stage(&self) -> u32 {
        self.pipeline.consumer_stage()
    }

    /// Store warps: moves to the next stage (no signal).
    #[inline(always)]
    pub fn consumer_step(&mut self) {
        self.pipeline.consumer_step();
    }

    /// Store warps: waits for a filled stage and returns its handle.
    #[cfg_attr(feature = "checked", track_caller)]
    #[inline(always)]
    pub fn acquire_consumer(&self) -> ConsumerStage<'_, STAGES, B> {
        self.pipeline.acquire_consumer()
    }

    /// Store warps: waits for a filled stage, runs `f`, then signals `empty` and steps.
    #[cfg_attr(feature = "checked", track_caller)]
    #[inline(always)]
    pub fn consume<R>(&self, f: impl FnOnce(StageView<'_, B>) -> R) -> R {
        self.pipeline.consume(f)
    }

    /// Store warps: waits for a filled stage, runs `f` with the handle, steps without signalling
    /// (`f` arrives itself, for lane-guarded patterns).
    #[cfg_attr(feature = "checked", track_caller)]
    #[inline(always)]
    pub fn consume_explicit<R>(&self, f: impl FnOnce(&ConsumerStage<'_, STAGES, B>) -> R) -> R {
        self.pipeline.consume_explicit(f)
    }
}

impl<const STAGES: usize, const CONSUMER_ARRIVALS: u32>
    EpiLoadPipeline<STAGES, NvidiaMbarBackend<1, CONSUMER_ARRIVALS>>
{
    /// Load thread: waits for a free stage, announces `tx_bytes` and arrives on its `full` barrier
    /// (`mbarrier.arrive.expect_tx`), runs `f` to issue the copies that complete on that barrier
    /// (for example [`MbarrierRef::bulk_copy_from_global`](crate::MbarrierRef::bulk_copy_from_global)
    /// on `stage.barrier()`), then steps. The stage becomes full when all `tx_bytes` have landed.
    ///
    /// Call it from the one load thread (the producer arrive count is 1).
    ///
    /// # Panics
    ///
    /// If `tx_bytes > MAX_TX_BYTES` (2^20 - 1).
    #[cfg_attr(feature = "checked", track_caller)]
    #[inline(always)]
    pub fn produce_tma<R>(
        &self,
        tx_bytes: u32,
        f: impl FnOnce(StageView<'_, NvidiaMbarBackend<1, CONSUMER_ARRIVALS>>) -> R,
    ) -> R {
        self.pipeline.produce_tma(tx_bytes, f)
    }
}
