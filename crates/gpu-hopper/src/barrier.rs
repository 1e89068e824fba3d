//! Named barriers (`barrier.sync` / `barrier.arrive` with an id) and the registry that makes
//! two pieces of a kernel using the same hardware id a compile error.
//!
//! A CTA has 16 named barriers, ids 0..=15; id 0 is the one `__syncthreads` (`bar.sync 0`)
//! uses. Two pieces of one kernel (say an epilogue and a split-K reduction) that pick the same
//! id with different thread counts, or whose phases interleave, hang or release the wrong
//! threads — a hang that shows up only under some timings, and among the most reported in
//! CUTLASS and FlashAttention. Here each piece declares the barriers it uses as a constant
//! list, and the kernel registers all its pieces' lists in one [`BarrierRegistry`]: a repeated
//! id stops the build with a message that names both users.
//!
//! ```
//! use gpu_hopper::barrier::{BarrierRegistry, NamedBarrier};
//!
//! /// The epilogue: one barrier per consumer warpgroup.
//! const EPILOGUE: &[NamedBarrier] = &[
//!     NamedBarrier::new("epilogue, warpgroup 1", 1, 128),
//!     NamedBarrier::new("epilogue, warpgroup 2", 2, 128),
//! ];
//! /// The split-K reduction: both consumer warpgroups.
//! const SPLIT_K: &[NamedBarrier] = &[NamedBarrier::new("split-K consumers", 3, 256)];
//!
//! const BARRIERS: BarrierRegistry = BarrierRegistry::new(&[EPILOGUE, SPLIT_K]);
//! assert_eq!(BARRIERS.used(), 0b1110);
//! assert_eq!(BARRIERS.first_free(), 4);
//! ```
//!
//! The same with the split-K barrier on id 2 does not compile:
//!
//! ```compile_fail,E0080
//! use gpu_hopper::barrier::{BarrierRegistry, NamedBarrier};
//!
//! const EPILOGUE: &[NamedBarrier] = &[
//!     NamedBarrier::new("epilogue, warpgroup 1", 1, 128),
//!     NamedBarrier::new("epilogue, warpgroup 2", 2, 128),
//! ];
//! const SPLIT_K: &[NamedBarrier] = &[NamedBarrier::new("split-K consumers", 2, 256)];
//! // error: "gpu-hopper: named barrier 2 is used by both `epilogue, warpgroup 2` and
//! // `split-K consumers`"
//! const BARRIERS: BarrierRegistry = BarrierRegistry::new(&[EPILOGUE, SPLIT_K]);
//! ```
//!
//! A kernel syncs through the registry's handles, [`Barriers`] (from [`BarrierRegistry::init`]
//! by one thread, then a block barrier, and [`BarrierRegistry::handles`] in the others):
//! `barriers.sync(SPLIT_K[0])`. Without the `checked` feature they are zero-sized and `sync` is
//! the hardware's `barrier.sync`. With it, each named barrier is a counted software barrier in the
//! registry's [`BarrierShadow`] (128 bytes of shared memory) whose waits are bounded: a barrier
//! that some of its threads never reach (the thread count too large, a warp that skips it) ends
//! the kernel with a gpu-pipeline `HangRecord` naming the barrier, the threads that came and the
//! line that waited, instead of hanging.
//!
//! Nor does a thread count that is not a whole number of warps, or id 0:
//!
//! ```compile_fail,E0080
//! const B: gpu_hopper::barrier::NamedBarrier = gpu_hopper::barrier::NamedBarrier::new("half a warp", 1, 16);
//! ```
//!
//! ```compile_fail,E0080
//! const B: gpu_hopper::barrier::NamedBarrier = gpu_hopper::barrier::NamedBarrier::new("syncthreads' own", 0, 128);
//! ```

use core::marker::PhantomData;

use gpu_pipeline::Diagnostics;

#[cfg(not(feature = "checked"))]
use crate::arch::nvptx as ptx;

/// The hardware named barriers of a CTA: ids 0..=15.
pub const NAMED_BARRIERS: u32 = 16;

/// One named barrier: a hardware id (1..=15; 0 is `__syncthreads`'), the threads that take part
/// in each phase (a multiple of the warp size), and the name of its user, for the registry's
/// messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NamedBarrier {
    id: u32,
    threads: u32,
    name: &'static str,
}

impl NamedBarrier {
    /// Named barrier `id` for `threads` threads, used by `name`.
    ///
    /// # Panics
    ///
    /// (At compile time in a constant.) If `id` is not in 1..=15 or `threads` is not a non-zero
    /// multiple of 32 of at most 1024.
    #[must_use]
    pub const fn new(name: &'static str, id: u32, threads: u32) -> Self {
        assert!(
            id >= 1 && id < NAMED_BARRIERS,
            "gpu-hopper: a named barrier's id is 1..=15 (0 is __syncthreads' barrier)"
        );
        assert!(
            threads > 0 && threads % 32 == 0 && threads <= 1024,
            "gpu-hopper: a named barrier's thread count is a non-zero multiple of the warp size (32), at most 1024"
        );
        Self { id, threads, name }
    }

    /// The hardware id.
    #[must_use]
    pub const fn id(self) -> u32 {
        self.id
    }

    /// The threads per phase.
    #[must_use]
    pub const fn threads(self) -> u32 {
        self.threads
    }

    /// The user's name.
    #[must_use]
    pub const fn name(self) -> &'static str {
        self.name
    }

    /// The same barrier on id `id`, which the caller has checked is in 1..=15 (the named turns'
    /// ids, computed from their first).
    #[inline(always)]
    pub(crate) const fn with_id(self, id: u32) -> Self {
        Self { id, ..self }
    }
}

/// The named barriers of one kernel, from the lists its pieces declare; ids used twice are a
/// compile error where the registry is a constant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BarrierRegistry {
    used: u16,
    diagnostics: Diagnostics,
}

/// A message for a collision, written into a buffer (const code cannot format).
struct Message {
    bytes: [u8; 256],
    len: usize,
}

impl Message {
    const fn push(mut self, s: &str) -> Self {
        let s = s.as_bytes();
        let mut i = 0;
        while i < s.len() && self.len < self.bytes.len() {
            self.bytes[self.len] = s[i];
            self.len += 1;
            i += 1;
        }
        self
    }

    const fn push_id(self, id: u32) -> Self {
        let digits = [b'0' + (id / 10) as u8, b'0' + (id % 10) as u8];
        let skip = if id < 10 { 1 } else { 0 };
        match core::str::from_utf8(digits.split_at(skip).1) {
            Ok(s) => self.push(s),
            Err(_) => self,
        }
    }

    const fn panic(&self) -> ! {
        match core::str::from_utf8(self.bytes.split_at(self.len).0) {
            Ok(text) => panic!("{}", text),
            Err(_) => panic!("gpu-hopper: two named barriers share an id"),
        }
    }
}

impl BarrierRegistry {
    /// The registry of `pieces`, each one piece's barriers.
    ///
    /// # Panics
    ///
    /// (At compile time in a constant.) If two barriers have the same id, naming both.
    #[must_use]
    pub const fn new(pieces: &[&[NamedBarrier]]) -> Self {
        let mut owners: [Option<NamedBarrier>; NAMED_BARRIERS as usize] =
            [None; NAMED_BARRIERS as usize];
        let mut used = 0u16;
        let mut p = 0;
        while p < pieces.len() {
            let mut b = 0;
            while b < pieces[p].len() {
                let barrier = pieces[p][b];
                if let Some(first) = owners[barrier.id as usize] {
                    Message {
                        bytes: [0; 256],
                        len: 0,
                    }
                    .push("gpu-hopper: named barrier ")
                    .push_id(barrier.id)
                    .push(" is used by both `")
                    .push(first.name)
                    .push("` and `")
                    .push(barrier.name)
                    .push("`")
                    .panic();
                }
                owners[barrier.id as usize] = Some(barrier);
                used |= 1 << barrier.id;
                b += 1;
            }
            p += 1;
        }
        Self {
            used,
            diagnostics: Diagnostics::DEFAULT,
        }
    }

    /// The same registry with `diagnostics`: the label that names it in checked builds' hang
    /// records and the budget of each [`Barriers::sync`] (ignored without the `checked` feature).
    #[must_use]
    pub const fn with_diagnostics(mut self, diagnostics: Diagnostics) -> Self {
        self.diagnostics = diagnostics;
        self
    }

    /// The registry's label and wait budget.
    #[must_use]
    pub const fn diagnostics(self) -> Diagnostics {
        self.diagnostics
    }

    /// Prepares the shared memory of the kernel's barriers at `shadow` and returns their handles.
    /// One thread calls it, then a block barrier before any [`Barriers::sync`] (the other threads
    /// take [`handles`](Self::handles)). Without the `checked` feature [`BarrierShadow`] is
    /// zero-sized and this does nothing.
    ///
    /// # Safety
    ///
    /// `shadow` is a valid, 8-byte-aligned [`BarrierShadow`] in this CTA's shared memory that
    /// nobody else uses until the block barrier after this call, and no thread of the CTA uses it
    /// for anything else while the handles live (`'a`).
    #[must_use]
    pub unsafe fn init<'a>(self, shadow: *mut BarrierShadow) -> Barriers<'a> {
        // SAFETY: the caller's contract.
        let barriers = unsafe { self.handles(shadow) };
        #[cfg(feature = "checked")]
        for id in 0..NAMED_BARRIERS {
            // SAFETY: the shadow's words, exclusive before the block barrier (the contract).
            unsafe { shadow::store(barriers.shadow, id, 0) };
        }
        barriers
    }

    /// The handles of the kernel's barriers over the shadow at `shadow`, which one thread
    /// prepared with [`init`](Self::init) before a block barrier.
    ///
    /// # Safety
    ///
    /// As [`init`](Self::init), and after it and the block barrier.
    #[must_use]
    pub unsafe fn handles<'a>(self, shadow: *mut BarrierShadow) -> Barriers<'a> {
        #[cfg(not(feature = "checked"))]
        let _ = shadow;
        Barriers {
            #[cfg(feature = "checked")]
            // SAFETY: the caller's contract: shared memory of this CTA.
            shadow: unsafe { shadow::address(shadow) },
            #[cfg(feature = "checked")]
            registry: self,
            borrow: PhantomData,
        }
    }

    /// The ids in use, as a bit mask (bit `i`: id `i`).
    #[must_use]
    pub const fn used(self) -> u16 {
        self.used
    }

    /// The lowest id in 1..=15 no piece uses, or 16 if none is left.
    #[must_use]
    pub const fn first_free(self) -> u32 {
        let mut id = 1;
        while id < NAMED_BARRIERS && self.used & (1 << id) != 0 {
            id += 1;
        }
        id
    }
}

/// The shared memory of a kernel's named barriers in checked builds: one 64-bit arrival count per
/// id (128 bytes). Zero-sized without the `checked` feature; size a kernel's shared-memory layout
/// with `size_of::<BarrierShadow>()`, and keep the device's and the host's layouts from the same
/// build (a host that compiles the layout without the feature sees 0).
#[repr(C, align(8))]
pub struct BarrierShadow {
    #[cfg(feature = "checked")]
    _words: [u64; NAMED_BARRIERS as usize],
}

/// The named barriers of a kernel, from [`BarrierRegistry::init`] or
/// [`BarrierRegistry::handles`]: every `sync` and `arrive` goes through it, so that checked
/// builds can count and bound them.
///
/// Without the `checked` feature it is zero-sized and [`sync`](Self::sync) is `barrier.sync`,
/// [`arrive`](Self::arrive) `barrier.arrive` (the hardware named barrier; the same instructions as
/// a kernel that called the leaves itself). With it, a named barrier is a software barrier on the
/// registry's [`BarrierShadow`]: each thread adds one arrival (a release) to the id's count and a
/// syncing thread waits (an acquire) until the count reaches the end of its phase, at most the
/// registry's budget; past it, the kernel ends with a record that says which barrier, how many of
/// its threads came, and where it waited (a gpu-pipeline `HangRecord`, `Call::NamedBarrierSync`).
/// Phases are counted from the total arrivals: while a phase is incomplete every arrival counts
/// toward it, as on the hardware barrier, so a correct program sees the same phases; a thread
/// count that does not match the threads that take part is a mistake, and only its hang is
/// diagnosed.
#[derive(Clone, Copy, Debug)]
pub struct Barriers<'a> {
    #[cfg(feature = "checked")]
    shadow: shadow::Address,
    #[cfg(feature = "checked")]
    registry: BarrierRegistry,
    borrow: PhantomData<&'a BarrierShadow>,
}

// SAFETY: a description of shared memory used by all threads of a CTA (on the host, the tests'
// model of it), whose words are only accessed atomically; like gpu-pipeline's backends.
unsafe impl Send for Barriers<'_> {}
// SAFETY: as above.
unsafe impl Sync for Barriers<'_> {}

impl Barriers<'_> {
    /// Checked builds: the registry's label and budget, for other records of its barriers.
    #[cfg(feature = "checked")]
    #[inline(always)]
    pub(crate) fn diagnostics(self) -> Diagnostics {
        self.registry.diagnostics
    }

    /// Checked builds: the low 32 bits of the shadow's address, for records.
    #[cfg(feature = "checked")]
    #[inline(always)]
    pub(crate) fn storage(self) -> u32 {
        shadow::low_bits(self.shadow)
    }

    /// The calling warp arrives at `barrier` and waits until its [`threads`](NamedBarrier::threads)
    /// threads have arrived (`barrier.sync.aligned id, threads`; PTX ISA "bar, barrier"). Accesses
    /// before it are ordered before the participants' accesses after it.
    ///
    /// # Safety
    ///
    /// Every lane of the calling warp calls it, converged; exactly `threads` threads take part in
    /// each phase (syncing or arriving); `barrier` is one of the registry's (no other user of the
    /// id exists).
    #[track_caller]
    #[inline(always)]
    pub unsafe fn sync(self, barrier: NamedBarrier) {
        #[cfg(not(feature = "checked"))]
        // SAFETY: the caller's contract; the id and count were checked in `NamedBarrier::new`.
        unsafe {
            ptx::barrier_sync_aligned(barrier.id, barrier.threads)
        }
        #[cfg(feature = "checked")]
        // SAFETY: the shadow's word of the barrier's id (`init`'s contract).
        unsafe {
            self.checked_sync(barrier)
        }
    }

    /// The calling warp arrives at `barrier` without waiting (`barrier.arrive.aligned id,
    /// threads`): a producer's signal to threads that [`sync`](Self::sync).
    ///
    /// # Safety
    ///
    /// As [`sync`](Self::sync).
    #[inline(always)]
    pub unsafe fn arrive(self, barrier: NamedBarrier) {
        #[cfg(not(feature = "checked"))]
        // SAFETY: the caller's contract; the id and count were checked in `NamedBarrier::new`.
        unsafe {
            ptx::barrier_arrive_aligned(barrier.id, barrier.threads)
        }
        #[cfg(feature = "checked")]
        // SAFETY: the shadow's word of the barrier's id (`init`'s contract).
        let _ = unsafe { shadow::arrive(self.shadow, barrier.id) };
    }

    /// Checked builds: one arrival, then a bounded wait for the end of its phase.
    ///
    /// # Safety
    ///
    /// The shadow is initialised (`init`'s contract).
    #[cfg(feature = "checked")]
    #[track_caller]
    #[inline(always)]
    unsafe fn checked_sync(self, barrier: NamedBarrier) {
        use gpu_pipeline::checked::{BarrierWait, Call, Role};
        let threads = u64::from(barrier.threads);
        // SAFETY: forwarded.
        let ticket = unsafe { shadow::arrive(self.shadow, barrier.id) };
        let phase = ticket / threads;
        let end = (phase + 1) * threads;
        let address = self.shadow;
        let id = barrier.id;
        BarrierWait {
            call: Call::NamedBarrierSync,
            role: Role::Participant,
            diagnostics: self.registry.diagnostics,
            storage: shadow::low_bits(address),
            stages: NAMED_BARRIERS,
            stage: id,
            sub_stage: gpu_pipeline::checked::NO_SUB_STAGE,
            lap: phase as u32,
            per_phase: barrier.threads,
            expected: end as u32,
            held: 0,
        }
        .wait(
            // SAFETY: forwarded.
            move || unsafe { shadow::load(address, id) } >= end,
            // SAFETY: forwarded.
            move || Some(unsafe { shadow::load(address, id) } as u32),
        );
    }
}

/// Checked builds: the arrival counts, through the toolkit's leaves on the GPU and atomics on the
/// host (whose tests run the same barrier on threads).
#[cfg(feature = "checked")]
mod shadow {
    use super::BarrierShadow;

    /// Where the counts live: a `.shared::cta` address on the GPU, a pointer on the host.
    #[cfg(target_arch = "nvptx64")]
    pub(super) type Address = u32;
    #[cfg(not(target_arch = "nvptx64"))]
    pub(super) type Address = *mut u64;

    /// # Safety
    ///
    /// `shadow` points into this CTA's shared memory.
    #[inline(always)]
    pub(super) unsafe fn address(shadow: *mut BarrierShadow) -> Address {
        #[cfg(target_arch = "nvptx64")]
        // SAFETY: forwarded.
        return unsafe { gpu_pipeline::arch::nvptx::cvta_to_shared(shadow.cast()) };
        #[cfg(not(target_arch = "nvptx64"))]
        return shadow.cast();
    }

    /// The low 32 bits of the address, for records.
    #[inline(always)]
    pub(super) fn low_bits(address: Address) -> u32 {
        #[cfg(target_arch = "nvptx64")]
        return address;
        #[cfg(not(target_arch = "nvptx64"))]
        return address as usize as u32;
    }

    /// One arrival on `id`'s count (a release); the count before it.
    ///
    /// # Safety
    ///
    /// `address` is an initialised shadow; `id` < 16.
    #[inline(always)]
    pub(super) unsafe fn arrive(address: Address, id: u32) -> u64 {
        #[cfg(target_arch = "nvptx64")]
        // SAFETY: forwarded; word `id` of the 16.
        return unsafe { crate::arch::nvptx::atom_add_release_cta_shared_u64(address + 8 * id, 1) };
        #[cfg(not(target_arch = "nvptx64"))]
        // SAFETY: forwarded; word `id` of the 16, only accessed atomically.
        return unsafe {
            core::sync::atomic::AtomicU64::from_ptr(address.add(id as usize))
                .fetch_add(1, core::sync::atomic::Ordering::Release)
        };
    }

    /// `id`'s count (an acquire).
    ///
    /// # Safety
    ///
    /// As [`arrive`].
    #[inline(always)]
    pub(super) unsafe fn load(address: Address, id: u32) -> u64 {
        #[cfg(target_arch = "nvptx64")]
        // SAFETY: forwarded.
        return unsafe { crate::arch::nvptx::ld_acquire_cta_shared_u64(address + 8 * id) };
        #[cfg(not(target_arch = "nvptx64"))]
        // SAFETY: forwarded.
        return unsafe {
            core::sync::atomic::AtomicU64::from_ptr(address.add(id as usize))
                .load(core::sync::atomic::Ordering::Acquire)
        };
    }

    /// Sets `id`'s count (before the block barrier).
    ///
    /// # Safety
    ///
    /// As [`arrive`], exclusive.
    #[inline(always)]
    pub(super) unsafe fn store(address: Address, id: u32, value: u64) {
        #[cfg(target_arch = "nvptx64")]
        // SAFETY: forwarded.
        unsafe {
            gpu_pipeline::arch::nvptx::st_shared_u64(address + 8 * id, value)
        };
        #[cfg(not(target_arch = "nvptx64"))]
        // SAFETY: forwarded.
        unsafe {
            core::sync::atomic::AtomicU64::from_ptr(address.add(id as usize))
                .store(value, core::sync::atomic::Ordering::Relaxed)
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_registry_collects_the_ids() {
        const A: &[NamedBarrier] = &[NamedBarrier::new("a", 4, 64), NamedBarrier::new("b", 1, 32)];
        const B: &[NamedBarrier] = &[NamedBarrier::new("c", 15, 1024)];
        const R: BarrierRegistry = BarrierRegistry::new(&[A, B, &[]]);
        assert_eq!(R.used(), (1 << 4) | (1 << 1) | (1 << 15));
        assert_eq!(R.first_free(), 2);
        assert_eq!(BarrierRegistry::new(&[]).first_free(), 1);
    }

    #[test]
    fn a_collision_names_both_users() {
        let a = [NamedBarrier::new("epilogue", 12, 128)];
        let b = [
            NamedBarrier::new("mainloop", 3, 256),
            NamedBarrier::new("split-K", 12, 256),
        ];
        let message = std::panic::catch_unwind(|| BarrierRegistry::new(&[&a, &b]))
            .expect_err("a collision panics");
        let message = message
            .downcast_ref::<std::string::String>()
            .cloned()
            .unwrap_or_default();
        assert_eq!(
            message,
            "gpu-hopper: named barrier 12 is used by both `epilogue` and `split-K`"
        );
    }

    #[test]
    fn fifteen_ids_fill_the_registry() {
        let all: std::vec::Vec<NamedBarrier> =
            (1..16).map(|id| NamedBarrier::new("x", id, 32)).collect();
        assert_eq!(BarrierRegistry::new(&[&all]).first_free(), 16);
    }

    #[cfg(feature = "checked")]
    use crate::wait_budget::{CORRECT_US, HANG_US};

    /// Checked builds: `threads` host threads (a multiple of 32) sync on barriers of the
    /// registry (label 9, a budget of `budget_us`), thread `t` running `body(t, barriers)`; the
    /// panic messages (records) of those that stopped.
    #[cfg(feature = "checked")]
    fn checked_run(
        threads: u32,
        budget_us: u32,
        body: impl Fn(u32, Barriers<'_>) + Sync,
    ) -> std::vec::Vec<std::string::String> {
        let registry = BarrierRegistry::new(&[&[
            NamedBarrier::new("all", 1, 64),
            NamedBarrier::new("empty", 2, 64),
        ]])
        .with_diagnostics(Diagnostics {
            label: 9,
            wait_budget_us: budget_us,
        });
        let mut shadow = std::boxed::Box::new(core::mem::MaybeUninit::<BarrierShadow>::uninit());
        // SAFETY: a host "shared memory" shadow, alive for the run, used only by these barriers;
        // the threads start after `init` returns.
        let barriers = unsafe { registry.init(shadow.as_mut_ptr()) };
        let messages = std::sync::Mutex::new(std::vec::Vec::new());
        std::thread::scope(|scope| {
            for t in 0..threads {
                let (messages, body) = (&messages, &body);
                scope.spawn(move || {
                    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        body(t, barriers)
                    }));
                    if let Err(payload) = result {
                        let text = payload
                            .downcast_ref::<std::string::String>()
                            .cloned()
                            .unwrap_or_default();
                        messages.lock().unwrap().push(text);
                    }
                });
            }
        });
        messages.into_inner().unwrap()
    }

    /// Checked builds: 64 threads take 50 phases of a 64-thread barrier, each writing its slot
    /// before and reading every slot after: the software barrier orders them, and nothing is
    /// reported.
    #[cfg(feature = "checked")]
    #[test]
    fn a_checked_barrier_orders_its_threads() {
        use std::sync::atomic::{AtomicU32, Ordering::Relaxed};
        let slots: std::vec::Vec<AtomicU32> = (0..64).map(|_| AtomicU32::new(0)).collect();
        let all = NamedBarrier::new("all", 1, 64);
        let messages = checked_run(64, CORRECT_US, |t, barriers| {
            for phase in 1..=50u32 {
                slots[t as usize].store(phase, Relaxed);
                // SAFETY: host threads; all 64 take part in every phase.
                unsafe { barriers.sync(all) };
                assert!(slots.iter().all(|s| s.load(Relaxed) >= phase));
                // SAFETY: as above: nobody writes the next phase before everyone read.
                unsafe { barriers.sync(all) };
            }
        });
        assert!(messages.is_empty(), "{messages:?}");
    }

    /// Checked builds: a 64-thread barrier that only 32 threads reach (one warp's worth skips
    /// it) is reported by each waiter, with the count of those that came.
    #[cfg(feature = "checked")]
    #[test]
    fn a_barrier_that_half_its_threads_skip_is_reported() {
        let all = NamedBarrier::new("all", 1, 64);
        let messages = checked_run(64, HANG_US, |t, barriers| {
            if t < 32 {
                // SAFETY: host threads (the mistake: only 32 of the 64 take part).
                unsafe { barriers.sync(all) };
            }
        });
        assert_eq!(messages.len(), 32, "{messages:?}");
        let m = &messages[0];
        assert!(
            m.starts_with(
                "gpu-hopper named barrier HANG (wait budget spent): barrier 1 of registry 9"
            ),
            "{m}"
        );
        assert!(
            m.contains("in `Barriers::sync` at crates/gpu-hopper/src/barrier.rs"),
            "{m}"
        );
        assert!(m.contains("phase 0;"), "{m}");
        assert!(
            m.contains("32 of 64 threads reached this phase (this one included): 32 never came"),
            "{m}"
        );
    }

    /// Checked builds: arrivals count toward the phase of those that sync: 32 producers
    /// `arrive` on barrier 1 and `sync` on barrier 2, 32 consumers the other way round (the
    /// producer/consumer use of `barrier.arrive`), for 50 rounds, passing a value each way.
    #[cfg(feature = "checked")]
    #[test]
    fn arrivals_complete_a_phase_of_syncs() {
        use std::sync::atomic::{AtomicU32, Ordering::Relaxed};
        let (full, empty) = (
            NamedBarrier::new("full", 1, 64),
            NamedBarrier::new("empty", 2, 64),
        );
        let slot = AtomicU32::new(0);
        let messages = checked_run(64, CORRECT_US, |t, barriers| {
            for round in 1..=50u32 {
                if t < 32 {
                    if t == 0 {
                        slot.store(round, Relaxed);
                    }
                    // SAFETY: host threads; 32 arrive and 32 sync per phase of each barrier.
                    unsafe { barriers.arrive(full) };
                    // SAFETY: as above.
                    unsafe { barriers.sync(empty) };
                } else {
                    // SAFETY: as above.
                    unsafe { barriers.sync(full) };
                    assert_eq!(slot.load(Relaxed), round);
                    // SAFETY: as above.
                    unsafe { barriers.arrive(empty) };
                }
            }
        });
        assert!(messages.is_empty(), "{messages:?}");
    }
}
