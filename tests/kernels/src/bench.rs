//! Benchmark kernels of `cargo xtask bench-nvidia`, written with the library. Their twins in CUDA
//! C++ with raw inline PTX are in `tests/bench/bench.cu`, with the same names, launch shapes and
//! algorithm, so that the harness can run both side by side and compare.
//!
//! Cycle kernels take `(iters, out)`: thread 0 writes the `%clock64` cycles of its timed loop to
//! `out[block]`. Streaming kernels take `(src, dst, bytes_per_block, work)`. The counter-ring
//! variants are in [`variants`].

use gpu_pipeline::arch::nvptx::{
    clock64, cp_async_bulk_commit_group, cp_async_bulk_shared_to_global,
    cp_async_bulk_wait_group_read, cvta_to_shared,
};
use gpu_pipeline::{
    AmdCounterBackend, Cluster, NvidiaMbarBackend, PipelineBackend, ProducerConsumerPipeline,
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
    let rank = gpu_pipeline::arch::nvptx::cluster_ctarank();
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
                bar.arrive_expect_tx(chunk as u32);
                // SAFETY: the slot is free; source and slot are 128-byte aligned; `chunk` bytes.
                unsafe {
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
            cp_async_bulk_commit_group();
            stored += 1;
            if stored > PENDING {
                // The store PENDING positions back has read its stage: release it.
                cp_async_bulk_wait_group_read::<PENDING>();
                pipe.empty_barrier((pos - PENDING * W) % S as u32).arrive();
            }
            pos += W;
            for _ in 0..W {
                pipe.consumer_step();
            }
        }
        cp_async_bulk_wait_group_read::<0>();
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

type Mbar1 = NvidiaMbarBackend<1, 1>;
type Counter1 = AmdCounterBackend<1, 1>;

/// Defines the cycle kernel `$name` in the loop shapes `_llvm`, `_flat` and `_x4` (see
/// [`repeat`]): `$body::<$param..., shape>`, a function whose last generic parameter is the shape.
macro_rules! cycles_kernels {
    ($name:ident, $body:ident, [$($param:tt),*]) => {
        cycles_kernels!(@one $name, "_llvm", $body::<$($param,)* LOOP_LLVM>);
        cycles_kernels!(@one $name, "_flat", $body::<$($param,)* LOOP_FLAT>);
        cycles_kernels!(@one $name, "_x4", $body::<$($param,)* LOOP_X4>);
    };
    (@one $name:ident, $suffix:literal, $body:expr) => {
        #[allow(unused_parens)]
        const _: () = {
            /// A cycle benchmark kernel (see the module docs).
            #[unsafe(export_name = concat!(stringify!($name), $suffix))]
            pub unsafe extern "gpu-kernel" fn kernel(iters: u32, out: *mut u64) {
                // SAFETY: the harness launches the documented shape with the barriers' shared memory.
                unsafe { $body(iters, out) }
            }
        };
    };
}

cycles_kernels!(bench_roundtrip_mbar, roundtrip, [Mbar1, WAIT]);
cycles_kernels!(bench_roundtrip_mbar_ticks, roundtrip, [Mbar1, TICKS]);
cycles_kernels!(bench_roundtrip_mbar_poll, roundtrip, [Mbar1, POLL]);
cycles_kernels!(bench_roundtrip_counter, roundtrip, [Counter1, WAIT]);
cycles_kernels!(bench_cluster_roundtrip, cluster_roundtrip, []);

macro_rules! ring_kernels {
    ($($name:ident: $s:literal, $b:ident, $w:literal, $per_thread:literal, $p:literal, $c:literal;)*) => {
        $(cycles_kernels!($name, ring, [$s, ($b<$p, $c>), $w, $per_thread]);)*
    };
}

ring_kernels! {
    bench_ring_mbar_s2_c1_warp: 2, NvidiaMbarBackend, 1, false, 1, 1;
    bench_ring_mbar_s4_c1_warp: 4, NvidiaMbarBackend, 1, false, 1, 1;
    bench_ring_mbar_s8_c1_warp: 8, NvidiaMbarBackend, 1, false, 1, 1;
    bench_ring_mbar_s2_c4_warp: 2, NvidiaMbarBackend, 4, false, 1, 4;
    bench_ring_mbar_s4_c4_warp: 4, NvidiaMbarBackend, 4, false, 1, 4;
    bench_ring_mbar_s8_c4_warp: 8, NvidiaMbarBackend, 4, false, 1, 4;
    bench_ring_mbar_s2_c1_thread: 2, NvidiaMbarBackend, 1, true, 32, 32;
    bench_ring_mbar_s4_c1_thread: 4, NvidiaMbarBackend, 1, true, 32, 32;
    bench_ring_mbar_s8_c1_thread: 8, NvidiaMbarBackend, 1, true, 32, 32;
    bench_ring_mbar_s2_c4_thread: 2, NvidiaMbarBackend, 4, true, 32, 128;
    bench_ring_mbar_s4_c4_thread: 4, NvidiaMbarBackend, 4, true, 32, 128;
    bench_ring_mbar_s8_c4_thread: 8, NvidiaMbarBackend, 4, true, 32, 128;
    bench_ring_counter_s4_c1_warp: 4, AmdCounterBackend, 1, false, 1, 1;
    bench_ring_counter_s4_c4_warp: 4, AmdCounterBackend, 4, false, 1, 4;
    bench_ring_counter_s4_c1_thread: 4, AmdCounterBackend, 1, true, 32, 32;
    bench_ring_counter_s4_c4_thread: 4, AmdCounterBackend, 4, true, 32, 128;
}

/// The elected-lane rings: `bench_elect_s{S}_c{W}_{warp|thread}_{handles|scopes|direct}`.
macro_rules! elect_kernels {
    ($($s:literal, $w:literal: $c_warp:literal, $c_thread:literal;)*) => {$(
        elect_kernels!(@api $s, $w, warp, false, $c_warp);
        elect_kernels!(@api $s, $w, thread, true, $c_thread);
    )*};
    (@api $s:literal, $w:literal, $release:ident, $per_thread:literal, $c:literal) => {
        elect_kernels!(@one $s, $w, $release, $per_thread, $c, handles, HANDLES);
        elect_kernels!(@one $s, $w, $release, $per_thread, $c, scopes, SCOPES);
        elect_kernels!(@one $s, $w, $release, $per_thread, $c, direct, DIRECT);
    };
    (@one $s:literal, $w:literal, $release:ident, $per_thread:literal, $c:literal, $api:ident, $api_const:ident) => {
        elect_kernels!(@shape $s, $w, $release, $per_thread, $c, $api, $api_const, "_llvm", LOOP_LLVM);
        elect_kernels!(@shape $s, $w, $release, $per_thread, $c, $api, $api_const, "_flat", LOOP_FLAT);
        elect_kernels!(@shape $s, $w, $release, $per_thread, $c, $api, $api_const, "_x4", LOOP_X4);
    };
    (@shape $s:literal, $w:literal, $release:ident, $per_thread:literal, $c:literal, $api:ident, $api_const:ident, $suffix:literal, $u:ident) => {
        const _: () = {
            /// An elected-lane ring benchmark kernel (see `elect_ring`).
            #[unsafe(export_name = concat!(
                "bench_elect_s", stringify!($s), "_c", stringify!($w), "_", stringify!($release),
                "_", stringify!($api), $suffix
            ))]
            pub unsafe extern "gpu-kernel" fn kernel(iters: u32, out: *mut u64) {
                // SAFETY: the harness launches one producer warp and `W` consumer warps with the
                // barriers' shared memory.
                unsafe {
                    elect_ring::<$s, NvidiaMbarBackend<1, $c>, $w, $per_thread, $api_const, $u>(iters, out)
                }
            }
        };
    };
}

elect_kernels! {
    1, 1: 1, 32;
    2, 1: 1, 32;
    4, 1: 1, 32;
    8, 1: 1, 32;
    1, 4: 4, 128;
    2, 4: 4, 128;
    4, 4: 4, 128;
    8, 4: 4, 128;
}

/// The counter-ring variants (declared after `cycles_kernels!`, which they use).
mod variants;

macro_rules! stream_kernels {
    ($($name:ident: $s:literal, $kib:literal, $pending:literal, $mode:ident, $w:literal;)*) => {
        $(
            /// A streaming benchmark kernel (see `stream`).
            #[unsafe(no_mangle)]
            pub unsafe extern "gpu-kernel" fn $name(src: *const u8, dst: *mut u8, bytes_per_block: u64, work: *mut u32) {
                // SAFETY: the harness launches `1 + W` warps with the stream's shared memory and a
                // zeroed work counter.
                unsafe { stream::<$s, $kib, $pending, $mode, $w>(src, dst, bytes_per_block, work) }
            }
        )*
    };
}

// The C++ twins' list (`STREAM` in tests/bench/bench.cu), in the same order.
stream_kernels! {
    bench_stream_s2_k8: 2, 8, 1, CONTIG, 1;
    bench_stream_s2_k16: 2, 16, 1, CONTIG, 1;
    bench_stream_s2_k32: 2, 32, 1, CONTIG, 1;
    bench_stream_s2_k64: 2, 64, 1, CONTIG, 1;
    bench_stream_s4_k8: 4, 8, 1, CONTIG, 1;
    bench_stream_s4_k16: 4, 16, 1, CONTIG, 1;
    bench_stream_s4_k32: 4, 32, 1, CONTIG, 1;
    bench_stream_s8_k8: 8, 8, 1, CONTIG, 1;
    bench_stream_s8_k16: 8, 16, 1, CONTIG, 1;
    bench_stream_s4_k32_p2: 4, 32, 2, CONTIG, 1;
    bench_stream_s4_k32_p3: 4, 32, 3, CONTIG, 1;
    bench_stream_s8_k16_p3: 8, 16, 3, CONTIG, 1;
    bench_stream_s8_k16_p6: 8, 16, 6, CONTIG, 1;
    bench_stream_s3_k64_p1: 3, 64, 1, CONTIG, 1;
    bench_stream_s3_k64_p2: 3, 64, 2, CONTIG, 1;
    bench_stream_s6_k32_p2: 6, 32, 2, CONTIG, 1;
    bench_stream_s6_k32_p4: 6, 32, 4, CONTIG, 1;
    bench_stream_s7_k32_p3: 7, 32, 3, CONTIG, 1;
    bench_stream_s14_k16_p6: 14, 16, 6, CONTIG, 1;
    bench_stream_s4_k32_p1_i: 4, 32, 1, INTERLEAVED, 1;
    bench_stream_s6_k32_p2_i: 6, 32, 2, INTERLEAVED, 1;
    bench_stream_s8_k16_p3_i: 8, 16, 3, INTERLEAVED, 1;
    bench_stream_s3_k64_p1_i: 3, 64, 1, INTERLEAVED, 1;
    bench_stream_s4_k32_p1_d: 4, 32, 1, DYNAMIC, 1;
    bench_stream_s6_k32_p2_d: 6, 32, 2, DYNAMIC, 1;
    bench_stream_s8_k16_p3_d: 8, 16, 3, DYNAMIC, 1;
    bench_stream_s3_k64_p1_d: 3, 64, 1, DYNAMIC, 1;
    bench_stream_s7_k32_p3_d: 7, 32, 3, DYNAMIC, 1;
    bench_stream_s3_k32_p1: 3, 32, 1, CONTIG, 1;
    bench_stream_s3_k32_p1_i: 3, 32, 1, INTERLEAVED, 1;
    bench_stream_s3_k32_p1_d: 3, 32, 1, DYNAMIC, 1;
    bench_stream_s6_k16_p2: 6, 16, 2, CONTIG, 1;
    bench_stream_s6_k16_p2_d: 6, 16, 2, DYNAMIC, 1;
    bench_stream_s7_k16_p3_d: 7, 16, 3, DYNAMIC, 1;
    bench_stream_s4_k16_p2_d: 4, 16, 2, DYNAMIC, 1;
    bench_stream_s3_k16_p1_d: 3, 16, 1, DYNAMIC, 1;
    bench_stream_s6_k32_p1_w2: 6, 32, 1, CONTIG, 2;
    bench_stream_s8_k16_p2_w2: 8, 16, 2, CONTIG, 2;
    bench_stream_s6_k32_p1_d_w2: 6, 32, 1, DYNAMIC, 2;
    bench_stream_s8_k16_p1_d_w4: 8, 16, 1, DYNAMIC, 4;
    bench_stream_s8_k16_p1_d_w2: 8, 16, 1, DYNAMIC, 2;
    bench_stream_s8_k8_p1_d_w4: 8, 8, 1, DYNAMIC, 4;
    bench_stream_s12_k16_p2_d_w4: 12, 16, 2, DYNAMIC, 4;
    bench_stream_s16_k8_p1_d_w4: 16, 8, 1, DYNAMIC, 4;
    bench_stream_s8_k16_p0_d_w4: 8, 16, 0, DYNAMIC, 4;
    bench_stream_s4_k16_p1_d_w2: 4, 16, 1, DYNAMIC, 2;
}
