//! The named turns (`gpu_hopper::turns`) on the hardware's named barriers (in the checked build,
//! the registry's counted barriers): each warpgroup of the block is a group; they take `turns`
//! turns, and while a group holds a turn its leading thread appends (group, turn) to the block's
//! log through an atomic counter. The host checks the one order: group 0, 1, .., 0, .. with the
//! turns in order.

use gpu_hopper::arch::nvptx::dynamic_smem_1024;
use gpu_hopper::barrier::{BarrierRegistry, BarrierShadow};
use gpu_hopper::turns::NamedTurns;
use gpu_hopper::warpgroup::{Position, WARPGROUP_THREADS};

use crate::layout::TURNS_SMEM_BYTES;

/// The test (see the module's docs).
///
/// # Safety
///
/// Blocks of `GROUPS * 128` threads with `TURNS_SMEM_BYTES` of dynamic shared memory; `log` has
/// `GROUPS * turns` words per block and `counters` a zeroed word per block.
#[inline(always)]
unsafe fn named_turns<const GROUPS: usize>(log: *mut u32, counters: *mut u32, turns: u32) {
    let (named, registry) = const {
        // Ids 2.. (id 1 left free: the turns need not start at the first).
        let named = NamedTurns::<GROUPS>::new("test turns", 2, WARPGROUP_THREADS);
        (named, BarrierRegistry::new(&[named.barriers()]))
    };
    const {
        assert!(
            size_of::<BarrierShadow>() <= TURNS_SMEM_BYTES as usize,
            "the barriers' shadow outgrew the shared memory the host gives"
        )
    };
    let position = Position::current();
    let shadow = dynamic_smem_1024().cast::<BarrierShadow>();
    if crate::thread() == 0 {
        // SAFETY: the shadow is in this CTA's shared memory (it fits: checked above), used by no
        // one before the block barrier below.
        let _ = unsafe { registry.init(shadow) };
    }
    // SAFETY: every thread of the block.
    unsafe { crate::sync_threads() };
    let group = position.warpgroup;
    // SAFETY: initialised above, before the block barrier; used only through these handles.
    let mut sequence = named.group(unsafe { registry.handles(shadow) }, group);
    // SAFETY: the entry's contract.
    let log = unsafe { crate::TurnLog::of_block(log, counters, GROUPS as u32 * turns) };
    // SAFETY: every thread of every warpgroup, converged (the block is the groups).
    unsafe { sequence.begin() };
    let mut turn = 0;
    while turn < turns {
        // SAFETY: the whole warpgroup, converged; every group takes `turns` turns.
        let held = unsafe { sequence.wait() };
        log.record(position.leads_warpgroup(), group, turn);
        // SAFETY: as the wait (the record's branch reconverges before it).
        unsafe { held.arrive() };
        turn += 1;
    }
    // SAFETY: as `begin`, after every group's last turn.
    unsafe { sequence.end() };
}

/// The entry of one case of `named_turns_cases!`.
macro_rules! named_turns_entry {
    ($name:ident, $groups:literal) => {
        logged_turns_entry!(
            $name,
            named_turns::<$groups>,
            "A named-turns case (`layout::named_turns_cases!`)."
        );
    };
}

named_turns_cases!(named_turns_entry);
