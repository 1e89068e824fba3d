//! Turns on named barriers: `GROUPS` groups of threads (warpgroups) take turns, in order, on
//! `GROUPS` named barriers, one per group: FlashAttention-3's warp-scheduler barriers, the
//! ping-pong of its two consumer warpgroups (one's softmax overlaps the other's GEMMs). The
//! same order as the [`sequence`](crate::sequence) barrier with one ring, but the waiting is the
//! hardware's: `barrier.sync` blocks the warps in the scheduler, where an mbarrier wait is a
//! `try_wait` loop that issues instructions (the attention kernel's profile on an H100, run 105:
//! 2.9 k stall samples in that loop, and twice FlashAttention-3's branches).
//!
//! ```text
//! barrier g (id first + g): the 2 x threads of a phase are group g's, syncing, and
//!                           group g - 1's (mod GROUPS), arriving
//!
//! begin      group GROUPS - 1 arrives on barrier 0 (group 0 goes first)
//! turn       group g: (1) sync on barrier g          -> `NamedSequence::wait`
//!                     ... the group's ordered work ...
//!                     (2) arrive on barrier g + 1    -> `NamedTurn::arrive`
//! end        group 0 syncs on barrier 0: the last turn's hand-over, so that no phase is left
//!            open when the CTA exits (every group takes the same number of turns)
//! ```
//!
//! A phase of barrier `g` completes when group `g` has synced and group `g - 1` has arrived,
//! that is when group `g - 1` has ended a turn; group `g - 1` cannot arrive on barrier `g` a
//! second time before group `g` has synced (it needs its own next turn first, which needs group
//! `g`'s hand-over), so the phases of a barrier never mix two turns.
//!
//! The barriers come from a [`NamedTurns`] constant, whose [`barriers`](NamedTurns::barriers)
//! join the kernel's [`BarrierRegistry`](crate::barrier::BarrierRegistry) (another user of those
//! ids is a compile error), and every sync and arrival goes through the registry's
//! [`Barriers`]:
//!
//! ```
//! use gpu_hopper::barrier::{BarrierRegistry, NamedBarrier};
//! use gpu_hopper::turns::NamedTurns;
//!
//! /// Two consumer warpgroups taking turns on ids 1 and 2.
//! const TURNS: NamedTurns<2> = NamedTurns::new("consumer turns", 1, 128);
//! const EPILOGUE: &[NamedBarrier] = &[NamedBarrier::new("epilogue", 3, 256)];
//! const BARRIERS: BarrierRegistry = BarrierRegistry::new(&[TURNS.barriers(), EPILOGUE]);
//! assert_eq!(BARRIERS.used(), 0b1110);
//! ```
//!
//! Ids past 15 do not compile, nor one group alone:
//!
//! ```compile_fail,E0080
//! const TURNS: gpu_hopper::turns::NamedTurns<2> = gpu_hopper::turns::NamedTurns::new("late", 15, 128);
//! ```
//!
//! ```compile_fail,E0080
//! const TURNS: gpu_hopper::turns::NamedTurns<1> = gpu_hopper::turns::NamedTurns::new("alone", 1, 128);
//! ```
//!
//! A kernel then takes the turns of its group (in `unsafe` code, because `barrier.sync` and
//! `barrier.arrive` are `.aligned`: see [`NamedSequence::wait`] and [`NamedTurn::arrive`]):
//!
//! ```ignore
//! let mut turns = TURNS.group(barriers, warpgroup);
//! unsafe { turns.begin() };
//! for block in blocks {
//!     let turn = unsafe { turns.wait() };
//!     issue_the_gemms(block);
//!     unsafe { turn.arrive() };
//!     softmax(block);
//! }
//! unsafe { turns.end() };
//! ```
//!
//! # Checked builds
//!
//! With the `checked` feature the named barriers are the registry's counted software barriers
//! (see [`Barriers`]): a group that takes fewer turns than the next one waits for, exits, or
//! blocks ends the kernel with a gpu-pipeline `HangRecord` (a named-barrier HANG naming the
//! group's barrier and the `wait` that waited), and a [`NamedTurn`] dropped without `arrive`
//! ends it with a named-turns TURN NOT HANDED ON record that names the `wait` that took it.

#[cfg(feature = "checked")]
use gpu_pipeline::checked::{BarrierWait, Call, Fault, Role};

use crate::barrier::{Barriers, NAMED_BARRIERS, NamedBarrier};

/// The named barriers of `GROUPS` groups taking turns: ids `first .. first + GROUPS`, barrier `g`
/// counting group `g`'s threads (syncing) and group `g - 1`'s (arriving) per phase. Made in a
/// constant, where a wrong shape is a compile error.
#[derive(Clone, Copy, Debug)]
pub struct NamedTurns<const GROUPS: usize> {
    barriers: [NamedBarrier; GROUPS],
}

impl<const GROUPS: usize> NamedTurns<GROUPS> {
    /// The turns of `GROUPS` groups of `group_threads` threads each, on the named barriers
    /// `first .. first + GROUPS`, used by `name` (the registry's messages name it).
    ///
    /// # Panics
    ///
    /// (At compile time in a constant.) If `GROUPS` is below 2 (one group has nobody to take
    /// turns with), the ids leave 1..=15, or `group_threads` is not a non-zero multiple of the
    /// warp size of at most 512 (each phase counts two groups, at most 1024 threads).
    #[must_use]
    pub const fn new(name: &'static str, first: u32, group_threads: u32) -> Self {
        assert!(
            GROUPS >= 2,
            "gpu-hopper: named turns need 2 or more groups (one group has nobody to take turns with)"
        );
        assert!(
            first >= 1 && first as usize + GROUPS <= NAMED_BARRIERS as usize,
            "gpu-hopper: named turns' ids `first .. first + GROUPS` must lie in 1..=15"
        );
        assert!(
            group_threads > 0 && group_threads % 32 == 0 && group_threads <= 512,
            "gpu-hopper: a named-turns group is whole warps, at most 512 threads (a phase counts two groups)"
        );
        let mut barriers = [NamedBarrier::new(name, first, 2 * group_threads); GROUPS];
        let mut g = 1;
        while g < GROUPS {
            barriers[g] = NamedBarrier::new(name, first + g as u32, 2 * group_threads);
            g += 1;
        }
        Self { barriers }
    }

    /// The barriers, for the kernel's [`BarrierRegistry`](crate::barrier::BarrierRegistry):
    /// barrier `g` is group `g`'s.
    #[must_use]
    pub const fn barriers(&self) -> &[NamedBarrier] {
        &self.barriers
    }

    /// The threads of one group.
    #[must_use]
    pub const fn group_threads(&self) -> u32 {
        self.barriers[0].threads() / 2
    }

    /// The view of a thread of group `group` (0..GROUPS) over the registry's `barriers` (which
    /// must hold this value's [`barriers`](Self::barriers)), before its first turn.
    ///
    /// # Panics
    ///
    /// If `group >= GROUPS`.
    #[must_use]
    pub fn group<'a>(self, barriers: Barriers<'a>, group: u32) -> NamedSequence<'a, GROUPS> {
        assert!(
            (group as usize) < GROUPS,
            "gpu-hopper: group {group} of named turns of {GROUPS}"
        );
        // SAFETY: checked above.
        unsafe { self.group_unchecked(barriers, group) }
    }

    /// As [`group`](Self::group), without the check (its panic path costs a kernel registers:
    /// ptxas spilled 124 more bytes in the attention kernel's loop with it). Checked builds
    /// still check.
    ///
    /// # Safety
    ///
    /// `group < GROUPS` (another group would sync on a barrier of another user, or of none).
    #[must_use]
    #[inline(always)]
    pub unsafe fn group_unchecked<'a>(
        self,
        barriers: Barriers<'a>,
        group: u32,
    ) -> NamedSequence<'a, GROUPS> {
        #[cfg(feature = "checked")]
        assert!(
            (group as usize) < GROUPS,
            "gpu-hopper: group {group} of named turns of {GROUPS}"
        );
        NamedSequence {
            turns: self,
            barriers,
            group,
            #[cfg(feature = "checked")]
            turn: 0,
        }
    }
}

/// One thread's view of [`NamedTurns`]: its group and the registry's barriers (and in checked
/// builds the turns it has taken). Each thread of a group holds its own and takes the same turns.
#[derive(Debug)]
pub struct NamedSequence<'a, const GROUPS: usize> {
    turns: NamedTurns<GROUPS>,
    barriers: Barriers<'a>,
    group: u32,
    #[cfg(feature = "checked")]
    turn: u32,
}

/// A turn being taken: the ordered work runs while it is held; [`arrive`](Self::arrive) hands
/// the turn to the next group. In checked builds a turn that goes out of scope without `arrive`
/// ends the kernel with a record (the next group would wait for it forever).
#[must_use = "the next group waits until this turn is handed on with `arrive`"]
pub struct NamedTurn<'s, 'a, const GROUPS: usize> {
    sequence: &'s mut NamedSequence<'a, GROUPS>,
    /// Checked builds: the `wait` that took the turn, which a record of a dropped turn names.
    #[cfg(feature = "checked")]
    taken: &'static core::panic::Location<'static>,
}

impl<'a, const GROUPS: usize> NamedSequence<'a, GROUPS> {
    /// Group `g`'s barrier, its id computed, not looked up (an array indexed by a value the
    /// compiler cannot fold would live in local memory): the id arithmetic keeps the convergence
    /// check's proof that a warpgroup index from the thread index is uniform (a branch on it
    /// would do too; one on a shuffled value would not pass the check).
    #[inline(always)]
    fn barrier(&self, g: u32) -> NamedBarrier {
        self.turns.barriers[0].with_id(self.turns.barriers[0].id() + g)
    }

    /// The barrier of the group after this one.
    #[inline(always)]
    fn next(&self) -> NamedBarrier {
        if GROUPS == 2 {
            // 1 - g: no comparison, the form the attention kernel's variant measured.
            self.barrier(1 - self.group)
        } else {
            let g = self.group + 1;
            self.barrier(if g == GROUPS as u32 { 0 } else { g })
        }
    }

    /// Opens the first turn: the last group's arrival on group 0's barrier. Every thread of
    /// every group calls it once, before its first [`wait`](Self::wait) (it does nothing in the
    /// other groups).
    ///
    /// # Safety
    ///
    /// As [`wait`](Self::wait).
    #[inline(always)]
    pub unsafe fn begin(&self) {
        if self.group == GROUPS as u32 - 1 {
            // SAFETY: the caller's contract: the whole group, converged; the phase group 0's
            // first turn completes.
            unsafe { self.barriers.arrive(self.barrier(0)) };
        }
    }

    /// Waits for this group's next turn (1): the previous group has handed it on. In checked
    /// builds the wait is bounded by the registry's budget.
    ///
    /// # Safety
    ///
    /// Every thread of the group calls it, each warp whole and converged (`barrier.sync` is
    /// `.aligned`), and no other thread; the groups are the [`NamedTurns`]' size; every group
    /// called [`begin`](Self::begin) once before its first turn, and takes as many turns as the
    /// others; the registry of these `Barriers` holds the turns' ids (no other user).
    #[cfg_attr(feature = "checked", track_caller)]
    #[inline(always)]
    pub unsafe fn wait(&mut self) -> NamedTurn<'_, 'a, GROUPS> {
        // SAFETY: the caller's contract; each phase has this group's threads syncing and the
        // previous group's arriving (`begin` gives group 0 its first).
        unsafe { self.barriers.sync(self.barrier(self.group)) };
        NamedTurn {
            sequence: self,
            #[cfg(feature = "checked")]
            taken: core::panic::Location::caller(),
        }
    }

    /// Takes the last turn's hand-over (group 0 syncs on its barrier), so that no phase of the
    /// turns' barriers is left open when the CTA exits. Every thread of every group calls it
    /// once, after its last turn (it does nothing in the other groups).
    ///
    /// # Safety
    ///
    /// As [`wait`](Self::wait): and every group has taken the same number of turns.
    #[cfg_attr(feature = "checked", track_caller)]
    #[inline(always)]
    pub unsafe fn end(self) {
        if self.group == 0 {
            // SAFETY: the caller's contract: the last group's last arrival is on barrier 0.
            unsafe { self.barriers.sync(self.barrier(0)) };
        }
    }

    /// The turns this thread has completed (checked builds only).
    #[cfg(feature = "checked")]
    #[must_use]
    pub fn turns(&self) -> u32 {
        self.turn
    }
}

impl<const GROUPS: usize> NamedTurn<'_, '_, GROUPS> {
    /// Hands the turn to the next group (2): this thread's arrival on its barrier (a release:
    /// the next group's accesses after its `wait` see this group's before it).
    ///
    /// # Safety
    ///
    /// As [`NamedSequence::wait`]: every thread of the group hands its turn on, each warp whole
    /// and converged (`barrier.arrive` is `.aligned`, and the phase counts the whole group), so
    /// no branch between the `wait` and here may leave some of a warp's lanes out.
    #[inline(always)]
    pub unsafe fn arrive(self) {
        let this = core::mem::ManuallyDrop::new(self);
        // SAFETY: `this` is never used or dropped again: the reference is moved out once.
        let sequence = unsafe { core::ptr::read(&this.sequence) };
        // SAFETY: the caller's contract: the whole group, converged; the phase the next group's
        // turn completes.
        unsafe { sequence.barriers.arrive(sequence.next()) };
        #[cfg(feature = "checked")]
        {
            sequence.turn = sequence.turn.wrapping_add(1);
        }
    }
}

/// Checked builds: a turn dropped without `arrive` stops the kernel with a record that names the
/// `wait` that took it.
#[cfg(feature = "checked")]
impl<const GROUPS: usize> Drop for NamedTurn<'_, '_, GROUPS> {
    fn drop(&mut self) {
        let s = &*self.sequence;
        let own = s.barrier(s.group);
        BarrierWait {
            call: Call::NamedTurnDropped,
            role: Role::Participant,
            diagnostics: s.barriers.diagnostics(),
            storage: s.barriers.storage(),
            stages: 1,
            stage: 0,
            sub_stage: s.group,
            lap: s.turn,
            per_phase: own.threads(),
            expected: s.turn.wrapping_add(1).wrapping_mul(own.threads()),
            held: GROUPS as u32,
        }
        .fail_at(Fault::StageNotReleased, None, self.taken);
    }
}

#[cfg(all(test, feature = "checked"))]
mod tests {
    use super::*;
    use crate::barrier::{BarrierRegistry, BarrierShadow};
    use gpu_pipeline::Diagnostics;
    use std::string::String;
    use std::sync::Mutex;
    use std::vec::Vec;

    use crate::wait_budget::{CORRECT_US, HANG_US};

    /// `GROUPS` groups of 32 host threads take `turns(g)` turns on `NamedTurns` (ids 3..),
    /// registry label 7 and a budget of `budget_us`; while a group holds a turn its first thread logs
    /// (group, turn). Returns the log and the panic messages (records) of the threads that
    /// stopped. `drop_turn`: group 1 drops its turn 2 instead of handing it on.
    fn run<const GROUPS: usize>(
        turns: impl Fn(u32) -> u32 + Sync,
        drop_turn: bool,
        budget_us: u32,
    ) -> (Vec<(u32, u32)>, Vec<String>) {
        const THREADS: u32 = 32;
        let named = NamedTurns::<GROUPS>::new("test turns", 3, THREADS);
        let registry = BarrierRegistry::new(&[named.barriers()]).with_diagnostics(Diagnostics {
            label: 7,
            wait_budget_us: budget_us,
        });
        let mut shadow = std::boxed::Box::new(core::mem::MaybeUninit::<BarrierShadow>::uninit());
        let shadow = shadow.as_mut_ptr();
        // SAFETY: a fresh, aligned shadow, before any thread uses it.
        let _ = unsafe { registry.init(shadow) };
        let shadow = shadow as usize;
        let log = Mutex::new(Vec::new());
        let records = Mutex::new(Vec::new());
        std::thread::scope(|scope| {
            for g in 0..GROUPS as u32 {
                for t in 0..THREADS {
                    let (log, records, turns) = (&log, &records, &turns);
                    scope.spawn(move || {
                        let body = std::panic::AssertUnwindSafe(|| {
                            // SAFETY: initialised above; only through these handles.
                            let barriers =
                                unsafe { registry.handles(shadow as *mut BarrierShadow) };
                            let mut sequence = named.group(barriers, g);
                            // SAFETY: every thread of every group (host threads: no warps).
                            unsafe { sequence.begin() };
                            for turn in 0..turns(g) {
                                // SAFETY: as above.
                                let held = unsafe { sequence.wait() };
                                if t == 0 {
                                    log.lock().unwrap().push((g, turn));
                                }
                                if drop_turn && g == 1 && turn == 2 {
                                    drop(held);
                                    return;
                                }
                                std::thread::yield_now();
                                // SAFETY: as above.
                                unsafe { held.arrive() };
                            }
                            // SAFETY: as above.
                            unsafe { sequence.end() };
                        });
                        if let Err(e) = std::panic::catch_unwind(body) {
                            let message = e
                                .downcast_ref::<String>()
                                .cloned()
                                .or_else(|| e.downcast_ref::<&str>().map(|s| (*s).into()))
                                .unwrap_or_default();
                            records.lock().unwrap().push(message);
                        }
                    });
                }
            }
        });
        (log.into_inner().unwrap(), records.into_inner().unwrap())
    }

    /// The turns in order: group 0, 1, .., GROUPS - 1, 0, ..
    fn in_order(groups: u32, turns: u32) -> Vec<(u32, u32)> {
        (0..turns)
            .flat_map(|t| (0..groups).map(move |g| (g, t)))
            .collect()
    }

    #[test]
    fn two_groups_alternate() {
        let (log, records) = run::<2>(|_| 9, false, CORRECT_US);
        assert!(records.is_empty(), "{records:?}");
        assert_eq!(log, in_order(2, 9));
    }

    #[test]
    fn three_groups_take_turns_in_order() {
        let (log, records) = run::<3>(|_| 7, false, CORRECT_US);
        assert!(records.is_empty(), "{records:?}");
        assert_eq!(log, in_order(3, 7));
    }

    #[test]
    fn a_group_with_fewer_turns_is_a_hang_record() {
        // Group 0 takes 4 turns, group 1 only 3: group 0's fourth wait (or the end's sync)
        // never completes.
        let (_, records) = run::<2>(|g| if g == 0 { 4 } else { 3 }, false, HANG_US);
        assert!(!records.is_empty());
        for r in &records {
            assert!(
                r.starts_with(
                    "gpu-hopper named barrier HANG (wait budget spent): barrier 3 of registry 7"
                ),
                "{r}"
            );
            assert!(r.contains("32 of 64 threads reached this phase"), "{r}");
        }
    }

    #[test]
    fn the_record_of_a_missing_turn_names_its_phase() {
        // As hopper-test's `broken_turns_stops`: group 0 waits for a fifth turn (phase 4 of its
        // barrier; `end` not reached), group 1 took 3.
        let (log, records) = run::<2>(|g| if g == 0 { 5 } else { 3 }, false, HANG_US);
        assert_eq!(log.len(), 7, "{log:?}");
        assert!(!records.is_empty());
        for r in &records {
            assert!(r.contains("phase 4;"), "{r}");
            assert!(r.contains("src/turns.rs"), "{r}");
        }
    }

    #[test]
    fn a_dropped_turn_names_the_wait_that_took_it() {
        let (log, records) = run::<2>(|_| 5, true, HANG_US);
        assert!(log.contains(&(1, 2)));
        assert!(
            !log.contains(&(0, 3)),
            "group 0 went on without group 1's hand-over"
        );
        let dropped: Vec<&String> = records
            .iter()
            .filter(|r| r.contains("TURN NOT HANDED ON"))
            .collect();
        assert_eq!(dropped.len(), 32, "{records:?}");
        assert!(
            dropped[0].starts_with("gpu-hopper named turns TURN NOT HANDED ON"),
            "{}",
            dropped[0]
        );
        assert!(
            dropped[0].contains("group 1 in `(a NamedTurn taken here"),
            "{}",
            dropped[0]
        );
        assert!(
            dropped[0].contains("without `NamedTurn::arrive`"),
            "{}",
            dropped[0]
        );
        assert!(dropped[0].contains("src/turns.rs"), "{}", dropped[0]);
        assert!(dropped[0].contains("turn 2"), "{}", dropped[0]);
        // Group 0 waits for that turn and stops with a hang record.
        assert!(
            records.iter().any(|r| r.contains("named barrier HANG")),
            "{records:?}"
        );
    }
}
