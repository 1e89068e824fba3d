//! The counter backend on NVIDIA: 32-bit shared-memory atomics with explicit `.cta` scope.
//!
//! The counters count in the low 32-bit word of each 64-bit counter: sm_90 adds 32-bit shared
//! words natively, a 64-bit add becomes a compare-and-swap loop, and only the value modulo 2^32
//! matters. PTX forms and manual sections are beside each leaf in `arch/nvptx.rs`.

use core::sync::atomic::AtomicU64;

use crate::arch::nvptx as arch;
use crate::threshold;

/// The address of one counter: its `.shared::cta` offset.
pub(super) type Addr = u32;

/// The address of the counter at `storage`.
///
/// # Safety
///
/// `storage` points into this block's shared memory.
#[inline(always)]
pub(super) unsafe fn addr_of(storage: *mut AtomicU64) -> Addr {
    // SAFETY: guaranteed by the caller.
    unsafe { arch::cvta_to_shared(storage.cast()) }
}

/// The counter `elems` counters after `addr`.
#[inline(always)]
pub(super) fn offset(addr: Addr, elems: u32) -> Addr {
    addr + elems * 8
}

/// The calling thread's arrival on the counter at `addr`, aggregated per counter over the warp.
///
/// # Safety
///
/// `addr` is an initialised counter of this block's shared memory.
#[inline(always)]
pub(super) unsafe fn arrive(addr: Addr) {
    // Why each arrival lands on its own counter: the lanes that take part in one aggregated
    // add are those that name the same counter (NVIDIA: `match.any.sync` on the address; AMD:
    // the lanes whose address equals the first remaining lane's), so the leader's add counts
    // exactly the lanes of its counter ([`threshold::wave_share`], tested over every split).
    // Aggregating over all active lanes instead put every arrival on the leader's counter: one
    // slot completed early and the others never did (seen on the H200).
    //
    // Why this is a release of every arriving lane's earlier accesses (PTX ISA, "Memory
    // Consistency Model"): `bar.warp.sync` orders the memory accesses of the lanes of its mask
    // before the accesses that follow it in each of them (PTX ISA, "bar.warp.sync": it
    // "guarantees memory ordering among threads participating in barrier"), so they precede
    // the leader's `red.release.cta` in causality order; the release makes them visible to any
    // thread of the CTA whose `ld.acquire.cta` reads the new count ("Release and acquire
    // patterns"; `red`: "Parallel Synchronization and Communication Instructions: red"). A
    // lone arriving lane needs no warp sync: program order orders its own accesses before
    // its release. ptxas turns the release into `MEMBAR.ALL.CTA` + `ATOMS`; every other
    // release form measured (`fence.acq_rel.cta` + relaxed `red`, `atom.release`, and with PTX
    // 8.6 `fence.release.cta` or `fence.release.sync_restrict::shared::cta.cluster`) gives the
    // same `MEMBAR.ALL.CTA` or a heavier one, none faster (the counter-ring variants in
    // tests/results; without any fence, which is not a release, the ring was only about 8
    // cycles per stage faster: the cost is in the shared-memory atomic and the polling).
    let add = |n: u32| {
        // SAFETY: the backend's constructor guarantees a shared counter address; the low
        // word of the little-endian counter is at that address.
        unsafe { arch::red_release_cta_shared_add_u32(addr, n) }
    };
    let mask = arch::activemask();
    if mask & mask.wrapping_sub(1) == 0 {
        // One lane: nobody to sync or aggregate with.
        add(1);
        return;
    }
    let peers = if mask == u32::MAX {
        // The whole warp: constant masks, so no run-time divergence check. When every
        // lane names lane 0's counter (the common case: one stage per warp), lane 0 adds
        // 32 without grouping: a shuffle and a vote cost less than `match.any` (the
        // counter-ring variants in tests/results: 303 against 328 cycles per stage with
        // every lane arriving).
        // SAFETY: all 32 lanes are here (the mask says so) and execute this same code.
        unsafe {
            arch::bar_warp_sync_all();
            let first = arch::shfl_sync_idx(u32::MAX, addr, 0);
            if arch::vote_all_sync(u32::MAX, addr == first) {
                if arch::laneid() == 0 {
                    add(32);
                }
                return;
            }
            arch::match_any_sync(u32::MAX, addr)
        }
    } else {
        // SAFETY: every lane of `mask` executes this same code with the same mask.
        unsafe {
            arch::bar_warp_sync(mask);
            arch::match_any_sync(mask, addr)
        }
    };
    let share = threshold::wave_share(u64::from(peers), (peers & arch::lanemask_lt()).count_ones());
    if share != 0 {
        add(share);
    }
}

/// The counter's low word, acquire at CTA scope.
///
/// # Safety
///
/// As [`arrive`].
#[inline(always)]
pub(super) unsafe fn load_acquire(addr: Addr) -> u32 {
    // SAFETY: guaranteed by the caller.
    unsafe { arch::ld_acquire_cta_shared_u32(addr) }
}

/// The counter's low word, relaxed (checked builds' arrival count).
///
/// # Safety
///
/// As [`arrive`].
#[cfg(feature = "checked")]
#[inline(always)]
pub(super) unsafe fn load_relaxed(addr: Addr) -> u32 {
    // SAFETY: guaranteed by the caller.
    unsafe { arch::ld_relaxed_cta_shared_u32(addr) }
}

/// Between two failed polls: `nanosleep` of the hint (at most 1 µs), or `nanosleep 0`.
#[inline(always)]
pub(super) fn pause(ticks: Option<u32>) {
    arch::nanosleep(match ticks {
        Some(t) if t < 1000 => t,
        Some(_) => 1000,
        None => 0,
    });
}

/// Zeroes the counter at `addr` (initialisation).
///
/// # Safety
///
/// `addr` is a counter of this block's shared memory that no other thread uses now.
#[inline(always)]
pub(super) unsafe fn zero(addr: Addr) {
    // SAFETY: guaranteed by the caller.
    unsafe { arch::st_shared_u64(addr, 0) }
}

/// After the initialising stores: nothing on NVIDIA (the caller's block barrier orders them).
#[inline(always)]
pub(super) fn init_done() {}

/// The data-before-signal fence of the counter backend, by name: on NVIDIA `fence.acq_rel.cta`
/// (not `core::sync::atomic::fence`, which is system scope there).
///
/// Every arrive of [`CounterBackend`](super::CounterBackend) already orders the arriving lanes'
/// accesses before it; call this yourself only before a signal made by other means.
#[inline(always)]
pub fn lds_data_fence() {
    arch::fence_acq_rel_cta();
}
