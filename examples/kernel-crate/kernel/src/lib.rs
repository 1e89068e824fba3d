//! A kernel crate of your own on `gpu-pipeline`: one warp-specialized kernel, written plainly.
//!
//! `ring` moves `items` items of 32 words per block from `input` to `output` through a 4-slot
//! ring in shared memory: warp 0 produces (each lane copies one word of the item into the slot),
//! warps 1..=4 consume (each copies the whole item it saw into its own part of `output`).
//! Build: `cargo build --release` in this folder (`.cargo/config.toml` holds the flags); the
//! launcher in `../host` runs it and checks every word.

#![no_std]
// `extern "gpu-kernel"`; `core::arch::nvptx` (thread index, block barrier, trap); the dynamic
// shared memory base (`gpu_launch_sized_workgroup_mem`, an intrinsic).
#![feature(
    abi_gpu_kernel,
    stdarch_nvptx,
    core_intrinsics,
    gpu_intrinsics,
    gpu_launch_sized_workgroup_mem
)]
#![allow(internal_features)]

mod layout;

use core::arch::nvptx::{_block_dim_x, _block_idx_x, _syncthreads, _thread_idx_x, trap};
use gpu_pipeline::PipelineBackend;
use layout::{
    BARRIER_BYTES, BLOCK_THREADS, Backend, CONSUMER_WARPS, DYNAMIC_SMEM_BYTES, Pipe, SLOT_ALIGN,
    SLOT_WORDS, WARP,
};

/// A GPU cannot unwind: a panic (an index out of bounds, say) stops the kernel, and the launch
/// fails with `CUDA_ERROR_ILLEGAL_INSTRUCTION`.
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    // SAFETY: `trap` ends the kernel; nothing runs after it.
    unsafe { trap() }
}

/// The alignment of the dynamic shared memory base (the intrinsic's type parameter sets it).
#[repr(C, align(128))]
struct SharedBase(u8);
const _: () = assert!(core::mem::align_of::<SharedBase>() == SLOT_ALIGN);
// Above 48 KiB of dynamic shared memory the launcher must first raise the kernel's limit
// (`CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`); this example stays below.
const _: () = assert!(DYNAMIC_SMEM_BYTES <= 48 * 1024);

/// Moves `items` items per block from `input` to `output`, through the pipeline.
///
/// Launch with `BLOCK_THREADS` threads per block and `DYNAMIC_SMEM_BYTES` of dynamic shared
/// memory (`layout.rs`); block `b` reads items `b * items ..` of `input` (32 words each) and
/// consumer warp `c` of it writes them to `output[(b * CONSUMER_WARPS + c) * items * 32 ..]`.
///
/// # Safety
///
/// `input` holds `grid * items * 32` words and `output` `grid * CONSUMER_WARPS * items * 32`,
/// and the launch has the block size and shared memory above.
#[unsafe(no_mangle)]
pub unsafe extern "gpu-kernel" fn ring(input: *const u32, output: *mut u32, items: u32) {
    // Dynamic shared memory: [barrier region: BARRIER_BYTES][slot 0]...[slot STAGES - 1].
    let smem: *mut u8 =
        core::intrinsics::gpu::gpu_launch_sized_workgroup_mem::<SharedBase>().cast();
    let storage = smem.cast::<<Backend as PipelineBackend>::Storage>();
    // SAFETY: the launch gave DYNAMIC_SMEM_BYTES = BARRIER_BYTES + the slots.
    let slots = unsafe { smem.add(BARRIER_BYTES) }.cast::<[u32; SLOT_WORDS]>();

    // SAFETY: `storage` is the barrier region, used for nothing else; thread 0 initialises it
    // and the block barrier below orders that before every other use.
    let pipe = &mut unsafe { Pipe::new(storage) };
    // SAFETY (the three special-register reads): no precondition.
    let (tid, block, threads) = unsafe { (_thread_idx_x(), _block_idx_x(), _block_dim_x()) };
    if threads != BLOCK_THREADS {
        // The arrive counts are BLOCK_THREADS' split: another block size would hang. Every
        // thread stops here instead, and the launch fails.
        // SAFETY: `trap` ends the kernel.
        unsafe { trap() };
    }
    if tid == 0 {
        // SAFETY: one thread, before any other use of the barriers.
        unsafe { pipe.init() };
    }
    // SAFETY: every thread of the block reaches this barrier (no thread has returned yet).
    unsafe { _syncthreads() };

    let (warp, lane) = (tid / WARP, (tid % WARP) as usize);
    let item_words = SLOT_WORDS * items as usize;
    if warp == 0 {
        // The producer warp: each lane copies its word of the item into the slot; `produce` waits
        // for a free slot, runs the closure, then arrives on `full` (32 arrivals complete it).
        // SAFETY: block `block`'s part of `input` (the kernel's contract).
        let input = unsafe { input.add(block as usize * item_words) };
        for item in 0..items as usize {
            // SAFETY: inside this block's part of `input`.
            let word = unsafe { input.add(item * SLOT_WORDS + lane).read() };
            pipe.produce(|stage| {
                // SAFETY: the pipeline gave this slot to the producers until they release it.
                unsafe { (*slots.add(stage.index() as usize))[lane] = word }
            });
        }
    } else {
        // A consumer warp: wait for a full slot, read the item, release the slot (all 128
        // consumer threads arrive on `empty`), then write what it saw to its part of `output`.
        let consumer = (block * CONSUMER_WARPS + warp - 1) as usize;
        // SAFETY: this warp's part of `output` (the kernel's contract).
        let output = unsafe { output.add(consumer * item_words) };
        for item in 0..items as usize {
            let stage = pipe.acquire_consumer();
            // SAFETY: the pipeline gave this slot to the consumers until they release it.
            let word = unsafe { (*slots.add(stage.index() as usize))[lane] };
            stage.release(); // forgetting this is a compile error (the handle's drop check)
            // SAFETY: inside this warp's part of `output`.
            unsafe { output.add(item * SLOT_WORDS + lane).write(word) };
        }
    }
}
