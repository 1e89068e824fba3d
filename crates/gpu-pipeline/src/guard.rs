//! Checked builds: the diagnostics a pipeline half carries (feature `checked` only).
//!
//! A [`Guard`] bounds a half's waits, checks the arrival count of each completed wait, counts the
//! stages the half holds, and stops the kernel with a record when one of these goes wrong. The
//! record and the bounded wait themselves are [`crate::checked`]'s; this module only knows the
//! pipeline side of it (which signal, which lap, how many arrivals).

use core::cell::Cell;
use core::panic::Location;

use crate::backend::{PipelineBackend, Signal, barrier_elems};
use crate::checked::{self, Call, Diagnostics, DiagnosticsWord, Fault, NO_SUB_STAGE, Role};
use crate::cursor::{Cursor, Side};
use crate::threshold;

/// A completed wait's count check, not yet compared: compared at the next wait (or when the half
/// goes away), so that the shared-memory read of the shadow is not waited for on the way out of
/// a wait.
#[derive(Clone, Copy)]
struct PendingCheck {
    stage: u32,
    lap: u32,
    expected: u32,
    observed: u32,
    call: Call,
    location: &'static Location<'static>,
}

/// The checked state of one pipeline half.
pub(crate) struct Guard {
    diagnostics: DiagnosticsWord,
    pending: Cell<Option<PendingCheck>>,
    /// Stages acquired and not yet released.
    pub(crate) held: Cell<u32>,
}

/// The record's role of side `S`.
fn role<S: Side>() -> Role {
    if S::WAITS_ON_FULL {
        Role::Consumer
    } else {
        Role::Producer
    }
}

/// The expected and counted arrivals of the signal side `S` waits on at `cursor`, and the
/// signal's arrivals per phase: exactly `completions * per_phase` once the wait returned.
#[inline(always)]
fn counts<const STAGES: usize, B: PipelineBackend, S: Side>(
    backend: B,
    stage: u32,
    lap: u32,
) -> (u32, u32, u32) {
    let per_phase = S::awaited(B::PRODUCER_ARRIVALS, B::CONSUMER_ARRIVALS);
    // SAFETY: the callers pass a cursor's stage, below STAGES.
    let signal = unsafe { S::awaited(backend.full(stage), backend.empty(stage)) };
    (
        threshold::threshold(S::completions(lap), per_phase),
        signal.arrivals(),
        per_phase,
    )
}

/// Stops the kernel with a record of side `S`'s state at (`stage`, `lap`).
#[cold]
#[inline(never)]
#[allow(clippy::too_many_arguments)]
fn fail<const STAGES: usize, B: PipelineBackend, S: Side>(
    backend: B,
    diagnostics: DiagnosticsWord,
    stage: u32,
    lap: u32,
    fault: Fault,
    call: Call,
    held: u32,
    elapsed_ns: u64,
    location: &'static Location<'static>,
) -> ! {
    let (expected, observed, per_phase) = counts::<STAGES, B, S>(backend, stage, lap);
    checked::fail(&checked::Report {
        fault,
        call,
        role: role::<S>(),
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
        held,
        elapsed_ns,
        location,
    })
}

/// Checked builds keep the diagnostics word in one storage element: it must be 8 bytes.
struct CheckedStorage<B>(core::marker::PhantomData<B>);

impl<B: PipelineBackend> CheckedStorage<B> {
    const CHECK: () = assert!(
        core::mem::size_of::<B::Storage>() == 8 && core::mem::align_of::<B::Storage>() >= 8,
        "gpu-pipeline: the checked feature needs a backend whose storage elements are 8 bytes, 8-byte aligned"
    );
}

impl Guard {
    /// The guard of a half over `storage` (the diagnostics word is its last element).
    ///
    /// # Safety
    ///
    /// `storage` holds `barrier_elems::<B>(STAGES)` elements (the half's `new` contract).
    #[inline(always)]
    pub(crate) unsafe fn new<const STAGES: usize, B: PipelineBackend>(
        storage: *mut B::Storage,
    ) -> Self {
        let () = CheckedStorage::<B>::CHECK;
        Self {
            // SAFETY: the diagnostics word is the last of the 8-byte elements (the caller's
            // contract and `CheckedStorage`).
            diagnostics: unsafe {
                DiagnosticsWord::new(
                    storage.cast(),
                    storage.add(barrier_elems::<B>(STAGES) - 1).cast(),
                )
            },
            pending: Cell::new(None),
            held: Cell::new(0),
        }
    }

    /// Stores the label and budget (the initialising thread, before the block barrier).
    ///
    /// # Safety
    ///
    /// Only the initialising thread, before the block barrier.
    #[inline(always)]
    pub(crate) unsafe fn store(&self, diagnostics: Diagnostics) {
        // SAFETY: forwarded.
        unsafe { self.diagnostics.store(diagnostics.word()) }
    }

    /// A bounded wait of side `S` at `cursor`, then the deferred count check of its completion.
    #[track_caller]
    #[inline(always)]
    pub(crate) fn wait<const STAGES: usize, B: PipelineBackend, S: Side>(
        &self,
        backend: B,
        cursor: Cursor<STAGES, S>,
        call: Call,
    ) {
        let (stage, lap) = (cursor.stage(), cursor.lap());
        let location = Location::caller();
        // The slow path gets copies, never `&self`: a pipeline whose address escapes to a
        // non-inlined function loses LLVM's address-space inference (flat atomics on AMD).
        let diagnostics = self.diagnostics;
        let held = self.held.get();
        checked::bounded_wait(
            move || {
                // SAFETY: a cursor's stage is always below STAGES.
                let signal = unsafe { S::awaited(backend.full(stage), backend.empty(stage)) };
                signal.completed(S::completions(lap))
            },
            || self.settle::<STAGES, B, S>(backend),
            move || diagnostics.load(),
            move |elapsed| {
                fail::<STAGES, B, S>(
                    backend,
                    diagnostics,
                    stage,
                    lap,
                    Fault::Timeout,
                    call,
                    held,
                    elapsed,
                    location,
                )
            },
        );
        self.defer_check::<STAGES, B, S>(backend, stage, lap, call, location);
    }

    /// After a try-wait of side `S` at `cursor` that returned `ready`: the previous check, then
    /// (if ready) this completion's.
    #[track_caller]
    #[inline(always)]
    pub(crate) fn after_try<const STAGES: usize, B: PipelineBackend, S: Side>(
        &self,
        backend: B,
        cursor: Cursor<STAGES, S>,
        ready: bool,
        call: Call,
    ) {
        self.settle::<STAGES, B, S>(backend);
        if ready {
            self.defer_check::<STAGES, B, S>(
                backend,
                cursor.stage(),
                cursor.lap(),
                call,
                Location::caller(),
            );
        }
    }

    /// Reads the shadow of the signal a wait just completed on, for a comparison at the next wait.
    #[inline(always)]
    fn defer_check<const STAGES: usize, B: PipelineBackend, S: Side>(
        &self,
        backend: B,
        stage: u32,
        lap: u32,
        call: Call,
        location: &'static Location<'static>,
    ) {
        let (expected, observed, _) = counts::<STAGES, B, S>(backend, stage, lap);
        self.pending.set(Some(PendingCheck {
            stage,
            lap,
            expected,
            observed,
            call,
            location,
        }));
    }

    /// Compares the pending count check, if any; stops the kernel on a mismatch.
    #[inline(always)]
    pub(crate) fn settle<const STAGES: usize, B: PipelineBackend, S: Side>(&self, backend: B) {
        if let Some(check) = self.pending.take() {
            // Only a count above the exact one is a fault here: NVIDIA shadow increments follow
            // their arrivals, so a fresh completion may not show the last ones yet.
            if (check.observed.wrapping_sub(check.expected) as i32) > 0 {
                fail::<STAGES, B, S>(
                    backend,
                    self.diagnostics,
                    check.stage,
                    check.lap,
                    Fault::WrongCount,
                    check.call,
                    self.held.get(),
                    0,
                    check.location,
                );
            }
        }
    }

    /// Stops the kernel: side `S` made `call` at `cursor`, which the other side's methods own.
    #[cold]
    #[track_caller]
    pub(crate) fn wrong_role<const STAGES: usize, B: PipelineBackend, S: Side>(
        &self,
        backend: B,
        cursor: Cursor<STAGES, S>,
        call: Call,
    ) -> ! {
        fail::<STAGES, B, S>(
            backend,
            self.diagnostics,
            cursor.stage(),
            cursor.lap(),
            Fault::WrongRole,
            call,
            self.held.get(),
            0,
            Location::caller(),
        )
    }

    /// When the half goes away: the last check, and no stage still held.
    #[inline(always)]
    pub(crate) fn finish<const STAGES: usize, B: PipelineBackend, S: Side>(
        &self,
        backend: B,
        cursor: Cursor<STAGES, S>,
    ) {
        // On the host, a second panic while unwinding would abort the process.
        #[cfg(feature = "std")]
        if std::thread::panicking() {
            return;
        }
        self.settle::<STAGES, B, S>(backend);
        if self.held.get() != 0 {
            fail::<STAGES, B, S>(
                backend,
                self.diagnostics,
                cursor.stage(),
                cursor.lap(),
                Fault::StageNotReleased,
                Call::PipelineDropped,
                self.held.get(),
                0,
                Location::caller(),
            );
        }
    }
}
