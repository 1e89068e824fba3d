//! The shapes the kernel and its launcher agree on: block size, roles, ring, shared memory.
//!
//! The launcher (`../host`) compiles this same file (`#[path]`), so the two cannot drift apart.

use gpu_pipeline::{NvidiaMbarBackend, ProducerConsumerPipeline};

/// Lanes per warp.
pub const WARP: u32 = 32;
/// Warp 0 produces: all 32 of its threads arrive on a slot's `full` barrier.
pub const PRODUCER_THREADS: u32 = WARP;
/// Warps 1..=4 consume.
pub const CONSUMER_WARPS: u32 = 4;
/// All 128 consumer threads arrive on a slot's `empty` barrier.
pub const CONSUMER_THREADS: u32 = CONSUMER_WARPS * WARP;
/// Threads per block: launch with exactly this many, or the arrive counts are wrong.
pub const BLOCK_THREADS: u32 = PRODUCER_THREADS + CONSUMER_THREADS;

/// Slots in the ring.
pub const STAGES: usize = 4;
/// Words per slot: one per producer lane (an item is 32 words).
pub const SLOT_WORDS: usize = WARP as usize;

/// The backend: NVIDIA `mbarrier`, with the arrive counts above (threads that arrive per phase).
pub type Backend = NvidiaMbarBackend<PRODUCER_THREADS, CONSUMER_THREADS>;
/// The pipeline type of the kernel.
pub type Pipe = ProducerConsumerPipeline<STAGES, Backend>;

/// Alignment of the slots (and of the dynamic shared memory base).
pub const SLOT_ALIGN: usize = 128;
/// The barrier region at the start of dynamic shared memory: what the library says its barriers
/// take (`SMEM_BYTES`, which grows with the `checked` feature: enable it on both crates or
/// neither), rounded up so that the slots after it stay aligned.
pub const BARRIER_BYTES: usize = Pipe::SMEM_BYTES.next_multiple_of(SLOT_ALIGN);
/// The dynamic shared memory to launch with: the barrier region, then `STAGES` slots.
pub const DYNAMIC_SMEM_BYTES: usize = BARRIER_BYTES + STAGES * SLOT_WORDS * 4;
