//! The counter backend: monotonic 64-bit shared-memory counters, no parity.
//!
//! Built for AMD (`amdgcn`, LDS atomics) and for NVIDIA (`nvptx64`, shared-memory atomics with
//! explicit `.cta` scope). On NVIDIA it lets the counter protocol run, with real concurrency, in
//! the device suite, and be measured against the hardware `mbarrier`. Its own PTX forms would
//! run on sm_70, but it is built under the crate's requirement like everything else (sm_90 and
//! PTX ISA 8.0 on nvptx64): it is not a path for GPUs without `mbarrier`.
//!
//! Storage: `2 * STAGES` counters, `full[0..STAGES)` then `empty[0..STAGES)`, zeroed by `init`.
//! A consumer on lap `p` waits for `full >= (p + 1) * P`, a producer on lap `q` for
//! `empty >= (q - 1) * C`, compared modulo 2^32 (see [`crate::threshold`], which also proves that
//! the comparison is exact for any run length).
//!
//! # Arrivals
//!
//! The arrival unit is the thread (as on every backend). Threads of one wave (warp) that arrive
//! together on the same counter are counted in **one** atomic: the lowest of them adds their
//! number. A wave of 64 lanes arriving on one counter makes one `ds_add_u64` of 64, not 64 atomics
//! on one address; lanes that arrive on different counters in the same call (lane `l` on stage
//! `l & 1`) are grouped by counter, one atomic per counter.
//!
//! # Memory ordering (the data-before-signal fence is part of the arrive)
//!
//! - AMD: an arrive is `s_waitcnt lgkmcnt(0)` then a *release* `ds_add_u64` (Rust's
//!   `fetch_add(Release)` on the LDS counter, which LLVM lowers to that same wait before the add):
//!   every LDS (and FLAT) access the wave issued before it has completed before the counter moves.
//!   LDS operations of a CU are performed in one global order (*AMDGPUUsage*, "Memory Model
//!   GFX942": "All LDS operations of a CU are performed as wavefront wide operations in a global
//!   order and involve no caching"), so a waiter that reads the new count and then reads the slot
//!   sees the data. The wait polls with *acquire* `ds_read_b64` loads (`load(Acquire)`, lowered to
//!   the read and its `s_waitcnt lgkmcnt(0)`), so the read that succeeds synchronises with the
//!   release adds it observes in Rust's memory model too, not only on the hardware. Rust atomics
//!   are system scope; on an LDS-only access LLVM narrows that to work-group scope, the widest LDS
//!   has. On gfx90a and gfx942 that adds no instruction to the read; on gfx11 in WGP mode the acquire
//!   ends with `buffer_gl0_inv` (the tests/snapshots diff shows both), the only cache maintenance
//!   `cargo xtask test-amd` allows. These are LLVM's work-group-scope sequences for all address
//!   spaces, but no AMD GPU has run this code: the path the device tests cover (on NVIDIA) is
//!   slots in shared memory, so pass data through LDS. One limit of the model: when
//!   a wave's lanes are aggregated, the leader's release covers the other lanes' accesses because
//!   a wave executes them before the leader's `s_waitcnt` (hardware lockstep); Rust's model has no
//!   word for lanes of one wave. [`lds_data_fence`] is the data-before-signal fence by name, for
//!   signals made by other means.
//! - NVIDIA: the leader's `red.release.cta` is preceded by `bar.warp.sync` over the arriving lanes,
//!   which orders their accesses before the leader's release; waits are `ld.acquire.cta`. A full
//!   warp syncs with the constant mask `0xffffffff` (and when all its lanes name one counter, lane
//!   0 adds 32) and a lone lane does not sync at all: a run-time mask costs ptxas's divergence
//!   check (`MATCH.ANY`, `REDUX.OR`, `BRA.DIV`) on every arrive. Waits sleep `nanosleep 0` after
//!   each failed read (no `YIELD` spin). The release is a `MEMBAR.ALL.CTA` on sm_90, whatever PTX
//!   form asks for it, but it is not what costs: on NVIDIA this backend takes several times the
//!   hardware `mbarrier` per stage, mostly
//!   in the shared-memory atomic and the polling (tests/results, the counter-ring variants).
//!   The atomics act on the low 32-bit word of each counter: sm_90 adds 32-bit shared words
//!   natively, a 64-bit add becomes a compare-and-swap loop, and only the value modulo 2^32 matters.

use core::sync::atomic::AtomicU64;

use super::{MAX_COUNTER_ARRIVALS, PipelineBackend, check_arrive_counts};
use crate::threshold;

#[cfg(target_arch = "nvptx64")]
use crate::arch::nvptx as arch;

#[cfg(not(target_arch = "nvptx64"))]
use crate::arch::amdgpu as arch;

/// The address of one counter: a `.shared::cta` offset on NVIDIA, an LDS pointer elsewhere.
#[cfg(target_arch = "nvptx64")]
type Addr = u32;
#[cfg(not(target_arch = "nvptx64"))]
type Addr = *const AtomicU64;

/// A handle to one counter of an [`AmdCounterBackend`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CounterRef {
    addr: Addr,
}

impl CounterRef {
    #[inline(always)]
    fn offset(self, elems: u32) -> Self {
        #[cfg(target_arch = "nvptx64")]
        return Self {
            addr: self.addr + elems * 8,
        };
        #[cfg(not(target_arch = "nvptx64"))]
        return Self {
            addr: self.addr.wrapping_add(elems as usize),
        };
    }

    /// The calling thread arrives on this counter. The lanes of the calling wave that arrive in
    /// the same call are counted together: for each counter named by them, the lowest of its lanes
    /// adds their number ([`threshold::wave_share`]), after the data-before-signal fence (see the
    /// module docs). Lanes that name different counters (lane `l` on stage `l & 1`, lanes 0-3 on
    /// four stages) each count on their own counter.
    #[inline(always)]
    pub fn arrive(self) {
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
        #[cfg(target_arch = "nvptx64")]
        {
            let add = |n: u32| {
                // SAFETY: the backend's constructor guarantees a shared counter address; the low
                // word of the little-endian counter is at that address.
                unsafe { arch::red_release_cta_shared_add_u32(self.addr, n) }
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
                    let first = arch::shfl_sync_idx(u32::MAX, self.addr, 0);
                    if arch::vote_all_sync(u32::MAX, self.addr == first) {
                        if arch::laneid() == 0 {
                            add(32);
                        }
                        return;
                    }
                    arch::match_any_sync(u32::MAX, self.addr)
                }
            } else {
                // SAFETY: every lane of `mask` executes this same code with the same mask.
                unsafe {
                    arch::bar_warp_sync(mask);
                    arch::match_any_sync(mask, self.addr)
                }
            };
            let share =
                threshold::wave_share(u64::from(peers), (peers & arch::lanemask_lt()).count_ones());
            if share != 0 {
                add(share);
            }
        }
        #[cfg(not(target_arch = "nvptx64"))]
        {
            // One pass per distinct counter among the arriving lanes (usually one): the lanes
            // whose counter is the first remaining lane's add and leave; the others go round.
            let key = self.addr.addr() as u32;
            loop {
                let first = arch::readfirstlane(key);
                let peers = arch::ballot(key == first);
                if key == first {
                    let share = threshold::wave_share(peers, arch::lanes_below(peers));
                    if share != 0 {
                        lds_data_fence();
                        // SAFETY: the backend's constructor guarantees an LDS counter.
                        unsafe { arch::ds_add_u64(self.addr, u64::from(share)) };
                    }
                    break;
                }
            }
        }
    }

    /// The counter's value modulo 2^32, all the protocol compares (an acquire load on both
    /// vendors).
    ///
    /// On NVIDIA the counters count in their low 32-bit word only (native 32-bit shared atomics);
    /// on AMD in all 64 bits (`ds_add_u64` is native).
    #[inline(always)]
    #[must_use]
    pub fn load(self) -> u32 {
        #[cfg(target_arch = "nvptx64")]
        // SAFETY: the backend's constructor guarantees a shared counter address.
        return unsafe { arch::ld_acquire_cta_shared_u32(self.addr) };
        #[cfg(not(target_arch = "nvptx64"))]
        // SAFETY: the backend's constructor guarantees an LDS counter.
        return unsafe { arch::ds_read_u64_acquire(self.addr) } as u32;
    }

    /// Checked builds: the counter's value modulo 2^32 without ordering (the arrival count of the
    /// shadow checks, read after a wait that already acquired).
    #[cfg(feature = "checked")]
    #[inline(always)]
    fn load_relaxed(self) -> u32 {
        #[cfg(target_arch = "nvptx64")]
        // SAFETY: the backend's constructor guarantees a shared counter address.
        return unsafe { crate::arch::nvptx::ld_relaxed_cta_shared_u32(self.addr) };
        #[cfg(not(target_arch = "nvptx64"))]
        // SAFETY: the backend's constructor guarantees an LDS counter.
        return unsafe { arch::ds_read_u64_relaxed(self.addr) } as u32;
    }

    /// Whether the counter reached `threshold` (modulo 2^32), with acquire ordering if so.
    #[inline(always)]
    #[must_use]
    pub fn reached(self, threshold: u32) -> bool {
        threshold::reached(self.load(), threshold)
    }

    /// Blocks until the counter reached `threshold`; with a ticks hint, backs off between reads
    /// (AMD `s_sleep 1`, about 64 clocks; NVIDIA `nanosleep` of at most the hint, capped at 1 µs).
    /// Without a hint, NVIDIA still issues `nanosleep 0` after each failed read: ptxas otherwise
    /// puts a `YIELD` in the spin loop, and the loop with `NANOSLEEP` instead was 37 to 52 cycles
    /// per stage faster on the H200 (the counter-ring variants in tests/results). A sleep has no
    /// memory semantics: the acquire is still the read that succeeds.
    #[inline(always)]
    pub fn wait(self, threshold: u32, ticks: Option<u32>) {
        while !self.reached(threshold) {
            if let Some(t) = ticks {
                #[cfg(target_arch = "nvptx64")]
                arch::nanosleep(if t < 1000 { t } else { 1000 });
                #[cfg(not(target_arch = "nvptx64"))]
                {
                    let _ = t;
                    arch::s_sleep_1();
                }
            } else {
                #[cfg(target_arch = "nvptx64")]
                arch::nanosleep(0);
            }
        }
    }
}

/// The data-before-signal fence of the counter backend, by name: on AMD `s_waitcnt lgkmcnt(0)`
/// (every LDS/FLAT access of this wave has completed) plus a compiler release fence; on NVIDIA
/// `fence.acq_rel.cta` (not `core::sync::atomic::fence`, which is system scope there).
///
/// Every arrive of [`AmdCounterBackend`] already performs it; call it yourself only before a
/// signal made by other means.
#[inline(always)]
pub fn lds_data_fence() {
    #[cfg(target_arch = "nvptx64")]
    crate::arch::nvptx::fence_acq_rel_cta();
    #[cfg(not(target_arch = "nvptx64"))]
    {
        core::sync::atomic::compiler_fence(core::sync::atomic::Ordering::Release);
        crate::arch::amdgpu::s_waitcnt_lgkmcnt0();
    }
}

/// The counter backend (see the module docs): `2 * STAGES` monotonic 64-bit counters in shared
/// memory (LDS).
///
/// `PRODUCER_ARRIVALS` and `CONSUMER_ARRIVALS` are the threads that arrive per phase (1..=1024,
/// checked at compile time). They are type parameters because the pipeline value is copied into
/// every thread: a count stored by the initialising thread would not reach the others.
///
/// Named for the reference design's AMD backend; it builds for nvptx64 too.
#[derive(Clone, Copy, Debug)]
pub struct AmdCounterBackend<const PRODUCER_ARRIVALS: u32, const CONSUMER_ARRIVALS: u32> {
    full: CounterRef,
    empty: CounterRef,
}

// SAFETY: layout: `new` places full[] at the base and empty[] STAGES counters later.
// Completion: `reached` compares with the thresholds of `crate::threshold`, exact under the
// protocol. Arrival unit: a wave adds its number of active (arriving) lanes once, so each thread
// counts one (the lanes of a call are grouped by counter: `threshold::wave_share`). Ordering: see the
// module docs (fence + release add; acquire reads).
// No reset: only `init` stores. Constants: checked in `new`.
unsafe impl<const P: u32, const C: u32> PipelineBackend for AmdCounterBackend<P, C> {
    type Storage = AtomicU64;
    type Handle = CounterRef;

    const PRODUCER_ARRIVALS: u32 = P;
    const CONSUMER_ARRIVALS: u32 = C;
    const MAX_ARRIVALS: u32 = MAX_COUNTER_ARRIVALS;

    #[inline(always)]
    unsafe fn new<const STAGES: usize>(storage: *mut AtomicU64) -> Self {
        check_arrive_counts::<Self>();
        #[cfg(target_arch = "nvptx64")]
        // SAFETY: the caller guarantees `storage` points into shared memory.
        let full = CounterRef {
            addr: unsafe { arch::cvta_to_shared(storage.cast()) },
        };
        #[cfg(not(target_arch = "nvptx64"))]
        let full = CounterRef {
            addr: storage.cast_const(),
        };
        Self {
            full,
            empty: full.offset(STAGES as u32),
        }
    }

    #[inline(always)]
    unsafe fn init<const STAGES: usize>(&self) {
        #[cfg(target_arch = "nvptx64")]
        for i in 0..2 * STAGES as u32 {
            // SAFETY: the caller is the only thread using the storage now.
            unsafe { arch::st_shared_u64(self.full.offset(i).addr, 0) };
        }
        #[cfg(not(target_arch = "nvptx64"))]
        for i in 0..2 * STAGES as u32 {
            // SAFETY: the caller is the only thread using the storage now; a plain store of a
            // fresh counter (`ds_write_b64`).
            unsafe { self.full.offset(i).addr.cast_mut().write(AtomicU64::new(0)) };
        }
        // The initialising stores complete before the caller's block barrier, so a bare
        // `s_barrier` suffices there.
        #[cfg(not(target_arch = "nvptx64"))]
        lds_data_fence();
    }

    #[inline(always)]
    unsafe fn wait_full(&self, stage: u32, lap: u32, ticks: Option<u32>) {
        self.full
            .offset(stage)
            .wait(threshold::full_threshold(lap, P), ticks);
    }

    #[inline(always)]
    unsafe fn wait_empty(&self, stage: u32, lap: u32, ticks: Option<u32>) {
        self.empty
            .offset(stage)
            .wait(threshold::empty_threshold(lap, C), ticks);
    }

    #[inline(always)]
    unsafe fn try_full(&self, stage: u32, lap: u32) -> bool {
        self.full
            .offset(stage)
            .reached(threshold::full_threshold(lap, P))
    }

    #[inline(always)]
    unsafe fn try_empty(&self, stage: u32, lap: u32) -> bool {
        self.empty
            .offset(stage)
            .reached(threshold::empty_threshold(lap, C))
    }

    #[inline(always)]
    unsafe fn arrive_full(&self, stage: u32) {
        self.full.offset(stage).arrive();
    }

    #[inline(always)]
    unsafe fn arrive_empty(&self, stage: u32) {
        self.empty.offset(stage).arrive();
    }

    #[inline(always)]
    unsafe fn full_handle(&self, stage: u32) -> CounterRef {
        self.full.offset(stage)
    }

    #[inline(always)]
    unsafe fn empty_handle(&self, stage: u32) -> CounterRef {
        self.empty.offset(stage)
    }

    // The counters are exact arrival counts: they are their own shadows.
    #[cfg(feature = "checked")]
    #[inline(always)]
    unsafe fn arrivals_full(&self, stage: u32) -> u32 {
        self.full.offset(stage).load_relaxed()
    }

    #[cfg(feature = "checked")]
    #[inline(always)]
    unsafe fn arrivals_empty(&self, stage: u32) -> u32 {
        self.empty.offset(stage).load_relaxed()
    }
}
