//! NVIDIA leaf instructions: one PTX instruction form per function.
//!
//! Every inline-assembly block of the NVIDIA backend lives here. Above each function: the PTX
//! form, the minimum PTX ISA version and SM of *that exact form* (qualifiers included: a
//! `.shared::cta` or `.acquire.cta` can raise the minimum above the instruction's own), and the
//! section of the PTX ISA manual ("PTX ISA" below means NVIDIA's *Parallel Thread Execution ISA*;
//! the minimums were checked against the "PTX ISA Notes" and "Target ISA Notes" of version 9.1;
//! section titles are given because section numbers move between versions).
//!
//! The crate as a whole requires sm_90 and PTX ISA 8.0 on nvptx64 (a `compile_error!` in
//! `lib.rs`), so a leaf with a lower minimum is not usable on older targets through this crate;
//! the minimums say what each form needs, not what the crate supports.
//!
//! Addresses of `.shared::cta` objects are 32-bit offsets in the shared window (PTX ISA,
//! "State Spaces: Shared State Space"), obtained once with [`cvta_to_shared`].
//!
//! No barrier block here is `nomem`, `readonly` or `pure`: each one orders or is ordered with
//! memory operations around it, and the compiler must not move shared-memory accesses across it.
//! Only the pure register reads (`%laneid`, `%lanemask_lt`, `%cluster_ctarank`, and the
//! `%tid`/`%ntid`/`%ctaid` triples) are `nomem`; the clocks (`%clock64`, `%globaltimer`) are not,
//! so that they stay ordered with the code they time. The xtask's tidy tests hold this list
//! (`NOMEM_ALLOWED` in `xtask/src/tidy.rs`).
//!
//! On other targets every function exists with the same signature and panics with its
//! instruction's name, so that the host sees and type-checks the whole API (docs, clippy, host
//! tests): each leaf is written once inside `leaf! { .. }`, which adds that stub (`gpu_leaf!` in
//! `arch/mod.rs`). The LLVM intrinsics and `vprintf` are declared outside it, for nvptx64 only.

#[cfg(target_arch = "nvptx64")]
use core::arch::asm;

/// Panics on the host: the named instruction exists only on nvptx64.
#[cfg(not(target_arch = "nvptx64"))]
#[cold]
#[track_caller]
fn gpu_only(name: &str) -> ! {
    panic!("gpu-pipeline: `{name}` is an nvptx64 instruction and cannot run on this target")
}

/// [`gpu_leaf!`](super::gpu_leaf) for nvptx64: the device body on nvptx64, a panic with the
/// instruction's name through [`gpu_only`] elsewhere.
macro_rules! leaf {
    ($($leaf:tt)*) => {
        gpu_leaf! { "nvptx64"; $($leaf)* }
    };
}

/// The body of a `cp.async.bulk.tensor` leaf: a `match` on the dimension count `D` whose arm for
/// 1..=5 (5 for any other) is `cp.async.bulk.tensor.Dd{mid}{c0, ..}{tail}` with the first `D`
/// coordinates of `$c` as operands `c0..`, after the instruction's other operands `$op` (named as
/// `mid` and `tail` use them, each followed by a comma). PTX ISA 8.0, "cp.async.bulk.tensor".
/// (Off nvptx64 the leaves' bodies are not compiled, so nothing uses it there.)
#[cfg_attr(not(target_arch = "nvptx64"), allow(unused_macros))]
macro_rules! tensor_copy_by_dims {
    ($d:expr, $c:expr, $mid:literal, $tail:literal, $($op:tt)*) => {
        match $d {
            1 => asm!(
                concat!("cp.async.bulk.tensor.1d", $mid, "{c0}", $tail),
                $($op)* c0 = in(reg32) $c[0],
                options(nostack, preserves_flags),
            ),
            2 => asm!(
                concat!("cp.async.bulk.tensor.2d", $mid, "{c0}, {c1}", $tail),
                $($op)* c0 = in(reg32) $c[0], c1 = in(reg32) $c[1],
                options(nostack, preserves_flags),
            ),
            3 => asm!(
                concat!("cp.async.bulk.tensor.3d", $mid, "{c0}, {c1}, {c2}", $tail),
                $($op)* c0 = in(reg32) $c[0], c1 = in(reg32) $c[1], c2 = in(reg32) $c[2],
                options(nostack, preserves_flags),
            ),
            4 => asm!(
                concat!("cp.async.bulk.tensor.4d", $mid, "{c0}, {c1}, {c2}, {c3}", $tail),
                $($op)* c0 = in(reg32) $c[0], c1 = in(reg32) $c[1], c2 = in(reg32) $c[2],
                c3 = in(reg32) $c[3],
                options(nostack, preserves_flags),
            ),
            _ => asm!(
                concat!("cp.async.bulk.tensor.5d", $mid, "{c0}, {c1}, {c2}, {c3}, {c4}", $tail),
                $($op)* c0 = in(reg32) $c[0], c1 = in(reg32) $c[1], c2 = in(reg32) $c[2],
                c3 = in(reg32) $c[3], c4 = in(reg32) $c[4],
                options(nostack, preserves_flags),
            ),
        }
    };
}

leaf! {
    /// `cvta.to.shared.u64 d, a;` then the low 32 bits: the `.shared::cta` address of a generic
    /// pointer.
    ///
    /// PTX ISA 2.0, sm_20. PTX ISA, "Data Movement and Conversion Instructions: cvta".
    ///
    /// # Safety
    ///
    /// `generic` points into this thread block's shared memory.
    #[gpu_only("cvta.to.shared.u64")]
    #[inline(always)]
    pub unsafe fn cvta_to_shared(generic: *mut u8) -> u32 {
        let shared: u64;
        // SAFETY: the caller passes a pointer into the shared window; cvta only converts it. A
        // register computation: it reads no memory and orders none (`pure, nomem`), so LLVM may
        // reuse or move it like any arithmetic.
        unsafe {
            asm!("cvta.to.shared.u64 {d}, {a};", d = out(reg64) shared, a = in(reg64) generic, options(pure, nomem, nostack, preserves_flags));
        }
        shared as u32
    }
}

leaf! {
    /// `mbarrier.init.shared::cta.b64 [addr], count;`: phase 0, `count` expected arrivals, tx-count
    /// 0.
    ///
    /// PTX ISA 7.8 (the `::cta` sub-qualifier; `mbarrier.init` itself: 7.0), sm_80. PTX ISA,
    /// "Parallel Synchronization and Communication Instructions: mbarrier.init".
    ///
    /// # Safety
    ///
    /// `addr` is the shared address of an 8-byte aligned mbarrier that no other thread uses
    /// until a barrier makes the initialisation visible; `1 <= count <= 2^20 - 1`.
    #[gpu_only("mbarrier.init.shared::cta.b64")]
    #[inline(always)]
    pub unsafe fn mbarrier_init(addr: u32, count: u32) {
        // SAFETY: guaranteed by the caller (exclusive access, valid count).
        unsafe {
            asm!("mbarrier.init.shared::cta.b64 [{a}], {n};", a = in(reg32) addr, n = in(reg32) count, options(nostack, preserves_flags));
        }
    }
}

leaf! {
    /// `mbarrier.inval.shared::cta.b64 [addr];`: invalidates an mbarrier so that its memory may be
    /// reused.
    ///
    /// PTX ISA 7.8 (the `::cta` sub-qualifier; `mbarrier.inval` itself: 7.0), sm_80. PTX ISA,
    /// "Parallel Synchronization and Communication Instructions: mbarrier.inval".
    ///
    /// # Safety
    ///
    /// `addr` is an initialised mbarrier that no thread uses, or will use, before it is initialised
    /// again.
    #[gpu_only("mbarrier.inval.shared::cta.b64")]
    #[inline(always)]
    pub unsafe fn mbarrier_inval(addr: u32) {
        // SAFETY: guaranteed by the caller (no concurrent or later use of the object).
        unsafe {
            asm!("mbarrier.inval.shared::cta.b64 [{a}];", a = in(reg32) addr, options(nostack, preserves_flags));
        }
    }
}

leaf! {
    /// `mbarrier.arrive.release.cta.shared::cta.b64 _, [addr];`: one arrival, release at CTA scope.
    ///
    /// PTX ISA 8.0 (`.release.cta`; `.shared::cta`: 7.8; the sink `_`: 7.1), sm_80: by the manual's
    /// Target ISA Notes no part of this form needs sm_90 (`.cluster` scope, `::cluster`, a count
    /// operand and `.expect_tx` do), though CCCL's `cuda::ptx` lists the same form with a `state`
    /// result as SM_90. PTX ISA, "Parallel Synchronization and Communication Instructions:
    /// mbarrier.arrive".
    ///
    /// # Safety
    ///
    /// `addr` is an initialised mbarrier of this CTA.
    #[gpu_only("mbarrier.arrive.release.cta.shared::cta.b64")]
    #[inline(always)]
    pub unsafe fn mbarrier_arrive(addr: u32) {
        // SAFETY: the caller guarantees an initialised mbarrier; an arrive only updates it.
        unsafe {
            asm!("mbarrier.arrive.release.cta.shared::cta.b64 _, [{a}];", a = in(reg32) addr, options(nostack, preserves_flags));
        }
    }
}

leaf! {
    /// `mbarrier.arrive.release.cta.shared::cta.b64 _, [addr];` under a guard that reads `after`:
    /// `cvt.u64.u32`, `or.b64` with `nonzero`, `setp.ne.u64`, then the arrive predicated on the
    /// result. With `nonzero` not zero the guard always holds: one arrival, as
    /// [`mbarrier_arrive`], that cannot issue before `after` is computed (neither LLVM nor ptxas
    /// sees through the guard). Its use is that order: ptxas keeps a `wgmma.wait_group` below an
    /// arrive that precedes it in program order, so an arrive ordered after a computation keeps
    /// such a wait after it too.
    ///
    /// PTX ISA 8.0 (the arrive's form, as [`mbarrier_arrive`]), sm_80; `cvt`, `or`, `setp` and
    /// guard predicates: PTX ISA 1.0. PTX ISA, "mbarrier.arrive", "Comparison and Selection
    /// Instructions: setp" and "Instruction Statements: Predicated Execution".
    ///
    /// # Safety
    ///
    /// `addr` is an initialised mbarrier of this CTA. (With `nonzero` and `after` both zero no
    /// arrival is made.)
    #[gpu_only("mbarrier.arrive.release.cta.shared::cta.b64 (guarded)")]
    #[inline(always)]
    pub unsafe fn mbarrier_arrive_after(addr: u32, after: u32, nonzero: u64) {
        // SAFETY: the caller guarantees an initialised mbarrier; an arrive only updates it, and
        // the guard is register-only.
        unsafe {
            asm!(
                "{{ .reg .pred p; .reg .b64 t; cvt.u64.u32 t, {w}; or.b64 t, t, {n}; setp.ne.u64 p, t, 0; @p mbarrier.arrive.release.cta.shared::cta.b64 _, [{a}]; }}",
                a = in(reg32) addr,
                w = in(reg32) after,
                n = in(reg64) nonzero,
                options(nostack, preserves_flags),
            );
        }
    }
}

leaf! {
    /// `mbarrier.arrive.release.cta.shared::cta.b64 _, [addr], count;`: `count` arrivals at once.
    ///
    /// PTX ISA 8.0 (`.release.cta`; the count operand without `.noComplete`: 7.8), sm_90 (the count
    /// operand). PTX ISA, "mbarrier.arrive".
    ///
    /// # Safety
    ///
    /// `addr` is an initialised mbarrier of this CTA; `count >= 1`.
    #[gpu_only("mbarrier.arrive.release.cta.shared::cta.b64 (count)")]
    #[inline(always)]
    pub unsafe fn mbarrier_arrive_count(addr: u32, count: u32) {
        // SAFETY: the caller guarantees an initialised mbarrier; an arrive only updates it.
        unsafe {
            asm!("mbarrier.arrive.release.cta.shared::cta.b64 _, [{a}], {n};", a = in(reg32) addr, n = in(reg32) count, options(nostack, preserves_flags));
        }
    }
}

leaf! {
    /// `mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [addr], tx;`: raises the
    /// expected transaction count by `tx` bytes, then arrives once.
    ///
    /// PTX ISA 8.0, sm_90 (both for `.expect_tx`). PTX ISA, "mbarrier.arrive" and
    /// "Tracking asynchronous operations by the mbarrier object".
    ///
    /// # Safety
    ///
    /// `addr` is an initialised mbarrier of this CTA.
    #[gpu_only("mbarrier.arrive.expect_tx.release.cta.shared::cta.b64")]
    #[inline(always)]
    pub unsafe fn mbarrier_arrive_expect_tx(addr: u32, tx_bytes: u32) {
        // SAFETY: the caller guarantees an initialised mbarrier; this updates only its counts.
        unsafe {
            asm!("mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [{a}], {n};", a = in(reg32) addr, n = in(reg32) tx_bytes, options(nostack, preserves_flags));
        }
    }
}

leaf! {
    /// `mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [addr], tx;`: raises the expected
    /// transaction count of the current phase by `tx` bytes, without arriving.
    ///
    /// PTX ISA 8.0, sm_90. PTX ISA, "mbarrier.expect_tx".
    ///
    /// # Safety
    ///
    /// `addr` is an initialised mbarrier of this CTA.
    #[gpu_only("mbarrier.expect_tx.relaxed.cta.shared::cta.b64")]
    #[inline(always)]
    pub unsafe fn mbarrier_expect_tx(addr: u32, tx_bytes: u32) {
        // SAFETY: the caller guarantees an initialised mbarrier; this updates only its tx-count.
        unsafe {
            asm!("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [{a}], {n};", a = in(reg32) addr, n = in(reg32) tx_bytes, options(nostack, preserves_flags));
        }
    }
}

leaf! {
    /// `mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [addr], tx;`: lowers the pending
    /// transaction count by `tx` bytes, as a completed asynchronous copy would.
    ///
    /// PTX ISA 8.0, sm_90. PTX ISA, "mbarrier.complete_tx".
    ///
    /// # Safety
    ///
    /// `addr` is an initialised mbarrier of this CTA.
    #[gpu_only("mbarrier.complete_tx.relaxed.cta.shared::cta.b64")]
    #[inline(always)]
    pub unsafe fn mbarrier_complete_tx(addr: u32, tx_bytes: u32) {
        // SAFETY: the caller guarantees an initialised mbarrier; this updates only its tx-count.
        unsafe {
            asm!("mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [{a}], {n};", a = in(reg32) addr, n = in(reg32) tx_bytes, options(nostack, preserves_flags));
        }
    }
}

leaf! {
    /// `mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 p, [addr], parity;`: whether the
    /// phase of the given parity has completed; may wait a short, system-dependent time first.
    /// Acquire at CTA scope when it returns true.
    ///
    /// PTX ISA 8.0 (`.acquire.cta`; `try_wait` and `.shared::cta`: 7.8), sm_90 (`try_wait`).
    /// PTX ISA, "mbarrier.test_wait / mbarrier.try_wait".
    ///
    /// # Safety
    ///
    /// `addr` is an initialised mbarrier of this CTA.
    #[gpu_only("mbarrier.try_wait.parity.acquire.cta.shared::cta.b64")]
    #[inline(always)]
    pub unsafe fn mbarrier_try_wait_parity(addr: u32, parity: u32) -> bool {
        let done: u32;
        // SAFETY: the caller guarantees an initialised mbarrier; try_wait only reads its phase.
        unsafe {
            asm!(
                "{{",
                ".reg .pred p;",
                "mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 p, [{a}], {ph};",
                "selp.u32 {d}, 1, 0, p;",
                "}}",
                d = out(reg32) done, a = in(reg32) addr, ph = in(reg32) parity,
                options(nostack, preserves_flags),
            );
        }
        done != 0
    }
}

leaf! {
    /// `mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 p, [addr], parity, ticks;`: as
    /// [`mbarrier_try_wait_parity`], with a suspend-time hint: the thread may be suspended for
    /// up to `ticks` nanoseconds waiting for the phase, and resumes as soon as it completes.
    ///
    /// PTX ISA 8.0 (`.acquire.cta`), sm_90 (`try_wait`). PTX ISA, "mbarrier.test_wait /
    /// mbarrier.try_wait" (`suspendTimeHint`).
    ///
    /// # Safety
    ///
    /// `addr` is an initialised mbarrier of this CTA.
    #[gpu_only("mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 (ticks)")]
    #[inline(always)]
    pub unsafe fn mbarrier_try_wait_parity_ticks(addr: u32, parity: u32, ticks: u32) -> bool {
        let done: u32;
        // SAFETY: the caller guarantees an initialised mbarrier; try_wait only reads its phase.
        unsafe {
            asm!(
                "{{",
                ".reg .pred p;",
                "mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 p, [{a}], {ph}, {t};",
                "selp.u32 {d}, 1, 0, p;",
                "}}",
                d = out(reg32) done, a = in(reg32) addr, ph = in(reg32) parity, t = in(reg32) ticks,
                options(nostack, preserves_flags),
            );
        }
        done != 0
    }
}

leaf! {
    /// `mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [addr], parity;`: as
    /// [`mbarrier_try_wait_parity`], acquire at *cluster* scope, for phases completed by arrivals
    /// from peer CTAs of the cluster.
    ///
    /// PTX ISA 8.0 (`.acquire.cluster`), sm_90 (`try_wait`, `.cluster` scope). PTX ISA,
    /// "mbarrier.test_wait / mbarrier.try_wait".
    ///
    /// # Safety
    ///
    /// `addr` is an initialised mbarrier of this CTA.
    #[gpu_only("mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64")]
    #[inline(always)]
    pub unsafe fn mbarrier_try_wait_parity_cluster(addr: u32, parity: u32) -> bool {
        let done: u32;
        // SAFETY: the caller guarantees an initialised mbarrier; try_wait only reads its phase.
        unsafe {
            asm!(
                "{{",
                ".reg .pred p;",
                "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [{a}], {ph};",
                "selp.u32 {d}, 1, 0, p;",
                "}}",
                d = out(reg32) done, a = in(reg32) addr, ph = in(reg32) parity,
                options(nostack, preserves_flags),
            );
        }
        done != 0
    }
}

leaf! {
    /// `mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [addr], parity, ticks;`: as
    /// [`mbarrier_try_wait_parity_cluster`], with a suspend-time hint of up to `ticks`
    /// nanoseconds.
    ///
    /// PTX ISA 8.0 (`.acquire.cluster`), sm_90 (`try_wait`, `.cluster` scope). PTX ISA,
    /// "mbarrier.test_wait / mbarrier.try_wait" (`suspendTimeHint`).
    ///
    /// # Safety
    ///
    /// `addr` is an initialised mbarrier of this CTA.
    #[gpu_only("mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 (ticks)")]
    #[inline(always)]
    pub unsafe fn mbarrier_try_wait_parity_cluster_ticks(addr: u32, parity: u32, ticks: u32) -> bool {
        let done: u32;
        // SAFETY: the caller guarantees an initialised mbarrier; try_wait only reads its phase.
        unsafe {
            asm!(
                "{{",
                ".reg .pred p;",
                "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [{a}], {ph}, {t};",
                "selp.u32 {d}, 1, 0, p;",
                "}}",
                d = out(reg32) done, a = in(reg32) addr, ph = in(reg32) parity, t = in(reg32) ticks,
                options(nostack, preserves_flags),
            );
        }
        done != 0
    }
}

leaf! {
    /// `mbarrier.test_wait.parity.shared.b64 p, [addr], parity;`: whether the phase of the given
    /// parity has completed, without waiting (acquire at CTA scope: the default semantics of a form
    /// without `.sem.scope`, which would need PTX ISA 8.0).
    ///
    /// PTX ISA 7.1 (`.parity`; `test_wait` itself: 7.0), sm_80. PTX ISA, "mbarrier.test_wait /
    /// mbarrier.try_wait".
    ///
    /// # Safety
    ///
    /// `addr` is an initialised mbarrier of this CTA.
    #[gpu_only("mbarrier.test_wait.parity.shared.b64")]
    #[inline(always)]
    pub unsafe fn mbarrier_test_wait_parity(addr: u32, parity: u32) -> bool {
        let done: u32;
        // SAFETY: the caller guarantees an initialised mbarrier; test_wait only reads its phase.
        unsafe {
            asm!(
                "{{",
                ".reg .pred p;",
                "mbarrier.test_wait.parity.shared.b64 p, [{a}], {ph};",
                "selp.u32 {d}, 1, 0, p;",
                "}}",
                d = out(reg32) done, a = in(reg32) addr, ph = in(reg32) parity,
                options(nostack, preserves_flags),
            );
        }
        done != 0
    }
}

leaf! {
    /// `mapa.shared::cluster.u32 d, addr, rank;`: the `.shared::cluster` address of the object at
    /// the same offset in the shared memory of CTA `rank` of this cluster.
    ///
    /// PTX ISA 7.8, sm_90. PTX ISA, "Data Movement and Conversion Instructions: mapa".
    ///
    /// # Safety
    ///
    /// `addr` is a `.shared::cta` address of this CTA and `rank` a CTA rank of the cluster.
    #[gpu_only("mapa.shared::cluster.u32")]
    #[inline(always)]
    pub unsafe fn mapa_shared_cluster(addr: u32, rank: u32) -> u32 {
        let remote: u32;
        // SAFETY: mapa only computes an address; the caller guarantees the rank exists.
        unsafe {
            asm!("mapa.shared::cluster.u32 {d}, {a}, {r};", d = out(reg32) remote, a = in(reg32) addr, r = in(reg32) rank, options(nostack, preserves_flags));
        }
        remote
    }
}

leaf! {
    /// `mbarrier.arrive.release.cluster.shared::cluster.b64 _, [remote];`: one arrival on an
    /// mbarrier of a peer CTA (address from [`mapa_shared_cluster`]), release at cluster scope.
    ///
    /// PTX ISA 8.0 (`.shared::cluster`, `.release.cluster`), sm_90 (both). PTX ISA,
    /// "mbarrier.arrive" (`.shared::cluster` requires the sink `_`).
    ///
    /// # Safety
    ///
    /// `remote` is the `.shared::cluster` address of an initialised mbarrier of a CTA of this
    /// cluster that has not exited.
    #[gpu_only("mbarrier.arrive.release.cluster.shared::cluster.b64")]
    #[inline(always)]
    pub unsafe fn mbarrier_arrive_remote(remote: u32) {
        // SAFETY: the caller guarantees a live, initialised remote mbarrier.
        unsafe {
            asm!("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [{a}];", a = in(reg32) remote, options(nostack, preserves_flags));
        }
    }
}

leaf! {
    /// `mbarrier.arrive.release.cta.shared::cluster.b64 _, [remote];`: one arrival on an
    /// mbarrier of a peer CTA, release at *CTA* scope: it orders nothing for the peer's threads,
    /// and needs no cluster-wide fence (sm_90 SASS: the `.release.cluster` form of
    /// [`mbarrier_arrive_remote`] becomes `MEMBAR.ALL.GPU` + `ERRBAR` before the arrival; this
    /// form is the arrival alone).
    ///
    /// PTX ISA 8.0 (`.shared::cluster`, `.release`, `.cta`), sm_90. PTX ISA, "mbarrier.arrive"
    /// (`.sem` defaults to `.release` and `.scope` to `.cta`).
    ///
    /// # Safety
    ///
    /// As [`mbarrier_arrive_remote`].
    #[gpu_only("mbarrier.arrive.release.cta.shared::cluster.b64")]
    #[inline(always)]
    pub unsafe fn mbarrier_arrive_remote_cta(remote: u32) {
        // SAFETY: the caller guarantees a live, initialised remote mbarrier.
        unsafe {
            asm!("mbarrier.arrive.release.cta.shared::cluster.b64 _, [{a}];", a = in(reg32) remote, options(nostack, preserves_flags));
        }
    }
}

leaf! {
    /// `fence.mbarrier_init.release.cluster;`: orders prior `mbarrier.init`s of this thread before
    /// later cluster-scope accesses to those barriers by peer CTAs.
    ///
    /// PTX ISA 8.0, sm_90 (both for the operation fence `.mbarrier_init`, whose syntax includes
    /// `.release.cluster`; the thread fence `fence.release` is a different form, PTX ISA 8.6). PTX
    /// ISA, "Parallel Synchronization and Communication Instructions: membar / fence".
    #[gpu_only("fence.mbarrier_init.release.cluster")]
    #[inline(always)]
    pub(crate) fn fence_mbarrier_init_release_cluster() {
        // SAFETY: a fence has no operands and no preconditions.
        unsafe {
            asm!(
                "fence.mbarrier_init.release.cluster;",
                options(nostack, preserves_flags)
            );
        }
    }
}

leaf! {
    /// `fence.proxy.async.shared::cta;`: orders this thread's generic-proxy accesses to shared
    /// memory with later async-proxy accesses (TMA, `cp.async.bulk`, wgmma operands), and the
    /// reverse.
    ///
    /// PTX ISA 8.0, sm_90 (both for `fence.proxy.async`). PTX ISA, "membar / fence" and "Memory
    /// Consistency Model: Proxies".
    #[gpu_only("fence.proxy.async.shared::cta")]
    #[inline(always)]
    pub(crate) fn fence_proxy_async_shared_cta() {
        // SAFETY: a fence has no operands and no preconditions.
        unsafe {
            asm!(
                "fence.proxy.async.shared::cta;",
                options(nostack, preserves_flags)
            );
        }
    }
}

leaf! {
    /// `cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [dst], [src], size,
    /// [mbar];`: an asynchronous bulk copy of `size` bytes from global to shared memory that, when
    /// done, performs complete-tx of `size` bytes on the mbarrier.
    ///
    /// PTX ISA 8.0, sm_90. (A `.shared::cta` destination would need PTX ISA 8.6: hence the
    /// `.shared::cluster` form, whose window contains this CTA's `.shared::cta` addresses.) PTX
    /// ISA, "Data Movement and Conversion Instructions: cp.async.bulk" and "State Spaces: Shared
    /// State Space".
    ///
    /// # Safety
    ///
    /// `dst` (a `.shared::cta` address of this CTA) and `src` (global) are 16-byte aligned,
    /// `size` is a non-zero multiple of 16, both ranges are valid and not accessed by anyone else
    /// until the mbarrier phase completes, and `mbar` is an initialised mbarrier of this CTA.
    #[gpu_only("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes")]
    #[inline(always)]
    pub unsafe fn cp_async_bulk_global_to_shared(dst: u32, src: *const u8, size: u32, mbar: u32) {
        // SAFETY: guaranteed by the caller (valid, aligned, exclusively owned ranges).
        unsafe {
            asm!(
                "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [{d}], [{s}], {n}, [{m}];",
                d = in(reg32) dst, s = in(reg64) src, n = in(reg32) size, m = in(reg32) mbar,
                options(nostack, preserves_flags),
            );
        }
    }
}

leaf! {
    /// `red.release.cta.shared.add.u32 [addr], n;`: atomically adds `n` to a 32-bit shared-memory
    /// word, release at CTA scope, no result. The arrive of the counter backend on NVIDIA, applied
    /// to the low word of a 64-bit counter: sm_90 has a native 32-bit shared atomic add
    /// (`ATOMS.ADD`), while ptxas turns the 64-bit form into a compare-and-swap loop
    /// (`ATOMS.CAST.SPIN.64`, seen in the SASS on the H200), and the counter protocol compares
    /// modulo 2^32 anyway.
    ///
    /// PTX ISA 6.0, sm_70. PTX ISA, "Parallel Synchronization and Communication Instructions: red"
    /// and "Memory Consistency Model: Scope" (`.cta`, never the `.sys` default of Rust atomics).
    ///
    /// # Safety
    ///
    /// `addr` is the `.shared::cta` address of a 4-byte-aligned 32-bit word.
    #[gpu_only("red.release.cta.shared.add.u32")]
    #[inline(always)]
    pub unsafe fn red_release_cta_shared_add_u32(addr: u32, n: u32) {
        // SAFETY: guaranteed by the caller; the reduction only updates the word.
        unsafe {
            asm!("red.release.cta.shared.add.u32 [{a}], {n};", a = in(reg32) addr, n = in(reg32) n, options(nostack, preserves_flags));
        }
    }
}

leaf! {
    /// `ld.acquire.cta.shared.u32 d, [addr];`: reads a 32-bit shared-memory word, acquire at CTA
    /// scope.
    ///
    /// PTX ISA 6.0, sm_70. PTX ISA, "Data Movement and Conversion Instructions: ld" (`.acquire`,
    /// `.cta`).
    ///
    /// # Safety
    ///
    /// `addr` is the `.shared::cta` address of a 4-byte-aligned 32-bit word.
    #[gpu_only("ld.acquire.cta.shared.u32")]
    #[inline(always)]
    pub unsafe fn ld_acquire_cta_shared_u32(addr: u32) -> u32 {
        let value: u32;
        // SAFETY: guaranteed by the caller; a load.
        unsafe {
            asm!("ld.acquire.cta.shared.u32 {d}, [{a}];", d = out(reg32) value, a = in(reg32) addr, options(nostack, preserves_flags));
        }
        value
    }
}

leaf! {
    /// `activemask.b32 d;`: the lanes of the warp executing this instruction together.
    ///
    /// PTX ISA 6.2, sm_30. PTX ISA, "Parallel Synchronization and Communication Instructions:
    /// activemask".
    #[gpu_only("activemask.b32")]
    #[inline(always)]
    #[must_use]
    pub fn activemask() -> u32 {
        let mask: u32;
        // SAFETY: reads a warp-state value; no preconditions.
        unsafe {
            asm!("activemask.b32 {d};", d = out(reg32) mask, options(nostack, preserves_flags));
        }
        mask
    }
}

leaf! {
    /// `bar.warp.sync mask;`: waits until all lanes of `mask` reach it, and orders their memory
    /// accesses ("also guarantees memory ordering among threads participating in barrier").
    ///
    /// PTX ISA 6.0, sm_30. PTX ISA, "Parallel Synchronization and Communication Instructions:
    /// bar.warp.sync".
    ///
    /// # Safety
    ///
    /// Every lane of `mask` executes this instruction with the same mask (including the caller).
    #[gpu_only("bar.warp.sync")]
    #[inline(always)]
    pub unsafe fn bar_warp_sync(mask: u32) {
        // SAFETY: guaranteed by the caller (all lanes of the mask take part).
        unsafe {
            asm!("bar.warp.sync {m};", m = in(reg32) mask, options(nostack, preserves_flags));
        }
    }
}

leaf! {
    /// `bar.warp.sync 0xffffffff;`: [`bar_warp_sync`] over the whole warp, with the mask as an
    /// immediate. ptxas then knows the mask and emits no run-time divergence check (a run-time mask
    /// costs `MATCH.ANY` + `REDUX.OR` + `BRA.DIV` on sm_90, seen in the H200 SASS).
    ///
    /// PTX ISA 6.0, sm_30. PTX ISA, "Parallel Synchronization and Communication Instructions:
    /// bar.warp.sync".
    ///
    /// # Safety
    ///
    /// All 32 lanes of the warp execute this instruction.
    #[gpu_only("bar.warp.sync 0xffffffff")]
    #[inline(always)]
    pub unsafe fn bar_warp_sync_all() {
        // SAFETY: guaranteed by the caller (the whole warp takes part).
        unsafe {
            asm!(
                "bar.warp.sync 0xffffffff;",
                options(nostack, preserves_flags)
            );
        }
    }
}

#[cfg(target_arch = "nvptx64")]
unsafe extern "llvm-intrinsic" {
    /// `llvm.nvvm.match.any.sync.i32`: `match.any.sync.b32` as a convergent LLVM intrinsic.
    #[link_name = "llvm.nvvm.match.any.sync.i32"]
    fn llvm_match_any_sync_i32(mask: u32, value: u32) -> u32;
    /// `llvm.nvvm.shfl.sync.idx.i32`: `shfl.sync.idx.b32` as a convergent LLVM intrinsic.
    #[link_name = "llvm.nvvm.shfl.sync.idx.i32"]
    fn llvm_shfl_sync_idx_i32(mask: u32, value: u32, lane: u32, clamp: u32) -> u32;
    /// `llvm.nvvm.vote.all.sync`: `vote.sync.all.pred` as a convergent LLVM intrinsic.
    #[link_name = "llvm.nvvm.vote.all.sync"]
    fn llvm_vote_all_sync(mask: u32, predicate: bool) -> bool;
}

leaf! {
    /// `shfl.sync.idx.b32 d, value, lane, 0x1f, mask;`: lane `lane`'s `value`.
    ///
    /// Through LLVM's convergent intrinsic `llvm.nvvm.shfl.sync.idx.i32`, not inline assembly.
    ///
    /// PTX ISA 6.0, sm_30. PTX ISA, "Data Movement and Conversion Instructions: shfl.sync".
    ///
    /// # Safety
    ///
    /// The calling lane and `lane` are in `mask`, and every lane of `mask` executes a
    /// `shfl.sync` with the same mask.
    #[gpu_only("shfl.sync.idx.b32")]
    #[inline(always)]
    #[must_use]
    pub unsafe fn shfl_sync_idx(mask: u32, value: u32, lane: u32) -> u32 {
        // SAFETY: guaranteed by the caller (all lanes of the mask take part).
        unsafe { llvm_shfl_sync_idx_i32(mask, value, lane, 0x1f) }
    }
}

leaf! {
    /// `vote.sync.all.pred d, p, mask;`: whether `predicate` holds in every lane of `mask`.
    ///
    /// Through LLVM's convergent intrinsic `llvm.nvvm.vote.all.sync`, not inline assembly.
    ///
    /// PTX ISA 6.0, sm_30. PTX ISA, "Parallel Synchronization and Communication Instructions:
    /// vote.sync".
    ///
    /// # Safety
    ///
    /// The calling lane is in `mask`, and every lane of `mask` executes a `vote.sync` with the same
    /// mask.
    #[gpu_only("vote.sync.all.pred")]
    #[inline(always)]
    #[must_use]
    pub unsafe fn vote_all_sync(mask: u32, predicate: bool) -> bool {
        // SAFETY: guaranteed by the caller (all lanes of the mask take part).
        unsafe { llvm_vote_all_sync(mask, predicate) }
    }
}

leaf! {
    /// `match.any.sync.b32 d, value, mask;`: the lanes of `mask` whose `value` equals the calling
    /// lane's, as a mask (the calling lane included).
    ///
    /// Through LLVM's convergent intrinsic `llvm.nvvm.match.any.sync.i32`, not inline assembly:
    /// LLVM then keeps it where every lane of the mask reaches it together.
    ///
    /// PTX ISA 6.0, sm_70. PTX ISA, "Parallel Synchronization and Communication Instructions:
    /// match.sync" ("the executing thread waits until all non-exited threads of membermask have
    /// executed match.sync with the same qualifiers and membermask").
    ///
    /// # Safety
    ///
    /// The calling lane is in `mask`, and every lane of `mask` executes a `match.any.sync` with the
    /// same mask.
    #[gpu_only("match.any.sync.b32")]
    #[inline(always)]
    #[must_use]
    pub unsafe fn match_any_sync(mask: u32, value: u32) -> u32 {
        // SAFETY: guaranteed by the caller (all lanes of the mask take part).
        unsafe { llvm_match_any_sync_i32(mask, value) }
    }
}

leaf! {
    /// `mov.u32 d, %laneid;`: the calling thread's lane in its warp.
    ///
    /// PTX ISA 1.3, all SMs. PTX ISA, "Special Registers: %laneid".
    #[gpu_only("mov.u32 %laneid")]
    #[inline(always)]
    #[must_use]
    pub fn laneid() -> u32 {
        let lane: u32;
        // SAFETY: reads a special register.
        unsafe {
            asm!("mov.u32 {d}, %laneid;", d = out(reg32) lane, options(nostack, nomem, preserves_flags));
        }
        lane
    }
}

leaf! {
    /// `mov.u32 d, %lanemask_lt;`: the lanes of the warp below the calling lane, as a mask.
    ///
    /// PTX ISA 2.0, sm_20. PTX ISA, "Special Registers: %lanemask_lt".
    #[gpu_only("mov.u32 %lanemask_lt")]
    #[inline(always)]
    #[must_use]
    pub fn lanemask_lt() -> u32 {
        let mask: u32;
        // SAFETY: reads a special register.
        unsafe {
            asm!("mov.u32 {d}, %lanemask_lt;", d = out(reg32) mask, options(nostack, nomem, preserves_flags));
        }
        mask
    }
}

leaf! {
    /// `nanosleep.u32 t;`: suspends the thread for about `t` ns (at most 1 ms). Back-off for
    /// counter waits: up to the ticks hint, or `0` after a failed poll without one.
    ///
    /// PTX ISA 6.3, sm_70. PTX ISA, "Miscellaneous Instructions: nanosleep".
    #[gpu_only("nanosleep.u32")]
    #[inline(always)]
    pub fn nanosleep(ns: u32) {
        // SAFETY: sleeping has no preconditions.
        unsafe {
            asm!("nanosleep.u32 {t};", t = in(reg32) ns, options(nostack, preserves_flags));
        }
    }
}

leaf! {
    /// `st.shared.u64 [addr], v;`: a plain 64-bit shared-memory store (counter initialisation).
    ///
    /// PTX ISA 1.0, all SMs. PTX ISA, "Data Movement and Conversion Instructions: st".
    ///
    /// # Safety
    ///
    /// `addr` is the `.shared::cta` address of 8 aligned bytes that no other thread accesses now.
    #[gpu_only("st.shared.u64")]
    #[inline(always)]
    pub unsafe fn st_shared_u64(addr: u32, value: u64) {
        // SAFETY: guaranteed by the caller (exclusive, aligned shared location).
        unsafe {
            asm!("st.shared.u64 [{a}], {v};", a = in(reg32) addr, v = in(reg64) value, options(nostack, preserves_flags));
        }
    }
}

leaf! {
    /// `fence.acq_rel.cta;`: a release and acquire fence at CTA scope (Rust's `fence` would be
    /// `.sys`).
    ///
    /// PTX ISA 6.0, sm_70. PTX ISA, "Parallel Synchronization and Communication Instructions:
    /// membar / fence".
    #[gpu_only("fence.acq_rel.cta")]
    #[inline(always)]
    pub fn fence_acq_rel_cta() {
        // SAFETY: a fence has no operands and no preconditions.
        unsafe {
            asm!("fence.acq_rel.cta;", options(nostack, preserves_flags));
        }
    }
}

leaf! {
    /// `mov.u32 d, %cluster_ctarank;`: the rank of this CTA in its cluster.
    ///
    /// PTX ISA 7.8, sm_90. PTX ISA, "Special Registers: %cluster_ctarank".
    #[gpu_only("mov.u32 %cluster_ctarank")]
    #[inline(always)]
    #[must_use]
    pub(crate) fn cluster_ctarank() -> u32 {
        let rank: u32;
        // SAFETY: reads a special register.
        unsafe {
            asm!("mov.u32 {d}, %cluster_ctarank;", d = out(reg32) rank, options(nostack, nomem, preserves_flags));
        }
        rank
    }
}

leaf! {
    /// `barrier.cluster.arrive.release;`: this thread arrives on the cluster barrier, release at
    /// cluster scope. With [`barrier_cluster_wait_acquire`], the cluster-wide barrier that must
    /// separate barrier initialisation from remote arrivals, and the last remote arrival from a
    /// peer's exit.
    ///
    /// Deliberately *not* the `.aligned` form: inline assembly is not `convergent` to LLVM, which
    /// may duplicate it into divergent paths (seen on this toolchain: tail duplication gave lane 0
    /// and lanes 1-31 of a warp two different copies of the instruction, and the kernel hung). The
    /// non-aligned form is defined for divergent execution.
    ///
    /// PTX ISA 8.0 (`.release`; `barrier.cluster` itself: 7.8), sm_90. PTX ISA, "Parallel
    /// Synchronization and Communication Instructions: barrier.cluster".
    ///
    /// # Safety
    ///
    /// Every non-exited thread of the cluster arrives once before any waits.
    #[gpu_only("barrier.cluster.arrive.release")]
    #[inline(always)]
    pub unsafe fn barrier_cluster_arrive_release() {
        // SAFETY: guaranteed by the caller (cluster-wide participation).
        unsafe {
            asm!(
                "barrier.cluster.arrive.release;",
                options(nostack, preserves_flags)
            );
        }
    }
}

leaf! {
    /// `barrier.cluster.wait.acquire;`: waits until every thread of the cluster arrived (see
    /// [`barrier_cluster_arrive_release`], also for why this is not the `.aligned` form), acquire
    /// at cluster scope.
    ///
    /// PTX ISA 8.0 (`.acquire`; `barrier.cluster` itself: 7.8), sm_90. PTX ISA, "barrier.cluster".
    ///
    /// # Safety
    ///
    /// The calling thread arrived on the current cluster barrier phase before.
    #[gpu_only("barrier.cluster.wait.acquire")]
    #[inline(always)]
    pub unsafe fn barrier_cluster_wait_acquire() {
        // SAFETY: guaranteed by the caller.
        unsafe {
            asm!(
                "barrier.cluster.wait.acquire;",
                options(nostack, preserves_flags)
            );
        }
    }
}

leaf! {
    /// `barrier.cluster.arrive.relaxed;`: this thread arrives on the cluster barrier with no
    /// memory ordering of its own (PTX ISA: "no memory ordering and visibility guarantees" for
    /// the accesses before it). Paired with [`barrier_cluster_wait_acquire`] where what must be
    /// seen across the cluster is ordered otherwise: mbarrier initialisations after
    /// `fence.mbarrier_init.release.cluster`, which is what the relaxed arrival exists for (PTX
    /// ISA, "membar/fence": the fence is "a light-weight fence ... with barrier.cluster.arrive.relaxed").
    /// Not the `.aligned` form, as [`barrier_cluster_arrive_release`].
    ///
    /// PTX ISA 8.0 (`.relaxed`), sm_90. PTX ISA, "Parallel Synchronization and Communication
    /// Instructions: barrier.cluster".
    ///
    /// # Safety
    ///
    /// Every non-exited thread of the cluster arrives once before any waits.
    #[gpu_only("barrier.cluster.arrive.relaxed")]
    #[inline(always)]
    pub unsafe fn barrier_cluster_arrive_relaxed() {
        // SAFETY: guaranteed by the caller (cluster-wide participation).
        unsafe {
            asm!(
                "barrier.cluster.arrive.relaxed;",
                options(nostack, preserves_flags)
            );
        }
    }
}

leaf! {
    /// `elect.sync _|p, 0xffffffff;`: elects one lane of the full warp; true in that lane only.
    ///
    /// PTX ISA 8.0, sm_90. PTX ISA, "Parallel Synchronization and Communication Instructions:
    /// elect.sync".
    ///
    /// # Safety
    ///
    /// Every lane of the warp executes it together, converged: with the full member mask,
    /// `elect.sync` from a divergent or partial warp is undefined (PTX ISA, "elect.sync"). Like
    /// every collective written as inline assembly here, LLVM does not know it is `convergent`:
    /// call it where the whole warp is converged and not under lane-dependent control flow.
    #[gpu_only("elect.sync")]
    #[inline(always)]
    #[must_use]
    pub(crate) unsafe fn elect_one_sync() -> bool {
        let elected: u32;
        // SAFETY: a warp-collective election; the caller guarantees a converged, full warp.
        unsafe {
            asm!(
                "{{",
                ".reg .pred p;",
                "elect.sync _|p, 0xffffffff;",
                "selp.u32 {d}, 1, 0, p;",
                "}}",
                d = out(reg32) elected,
                options(nostack, preserves_flags),
            );
        }
        elected != 0
    }
}

leaf! {
    /// `tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [mbar];`: the
    /// mbarrier receives one arrival when every `tcgen05` operation the calling thread issued
    /// before it has completed.
    ///
    /// PTX ISA 8.6, sm_100a. PTX ISA, "TensorCore 5th Generation Family Instructions:
    /// tcgen05.commit".
    ///
    /// # Safety
    ///
    /// `mbar` is an initialised mbarrier of this CTA (a `.shared::cta` address is a valid
    /// `.shared::cluster` address of the executing CTA).
    #[gpu_only("tcgen05.commit.cta_group::1")]
    #[inline(always)]
    pub unsafe fn tcgen05_commit_cta_group1(mbar: u32) {
        // SAFETY: guaranteed by the caller.
        unsafe {
            asm!("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [{m}];", m = in(reg32) mbar, options(nostack, preserves_flags));
        }
    }
}

leaf! {
    /// `tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64
    /// [mbar], mask;`: as [`tcgen05_commit_cta_group1`] for a CTA pair; the mbarrier at the same
    /// offset in every CTA of `cta_mask` (bit `i`: cluster rank `i`) receives one arrival.
    ///
    /// PTX ISA 8.6, sm_100a. PTX ISA, "tcgen05.commit".
    ///
    /// # Safety
    ///
    /// Every CTA of `cta_mask` is alive and has an initialised mbarrier at that offset.
    #[gpu_only("tcgen05.commit.cta_group::2")]
    #[inline(always)]
    pub unsafe fn tcgen05_commit_cta_group2_multicast(mbar: u32, cta_mask: u32) {
        // SAFETY: guaranteed by the caller.
        unsafe {
            asm!(
                "tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [{m}], {k};",
                m = in(reg32) mbar, k = in(reg16) cta_mask as u16,
                options(nostack, preserves_flags),
            );
        }
    }
}

leaf! {
    /// `cp.async.bulk.tensor.Dd.shared::cluster.global.mbarrier::complete_tx::bytes [dst],
    /// [map, {c0, ..}], [mbar];` for `D` in 1..=5: the tensor-copy engine (TMA) copies the box of
    /// the tensor map at the coordinates `c[..D]` (innermost first, in elements) from global to
    /// shared memory, and performs complete-tx of the box's bytes on the mbarrier when done.
    ///
    /// PTX ISA 8.0, sm_90. PTX ISA, "Data Movement and Conversion Instructions:
    /// cp.async.bulk.tensor" and "Tensor Map". A `.shared::cta` destination would need PTX ISA
    /// 8.6; the `.shared::cluster` window contains this CTA's `.shared::cta` addresses.
    ///
    /// # Safety
    ///
    /// `1 <= D <= 5` and the map has `D` dimensions; `map` is the generic address of a valid
    /// tensor map in global (or constant/param) memory, 64-byte aligned; `dst` is a `.shared::cta`
    /// address of this CTA, aligned as the map's swizzle mode needs (128 bytes without swizzle
    /// suffices for every mode but 1024 for 128-byte swizzle), with room for the box; nobody else
    /// accesses it until the mbarrier phase completes; `mbar` is an initialised mbarrier of this
    /// CTA whose phase expects the box's bytes.
    #[gpu_only("cp.async.bulk.tensor.shared::cluster.global.mbarrier::complete_tx::bytes")]
    #[inline(always)]
    pub unsafe fn cp_async_bulk_tensor_load<const D: usize>(dst: u32, map: *const u8, c: [i32; 5], mbar: u32) {
        // SAFETY: guaranteed by the caller.
        unsafe {
            tensor_copy_by_dims!(
                D,
                c,
                ".shared::cluster.global.mbarrier::complete_tx::bytes [{d}], [{m}, {{",
                "}}], [{b}];",
                d = in(reg32) dst, m = in(reg64) map, b = in(reg32) mbar,
            )
        }
    }
}

leaf! {
    /// `cp.async.bulk.tensor.Dd.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster
    /// [dst], [map, {c0, ..}], [mbar], mask;`: as [`cp_async_bulk_tensor_load`], and the box lands
    /// at the same shared offset in every CTA of the cluster named in the 16-bit `mask` (bit `i`:
    /// rank `i`), each of which receives the complete-tx on its mbarrier at `mbar`'s offset.
    ///
    /// PTX ISA 8.0, sm_90. PTX ISA, "cp.async.bulk.tensor".
    ///
    /// # Safety
    ///
    /// As [`cp_async_bulk_tensor_load`], for every CTA of `mask`: each is alive, has the same
    /// shared layout, and its mbarrier's phase expects the box's bytes.
    #[gpu_only("cp.async.bulk.tensor.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster")]
    #[inline(always)]
    pub unsafe fn cp_async_bulk_tensor_load_multicast<const D: usize>(dst: u32, map: *const u8, c: [i32; 5], mbar: u32, mask: u16) {
        // SAFETY: guaranteed by the caller.
        unsafe {
            tensor_copy_by_dims!(
                D,
                c,
                ".shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [{d}], [{m}, {{",
                "}}], [{b}], {k};",
                d = in(reg32) dst, m = in(reg64) map, b = in(reg32) mbar, k = in(reg16) mask,
            )
        }
    }
}

leaf! {
    /// `createpolicy.fractional.L2::evict_first.b64 policy;`: an L2 cache-eviction policy (an
    /// opaque 64-bit value for an instruction's `.L2::cache_hint` operand) that evicts the lines
    /// it is applied to first, over the whole access (fraction 1.0, the default).
    ///
    /// PTX ISA 7.4, sm_80. PTX ISA, "Data Movement and Conversion Instructions: createpolicy".
    #[gpu_only("createpolicy.fractional.L2::evict_first.b64")]
    #[inline(always)]
    pub fn createpolicy_evict_first() -> u64 {
        let policy: u64;
        // SAFETY: a register computation: it reads no memory and orders none (`pure, nomem`).
        unsafe {
            asm!("createpolicy.fractional.L2::evict_first.b64 {p};", p = out(reg64) policy, options(pure, nomem, nostack, preserves_flags));
        }
        policy
    }
}

leaf! {
    /// `createpolicy.fractional.L2::evict_last.b64 policy;`: as [`createpolicy_evict_first`],
    /// a policy that evicts the lines it is applied to last.
    ///
    /// PTX ISA 7.4, sm_80. PTX ISA, "Data Movement and Conversion Instructions: createpolicy".
    #[gpu_only("createpolicy.fractional.L2::evict_last.b64")]
    #[inline(always)]
    pub fn createpolicy_evict_last() -> u64 {
        let policy: u64;
        // SAFETY: as `createpolicy_evict_first`.
        unsafe {
            asm!("createpolicy.fractional.L2::evict_last.b64 {p};", p = out(reg64) policy, options(pure, nomem, nostack, preserves_flags));
        }
        policy
    }
}

leaf! {
    /// `cp.async.bulk.tensor.Dd.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint
    /// [dst], [map, {c0, ..}], [mbar], policy;`: as [`cp_async_bulk_tensor_load`], with the L2
    /// cache-eviction `policy` (from `createpolicy`) applied to the global reads. A hint: the
    /// data copied is the same.
    ///
    /// PTX ISA 8.0, sm_90. PTX ISA, "cp.async.bulk.tensor" (`.level::cache_hint`) and
    /// "createpolicy".
    ///
    /// # Safety
    ///
    /// As [`cp_async_bulk_tensor_load`]; `policy` is a value `createpolicy` produced.
    #[gpu_only("cp.async.bulk.tensor.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint")]
    #[inline(always)]
    pub unsafe fn cp_async_bulk_tensor_load_hint<const D: usize>(dst: u32, map: *const u8, c: [i32; 5], mbar: u32, policy: u64) {
        // SAFETY: guaranteed by the caller.
        unsafe {
            tensor_copy_by_dims!(
                D,
                c,
                ".shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [{d}], [{m}, {{",
                "}}], [{b}], {p};",
                d = in(reg32) dst, m = in(reg64) map, b = in(reg32) mbar, p = in(reg64) policy,
            )
        }
    }
}

leaf! {
    /// `cp.async.bulk.tensor.Dd.global.shared::cta.bulk_group [map, {c0, ..}], [src];` for `D`
    /// in 1..=5: the tensor-copy engine copies a box from shared memory to the tensor map's
    /// global tensor at the coordinates `c[..D]`, tracked by the thread's bulk async-group.
    ///
    /// PTX ISA 8.0, sm_90. PTX ISA, "cp.async.bulk.tensor".
    ///
    /// # Safety
    ///
    /// `1 <= D <= 5` and the map has `D` dimensions; the first `D` coordinates are `>= 0` (the
    /// H200 stops the kernel with an illegal instruction otherwise; see the backend's
    /// `tensor_store`); `map` is as for
    /// [`cp_async_bulk_tensor_load`]; `src` is a `.shared::cta` address of this CTA, aligned as the
    /// map's swizzle mode needs, holding the box; it is not written until a
    /// [`bulk_wait_group_read`](crate::bulk_wait_group_read) covers the copy, and the destination is not read until a
    /// [`bulk_wait_group`](crate::bulk_wait_group) does. Writes made to `src` by ordinary stores need
    /// `fence.proxy.async.shared::cta` before the copy.
    #[gpu_only("cp.async.bulk.tensor.global.shared::cta.bulk_group")]
    #[inline(always)]
    pub unsafe fn cp_async_bulk_tensor_store<const D: usize>(map: *const u8, c: [i32; 5], src: u32) {
        // SAFETY: guaranteed by the caller.
        unsafe {
            tensor_copy_by_dims!(
                D,
                c,
                ".global.shared::cta.bulk_group [{m}, {{",
                "}}], [{s}];",
                m = in(reg64) map, s = in(reg32) src,
            )
        }
    }
}

leaf! {
    /// `prefetch.tensormap [map];`: brings a tensor map into the cache ahead of its first use.
    ///
    /// PTX ISA 8.0, sm_90. PTX ISA, "Data Movement and Conversion Instructions: prefetch".
    ///
    /// # Safety
    ///
    /// `map` is the generic address of a tensor map in global, constant or param memory.
    #[gpu_only("prefetch.tensormap")]
    #[inline(always)]
    pub(crate) unsafe fn prefetch_tensormap(map: *const u8) {
        // SAFETY: guaranteed by the caller; a prefetch has no other effect.
        unsafe {
            asm!("prefetch.tensormap [{m}];", m = in(reg64) map, options(nostack, preserves_flags));
        }
    }
}

leaf! {
    /// `cp.async.bulk.global.shared::cta.bulk_group [dst], [src], size;`: an asynchronous bulk copy
    /// of `size` bytes from shared to global memory, tracked by the thread's bulk async-group.
    ///
    /// PTX ISA 8.0, sm_90. PTX ISA, "Data Movement and Conversion Instructions: cp.async.bulk".
    ///
    /// # Safety
    ///
    /// `src` (a `.shared::cta` address) and `dst` (global) are 16-byte aligned, `size` is a
    /// non-zero multiple of 16, both ranges are valid, and `src` is not written until a
    /// [`bulk_wait_group_read`](crate::bulk_wait_group_read) after a [`bulk_commit_group`](crate::bulk_commit_group) covers the copy.
    #[gpu_only("cp.async.bulk.global.shared::cta.bulk_group")]
    #[inline(always)]
    pub unsafe fn cp_async_bulk_shared_to_global(dst: *mut u8, src: u32, size: u32) {
        // SAFETY: guaranteed by the caller.
        unsafe {
            asm!(
                "cp.async.bulk.global.shared::cta.bulk_group [{d}], [{s}], {n};",
                d = in(reg64) dst, s = in(reg32) src, n = in(reg32) size,
                options(nostack, preserves_flags),
            );
        }
    }
}

leaf! {
    /// `cp.async.bulk.commit_group;`: closes the thread's current bulk async-group.
    ///
    /// PTX ISA 8.0, sm_90. PTX ISA, "Data Movement and Conversion Instructions:
    /// cp.async.bulk.commit_group".
    #[gpu_only("cp.async.bulk.commit_group")]
    #[inline(always)]
    pub(crate) fn cp_async_bulk_commit_group() {
        // SAFETY: groups only the thread's own earlier bulk copies.
        unsafe {
            asm!(
                "cp.async.bulk.commit_group;",
                options(nostack, preserves_flags)
            );
        }
    }
}

leaf! {
    /// `cp.async.bulk.wait_group.read N;`: waits until at most `N` of the thread's committed bulk
    /// async-groups have not finished *reading* their source (shared memory they read may be
    /// reused).
    ///
    /// PTX ISA 8.0, sm_90. PTX ISA, "Data Movement and Conversion Instructions:
    /// cp.async.bulk.wait_group".
    #[gpu_only("cp.async.bulk.wait_group.read")]
    #[inline(always)]
    pub(crate) fn cp_async_bulk_wait_group_read<const N: u32>() {
        // SAFETY: a wait on the thread's own copies.
        unsafe {
            asm!("cp.async.bulk.wait_group.read {n};", n = const N, options(nostack, preserves_flags));
        }
    }
}

leaf! {
    /// `cp.async.bulk.wait_group N;`: waits until at most `N` of the thread's committed bulk
    /// async-groups are pending: their copies are *complete* (the writes to global memory are
    /// performed), not only done reading their source as with [`bulk_wait_group_read`](crate::bulk_wait_group_read).
    ///
    /// PTX ISA 8.0, sm_90. PTX ISA, "Data Movement and Conversion Instructions:
    /// cp.async.bulk.wait_group".
    #[gpu_only("cp.async.bulk.wait_group")]
    #[inline(always)]
    pub(crate) fn cp_async_bulk_wait_group<const N: u32>() {
        // SAFETY: a wait on the thread's own copies.
        unsafe {
            asm!("cp.async.bulk.wait_group {n};", n = const N, options(nostack, preserves_flags));
        }
    }
}

leaf! {
    /// `mov.u64 d, %clock64;`: the SM's 64-bit cycle counter.
    ///
    /// PTX ISA 2.0, sm_20. PTX ISA, "Special Registers: %clock64".
    #[gpu_only("mov.u64 %clock64")]
    #[inline(always)]
    #[must_use]
    pub fn clock64() -> u64 {
        let cycles: u64;
        // SAFETY: reads a special register; not `nomem`, so it stays ordered with the timed code.
        unsafe {
            asm!("mov.u64 {d}, %clock64;", d = out(reg64) cycles, options(nostack, preserves_flags));
        }
        cycles
    }
}

// ---------------------------------------------------------------- checked builds (hang diagnostics)

leaf! {
    /// `mov.u64 d, %globaltimer;`: a nanosecond timer shared by the whole GPU (its resolution is a
    /// microsecond or finer on sm_90).
    ///
    /// PTX ISA 3.1, sm_30. PTX ISA, "Special Registers: %globaltimer".
    #[gpu_only("mov.u64 %globaltimer")]
    #[inline(always)]
    #[must_use]
    pub fn globaltimer() -> u64 {
        let ns: u64;
        // SAFETY: reads a special register; not `nomem`, so it stays ordered with the waits.
        unsafe {
            asm!("mov.u64 {d}, %globaltimer;", d = out(reg64) ns, options(nostack, preserves_flags));
        }
        ns
    }
}

leaf! {
    /// `red.relaxed.cta.shared.add.u32 [addr], n;`: adds `n` to a shared-memory word, relaxed at
    /// CTA scope (an arrival shadow; the barrier arrival after it is the release that publishes
    /// it).
    ///
    /// PTX ISA 6.0, sm_70. PTX ISA, "Parallel Synchronization and Communication Instructions: red".
    ///
    /// # Safety
    ///
    /// `addr` is the `.shared::cta` address of a 4-byte-aligned 32-bit word.
    #[gpu_only("red.relaxed.cta.shared.add.u32")]
    #[inline(always)]
    pub unsafe fn red_relaxed_cta_shared_add_u32(addr: u32, n: u32) {
        // SAFETY: guaranteed by the caller; the reduction only updates the word.
        unsafe {
            asm!("red.relaxed.cta.shared.add.u32 [{a}], {n};", a = in(reg32) addr, n = in(reg32) n, options(nostack, preserves_flags));
        }
    }
}

leaf! {
    /// `red.relaxed.cluster.shared::cluster.add.u32 [addr], n;`: adds `n` to a word in the shared
    /// memory of a CTA of this cluster (an address from [`mapa_shared_cluster`]), relaxed at
    /// cluster scope.
    ///
    /// PTX ISA 7.8, sm_90. PTX ISA, "Parallel Synchronization and Communication Instructions: red"
    /// (the `.shared::cluster` state space).
    ///
    /// # Safety
    ///
    /// `addr` is a `.shared::cluster` address of a 4-byte-aligned word of a live CTA of this
    /// cluster.
    #[gpu_only("red.relaxed.cluster.shared::cluster.add.u32")]
    #[inline(always)]
    pub unsafe fn red_relaxed_cluster_shared_cluster_add_u32(addr: u32, n: u32) {
        // SAFETY: guaranteed by the caller; the reduction only updates the word.
        unsafe {
            asm!("red.relaxed.cluster.shared::cluster.add.u32 [{a}], {n};", a = in(reg32) addr, n = in(reg32) n, options(nostack, preserves_flags));
        }
    }
}

leaf! {
    /// `ld.relaxed.cta.shared.u32 d, [addr];`: reads a 32-bit shared-memory word, relaxed at CTA
    /// scope.
    ///
    /// PTX ISA 6.0, sm_70. PTX ISA, "Data Movement and Conversion Instructions: ld" (`.relaxed`,
    /// `.cta`).
    ///
    /// # Safety
    ///
    /// `addr` is the `.shared::cta` address of a 4-byte-aligned 32-bit word.
    #[gpu_only("ld.relaxed.cta.shared.u32")]
    #[inline(always)]
    pub unsafe fn ld_relaxed_cta_shared_u32(addr: u32) -> u32 {
        let value: u32;
        // SAFETY: guaranteed by the caller; a load.
        unsafe {
            asm!("ld.relaxed.cta.shared.u32 {d}, [{a}];", d = out(reg32) value, a = in(reg32) addr, options(nostack, preserves_flags));
        }
        value
    }
}

leaf! {
    /// `fence.sc.sys;`: a sequentially consistent fence at system scope, so that a hang record
    /// written to host-mapped memory is complete before its `magic` word.
    ///
    /// PTX ISA 6.0, sm_70. PTX ISA, "Parallel Synchronization and Communication Instructions:
    /// membar / fence".
    #[gpu_only("fence.sc.sys")]
    #[inline(always)]
    pub fn fence_sc_sys() {
        // SAFETY: a fence has no operands and no preconditions.
        unsafe {
            asm!("fence.sc.sys;", options(nostack, preserves_flags));
        }
    }
}

leaf! {
    /// `trap;`: stops the kernel with an error the host sees at its next synchronisation.
    ///
    /// PTX ISA 1.0, all SMs. PTX ISA, "Miscellaneous Instructions: trap".
    #[gpu_only("trap")]
    #[inline(always)]
    pub fn trap() -> ! {
        // SAFETY: ends the kernel; never returns.
        unsafe {
            asm!("trap;", options(noreturn, nostack));
        }
    }
}

/// A leaf that reads the three components of a special register triple (`%tid`, `%ntid`,
/// `%ctaid`), one `mov.u32` each.
macro_rules! special_xyz {
    ($name:ident, $x:literal, $y:literal, $z:literal, $doc:literal) => {
        leaf! {
            #[doc = $doc]
            #[gpu_only(concat!("mov.u32 ", $x))]
            #[inline(always)]
            #[must_use]
            pub fn $name() -> [u32; 3] {
                let (x, y, z): (u32, u32, u32);
                // SAFETY: reads special registers; no preconditions.
                unsafe {
                    asm!(
                        concat!("mov.u32 {x}, ", $x, ";"),
                        concat!("mov.u32 {y}, ", $y, ";"),
                        concat!("mov.u32 {z}, ", $z, ";"),
                        x = out(reg32) x, y = out(reg32) y, z = out(reg32) z,
                        options(nostack, nomem, preserves_flags)
                    );
                }
                [x, y, z]
            }
        }
    };
}

special_xyz!(
    tid,
    "%tid.x",
    "%tid.y",
    "%tid.z",
    "`mov.u32 d, %tid.{x,y,z};`: this thread's index in its block.\n\nPTX ISA 2.0 (32-bit components; 1.0 had them as `.v4.u16`), all SMs. PTX ISA, \"Special Registers: %tid\"."
);
special_xyz!(
    ntid,
    "%ntid.x",
    "%ntid.y",
    "%ntid.z",
    "`mov.u32 d, %ntid.{x,y,z};`: the block's dimensions.\n\nPTX ISA 2.0 (32-bit components; 1.0 had them as `.v4.u16`), all SMs. PTX ISA, \"Special Registers: %ntid\"."
);
special_xyz!(
    ctaid,
    "%ctaid.x",
    "%ctaid.y",
    "%ctaid.z",
    "`mov.u32 d, %ctaid.{x,y,z};`: this block's index in the grid.\n\nPTX ISA 2.0 (32-bit components; 1.0 had them as `.v4.u16`), all SMs. PTX ISA, \"Special Registers: %ctaid\"."
);

#[cfg(target_arch = "nvptx64")]
unsafe extern "C" {
    /// The CUDA device printf entry point: a format string and a buffer of arguments, each at an
    /// offset aligned to its size. The driver's JIT and ptxas provide it.
    #[link_name = "vprintf"]
    fn cuda_vprintf(format: *const u8, args: *const u8) -> i32;
}

leaf! {
    /// Device `printf` through CUDA's `vprintf(format, args)`: `args` holds the arguments in order,
    /// each at an offset aligned to its size (CUDA C++ Programming Guide, "Formatted Output"; PTX
    /// sees it as an `.extern .func vprintf`).
    ///
    /// # Safety
    ///
    /// `format` is NUL-terminated and its conversions match the arguments at `args`; string
    /// arguments are NUL-terminated.
    #[gpu_only("vprintf")]
    #[inline(always)]
    pub unsafe fn vprintf(format: *const u8, args: *const u8) {
        // SAFETY: guaranteed by the caller.
        unsafe {
            cuda_vprintf(format, args);
        }
    }
}
