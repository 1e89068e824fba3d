//! Test-side device utilities: thread and block indices, block and warp barriers, distributed
//! shared memory. One operation per function; the only assembly of this crate.

#[cfg(target_arch = "nvptx64")]
use core::arch::asm;

/// Lanes per warp on NVIDIA.
pub const WARP: u32 = 32;

/// The thread index in the block (x).
#[inline(always)]
pub fn thread_idx() -> u32 {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: reads a special register.
    return unsafe { core::arch::nvptx::_thread_idx_x() };
    #[cfg(target_arch = "amdgpu")]
    return core::arch::amdgpu::workitem_id_x();
}

/// The block index in the grid (x).
#[inline(always)]
pub fn block_idx() -> u32 {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: reads a special register.
    return unsafe { core::arch::nvptx::_block_idx_x() };
    #[cfg(target_arch = "amdgpu")]
    return core::arch::amdgpu::workgroup_id_x();
}

/// Block-wide barrier (`bar.sync 0` / `s_barrier`).
#[inline(always)]
pub fn sync_threads() {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: every thread of the block calls it (kernel structure).
    unsafe {
        core::arch::nvptx::_syncthreads()
    };
    #[cfg(target_arch = "amdgpu")]
    {
        gpu_pipeline::lds_data_fence();
        core::arch::amdgpu::s_barrier();
    }
}

/// Warp-wide barrier with memory ordering among the lanes (`bar.warp.sync 0xffffffff`); a
/// no-op on AMD, where a wave executes in lockstep and LDS accesses are ordered per wave.
#[inline(always)]
pub fn sync_warp() {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: all 32 lanes of the warp execute it (kernel structure).
    unsafe {
        gpu_pipeline::arch::nvptx::bar_warp_sync(0xffff_ffff)
    };
    #[cfg(target_arch = "amdgpu")]
    core::arch::amdgpu::wave_barrier();
}

/// The dynamic shared memory (LDS) base, 128-byte aligned.
#[inline(always)]
pub fn dynamic_smem() -> *mut u8 {
    #[repr(C, align(128))]
    struct Align128(u8);
    core::intrinsics::gpu::gpu_launch_sized_workgroup_mem::<Align128>().cast()
}

/// `st.shared::cluster.u32 [addr], v;` (PTX ISA 7.8, sm_90; PTX ISA "st"): a store into the
/// shared memory of a CTA of this cluster, `addr` from `mapa`.
///
/// # Safety
///
/// `addr` is a valid `.shared::cluster` address of a live CTA of the cluster.
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
pub unsafe fn st_shared_cluster_u32(addr: u32, value: u32) {
    // SAFETY: guaranteed by the caller.
    unsafe {
        asm!("st.shared::cluster.u32 [{a}], {v};", a = in(reg32) addr, v = in(reg32) value, options(nostack, preserves_flags));
    }
}

/// Cluster-wide barrier: every thread of every CTA of the cluster (release, then acquire).
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
pub fn sync_cluster() {
    // SAFETY: every thread of the cluster calls it (kernel structure), warp-uniformly.
    unsafe {
        gpu_pipeline::arch::nvptx::barrier_cluster_arrive_release();
        gpu_pipeline::arch::nvptx::barrier_cluster_wait_acquire();
    }
}

/// Adds to a global counter (a report word); relaxed.
#[inline(always)]
pub fn global_add(counter: *mut u32, value: u32) {
    // SAFETY: the harness passes a valid, 4-byte aligned report buffer.
    unsafe {
        (*counter.cast::<core::sync::atomic::AtomicU32>())
            .fetch_add(value, core::sync::atomic::Ordering::Relaxed)
    };
}

/// The leaves below serve only the benchmarks' counter-ring variants and streaming kernels
/// (`bench.rs`, `bench/variants.rs`): forms the library does not use, measured beside the ones it
/// does. Same layout as the library's leaves: the PTX form, minimum PTX ISA and SM, manual section.
#[cfg(target_arch = "nvptx64")]
pub mod bench {
    use core::arch::asm;

    /// The grid size in blocks (x).
    #[inline(always)]
    pub fn grid_dim() -> u32 {
        // SAFETY: reads a special register.
        unsafe { core::arch::nvptx::_grid_dim_x() }
    }

    /// `atom.release.cta.shared.add.u32 d, [addr], n;`: the add as an atom with release, result
    /// unused (PTX ISA 6.0, sm_70; PTX ISA, "atom").
    ///
    /// # Safety
    ///
    /// `addr` is the `.shared::cta` address of an aligned 32-bit word.
    #[inline(always)]
    pub unsafe fn atom_release_cta_shared_add_u32(addr: u32, n: u32) {
        let _old: u32;
        // SAFETY: guaranteed by the caller.
        unsafe {
            asm!("atom.release.cta.shared.add.u32 {d}, [{a}], {n};", d = out(reg32) _old, a = in(reg32) addr, n = in(reg32) n, options(nostack, preserves_flags));
        }
    }

    /// `st.release.cta.shared.u32 [addr], v;` (PTX ISA 6.0, sm_70; PTX ISA, "st").
    ///
    /// # Safety
    ///
    /// `addr` is the `.shared::cta` address of an aligned 32-bit word.
    #[inline(always)]
    pub unsafe fn st_release_cta_shared_u32(addr: u32, value: u32) {
        // SAFETY: guaranteed by the caller.
        unsafe {
            asm!("st.release.cta.shared.u32 [{a}], {v};", a = in(reg32) addr, v = in(reg32) value, options(nostack, preserves_flags));
        }
    }

    /// `fence.sc.cta;` (PTX ISA 6.0, sm_70; PTX ISA, "membar / fence").
    #[inline(always)]
    pub fn fence_sc_cta() {
        // SAFETY: a fence has no preconditions.
        unsafe { asm!("fence.sc.cta;", options(nostack, preserves_flags)) };
    }

    /// `atom.relaxed.gpu.global.add.u32 d, [counter], 1;`: a ticket from a global work counter
    /// (PTX ISA 6.0, sm_70; PTX ISA, "atom"). Not a synchronisation.
    ///
    /// # Safety
    ///
    /// `counter` is a valid, aligned global word.
    #[inline(always)]
    pub unsafe fn ticket(counter: *mut u32) -> u32 {
        let old: u32;
        // SAFETY: guaranteed by the caller.
        unsafe {
            asm!("atom.relaxed.gpu.global.add.u32 {d}, [{c}], 1;", d = out(reg32) old, c = in(reg64) counter, options(nostack, preserves_flags));
        }
        old
    }
}
