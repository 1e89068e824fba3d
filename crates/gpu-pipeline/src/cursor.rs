//! Cursor arithmetic: which slot a side of the pipeline is on, and which lap of the ring.
//!
//! This module is pure: no `unsafe`, no `cfg`, no hardware. Every backend and every
//! pipeline type moves through the ring with the same [`Cursor`], so the start
//! convention and the wrap rule are written once, here.
//!
//! # The start convention
//!
//! Every slot starts empty. The producer therefore starts on **lap 1** and the consumer on
//! **lap 0**: a producer on lap `q` waits for the consumer's release of lap `q - 1`, and on
//! its first pass (`q = 1`) that is "lap 0 released", which a fresh barrier already is.
//! A consumer on lap `p` waits for the producer's fill of lap `p`.
//! The role is part of the cursor's type ([`Producer`], [`Consumer`]), and the only way to
//! get a cursor is [`Cursor::start`] followed by [`Cursor::step`]: a producer cursor on
//! lap 0 of its first pass, the classic wrong-start-phase hang, cannot be written.
//!
//! # Wrapping
//!
//! The lap is a `u32` that wraps modulo 2^32. Backends only ever use it modulo 2^32:
//! NVIDIA takes its parity (2^32 is even, so the parity sequence is unbroken by the wrap),
//! and the counter backends compare counters with serial-number arithmetic modulo 2^32
//! (see [`crate::threshold`]). A pipeline may therefore run for any number of laps.

use core::fmt;
use core::marker::PhantomData;

mod sealed {
    pub trait Sealed {}
}

/// One side of a pipeline: [`Producer`] or [`Consumer`]. Sealed.
///
/// A side fixes everything that differs between the two halves of a pipeline, so that the
/// halves ([`PipelineHalf`](crate::PipelineHalf)) and their stage handles are written once:
/// the start lap, which of a slot's two signals the side waits on and which it raises, and how
/// many completions of the awaited signal a lap needs.
pub trait Side: sealed::Sealed + Copy + 'static {
    /// The lap a cursor of this side starts on: 1 for the producer, 0 for the consumer.
    const START_LAP: u32;
    /// `"producer"` or `"consumer"`, for messages.
    const NAME: &'static str;
    /// Whether this side waits on a slot's *full* signal (the consumer) and raises *empty*;
    /// `false`: it waits on *empty* and raises *full* (the producer).
    const WAITS_ON_FULL: bool;

    /// The completions the awaited signal must have made before this side, on `lap`, may use
    /// the slot, modulo 2^32: a consumer on lap `p` needs the `(p + 1)`-th completion of
    /// *full*; a producer on lap `q` needs the `(q - 1)`-th completion of *empty* (on its first
    /// pass, `q = 1`: none, so it does not wait).
    #[must_use]
    fn completions(lap: u32) -> u32;

    /// Of a slot's two signals, the one this side waits on.
    #[inline(always)]
    #[must_use]
    fn awaited<T>(full: T, empty: T) -> T {
        if Self::WAITS_ON_FULL { full } else { empty }
    }

    /// Of a slot's two signals, the one this side raises.
    #[inline(always)]
    #[must_use]
    fn raised<T>(full: T, empty: T) -> T {
        if Self::WAITS_ON_FULL { empty } else { full }
    }
}

/// The producer side: it fills slots and raises their *full* signal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Producer {}

/// The consumer side: it drains slots and raises their *empty* signal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Consumer {}

impl sealed::Sealed for Producer {}
impl sealed::Sealed for Consumer {}

impl Side for Producer {
    const START_LAP: u32 = 1;
    const NAME: &'static str = "producer";
    const WAITS_ON_FULL: bool = false;

    #[inline(always)]
    fn completions(lap: u32) -> u32 {
        lap.wrapping_sub(1)
    }
}

impl Side for Consumer {
    const START_LAP: u32 = 0;
    const NAME: &'static str = "consumer";
    const WAITS_ON_FULL: bool = true;

    #[inline(always)]
    fn completions(lap: u32) -> u32 {
        lap.wrapping_add(1)
    }
}

/// Checks a stage count at compile time. Referenced from every constructor that takes one.
pub(crate) struct StageCount<const STAGES: usize>;

impl<const STAGES: usize> StageCount<STAGES> {
    /// Evaluating this constant fails the build when `STAGES` is not a usable stage count.
    pub(crate) const CHECK: () = {
        assert!(
            STAGES >= 1,
            "gpu-pipeline: a pipeline needs at least one stage (STAGES = 0 was given)"
        );
        assert!(
            STAGES <= u32::MAX as usize,
            "gpu-pipeline: STAGES must fit in a u32 stage index"
        );
    };
}

/// Where one side of a pipeline stands: a slot index in `0..STAGES` and a monotonic lap.
///
/// A value type. `S` is the side ([`Producer`] or [`Consumer`]), which fixes the start lap.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Cursor<const STAGES: usize, S: Side> {
    stage: u32,
    lap: u32,
    side: PhantomData<S>,
}

impl<const STAGES: usize, S: Side> Cursor<STAGES, S> {
    /// The start of a pipeline: slot 0, on the side's start lap (producer 1, consumer 0).
    ///
    /// `STAGES = 0` fails to compile here.
    #[inline(always)]
    #[must_use]
    pub const fn start() -> Self {
        let () = StageCount::<STAGES>::CHECK;
        Self {
            stage: 0,
            lap: S::START_LAP,
            side: PhantomData,
        }
    }

    /// The slot index, in `0..STAGES`.
    #[inline(always)]
    #[must_use]
    pub const fn stage(&self) -> u32 {
        self.stage
    }

    /// The lap, counted modulo 2^32 from the side's start lap.
    #[inline(always)]
    #[must_use]
    pub const fn lap(&self) -> u32 {
        self.lap
    }

    /// The parity of the lap, the single bit NVIDIA's `mbarrier.try_wait.parity` takes.
    #[inline(always)]
    #[must_use]
    pub const fn parity(&self) -> u32 {
        self.lap & 1
    }

    /// Moves to the next slot; past the last slot, back to slot 0 on the next lap.
    #[inline(always)]
    pub fn step(&mut self) {
        *self = self.stepped();
    }

    /// The cursor one slot further on, as [`step`](Self::step) would leave it.
    #[inline(always)]
    #[must_use]
    pub const fn stepped(self) -> Self {
        let next = self.stage + 1;
        if next as usize == STAGES {
            Self {
                stage: 0,
                lap: self.lap.wrapping_add(1),
                side: PhantomData,
            }
        } else {
            Self {
                stage: next,
                lap: self.lap,
                side: PhantomData,
            }
        }
    }

    /// A cursor at an arbitrary place, for the crate's own tests of wrapping.
    #[cfg(test)]
    pub(crate) const fn at(stage: u32, lap: u32) -> Self {
        assert!((stage as usize) < STAGES);
        Self {
            stage,
            lap,
            side: PhantomData,
        }
    }
}

impl<const STAGES: usize, S: Side> Default for Cursor<STAGES, S> {
    fn default() -> Self {
        Self::start()
    }
}

impl<const STAGES: usize, S: Side> fmt::Debug for Cursor<STAGES, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} cursor {{ stage: {}/{}, lap: {} }}",
            S::NAME,
            self.stage,
            STAGES,
            self.lap
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Steps a cursor `n` times by a slow, obviously right model and compares every position.
    fn check_against_model<const STAGES: usize, S: Side>(n: u64) {
        let mut cursor = Cursor::<STAGES, S>::start();
        for i in 0..n {
            let expect_stage = (i % STAGES as u64) as u32;
            let expect_lap = (S::START_LAP as u64 + i / STAGES as u64) as u32;
            assert_eq!(
                (cursor.stage(), cursor.lap()),
                (expect_stage, expect_lap),
                "step {i}"
            );
            assert_eq!(cursor.parity(), expect_lap & 1);
            cursor.step();
        }
    }

    #[test]
    fn every_position_matches_the_model_for_stage_counts_1_to_9() {
        check_against_model::<1, Producer>(50);
        check_against_model::<1, Consumer>(50);
        check_against_model::<2, Producer>(50);
        check_against_model::<2, Consumer>(50);
        check_against_model::<3, Producer>(50);
        check_against_model::<3, Consumer>(50);
        check_against_model::<4, Producer>(50);
        check_against_model::<5, Consumer>(50);
        check_against_model::<7, Producer>(50);
        check_against_model::<8, Consumer>(50);
        check_against_model::<9, Producer>(50);
    }

    #[test]
    fn producer_starts_on_lap_1_and_consumer_on_lap_0() {
        let p = Cursor::<4, Producer>::start();
        let c = Cursor::<4, Consumer>::start();
        assert_eq!((p.stage(), p.lap(), p.parity()), (0, 1, 1));
        assert_eq!((c.stage(), c.lap(), c.parity()), (0, 0, 0));
        assert_eq!(Cursor::<4, Producer>::default(), p);
    }

    #[test]
    fn lap_wraps_modulo_2_pow_32_and_parity_keeps_alternating() {
        let mut c = Cursor::<3, Consumer>::at(2, u32::MAX);
        assert_eq!(c.parity(), 1);
        c.step();
        assert_eq!((c.stage(), c.lap(), c.parity()), (0, 0, 0));
        c.step();
        assert_eq!((c.stage(), c.lap()), (1, 0));
    }

    #[test]
    fn stepped_is_step() {
        let mut a = Cursor::<3, Producer>::start();
        for _ in 0..10 {
            let b = a.stepped();
            a.step();
            assert_eq!(a, b);
        }
    }

    #[test]
    fn debug_names_the_side() {
        let c = Cursor::<2, Consumer>::start();
        assert_eq!(
            std::format!("{c:?}"),
            "consumer cursor { stage: 0/2, lap: 0 }"
        );
    }
}
