//! The tensor-memory accelerator (TMA): bulk tensor copies between global and shared memory,
//! described by a tensor map made on the host.
//!
//! gpu-pipeline already has the copies that complete on an mbarrier and the stores; they are
//! re-exported here so that a kernel finds all of TMA in one place:
//!
//! | operation | where |
//! |---|---|
//! | global -> shared, 1D-5D, on an mbarrier | [`MbarrierRef::tensor_load`] |
//! | the same, multicast to a cluster's CTAs | [`MbarrierRef::tensor_load_multicast`] |
//! | shared -> global, 1D-5D | [`tensor_store`] |
//! | shared -> global with add / min / max, 1D-5D | [`tensor_reduce_add`], [`tensor_reduce_min`], [`tensor_reduce_max`] |
//! | a box into L2 ahead of its load, 1D-5D | [`prefetch_tensor`] |
//! | the tensor map into the cache | [`prefetch_tensor_map`] |
//! | close / wait for the bulk groups of stores and reductions | [`bulk_commit_group`], [`bulk_wait_group`], [`bulk_wait_group_read`] |
//! | order ordinary shared-memory writes before a TMA read | [`fence_proxy_async`] |
//!
//! Coordinates are in elements, innermost first, signed: a box may lie partly outside the
//! tensor (loads fill zeros; stores and reductions skip those elements).

pub use gpu_pipeline::{
    MbarrierRef, TensorMap, bulk_commit_group, bulk_wait_group, bulk_wait_group_read,
    fence_proxy_async, prefetch_tensor_map, tensor_store,
};

use crate::arch::nvptx as ptx;
use gpu_pipeline::arch::nvptx::cvta_to_shared;

/// Adds the box at `src` (this CTA's shared memory) element-wise into the tensor of `map` at
/// `coords` (`cp.reduce.async.bulk.tensor.Dd.global.shared::cta.add.tile.bulk_group`, PTX ISA
/// 8.0, sm_90): split-K partial sums without a workspace. Each element's add is atomic; the
/// order between CTAs is not defined (floating-point sums may differ in the last bits between
/// runs). Tracked by the calling thread's bulk group, as [`tensor_store`].
///
/// **Known defect (run 57-58 on the H200, 2026-12-02):** the toolkit's device test of the three
/// reductions (`tests/hopper-kernels/src/tma.rs`: f32, bf16 and s32 add, s32 min and max, 2D and
/// 3D, boxes inside, overlapping, past the end and at negative coordinates) stops with
/// `CUDA_ERROR_ILLEGAL_INSTRUCTION` at the reduction (compute-sanitizer: thread 0 of block 3,
/// the box at negative coordinates), while tensor loads of the same maps and boxes pass. Until
/// that test passes, do not rely on these three functions.
///
/// # Safety
///
/// As [`tensor_store`]: `map` points to a valid [`TensorMap`] of `D` dimensions whose element
/// type `.add` supports (f16, bf16, f32, u32, s32, u64); `src` points into this CTA's shared
/// memory, aligned as the map's swizzle needs, holding the box, and is not written until a
/// [`bulk_wait_group_read`] covers the reduction; ordinary writes to it need
/// [`fence_proxy_async`] first.
#[inline(always)]
pub unsafe fn tensor_reduce_add<const D: usize>(
    map: *const TensorMap,
    coords: [i32; D],
    src: *const u8,
) {
    // SAFETY: the caller's contract.
    unsafe {
        ptx::cp_reduce_async_bulk_tensor_add::<D>(
            map.cast(),
            gpu_pipeline::tensor_coords(coords),
            cvta_to_shared(src.cast_mut()),
        )
    }
}

/// As [`tensor_reduce_add`], keeping the element-wise minimum (`.min`).
///
/// # Safety
///
/// As [`tensor_reduce_add`], for an element type `.min` supports.
#[inline(always)]
pub unsafe fn tensor_reduce_min<const D: usize>(
    map: *const TensorMap,
    coords: [i32; D],
    src: *const u8,
) {
    // SAFETY: the caller's contract.
    unsafe {
        ptx::cp_reduce_async_bulk_tensor_min::<D>(
            map.cast(),
            gpu_pipeline::tensor_coords(coords),
            cvta_to_shared(src.cast_mut()),
        )
    }
}

/// As [`tensor_reduce_add`], keeping the element-wise maximum (`.max`).
///
/// # Safety
///
/// As [`tensor_reduce_add`], for an element type `.max` supports.
#[inline(always)]
pub unsafe fn tensor_reduce_max<const D: usize>(
    map: *const TensorMap,
    coords: [i32; D],
    src: *const u8,
) {
    // SAFETY: the caller's contract.
    unsafe {
        ptx::cp_reduce_async_bulk_tensor_max::<D>(
            map.cast(),
            gpu_pipeline::tensor_coords(coords),
            cvta_to_shared(src.cast_mut()),
        )
    }
}

/// Brings the box of `map` at `coords` into the L2 cache (`cp.async.bulk.prefetch.tensor.Dd.L2
/// .global.tile`, PTX ISA 8.0, sm_90), ahead of a tensor load of it: for instance the next
/// tile's first stages, before the ring has room for them. A hint: nothing completes, nothing
/// is written.
///
/// # Safety
///
/// `map` points to a valid [`TensorMap`] of `D` dimensions in global memory.
#[inline(always)]
pub unsafe fn prefetch_tensor<const D: usize>(map: *const TensorMap, coords: [i32; D]) {
    // SAFETY: the caller's contract.
    unsafe {
        ptx::cp_async_bulk_prefetch_tensor::<D>(map.cast(), gpu_pipeline::tensor_coords(coords))
    }
}
