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
//! | the same, with an L2 eviction policy | [`MbarrierRef::tensor_load_hinted`], [`L2Policy`] |
//! | shared -> global, 1D-5D | [`tensor_store`] |
//! | shared -> global with add / min / max, 1D-5D | [`tensor_reduce_add`], [`tensor_reduce_min`], [`tensor_reduce_max`] |
//! | a box into L2 ahead of its load, 1D-5D | [`prefetch_tensor`] |
//! | the tensor map into the cache | [`prefetch_tensor_map`] |
//! | close / wait for the bulk groups of stores and reductions | [`bulk_commit_group`], [`bulk_wait_group`], [`bulk_wait_group_read`] |
//! | order ordinary shared-memory writes before a TMA read | [`fence_proxy_async`] |
//!
//! Coordinates are in elements, innermost first, signed: a box may lie partly outside the
//! tensor (loads fill zeros; stores and reductions skip those elements), except that a store's
//! or a reduction's box may not start at a negative coordinate ([`tensor_reduce_add`]).

pub use gpu_pipeline::{
    L2Policy, MbarrierRef, TensorMap, bulk_commit_group, bulk_wait_group, bulk_wait_group_read,
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
/// **Coordinates start inside the tensor.** A box may run past the tensor's end in any
/// dimension (those elements are skipped), but it may not start before it: on the H200 a
/// reduction with a negative coordinate stops the kernel with `CUDA_ERROR_ILLEGAL_INSTRUCTION`
/// (measured with the toolkit's device test, `tests/hopper-kernels/src/tma.rs`, on f32, bf16 and
/// s32, 2D and 3D; add, min and max alike), while tensor loads and prefetches of the same maps and
/// boxes take negative coordinates and fill zeros. Plain tensor stores ([`tensor_store`]) fault
/// the same way. The PTX ISA's tensor chapter does not state this restriction; it is the
/// hardware's.
///
/// # Safety
///
/// Every coordinate is `>= 0` (above). As [`tensor_store`]: `map` points to a valid
/// [`TensorMap`] of `D` dimensions whose element type `.add` supports (f16, bf16, f32, u32, s32,
/// u64); `src` points into this CTA's shared
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
