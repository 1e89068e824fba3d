//! The counter backend on AMD: 64-bit LDS atomics (`ds_add_u64` release, `ds_read_b64`
//! acquire). The host type-checks this file too, against the arch stubs.

use core::sync::atomic::AtomicU64;

use crate::arch::amdgpu as arch;
use crate::threshold;

/// The address of one counter: an LDS pointer.
pub(super) type Addr = *const AtomicU64;

/// The address of the counter at `storage`.
///
/// # Safety
///
/// `storage` points into this work-group's LDS.
#[inline(always)]
pub(super) unsafe fn addr_of(storage: *mut AtomicU64) -> Addr {
    storage.cast_const()
}

/// The counter `elems` counters after `addr`.
#[inline(always)]
pub(super) fn offset(addr: Addr, elems: u32) -> Addr {
    addr.wrapping_add(elems as usize)
}

/// The calling lane's arrival on the counter at `addr`, aggregated per counter over the wave.
///
/// # Safety
///
/// `addr` is an initialised counter of this work-group's LDS.
#[inline(always)]
pub(super) unsafe fn arrive(addr: Addr) {
    // One pass per distinct counter among the arriving lanes (usually one): the lanes
    // whose counter is the first remaining lane's add and leave; the others go round.
    let key = addr.addr() as u32;
    loop {
        let first = arch::readfirstlane(key);
        let peers = arch::ballot(key == first);
        if key == first {
            let share = threshold::wave_share(peers, arch::lanes_below(peers));
            if share != 0 {
                lds_data_fence();
                // SAFETY: the backend's constructor guarantees an LDS counter.
                unsafe { arch::ds_add_u64(addr, u64::from(share)) };
            }
            break;
        }
    }
}

/// The counter's value modulo 2^32, acquire (`ds_read_b64` and its wait).
///
/// # Safety
///
/// As [`arrive`].
#[inline(always)]
pub(super) unsafe fn load_acquire(addr: Addr) -> u32 {
    // SAFETY: guaranteed by the caller.
    unsafe { arch::ds_read_u64_acquire(addr) as u32 }
}

/// The counter's value modulo 2^32, relaxed (checked builds' arrival count).
///
/// # Safety
///
/// As [`arrive`].
#[cfg(feature = "checked")]
#[inline(always)]
pub(super) unsafe fn load_relaxed(addr: Addr) -> u32 {
    // SAFETY: guaranteed by the caller.
    unsafe { arch::ds_read_u64_relaxed(addr) as u32 }
}

/// Between two failed polls: `s_sleep 1` with a hint, else poll on.
#[inline(always)]
pub(super) fn pause(ticks: Option<u32>) {
    if ticks.is_some() {
        arch::s_sleep_1();
    }
}

/// Zeroes the counter at `addr` (initialisation): a plain store of a fresh counter
/// (`ds_write_b64`).
///
/// # Safety
///
/// `addr` is a counter of this work-group's LDS that no other lane uses now.
#[inline(always)]
pub(super) unsafe fn zero(addr: Addr) {
    // SAFETY: guaranteed by the caller.
    unsafe { addr.cast_mut().write(AtomicU64::new(0)) }
}

/// After the initialising stores: they complete before the caller's block barrier, so a bare
/// `s_barrier` suffices there.
#[inline(always)]
pub(super) fn init_done() {
    lds_data_fence();
}

/// The data-before-signal fence of the counter backend, by name: `s_waitcnt lgkmcnt(0)` (every
/// LDS/FLAT access of this wave has completed) plus a compiler release fence.
///
/// Every arrive of [`CounterBackend`](super::CounterBackend) already performs it; call it
/// yourself only before a signal made by other means.
#[inline(always)]
pub fn lds_data_fence() {
    core::sync::atomic::compiler_fence(core::sync::atomic::Ordering::Release);
    arch::s_waitcnt_lgkmcnt0();
}
