//! Variants of the counter backend's NVIDIA path, for the variant table of `cargo xtask
//! bench-nvidia`: the library's protocol (its pipeline type, cursors and threshold arithmetic)
//! over a test backend whose arrive and wait take other instruction forms. The flags `V_*` and
//! the kernel names are those of the C++ twins (`COUNTER_VARIANT` in `tests/bench/bench.cu`).
//!
//! Measurement only: `V_REL_NONE` is no release at all (it tells what the fence costs), and
//! nothing here is a backend to use.

use gpu_pipeline::arch::nvptx::{
    activemask, bar_warp_sync, bar_warp_sync_all, cvta_to_shared, fence_acq_rel_cta, laneid,
    lanemask_lt, ld_acquire_cta_shared_u32, ld_relaxed_cta_shared_u32, nanosleep,
    red_relaxed_cta_shared_add_u32, red_release_cta_shared_add_u32, st_shared_u64,
};
use gpu_pipeline::{PipelineBackend, counter};

use crate::arch::bench::{
    atom_release_cta_shared_add_u32, fence_sc_cta, st_release_cta_shared_u32,
};

/// Constant-mask paths: a full warp syncs with `0xffffffff` and lane 0 adds 32; a lone lane adds
/// 1 without a warp sync; other masks sync on their run-time mask and the lowest lane adds. Without
/// it (`V = 0`): every arrive syncs on its run-time mask, the library's first algorithm. With
/// `V_POLL_SLEEP0` and nothing else: the library's current algorithm.
pub const V_CMASK: u32 = 0x1;
/// How the add releases (`V_REL_*`).
const V_REL: u32 = 0xf0;
/// `fence.acq_rel.cta; red.relaxed.cta`.
pub const V_REL_FENCE: u32 = 0x10;
/// `atom.release.cta`, result unused.
pub const V_REL_ATOM: u32 = 0x20;
/// `red.relaxed.cta` alone: not a release, measurement only.
pub const V_REL_NONE: u32 = 0x30;
/// `fence.sc.cta; red.relaxed.cta`.
pub const V_REL_SC: u32 = 0x40;
/// `ld.relaxed.cta`, then `st.release.cta` of the sum: valid only where one warp arrives on each
/// counter (not a counter backend: it measures what the atomic costs).
pub const V_REL_STORE: u32 = 0x70;
/// Polls with `ld.relaxed.cta` until reached, then `fence.acq_rel.cta` (default: `ld.acquire.cta`).
pub const V_POLL_RELAXED: u32 = 0x100;
/// `nanosleep 0` after each failed poll (default: spin).
pub const V_POLL_SLEEP0: u32 = 0x200;
/// Each counter in its own 128-byte line (default: 8 bytes apart).
pub const V_PAD: u32 = 0x1000;

/// The counter protocol with the arrive and wait forms of `V` (see the module docs).
#[derive(Clone, Copy)]
pub struct VarCounter<const P: u32, const C: u32, const V: u32> {
    full: u32,
    empty: u32,
}

impl<const P: u32, const C: u32, const V: u32> VarCounter<P, C, V> {
    /// Bytes between two counters.
    const STRIDE: u32 = if V & V_PAD != 0 { 128 } else { 8 };

    /// Adds `n` to the counter at `addr`, releasing as `V` says.
    #[inline(always)]
    fn add(addr: u32, n: u32) {
        // SAFETY: `addr` is a counter of this backend's shared storage.
        unsafe {
            match V & V_REL {
                V_REL_FENCE => {
                    fence_acq_rel_cta();
                    red_relaxed_cta_shared_add_u32(addr, n);
                }
                V_REL_ATOM => atom_release_cta_shared_add_u32(addr, n),
                V_REL_NONE => red_relaxed_cta_shared_add_u32(addr, n),
                V_REL_SC => {
                    fence_sc_cta();
                    red_relaxed_cta_shared_add_u32(addr, n);
                }
                V_REL_STORE => st_release_cta_shared_u32(addr, ld_relaxed_cta_shared_u32(addr) + n),
                _ => red_release_cta_shared_add_u32(addr, n),
            }
        }
    }

    /// The arriving lanes of the calling warp arrive on the counter at `addr`.
    #[inline(always)]
    fn arrive(addr: u32) {
        let mask = activemask();
        if V & V_CMASK != 0 {
            if mask == u32::MAX {
                // SAFETY: the whole warp is here (the mask says so).
                unsafe { bar_warp_sync_all() };
                if laneid() == 0 {
                    Self::add(addr, 32);
                }
                return;
            }
            if mask & (mask - 1) == 0 {
                Self::add(addr, 1);
                return;
            }
        }
        // SAFETY: every lane of `mask` executes this same code with the same mask.
        unsafe { bar_warp_sync(mask) };
        if mask & lanemask_lt() == 0 {
            Self::add(addr, mask.count_ones());
        }
    }

    /// One read of the counter at `addr` against `threshold`, as `V` polls.
    #[inline(always)]
    fn reached(addr: u32, threshold: u32) -> bool {
        // SAFETY: `addr` is a counter of this backend's shared storage.
        let value = unsafe {
            if V & V_POLL_RELAXED != 0 {
                ld_relaxed_cta_shared_u32(addr)
            } else {
                ld_acquire_cta_shared_u32(addr)
            }
        };
        counter::reached(value, threshold)
    }

    /// Waits until the counter at `addr` reached `threshold`.
    #[inline(always)]
    fn wait(addr: u32, threshold: u32) {
        while !Self::reached(addr, threshold) {
            if V & V_POLL_SLEEP0 != 0 {
                nanosleep(0);
            }
        }
        if V & V_POLL_RELAXED != 0 {
            fence_acq_rel_cta();
        }
    }

    /// A successful try, with the acquire of `V`'s wait.
    #[inline(always)]
    fn try_reached(addr: u32, threshold: u32) -> bool {
        let done = Self::reached(addr, threshold);
        if done && V & V_POLL_RELAXED != 0 {
            fence_acq_rel_cta();
        }
        done
    }
}

// SAFETY: layout: `2 * STAGES` counters `STRIDE` bytes apart (`ELEMS_PER_STAGE` counts the 8-byte
// elements that spans), full then empty. Completion, arrival unit, no reset, constants: as the
// library's counter backend, whose threshold arithmetic this uses. Ordering: as the library's
// except for `V_REL_NONE`, which is measured and never used to pass data.
unsafe impl<const P: u32, const C: u32, const V: u32> PipelineBackend for VarCounter<P, C, V> {
    type Storage = u64;
    type Handle = u32;

    const PRODUCER_ARRIVALS: u32 = P;
    const CONSUMER_ARRIVALS: u32 = C;
    const MAX_ARRIVALS: u32 = gpu_pipeline::backend::MAX_COUNTER_ARRIVALS;

    const ELEMS_PER_STAGE: usize = 2 * (Self::STRIDE as usize / 8);

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
    unsafe fn wait_full(&self, stage: u32, lap: u32, _ticks: Option<u32>) {
        Self::wait(
            self.full + stage * Self::STRIDE,
            counter::full_threshold(lap, P),
        );
    }

    #[inline(always)]
    unsafe fn wait_empty(&self, stage: u32, lap: u32, _ticks: Option<u32>) {
        Self::wait(
            self.empty + stage * Self::STRIDE,
            counter::empty_threshold(lap, C),
        );
    }

    #[inline(always)]
    unsafe fn try_full(&self, stage: u32, lap: u32) -> bool {
        Self::try_reached(
            self.full + stage * Self::STRIDE,
            counter::full_threshold(lap, P),
        )
    }

    #[inline(always)]
    unsafe fn try_empty(&self, stage: u32, lap: u32) -> bool {
        Self::try_reached(
            self.empty + stage * Self::STRIDE,
            counter::empty_threshold(lap, C),
        )
    }

    #[inline(always)]
    unsafe fn arrive_full(&self, stage: u32) {
        Self::arrive(self.full + stage * Self::STRIDE);
    }

    #[inline(always)]
    unsafe fn arrive_empty(&self, stage: u32) {
        Self::arrive(self.empty + stage * Self::STRIDE);
    }

    #[inline(always)]
    unsafe fn full_handle(&self, stage: u32) -> u32 {
        self.full + stage * Self::STRIDE
    }

    #[inline(always)]
    unsafe fn empty_handle(&self, stage: u32) -> u32 {
        self.empty + stage * Self::STRIDE
    }

    // Checked builds: the counters are their own shadows, as in the library's counter backend.
    #[cfg(feature = "checked")]
    #[inline(always)]
    unsafe fn arrivals_full(&self, stage: u32) -> u32 {
        // SAFETY: a counter of this backend's shared storage.
        unsafe { ld_relaxed_cta_shared_u32(self.full + stage * Self::STRIDE) }
    }

    #[cfg(feature = "checked")]
    #[inline(always)]
    unsafe fn arrivals_empty(&self, stage: u32) -> u32 {
        // SAFETY: a counter of this backend's shared storage.
        unsafe { ld_relaxed_cta_shared_u32(self.empty + stage * Self::STRIDE) }
    }
}

/// One variant in the five shapes of the variant table: the round trip, and the 4-stage ring with
/// 1 or 4 consumer warps, per-warp or per-thread arrivals (as the C++ `COUNTER_VARIANT`).
macro_rules! counter_variant {
    ($($rt:ident, $c1w:ident, $c4w:ident, $c1t:ident, $c4t:ident: $v:expr;)*) => {$(
        cycles_kernel!($rt, super::roundtrip::<VarCounter<1, 1, { $v }>, { super::PLAIN }>);
        cycles_kernel!($c1w, super::ring::<4, VarCounter<1, 1, { $v }>, 1, false>);
        cycles_kernel!($c4w, super::ring::<4, VarCounter<1, 4, { $v }>, 4, false>);
        cycles_kernel!($c1t, super::ring::<4, VarCounter<32, 32, { $v }>, 1, true>);
        cycles_kernel!($c4t, super::ring::<4, VarCounter<32, 128, { $v }>, 4, true>);
    )*};
}

counter_variant! {
    var_old_rt, var_old_c1_warp, var_old_c4_warp, var_old_c1_thread, var_old_c4_thread: 0;
    var_nofence_rt, var_nofence_c1_warp, var_nofence_c4_warp, var_nofence_c1_thread,
        var_nofence_c4_thread: V_REL_NONE;
    var_cmask_rt, var_cmask_c1_warp, var_cmask_c4_warp, var_cmask_c1_thread,
        var_cmask_c4_thread: V_CMASK;
    var_cmask_fence_rt, var_cmask_fence_c1_warp, var_cmask_fence_c4_warp,
        var_cmask_fence_c1_thread, var_cmask_fence_c4_thread: V_CMASK | V_REL_FENCE;
    var_cmask_sc_rt, var_cmask_sc_c1_warp, var_cmask_sc_c4_warp, var_cmask_sc_c1_thread,
        var_cmask_sc_c4_thread: V_CMASK | V_REL_SC;
    var_cmask_atom_rt, var_cmask_atom_c1_warp, var_cmask_atom_c4_warp,
        var_cmask_atom_c1_thread, var_cmask_atom_c4_thread: V_CMASK | V_REL_ATOM;
    var_cmask_ldrelaxed_rt, var_cmask_ldrelaxed_c1_warp, var_cmask_ldrelaxed_c4_warp,
        var_cmask_ldrelaxed_c1_thread, var_cmask_ldrelaxed_c4_thread: V_CMASK | V_POLL_RELAXED;
    var_cmask_sleep0_rt, var_cmask_sleep0_c1_warp, var_cmask_sleep0_c4_warp,
        var_cmask_sleep0_c1_thread, var_cmask_sleep0_c4_thread: V_CMASK | V_POLL_SLEEP0;
    var_cmask_pad_rt, var_cmask_pad_c1_warp, var_cmask_pad_c4_warp, var_cmask_pad_c1_thread,
        var_cmask_pad_c4_thread: V_CMASK | V_PAD;
    var_cmask_nofence_rt, var_cmask_nofence_c1_warp, var_cmask_nofence_c4_warp,
        var_cmask_nofence_c1_thread, var_cmask_nofence_c4_thread: V_CMASK | V_REL_NONE;
    var_sleep0_ldrelaxed_rt, var_sleep0_ldrelaxed_c1_warp, var_sleep0_ldrelaxed_c4_warp,
        var_sleep0_ldrelaxed_c1_thread, var_sleep0_ldrelaxed_c4_thread:
        V_CMASK | V_POLL_SLEEP0 | V_POLL_RELAXED;
    var_sleep0_nofence_rt, var_sleep0_nofence_c1_warp, var_sleep0_nofence_c4_warp,
        var_sleep0_nofence_c1_thread, var_sleep0_nofence_c4_thread:
        V_CMASK | V_POLL_SLEEP0 | V_REL_NONE;
}

/// The store variant: one arriving warp per counter only, so no 4-consumer-warp shapes.
const STORE: u32 = V_CMASK | V_POLL_SLEEP0 | V_REL_STORE;
cycles_kernel!(
    var_sleep0_store_rt,
    super::roundtrip::<VarCounter<1, 1, STORE>, { super::PLAIN }>
);
cycles_kernel!(
    var_sleep0_store_c1_warp,
    super::ring::<4, VarCounter<1, 1, STORE>, 1, false>
);
cycles_kernel!(
    var_sleep0_store_c1_thread,
    super::ring::<4, VarCounter<32, 32, STORE>, 1, true>
);
