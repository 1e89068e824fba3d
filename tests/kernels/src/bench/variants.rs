//! Variants of the counter backend's NVIDIA path, for the variant table of `cargo xtask
//! bench-nvidia`: the library's protocol (its pipeline type, cursors and threshold arithmetic)
//! over a test backend whose arrive and wait take other instruction forms. The flags `V_*` and
//! the kernel names are those of the C++ twins (`COUNTER_VARIANT` in `tests/bench/bench.cu`).
//! The loops are flat (`LOOP_FLAT`) on both sides.
//!
//! Measurement only: `prev` (the library's arrive before each lane counted on its own counter)
//! is wrong when lanes of a warp arrive on different counters; nothing here is a backend to use.
//! The earlier investigation's variants (release forms, polling forms, padding) are in the results
//! of commit `54f673d` and the code of that commit.

#[cfg(feature = "checked")]
use gpu_pipeline::arch::nvptx::ld_relaxed_cta_shared_u32;
use gpu_pipeline::arch::nvptx::{
    activemask, bar_warp_sync, bar_warp_sync_all, cvta_to_shared, laneid, lanemask_lt,
    ld_acquire_cta_shared_u32, match_any_sync, nanosleep, red_release_cta_shared_add_u32,
    st_shared_u64,
};
use gpu_pipeline::{MbarrierRef, PipelineBackend, Signal, threshold};

/// The library's arrive before it grouped lanes by counter (`prev`): a full warp syncs with
/// `0xffffffff` and lane 0 adds 32; a lone lane adds 1; other masks sync on their run-time mask
/// and the lowest lane adds the mask's count. Every lane's arrival lands on the leader's counter.
pub const V_PREV: u32 = 0x1;
/// A full warp always groups its lanes with `match.any.sync` (no uniformity check first, as the
/// library's first per-counter arrive did).
pub const V_MATCH: u32 = 0x2;

/// The counter protocol with the arrive and wait forms of `V` (see the module docs).
#[derive(Clone, Copy)]
pub struct VarCounter<const P: u32, const C: u32, const V: u32> {
    full: u32,
    empty: u32,
}

impl<const P: u32, const C: u32, const V: u32> VarCounter<P, C, V> {
    /// Bytes between two counters.
    const STRIDE: u32 = 8;

    /// Adds `n` to the counter at `addr` (`red.release.cta`, as the library).
    #[inline(always)]
    fn add(addr: u32, n: u32) {
        // SAFETY: `addr` is a counter of this backend's shared storage.
        unsafe { red_release_cta_shared_add_u32(addr, n) }
    }

    /// The library's grouping: the lanes of `mask` that name `addr` are counted by their lowest.
    #[inline(always)]
    fn add_grouped(mask: u32, addr: u32) {
        // SAFETY: every lane of `mask` executes this same code with the same mask.
        let peers = unsafe { match_any_sync(mask, addr) };
        let share = threshold::wave_share(u64::from(peers), (peers & lanemask_lt()).count_ones());
        if share != 0 {
            Self::add(addr, share);
        }
    }

    /// The arriving lanes of the calling warp arrive on the counter at `addr`.
    #[inline(always)]
    fn arrive(addr: u32) {
        let mask = activemask();
        if mask & mask.wrapping_sub(1) == 0 {
            Self::add(addr, 1);
            return;
        }
        if mask == u32::MAX {
            // SAFETY: the whole warp is here (the mask says so).
            unsafe { bar_warp_sync_all() };
            if V & V_PREV != 0 {
                if laneid() == 0 {
                    Self::add(addr, 32);
                }
                return;
            }
            // V_MATCH.
            Self::add_grouped(u32::MAX, addr);
            return;
        }
        // SAFETY: every lane of `mask` executes this same code with the same mask.
        unsafe { bar_warp_sync(mask) };
        if V & V_PREV != 0 {
            if mask & lanemask_lt() == 0 {
                Self::add(addr, mask.count_ones());
            }
        } else {
            Self::add_grouped(mask, addr);
        }
    }

    /// One read of the counter at `addr` against `threshold` (`ld.acquire.cta`, as the library).
    #[inline(always)]
    fn reached(addr: u32, threshold: u32) -> bool {
        // SAFETY: `addr` is a counter of this backend's shared storage.
        threshold::reached(unsafe { ld_acquire_cta_shared_u32(addr) }, threshold)
    }

    /// Waits until the counter at `addr` reached `threshold`, `nanosleep 0` between reads (as the
    /// library).
    #[inline(always)]
    fn wait(addr: u32, threshold: u32) {
        while !Self::reached(addr, threshold) {
            nanosleep(0);
        }
    }
}

/// One counter of a [`VarCounter`], with the arrive and wait forms of `V`.
#[derive(Clone, Copy)]
pub struct VarSignal<'a, const V: u32> {
    addr: u32,
    per_phase: u32,
    borrow: core::marker::PhantomData<&'a u64>,
}

// SAFETY: completion, arrival unit, no reset: as the library's counter backend, whose threshold
// arithmetic this uses, for the arrivals these kernels make (every lane of a call on one counter:
// `V_PREV` is wrong only when they differ). Ordering: as the library's (release add, acquire
// read).
unsafe impl<const V: u32> Signal for VarSignal<'_, V> {
    #[inline(always)]
    fn arrive(self) {
        VarCounter::<1, 1, V>::arrive(self.addr);
    }

    #[inline(always)]
    fn completed(self, completions: u32) -> bool {
        VarCounter::<1, 1, V>::reached(self.addr, threshold::threshold(completions, self.per_phase))
    }

    #[inline(always)]
    fn wait_completed(self, completions: u32, _ticks: Option<u32>) {
        VarCounter::<1, 1, V>::wait(self.addr, threshold::threshold(completions, self.per_phase));
    }

    // Checked builds: the counters are their own shadows, as in the library's counter backend.
    #[cfg(feature = "checked")]
    #[inline(always)]
    fn arrivals(self) -> u32 {
        // SAFETY: a counter of this backend's shared storage.
        unsafe { ld_relaxed_cta_shared_u32(self.addr) }
    }
}

// SAFETY: layout: `2 * STAGES` counters, full then empty. Signals: the stage's counter with P or
// C arrivals per phase (its `Signal` impl above). Constants: checked in `new`.
unsafe impl<const P: u32, const C: u32, const V: u32> PipelineBackend for VarCounter<P, C, V> {
    type Storage = u64;
    type Signal<'a> = VarSignal<'a, V>;

    const PRODUCER_ARRIVALS: u32 = P;
    const CONSUMER_ARRIVALS: u32 = C;
    const MAX_ARRIVALS: u32 = gpu_pipeline::backend::MAX_COUNTER_ARRIVALS;

    #[inline(always)]
    unsafe fn new<const STAGES: usize>(storage: *mut u64) -> Self {
        gpu_pipeline::backend::check_arrive_counts::<Self>();
        // SAFETY: the caller guarantees shared storage.
        let full = unsafe { cvta_to_shared(storage.cast()) };
        Self {
            full,
            empty: full + STAGES as u32 * Self::STRIDE,
        }
    }

    #[inline(always)]
    unsafe fn init<const STAGES: usize>(&self) {
        for i in 0..2 * STAGES as u32 {
            // SAFETY: the caller is the only thread using the storage now.
            unsafe { st_shared_u64(self.full + i * Self::STRIDE, 0) };
        }
    }

    #[inline(always)]
    unsafe fn full(&self, stage: u32) -> VarSignal<'_, V> {
        VarSignal {
            addr: self.full + stage * Self::STRIDE,
            per_phase: P,
            borrow: core::marker::PhantomData,
        }
    }

    #[inline(always)]
    unsafe fn empty(&self, stage: u32) -> VarSignal<'_, V> {
        VarSignal {
            addr: self.empty + stage * Self::STRIDE,
            per_phase: C,
            borrow: core::marker::PhantomData,
        }
    }
}

/// One variant in the five shapes of the variant table: the round trip, and the 4-stage ring with
/// 1 or 4 consumer warps, per-warp or per-thread arrivals (as the C++ `COUNTER_VARIANT`); flat
/// loops.
macro_rules! counter_variant {
    ($($name:literal: $v:expr;)*) => {$(
        variant_kernel!($name, "_rt", super::roundtrip::<VarCounter<1, 1, { $v }>, { super::WAIT }, { super::LOOP_FLAT }>);
        variant_kernel!($name, "_c1_warp", super::ring::<4, VarCounter<1, 1, { $v }>, 1, false, { super::LOOP_FLAT }>);
        variant_kernel!($name, "_c4_warp", super::ring::<4, VarCounter<1, 4, { $v }>, 4, false, { super::LOOP_FLAT }>);
        variant_kernel!($name, "_c1_thread", super::ring::<4, VarCounter<32, 32, { $v }>, 1, true, { super::LOOP_FLAT }>);
        variant_kernel!($name, "_c4_thread", super::ring::<4, VarCounter<32, 128, { $v }>, 4, true, { super::LOOP_FLAT }>);
    )*};
}

macro_rules! variant_kernel {
    ($name:expr, $shape:literal, $body:expr) => {
        const _: () = {
            /// A counter-ring variant kernel (see the module docs).
            #[unsafe(export_name = concat!("var_", $name, $shape))]
            pub unsafe extern "gpu-kernel" fn kernel(iters: u32, out: *mut u64) {
                // SAFETY: the harness launches the documented shape with the counters' shared memory.
                unsafe { $body(iters, out) }
            }
        };
    };
}

counter_variant! {
    "prev": V_PREV;
    "match": V_MATCH;
}

/// The mbarrier backend with a bare `try_wait` retry loop (the library's wait before its cold
/// retry loop), where ptxas puts a `YIELD` in front of the `try_wait` when the loop sits in an
/// unrolled body. Measured against the library's wait (one `try_wait`, then a cold retry loop) in
/// the round trip and the elected-lane ring (`var_spinwait_*`), in the loop shape LLVM gives a
/// plain loop and in the flat one. (`nanosleep 0` between tries, a `test_wait` first, and a
/// `test_wait` spin were measured too: as fast as the library's wait unrolled, as slow or slower
/// flat; tests/results/2026-12-01-issue11.md.)
#[derive(Clone, Copy)]
pub struct SpinWaitMbar<const P: u32, const C: u32>(gpu_pipeline::NvidiaMbarBackend<P, C>);

/// A library mbarrier handle whose wait is the bare retry loop.
#[derive(Clone, Copy)]
pub struct SpinWaitSignal<'a>(MbarrierRef<'a>);

// SAFETY: every item forwards to the library's `MbarrierRef` signal, whose contract holds; the
// wait returns only once `try_wait_parity` of the phase succeeded, as the library's does.
unsafe impl Signal for SpinWaitSignal<'_> {
    #[inline(always)]
    fn arrive(self) {
        self.0.arrive();
    }

    #[inline(always)]
    fn completed(self, completions: u32) -> bool {
        Signal::completed(self.0, completions)
    }

    #[inline(always)]
    fn wait_completed(self, completions: u32, _ticks: Option<u32>) {
        let parity = completions.wrapping_add(1);
        while !self.0.try_wait_parity(parity) {}
    }

    #[cfg(feature = "checked")]
    #[inline(always)]
    fn arrivals(self) -> u32 {
        Signal::arrivals(self.0)
    }
}

// SAFETY: every item forwards to the library's NvidiaMbarBackend, whose contract holds; its
// signals wait with the bare loop (above).
unsafe impl<const P: u32, const C: u32> PipelineBackend for SpinWaitMbar<P, C> {
    type Storage = gpu_pipeline::Mbarrier;
    type Signal<'a> = SpinWaitSignal<'a>;

    const PRODUCER_ARRIVALS: u32 = P;
    const CONSUMER_ARRIVALS: u32 = C;
    const MAX_ARRIVALS: u32 = gpu_pipeline::backend::MAX_MBARRIER_ARRIVALS;
    const SHADOW_ELEMS_PER_STAGE: usize = 1;

    #[inline(always)]
    unsafe fn new<const STAGES: usize>(storage: *mut gpu_pipeline::Mbarrier) -> Self {
        // SAFETY: forwarded.
        Self(unsafe { gpu_pipeline::NvidiaMbarBackend::new::<STAGES>(storage) })
    }

    #[inline(always)]
    unsafe fn init<const STAGES: usize>(&self) {
        // SAFETY: forwarded.
        unsafe { self.0.init::<STAGES>() }
    }

    #[inline(always)]
    unsafe fn full(&self, stage: u32) -> SpinWaitSignal<'_> {
        // SAFETY: forwarded.
        SpinWaitSignal(unsafe { self.0.full(stage) })
    }

    #[inline(always)]
    unsafe fn empty(&self, stage: u32) -> SpinWaitSignal<'_> {
        // SAFETY: forwarded.
        SpinWaitSignal(unsafe { self.0.empty(stage) })
    }
}

/// The elected-lane ring (direct calls, per-warp release) over [`SpinWaitMbar`]:
/// `var_spinwait_s{S}_c{W}_{llvm|flat}`, and the round trip `var_spinwait_rt_{llvm|flat}`.
macro_rules! wait_kernels {
    ($($s:literal, $w:literal;)*) => {$(
        variant_kernel!(
            concat!("spinwait_s", stringify!($s), "_c", stringify!($w)),
            "_llvm",
            super::elect_ring::<$s, SpinWaitMbar<1, $w>, $w, false, { super::DIRECT }, { super::LOOP_LLVM }>
        );
        variant_kernel!(
            concat!("spinwait_s", stringify!($s), "_c", stringify!($w)),
            "_flat",
            super::elect_ring::<$s, SpinWaitMbar<1, $w>, $w, false, { super::DIRECT }, { super::LOOP_FLAT }>
        );
    )*};
}

wait_kernels! {
    1, 1;
    2, 1;
    4, 1;
    8, 1;
    2, 4;
    4, 4;
}

variant_kernel!(
    "spinwait_rt",
    "_llvm",
    super::roundtrip::<SpinWaitMbar<1, 1>, { super::WAIT }, { super::LOOP_LLVM }>
);
variant_kernel!(
    "spinwait_rt",
    "_flat",
    super::roundtrip::<SpinWaitMbar<1, 1>, { super::WAIT }, { super::LOOP_FLAT }>
);
