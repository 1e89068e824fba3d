//! TMA: reductions from shared memory into a tensor (`tma::tensor_reduce_add`, `_min`, `_max`)
//! and box prefetches into L2 (`tma::prefetch_tensor`) followed by a tensor load of the same box.
//! Block `b` works on box `b`: its coordinates are `coords[b * D ..][..D]` (innermost first, the
//! box may lie partly outside the tensor), its data `tiles[b * box_words ..]`. Several blocks may
//! reduce into overlapping boxes: each element's reduction is atomic.

use gpu_hopper::arch::nvptx::dynamic_smem_1024;
use gpu_hopper::tma::{
    MbarrierRef, TensorMap, bulk_commit_group, bulk_wait_group, fence_proxy_async, prefetch_tensor,
    prefetch_tensor_map, tensor_reduce_add, tensor_reduce_max, tensor_reduce_min, tensor_store,
};
use gpu_pipeline::Mbarrier;

use crate::layout::{REDUCE_ADD, REDUCE_MAX, REDUCE_MIN};

/// Where the box lands in the prefetch kernel's shared memory (the mbarrier sits at 0; a box
/// without swizzle needs 128-byte alignment).
pub const BOX_OFFSET: usize = 1024;

/// Block `b`'s `D` coordinates.
///
/// # Safety
///
/// `coords` holds `D` coordinates per block of the grid.
#[inline(always)]
unsafe fn coords_of<const D: usize>(coords: *const i32, block: u32) -> [i32; D] {
    let mut c = [0; D];
    let mut i = 0;
    while i < D {
        // SAFETY: the caller's contract.
        c[i] = unsafe { coords.add(block as usize * D + i).read() };
        i += 1;
    }
    c
}

/// Stages block `b`'s box from `tiles` into shared memory and reduces it into `map`'s tensor
/// with `op` ([`REDUCE_ADD`], [`REDUCE_MIN`], [`REDUCE_MAX`], else a plain store), from thread
/// 0, waiting until the reduction's writes are performed.
///
/// # Safety
///
/// `map` is a valid tensor map of `D` dimensions in global memory whose box has `box_words`
/// words and whose element type `op` supports; `tiles` and `coords` hold one box and `D`
/// coordinates per block; the launch gives at least `box_words * 4` bytes of dynamic shared
/// memory; every thread of the block calls it.
#[inline(always)]
unsafe fn reduce<const D: usize>(
    map: *const TensorMap,
    tiles: *const u32,
    box_words: u32,
    coords: *const i32,
    op: u32,
) {
    let (t, block) = (crate::thread(), crate::block());
    let smem = dynamic_smem_1024();
    let words = smem.cast::<u32>();
    // SAFETY: block `b`'s box is inside `tiles` (the contract).
    let src = unsafe { tiles.add((block * box_words) as usize) };
    let mut i = t;
    while i < box_words {
        // SAFETY: `i < box_words`: inside the box in both places.
        unsafe { words.add(i as usize).write(src.add(i as usize).read()) };
        i += crate::block_threads();
    }
    // The ordinary stores above, before the tensor engine reads the box (async proxy).
    fence_proxy_async();
    // SAFETY: every thread of the block.
    unsafe { crate::sync_threads() };
    if t == 0 {
        // SAFETY: the contract's coordinates.
        let c = unsafe { coords_of::<D>(coords, block) };
        // SAFETY: a valid map of `D` dimensions whose element type `op` supports; the box is in
        // this CTA's shared memory, 1024-byte aligned, and not written again.
        unsafe {
            match op {
                REDUCE_ADD => tensor_reduce_add::<D>(map, c, smem),
                REDUCE_MIN => tensor_reduce_min::<D>(map, c, smem),
                REDUCE_MAX => tensor_reduce_max::<D>(map, c, smem),
                _ => tensor_store::<D>(map, c, smem),
            }
        }
        bulk_commit_group();
        // The writes are performed before the kernel ends (and the box stays until read).
        bulk_wait_group::<0>();
    }
}

/// Thread 0 prefetches the tensor map and block `b`'s box into L2, then loads the box into
/// shared memory with a tensor load on an mbarrier; every thread waits for it and copies the box
/// to `out[b * box_words ..]`.
///
/// # Safety
///
/// `map` is a valid tensor map of `D` dimensions in global memory whose box has `box_words`
/// words (4-byte elements); `coords` holds `D` coordinates per block, `out` a box per block; the
/// launch gives [`BOX_OFFSET`] + `box_words * 4` bytes of dynamic shared memory; every thread of
/// the block calls it.
#[inline(always)]
unsafe fn prefetch_load<const D: usize>(
    map: *const TensorMap,
    coords: *const i32,
    out: *mut u32,
    box_words: u32,
) {
    let (t, block) = (crate::thread(), crate::block());
    let smem = dynamic_smem_1024();
    // SAFETY: the launch's dynamic shared memory: the barrier at 0, the box at BOX_OFFSET.
    let (bar, dst) = unsafe {
        (
            MbarrierRef::from_ptr(smem.cast::<Mbarrier>()),
            smem.add(BOX_OFFSET),
        )
    };
    // SAFETY: the contract's coordinates.
    let c = unsafe { coords_of::<D>(coords, block) };
    if t == 0 {
        // SAFETY: a valid map in global memory, of `D` dimensions.
        unsafe {
            prefetch_tensor_map(map);
            prefetch_tensor::<D>(map, c);
            // One thread, before the block barrier below; one arrival per phase.
            bar.init(1);
        }
    }
    // SAFETY: every thread of the block.
    unsafe { crate::sync_threads() };
    if t == 0 {
        // SAFETY: the phase expects the box's bytes (at most 2^20 - 1: a box of 256 x 256 x 4
        // bytes at most per dimension pair, and the host's are a few KiB); the destination is
        // 1024-byte aligned shared memory with room for the box, read only after the wait.
        unsafe {
            bar.arrive_expect_tx(box_words * 4);
            bar.tensor_load::<D>(dst, map, c);
        }
    }
    bar.wait_parity(0);
    let words = dst.cast::<u32>();
    let mut i = t;
    while i < box_words {
        // SAFETY: inside the box, and inside block `b`'s part of `out`.
        unsafe {
            out.add((block * box_words + i) as usize)
                .write(words.add(i as usize).read())
        };
        i += crate::block_threads();
    }
}

/// `tensor_reduce_*` of a 2D box per block (see [`reduce`]).
///
/// # Safety
///
/// As [`reduce`] with `D = 2`.
#[unsafe(no_mangle)]
pub unsafe extern "gpu-kernel" fn tma_reduce_2d(
    map: *const TensorMap,
    tiles: *const u32,
    box_words: u32,
    coords: *const i32,
    op: u32,
) {
    // SAFETY: the entry's contract.
    unsafe { reduce::<2>(map, tiles, box_words, coords, op) }
}

/// `tensor_reduce_*` of a 3D box per block (see [`reduce`]).
///
/// # Safety
///
/// As [`reduce`] with `D = 3`.
#[unsafe(no_mangle)]
pub unsafe extern "gpu-kernel" fn tma_reduce_3d(
    map: *const TensorMap,
    tiles: *const u32,
    box_words: u32,
    coords: *const i32,
    op: u32,
) {
    // SAFETY: the entry's contract.
    unsafe { reduce::<3>(map, tiles, box_words, coords, op) }
}

/// `prefetch_tensor` then a tensor load of a 2D box per block (see [`prefetch_load`]).
///
/// # Safety
///
/// As [`prefetch_load`] with `D = 2`.
#[unsafe(no_mangle)]
pub unsafe extern "gpu-kernel" fn tma_prefetch_load_2d(
    map: *const TensorMap,
    coords: *const i32,
    out: *mut u32,
    box_words: u32,
) {
    // SAFETY: the entry's contract.
    unsafe { prefetch_load::<2>(map, coords, out, box_words) }
}

/// `prefetch_tensor` then a tensor load of a 3D box per block (see [`prefetch_load`]).
///
/// # Safety
///
/// As [`prefetch_load`] with `D = 3`.
#[unsafe(no_mangle)]
pub unsafe extern "gpu-kernel" fn tma_prefetch_load_3d(
    map: *const TensorMap,
    coords: *const i32,
    out: *mut u32,
    box_words: u32,
) {
    // SAFETY: the entry's contract.
    unsafe { prefetch_load::<3>(map, coords, out, box_words) }
}
