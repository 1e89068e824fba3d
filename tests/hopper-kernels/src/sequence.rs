//! The ordered-sequence barrier (`gpu_hopper::sequence`) on real mbarriers: each warpgroup of
//! the block is a group; they take `turns` turns on `SEQUENCE_DEPTH` rings, and while a group
//! holds a turn its leading thread appends (group, turn) to the block's log through an atomic
//! counter. The host checks the order per ring (group 0, 1, .., 0, ..; the turns of each ring
//! in order), as the host-model tests of `sequence.rs` do.

use gpu_hopper::arch::nvptx::{atom_add_acq_rel_gpu_global_u32, dynamic_smem_1024};
use gpu_hopper::sequence::{self, OrderedSequenceBarrier, SequenceStorage};
use gpu_hopper::warpgroup::{Position, WARPGROUP_THREADS};
use gpu_pipeline::arch::nvptx::nanosleep;

use crate::layout::{SEQUENCE_DEPTH, SEQUENCE_SMEM_BYTES, mix, sequence_entry};

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
    let block = crate::block();
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
    let capacity = GROUPS as u32 * turns;
    // SAFETY: the block's part of `log` and its counter (the contract).
    let (log, counter) = unsafe {
        (
            log.add((block * capacity) as usize),
            counters.add(block as usize),
        )
    };
    let mut turn = 0;
    while turn < turns {
        let held = turns_of.wait();
        if position.leads_warpgroup() {
            // SAFETY: the block's counter, a global word.
            let at = unsafe { atom_add_acq_rel_gpu_global_u32(counter) };
            if at < capacity {
                // SAFETY: inside the block's log.
                unsafe { log.add(at as usize).write(sequence_entry(group, turn)) };
            }
        }
        // Hold the turn a varying while, so that the groups' timings differ turn to turn.
        nanosleep(mix(turn ^ (group << 20)) % 512);
        held.arrive();
        turn += 1;
    }
}

/// The entry of one case of `sequence_cases!`.
macro_rules! sequence_entry {
    ($name:ident, $groups:literal) => {
        /// An ordered-sequence case (`layout::sequence_cases!`).
        ///
        /// # Safety
        ///
        /// See `sequence`.
        #[unsafe(no_mangle)]
        pub unsafe extern "gpu-kernel" fn $name(log: *mut u32, counters: *mut u32, turns: u32) {
            // SAFETY: the entry's contract.
            unsafe { sequence::<$groups>(log, counters, turns) }
        }
    };
}

sequence_cases!(sequence_entry);
