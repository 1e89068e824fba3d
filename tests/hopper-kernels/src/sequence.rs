//! The ordered-sequence barrier (`gpu_hopper::sequence`) on real mbarriers: each warpgroup of
//! the block is a group; they take `turns` turns on `SEQUENCE_DEPTH` rings, and while a group
//! holds a turn its leading thread appends (group, turn) to the block's log through an atomic
//! counter. The host checks the order per ring (group 0, 1, .., 0, ..; the turns of each ring
//! in order), as the host-model tests of `sequence.rs` do.

use gpu_hopper::arch::nvptx::dynamic_smem_1024;
use gpu_hopper::sequence::{self, OrderedSequenceBarrier, SequenceStorage};
use gpu_hopper::warpgroup::{Position, WARPGROUP_THREADS};

use crate::layout::{SEQUENCE_DEPTH, SEQUENCE_SMEM_BYTES};

/// The test (see the module's docs).
///
/// # Safety
///
/// Blocks of `GROUPS * 128` threads with `SEQUENCE_SMEM_BYTES` of dynamic shared memory; `log` has `GROUPS * turns` words per block and `counters` a zeroed word per block.
#[inline(always)]
unsafe fn sequence<const GROUPS: usize>(log: *mut u32, counters: *mut u32, turns: u32) {
    type Storage<const G: usize> = SequenceStorage<SEQUENCE_DEPTH, G>;
    const {
        assert!(
            size_of::<Storage<GROUPS>>() <= SEQUENCE_SMEM_BYTES as usize,
            "the sequence's storage outgrew the shared memory the host gives"
        )
    };
    let position = Position::current();
    let storage = dynamic_smem_1024().cast::<Storage<GROUPS>>();
    if crate::thread() == 0 {
        // SAFETY: the storage is in this CTA's shared memory (it fits: checked above), used by
        // no one before the block barrier below; every thread of a group arrives (128 per
        // phase).
        let _ = unsafe { sequence::init::<SEQUENCE_DEPTH, GROUPS>(storage, WARPGROUP_THREADS) };
    }
    // SAFETY: every thread of the block.
    unsafe { crate::sync_threads() };
    // SAFETY: initialised above with the same arrivals, before the block barrier.
    let grid = unsafe { sequence::handles::<SEQUENCE_DEPTH, GROUPS>(storage, WARPGROUP_THREADS) };
    let group = position.warpgroup;
    let mut turns_of = OrderedSequenceBarrier::<_, SEQUENCE_DEPTH, GROUPS>::new(grid, group);
    // SAFETY: the entry's contract.
    let log = unsafe { crate::TurnLog::of_block(log, counters, GROUPS as u32 * turns) };
    let mut turn = 0;
    while turn < turns {
        let held = turns_of.wait();
        log.record(position.leads_warpgroup(), group, turn);
        held.arrive();
        turn += 1;
    }
}

/// The entry of one case of `sequence_cases!`.
macro_rules! sequence_entry {
    ($name:ident, $groups:literal) => {
        logged_turns_entry!(
            $name,
            sequence::<$groups>,
            "An ordered-sequence case (`layout::sequence_cases!`)."
        );
    };
}

sequence_cases!(sequence_entry);
