//! Broken kernels of the checked build (feature `checked`): each makes one mistake with a
//! toolkit barrier, written with the safe handles the way users write it, that hangs a kernel
//! built without diagnostics. The checked build must end within a second with a record that says
//! it; the cases, their labels, budgets and expected words are `layout::BROKEN_CASES`, which the
//! host test (`hopper-test --broken`) runs, each in a process of its own, and checks.
//!
//! Every kernel is one block with `layout::BROKEN_SMEM_BYTES` of dynamic shared memory and no
//! parameters.

use gpu_hopper::arch::nvptx::dynamic_smem_1024;
use gpu_hopper::barrier::{BarrierRegistry, BarrierShadow, Barriers, NamedBarrier};
use gpu_hopper::sequence::{self, OrderedSequenceBarrier, SequenceStorage};
use gpu_hopper::turns::{NamedSequence, NamedTurns};
use gpu_hopper::warpgroup::{Position, WARPGROUP_THREADS};
use gpu_pipeline::Diagnostics;

use crate::layout::{
    BROKEN_NAMED_OVERFULL, BROKEN_NAMED_SKIPPED, BROKEN_SEQUENCE_DROPPED, BROKEN_SEQUENCE_STOPS,
    BROKEN_SMEM_BYTES, BROKEN_TURNS_DROPPED, BROKEN_TURNS_STOPS, BrokenCase, WARP,
};

/// The diagnostics of a case: its label and budget.
const fn diagnostics(case: &BrokenCase) -> Diagnostics {
    Diagnostics {
        label: case.label,
        wait_budget_us: case.budget_us,
    }
}

/// A registry of one 64-thread barrier (id 1) with the case's diagnostics, initialised by thread
/// 0 over the dynamic shared memory, then a block barrier.
#[inline(always)]
fn one_barrier(case: &BrokenCase) -> (Barriers<'static>, NamedBarrier) {
    const BARRIER: NamedBarrier = NamedBarrier::new("two warps", 1, 2 * WARP);
    const {
        assert!(
            size_of::<BarrierShadow>() <= BROKEN_SMEM_BYTES as usize,
            "the barriers' shadow outgrew the shared memory the host gives"
        )
    };
    let registry = BarrierRegistry::new(&[&[BARRIER]]).with_diagnostics(diagnostics(case));
    let shadow = dynamic_smem_1024().cast::<BarrierShadow>();
    if crate::thread() == 0 {
        // SAFETY: the shadow is in this CTA's shared memory (it fits: checked above), used by no
        // one before the block barrier below.
        let _ = unsafe { registry.init(shadow) };
    }
    // SAFETY: every thread of the block, converged.
    unsafe { crate::sync_threads() };
    // SAFETY: initialised above with this registry, before the block barrier.
    (unsafe { registry.handles(shadow) }, BARRIER)
}

/// Warp 0 syncs on the 64-thread barrier; warp 1 returns without reaching it.
#[unsafe(no_mangle)]
pub extern "gpu-kernel" fn broken_named_skipped() {
    let (barriers, barrier) = one_barrier(&BROKEN_NAMED_SKIPPED);
    if crate::thread() < WARP {
        // SAFETY: a whole warp, converged; id 1 has no other user. The mistake (the contract's
        // "exactly `threads` threads take part") is the test: warp 1 never comes.
        unsafe { barriers.sync(barrier) };
    }
}

/// All 3 warps sync on the barrier declared for 64 threads.
#[unsafe(no_mangle)]
pub extern "gpu-kernel" fn broken_named_overfull() {
    let (barriers, barrier) = one_barrier(&BROKEN_NAMED_OVERFULL);
    // SAFETY: whole warps, converged; id 1 has no other user. The mistake is the test: 96
    // threads take part where the barrier says 64.
    unsafe { barriers.sync(barrier) };
}

/// The storage of a 2-group sequence of `DEPTH` rings over the dynamic shared memory, every
/// thread of a group arriving (128 per phase), initialised by thread 0, then a block barrier;
/// this thread's view, with the case's diagnostics.
#[inline(always)]
fn two_groups<const DEPTH: usize>(
    case: &BrokenCase,
) -> OrderedSequenceBarrier<sequence::MbarrierGrid<'static, DEPTH, 2>, DEPTH, 2> {
    const {
        assert!(
            size_of::<SequenceStorage<2, 2>>() <= BROKEN_SMEM_BYTES as usize,
            "the sequence's storage outgrew the shared memory the host gives"
        )
    };
    let storage = dynamic_smem_1024().cast::<SequenceStorage<DEPTH, 2>>();
    if crate::thread() == 0 {
        // SAFETY: the storage is in this CTA's shared memory (it fits: checked above for the
        // largest `DEPTH` used), used by no one before the block barrier below.
        let _ = unsafe { sequence::init::<DEPTH, 2>(storage, WARPGROUP_THREADS) };
    }
    // SAFETY: every thread of the block, converged.
    unsafe { crate::sync_threads() };
    // SAFETY: initialised above with the same arrivals, before the block barrier.
    let grid = unsafe { sequence::handles::<DEPTH, 2>(storage, WARPGROUP_THREADS) };
    OrderedSequenceBarrier::new(grid, Position::current().warpgroup)
        .with_diagnostics(diagnostics(case))
}

/// Group 1 takes 3 turns and exits; group 0 waits for its fifth turn.
#[unsafe(no_mangle)]
pub extern "gpu-kernel" fn broken_sequence_stops() {
    let mut turns = two_groups::<1>(&BROKEN_SEQUENCE_STOPS);
    let wanted = if Position::current().warpgroup == 0 {
        5
    } else {
        3
    };
    let mut turn = 0;
    while turn < wanted {
        turns.wait().arrive();
        turn += 1;
    }
}

/// Group 0 takes one turn, then leaves its second without `arrive`; group 1 takes two.
#[unsafe(no_mangle)]
pub extern "gpu-kernel" fn broken_sequence_dropped() {
    let mut turns = two_groups::<2>(&BROKEN_SEQUENCE_DROPPED);
    turns.wait().arrive();
    if Position::current().warpgroup == 0 {
        // The mistake: an early return that holds the turn.
        let held = turns.wait();
        drop(held);
    } else {
        turns.wait().arrive();
    }
}

/// Named turns of the block's two warpgroups on ids 1 and 2 (the registry with the case's
/// diagnostics over the dynamic shared memory, initialised by thread 0, then a block barrier),
/// this thread's view, begun.
#[inline(always)]
fn two_named_groups(case: &BrokenCase) -> NamedSequence<'static, 2> {
    const TURNS: NamedTurns<2> = NamedTurns::new("two warpgroups' turns", 1, WARPGROUP_THREADS);
    let registry = BarrierRegistry::new(&[TURNS.barriers()]).with_diagnostics(diagnostics(case));
    let shadow = dynamic_smem_1024().cast::<BarrierShadow>();
    if crate::thread() == 0 {
        // SAFETY: the shadow is in this CTA's shared memory (it fits: `one_barrier` checks),
        // used by no one before the block barrier below.
        let _ = unsafe { registry.init(shadow) };
    }
    // SAFETY: every thread of the block, converged.
    unsafe { crate::sync_threads() };
    // SAFETY: initialised above with this registry, before the block barrier.
    let turns = TURNS.group(
        unsafe { registry.handles(shadow) },
        Position::current().warpgroup,
    );
    // SAFETY: every thread of both warpgroups, converged, before their first turn.
    unsafe { turns.begin() };
    turns
}

/// Group 1 takes 3 named turns and exits; group 0 waits for its fifth.
#[unsafe(no_mangle)]
pub extern "gpu-kernel" fn broken_turns_stops() {
    let mut turns = two_named_groups(&BROKEN_TURNS_STOPS);
    let wanted = if Position::current().warpgroup == 0 {
        5
    } else {
        3
    };
    let mut turn = 0;
    while turn < wanted {
        // SAFETY: whole warpgroups, converged. The mistake (the contract's "as many turns as the
        // others") is the test.
        unsafe { turns.wait().arrive() };
        turn += 1;
    }
}

/// Group 0 takes one named turn, then leaves its second without `arrive`; group 1 takes two.
#[unsafe(no_mangle)]
pub extern "gpu-kernel" fn broken_turns_dropped() {
    let mut turns = two_named_groups(&BROKEN_TURNS_DROPPED);
    // SAFETY: whole warpgroups, converged.
    unsafe { turns.wait().arrive() };
    if Position::current().warpgroup == 0 {
        // The mistake: an early return that holds the turn.
        // SAFETY: as above.
        let held = unsafe { turns.wait() };
        drop(held);
    } else {
        // SAFETY: as above.
        unsafe { turns.wait().arrive() };
    }
}
