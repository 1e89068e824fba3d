//! Stage handles: [`Stage`] (a side's hold on one slot, [`ProducerStage`] / [`ConsumerStage`])
//! and [`StageView`] (the copyable index and barrier a scope's closure gets).
//!
//! A handle is made by a pipeline half's `acquire` (after the wait; the half's cursor has moved
//! on to the next slot) and must be released exactly once, by a consuming method:
//! [`release`](Stage::release) (the calling thread arrives on the slot's raised signal) or
//! [`release_without_signal`](Stage::release_without_signal) (the arrivals were made otherwise).
//!
//! # What is checked, and when
//!
//! | mistake | caught |
//! |---|---|
//! | release twice, use after release | does not compile (`release(self)` moves the handle) |
//! | a handle dropped without release, on some path | does not compile on the GPU targets (`panic = "abort"`), **only at code generation**: `cargo check` accepts it, `cargo build` fails. On the host (unwinding) it panics at run time |
//! | `core::mem::forget(stage)` | not caught by the types; a `checked` build's pipeline reports the stage never released when it goes out of scope |
//! | `release_without_signal` with no arrival made | not caught by the types; in a `checked` build the other side's wait times out with a record of the arrivals made and expected |
//! | two pipeline values over one storage used for one side | not caught by the types; a `checked` build reports the extra arrivals (wrong count) |
//!
//! The drop check is a constant evaluated when a handle's `Drop` is instantiated. Its message
//! says which handle (producer or consumer); rustc points the error at the panic inside this
//! file's `DropCheck` and adds a note naming the instantiated
//! `<Stage<'_, STAGES, B, Consumer> as Drop>::drop`. It cannot point at the function that drops
//! the handle: the drop is compiler-made glue, and a constant's error carries no caller. Look for
//! the path in the function that acquired the stage on which it reaches the end of a scope
//! unreleased (an early `return`, a `break`, a branch that skips the release).
//!
//! Several handles of one side may be held at once (a consumer that keeps one stage in flight
//! releases stage `k - 1` after it issued the work of stage `k`); each is released once, in any
//! order.
//!
//! # How many stages the sides may hold
//!
//! A producer that holds `P` stages at once (it acquires its `P`-th before it releases the
//! oldest, so `P - 1` held while it waits) and consumers that hold `C` need
//! `STAGES >= P + C - 1`. With fewer, the ring can reach a state where the producer holds
//! `P - 1` stages and waits for a free one, the consumers hold `C - 1` and wait for a full one,
//! and every other slot is in neither state: each side waits for a stage the other holds, a hang
//! by protocol with no wrong arrival anywhere. The common shapes: a consumer that keeps one stage
//! in flight (`C = 2`) with a producer that releases each stage before the next (`P = 1`) needs 2
//! stages; both sides keeping one in flight need 3. A side that holds all `STAGES` slots and
//! acquires another waits for itself. In a `checked` build such a wait is reported like any hang,
//! and the record says how many stages the waiting side held and states this rule.

use core::marker::PhantomData;
use core::mem::ManuallyDrop;

use crate::backend::{PipelineBackend, Signal};
use crate::cursor::{Consumer, Producer, Side};

/// The slot a scope (`produce`, `consume`) runs on: its index and its barrier.
///
/// A scope signals on exit, so the view offers no `arrive`.
pub struct StageView<'p, B: PipelineBackend + 'p> {
    index: u32,
    barrier: B::Signal<'p>,
}

impl<'p, B: PipelineBackend + 'p> Clone for StageView<'p, B> {
    #[inline(always)]
    fn clone(&self) -> Self {
        *self
    }
}

impl<'p, B: PipelineBackend + 'p> Copy for StageView<'p, B> {}

impl<'p, B: PipelineBackend + 'p> StageView<'p, B> {
    /// The slot index, in `0..STAGES`.
    #[inline(always)]
    #[must_use]
    pub fn index(&self) -> u32 {
        self.index
    }

    /// The slot's raised signal: `full` in a `produce` scope, `empty` in a `consume` scope.
    #[doc(alias = "mbar")]
    #[inline(always)]
    #[must_use]
    pub fn barrier(&self) -> B::Signal<'p> {
        self.barrier
    }
}

impl<'p, B: PipelineBackend + 'p> core::fmt::Debug for StageView<'p, B> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("StageView")
            .field("index", &self.index)
            .finish_non_exhaustive()
    }
}

/// A side's hold on one slot: [`ProducerStage`] (a free slot to fill) or [`ConsumerStage`] (a
/// full slot to drain), from a pipeline half's `acquire`.
///
/// Use the slot `index()`, then [`release`](Self::release) it: the calling thread arrives on the
/// slot's raised signal (`full` for a producer, `empty` for a consumer). For arrivals made
/// otherwise (one lane's `arrive_expect_tx` for TMA, lane-guarded [`arrive`](Self::arrive)),
/// finish with [`release_without_signal`](Self::release_without_signal).
///
/// Unlike Mojo's `ProducerStage.release()`, which only steps, `release` here signals: the common
/// case cannot forget the signal. The cursor already moved on at `acquire`, so a side may hold
/// several stages at once (see the [module docs](self)).
#[must_use = "a stage must be released with `release()` or `release_without_signal()`: a stage that is never released hangs the other side"]
pub struct Stage<'p, const STAGES: usize, B: PipelineBackend + 'p, S: Side> {
    /// The slot and its raised signal.
    view: StageView<'p, B>,
    /// Checked builds: the half's count of stages held, decremented at release.
    held: Held<'p>,
    /// Neither `Send` nor `Sync`: a stage is released by the thread that acquired it (it is one
    /// of that side's arrivals).
    side: PhantomData<(S, *const ())>,
}

/// Checked builds: where a half counts the stages it holds (nothing otherwise).
#[cfg(feature = "checked")]
pub(crate) type Held<'p> = &'p core::cell::Cell<u32>;
/// Checked builds: where a half counts the stages it holds (nothing otherwise).
#[cfg(not(feature = "checked"))]
pub(crate) type Held<'p> = PhantomData<&'p ()>;

/// A producer's hold on one free slot: fill it, then [`release`](Stage::release) (signals `full`).
pub type ProducerStage<'p, const STAGES: usize, B> = Stage<'p, STAGES, B, Producer>;

/// A consumer's hold on one filled slot: read it, then [`release`](Stage::release) (signals
/// `empty`).
pub type ConsumerStage<'p, const STAGES: usize, B> = Stage<'p, STAGES, B, Consumer>;

impl<'p, const STAGES: usize, B: PipelineBackend + 'p, S: Side> Stage<'p, STAGES, B, S> {
    /// A handle on slot `index` whose raised signal is `signal`.
    #[inline(always)]
    pub(crate) fn new(index: u32, signal: B::Signal<'p>, held: Held<'p>) -> Self {
        #[cfg(feature = "checked")]
        held.set(held.get() + 1);
        Self {
            view: StageView {
                index,
                barrier: signal,
            },
            held,
            side: PhantomData,
        }
    }

    /// The slot index, in `0..STAGES`.
    #[inline(always)]
    #[must_use]
    pub fn index(&self) -> u32 {
        self.view.index
    }

    /// The slot's raised signal (`full` for a producer, `empty` for a consumer), for signalling
    /// through hardware extras (NVIDIA: TMA `arrive_expect_tx` and bulk copies completing on it,
    /// an arrival on a cluster peer's barrier).
    #[doc(alias = "mbar")]
    #[inline(always)]
    #[must_use]
    pub fn barrier(&self) -> B::Signal<'p> {
        self.view.barrier
    }

    /// The calling thread arrives on the slot's raised signal, for lane-guarded signalling:
    /// `if lane < n { stage.arrive() }`, then
    /// [`release_without_signal`](Self::release_without_signal).
    #[inline(always)]
    pub fn arrive(&self) {
        self.view.barrier.arrive();
    }

    /// A copyable view of the slot (index and barrier).
    #[inline(always)]
    #[must_use]
    pub fn view(&self) -> StageView<'p, B> {
        self.view
    }

    /// Releases the slot: the calling thread arrives on its raised signal (`full` for a
    /// producer: the slot is filled; `empty` for a consumer: the slot may be refilled).
    #[doc(alias = "commit")]
    #[inline(always)]
    pub fn release(self) {
        let signal = self.view.barrier;
        self.forget();
        signal.arrive();
    }

    /// Releases the slot without arriving: the arrivals were made with
    /// [`arrive`](Self::arrive) or through the barrier (TMA).
    #[inline(always)]
    pub fn release_without_signal(self) {
        self.forget();
    }

    /// Ends the handle without running its drop check.
    #[inline(always)]
    fn forget(self) {
        let this = ManuallyDrop::new(self);
        #[cfg(feature = "checked")]
        this.held.set(this.held.get().wrapping_sub(1));
        #[cfg(not(feature = "checked"))]
        let _ = this;
    }
}

impl<'p, const STAGES: usize, B: PipelineBackend + 'p, S: Side> core::fmt::Debug
    for Stage<'p, STAGES, B, S>
{
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct(if S::WAITS_ON_FULL {
            "ConsumerStage"
        } else {
            "ProducerStage"
        })
        .field("index", &self.view.index)
        .finish_non_exhaustive()
    }
}

/// Fails the build when evaluated; see the module docs.
#[cfg(panic = "abort")]
struct DropCheck<S>(PhantomData<S>);

#[cfg(panic = "abort")]
impl<S: Side> DropCheck<S> {
    const STAGE_DROPPED: () = panic!(
        "{}",
        if S::WAITS_ON_FULL {
            "gpu-pipeline: a ConsumerStage is dropped without being released. Call `release()` (signal empty) or `release_without_signal()` on every path, or use `consume(|stage| ...)`; a stage that is never released hangs the producer."
        } else {
            "gpu-pipeline: a ProducerStage is dropped without being released. Call `release()` (signal full) or `release_without_signal()` on every path, or use `produce(|stage| ...)`; a stage that is never released hangs the consumers."
        }
    );
}

impl<'p, const STAGES: usize, B: PipelineBackend + 'p, S: Side> Drop for Stage<'p, STAGES, B, S> {
    #[inline(always)]
    fn drop(&mut self) {
        #[cfg(panic = "abort")]
        let () = DropCheck::<S>::STAGE_DROPPED;
        #[cfg(not(panic = "abort"))]
        dropped_at_run_time(
            if S::WAITS_ON_FULL {
                "ConsumerStage"
            } else {
                "ProducerStage"
            },
            if S::WAITS_ON_FULL {
                "producer"
            } else {
                "consumers"
            },
        );
    }
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
