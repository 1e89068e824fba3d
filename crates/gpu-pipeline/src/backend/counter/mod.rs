//! The counter backend: monotonic 64-bit shared-memory counters, no parity.
//!
//! This file is the protocol side, the same on both vendors; the per-architecture paths (the
//! arrive, the reads, the pause between polls, the initialising stores) are in `nvptx.rs` and
//! `amdgpu.rs` (which the host also type-checks, against the arch stubs).
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

use core::marker::PhantomData;
use core::sync::atomic::AtomicU64;

use super::{MAX_COUNTER_ARRIVALS, PipelineBackend, Signal, check_arrive_counts};
use crate::threshold;

#[cfg_attr(target_arch = "nvptx64", path = "nvptx.rs")]
#[cfg_attr(not(target_arch = "nvptx64"), path = "amdgpu.rs")]
mod imp;

pub use imp::lds_data_fence;

/// A handle to one counter of a [`CounterBackend`], valid for the borrow `'a` it was made under.
#[derive(Debug, PartialEq, Eq)]
pub struct CounterRef<'a> {
    addr: imp::Addr,
    /// The arrivals of one phase of this counter's signal (the backend's arrive count).
    per_phase: u32,
    borrow: PhantomData<&'a AtomicU64>,
}

impl Clone for CounterRef<'_> {
    #[inline(always)]
    fn clone(&self) -> Self {
        *self
    }
}

impl Copy for CounterRef<'_> {}

impl CounterRef<'_> {
    /// The calling thread arrives on this counter. The lanes of the calling wave that arrive in
    /// the same call are counted together: for each counter named by them, the lowest of its lanes
    /// adds their number ([`threshold::wave_share`]), after the data-before-signal fence (see the
    /// module docs). Lanes that name different counters (lane `l` on stage `l & 1`, lanes 0-3 on
    /// four stages) each count on their own counter.
    #[inline(always)]
    pub fn arrive(self) {
        // SAFETY: the backend's constructor guarantees a counter in this block's shared memory,
        // valid for the handle's borrow.
        unsafe { imp::arrive(self.addr) }
    }

    /// The counter's value modulo 2^32, all the protocol compares (an acquire load on both
    /// vendors).
    ///
    /// On NVIDIA the counters count in their low 32-bit word only (native 32-bit shared atomics);
    /// on AMD in all 64 bits (`ds_add_u64` is native).
    #[inline(always)]
    #[must_use]
    pub fn load(self) -> u32 {
        // SAFETY: as in `arrive`.
        unsafe { imp::load_acquire(self.addr) }
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
            imp::pause(ticks);
        }
    }
}

// SAFETY: completion: `completed(n)` compares the counter with `n * per_phase` by the serial
// arithmetic of `crate::threshold`, exact while the counter lies within one phase of it (the
// protocol's bound, proved there). Arrival unit: a wave's lanes that name this counter add their
// number once (`threshold::wave_share`), so each calling thread counts one. Ordering: the arrive
// is the fence and a release add, the read an acquire load (module docs). No reset: only the
// backend's `init` stores.
unsafe impl Signal for CounterRef<'_> {
    #[inline(always)]
    fn arrive(self) {
        CounterRef::arrive(self);
    }

    #[inline(always)]
    fn completed(self, completions: u32) -> bool {
        self.reached(threshold::threshold(completions, self.per_phase))
    }

    #[inline(always)]
    fn wait_completed(self, completions: u32, ticks: Option<u32>) {
        self.wait(threshold::threshold(completions, self.per_phase), ticks);
    }

    /// The counter itself, read without ordering (after a wait that already acquired).
    #[cfg(feature = "checked")]
    #[inline(always)]
    fn arrivals(self) -> u32 {
        // SAFETY: as in `arrive`.
        unsafe { imp::load_relaxed(self.addr) }
    }
}

/// The counter backend (see the module docs): `2 * STAGES` monotonic 64-bit counters in shared
/// memory (LDS on AMD), on both vendors.
///
/// `PRODUCER_ARRIVALS` and `CONSUMER_ARRIVALS` are the threads that arrive per phase (1..=1024,
/// checked at compile time). They are type parameters because the pipeline value is copied into
/// every thread: a count stored by the initialising thread would not reach the others.
#[derive(Clone, Copy, Debug)]
pub struct CounterBackend<const PRODUCER_ARRIVALS: u32, const CONSUMER_ARRIVALS: u32> {
    full: imp::Addr,
    empty: imp::Addr,
}

/// The reference design's name for [`CounterBackend`] (its AMD backend). The same type: it
/// builds for nvptx64 too, where the device suite runs the counter protocol.
pub type AmdCounterBackend<const PRODUCER_ARRIVALS: u32, const CONSUMER_ARRIVALS: u32> =
    CounterBackend<PRODUCER_ARRIVALS, CONSUMER_ARRIVALS>;

impl<const P: u32, const C: u32> CounterBackend<P, C> {
    #[inline(always)]
    fn counter(&self, base: imp::Addr, stage: u32, per_phase: u32) -> CounterRef<'_> {
        CounterRef {
            addr: imp::offset(base, stage),
            per_phase,
            borrow: PhantomData,
        }
    }
}

// SAFETY: layout: `new` places full[] at the base and empty[] STAGES counters later, 2 * STAGES
// counters (no shadows: the counters are the arrival counts). Signals: `full`/`empty` return the
// stage's counter with the backend's arrive count per phase, each a `Signal` (its impl above).
// Constants: checked in `new`. Shadows: the counters themselves, zeroed by `init`.
unsafe impl<const P: u32, const C: u32> PipelineBackend for CounterBackend<P, C> {
    type Storage = AtomicU64;
    type Signal<'a> = CounterRef<'a>;

    const PRODUCER_ARRIVALS: u32 = P;
    const CONSUMER_ARRIVALS: u32 = C;
    const MAX_ARRIVALS: u32 = MAX_COUNTER_ARRIVALS;

    #[inline(always)]
    unsafe fn new<const STAGES: usize>(storage: *mut AtomicU64) -> Self {
        check_arrive_counts::<Self>();
        // SAFETY: the caller guarantees `storage` points into shared memory.
        let full = unsafe { imp::addr_of(storage) };
        Self {
            full,
            empty: imp::offset(full, STAGES as u32),
        }
    }

    #[inline(always)]
    unsafe fn init<const STAGES: usize>(&self) {
        for i in 0..2 * STAGES as u32 {
            // SAFETY: the caller is the only thread using the storage now.
            unsafe { imp::zero(imp::offset(self.full, i)) };
        }
        imp::init_done();
    }

    #[inline(always)]
    unsafe fn full(&self, stage: u32) -> CounterRef<'_> {
        self.counter(self.full, stage, P)
    }

    #[inline(always)]
    unsafe fn empty(&self, stage: u32) -> CounterRef<'_> {
        self.counter(self.empty, stage, C)
    }
}
