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
    sync_lanes(u32::MAX);
}

/// Barrier over the lanes of `mask` of the calling warp, with memory ordering among them
/// (`bar.warp.sync mask`); a no-op on AMD, as [`sync_warp`].
#[inline(always)]
pub fn sync_lanes(mask: u32) {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: every lane of `mask` executes it with the same mask (kernel structure).
    unsafe {
        gpu_pipeline::arch::nvptx::bar_warp_sync(mask)
    };
    #[cfg(target_arch = "amdgpu")]
    {
        let _ = mask;
        core::arch::amdgpu::wave_barrier();
    }
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

/// The leaves below serve only the benchmark kernels (`bench.rs`, `bench/variants.rs`): the
/// loops' opaque bound and the streaming kernels' work counter. Same layout as the library's leaves: the PTX form, minimum PTX ISA and SM, manual section.
#[cfg(all(target_arch = "nvptx64", feature = "bench"))]
pub mod bench {
    use core::arch::asm;

    /// The grid size in blocks (x).
    #[inline(always)]
    pub fn grid_dim() -> u32 {
        // SAFETY: reads a special register.
        unsafe { core::arch::nvptx::_grid_dim_x() }
    }

    /// `mov.u32 d, n;` as assembly the compiler cannot see through: a loop bound read through it
    /// in every iteration gives the loop no trip count, so LLVM does not unroll it (the C++ twins'
    /// `opaque` is the same move). Not `pure`, so it is not hoisted; `nomem`, like the C++ twin's
    /// `asm volatile` without a memory clobber. PTX ISA, "mov".
    #[inline(always)]
    pub fn opaque(n: u32) -> u32 {
        let r: u32;
        // SAFETY: a register move.
        unsafe {
            asm!("mov.u32 {r}, {n};", r = out(reg32) r, n = in(reg32) n, options(nomem, nostack, preserves_flags));
        }
        r
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
