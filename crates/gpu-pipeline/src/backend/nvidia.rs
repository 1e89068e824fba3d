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

use super::{PipelineBackend, Signal, check_arrive_counts};
use crate::arch::nvptx as ptx;

/// One mbarrier object: 8 bytes of shared memory, 8-byte aligned, opaque.
///
/// Its content is meaningful only to the `mbarrier.*` instructions; reading it with a plain load
/// returns nothing useful (on the H200 it reads 0).
#[repr(C, align(8))]
pub struct Mbarrier(UnsafeCell<u64>);

/// An L2 cache-eviction policy for a tensor load ([`MbarrierRef::tensor_load_hinted`]): the
/// opaque 64-bit value `createpolicy` makes (PTX ISA 7.4, sm_80; PTX ISA, "createpolicy"), over
/// the whole access (fraction 1.0). A register computation that touches no memory: the compiler
/// may compute it once for a loop that loads with it (the attention variant's PTX has one
/// `createpolicy` per kernel though its producer makes the policy per block).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct L2Policy(u64);

impl L2Policy {
    /// Lines read under this policy are evicted first (`.L2::evict_first`): for data read once,
    /// so that it does not push out what other CTAs read again.
    #[inline(always)]
    pub fn evict_first() -> Self {
        Self(ptx::createpolicy_evict_first())
    }

    /// Lines read under this policy are evicted last (`.L2::evict_last`): for data other CTAs
    /// read again soon (a GEMM's operand shared by a row of tiles, attention's K and V).
    #[inline(always)]
    pub fn evict_last() -> Self {
        Self(ptx::createpolicy_evict_last())
    }
}

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
///
/// # Lifetime and scope
///
/// `'a` is the borrow the handle was made under (the pipeline or backend it came from): a handle
/// cannot outlive the value whose `new` contract keeps its barrier valid. `S` is the scope the
/// [`Signal`] waits acquire at: [`Cta`], or [`Cluster`] for the handles of an
/// `NvidiaMbarBackend<_, _, Cluster>`.
#[derive(Debug, PartialEq, Eq)]
pub struct MbarrierRef<'a, S: MbarScope = Cta> {
    addr: u32,
    /// Checked builds: the shared address of this barrier's 32-bit arrival shadow, or
    /// [`NO_SHADOW`] for handles made from a bare address.
    #[cfg(feature = "checked")]
    shadow: u32,
    borrow: PhantomData<(&'a Mbarrier, S)>,
}

impl<S: MbarScope> Clone for MbarrierRef<'_, S> {
    #[inline(always)]
    fn clone(&self) -> Self {
        *self
    }
}

impl<S: MbarScope> Copy for MbarrierRef<'_, S> {}

/// The largest transaction count one `expect_tx` may announce: `2^20 - 1` bytes (PTX ISA,
/// "Contents of the mbarrier object": the tx-count lies in `-(2^20 - 1) ..= 2^20 - 1`; CCCL's
/// `barrier_expect_tx` states the same precondition).
pub const MAX_TX_BYTES: u32 = (1 << 20) - 1;

/// The shadow address of a handle whose arrivals are not counted.
#[cfg(feature = "checked")]
const NO_SHADOW: u32 = u32::MAX;

impl<'a> MbarrierRef<'a> {
    /// A handle from a `.shared::cta` address.
    ///
    /// # Safety
    ///
    /// `shared_addr` is the shared-window address of an [`Mbarrier`] of this CTA that is
    /// initialised before any method of the handle is used, and stays so for `'a`.
    #[inline(always)]
    #[must_use]
    pub const unsafe fn from_shared_addr(shared_addr: u32) -> Self {
        Self {
            addr: shared_addr,
            #[cfg(feature = "checked")]
            shadow: NO_SHADOW,
            borrow: PhantomData,
        }
    }

    /// A handle from a generic pointer to an [`Mbarrier`] in shared memory (`cvta.to.shared`).
    ///
    /// # Safety
    ///
    /// As [`from_shared_addr`](Self::from_shared_addr): `ptr` points to an `Mbarrier` in this
    /// CTA's shared memory, initialised before the handle's methods are used and valid for `'a`.
    #[inline(always)]
    #[must_use]
    pub unsafe fn from_ptr(ptr: *mut Mbarrier) -> Self {
        // SAFETY: the caller guarantees a shared-memory pointer.
        unsafe { Self::from_shared_addr(ptx::cvta_to_shared(ptr.cast())) }
    }

    /// The same barrier, with [`Signal`] waits that acquire at cluster scope (for barriers that
    /// peer CTAs arrive on remotely).
    #[inline(always)]
    #[must_use]
    pub const fn cluster_scope(self) -> MbarrierRef<'a, Cluster> {
        MbarrierRef {
            addr: self.addr,
            #[cfg(feature = "checked")]
            shadow: self.shadow,
            borrow: PhantomData,
        }
    }
}

impl<'a, S: MbarScope> MbarrierRef<'a, S> {
    /// A handle at `addr` with the arrival shadow at `shadow` (checked builds).
    #[inline(always)]
    fn at(addr: u32, shadow: u32) -> Self {
        #[cfg(not(feature = "checked"))]
        let _ = shadow;
        Self {
            addr,
            #[cfg(feature = "checked")]
            shadow,
            borrow: PhantomData,
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

    /// Checked builds: the arrivals this barrier's shadow counted since `init` (modulo 2^32); 0
    /// for a handle without a shadow (`from_shared_addr`, `from_ptr`: nothing counts there), which
    /// read shared address 0xFFFF_FFFF before (found by a review, 2026-12-05).
    #[cfg(feature = "checked")]
    #[inline(always)]
    fn counted_arrivals(self) -> u32 {
        if self.shadow == NO_SHADOW {
            return 0;
        }
        // SAFETY: a shadow address comes from the backend, inside its checked storage.
        unsafe { ptx::ld_relaxed_cta_shared_u32(self.shadow) }
    }

    /// The barrier's 32-bit `.shared::cta` address, for instructions this crate does not wrap.
    #[inline(always)]
    #[must_use]
    pub const fn shared_addr(self) -> u32 {
        self.addr
    }

    /// Initialises the barrier: phase 0, `count` expected arrivals per phase
    /// (`mbarrier.init.shared::cta.b64`, PTX ISA 7.0, sm_80; PTX ISA "mbarrier.init").
    ///
    /// # Safety
    ///
    /// `1 <= count <= 2^20 - 1`; one thread initialises, while no other thread uses the barrier,
    /// and a block barrier (a cluster barrier after [`fence_mbarrier_init`] when peer CTAs arrive
    /// on it) separates the initialisation from every other use.
    #[inline(always)]
    pub unsafe fn init(self, count: u32) {
        // SAFETY: guaranteed by the caller.
        unsafe { ptx::mbarrier_init(self.addr, count) }
    }

    /// One arrival by the calling thread (release, CTA scope).
    #[inline(always)]
    pub fn arrive(self) {
        // SAFETY: the handle's constructor guarantees an initialised mbarrier of this CTA.
        unsafe { ptx::mbarrier_arrive(self.addr) };
        self.count_arrivals(1);
    }

    /// One arrival by the calling thread, as [`arrive`](Self::arrive), that issues only once
    /// `after` is computed: the arrival's guard reads it (`(after | nonzero) != 0`, true since
    /// `nonzero` is not zero), so neither LLVM nor ptxas moves the arrival above the code that
    /// computes `after`.
    ///
    /// For schedules, not for correctness: ptxas keeps a `wgmma.wait_group` below an arrive
    /// that precedes it in program order, and otherwise may hoist the wait to the top of its
    /// basic block. A consumer that releases a stage with an arrive ordered after part of its
    /// softmax keeps its wait for an earlier `wgmma` after that part too (gpu-attention's
    /// `late_k_release` variant). Pass any value computed late enough (the bits of a result) and
    /// a value the compiler cannot prove nonzero at the call (a kernel parameter that no branch
    /// compares, such as an output's address: a dominating comparison lets ptxas fold the guard,
    /// and the order is lost, never the arrival).
    ///
    /// PTX ISA, "mbarrier.arrive" and "Instruction Statements: Predicated Execution"
    /// (`arch::nvptx::mbarrier_arrive_after`).
    #[inline(always)]
    pub fn arrive_after(self, after: u32, nonzero: core::num::NonZeroU64) {
        // SAFETY: the handle's constructor guarantees an initialised mbarrier of this CTA; with
        // `nonzero` not zero the guard holds and the arrival is made.
        unsafe { ptx::mbarrier_arrive_after(self.addr, after, nonzero.get()) };
        self.count_arrivals(1);
    }

    /// `COUNT` arrivals at once by the calling thread (release, CTA scope). sm_90.
    ///
    /// For code that counts a warp's arrivals in lanes while one lane arrives: with an arrive
    /// count of 32 per warp, `if lane == 0 { bar.arrive_count::<32>() }` completes the warp's
    /// share. (The library's own way is to count one arrival per arriving thread: an elected
    /// lane's plain [`arrive`](Self::arrive), with arrive count 1 per warp.) `COUNT` of 0 or above
    /// 2^20 - 1 does not compile (`mbarrier.arrive` takes a count in `1..=2^20 - 1`, PTX ISA
    /// "mbarrier.arrive"); a count known only at run time goes through
    /// [`arrive_count_unchecked`](Self::arrive_count_unchecked).
    ///
    /// # Safety
    ///
    /// The barrier's current phase has at least `COUNT` arrivals pending: the arrivals made in
    /// it so far, plus `COUNT`, do not exceed its expected count. Taking the pending arrival count
    /// below zero leaves it outside the range the PTX ISA defines ("Contents of the mbarrier
    /// object": 0 to 2^20 - 1); on the H200 the kernel faults (the outside review of bf6166c:
    /// `arrive_count::<3>()` on a barrier expecting 2). The library cannot see the pending count,
    /// so the caller keeps it (for example: every arrival on this barrier is `COUNT` at once, and
    /// `COUNT` divides the expected count).
    #[inline(always)]
    pub unsafe fn arrive_count<const COUNT: u32>(self) {
        let () = ArriveCountInRange::<COUNT>::CHECK;
        // SAFETY: the handle's constructor guarantees an initialised mbarrier of this CTA; the
        // count is in range (checked at compile time just above) and pending (the caller).
        unsafe { ptx::mbarrier_arrive_count(self.addr, COUNT) };
        self.count_arrivals(COUNT);
    }

    /// `count` arrivals at once by the calling thread (release, CTA scope). sm_90.
    ///
    /// # Safety
    ///
    /// `1 <= count <= 2^20 - 1` ([`MAX_MBARRIER_ARRIVALS`](crate::backend::MAX_MBARRIER_ARRIVALS)):
    /// `mbarrier.arrive` with a count outside that range is undefined (PTX ISA, "mbarrier.arrive");
    /// and, as for [`arrive_count`](Self::arrive_count), at least `count` arrivals are pending in
    /// the current phase.
    #[inline(always)]
    pub unsafe fn arrive_count_unchecked(self, count: u32) {
        // SAFETY: the handle's constructor guarantees an initialised mbarrier of this CTA; the
        // caller guarantees the count's range and that it is pending.
        unsafe { ptx::mbarrier_arrive_count(self.addr, count) };
        self.count_arrivals(count);
    }

    /// Expects `tx_bytes` more bytes of asynchronous copies in the current phase, then arrives
    /// once (release, CTA scope): the producer side of a TMA stage with arrive count 1. sm_90.
    ///
    /// The safe form is a pipeline's `produce_tma` (a producer arrive count of 1, so the
    /// library knows the phase's announced bytes are this call's alone).
    ///
    /// # Panics
    ///
    /// If `tx_bytes > MAX_TX_BYTES` (2^20 - 1). A constant `tx_bytes` costs no check.
    ///
    /// # Safety
    ///
    /// This arrival is one the current phase still expects (at least one arrival pending: one
    /// past the expected count, made while the phase waits for its bytes, takes the pending count
    /// below zero), and the bytes announced in the phase, this call's included, stay within
    /// `MAX_TX_BYTES` (PTX ISA, "Contents of the mbarrier object": the tx-count lies in
    /// `-(2^20 - 1) ..= 2^20 - 1`). Two calls of 600,000 bytes in one phase, each in range, fault
    /// the kernel on the H200 (the outside review of bf6166c).
    #[inline(always)]
    pub unsafe fn arrive_expect_tx(self, tx_bytes: u32) {
        assert!(
            tx_bytes <= MAX_TX_BYTES,
            "gpu-pipeline: arrive_expect_tx of more than 2^20 - 1 bytes"
        );
        // SAFETY: the handle's constructor guarantees an initialised mbarrier of this CTA; the
        // arrival is pending and the phase's transaction count stays in range (the caller; this
        // call's own bytes are asserted above).
        unsafe { ptx::mbarrier_arrive_expect_tx(self.addr, tx_bytes) };
        self.count_arrivals(1);
    }

    /// Expects `tx_bytes` more bytes of asynchronous copies in the current phase, without
    /// arriving. The phase cannot complete until those bytes have landed. sm_90.
    ///
    /// # Safety
    ///
    /// The phase's pending transaction count stays within `0 ..= MAX_TX_BYTES` (PTX ISA,
    /// "Contents of the mbarrier object"), and the phase has not completed yet: announced after
    /// its completion, the bytes land in the next phase.
    #[inline(always)]
    pub unsafe fn expect_tx(self, tx_bytes: u32) {
        // SAFETY: the handle's constructor guarantees an initialised mbarrier of this CTA; the
        // caller guarantees the transaction count's range.
        unsafe { ptx::mbarrier_expect_tx(self.addr, tx_bytes) }
    }

    /// Marks `tx_bytes` of expected transactions as complete, as a finished copy would. sm_90.
    ///
    /// # Safety
    ///
    /// The bytes have landed (or nobody reads them): completing transactions that are still in
    /// flight completes the phase early, and the waiters then read a slot the copy is still
    /// writing. The pending transaction count stays within its range (as for
    /// [`expect_tx`](Self::expect_tx)).
    #[inline(always)]
    pub unsafe fn complete_tx(self, tx_bytes: u32) {
        // SAFETY: the handle's constructor guarantees an initialised mbarrier of this CTA; the
        // caller guarantees the bytes and the range.
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

    /// As [`try_wait_parity_cluster`](Self::try_wait_parity_cluster), letting the hardware
    /// suspend the thread for up to `ticks` ns while the phase is incomplete. sm_90.
    #[inline(always)]
    #[must_use]
    pub fn try_wait_parity_cluster_ticks(self, parity: u32, ticks: u32) -> bool {
        // SAFETY: the handle's constructor guarantees an initialised mbarrier of this CTA.
        unsafe { ptx::mbarrier_try_wait_parity_cluster_ticks(self.addr, parity & 1, ticks) }
    }

    /// Blocks until the phase of parity `parity & 1` has completed, suspending for up to
    /// `ticks` ns per try (acquire, cluster scope). sm_90.
    #[inline(always)]
    pub fn wait_parity_cluster_ticks(self, parity: u32, ticks: u32) {
        while !self.try_wait_parity_cluster_ticks(parity, ticks) {}
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
        // SAFETY: forwarded from this function's contract.
        unsafe { self.arrive_remote_with(cta_rank, ptx::mbarrier_arrive_remote) }
    }

    /// One arrival with `arrive` (a remote-arrive leaf) on the barrier at this offset in CTA
    /// `cta_rank`, and in checked builds on the peer's shadow.
    ///
    /// # Safety
    ///
    /// As [`arrive_remote`](Self::arrive_remote).
    #[inline(always)]
    unsafe fn arrive_remote_with(self, cta_rank: u32, arrive: unsafe fn(u32)) {
        // SAFETY: the caller guarantees the peer exists, is initialised and is alive; its
        // storage has the same layout, so the shadow maps to the peer's shadow.
        unsafe {
            let remote = ptx::mapa_shared_cluster(self.addr, cta_rank);
            arrive(remote);
            // The peer's shadow, after the arrival (see `count_arrivals`); the peer outlives
            // both, by the caller's contract.
            #[cfg(feature = "checked")]
            if self.shadow != NO_SHADOW {
                let remote_shadow = ptx::mapa_shared_cluster(self.shadow, cta_rank);
                ptx::red_relaxed_cluster_shared_cluster_add_u32(remote_shadow, 1);
            }
        }
    }

    /// One arrival on the barrier at the same offset in CTA `cta_rank`, as
    /// [`arrive_remote`](Self::arrive_remote) but with release at *CTA* scope
    /// (`mbarrier.arrive.release.cta.shared::cluster`): the arrival orders none of this thread's
    /// memory accesses for the peer. sm_90.
    ///
    /// For a consumer that frees a slot the peer's producer refills (a multicast ring): what must
    /// precede the refill is that this CTA's *reads* of the slot are complete, which the caller
    /// establishes before arriving (for `wgmma`, `wgmma.wait_group` covering the reads); there is
    /// no data to publish. Its cost is the arrival alone, where the cluster-scope release of
    /// `arrive_remote` is a GPU-wide memory barrier per call on sm_90 (`MEMBAR.ALL.GPU`).
    /// The peer may wait at CTA scope. If this thread wrote data the peer reads, use
    /// `arrive_remote` and cluster-scope waits instead.
    ///
    /// # Safety
    ///
    /// As [`arrive_remote`](Self::arrive_remote).
    #[inline(always)]
    pub unsafe fn arrive_remote_cta(self, cta_rank: u32) {
        // SAFETY: forwarded from this function's contract.
        unsafe { self.arrive_remote_with(cta_rank, ptx::mbarrier_arrive_remote_cta) }
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

    /// Copies the box of tensor map `map` at `coords` (innermost first, in elements; `D` of
    /// them, 1 to 5) from global to shared memory at `dst` with the tensor-copy engine (TMA); when
    /// it has landed, the copy performs complete-tx of the box's bytes on this barrier
    /// (`cp.async.bulk.tensor`, PTX ISA 8.0, sm_90). Announce the bytes in the current phase
    /// first ([`arrive_expect_tx`](Self::arrive_expect_tx)). `D` outside 1..=5 does not compile.
    ///
    /// # Safety
    ///
    /// `map` points to a valid [`TensorMap`] of `D` dimensions in global memory; `dst` is a
    /// generic pointer into this CTA's shared memory, aligned as the map's swizzle needs (1024
    /// bytes for the 128-byte swizzle; 128 otherwise), with room for the box; nobody else accesses
    /// it until a wait observes the phase completion; the coordinates may lie partly outside the
    /// tensor (TMA fills those elements with zeros and still counts the whole box's bytes).
    #[inline(always)]
    pub unsafe fn tensor_load<const D: usize>(
        self,
        dst: *mut u8,
        map: *const TensorMap,
        coords: [i32; D],
    ) {
        // SAFETY: the caller guarantees the map, the destination and the barrier.
        unsafe {
            ptx::cp_async_bulk_tensor_load::<D>(
                ptx::cvta_to_shared(dst),
                map.cast(),
                tensor_coords(coords),
                self.addr,
            )
        }
    }

    /// As [`tensor_load`](Self::tensor_load), with an L2 cache-eviction `policy` on the box's
    /// global reads (`.L2::cache_hint`, PTX ISA 8.0, sm_90): [`L2Policy::evict_first`] for data
    /// read once (a streamed operand), [`L2Policy::evict_last`] for data other CTAs read again
    /// soon. A hint: the box copied is the same.
    ///
    /// # Safety
    ///
    /// As [`tensor_load`](Self::tensor_load).
    #[inline(always)]
    pub unsafe fn tensor_load_hinted<const D: usize>(
        self,
        dst: *mut u8,
        map: *const TensorMap,
        coords: [i32; D],
        policy: L2Policy,
    ) {
        // SAFETY: the caller guarantees the map, the destination and the barrier; the policy is
        // `createpolicy`'s.
        unsafe {
            ptx::cp_async_bulk_tensor_load_hint::<D>(
                ptx::cvta_to_shared(dst),
                map.cast(),
                tensor_coords(coords),
                self.addr,
                policy.0,
            )
        }
    }

    /// As [`tensor_load`](Self::tensor_load), and the box lands at `dst`'s offset in every CTA of
    /// the cluster in `cta_mask` (bit `i`: rank `i`), each receiving the complete-tx on its barrier
    /// at this barrier's offset (`.multicast::cluster`, PTX ISA 8.0, sm_90).
    ///
    /// # Safety
    ///
    /// As [`tensor_load`](Self::tensor_load) for every CTA of `cta_mask`: each is alive, lays out
    /// its shared memory the same way, and its barrier's phase expects the box's bytes.
    #[inline(always)]
    pub unsafe fn tensor_load_multicast<const D: usize>(
        self,
        dst: *mut u8,
        map: *const TensorMap,
        coords: [i32; D],
        cta_mask: u16,
    ) {
        // SAFETY: the caller guarantees the map, the destinations and the barriers.
        unsafe {
            ptx::cp_async_bulk_tensor_load_multicast::<D>(
                ptx::cvta_to_shared(dst),
                map.cast(),
                tensor_coords(coords),
                self.addr,
                cta_mask,
            )
        }
    }

    /// Arrives on this barrier when all `tcgen05` operations issued by the calling thread so far
    /// have completed (`tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64`,
    /// PTX ISA 8.6, sm_100a; PTX ISA "tcgen05.commit").
    ///
    /// # Safety
    ///
    /// The barrier is initialised and alive until the arrival happens.
    #[cfg(target_feature = "sm_100a")]
    #[inline(always)]
    pub unsafe fn tcgen05_commit(self) {
        // SAFETY: guaranteed by the caller.
        unsafe { ptx::tcgen05_commit_cta_group1(self.addr) }
    }

    /// As [`tcgen05_commit`](Self::tcgen05_commit) for a CTA pair (`cta_group::2`), arriving on
    /// the barrier at this offset in every CTA of `cta_mask` (`.multicast::cluster`).
    ///
    /// # Safety
    ///
    /// The barriers of all CTAs in `cta_mask` are initialised and alive until the arrivals happen.
    #[cfg(target_feature = "sm_100a")]
    #[inline(always)]
    pub unsafe fn tcgen05_commit_multicast(self, cta_mask: u32) {
        // SAFETY: guaranteed by the caller.
        unsafe { ptx::tcgen05_commit_cta_group2_multicast(self.addr, cta_mask) }
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

/// Compile-time range check of [`MbarrierRef::arrive_count`]'s count.
struct ArriveCountInRange<const COUNT: u32>;

impl<const COUNT: u32> ArriveCountInRange<COUNT> {
    const CHECK: () = assert!(
        COUNT >= 1 && COUNT <= super::MAX_MBARRIER_ARRIVALS,
        "gpu-pipeline: MbarrierRef::arrive_count::<COUNT> needs 1 <= COUNT <= 2^20 - 1 (mbarrier.arrive takes a count in that range)"
    );
}

// SAFETY: completion: `completed(n)` tests the parity of phase `n - 1` (`try_wait.parity` with
// `(n + 1) & 1`), true once that phase completed; under the protocol's bound (the barrier is in
// phase `n - 1` or `n`) one bit tells the two apart (module essay). `wait_completed` retries
// until it holds. Arrival unit: `arrive` is `mbarrier.arrive` without a count. Ordering: arrive
// `.release.cta`; waits `.acquire.cta`, or `.acquire.cluster` for `S = Cluster`. No reset: only
// `mbarrier.init` (the backend's `init`) resets a barrier.
unsafe impl<S: MbarScope> Signal for MbarrierRef<'_, S> {
    #[inline(always)]
    fn arrive(self) {
        MbarrierRef::arrive(self);
    }

    #[inline(always)]
    fn completed(self, completions: u32) -> bool {
        let parity = completions.wrapping_add(1);
        if S::CLUSTER {
            self.try_wait_parity_cluster(parity)
        } else {
            self.try_wait_parity(parity)
        }
    }

    #[inline(always)]
    fn wait_completed(self, completions: u32, ticks: Option<u32>) {
        let parity = completions.wrapping_add(1);
        match (S::CLUSTER, ticks) {
            (true, Some(t)) => self.wait_parity_cluster_ticks(parity, t),
            (true, None) => self.wait_parity_cluster(parity),
            (false, Some(t)) => self.wait_parity_ticks(parity, t),
            (false, None) => self.wait_parity(parity),
        }
    }

    #[cfg(feature = "checked")]
    #[inline(always)]
    fn arrivals(self) -> u32 {
        self.counted_arrivals()
    }
}

/// Makes this thread's earlier mbarrier initialisations visible to the other CTAs of the cluster
/// (`fence.mbarrier_init.release.cluster`, PTX ISA 8.0, sm_90; PTX ISA "membar/fence"). Issue it
/// after [`MbarrierRef::init`] when peer CTAs arrive remotely, before the cluster barrier.
#[inline(always)]
pub fn fence_mbarrier_init() {
    ptx::fence_mbarrier_init_release_cluster();
}

/// A whole cluster barrier: this thread arrives (`barrier.cluster.arrive.release`), then waits for
/// every thread of the cluster to arrive (`barrier.cluster.wait.acquire`), so that what any thread
/// of the cluster wrote before it (shared memory of any CTA, barrier initialisations after
/// [`fence_mbarrier_init`]) is visible to every thread after it. The non-`.aligned` forms: the
/// call may sit on a path that is divergent within a warp. PTX ISA 8.0 (`.release`, `.acquire`;
/// `barrier.cluster` itself: 7.8), sm_90; PTX ISA, "Parallel Synchronization and Communication
/// Instructions: barrier.cluster".
///
/// # Safety
///
/// Every non-exited thread of every CTA of the cluster makes the same number of these calls (a
/// thread that skips one leaves the others waiting forever; one that exits early is not waited
/// for, so a peer CTA may not rely on it being alive after the barrier).
#[inline(always)]
pub unsafe fn cluster_sync() {
    // SAFETY: each thread arrives once, then waits on the phase it arrived on (the contract).
    unsafe {
        ptx::barrier_cluster_arrive_release();
        ptx::barrier_cluster_wait_acquire();
    }
}

/// This CTA's rank in its cluster (`%cluster_ctarank`, PTX ISA 7.8, sm_90): the `cta_rank` that
/// [`MbarrierRef::arrive_remote`] takes.
#[inline(always)]
#[must_use]
pub fn cluster_cta_rank() -> u32 {
    ptx::cluster_ctarank()
}

/// Elects one lane of the calling warp (`elect.sync _|p, 0xffffffff`, PTX ISA 8.0, sm_90; PTX
/// ISA "elect.sync"): `true` in exactly one lane.
///
/// # Safety
///
/// All 32 lanes of the warp execute this call together, converged: with the full member mask,
/// `elect.sync` from a divergent or partial warp is undefined.
#[inline(always)]
#[must_use]
pub unsafe fn elect_one() -> bool {
    // SAFETY: forwarded from this function's contract.
    unsafe { ptx::elect_one_sync() }
}

/// Copies `bytes` bytes from this CTA's shared memory to global memory with the bulk-copy engine
/// (`cp.async.bulk.global.shared::cta.bulk_group`, PTX ISA 8.0, sm_90), tracked by the calling
/// thread's bulk async-group: the store counterpart of
/// [`MbarrierRef::bulk_copy_from_global`], with the same pointer arguments. Close the group with
/// [`bulk_commit_group`], then wait with [`bulk_wait_group_read`] before rewriting `src`, or
/// [`bulk_wait_group`] before others read `dst`. If the slot was written by generic-proxy stores,
/// issue [`fence_proxy_async`] first.
///
/// # Safety
///
/// `src` is a generic pointer into this CTA's shared memory and `dst` a global pointer, both
/// 16-byte aligned; `bytes` is a non-zero multiple of 16; both ranges are valid; `src` is not
/// written until a read-wait covers the copy, and `dst` is not accessed until a full wait does.
#[inline(always)]
pub unsafe fn bulk_copy_to_global(dst: *mut u8, src: *const u8, bytes: u32) {
    // SAFETY: the caller guarantees the ranges; cvta converts the shared pointer.
    unsafe {
        let src_shared = ptx::cvta_to_shared(src.cast_mut());
        ptx::cp_async_bulk_shared_to_global(dst, src_shared, bytes);
    }
}

/// A CUDA tensor map (`CUtensorMap`): 128 opaque bytes, 64-byte aligned, made on the host with
/// `cuTensorMapEncodeTiled` (shape, strides, box, element type, swizzle) and copied to global
/// memory; kernels take it by pointer (passed by value, a 64-byte-aligned kernel parameter crashes
/// rustc's nvptx64 calling convention, and a local copy cannot be used by the TMA).
#[repr(C, align(64))]
pub struct TensorMap {
    opaque: [u64; 16],
}

/// Compile-time check of a tensor copy's dimension count.
struct TensorDims<const D: usize>;

impl<const D: usize> TensorDims<D> {
    const CHECK: () = assert!(
        D >= 1 && D <= 5,
        "gpu-pipeline: a tensor copy has 1 to 5 dimensions (cp.*.bulk.tensor.1d ..= .5d)"
    );
}

/// The coordinates of a `D`-dimensional tensor copy, padded to the five the leaves take; `D`
/// outside 1..=5 is a compile error. For the tensor copies here and the toolkit's (`gpu-hopper`'s
/// reductions and prefetches), so that both check and pad alike.
#[doc(hidden)]
#[inline(always)]
pub fn tensor_coords<const D: usize>(coords: [i32; D]) -> [i32; 5] {
    let () = TensorDims::<D>::CHECK;
    let mut all = [0; 5];
    all[..D].copy_from_slice(&coords);
    all
}

/// Copies a box from this CTA's shared memory at `src` to tensor map `map`'s global tensor at
/// `coords` (innermost first; `D` of them, 1 to 5) with the tensor-copy engine, tracked by the
/// calling thread's bulk async-group (`cp.async.bulk.tensor.Dd.global.shared::cta.bulk_group`,
/// PTX ISA 8.0, sm_90). Close the group with [`bulk_commit_group`]; wait with
/// [`bulk_wait_group_read`] before rewriting `src`, [`bulk_wait_group`] before others read the
/// tensor. Elements of the box past the tensor's end are not written; the box may not start
/// before the tensor, though: on the H200 a store with a negative coordinate stops the kernel
/// with `CUDA_ERROR_ILLEGAL_INSTRUCTION` (measured by the toolkit's device test,
/// `tests/hopper-kernels/src/tma.rs`; tensor loads take negative coordinates). If `src` was
/// written by ordinary stores, issue [`fence_proxy_async`] first.
///
/// # Safety
///
/// Every coordinate is `>= 0`; `map` points to a valid [`TensorMap`] of `D` dimensions in global
/// memory; `src` is a generic pointer into this CTA's shared memory, aligned as the map's swizzle
/// needs, holding the box, and not written until a read-wait covers the copy.
#[inline(always)]
pub unsafe fn tensor_store<const D: usize>(
    map: *const TensorMap,
    coords: [i32; D],
    src: *const u8,
) {
    // SAFETY: the caller guarantees the map and the source.
    unsafe {
        ptx::cp_async_bulk_tensor_store::<D>(
            map.cast(),
            tensor_coords(coords),
            ptx::cvta_to_shared(src.cast_mut()),
        )
    }
}

/// Prefetches a tensor map into the cache ahead of its first use (`prefetch.tensormap`, PTX ISA
/// 8.0, sm_90).
///
/// # Safety
///
/// `map` points to a tensor map in global memory.
#[inline(always)]
pub unsafe fn prefetch_tensor_map(map: *const TensorMap) {
    // SAFETY: guaranteed by the caller.
    unsafe { ptx::prefetch_tensormap(map.cast()) }
}

/// Closes the calling thread's current bulk async-group (`cp.async.bulk.commit_group`, PTX ISA
/// 8.0, sm_90).
#[inline(always)]
pub fn bulk_commit_group() {
    ptx::cp_async_bulk_commit_group();
}

/// Waits until at most `PENDING` of the calling thread's committed bulk groups have not finished
/// *reading* their source (`cp.async.bulk.wait_group.read`): their shared memory may be reused.
#[inline(always)]
pub fn bulk_wait_group_read<const PENDING: u32>() {
    ptx::cp_async_bulk_wait_group_read::<PENDING>();
}

/// Waits until at most `PENDING` of the calling thread's committed bulk groups are incomplete
/// (`cp.async.bulk.wait_group`): their writes are performed.
#[inline(always)]
pub fn bulk_wait_group<const PENDING: u32>() {
    ptx::cp_async_bulk_wait_group::<PENDING>();
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
/// signals from one lane (a pipeline's `produce_tma`) has `PRODUCER_ARRIVALS = 1`.
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

/// Bytes of one [`Mbarrier`]: the stride of every barrier array in this crate.
pub const MBARRIER_BYTES: u32 = core::mem::size_of::<Mbarrier>() as u32;

// SAFETY: layout: `new` places full[] at the storage base and empty[] right after it,
// 2 * STAGES mbarriers, then (checked builds) STAGES 8-byte elements of 32-bit shadows, full
// then empty: the layout of `barrier_elems`. Signals: `full`/`empty` return the handle of the
// stage's barrier, initialised by `init` with P and C expected arrivals, each a `Signal` (see
// its impl above). Constants: checked in `new`. Shadows: `init` zeroes them.
unsafe impl<const P: u32, const C: u32, S: MbarScope> PipelineBackend
    for NvidiaMbarBackend<P, C, S>
{
    type Storage = Mbarrier;
    type Signal<'a> = MbarrierRef<'a, S>;

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
            // SAFETY: the caller is the only thread touching the storage now; the stage is in
            // range and the counts are (checked in `new`).
            unsafe {
                self.full(stage).init(P);
                self.empty(stage).init(C);
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
        fence_mbarrier_init();
    }

    #[inline(always)]
    unsafe fn full(&self, stage: u32) -> MbarrierRef<'_, S> {
        MbarrierRef::at(
            self.full + stage * MBARRIER_BYTES,
            self.shadow_full_at(stage),
        )
    }

    #[inline(always)]
    unsafe fn empty(&self, stage: u32) -> MbarrierRef<'_, S> {
        MbarrierRef::at(
            self.empty + stage * MBARRIER_BYTES,
            self.shadow_empty_at(stage),
        )
    }
}

impl<const P: u32, const C: u32, S: MbarScope> NvidiaMbarBackend<P, C, S> {
    /// Checked builds: the shadow address of `full[stage]` (0 otherwise, unused).
    #[inline(always)]
    fn shadow_full_at(&self, stage: u32) -> u32 {
        #[cfg(feature = "checked")]
        return self.shadow_full + stage * 4;
        #[cfg(not(feature = "checked"))]
        return stage;
    }

    /// Checked builds: the shadow address of `empty[stage]` (0 otherwise, unused).
    #[inline(always)]
    fn shadow_empty_at(&self, stage: u32) -> u32 {
        #[cfg(feature = "checked")]
        return self.shadow_empty + stage * 4;
        #[cfg(not(feature = "checked"))]
        return stage;
    }
}
