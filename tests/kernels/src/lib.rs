//! The device test kernels of `gpu-pipeline`.
//!
//! A `#![no_std]` GPU crate that depends on the library exactly as any other kernel crate would.
//! Built by `cargo xtask build` into PTX (nvptx64, sm_90) and HSA code objects (amdgcn).
//! Which kernels exist is decided by the lists of `pipeline-suite`, which the host harness
//! expands too.
//!
//! Every kernel moves real data: producers copy items from `input` into slots, consumers copy
//! them from the slots to `output`, and check each slot's sequence-number header; the harness
//! fills `input` with fresh random words, poisons `output`, and compares.

#![no_std]
#![feature(
    abi_gpu_kernel,
    core_intrinsics,
    gpu_intrinsics,
    gpu_launch_sized_workgroup_mem
)]
#![cfg_attr(target_arch = "nvptx64", feature(asm_experimental_arch, stdarch_nvptx))]
#![cfg_attr(target_arch = "amdgpu", feature(stdarch_amdgpu))]
#![allow(clippy::missing_safety_doc, internal_features)]

mod arch;

use arch::{
    WARP, block_idx, dynamic_smem, global_add, sync_lanes, sync_threads, sync_warp, thread_idx,
};
use gpu_pipeline::{AmdCounterBackend, Cursor, PipelineBackend, ProducerConsumerPipeline, Side};
use pipeline_suite::{
    DONE, HEADER_WORDS, PAYLOAD_WORDS, R_CONSUMED, R_CONSUMER, R_DONE, R_ERRORS, R_PRODUCER,
    REPORT_WORDS, SLOT_WORDS, api, barrier_region,
};

#[cfg(all(target_arch = "nvptx64", feature = "bench"))]
mod bench;
#[cfg(all(target_arch = "nvptx64", feature = "checked"))]
mod broken;
#[cfg(target_arch = "nvptx64")]
mod epilogue;
#[cfg(target_arch = "nvptx64")]
mod nvidia;
mod probes;
#[cfg(target_arch = "nvptx64")]
mod role;

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: trapping aborts the kernel; there is nothing to unwind.
    unsafe {
        core::arch::nvptx::trap()
    }
    #[cfg(target_arch = "amdgpu")]
    core::arch::amdgpu::s_sethalt::<1>()
}

/// A block's report record (layout in `pipeline-suite`): end-of-run cursors, items consumed,
/// header errors, completion. Every kernel writes it through these methods.
#[derive(Clone, Copy)]
struct Report(*mut u32);

impl Report {
    /// The record of block `block` in the report buffer `base`.
    #[inline(always)]
    fn of_block(base: *mut u32, block: u32) -> Self {
        Self(base.wrapping_add(block as usize * REPORT_WORDS))
    }

    #[inline(always)]
    fn write(self, at: usize, value: u32) {
        // SAFETY: `at < REPORT_WORDS`; the harness sizes the buffer for one record per block.
        unsafe { self.0.add(at).write(value) };
    }

    /// The producer's cursor at the end of the run.
    #[inline(always)]
    fn producer<const S: usize, R: Side>(self, cursor: Cursor<S, R>) {
        self.write(R_PRODUCER, cursor.stage());
        self.write(R_PRODUCER + 1, cursor.lap());
    }

    /// The consumer's cursor at the end of the run, and the items it consumed.
    #[inline(always)]
    fn consumer<const S: usize, R: Side>(self, cursor: Cursor<S, R>, consumed: u32) {
        self.write(R_CONSUMER, cursor.stage());
        self.write(R_CONSUMER + 1, cursor.lap());
        self.write(R_CONSUMED, consumed);
    }

    /// Adds a thread's header mismatches to the record's error count (atomically).
    #[inline(always)]
    fn errors(self, errors: u32) {
        global_add(self.0.wrapping_add(R_ERRORS), errors);
    }

    /// Marks the block as having reached its end.
    #[inline(always)]
    fn done(self) {
        self.write(R_DONE, DONE);
    }
}

/// The slots of a ring kernel: `stages` slots of [`SLOT_WORDS`] after the barrier region.
#[inline(always)]
fn slot(stages: usize, stage: u32) -> *mut u32 {
    // SAFETY: the harness launches with `ring_smem_bytes(stages)` of dynamic shared memory.
    unsafe {
        dynamic_smem()
            .add(barrier_region(stages))
            .cast::<u32>()
            .add(stage as usize * SLOT_WORDS)
    }
}

/// Copies words `start..end` of item `item` from `input` into the slot: thread `tid` of `threads`
/// copies every `threads`-th word; the part that starts at word 0 also carries the header
/// (written by thread 0).
#[inline(always)]
unsafe fn fill_range(
    slot: *mut u32,
    input: *const u32,
    item: u32,
    tid: u32,
    threads: u32,
    start: usize,
    end: usize,
) {
    let src = item as usize * PAYLOAD_WORDS;
    let mut j = start + tid as usize;
    while j < end {
        // SAFETY: the harness sizes `input` for every item of every block; `slot` has SLOT_WORDS.
        unsafe { slot.add(HEADER_WORDS + j).write(input.add(src + j).read()) };
        j += threads as usize;
    }
    if start == 0 && tid == 0 {
        // SAFETY: the header is inside the slot.
        unsafe { slot.write(item) };
    }
}

/// Copies item `item` from `input` into the slot (see [`fill_range`]).
#[inline(always)]
unsafe fn fill(slot: *mut u32, input: *const u32, item: u32, ptid: u32, pt: u32) {
    // SAFETY: forwarded.
    unsafe { fill_range(slot, input, item, ptid, pt, 0, PAYLOAD_WORDS) }
}

/// Copies words `start..end` of item `item` from the slot to `output` (every `threads`-th word
/// from thread `tid`); if the part starts at word 0, returns 1 when the slot's header is not `item`.
#[inline(always)]
unsafe fn drain_range(
    slot: *const u32,
    output: *mut u32,
    item: u32,
    tid: u32,
    threads: u32,
    start: usize,
    end: usize,
) -> u32 {
    // SAFETY: the header is inside the slot.
    let header = if start == 0 {
        unsafe { slot.read() }
    } else {
        item
    };
    let dst = item as usize * PAYLOAD_WORDS;
    let mut j = start + tid as usize;
    while j < end {
        // SAFETY: the harness sizes `output` for every item of every block.
        unsafe { output.add(dst + j).write(slot.add(HEADER_WORDS + j).read()) };
        j += threads as usize;
    }
    u32::from(header != item)
}

/// Copies item `item` from the slot to `output` (see [`drain_range`]).
#[inline(always)]
unsafe fn drain(slot: *const u32, output: *mut u32, item: u32, ctid: u32, ct: u32) -> u32 {
    // SAFETY: forwarded.
    unsafe { drain_range(slot, output, item, ctid, ct, 0, PAYLOAD_WORDS) }
}

/// What the data-moving ring kernels share at their start: this block's part of `input` and
/// `output`, its report record, and the pipeline over the dynamic shared memory, initialised by
/// thread 0 before a block barrier.
///
/// # Safety
///
/// The harness sized `input`, `output` and `report` for `grid * items` items and launched with
/// the ring's shared memory (`pipeline_suite::ring_smem_bytes`); every thread of the block calls it.
#[inline(always)]
unsafe fn block_ring<const STAGES: usize, B: PipelineBackend>(
    input: *const u32,
    output: *mut u32,
    items: u32,
    report: *mut u32,
) -> (
    *const u32,
    *mut u32,
    Report,
    ProducerConsumerPipeline<STAGES, B>,
) {
    let block = block_idx();
    let base = block as usize * items as usize * PAYLOAD_WORDS;
    // SAFETY: the caller sized the buffers for `grid * items` items.
    let (input, output) = unsafe { (input.add(base), output.add(base)) };
    // SAFETY: the barrier region starts the dynamic shared memory; init by thread 0, then a barrier.
    let pipe = unsafe { ProducerConsumerPipeline::<STAGES, B>::new(dynamic_smem().cast()) };
    if thread_idx() == 0 {
        // SAFETY: one thread, before any use; the block barrier follows.
        unsafe { pipe.init() };
    }
    sync_threads();
    (input, output, Report::of_block(report, block), pipe)
}

/// The ring test: `PT` producer threads then `CT` consumer threads move `items` items through a
/// `STAGES`-stage pipeline on backend `B`, by API path `API`. `PE`/`CE`: only lane 0 of the (one
/// warp) side arrives, after a warp barrier.
#[inline(always)]
unsafe fn ring<
    const STAGES: usize,
    B: PipelineBackend,
    const PT: u32,
    const PE: bool,
    const CT: u32,
    const CE: bool,
    const API: u32,
>(
    input: *const u32,
    output: *mut u32,
    items: u32,
    report: *mut u32,
) {
    if API == api::INFLIGHT {
        // SAFETY: forwarded from the kernel's caller.
        return unsafe { in_flight::<STAGES, B, PT, PE, CT, CE>(input, output, items, report) };
    }
    let tid = thread_idx();
    // SAFETY: forwarded from the kernel's caller.
    let (input, output, report, mut pipe) =
        unsafe { block_ring::<STAGES, B>(input, output, items, report) };
    let lane = tid % WARP;

    if tid < PT {
        let ptid = tid;
        for item in 0..items {
            // SAFETY (all arms): `fill` writes the slot the pipeline handed out.
            match (PE, API) {
                (true, api::SCOPES) => pipe.produce_explicit(|stage| {
                    unsafe { fill(slot(STAGES, stage.index()), input, item, ptid, PT) };
                    sync_warp();
                    if lane == 0 {
                        stage.arrive();
                    }
                }),
                (true, _) => {
                    let stage = pipe.acquire_producer();
                    unsafe { fill(slot(STAGES, stage.index()), input, item, ptid, PT) };
                    sync_warp();
                    if lane == 0 {
                        stage.arrive();
                    }
                    stage.release_without_signal();
                }
                (false, api::HANDLES) => {
                    let stage = pipe.acquire_producer();
                    unsafe { fill(slot(STAGES, stage.index()), input, item, ptid, PT) };
                    stage.release();
                }
                (false, api::SCOPES) => pipe.produce(|stage| unsafe {
                    fill(slot(STAGES, stage.index()), input, item, ptid, PT)
                }),
                (false, _) => {
                    match API {
                        api::TRYWAIT => {
                            let mut ready = pipe.try_wait_consumer();
                            let mut polls = 0;
                            while !ready && polls < 16 {
                                ready = pipe.try_wait_consumer();
                                polls += 1;
                            }
                            pipe.wait_consumer_if_needed(ready);
                        }
                        api::TICKS => pipe.wait_consumer_ticks(1000),
                        _ => pipe.wait_consumer(),
                    }
                    if API == api::SIGNAL_EARLY {
                        // The control's planted bug: the slot is published before it is written.
                        pipe.producer_signal();
                        unsafe { fill(slot(STAGES, pipe.producer_stage()), input, item, ptid, PT) };
                    } else {
                        unsafe { fill(slot(STAGES, pipe.producer_stage()), input, item, ptid, PT) };
                        pipe.producer_signal();
                    }
                    pipe.producer_step();
                }
            }
        }
        if ptid == 0 {
            report.producer(pipe.producer_cursor());
        }
    } else if tid < PT + CT {
        let ctid = tid - PT;
        let mut errors = 0;
        for item in 0..items {
            // SAFETY (all arms): `drain` reads the slot the pipeline handed out.
            match (CE, API) {
                (true, api::SCOPES) => pipe.consume_explicit(|stage| {
                    errors += unsafe { drain(slot(STAGES, stage.index()), output, item, ctid, CT) };
                    sync_warp();
                    if lane == 0 {
                        stage.arrive();
                    }
                }),
                (true, _) => {
                    let stage = pipe.acquire_consumer();
                    errors += unsafe { drain(slot(STAGES, stage.index()), output, item, ctid, CT) };
                    sync_warp();
                    if lane == 0 {
                        stage.arrive();
                    }
                    stage.release_without_signal();
                }
                (false, api::HANDLES) => {
                    let stage = pipe.acquire_consumer();
                    errors += unsafe { drain(slot(STAGES, stage.index()), output, item, ctid, CT) };
                    stage.release();
                }
                (false, api::SCOPES) => {
                    errors += pipe.consume(|stage| unsafe {
                        drain(slot(STAGES, stage.index()), output, item, ctid, CT)
                    })
                }
                (false, _) => {
                    match API {
                        api::TRYWAIT => {
                            let mut ready = pipe.try_wait_producer();
                            let mut polls = 0;
                            while !ready && polls < 16 {
                                ready = pipe.try_wait_producer();
                                polls += 1;
                            }
                            pipe.wait_producer_if_needed(ready);
                        }
                        api::TICKS => pipe.wait_producer_ticks(1000),
                        _ => pipe.wait_producer(),
                    }
                    errors += unsafe {
                        drain(slot(STAGES, pipe.consumer_stage()), output, item, ctid, CT)
                    };
                    pipe.consumer_signal();
                    pipe.consumer_step();
                }
            }
        }
        report.errors(errors);
        if ctid == 0 {
            report.consumer(pipe.consumer_cursor(), items);
        }
    }
    sync_threads();
    if tid == 0 {
        report.done();
    }
}

/// Releases `stage`: every lane arrives (`elected == false`), or lane 0 for its warp after a warp
/// sync (`elected == true`).
#[inline(always)]
fn release_as<const STAGES: usize, B: PipelineBackend, S: gpu_pipeline::Side>(
    stage: gpu_pipeline::Stage<'_, STAGES, B, S>,
    elected: bool,
) {
    if elected {
        sync_warp();
        if thread_idx() % WARP == 0 {
            stage.arrive();
        }
        stage.release_without_signal();
    } else {
        stage.release();
    }
}

/// The in-flight ring (`api::INFLIGHT`, see `pipeline_suite::api`): the pipeline split into its
/// halves; the producers fill and release each stage, the consumers hold two stages at once,
/// releasing stage `k - 1` after reading stage `k`. `STAGES >= 2` (holding two of one slot would
/// wait for itself).
unsafe fn in_flight<
    const STAGES: usize,
    B: PipelineBackend,
    const PT: u32,
    const PE: bool,
    const CT: u32,
    const CE: bool,
>(
    input: *const u32,
    output: *mut u32,
    items: u32,
    report: *mut u32,
) {
    assert!(STAGES >= 2, "an in-flight consumer needs two stages");
    let tid = thread_idx();
    // SAFETY: forwarded from the kernel's caller.
    let (input, output, report, pipe) =
        unsafe { block_ring::<STAGES, B>(input, output, items, report) };
    if tid < PT {
        let producer = pipe.into_producer();
        for item in 0..items {
            let stage = producer.acquire();
            // SAFETY: `fill` writes the slot the producer half handed out.
            unsafe { fill(slot(STAGES, stage.index()), input, item, tid, PT) };
            release_as(stage, PE);
        }
        if tid == 0 {
            report.producer(producer.cursor());
        }
    } else if tid < PT + CT {
        let ctid = tid - PT;
        let consumer = pipe.into_consumer();
        // SAFETY (both reads): `drain` reads the slot the consumer half handed out, full and
        // not yet released.
        let mut previous = consumer.acquire();
        let mut errors = unsafe { drain(slot(STAGES, previous.index()), output, 0, ctid, CT) };
        for item in 1..items {
            let stage = consumer.acquire();
            errors += unsafe { drain(slot(STAGES, stage.index()), output, item, ctid, CT) };
            release_as(previous, CE);
            previous = stage;
        }
        release_as(previous, CE);
        report.errors(errors);
        if ctid == 0 {
            report.consumer(consumer.cursor(), items);
        }
    }
    sync_threads();
    if tid == 0 {
        report.done();
    }
}

/// The split test (see `pipeline_suite::split_kernels!`): `PT` producer threads and `CT` consumer
/// threads, thread `t` of a side on the items `i` with `i % STAGES == t % STAGES`; the lanes of a
/// warp wait on different slots and, after a warp barrier, arrive on different barriers in one
/// call. `items` is a multiple of `STAGES`.
#[inline(always)]
unsafe fn split<
    const STAGES: usize,
    B: PipelineBackend,
    const PT: u32,
    const CT: u32,
    const API: u32,
>(
    input: *const u32,
    output: *mut u32,
    items: u32,
    report: *mut u32,
) {
    let stages = STAGES as u32;
    let tid = thread_idx();
    // SAFETY: forwarded from the kernel's caller.
    let (input, output, report, mut pipe) =
        unsafe { block_ring::<STAGES, B>(input, output, items, report) };

    if tid < PT {
        let (group, rank, share) = (tid % stages, tid / stages, PT / stages);
        for _ in 0..group {
            pipe.producer_step();
        }
        let mut item = group;
        while item < items {
            // SAFETY (all arms): `fill` writes this group's part of the slot the pipeline handed out.
            match API {
                api::HANDLES => {
                    let stage = pipe.acquire_producer();
                    unsafe { fill(slot(STAGES, stage.index()), input, item, rank, share) };
                    sync_warp();
                    stage.release();
                }
                api::SCOPES => pipe.produce(|stage| {
                    unsafe { fill(slot(STAGES, stage.index()), input, item, rank, share) };
                    sync_warp();
                }),
                _ => {
                    pipe.wait_consumer();
                    unsafe {
                        fill(
                            slot(STAGES, pipe.producer_stage()),
                            input,
                            item,
                            rank,
                            share,
                        )
                    };
                    sync_warp();
                    pipe.producer_signal();
                    pipe.producer_step();
                }
            }
            for _ in 1..stages {
                pipe.producer_step();
            }
            item += stages;
        }
        if tid == 0 {
            report.producer(pipe.producer_cursor());
        }
    } else if tid < PT + CT {
        let ctid = tid - PT;
        let (group, rank, share) = (ctid % stages, ctid / stages, CT / stages);
        // The consumer lanes of this warp: all of it, or the first `CT` lanes.
        let lanes = if CT >= WARP { u32::MAX } else { (1 << CT) - 1 };
        for _ in 0..group {
            pipe.consumer_step();
        }
        let mut errors = 0;
        let mut item = group;
        while item < items {
            // SAFETY (all arms): `drain` reads this group's part of the slot the pipeline handed out.
            match API {
                api::HANDLES => {
                    let stage = pipe.acquire_consumer();
                    errors +=
                        unsafe { drain(slot(STAGES, stage.index()), output, item, rank, share) };
                    sync_lanes(lanes);
                    stage.release();
                }
                api::SCOPES => {
                    errors += pipe.consume(|stage| {
                        let e = unsafe {
                            drain(slot(STAGES, stage.index()), output, item, rank, share)
                        };
                        sync_lanes(lanes);
                        e
                    })
                }
                _ => {
                    pipe.wait_producer();
                    errors += unsafe {
                        drain(
                            slot(STAGES, pipe.consumer_stage()),
                            output,
                            item,
                            rank,
                            share,
                        )
                    };
                    sync_lanes(lanes);
                    pipe.consumer_signal();
                    pipe.consumer_step();
                }
            }
            for _ in 1..stages {
                pipe.consumer_step();
            }
            item += stages;
        }
        report.errors(errors);
        if ctid == 0 {
            report.consumer(pipe.consumer_cursor(), items);
        }
    }
    sync_threads();
    if tid == 0 {
        report.done();
    }
}

/// The synchronisation-only test: one producer warp runs `producer_signal_and_step`, one
/// consumer warp `consumer_signal_and_step`, `items` times each; the cursors are reported.
#[inline(always)]
unsafe fn sync_only<const STAGES: usize, B: PipelineBackend>(items: u32, report: *mut u32) {
    let tid = thread_idx();
    let report = Report::of_block(report, block_idx());
    // SAFETY: as in `ring`.
    let mut pipe = unsafe { ProducerConsumerPipeline::<STAGES, B>::new(dynamic_smem().cast()) };
    if tid == 0 {
        // SAFETY: one thread, then a block barrier.
        unsafe { pipe.init() };
    }
    sync_threads();
    if tid < WARP {
        for _ in 0..items {
            pipe.producer_signal_and_step();
        }
        if tid == 0 {
            report.producer(pipe.producer_cursor());
        }
    } else {
        for _ in 0..items {
            pipe.consumer_signal_and_step();
        }
        if tid == WARP {
            report.consumer(pipe.consumer_cursor(), items);
        }
    }
    sync_threads();
    if tid == 0 {
        report.done();
    }
}

/// The backend type of a kernel row.
macro_rules! backend {
    (mbar, $p:expr, $c:expr) => { gpu_pipeline::NvidiaMbarBackend<{ $p }, { $c }> };
    (counter, $p:expr, $c:expr) => { AmdCounterBackend<{ $p }, { $c }> };
}

/// The arrive count of a side: 1 if elected (`e`), else its thread count (`a`).
macro_rules! arrivals {
    ($t:literal, e) => {
        1
    };
    ($t:literal, a) => {
        $t
    };
}

macro_rules! elected {
    (e) => {
        true
    };
    (a) => {
        false
    };
}

macro_rules! api_of {
    (handles) => {
        api::HANDLES
    };
    (scopes) => {
        api::SCOPES
    };
    (direct) => {
        api::DIRECT
    };
    (trywait) => {
        api::TRYWAIT
    };
    (ticks) => {
        api::TICKS
    };
    (signal_early) => {
        api::SIGNAL_EARLY
    };
    (inflight) => {
        api::INFLIGHT
    };
}

macro_rules! ring_kernel {
    ($b:ident, $s:literal, $pt:literal, $pe:ident, $ct:literal, $ce:ident, $api:ident) => {
        const _: () = {
            /// A ring test kernel (see `ring`).
            #[unsafe(export_name = pipeline_suite::ring_kernel_name!($b, $s, $pt, $pe, $ct, $ce, $api))]
            pub unsafe extern "gpu-kernel" fn kernel(input: *const u32, output: *mut u32, items: u32, report: *mut u32) {
                // SAFETY: the harness launches with the layout of `pipeline-suite`.
                unsafe {
                    ring::<
                        $s,
                        backend!($b, arrivals!($pt, $pe), arrivals!($ct, $ce)),
                        $pt,
                        { elected!($pe) },
                        $ct,
                        { elected!($ce) },
                        { api_of!($api) },
                    >(input, output, items, report)
                }
            }
        };
    };
}

macro_rules! split_kernel {
    ($b:ident, $s:literal, $pt:literal, $ct:literal, $api:ident) => {
        const _: () = {
            /// A split test kernel (see `split`).
            #[unsafe(export_name = pipeline_suite::split_kernel_name!($b, $s, $pt, $ct, $api))]
            pub unsafe extern "gpu-kernel" fn kernel(
                input: *const u32,
                output: *mut u32,
                items: u32,
                report: *mut u32,
            ) {
                // SAFETY: the harness launches with the layout of `pipeline-suite`.
                unsafe {
                    split::<$s, backend!($b, $pt / $s, $ct / $s), $pt, $ct, { api_of!($api) }>(
                        input, output, items, report,
                    )
                }
            }
        };
    };
}

macro_rules! sync_kernel {
    ($b:ident, $s:literal) => {
        const _: () = {
            /// A synchronisation-only test kernel (see `sync_only`).
            #[unsafe(export_name = concat!("sync_", stringify!($b), "_s", stringify!($s)))]
            pub unsafe extern "gpu-kernel" fn kernel(items: u32, report: *mut u32) {
                // SAFETY: the harness launches 2 warps with the barrier region as shared memory.
                unsafe { sync_only::<$s, backend!($b, 32, 32)>(items, report) }
            }
        };
    };
}

#[cfg(target_arch = "nvptx64")]
pipeline_suite::ring_kernels!(ring_kernel);
#[cfg(target_arch = "nvptx64")]
pipeline_suite::sync_kernels!(sync_kernel);
#[cfg(target_arch = "nvptx64")]
pipeline_suite::control_kernels!(ring_kernel);
#[cfg(target_arch = "amdgpu")]
pipeline_suite::amd_ring_kernels!(ring_kernel);
#[cfg(target_arch = "nvptx64")]
pipeline_suite::split_kernels!(split_kernel);
#[cfg(target_arch = "amdgpu")]
pipeline_suite::amd_split_kernels!(split_kernel);
