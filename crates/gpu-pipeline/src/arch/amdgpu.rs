//! AMD leaf operations: one machine operation per function.
//!
//! References: "AMD Instinct MI300 Instruction Set Architecture" (CDNA3, gfx942; CDNA2 gfx90a is
//! the same for everything used here) and "RDNA3 Instruction Set Architecture" (gfx1100), cited
//! below as *CDNA3 ISA* and *RDNA3 ISA*; and LLVM's *AMDGPUUsage*, section "Memory Model"
//! (subsections "Memory Model GFX942", "Memory Model GFX90A", "Memory Model GFX11").
//!
//! On this nightly, `asm!` on amdgcn accepts no register operands, so only operand-free
//! instructions (`s_waitcnt`, `s_sleep`) are written as assembly. The LDS counter operations are
//! *relaxed* Rust atomics on a pointer into LDS: LLVM infers the LDS address space from
//! `gpu_launch_sized_workgroup_mem` through inlined code and selects `ds_add_u64`/`ds_read_b64`.
//! The counter's add is a release and its read an acquire, so that the counter protocol is
//! release/acquire in Rust's memory model as well as on the hardware; on an LDS-only atomic LLVM
//! narrows Rust's system scope to work-group scope, which costs nothing on gfx90a and gfx942 and a
//! `buffer_gl0_inv` after the read on gfx11 (WGP mode), as the snapshots show. If inference ever
//! failed, LLVM would emit `flat_*` atomics instead: `cargo xtask test-amd` disassembles every
//! build and fails on any `flat_`/`global_`/`buffer_` instruction in the pipeline paths.
//!
//! As in `nvptx.rs`, each leaf is written once inside `leaf! { .. }`, which gives it, on every
//! other target, a body that panics with the operation's name. The LDS atomics need no stub:
//! they are Rust atomics, valid on every target.

#[cfg(target_arch = "amdgpu")]
use core::arch::asm;
use core::sync::atomic::{AtomicU64, Ordering};

/// Panics on other targets: the named operation exists only on amdgcn.
#[cfg(not(target_arch = "amdgpu"))]
#[cold]
#[track_caller]
fn gpu_only(name: &str) -> ! {
    panic!("gpu-pipeline: `{name}` is an amdgcn operation and cannot run on this target")
}

/// [`gpu_leaf!`](super::gpu_leaf) for amdgpu: the device body on amdgpu, a panic with the
/// instruction's name through [`gpu_only`] elsewhere.
macro_rules! leaf {
    ($($leaf:tt)*) => {
        gpu_leaf! { "amdgpu"; $($leaf)* }
    };
}

leaf! {
    /// `s_waitcnt lgkmcnt(0)`: waits until every LDS, GDS, scalar-memory and FLAT operation this
    /// wave issued has completed (FLAT operations count in `lgkmcnt` as well as `vmcnt`).
    ///
    /// The data-before-signal fence of the counter protocol: *AMDGPUUsage*, "Memory Model GFX942",
    /// code sequence of `atomicrmw release, workgroup`: "s_waitcnt lgkmcnt(0) … must happen after
    /// any preceding local/generic load/store/load atomic/atomicrmw" (and the same in "Memory Model
    /// GFX11"). CDNA3 ISA and RDNA3 ISA, "Data Dependency Resolution" / `S_WAITCNT`. The assembler
    /// encodes the field for the target (the gfx9 and gfx11 encodings differ).
    #[gpu_only("s_waitcnt lgkmcnt(0)")]
    #[inline(always)]
    pub fn s_waitcnt_lgkmcnt0() {
        // SAFETY: a wait on the wave's own counters; no operands, no preconditions.
        unsafe {
            asm!("s_waitcnt lgkmcnt(0)", options(nostack));
        }
    }
}

leaf! {
    /// `s_sleep 1`: the wave sleeps about 64 clocks. Back-off for waits given a ticks hint.
    ///
    /// CDNA3 ISA / RDNA3 ISA, SOPP instructions, `S_SLEEP` ("approximately 64*SIMM16\[6:0\]
    /// clocks").
    #[gpu_only("s_sleep 1")]
    #[inline(always)]
    pub fn s_sleep_1() {
        // SAFETY: sleeping has no preconditions.
        unsafe {
            asm!("s_sleep 1", options(nostack, nomem, preserves_flags));
        }
    }
}

/// `ds_add_u64 addr, n` (no return): adds `n` to a 64-bit LDS counter, atomically, with
/// *release* ordering.
///
/// A `fetch_add(n, Release)` whose result is unused, on an LDS pointer. The release is what
/// Rust's memory model needs to order the caller's earlier slot accesses before the arrival; on
/// the hardware LLVM lowers a release of an LDS-only atomic at work-group scope (the widest
/// scope LDS has: *AMDGPUUsage*, "Memory Model GFX942", "the LDS memory has a single ... work-group
/// scope"; LLVM narrows the system scope of a Rust atomic to it for the local address space) to
/// `s_waitcnt lgkmcnt(0)` before the add (`atomicrmw release workgroup` code sequence), the same
/// instruction as the explicit data-before-signal fence. CDNA3 ISA / RDNA3 ISA, "LDS
/// Instructions": `DS_ADD_U64`.
///
/// # Safety
///
/// `counter` points to an 8-byte-aligned 64-bit counter in this work-group's LDS, and LLVM can
/// see that it was derived from the LDS base (the caller is inlined into the kernel).
#[inline(always)]
pub unsafe fn ds_add_u64(counter: *const AtomicU64, n: u64) {
    // SAFETY: guaranteed by the caller.
    unsafe { (*counter).fetch_add(n, Ordering::Release) };
}

/// `ds_read_b64 v, addr` + `s_waitcnt lgkmcnt(0)`: reads a 64-bit LDS counter, atomically, with
/// *acquire* ordering.
///
/// A `load(Acquire)` on an LDS pointer: the read of a wait that succeeds synchronises with the
/// release adds it observes, in Rust's memory model and on the hardware. LLVM lowers an acquire
/// LDS load at work-group scope to the load followed by `s_waitcnt lgkmcnt(0)` (*AMDGPUUsage*,
/// "Memory Model GFX942" / "GFX11", `load atomic acquire workgroup` on the local address space),
/// which a relaxed read needs anyway before its value is compared; no cache maintenance (LDS is
/// not cached). CDNA3 ISA / RDNA3 ISA, "LDS Instructions": `DS_READ_B64` (`DS_LOAD_B64` in RDNA3
/// naming).
///
/// # Safety
///
/// As for [`ds_add_u64`].
#[inline(always)]
pub unsafe fn ds_read_u64_acquire(counter: *const AtomicU64) -> u64 {
    // SAFETY: guaranteed by the caller.
    unsafe { (*counter).load(Ordering::Acquire) }
}

/// `ds_read_b64 v, addr`: reads a 64-bit LDS counter, atomically, without ordering (the checked
/// builds' arrival counts, read after a wait that already acquired).
///
/// # Safety
///
/// As for [`ds_add_u64`].
#[inline(always)]
pub unsafe fn ds_read_u64_relaxed(counter: *const AtomicU64) -> u64 {
    // SAFETY: guaranteed by the caller.
    unsafe { (*counter).load(Ordering::Relaxed) }
}

/// `ds_write_b64 addr, v`: writes a 64-bit LDS word, atomically, without ordering (the checked
/// builds' diagnostics word, written once before the block barrier).
///
/// A relaxed atomic store, not a volatile one: LLVM infers the LDS address space of atomics
/// through inlined code, while a volatile access through a generic pointer stays `flat_*`.
/// CDNA3 ISA / RDNA3 ISA, "LDS Instructions": `DS_WRITE_B64` (`DS_STORE_B64` in RDNA3 naming).
///
/// # Safety
///
/// As for [`ds_add_u64`].
#[inline(always)]
pub unsafe fn ds_write_u64_relaxed(counter: *const AtomicU64, value: u64) {
    // SAFETY: guaranteed by the caller.
    unsafe { (*counter).store(value, Ordering::Relaxed) };
}

/// A sequentially consistent fence at system scope: Rust's `fence(SeqCst)`, LLVM's
/// `fence seq_cst` (the code sequence of *AMDGPUUsage*, "Memory Model GFX942" / "Memory Model
/// GFX11", for a system-scope `fence seq_cst`), so that a hang record written to host-mapped
/// memory is complete before its `magic` word.
#[inline(always)]
pub fn fence_seq_cst() {
    core::sync::atomic::fence(Ordering::SeqCst);
}

/// The active lanes of the wave (`v_cmp`/`s_mov` of EXEC through `llvm.amdgcn.ballot.i64`; on
/// wave32 the high half is zero). RDNA3/CDNA3 ISA, "EXEC register".
#[inline(always)]
#[must_use]
pub fn active_lanes() -> u64 {
    ballot(true)
}

leaf! {
    /// The value of the lowest active lane (`v_readfirstlane_b32`, through
    /// `llvm.amdgcn.readfirstlane`). CDNA3 ISA / RDNA3 ISA, VOP1 `V_READFIRSTLANE_B32`.
    #[gpu_only("v_readfirstlane_b32")]
    #[inline(always)]
    #[must_use]
    pub fn readfirstlane(value: u32) -> u32 {
        core::arch::amdgpu::readfirstlane_u32(value)
    }
}

leaf! {
    /// The active lanes for which `predicate` holds (`v_cmp` into an SGPR pair through
    /// `llvm.amdgcn.ballot.i64`; on wave32 the high half is zero). CDNA3 ISA / RDNA3 ISA, "EXEC
    /// register" and VOPC.
    #[gpu_only("llvm.amdgcn.ballot.i64")]
    #[inline(always)]
    #[must_use]
    pub fn ballot(predicate: bool) -> u64 {
        core::arch::amdgpu::ballot(predicate)
    }
}

leaf! {
    /// The number of lanes of `mask` below the calling lane (`v_mbcnt_lo_u32_b32` then
    /// `v_mbcnt_hi_u32_b32`; CDNA3 ISA / RDNA3 ISA, VOP3 `V_MBCNT_LO_U32_B32`,
    /// `V_MBCNT_HI_U32_B32`).
    #[gpu_only("v_mbcnt_lo/hi_u32_b32")]
    #[inline(always)]
    #[must_use]
    pub fn lanes_below(mask: u64) -> u32 {
        core::arch::amdgpu::mbcnt_hi(
            (mask >> 32) as u32,
            core::arch::amdgpu::mbcnt_lo(mask as u32, 0),
        )
    }
}

leaf! {
    /// This work-group's index in the grid (x, y, z): `llvm.amdgcn.workgroup.id.{x,y,z}`, system
    /// SGPRs set up by the dispatch (*AMDGPUUsage*, "Initial Kernel Execution State").
    #[gpu_only("llvm.amdgcn.workgroup.id")]
    #[inline(always)]
    #[must_use]
    pub fn workgroup_id() -> [u32; 3] {
        [
            core::arch::amdgpu::workgroup_id_x(),
            core::arch::amdgpu::workgroup_id_y(),
            core::arch::amdgpu::workgroup_id_z(),
        ]
    }
}

leaf! {
    /// This work-item's x index in its work-group: `llvm.amdgcn.workitem.id.x`, VGPR0 at kernel
    /// entry (*AMDGPUUsage*, "Initial Kernel Execution State").
    #[gpu_only("llvm.amdgcn.workitem.id.x")]
    #[inline(always)]
    #[must_use]
    pub fn workitem_id_x() -> u32 {
        core::arch::amdgpu::workitem_id_x()
    }
}

#[cfg(target_arch = "amdgpu")]
unsafe extern "llvm-intrinsic" {
    /// `llvm.readsteadycounter`: the constant-rate real-time counter (AMDGPUUsage, "AMDGPU
    /// intrinsics"): `s_memrealtime` on gfx9 (CDNA3 ISA, "S_MEMREALTIME"), `s_sendmsg_rtn_b64`
    /// with `MSG_RTN_GET_REALTIME` on gfx11 (RDNA3 ISA, "S_SENDMSG_RTN_B64").
    #[link_name = "llvm.readsteadycounter"]
    fn readsteadycounter() -> u64;
    /// `llvm.trap`: `s_trap 2` (AMDGPUUsage, "Trap Handler ABI").
    #[link_name = "llvm.trap"]
    fn llvm_trap() -> !;
}

leaf! {
    /// Now in nanoseconds from the GPU's real-time counter, which runs at a constant 100 MHz on
    /// gfx90a, gfx942 and gfx11 (AMDGPUUsage, "llvm.readsteadycounter"; ROCm's `wall_clock64`
    /// reports the same rate).
    #[gpu_only("llvm.readsteadycounter")]
    #[inline(always)]
    #[must_use]
    pub fn realtime_ns() -> u64 {
        // SAFETY: reads a counter; no preconditions.
        let ticks = unsafe { readsteadycounter() };
        ticks * 10
    }
}

leaf! {
    /// `s_trap 2` (through `llvm.trap`): stops the wave with an error the host runtime reports
    /// (AMDGPUUsage, "Trap Handler ABI": trap ID 2 is `llvm.trap`).
    #[gpu_only("s_trap 2")]
    #[inline(always)]
    pub fn trap() -> ! {
        // SAFETY: ends the wave; never returns.
        unsafe {
            llvm_trap()
        }
    }
}
