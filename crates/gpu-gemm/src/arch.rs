//! The kernel crate's own leaves: one instruction (or LLVM intrinsic) each, with its manual
//! section. The only place in the crate with inline assembly.

/// `griddepcontrol.launch_dependents;` (PTX ISA 7.8, sm_90, "Parallel Synchronization and
/// Communication Instructions: griddepcontrol"): a grid launched after this one with
/// programmatic stream serialization (the caller's next kernel) may be scheduled once every CTA
/// of this grid has executed it or exited. That grid's `griddepcontrol.wait` still waits for this
/// one to complete, so where this sits affects only when the dependent's CTAs may start.
#[inline(always)]
pub(crate) fn launch_dependents() {
    // SAFETY: a scheduling hint with no operands.
    unsafe {
        core::arch::asm!(
            "griddepcontrol.launch_dependents;",
            options(nostack, preserves_flags)
        )
    };
}

/// `atom.acq_rel.gpu.global.add.u32 old, [counter], 1;` (PTX ISA 6.0, sm_70, "Parallel
/// Synchronization and Communication Instructions: atom"; "Memory Consistency Model"): adds 1 to
/// the counter and returns its value before. At GPU scope it is a release of what precedes it in
/// this thread (and what precedes that in causality order: other threads' writes before a
/// barrier this thread then passed), and an acquire of what the earlier adders released.
///
/// # Safety
///
/// `counter` is a 4-byte aligned word of global memory.
#[inline(always)]
pub(crate) unsafe fn count_acq_rel_gpu(counter: *mut u32) -> u32 {
    let before: u32;
    // SAFETY: by the contract; it orders memory, so no `nomem`.
    unsafe {
        core::arch::asm!(
            "atom.acq_rel.gpu.global.add.u32 {before}, [{counter}], 1;",
            before = out(reg32) before,
            counter = in(reg64) counter,
            options(nostack, preserves_flags),
        );
    }
    before
}

unsafe extern "llvm-intrinsic" {
    #[link_name = "llvm.nvvm.wgmma.fence.sync.aligned"]
    pub(crate) fn wgmma_fence();
    #[link_name = "llvm.nvvm.wgmma.commit_group.sync.aligned"]
    pub(crate) fn wgmma_commit_group();
    #[link_name = "llvm.nvvm.wgmma.wait_group.sync.aligned"]
    pub(crate) fn wgmma_wait_group(n: i64);
    // PTX ISA 8.0, sm_90a, "setmaxnreg": the warpgroup's per-thread register budget; both forms
    // are `.sync.aligned` (the whole warpgroup executes it).
    #[link_name = "llvm.nvvm.setmaxnreg.inc.sync.aligned.u32"]
    pub(crate) fn setmaxnreg_inc(regs: i32);
    #[link_name = "llvm.nvvm.setmaxnreg.dec.sync.aligned.u32"]
    pub(crate) fn setmaxnreg_dec(regs: i32);
    // PTX ISA 6.0, "bar, barrier": `barrier.sync.aligned id, count`, a named barrier of `count`
    // threads (convergent to LLVM).
    #[link_name = "llvm.nvvm.barrier.cta.sync.aligned.count"]
    pub(crate) fn barrier_sync_count(id: u32, count: u32);
}

pub(crate) fn dynamic_smem() -> *mut u8 {
    #[repr(C, align(1024))]
    struct Align1024(u8);
    core::intrinsics::gpu::gpu_launch_sized_workgroup_mem::<Align1024>().cast()
}

pub(crate) fn shared_addr(p: *const u8) -> u32 {
    let generic = p as u64;
    let shared: u64;
    // SAFETY: converts a shared-memory generic address.
    unsafe {
        core::arch::asm!("cvta.to.shared.u64 {s}, {g};", s = out(reg64) shared, g = in(reg64) generic, options(pure, nomem, nostack));
    }
    shared as u32
}

/// `lo` and `hi` rounded to the nearest bf16 (ties to even) and packed, `lo` in the low half:
/// one `cvt.rn.bf16x2.f32 d, hi, lo` (PTX ISA 7.0, sm_80, "cvt": the first source goes to the
/// upper half).
#[inline(always)]
pub(crate) fn bf16x2(lo: f32, hi: f32) -> u32 {
    let packed: u32;
    // SAFETY: a register-only conversion.
    unsafe {
        core::arch::asm!(
            "cvt.rn.bf16x2.f32 {d}, {hi}, {lo};",
            d = out(reg32) packed,
            hi = in(reg32) hi,
            lo = in(reg32) lo,
            options(pure, nomem, nostack, preserves_flags),
        );
    }
    packed
}
