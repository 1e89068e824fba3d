//! The NVIDIA backend: one hardware `mbarrier` per signal.
//!
//! Storage: `2 * STAGES` mbarrier objects (8 bytes each) in shared memory, `full` then `empty`.
//! `init` gives every full barrier `PRODUCER_ARRIVALS` expected arrivals and every empty barrier
//! `CONSUMER_ARRIVALS`. A wait for lap `l` is `mbarrier.try_wait.parity` on parity `l & 1`:
//! a fresh barrier is in phase 0, so the producer's first wait (lap 1, parity 1) asks for the
//! completion of the phase *before* phase 0, which counts as complete, and passes at once.
//!
//! Waits use `mbarrier.try_wait.parity` with `.acquire.cta` (`.acquire.cluster` for
//! [`Cluster`] scope), arrivals `.release.cta`: PTX ISA 8.0 and sm_90, which the crate requires on
//! nvptx64 (a build without `-Ctarget-cpu=sm_90 -Ctarget-feature=+ptx80` does not compile).
//!
//! # Why this is correct
//!
//! An mbarrier phase completes when its pending arrival count reaches zero (and its pending
//! transaction count, used only by TMA producers, too); the barrier then moves to the next phase
//! with the count reloaded. The protocol never lets a signal run two phases ahead of a waiter:
//! the full barrier of slot `s` cannot complete phase `p + 1` before the consumer released lap
//! `p` of slot `s` (the producer waits for that), so when the consumer on lap `p` tests parity
//! `p & 1` the barrier's current phase is `p` or `p + 1`, and one bit tells them apart. The same
//! holds for empty barriers and producers. Hence parity waits are exact.

use core::cell::UnsafeCell;
use core::marker::PhantomData;

use super::{PipelineBackend, check_arrive_counts};
use crate::arch::nvptx as ptx;

/// One mbarrier object: 8 bytes of shared memory, 8-byte aligned, opaque.
///
/// Its content is meaningful only to the `mbarrier.*` instructions; reading it with a plain load
/// returns nothing useful (on the H200 it reads 0).
#[repr(C, align(8))]
pub struct Mbarrier(UnsafeCell<u64>);

/// A handle to one mbarrier of the calling thread's CTA: its 32-bit `.shared::cta` address.
///
/// Returned by [`ProducerStage::barrier`](crate::ProducerStage::barrier),
/// [`ConsumerStage::barrier`](crate::ConsumerStage::barrier) and the pipeline's
/// `full_barrier`/`empty_barrier`. It gives access to the TMA extras (`expect_tx`,
/// bulk copies completing on the barrier) and to cluster-remote arrivals.
///
/// # Memory ordering
///
/// Arrivals are *release* and successful waits *acquire*, at CTA scope, except
/// [`arrive_remote`](Self::arrive_remote) (release at cluster scope) and
/// [`wait_parity_cluster`](Self::wait_parity_cluster) (acquire at cluster scope).
/// Bytes written by [`bulk_copy_from_global`](Self::bulk_copy_from_global) are visible to a
/// thread whose wait observed the phase that the copy's complete-tx helped finish.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MbarrierRef {
    addr: u32,
    /// Checked builds: the shared address of this barrier's 32-bit arrival shadow, or
    /// [`NO_SHADOW`] for handles made from a bare address.
    #[cfg(feature = "checked")]
    shadow: u32,
}

/// The shadow address of a handle whose arrivals are not counted.
#[cfg(feature = "checked")]
const NO_SHADOW: u32 = u32::MAX;

impl MbarrierRef {
    /// A handle from a `.shared::cta` address.
    ///
    /// # Safety
    ///
    /// `shared_addr` is the shared-window address of an [`Mbarrier`] of this CTA that is
    /// initialised before any method of the handle is used, and stays so while it is used.
    #[inline(always)]
    #[must_use]
    pub const unsafe fn from_shared_addr(shared_addr: u32) -> Self {
        Self {
            addr: shared_addr,
            #[cfg(feature = "checked")]
            shadow: NO_SHADOW,
        }
    }

    /// Checked builds: counts `n` arrivals in this barrier's shadow, *after* the arrival: the
    /// arrival must not wait for the shadow's atomic (as a release, it would). So a waiter whose
    /// wait just returned may not see the latest increments yet, never more than were made: the
    /// count check at completion only flags a count above the exact one (see `checked`).
    #[inline(always)]
    fn count_arrivals(self, n: u32) {
        #[cfg(feature = "checked")]
        if self.shadow != NO_SHADOW {
            // SAFETY: a shadow address comes from the backend, inside its checked storage.
            unsafe { ptx::red_relaxed_cta_shared_add_u32(self.shadow, n) };
        }
        #[cfg(not(feature = "checked"))]
        let _ = n;
    }

    /// Checked builds: the arrivals this barrier's shadow counted since `init` (modulo 2^32).
    #[cfg(feature = "checked")]
    #[inline(always)]
    fn counted_arrivals(self) -> u32 {
        // SAFETY: a shadow address comes from the backend, inside its checked storage.
        unsafe { ptx::ld_relaxed_cta_shared_u32(self.shadow) }
    }

    /// The barrier's 32-bit `.shared::cta` address, for instructions this crate does not wrap.
    #[inline(always)]
    #[must_use]
    pub const fn shared_addr(self) -> u32 {
        self.addr
    }

    /// One arrival by the calling thread (release, CTA scope).
    #[inline(always)]
    pub fn arrive(self) {
        // SAFETY: the handle's constructor guarantees an initialised mbarrier of this CTA.
        unsafe { ptx::mbarrier_arrive(self.addr) };
        self.count_arrivals(1);
    }

    /// `count` arrivals at once by the calling thread (release, CTA scope). sm_90.
    ///
    /// This is how one lane arrives for a whole warp: with an arrive count of 32 per warp,
    /// `if lane == 0 { bar.arrive_count(32) }` completes the warp's share.
    #[inline(always)]
    pub fn arrive_count(self, count: u32) {
        // SAFETY: the handle's constructor guarantees an initialised mbarrier of this CTA.
        unsafe { ptx::mbarrier_arrive_count(self.addr, count) };
        self.count_arrivals(count);
    }

    /// Expects `tx_bytes` more bytes of asynchronous copies in the current phase, then arrives
    /// once (release, CTA scope). The producer side of a TMA stage with arrive count 1. sm_90.
    #[inline(always)]
    pub fn arrive_expect_tx(self, tx_bytes: u32) {
        // SAFETY: the handle's constructor guarantees an initialised mbarrier of this CTA.
        unsafe { ptx::mbarrier_arrive_expect_tx(self.addr, tx_bytes) };
        self.count_arrivals(1);
    }

    /// Expects `tx_bytes` more bytes of asynchronous copies in the current phase, without
    /// arriving. The phase cannot complete until those bytes have landed. sm_90.
    #[inline(always)]
    pub fn expect_tx(self, tx_bytes: u32) {
        // SAFETY: the handle's constructor guarantees an initialised mbarrier of this CTA.
        unsafe { ptx::mbarrier_expect_tx(self.addr, tx_bytes) }
    }

    /// Marks `tx_bytes` of expected transactions as complete, as a finished copy would. sm_90.
    #[inline(always)]
    pub fn complete_tx(self, tx_bytes: u32) {
        // SAFETY: the handle's constructor guarantees an initialised mbarrier of this CTA.
        unsafe { ptx::mbarrier_complete_tx(self.addr, tx_bytes) }
    }

    /// Whether the phase of parity `parity & 1` has completed (acquire, CTA scope if so).
    /// May wait a short hardware-defined time before answering false. sm_90.
    #[inline(always)]
    #[must_use]
    pub fn try_wait_parity(self, parity: u32) -> bool {
        // SAFETY: the handle's constructor guarantees an initialised mbarrier of this CTA.
        unsafe { ptx::mbarrier_try_wait_parity(self.addr, parity & 1) }
    }

    /// As [`try_wait_parity`](Self::try_wait_parity), letting the hardware suspend the thread
    /// for up to `ticks` ns while the phase is incomplete. sm_90.
    #[inline(always)]
    #[must_use]
    pub fn try_wait_parity_ticks(self, parity: u32, ticks: u32) -> bool {
        // SAFETY: the handle's constructor guarantees an initialised mbarrier of this CTA.
        unsafe { ptx::mbarrier_try_wait_parity_ticks(self.addr, parity & 1, ticks) }
    }

    /// Whether the phase of parity `parity & 1` has completed (acquire, CTA scope if so), without
    /// waiting: `mbarrier.test_wait`, which answers at once where
    /// [`try_wait_parity`](Self::try_wait_parity) may wait a short time first. The library's
    /// waits do not use it.
    #[inline(always)]
    #[must_use]
    pub fn test_wait_parity(self, parity: u32) -> bool {
        // SAFETY: the handle's constructor guarantees an initialised mbarrier of this CTA.
        unsafe { ptx::mbarrier_test_wait_parity(self.addr, parity & 1) }
    }

    /// Blocks until the phase of parity `parity & 1` has completed (acquire, CTA scope).
    ///
    /// One `try_wait` (which may suspend the thread until the phase completes, for a
    /// hardware-defined time), then, only if it failed, a retry loop that LLVM places out of the
    /// way (`cold_path`). Written as a bare `while !try_wait {}` loop, where LLVM unrolls the
    /// caller's loop so that several waits share one loop body, ptxas puts a `YIELD` in front of
    /// every `try_wait`, on the path that does not wait too: the elected-lane ring with 1 to 4
    /// stages then took about 101 cycles per stage against 86 to 89 for the same loop not unrolled
    /// (tests/results, the wait-loop table). With the first try apart, the path that does not wait
    /// is the `try_wait` and a branch in every loop shape; the `YIELD` stays in the retry loop.
    #[inline(always)]
    pub fn wait_parity(self, parity: u32) {
        if !self.try_wait_parity(parity) {
            core::hint::cold_path();
            while !self.try_wait_parity(parity) {}
        }
    }

    /// Blocks until the phase of parity `parity & 1` has completed, suspending for up to
    /// `ticks` ns per try (acquire, CTA scope).
    #[inline(always)]
    pub fn wait_parity_ticks(self, parity: u32, ticks: u32) {
        while !self.try_wait_parity_ticks(parity, ticks) {}
    }

    /// Whether the phase of parity `parity & 1` has completed, acquire at *cluster* scope:
    /// use it when peer CTAs arrive with [`arrive_remote`](Self::arrive_remote). sm_90.
    #[inline(always)]
    #[must_use]
    pub fn try_wait_parity_cluster(self, parity: u32) -> bool {
        // SAFETY: the handle's constructor guarantees an initialised mbarrier of this CTA.
        unsafe { ptx::mbarrier_try_wait_parity_cluster(self.addr, parity & 1) }
    }

    /// Blocks until the phase of parity `parity & 1` has completed (acquire, cluster scope). sm_90.
    #[inline(always)]
    pub fn wait_parity_cluster(self, parity: u32) {
        while !self.try_wait_parity_cluster(parity) {}
    }

    /// One arrival on the barrier at the same shared-memory offset in CTA `cta_rank` of this
    /// cluster (`mapa` + `mbarrier.arrive.release.cluster.shared::cluster`). sm_90.
    ///
    /// # Safety
    ///
    /// The kernel was launched with clusters, `cta_rank` is a CTA of this cluster, the barrier
    /// there is initialised (its CTA issued `fence.mbarrier_init` and the cluster synchronised
    /// after init), and that CTA has not exited: a CTA must not exit while peers may still arrive
    /// on its barriers.
    #[inline(always)]
    pub unsafe fn arrive_remote(self, cta_rank: u32) {
        // SAFETY: the caller guarantees the peer exists, is initialised and is alive; its
        // storage has the same layout, so the shadow maps to the peer's shadow.
        unsafe {
            let remote = ptx::mapa_shared_cluster(self.addr, cta_rank);
            ptx::mbarrier_arrive_remote(remote);
            // The peer's shadow, after the arrival (see `count_arrivals`); the peer outlives
            // both, by the caller's contract.
            #[cfg(feature = "checked")]
            if self.shadow != NO_SHADOW {
                let remote_shadow = ptx::mapa_shared_cluster(self.shadow, cta_rank);
                ptx::red_relaxed_cluster_shared_cluster_add_u32(remote_shadow, 1);
            }
        }
    }

    /// Copies `bytes` bytes from global memory to shared memory with the bulk-copy engine; when
    /// they have landed, the copy performs complete-tx of `bytes` on this barrier.
    ///
    /// The caller must have announced the bytes in the current phase with
    /// [`expect_tx`](Self::expect_tx) or [`arrive_expect_tx`](Self::arrive_expect_tx).
    /// If the slot was last written by generic-proxy stores of this CTA, issue
    /// [`fence_proxy_async`] first. sm_90.
    ///
    /// # Safety
    ///
    /// `dst` is a generic pointer into this CTA's shared memory and `src` a global pointer, both
    /// 16-byte aligned; `bytes` is a non-zero multiple of 16 below 2^20; both ranges are valid and
    /// nobody else accesses `dst..dst + bytes` until a wait observes the phase completion.
    #[inline(always)]
    pub unsafe fn bulk_copy_from_global(self, dst: *mut u8, src: *const u8, bytes: u32) {
        // SAFETY: the caller guarantees the ranges; cvta converts the shared pointer.
        unsafe {
            let dst_shared = ptx::cvta_to_shared(dst);
            ptx::cp_async_bulk_global_to_shared(dst_shared, src, bytes, self.addr);
        }
    }

    /// Invalidates the barrier (`mbarrier.inval`) so that its shared memory may be reused for
    /// other data.
    ///
    /// # Safety
    ///
    /// No thread uses the barrier afterwards, and no arrival or transaction on it is in flight.
    #[inline(always)]
    pub unsafe fn inval(self) {
        // SAFETY: guaranteed by the caller.
        unsafe { ptx::mbarrier_inval(self.addr) }
    }
}

/// Orders this thread's earlier generic-proxy (ordinary) shared-memory accesses before later
/// async-proxy accesses (bulk copies, TMA, wgmma operands), and the reverse
/// (`fence.proxy.async.shared::cta`, PTX ISA 8.0, sm_90).
///
/// Needed when a slot written by ordinary stores is then read by a bulk copy out, or a slot
/// read by ordinary loads is refilled by TMA after a consumer's release only through generic
/// synchronisation; its absence is a classic source of silent corruption.
#[inline(always)]
pub fn fence_proxy_async() {
    ptx::fence_proxy_async_shared_cta();
}

/// The NVIDIA backend: `2 * STAGES` mbarriers in shared memory.
///
/// `PRODUCER_ARRIVALS` and `CONSUMER_ARRIVALS` are the threads that arrive per phase on a
/// full and on an empty barrier (1..=2^20 - 1, checked at compile time). A TMA producer that
/// signals with [`MbarrierRef::arrive_expect_tx`] from one lane has `PRODUCER_ARRIVALS = 1`.
///
/// # Memory ordering
///
/// Arrivals are `mbarrier.arrive.release.cta`, waits `mbarrier.try_wait.parity.acquire.cta`:
/// what a thread wrote before arriving is visible to a thread of the same CTA after its wait
/// for that phase returns.
///
/// # Scope
///
/// `S` is the scope of the waits: [`Cta`] (the default) when only threads of this CTA arrive,
/// [`Cluster`] when peer CTAs of a cluster arrive on these barriers with
/// [`MbarrierRef::arrive_remote`] (or write the slots through distributed shared memory): waits
/// are then `try_wait.parity.acquire.cluster`, so what the peers wrote or read before their
/// `.release.cluster` arrival is ordered before what the waiter does next.
#[derive(Clone, Copy, Debug)]
pub struct NvidiaMbarBackend<
    const PRODUCER_ARRIVALS: u32,
    const CONSUMER_ARRIVALS: u32,
    S: MbarScope = Cta,
> {
    full: u32,
    empty: u32,
    /// Checked builds: the shadows of the full barriers, then of the empty barriers (32 bits each).
    #[cfg(feature = "checked")]
    shadow_full: u32,
    #[cfg(feature = "checked")]
    shadow_empty: u32,
    scope: PhantomData<S>,
}

mod sealed {
    pub trait Sealed {}
}

/// The memory scope of an [`NvidiaMbarBackend`]'s waits: [`Cta`] or [`Cluster`]. Sealed.
pub trait MbarScope: sealed::Sealed + Copy + core::fmt::Debug + 'static {
    /// Whether waits acquire at cluster scope.
    const CLUSTER: bool;
}

/// Waits acquire at CTA scope: all arrivals come from threads of this CTA.
#[derive(Clone, Copy, Debug)]
pub enum Cta {}

/// Waits acquire at cluster scope: peer CTAs arrive remotely on these barriers.
#[derive(Clone, Copy, Debug)]
pub enum Cluster {}

impl sealed::Sealed for Cta {}
impl sealed::Sealed for Cluster {}
impl MbarScope for Cta {
    const CLUSTER: bool = false;
}
impl MbarScope for Cluster {
    const CLUSTER: bool = true;
}

/// Bytes between two mbarriers in the storage array.
const MBARRIER_BYTES: u32 = core::mem::size_of::<Mbarrier>() as u32;

impl<const P: u32, const C: u32, S: MbarScope> NvidiaMbarBackend<P, C, S> {
    #[inline(always)]
    fn full_at(&self, stage: u32) -> MbarrierRef {
        MbarrierRef {
            addr: self.full + stage * MBARRIER_BYTES,
            #[cfg(feature = "checked")]
            shadow: self.shadow_full + stage * 4,
        }
    }

    #[inline(always)]
    fn empty_at(&self, stage: u32) -> MbarrierRef {
        MbarrierRef {
            addr: self.empty + stage * MBARRIER_BYTES,
            #[cfg(feature = "checked")]
            shadow: self.shadow_empty + stage * 4,
        }
    }

    /// Blocks until the phase of parity `lap & 1` of `bar` completed, at this backend's scope.
    /// At cluster scope the ticks hint is not used.
    #[inline(always)]
    fn wait(bar: MbarrierRef, lap: u32, ticks: Option<u32>) {
        if S::CLUSTER {
            bar.wait_parity_cluster(lap);
        } else {
            match ticks {
                Some(t) => bar.wait_parity_ticks(lap, t),
                None => bar.wait_parity(lap),
            }
        }
    }

    /// Whether the phase of parity `lap & 1` of `bar` completed, at this backend's scope.
    #[inline(always)]
    fn try_wait(bar: MbarrierRef, lap: u32) -> bool {
        if S::CLUSTER {
            bar.try_wait_parity_cluster(lap)
        } else {
            bar.try_wait_parity(lap)
        }
    }
}

// SAFETY: layout: `new` places full[] at the storage base and empty[] right after it,
// 2 * STAGES mbarriers in all. Completion: waits test the parity of the waiter's lap (see the
// module essay for why one bit suffices under the protocol); try_wait returns true only once
// the phase completed. Arrival unit: every arrive is `mbarrier.arrive` without a count, one per
// calling thread. Ordering: arrive is `.release.cta`, wait `.acquire.cta` (with `S = Cluster`,
// waits are `.acquire.cluster`). No reset: only `init` runs `mbarrier.init`. Constants: checked
// in `new`.
unsafe impl<const P: u32, const C: u32, S: MbarScope> PipelineBackend
    for NvidiaMbarBackend<P, C, S>
{
    type Storage = Mbarrier;
    type Handle = MbarrierRef;

    const PRODUCER_ARRIVALS: u32 = P;
    const CONSUMER_ARRIVALS: u32 = C;
    const MAX_ARRIVALS: u32 = super::MAX_MBARRIER_ARRIVALS;
    const SHADOW_ELEMS_PER_STAGE: usize = 1;

    #[inline(always)]
    unsafe fn new<const STAGES: usize>(storage: *mut Mbarrier) -> Self {
        check_arrive_counts::<Self>();
        // SAFETY: the caller guarantees `storage` points into shared memory.
        let full = unsafe { ptx::cvta_to_shared(storage.cast()) };
        Self {
            full,
            empty: full + STAGES as u32 * MBARRIER_BYTES,
            #[cfg(feature = "checked")]
            shadow_full: full + 2 * STAGES as u32 * MBARRIER_BYTES,
            #[cfg(feature = "checked")]
            shadow_empty: full + 2 * STAGES as u32 * MBARRIER_BYTES + STAGES as u32 * 4,
            scope: PhantomData,
        }
    }

    #[inline(always)]
    unsafe fn init<const STAGES: usize>(&self) {
        for stage in 0..STAGES as u32 {
            // SAFETY: the caller is the only thread touching the storage now; counts are in range.
            unsafe {
                ptx::mbarrier_init(self.full_at(stage).addr, P);
                ptx::mbarrier_init(self.empty_at(stage).addr, C);
            }
        }
        // Checked builds: zero the 2 * STAGES shadows (STAGES 8-byte elements).
        #[cfg(feature = "checked")]
        for i in 0..STAGES as u32 {
            // SAFETY: the caller is the only thread touching the storage now.
            unsafe { ptx::st_shared_u64(self.shadow_full + i * 8, 0) };
        }
        // Make the initialisation visible to peer CTAs' remote arrivals as well; within a CTA
        // the block barrier the caller must issue next suffices, and this fence costs once.
        ptx::fence_mbarrier_init_release_cluster();
    }

    #[inline(always)]
    unsafe fn wait_full(&self, stage: u32, lap: u32, ticks: Option<u32>) {
        Self::wait(self.full_at(stage), lap, ticks);
    }

    #[inline(always)]
    unsafe fn wait_empty(&self, stage: u32, lap: u32, ticks: Option<u32>) {
        Self::wait(self.empty_at(stage), lap, ticks);
    }

    #[inline(always)]
    unsafe fn try_full(&self, stage: u32, lap: u32) -> bool {
        Self::try_wait(self.full_at(stage), lap)
    }

    #[inline(always)]
    unsafe fn try_empty(&self, stage: u32, lap: u32) -> bool {
        Self::try_wait(self.empty_at(stage), lap)
    }

    #[inline(always)]
    unsafe fn arrive_full(&self, stage: u32) {
        self.full_at(stage).arrive();
    }

    #[inline(always)]
    unsafe fn arrive_empty(&self, stage: u32) {
        self.empty_at(stage).arrive();
    }

    #[inline(always)]
    unsafe fn full_handle(&self, stage: u32) -> MbarrierRef {
        self.full_at(stage)
    }

    #[inline(always)]
    unsafe fn empty_handle(&self, stage: u32) -> MbarrierRef {
        self.empty_at(stage)
    }

    #[cfg(feature = "checked")]
    #[inline(always)]
    unsafe fn arrivals_full(&self, stage: u32) -> u32 {
        self.full_at(stage).counted_arrivals()
    }

    #[cfg(feature = "checked")]
    #[inline(always)]
    unsafe fn arrivals_empty(&self, stage: u32) -> u32 {
        self.empty_at(stage).counted_arrivals()
    }
}
