//! NVIDIA leaves of the Hopper toolkit: one PTX instruction form (or one LLVM intrinsic) per
//! function. The forms the GEMM uses are written exactly as it writes them (same template, same
//! operand classes, same options, or the same intrinsic), so that a kernel moved onto them emits
//! the same PTX.
//!
//! The collectives that LLVM knows (`wgmma.fence/commit_group/wait_group`, `setmaxnreg`,
//! `barrier.sync.aligned`, `bar.arrive`) are called through their `llvm.nvvm.*` intrinsics, which
//! LLVM treats as `convergent`; inline assembly never is, so an `.aligned` instruction written as
//! assembly must not sit under lane-dependent control flow (the `# Safety` sections say so).
//!
//! Register-only conversions (`cvt`) are `pure, nomem`; nothing that orders or waits is.

#[cfg(target_arch = "nvptx64")]
use core::arch::asm;

#[cfg(not(target_arch = "nvptx64"))]
use super::gpu_only;

#[cfg(target_arch = "nvptx64")]
unsafe extern "llvm-intrinsic" {
    #[link_name = "llvm.nvvm.wgmma.fence.sync.aligned"]
    fn llvm_wgmma_fence();
    #[link_name = "llvm.nvvm.wgmma.commit_group.sync.aligned"]
    fn llvm_wgmma_commit_group();
    #[link_name = "llvm.nvvm.wgmma.wait_group.sync.aligned"]
    fn llvm_wgmma_wait_group(n: i64);
    #[link_name = "llvm.nvvm.setmaxnreg.inc.sync.aligned.u32"]
    fn llvm_setmaxnreg_inc(regs: i32);
    #[link_name = "llvm.nvvm.setmaxnreg.dec.sync.aligned.u32"]
    fn llvm_setmaxnreg_dec(regs: i32);
    #[link_name = "llvm.nvvm.barrier.cta.sync.aligned.count"]
    fn llvm_barrier_cta_sync_aligned_count(id: u32, count: u32);
    #[link_name = "llvm.nvvm.barrier.cta.arrive.aligned.count"]
    fn llvm_barrier_cta_arrive_aligned_count(id: u32, count: u32);
    #[link_name = "llvm.nvvm.shfl.sync.bfly.f32"]
    fn llvm_shfl_sync_bfly_f32(mask: u32, value: f32, lane_mask: u32, clamp: u32) -> f32;
}

/// `setmaxnreg`'s operand range: 24 to 256, a multiple of 8 (PTX ISA, "setmaxnreg").
pub(crate) const fn setmaxnreg_in_range(regs: u32) -> bool {
    regs >= 24 && regs <= 256 && regs % 8 == 0
}

leaf! {
    /// `wgmma.fence.sync.aligned;` (intrinsic `llvm.nvvm.wgmma.fence.sync.aligned`): orders the
    /// warpgroup's earlier register and shared-memory accesses before the `wgmma.mma_async` that
    /// follow; needed before the first `wgmma` and whenever its accumulator or A registers were
    /// touched by other instructions.
    ///
    /// PTX ISA 8.0, sm_90a. PTX ISA, "Asynchronous Warpgroup Level Matrix Multiply-Accumulate
    /// Instructions: wgmma.fence".
    ///
    /// # Safety
    ///
    /// The whole warpgroup executes it converged: it is `.aligned` (PTX ISA: every thread of the
    /// warpgroup executes the same instruction, or the behaviour is undefined), and to LLVM the
    /// intrinsic is convergent only as far as the surrounding control flow keeps it so.
    #[gpu_only("wgmma.fence.sync.aligned")]
    #[inline(always)]
    pub unsafe fn wgmma_fence() {
        // SAFETY: by the contract, the whole warpgroup; a fence without operands.
        unsafe { llvm_wgmma_fence() }
    }
}

leaf! {
    /// `wgmma.commit_group.sync.aligned;` (intrinsic
    /// `llvm.nvvm.wgmma.commit_group.sync.aligned`): closes the warpgroup's current group of
    /// `wgmma.mma_async` operations.
    ///
    /// PTX ISA 8.0, sm_90a. PTX ISA, "wgmma.commit_group".
    ///
    /// # Safety
    ///
    /// The whole warpgroup executes it converged: it is `.aligned` (PTX ISA: every thread of the
    /// warpgroup executes the same instruction, or the behaviour is undefined), and to LLVM the
    /// intrinsic is convergent only as far as the surrounding control flow keeps it so.
    #[gpu_only("wgmma.commit_group.sync.aligned")]
    #[inline(always)]
    pub unsafe fn wgmma_commit_group() {
        // SAFETY: by the contract; it groups only the warpgroup's own earlier wgmmas.
        unsafe { llvm_wgmma_commit_group() }
    }
}

leaf! {
    /// `wgmma.wait_group.sync.aligned N;` (intrinsic `llvm.nvvm.wgmma.wait_group.sync.aligned`):
    /// waits until at most `N` of the warpgroup's committed wgmma groups are pending; the
    /// accumulators of the completed ones may then be read.
    ///
    /// PTX ISA 8.0, sm_90a. PTX ISA, "wgmma.wait_group".
    ///
    /// # Safety
    ///
    /// The whole warpgroup executes it converged: it is `.aligned` (PTX ISA: every thread of the
    /// warpgroup executes the same instruction, or the behaviour is undefined), and to LLVM the
    /// intrinsic is convergent only as far as the surrounding control flow keeps it so.
    #[gpu_only("wgmma.wait_group.sync.aligned")]
    #[inline(always)]
    pub unsafe fn wgmma_wait_group<const N: u32>() {
        // SAFETY: by the contract; a wait on the warpgroup's own wgmmas, `N` an immediate.
        unsafe { llvm_wgmma_wait_group(N as i64) }
    }
}

leaf! {
    /// `trap` where `a` and `b` are both zero (`or` of the two, `setp.eq`, `@p trap`): ends the
    /// kernel with an error; otherwise nothing.
    ///
    /// Its use is the order it imposes: an instruction after it cannot issue before `a` is
    /// computed, since the guard reads `a`. With `b` a value that is never zero but that ptxas
    /// cannot prove nonzero (a kernel parameter no branch compares, such as an output's
    /// address: ptxas folds a guard that a dominating comparison decides), the trap never
    /// fires and costs two logic instructions and a branch. `wgmma::wait_group_after` puts a
    /// wait behind it.
    ///
    /// PTX ISA 1.0 (`or`, `setp`, `trap`, guard predicates). PTX ISA, "Comparison and Selection
    /// Instructions: setp", "Miscellaneous Instructions: trap" and "Instruction Statements:
    /// Predicated Execution".
    #[gpu_only("trap (guarded)")]
    #[inline(always)]
    pub fn trap_if_both_zero(a: u32, b: u64) {
        // SAFETY: a register-only test; `trap` aborts the kernel, which is not undefined
        // behaviour (the launch reports an error).
        unsafe {
            asm!(
                "{{ .reg .pred p; .reg .b64 t; cvt.u64.u32 t, {a}; or.b64 t, t, {b}; setp.eq.u64 p, t, 0; @p trap; }}",
                a = in(reg32) a,
                b = in(reg64) b,
                options(nostack, preserves_flags),
            );
        }
    }
}

leaf! {
    /// `setmaxnreg.inc.sync.aligned.u32 REGS;` (intrinsic
    /// `llvm.nvvm.setmaxnreg.inc.sync.aligned.u32`): raises the per-thread register budget of
    /// the executing warpgroup to `REGS`, waiting until the registers are free in the SM's pool.
    ///
    /// PTX ISA 8.0, sm_90a. PTX ISA, "Miscellaneous Instructions: setmaxnreg".
    ///
    /// # Safety
    ///
    /// The whole warpgroup executes it; `REGS` is in 24..=256, a multiple of 8, and not below the
    /// warpgroup's current budget; the registers it asks for are released by other warpgroups
    /// (`setmaxnreg.dec`), or it waits for ever. The kernel needs a launch bound (`.maxntid`), or
    /// ptxas ignores it.
    #[gpu_only("setmaxnreg.inc.sync.aligned.u32")]
    #[inline(always)]
    pub unsafe fn setmaxnreg_inc<const REGS: u32>() {
        const { assert!(setmaxnreg_in_range(REGS), "gpu-hopper: setmaxnreg takes 24 to 256 registers, a multiple of 8") };
        // SAFETY: guaranteed by the caller; `REGS` is an immediate in range.
        unsafe { llvm_setmaxnreg_inc(REGS as i32) }
    }
}

leaf! {
    /// `setmaxnreg.dec.sync.aligned.u32 REGS;` (intrinsic
    /// `llvm.nvvm.setmaxnreg.dec.sync.aligned.u32`): lowers the per-thread register budget of
    /// the executing warpgroup to `REGS`, releasing the rest to the SM's pool.
    ///
    /// PTX ISA 8.0, sm_90a. PTX ISA, "Miscellaneous Instructions: setmaxnreg".
    ///
    /// # Safety
    ///
    /// The whole warpgroup executes it; `REGS` is in 24..=256, a multiple of 8, and not above the
    /// warpgroup's current budget; the code after it needs no more than `REGS` registers.
    #[gpu_only("setmaxnreg.dec.sync.aligned.u32")]
    #[inline(always)]
    pub unsafe fn setmaxnreg_dec<const REGS: u32>() {
        const { assert!(setmaxnreg_in_range(REGS), "gpu-hopper: setmaxnreg takes 24 to 256 registers, a multiple of 8") };
        // SAFETY: guaranteed by the caller; `REGS` is an immediate in range.
        unsafe { llvm_setmaxnreg_dec(REGS as i32) }
    }
}

leaf! {
    /// `barrier.sync.aligned id, count;` (intrinsic `llvm.nvvm.barrier.cta.sync.aligned.count`):
    /// the calling warp arrives at named barrier `id` and waits until `count` threads have
    /// arrived. Memory accesses before it are ordered before those after it, for the threads that
    /// take part.
    ///
    /// PTX ISA 6.0, sm_30 (`barrier` with `.aligned`; the `bar` spelling is older). PTX ISA,
    /// "Parallel Synchronization and Communication Instructions: bar, barrier".
    ///
    /// # Safety
    ///
    /// `id` is in 0..=15 and no other use of that barrier is in flight with a different `count`;
    /// `count` is a non-zero multiple of 32 no larger than the block; every thread of each warp
    /// taking part executes it (`.aligned`), and exactly `count` threads take part per phase, or
    /// the barrier hangs.
    #[gpu_only("barrier.sync.aligned")]
    #[inline(always)]
    pub unsafe fn barrier_sync_aligned(id: u32, count: u32) {
        // SAFETY: guaranteed by the caller; a convergent intrinsic.
        unsafe { llvm_barrier_cta_sync_aligned_count(id, count) }
    }
}

leaf! {
    /// `barrier.arrive.aligned id, count;` (intrinsic
    /// `llvm.nvvm.barrier.cta.arrive.aligned.count`): the calling warp arrives at named barrier
    /// `id` without waiting (a producer's half of a barrier whose consumers `barrier.sync`). Its
    /// memory accesses before the arrival are visible to the waiters once the barrier completes.
    ///
    /// PTX ISA 6.0, sm_30. PTX ISA, "bar, barrier".
    ///
    /// # Safety
    ///
    /// As [`barrier_sync_aligned`]: the same `id` and `count` as the threads that wait on it.
    #[gpu_only("barrier.arrive.aligned")]
    #[inline(always)]
    pub unsafe fn barrier_arrive_aligned(id: u32, count: u32) {
        // SAFETY: guaranteed by the caller; a convergent intrinsic.
        unsafe { llvm_barrier_cta_arrive_aligned_count(id, count) }
    }
}

leaf! {
    /// `griddepcontrol.launch_dependents;`: a grid launched after this one with programmatic
    /// stream serialization may be scheduled once every CTA of this grid has executed it or
    /// exited. The dependent's `griddepcontrol.wait` still waits for this grid to complete, so
    /// where it sits changes only when the dependent's CTAs may start.
    ///
    /// PTX ISA 7.8, sm_90. PTX ISA, "Parallel Synchronization and Communication Instructions:
    /// griddepcontrol".
    #[gpu_only("griddepcontrol.launch_dependents")]
    #[inline(always)]
    pub fn griddepcontrol_launch_dependents() {
        // SAFETY: a scheduling hint with no operands.
        unsafe {
            asm!(
                "griddepcontrol.launch_dependents;",
                options(nostack, preserves_flags)
            )
        };
    }
}

leaf! {
    /// `griddepcontrol.wait;`: waits until every prerequisite grid of this one (under
    /// programmatic dependent launch) has completed and its memory operations are visible.
    /// Without programmatic dependent launch it returns at once.
    ///
    /// PTX ISA 7.8, sm_90. PTX ISA, "griddepcontrol".
    #[gpu_only("griddepcontrol.wait")]
    #[inline(always)]
    pub fn griddepcontrol_wait() {
        // SAFETY: a wait with no operands; it orders memory, so no `nomem`.
        unsafe { asm!("griddepcontrol.wait;", options(nostack, preserves_flags)) };
    }
}

leaf! {
    /// `cvt.rn.bf16x2.f32 d, hi, lo;`: `lo` and `hi` rounded to the nearest bf16 (ties to even)
    /// and packed, `lo` in the low half (the first source goes to the upper half).
    ///
    /// PTX ISA 7.0, sm_80. PTX ISA, "Data Movement and Conversion Instructions: cvt".
    #[gpu_only("cvt.rn.bf16x2.f32")]
    #[inline(always)]
    #[must_use]
    pub fn cvt_rn_bf16x2_f32(lo: f32, hi: f32) -> u32 {
        let packed: u32;
        // SAFETY: a register-only conversion.
        unsafe {
            asm!(
                "cvt.rn.bf16x2.f32 {d}, {hi}, {lo};",
                d = out(reg32) packed,
                hi = in(reg32) hi,
                lo = in(reg32) lo,
                options(pure, nomem, nostack, preserves_flags),
            );
        }
        packed
    }
}

leaf! {
    /// `atom.acq_rel.gpu.global.add.u32 old, [counter], 1;`: adds 1 to the counter and returns
    /// its value before. At GPU scope it is a release of what precedes it in this thread (and
    /// what precedes that in causality order) and an acquire of what the earlier adders
    /// released: the last of several CTAs to count sees all the others' writes.
    ///
    /// PTX ISA 6.0, sm_70. PTX ISA, "Parallel Synchronization and Communication Instructions:
    /// atom" and "Memory Consistency Model".
    ///
    /// # Safety
    ///
    /// `counter` is a 4-byte aligned word of global memory.
    #[gpu_only("atom.acq_rel.gpu.global.add.u32")]
    #[inline(always)]
    pub unsafe fn atom_add_acq_rel_gpu_global_u32(counter: *mut u32) -> u32 {
        let before: u32;
        // SAFETY: by the contract; it orders memory, so no `nomem`.
        unsafe {
            asm!(
                "atom.acq_rel.gpu.global.add.u32 {before}, [{counter}], 1;",
                before = out(reg32) before,
                counter = in(reg64) counter,
                options(nostack, preserves_flags),
            );
        }
        before
    }
}

leaf! {
    /// The kernel's dynamic shared memory base as a generic pointer, 1024-byte aligned (the
    /// alignment a 128-byte-swizzled TMA box or wgmma operand needs): rustc's
    /// `gpu_launch_sized_workgroup_mem` intrinsic, an `extern .shared .align 1024` array of the
    /// size given at launch.
    ///
    /// PTX ISA 2.0 (`.extern .shared` arrays), all SMs. PTX ISA, "State Spaces: Shared State
    /// Space".
    #[gpu_only("dynamic .shared base")]
    #[inline(always)]
    #[must_use]
    pub fn dynamic_smem_1024() -> *mut u8 {
        #[repr(C, align(1024))]
        struct Align1024(u8);
        core::intrinsics::gpu::gpu_launch_sized_workgroup_mem::<Align1024>().cast()
    }
}

leaf! {
    /// `cp.reduce.async.bulk.tensor.Dd.global.shared::cta.add.tile.bulk_group [map, {c0, ..}],
    /// [src];` for `D` in 1..=5: the tensor-copy engine adds a box from shared memory into the
    /// tensor map's global tensor at the coordinates `c[..D]`, element-wise and atomically per
    /// element, tracked by the thread's bulk async-group. The element type is the map's.
    ///
    /// PTX ISA 8.0, sm_90. PTX ISA, "Data Movement and Conversion Instructions:
    /// cp.reduce.async.bulk.tensor".
    ///
    /// # Safety
    ///
    /// As gpu-pipeline's `cp_async_bulk_tensor_store`: `1 <= D <= 5` and the map has `D`
    /// dimensions and an element type that `.add` supports; every coordinate of `c[..D]` is
    /// `>= 0` (a negative one faults on the H200: the toolkit's `tma::tensor_reduce_add`); `src`
    /// is a `.shared::cta` address of this CTA, aligned as the map's swizzle needs, holding the
    /// box and not written until a `cp.async.bulk.wait_group.read` covers the copy.
    #[gpu_only("cp.reduce.async.bulk.tensor.global.shared::cta.add.tile.bulk_group")]
    #[inline(always)]
    pub unsafe fn cp_reduce_async_bulk_tensor_add<const D: usize>(map: *const u8, c: [i32; 5], src: u32) {
        // SAFETY: guaranteed by the caller.
        unsafe {
            match D {
                1 => asm!("cp.reduce.async.bulk.tensor.1d.global.shared::cta.add.tile.bulk_group [{m}, {{{c0}}}], [{s}];", m = in(reg64) map, s = in(reg32) src, c0 = in(reg32) c[0], options(nostack, preserves_flags)),
                2 => asm!("cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group [{m}, {{{c0}, {c1}}}], [{s}];", m = in(reg64) map, s = in(reg32) src, c0 = in(reg32) c[0], c1 = in(reg32) c[1], options(nostack, preserves_flags)),
                3 => asm!("cp.reduce.async.bulk.tensor.3d.global.shared::cta.add.tile.bulk_group [{m}, {{{c0}, {c1}, {c2}}}], [{s}];", m = in(reg64) map, s = in(reg32) src, c0 = in(reg32) c[0], c1 = in(reg32) c[1], c2 = in(reg32) c[2], options(nostack, preserves_flags)),
                4 => asm!("cp.reduce.async.bulk.tensor.4d.global.shared::cta.add.tile.bulk_group [{m}, {{{c0}, {c1}, {c2}, {c3}}}], [{s}];", m = in(reg64) map, s = in(reg32) src, c0 = in(reg32) c[0], c1 = in(reg32) c[1], c2 = in(reg32) c[2], c3 = in(reg32) c[3], options(nostack, preserves_flags)),
                _ => asm!("cp.reduce.async.bulk.tensor.5d.global.shared::cta.add.tile.bulk_group [{m}, {{{c0}, {c1}, {c2}, {c3}, {c4}}}], [{s}];", m = in(reg64) map, s = in(reg32) src, c0 = in(reg32) c[0], c1 = in(reg32) c[1], c2 = in(reg32) c[2], c3 = in(reg32) c[3], c4 = in(reg32) c[4], options(nostack, preserves_flags)),
            }
        }
    }
}

leaf! {
    /// `cp.reduce.async.bulk.tensor.Dd.global.shared::cta.min.tile.bulk_group [map, {c0, ..}],
    /// [src];`: as [`cp_reduce_async_bulk_tensor_add`], with the element-wise minimum.
    ///
    /// PTX ISA 8.0, sm_90. PTX ISA, "cp.reduce.async.bulk.tensor".
    ///
    /// # Safety
    ///
    /// As [`cp_reduce_async_bulk_tensor_add`], for an element type that `.min` supports.
    #[gpu_only("cp.reduce.async.bulk.tensor.global.shared::cta.min.tile.bulk_group")]
    #[inline(always)]
    pub unsafe fn cp_reduce_async_bulk_tensor_min<const D: usize>(map: *const u8, c: [i32; 5], src: u32) {
        // SAFETY: guaranteed by the caller.
        unsafe {
            match D {
                1 => asm!("cp.reduce.async.bulk.tensor.1d.global.shared::cta.min.tile.bulk_group [{m}, {{{c0}}}], [{s}];", m = in(reg64) map, s = in(reg32) src, c0 = in(reg32) c[0], options(nostack, preserves_flags)),
                2 => asm!("cp.reduce.async.bulk.tensor.2d.global.shared::cta.min.tile.bulk_group [{m}, {{{c0}, {c1}}}], [{s}];", m = in(reg64) map, s = in(reg32) src, c0 = in(reg32) c[0], c1 = in(reg32) c[1], options(nostack, preserves_flags)),
                3 => asm!("cp.reduce.async.bulk.tensor.3d.global.shared::cta.min.tile.bulk_group [{m}, {{{c0}, {c1}, {c2}}}], [{s}];", m = in(reg64) map, s = in(reg32) src, c0 = in(reg32) c[0], c1 = in(reg32) c[1], c2 = in(reg32) c[2], options(nostack, preserves_flags)),
                4 => asm!("cp.reduce.async.bulk.tensor.4d.global.shared::cta.min.tile.bulk_group [{m}, {{{c0}, {c1}, {c2}, {c3}}}], [{s}];", m = in(reg64) map, s = in(reg32) src, c0 = in(reg32) c[0], c1 = in(reg32) c[1], c2 = in(reg32) c[2], c3 = in(reg32) c[3], options(nostack, preserves_flags)),
                _ => asm!("cp.reduce.async.bulk.tensor.5d.global.shared::cta.min.tile.bulk_group [{m}, {{{c0}, {c1}, {c2}, {c3}, {c4}}}], [{s}];", m = in(reg64) map, s = in(reg32) src, c0 = in(reg32) c[0], c1 = in(reg32) c[1], c2 = in(reg32) c[2], c3 = in(reg32) c[3], c4 = in(reg32) c[4], options(nostack, preserves_flags)),
            }
        }
    }
}

leaf! {
    /// `cp.reduce.async.bulk.tensor.Dd.global.shared::cta.max.tile.bulk_group [map, {c0, ..}],
    /// [src];`: as [`cp_reduce_async_bulk_tensor_add`], with the element-wise maximum.
    ///
    /// PTX ISA 8.0, sm_90. PTX ISA, "cp.reduce.async.bulk.tensor".
    ///
    /// # Safety
    ///
    /// As [`cp_reduce_async_bulk_tensor_add`], for an element type that `.max` supports.
    #[gpu_only("cp.reduce.async.bulk.tensor.global.shared::cta.max.tile.bulk_group")]
    #[inline(always)]
    pub unsafe fn cp_reduce_async_bulk_tensor_max<const D: usize>(map: *const u8, c: [i32; 5], src: u32) {
        // SAFETY: guaranteed by the caller.
        unsafe {
            match D {
                1 => asm!("cp.reduce.async.bulk.tensor.1d.global.shared::cta.max.tile.bulk_group [{m}, {{{c0}}}], [{s}];", m = in(reg64) map, s = in(reg32) src, c0 = in(reg32) c[0], options(nostack, preserves_flags)),
                2 => asm!("cp.reduce.async.bulk.tensor.2d.global.shared::cta.max.tile.bulk_group [{m}, {{{c0}, {c1}}}], [{s}];", m = in(reg64) map, s = in(reg32) src, c0 = in(reg32) c[0], c1 = in(reg32) c[1], options(nostack, preserves_flags)),
                3 => asm!("cp.reduce.async.bulk.tensor.3d.global.shared::cta.max.tile.bulk_group [{m}, {{{c0}, {c1}, {c2}}}], [{s}];", m = in(reg64) map, s = in(reg32) src, c0 = in(reg32) c[0], c1 = in(reg32) c[1], c2 = in(reg32) c[2], options(nostack, preserves_flags)),
                4 => asm!("cp.reduce.async.bulk.tensor.4d.global.shared::cta.max.tile.bulk_group [{m}, {{{c0}, {c1}, {c2}, {c3}}}], [{s}];", m = in(reg64) map, s = in(reg32) src, c0 = in(reg32) c[0], c1 = in(reg32) c[1], c2 = in(reg32) c[2], c3 = in(reg32) c[3], options(nostack, preserves_flags)),
                _ => asm!("cp.reduce.async.bulk.tensor.5d.global.shared::cta.max.tile.bulk_group [{m}, {{{c0}, {c1}, {c2}, {c3}, {c4}}}], [{s}];", m = in(reg64) map, s = in(reg32) src, c0 = in(reg32) c[0], c1 = in(reg32) c[1], c2 = in(reg32) c[2], c3 = in(reg32) c[3], c4 = in(reg32) c[4], options(nostack, preserves_flags)),
            }
        }
    }
}

leaf! {
    /// `cp.async.bulk.prefetch.tensor.Dd.L2.global.tile [map, {c0, ..}];` for `D` in 1..=5: the
    /// tensor-copy engine brings the box of the tensor map at the coordinates `c[..D]` into the
    /// L2 cache, ahead of a tensor load of it. Nothing completes on a barrier; it is a hint.
    ///
    /// PTX ISA 8.0, sm_90. PTX ISA, "Data Movement and Conversion Instructions:
    /// cp.async.bulk.prefetch.tensor".
    ///
    /// # Safety
    ///
    /// `1 <= D <= 5` and the map has `D` dimensions; `map` is the generic address of a valid
    /// tensor map in global (or constant/param) memory, 64-byte aligned.
    #[gpu_only("cp.async.bulk.prefetch.tensor.L2.global.tile")]
    #[inline(always)]
    pub unsafe fn cp_async_bulk_prefetch_tensor<const D: usize>(map: *const u8, c: [i32; 5]) {
        // SAFETY: guaranteed by the caller; a prefetch writes nothing the program sees.
        unsafe {
            match D {
                1 => asm!("cp.async.bulk.prefetch.tensor.1d.L2.global.tile [{m}, {{{c0}}}];", m = in(reg64) map, c0 = in(reg32) c[0], options(nostack, preserves_flags)),
                2 => asm!("cp.async.bulk.prefetch.tensor.2d.L2.global.tile [{m}, {{{c0}, {c1}}}];", m = in(reg64) map, c0 = in(reg32) c[0], c1 = in(reg32) c[1], options(nostack, preserves_flags)),
                3 => asm!("cp.async.bulk.prefetch.tensor.3d.L2.global.tile [{m}, {{{c0}, {c1}, {c2}}}];", m = in(reg64) map, c0 = in(reg32) c[0], c1 = in(reg32) c[1], c2 = in(reg32) c[2], options(nostack, preserves_flags)),
                4 => asm!("cp.async.bulk.prefetch.tensor.4d.L2.global.tile [{m}, {{{c0}, {c1}, {c2}, {c3}}}];", m = in(reg64) map, c0 = in(reg32) c[0], c1 = in(reg32) c[1], c2 = in(reg32) c[2], c3 = in(reg32) c[3], options(nostack, preserves_flags)),
                _ => asm!("cp.async.bulk.prefetch.tensor.5d.L2.global.tile [{m}, {{{c0}, {c1}, {c2}, {c3}, {c4}}}];", m = in(reg64) map, c0 = in(reg32) c[0], c1 = in(reg32) c[1], c2 = in(reg32) c[2], c3 = in(reg32) c[3], c4 = in(reg32) c[4], options(nostack, preserves_flags)),
            }
        }
    }
}

leaf! {
    /// `atom.release.cta.shared.add.u64 d, [addr], n;`: adds `n` to a 64-bit shared-memory word
    /// and returns its value before, a release at CTA scope (checked builds' named barriers count
    /// their arrivals with it).
    ///
    /// PTX ISA 6.0, sm_70. PTX ISA, "Parallel Synchronization and Communication Instructions:
    /// atom" (`.release`, `.cta`) and "Memory Consistency Model: Scope".
    ///
    /// # Safety
    ///
    /// `addr` is the `.shared::cta` address of an 8-byte-aligned 64-bit word.
    #[gpu_only("atom.release.cta.shared.add.u64")]
    #[inline(always)]
    pub unsafe fn atom_add_release_cta_shared_u64(addr: u32, n: u64) -> u64 {
        let before: u64;
        // SAFETY: by the contract; it orders memory, so no `nomem`.
        unsafe {
            asm!(
                "atom.release.cta.shared.add.u64 {before}, [{a}], {n};",
                before = out(reg64) before,
                a = in(reg32) addr,
                n = in(reg64) n,
                options(nostack, preserves_flags),
            );
        }
        before
    }
}

leaf! {
    /// `ld.acquire.cta.shared.u64 d, [addr];`: reads a 64-bit shared-memory word, acquire at CTA
    /// scope.
    ///
    /// PTX ISA 6.0, sm_70. PTX ISA, "Data Movement and Conversion Instructions: ld" (`.acquire`,
    /// `.cta`).
    ///
    /// # Safety
    ///
    /// `addr` is the `.shared::cta` address of an 8-byte-aligned 64-bit word.
    #[gpu_only("ld.acquire.cta.shared.u64")]
    #[inline(always)]
    pub unsafe fn ld_acquire_cta_shared_u64(addr: u32) -> u64 {
        let value: u64;
        // SAFETY: by the contract; a load that orders what follows, so no `nomem`.
        unsafe {
            asm!(
                "ld.acquire.cta.shared.u64 {d}, [{a}];",
                d = out(reg64) value,
                a = in(reg32) addr,
                options(nostack, preserves_flags),
            );
        }
        value
    }
}

leaf! {
    /// `shfl.sync.bfly.b32 d, value, lane_mask, 0x1f, mask;`: the `value` of lane
    /// `lane ^ lane_mask` (a butterfly step: attention's row maxima and sums over the four lanes
    /// that hold a row of a `wgmma` accumulator).
    ///
    /// Through LLVM's convergent intrinsic `llvm.nvvm.shfl.sync.bfly.f32`, not inline assembly.
    ///
    /// PTX ISA 6.0, sm_30. PTX ISA, "Data Movement and Conversion Instructions: shfl.sync".
    ///
    /// # Safety
    ///
    /// The calling lane and its partner are in `mask`, and every lane of `mask` executes a
    /// `shfl.sync` with the same mask.
    #[gpu_only("shfl.sync.bfly.b32")]
    #[inline(always)]
    #[must_use]
    pub unsafe fn shfl_sync_bfly_f32(mask: u32, value: f32, lane_mask: u32) -> f32 {
        // SAFETY: guaranteed by the caller (all lanes of the mask take part).
        unsafe { llvm_shfl_sync_bfly_f32(mask, value, lane_mask, 0x1f) }
    }
}

leaf! {
    /// `ex2.approx.ftz.f32 d, x;`: 2^x, with subnormal inputs and results flushed to zero; 2^-inf
    /// is +0 (attention's softmax in base 2, the scale's log2(e) folded into its factor). Maximum
    /// relative error 2^-22 over the whole range (the manual's "ex2" table).
    ///
    /// PTX ISA 1.0 (`.ftz` form), all SMs. PTX ISA, "Floating Point Instructions: ex2".
    #[gpu_only("ex2.approx.ftz.f32")]
    #[inline(always)]
    #[must_use]
    pub fn ex2_approx_ftz_f32(x: f32) -> f32 {
        let y: f32;
        // SAFETY: a register-only instruction.
        unsafe {
            asm!(
                "ex2.approx.ftz.f32 {y}, {x};",
                y = out(reg32) y,
                x = in(reg32) x,
                options(pure, nomem, nostack, preserves_flags),
            );
        }
        y
    }
}

leaf! {
    /// `lg2.approx.ftz.f32 d, x;`: log2(x), subnormal inputs flushed to zero; log2(+0) is -inf
    /// (attention's row log-sum-exp). Maximum absolute error 2^-22 over the whole range (the
    /// manual's "lg2" table).
    ///
    /// PTX ISA 1.0 (`.ftz` form), all SMs. PTX ISA, "Floating Point Instructions: lg2".
    #[gpu_only("lg2.approx.ftz.f32")]
    #[inline(always)]
    #[must_use]
    pub fn lg2_approx_ftz_f32(x: f32) -> f32 {
        let y: f32;
        // SAFETY: a register-only instruction.
        unsafe {
            asm!(
                "lg2.approx.ftz.f32 {y}, {x};",
                y = out(reg32) y,
                x = in(reg32) x,
                options(pure, nomem, nostack, preserves_flags),
            );
        }
        y
    }
}

leaf! {
    /// `cvt.rn.f16x2.f32 d, hi, lo;`: `lo` and `hi` rounded to the nearest f16 (ties to even)
    /// and packed, `lo` in the low half (the first source goes to the upper half), as
    /// [`cvt_rn_bf16x2_f32`].
    ///
    /// PTX ISA 7.0, sm_80. PTX ISA, "Data Movement and Conversion Instructions: cvt".
    #[gpu_only("cvt.rn.f16x2.f32")]
    #[inline(always)]
    #[must_use]
    pub fn cvt_rn_f16x2_f32(lo: f32, hi: f32) -> u32 {
        let packed: u32;
        // SAFETY: a register-only conversion.
        unsafe {
            asm!(
                "cvt.rn.f16x2.f32 {d}, {hi}, {lo};",
                d = out(reg32) packed,
                hi = in(reg32) hi,
                lo = in(reg32) lo,
                options(pure, nomem, nostack, preserves_flags),
            );
        }
        packed
    }
}

leaf! {
    /// `cvta.to.global.u64 g, address; ld.global.nc.v4.u32 {d0, d1, d2, d3}, [g];`: four words
    /// of global memory that no thread writes while the kernel runs, through the non-coherent
    /// (read-only) path. Its result is as uniform as its address (a launch's tables read alike by
    /// a whole warpgroup: `ptx-uniform` counts `ld.global.nc` so, and a generic load it cannot).
    /// The conversion makes the generic address a global one, as `ld.global` needs.
    ///
    /// PTX ISA 2.0 (`.nc`: 3.1), sm_32 for `.nc`. PTX ISA, "Data Movement and Conversion
    /// Instructions: ld.global.nc" and "cvta".
    ///
    /// # Safety
    ///
    /// `address` is the generic address of 16 bytes of global memory, 16-byte aligned, that
    /// nothing writes while the kernel runs.
    #[gpu_only("ld.global.nc.v4.u32")]
    #[inline(always)]
    #[must_use]
    pub unsafe fn ld_global_nc_v4_u32(address: u64) -> [u32; 4] {
        let (a, b, c, d): (u32, u32, u32, u32);
        // SAFETY: guaranteed by the caller; a read of memory nothing writes.
        unsafe {
            asm!(
                "{{",
                ".reg .b64 g;",
                "cvta.to.global.u64 g, {p};",
                "ld.global.nc.v4.u32 {{{a}, {b}, {c}, {d}}}, [g];",
                "}}",
                p = in(reg64) address,
                a = out(reg32) a,
                b = out(reg32) b,
                c = out(reg32) c,
                d = out(reg32) d,
                options(pure, readonly, nostack, preserves_flags),
            );
        }
        [a, b, c, d]
    }
}

leaf! {
    /// An empty assembly statement that takes `x` and gives it back: no instruction, but the
    /// compiler must treat the value as read and redefined at this point of the program order.
    /// `wgmma.mma_async` reads and writes its registers asynchronously, which LLVM does not
    /// model: after a `wgmma.wait_group`, passing each accumulator through this pins its later
    /// uses after the wait (a volatile statement is not moved across the wait's intrinsic),
    /// as CUTLASS's `warpgroup_fence_operand` does.
    ///
    /// No PTX instruction; inline assembly (volatile: not `pure`), all SMs.
    #[gpu_only("register fence")]
    #[inline(always)]
    #[must_use]
    pub fn register_fence_f32(x: f32) -> f32 {
        let mut y = x;
        // SAFETY: an empty statement: it reads and writes only `y`'s register.
        unsafe {
            asm!("// fence {y}", y = inout(reg32) y, options(nomem, nostack, preserves_flags));
        }
        y
    }
}

leaf! {
    /// `fma.rn.f32 d, a, b, c;`: `a * b + c` rounded once, to nearest even (the softmax's
    /// `2^(s · scale - m)` argument in one instruction; LLVM does not contract a separate
    /// multiply and add on this target unless told to).
    ///
    /// PTX ISA 1.0 (`.rn`), all SMs. PTX ISA, "Floating Point Instructions: fma".
    #[gpu_only("fma.rn.f32")]
    #[inline(always)]
    #[must_use]
    pub fn fma_rn_f32(a: f32, b: f32, c: f32) -> f32 {
        let d: f32;
        // SAFETY: a register-only instruction.
        unsafe {
            asm!(
                "fma.rn.f32 {d}, {a}, {b}, {c};",
                d = out(reg32) d,
                a = in(reg32) a,
                b = in(reg32) b,
                c = in(reg32) c,
                options(pure, nomem, nostack, preserves_flags),
            );
        }
        d
    }
}

leaf! {
    /// `mov.u32 d, %cluster_nctarank;`: the number of CTAs in this CTA's cluster (1 for a launch
    /// without clusters: every CTA is then a cluster of one).
    ///
    /// PTX ISA 7.8, sm_90. PTX ISA, "Special Registers: %cluster_nctarank".
    #[gpu_only("mov.u32 %cluster_nctarank")]
    #[inline(always)]
    #[must_use]
    pub fn cluster_nctarank() -> u32 {
        let ranks: u32;
        // SAFETY: reads a special register.
        unsafe {
            asm!("mov.u32 {d}, %cluster_nctarank;", d = out(reg32) ranks, options(nostack, nomem, preserves_flags));
        }
        ranks
    }
}

leaf! {
    /// `st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.f32 [addr], {v0, v1}, [bar];`:
    /// stores two f32 into the shared memory of a CTA of this cluster (distributed shared memory)
    /// asynchronously, and when they are written, completes 8 bytes of transactions on the
    /// mbarrier `bar` of that same CTA: a thread of that CTA that sees the barrier's phase
    /// complete (its expected bytes all counted) sees the two values. Both addresses are
    /// `.shared::cluster` addresses (`mapa.shared::cluster`) in the same CTA.
    ///
    /// PTX ISA 8.1, sm_90. PTX ISA, "Data Movement and Conversion Instructions: st.async".
    ///
    /// # Safety
    ///
    /// `addr` is 8 bytes, 8-byte aligned, and `bar` an initialised mbarrier, both in the shared
    /// memory of a CTA of this cluster that has not exited (nor will before the store and its
    /// completion land); the barrier's initialisation is visible to this thread (a cluster
    /// barrier after `fence.mbarrier_init.release.cluster`); the current phase of `bar` expects
    /// these bytes, and no thread reads or writes the 8 bytes unordered with the store.
    #[gpu_only("st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.f32")]
    #[inline(always)]
    pub unsafe fn st_async_v2_f32(addr: u32, v: [f32; 2], bar: u32) {
        // SAFETY: guaranteed by the caller.
        unsafe {
            asm!(
                "st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.f32 [{p}], {{{a}, {b}}}, [{m}];",
                p = in(reg32) addr,
                a = in(reg32) v[0],
                b = in(reg32) v[1],
                m = in(reg32) bar,
                options(nostack, preserves_flags),
            );
        }
    }
}

leaf! {
    /// `ld.shared::cluster.v4.f32 {d0, d1, d2, d3}, [addr];`: four f32 of the shared memory of a
    /// CTA of this cluster (distributed shared memory), at a `.shared::cluster` address (from
    /// `mapa.shared::cluster`, gpu-pipeline's `mapa_shared_cluster`; this CTA's own included).
    /// A weak load: what another CTA wrote is seen after a synchronisation at cluster scope
    /// (a `barrier.cluster.arrive.release` / `wait.acquire` pair, say) ordered it before.
    ///
    /// PTX ISA 7.8 (`.shared::cluster`), sm_90. PTX ISA, "Data Movement and Conversion
    /// Instructions: ld" and "State Spaces: Shared State Space" (distributed shared memory).
    ///
    /// # Safety
    ///
    /// `addr` is the `.shared::cluster` address of 16 bytes, 16-byte aligned, of a CTA of this
    /// cluster that has not exited (nor will before the load completes), and no thread writes
    /// them unordered with this load.
    #[gpu_only("ld.shared::cluster.v4.f32")]
    #[inline(always)]
    #[must_use]
    pub unsafe fn ld_shared_cluster_v4_f32(addr: u32) -> [f32; 4] {
        let (a, b, c, d): (f32, f32, f32, f32);
        // SAFETY: guaranteed by the caller. Not `readonly`: the load must stay after the
        // cluster barrier that orders the peer's writes before it.
        unsafe {
            asm!(
                "ld.shared::cluster.v4.f32 {{{a}, {b}, {c}, {d}}}, [{p}];",
                p = in(reg32) addr,
                a = out(reg32) a,
                b = out(reg32) b,
                c = out(reg32) c,
                d = out(reg32) d,
                options(nostack, preserves_flags),
            );
        }
        [a, b, c, d]
    }
}
