//! Benchmark kernels of `cargo xtask bench-nvidia`, written with the library. Their twins in CUDA
//! C++ with raw inline PTX are in `tests/bench/bench.cu`, with the same names, launch shapes and
//! algorithm, so that the harness can run both side by side and compare. Which kernels exist is
//! the one list in `tests/suite` (`pipeline_suite::bench_kernels!`, `bench_stream_kernels!`), which
//! the harness's tables expand too.
//!
//! Cycle kernels take `(iters, out)`: thread 0 writes the `%clock64` cycles of its timed loop to
//! `out[block]`. Streaming kernels take `(src, dst, bytes_per_block, work)`. The counter-ring
//! variants are in [`variants`].

use gpu_pipeline::arch::nvptx::{clock64, cp_async_bulk_shared_to_global, cvta_to_shared};
use gpu_pipeline::{
    AmdCounterBackend, Cluster, NvidiaMbarBackend, PipelineBackend, ProducerConsumerPipeline,
    bulk_commit_group, bulk_wait_group_read, cluster_cta_rank,
};

use crate::arch::bench::{grid_dim, opaque, ticket};
use crate::arch::{WARP, block_idx, dynamic_smem, sync_cluster, sync_threads, thread_idx};

/// How a round trip waits: `wait_*`.
const WAIT: u32 = 0;
/// With a suspend-time hint.
const TICKS: u32 = 1;
/// By polling `try_wait_*`.
const POLL: u32 = 2;
/// The suspend-time hint of the `TICKS` variants, in ns.
const HINT_NS: u32 = 1000;

/// Loop shape: a plain `for` loop, unrolled as LLVM sees fit (4 to 8 times here): what a kernel
/// written with the library gets. Only the Rust side has it (nvcc unrolls differently).
const LOOP_LLVM: u32 = 0;
/// Loop shape: not unrolled by either compiler (the bound is re-read through an opaque move in
/// every iteration, so neither LLVM nor NVVM can count the trips).
const LOOP_FLAT: u32 = 1;
/// Loop shape: the body written four times in the source, the loop itself not unrolled further.
const LOOP_X4: u32 = 4;

/// Runs `body` `iters` times in the loop shape `U` (see [`LOOP_LLVM`]); `iters` is a multiple of
/// 4. The C++ twins' `repeat<U>` is the same loop, so that both sides compare at equal shape.
#[inline(always)]
fn repeat<const U: u32>(iters: u32, mut body: impl FnMut()) {
    if U == LOOP_LLVM {
        for _ in 0..iters {
            body();
        }
    } else {
        let mut i = 0;
        while i < opaque(iters) {
            body();
            if U == LOOP_X4 {
                body();
                body();
                body();
            }
            i += U;
        }
    }
}

/// The timed loop of a cycle kernel: [`repeat`]s `body`, and thread 0 writes the `%clock64` cycles
/// it took to `out[block]`.
#[inline(always)]
fn timed<const U: u32>(iters: u32, out: *mut u64, body: impl FnMut()) {
    let start = clock64();
    repeat::<U>(iters, body);
    let cycles = clock64() - start;
    if thread_idx() == 0 {
        // SAFETY: the harness passes one result word per block.
        unsafe { out.add(block_idx() as usize).write(cycles) };
    }
}

/// A pipeline over the dynamic shared memory, initialised by thread 0, then a block barrier.
#[inline(always)]
fn pipeline<const S: usize, B: PipelineBackend>() -> ProducerConsumerPipeline<S, B> {
    // SAFETY: the harness launches with at least the barriers' shared memory.
    let pipe = unsafe { ProducerConsumerPipeline::<S, B>::new(dynamic_smem().cast()) };
    if thread_idx() == 0 {
        // SAFETY: one thread, then the block barrier.
        unsafe { pipe.init() };
    }
    sync_threads();
    pipe
}

/// Round trip producer -> consumer -> producer through one stage: thread 0 produces, thread 32
/// consumes, one arrival each. The producer's cycles per iteration are one round trip.
#[inline(always)]
unsafe fn roundtrip<B: PipelineBackend, const MODE: u32, const U: u32>(iters: u32, out: *mut u64) {
    let tid = thread_idx();
    let mut pipe = pipeline::<1, B>();
    if tid == 0 {
        timed::<U>(iters, out, || {
            match MODE {
                TICKS => pipe.wait_consumer_ticks(HINT_NS),
                POLL => while !pipe.try_wait_consumer() {},
                _ => pipe.wait_consumer(),
            }
            pipe.producer_signal();
            pipe.producer_step();
        });
    } else if tid == WARP {
        repeat::<U>(iters, || {
            match MODE {
                TICKS => pipe.wait_producer_ticks(HINT_NS),
                POLL => while !pipe.try_wait_producer() {},
                _ => pipe.wait_producer(),
            }
            pipe.consumer_signal();
            pipe.consumer_step();
        });
    }
}

/// Synchronisation-only ring: one producer warp, `W` consumer warps, `S` stages, and only lane 0
/// of each warp takes part (the other lanes leave). `PER_THREAD`: every lane arrives (counts 32
/// and 32 W); otherwise lane 0 of each warp (counts 1 and W). The producer's cycles per iteration
/// are the cost of one stage.
#[inline(always)]
unsafe fn ring<
    const S: usize,
    B: PipelineBackend,
    const W: u32,
    const PER_THREAD: bool,
    const U: u32,
>(
    iters: u32,
    out: *mut u64,
) {
    let tid = thread_idx();
    let mut pipe = pipeline::<S, B>();
    if !PER_THREAD && tid % WARP != 0 {
        return;
    }
    if tid < WARP {
        timed::<U>(iters, out, || {
            pipe.wait_consumer();
            pipe.producer_signal();
            pipe.producer_step();
        });
    } else {
        repeat::<U>(iters, || {
            pipe.wait_producer();
            pipe.consumer_signal();
            pipe.consumer_step();
        });
    }
}

/// How an elected-lane ring makes its calls: stage handles (`acquire_*`, `arrive` from the elected
/// lane, `release_without_signal`; or `release` where every lane arrives).
const HANDLES: u32 = 0;
/// `produce_explicit` / `consume_explicit` scopes (or `consume` where every lane arrives).
const SCOPES: u32 = 1;
/// `wait_*`, `*_signal`, `*_step` by hand.
const DIRECT: u32 = 2;

/// The most common arrival pattern of real kernels: every lane of a warp waits, one elected lane
/// (lane 0) arrives. One producer warp (producer count 1) and `W` consumer warps; the consumers
/// release per warp (lane 0 arrives, count `W`) or, with `PER_THREAD`, every lane arrives (count
/// `32 W`). `API` picks the library calls. The producer's cycles per iteration are the cost of
/// one stage.
#[inline(always)]
unsafe fn elect_ring<
    const S: usize,
    B: PipelineBackend,
    const W: u32,
    const PER_THREAD: bool,
    const API: u32,
    const U: u32,
>(
    iters: u32,
    out: *mut u64,
) {
    let tid = thread_idx();
    let lane = tid % WARP;
    let mut pipe = pipeline::<S, B>();
    if tid < WARP {
        timed::<U>(iters, out, || match API {
            HANDLES => {
                let stage = pipe.acquire_producer();
                if lane == 0 {
                    stage.arrive();
                }
                stage.release_without_signal();
            }
            SCOPES => pipe.produce_explicit(|stage| {
                if lane == 0 {
                    stage.arrive();
                }
            }),
            _ => {
                pipe.wait_consumer();
                if lane == 0 {
                    pipe.producer_signal();
                }
                pipe.producer_step();
            }
        });
    } else {
        repeat::<U>(iters, || match (API, PER_THREAD) {
            (HANDLES, true) => pipe.acquire_consumer().release(),
            (HANDLES, false) => {
                let stage = pipe.acquire_consumer();
                if lane == 0 {
                    stage.arrive();
                }
                stage.release_without_signal();
            }
            (SCOPES, true) => pipe.consume(|_| ()),
            (SCOPES, false) => pipe.consume_explicit(|stage| {
                if lane == 0 {
                    stage.arrive();
                }
            }),
            _ => {
                pipe.wait_producer();
                if PER_THREAD || lane == 0 {
                    pipe.consumer_signal();
                }
                pipe.consumer_step();
            }
        });
    }
}

/// Remote-arrive round trip in a cluster of 2: thread 0 of CTA 0 produces into CTA 1's full
/// barrier, thread 0 of CTA 1 consumes and releases CTA 0's empty barrier, both remotely.
#[inline(always)]
unsafe fn cluster_roundtrip<const U: u32>(iters: u32, out: *mut u64) {
    type B = NvidiaMbarBackend<1, 1, Cluster>;
    let tid = thread_idx();
    let rank = cluster_cta_rank();
    // SAFETY: barriers at the dynamic shared memory base of each CTA; init then cluster barrier.
    let mut pipe = unsafe { ProducerConsumerPipeline::<1, B>::new(dynamic_smem().cast()) };
    if tid == 0 {
        // SAFETY: one thread per CTA; the cluster barrier follows.
        unsafe { pipe.init() };
    }
    sync_cluster();
    if tid == 0 && rank == 0 {
        let start = clock64();
        repeat::<U>(iters, || {
            pipe.wait_consumer();
            // SAFETY: CTA 1 is alive until the final cluster barrier, its barriers initialised.
            unsafe { pipe.full_barrier(pipe.producer_stage()).arrive_remote(1) };
            pipe.producer_step();
        });
        let cycles = clock64() - start;
        // SAFETY: one result per cluster.
        unsafe { out.add(block_idx() as usize / 2).write(cycles) };
    } else if tid == 0 && rank == 1 {
        repeat::<U>(iters, || {
            pipe.wait_producer();
            // SAFETY: as above, for CTA 0.
            unsafe { pipe.empty_barrier(pipe.consumer_stage()).arrive_remote(0) };
            pipe.consumer_step();
        });
    }
    sync_cluster();
}

/// How the chunks of a streaming copy are assigned to the CTAs: CTA `b` copies chunks
/// `[b n, (b + 1) n)` (`CONTIG`), or `b, b + grid, b + 2 grid, ...` (`INTERLEAVED`), or takes the
/// next chunk from a global counter (`DYNAMIC`: the loader's `ticket(work)`, passed to the storers
/// through a tag per stage; past the end, one sentinel stage per storer).
const CONTIG: u32 = 0;
/// See [`CONTIG`].
const INTERLEAVED: u32 = 1;
/// See [`CONTIG`].
const DYNAMIC: u32 = 2;
/// The tag of a stage that ends a storer's work (`DYNAMIC`).
const SENTINEL: u32 = u32::MAX;

/// Shared memory before the slots: `S` full then `S` empty barriers, the `DYNAMIC` tags, rounded
/// up to 128 bytes.
const fn stream_header(stages: usize, mode: u32) -> usize {
    (16 * stages + if mode == DYNAMIC { 4 * stages } else { 0 }).div_ceil(128) * 128
}

/// Streaming copy through an `S`-stage ring of `KIB` KiB slots: thread 0 loads chunks with bulk
/// copies (`arrive_expect_tx`, producer count 1); lane 0 of warps `1..=W` (the storers) take ring
/// positions `k, k + W, k + 2W, ...`, store each with a bulk store and release a stage once its
/// store has read it, keeping `PENDING` further stores of their own in flight
/// (`cp.async.bulk.wait_group.read PENDING`). Needs `PENDING * W < S` (a storer releases a stage
/// before the loader needs it again) and `S` a multiple of `W`: then the position a storer waits
/// on one lap earlier in the same stage was its own, so the full barrier is never two phases behind
/// its wait (mbarrier parity would alias: with `S = 6, W = 4` a storer passed a wait early and the
/// kernel hung on the H200).
#[inline(always)]
unsafe fn stream<
    const S: usize,
    const KIB: usize,
    const PENDING: u32,
    const MODE: u32,
    const W: u32,
>(
    src: *const u8,
    dst: *mut u8,
    bytes_per_block: u64,
    work: *mut u32,
) {
    const {
        assert!(
            PENDING * W < S as u32,
            "a storer must release a stage before the loader needs it again"
        )
    };
    const {
        assert!(
            S as u32 % W == 0,
            "each stage must belong to one storer (mbarrier parity)"
        )
    };
    type B = NvidiaMbarBackend<1, 1>;
    let chunk = KIB * 1024;
    let tid = thread_idx();
    let (block, grid) = (block_idx(), grid_dim());
    let chunks = (bytes_per_block / chunk as u64) as u32;
    let total = chunks * grid;
    let slot = |stage: u32| {
        // SAFETY: the harness launches with `stream_header + S * KIB KiB` of dynamic shared memory.
        unsafe { dynamic_smem().add(stream_header(S, MODE) + stage as usize * chunk) }
    };
    let tag = |stage: u32| {
        // SAFETY: the tags follow the barriers in the header (`DYNAMIC` only).
        unsafe { dynamic_smem().add(16 * S).cast::<u32>().add(stage as usize) }
    };
    let chunk_of = |i: u32| {
        if MODE == INTERLEAVED {
            i * grid + block
        } else {
            block * chunks + i
        }
    };
    let mut pipe = pipeline::<S, B>();
    if tid == 0 {
        let load = |pipe: &mut ProducerConsumerPipeline<S, B>, idx: u32| {
            pipe.produce_explicit(|stage| {
                let bar = stage.barrier();
                if MODE == DYNAMIC && idx == SENTINEL {
                    // SAFETY: the stage is free; the storer reads the tag after its wait.
                    unsafe { tag(stage.index()).write(SENTINEL) };
                    bar.arrive();
                    return;
                }
                if MODE == DYNAMIC {
                    // SAFETY: as above.
                    unsafe { tag(stage.index()).write(idx) };
                }
                // SAFETY: the producer arrive count is 1 and this is the stage's one arrival
                // (the slot is free); `chunk` is the phase's only announcement, below 2^20. The
                // slot is free; source and slot are 128-byte aligned; `chunk` bytes.
                unsafe {
                    bar.arrive_expect_tx(chunk as u32);
                    bar.bulk_copy_from_global(
                        slot(stage.index()),
                        src.add(idx as usize * chunk),
                        chunk as u32,
                    )
                };
            });
        };
        if MODE == DYNAMIC {
            // SAFETY: the harness passes a zeroed work counter.
            let mut next = unsafe { ticket(work) };
            let mut sentinels = 0;
            while sentinels < W {
                let idx = next;
                if idx < total {
                    // SAFETY: as above.
                    next = unsafe { ticket(work) };
                    load(&mut pipe, idx);
                } else {
                    load(&mut pipe, SENTINEL);
                    sentinels += 1;
                }
            }
        } else {
            for i in 0..chunks {
                load(&mut pipe, chunk_of(i));
            }
        }
    } else if tid % WARP == 0 && tid / WARP <= W {
        let k = tid / WARP - 1;
        for _ in 0..k {
            pipe.consumer_step();
        }
        let (mut pos, mut stored) = (k, 0);
        loop {
            if MODE != DYNAMIC && pos >= chunks {
                break;
            }
            pipe.wait_producer();
            let stage = pipe.consumer_stage();
            let idx = if MODE == DYNAMIC {
                // SAFETY: written by the loader before the arrival this wait observed.
                let idx = unsafe { tag(stage).read() };
                if idx == SENTINEL {
                    break;
                }
                idx
            } else {
                chunk_of(pos)
            };
            // SAFETY: the slot is full (waited); 128-byte aligned; the destination chunk is ours.
            unsafe {
                cp_async_bulk_shared_to_global(
                    dst.add(idx as usize * chunk),
                    cvta_to_shared(slot(stage)),
                    chunk as u32,
                )
            };
            bulk_commit_group();
            stored += 1;
            if stored > PENDING {
                // The store PENDING positions back has read its stage: release it.
                bulk_wait_group_read::<PENDING>();
                pipe.empty_barrier((pos - PENDING * W) % S as u32).arrive();
            }
            pos += W;
            for _ in 0..W {
                pipe.consumer_step();
            }
        }
        bulk_wait_group_read::<0>();
        for j in 1..=stored.min(PENDING) {
            pipe.empty_barrier((pos - j * W) % S as u32).arrive();
        }
    }
}

/// Fills `words` words with the pattern `pattern(i)`, for the streaming benchmarks' inputs.
#[unsafe(no_mangle)]
pub unsafe extern "gpu-kernel" fn bench_fill(dst: *mut u32, words: u64) {
    // SAFETY: reads special registers.
    let (threads, first) = unsafe {
        let block = core::arch::nvptx::_block_dim_x() as u64;
        (
            block * core::arch::nvptx::_grid_dim_x() as u64,
            block_idx() as u64 * block + thread_idx() as u64,
        )
    };
    let mut i = first;
    while i < words {
        // SAFETY: i < words, inside the buffer.
        unsafe { dst.add(i as usize).write(pattern(i)) };
        i += threads;
    }
}

/// Counts the words of `dst` that differ from `pattern(i)` into `mismatches`.
#[unsafe(no_mangle)]
pub unsafe extern "gpu-kernel" fn bench_verify(dst: *const u32, words: u64, mismatches: *mut u32) {
    // SAFETY: reads special registers.
    let (threads, first) = unsafe {
        let block = core::arch::nvptx::_block_dim_x() as u64;
        (
            block * core::arch::nvptx::_grid_dim_x() as u64,
            block_idx() as u64 * block + thread_idx() as u64,
        )
    };
    let mut wrong = 0;
    let mut i = first;
    while i < words {
        // SAFETY: i < words, inside the buffer.
        wrong += u32::from(unsafe { dst.add(i as usize).read() } != pattern(i));
        i += threads;
    }
    if wrong != 0 {
        crate::arch::global_add(mismatches, wrong);
    }
}

/// The streaming input pattern: a hash of the word index.
#[inline(always)]
fn pattern(i: u64) -> u32 {
    let x = i.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    (x >> 29) as u32 ^ (x as u32)
}

/// Defines the cycle kernel named `$name` (a string) in the loop shapes `_llvm`, `_flat` and `_x4`
/// (see [`repeat`]): `$body::<$param..., shape>`, a function whose last generic parameter is the
/// shape.
macro_rules! cycles_kernels {
    ($name:expr, $body:ident, [$($param:tt),*]) => {
        cycles_kernels!(@one $name, "_llvm", $body::<$($param,)* LOOP_LLVM>);
        cycles_kernels!(@one $name, "_flat", $body::<$($param,)* LOOP_FLAT>);
        cycles_kernels!(@one $name, "_x4", $body::<$($param,)* LOOP_X4>);
    };
    (@one $name:expr, $suffix:literal, $body:expr) => {
        #[allow(unused_parens)]
        const _: () = {
            /// A cycle benchmark kernel (see the module docs).
            #[unsafe(export_name = concat!($name, $suffix))]
            pub unsafe extern "gpu-kernel" fn kernel(iters: u32, out: *mut u64) {
                // SAFETY: the harness launches the documented shape with the barriers' shared memory.
                unsafe { $body(iters, out) }
            }
        };
    };
}

/// The backend of a row of `pipeline_suite::bench_kernels!`, with its arrive counts.
macro_rules! backend {
    (mbar, $p:tt, $c:tt) => { NvidiaMbarBackend<$p, $c> };
    (counter, $p:tt, $c:tt) => { AmdCounterBackend<$p, $c> };
}

/// The constant of a word of `pipeline_suite::bench_kernels!` (a round trip's wait, an API).
macro_rules! word {
    (wait) => {
        WAIT
    };
    (ticks) => {
        TICKS
    };
    (poll) => {
        POLL
    };
    (handles) => {
        HANDLES
    };
    (scopes) => {
        SCOPES
    };
    (direct) => {
        DIRECT
    };
}

/// One row of `pipeline_suite::bench_kernels!`: its kernel in the three loop shapes. A release
/// `warp` arrives from lane 0 of each warp (counts 1 and `W`), `thread` from every lane (32 and
/// `32 W`).
macro_rules! bench_kernel {
    (roundtrip, $b:ident, $wait:ident, $what:literal) => {
        cycles_kernels!(
            pipeline_suite::bench_kernel_name!(roundtrip, $b, $wait),
            roundtrip,
            [(backend!($b, 1, 1)), { word!($wait) }]
        );
    };
    (cluster_roundtrip, $what:literal) => {
        cycles_kernels!(
            pipeline_suite::bench_kernel_name!(cluster_roundtrip),
            cluster_roundtrip,
            []
        );
    };
    (ring, $b:ident, $s:literal, $w:literal, warp) => {
        cycles_kernels!(
            pipeline_suite::bench_kernel_name!(ring, $b, $s, $w, warp),
            ring,
            [$s, (backend!($b, 1, $w)), $w, false]
        );
    };
    (ring, $b:ident, $s:literal, $w:literal, thread) => {
        cycles_kernels!(
            pipeline_suite::bench_kernel_name!(ring, $b, $s, $w, thread),
            ring,
            [$s, (backend!($b, 32, { 32 * $w })), $w, true]
        );
    };
    (elect, $s:literal, $w:literal, warp, $api:ident) => {
        cycles_kernels!(
            pipeline_suite::bench_kernel_name!(elect, $s, $w, warp, $api),
            elect_ring,
            [$s, (backend!(mbar, 1, $w)), $w, false, { word!($api) }]
        );
    };
    (elect, $s:literal, $w:literal, thread, $api:ident) => {
        cycles_kernels!(
            pipeline_suite::bench_kernel_name!(elect, $s, $w, thread, $api),
            elect_ring,
            [$s, (backend!(mbar, 1, { 32 * $w })), $w, true, {
                word!($api)
            }]
        );
    };
}

pipeline_suite::bench_kernels!(bench_kernel);

/// The counter-ring variants (declared after `cycles_kernels!`, which they use).
mod variants;

/// The chunk assignment of a row of `pipeline_suite::bench_stream_kernels!`.
macro_rules! stream_mode {
    (contig) => {
        CONTIG
    };
    (interleaved) => {
        INTERLEAVED
    };
    (dynamic) => {
        DYNAMIC
    };
}

/// One row of `pipeline_suite::bench_stream_kernels!` (the CTAs per SM are the harness's).
macro_rules! stream_kernel {
    ($name:ident, $s:literal, $kib:literal, $pending:literal, $mode:ident, $w:literal, $ctas_per_sm:literal) => {
        /// A streaming benchmark kernel (see `stream`).
        #[unsafe(no_mangle)]
        pub unsafe extern "gpu-kernel" fn $name(
            src: *const u8,
            dst: *mut u8,
            bytes_per_block: u64,
            work: *mut u32,
        ) {
            // SAFETY: the harness launches `1 + W` warps with the stream's shared memory and a
            // zeroed work counter.
            unsafe {
                stream::<$s, $kib, $pending, { stream_mode!($mode) }, $w>(
                    src,
                    dst,
                    bytes_per_block,
                    work,
                )
            }
        }
    };
}

pipeline_suite::bench_stream_kernels!(stream_kernel);
