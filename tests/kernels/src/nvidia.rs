//! NVIDIA-only test kernels: TMA (bulk copies completing on the full barrier) and a cluster of
//! two CTAs whose consumers release the leader CTA's slots remotely.

use gpu_pipeline::arch::nvptx::{cvta_to_shared, mapa_shared_cluster};
use gpu_pipeline::cluster_cta_rank;
use gpu_pipeline::{
    Cluster, L2Policy, NvidiaMbarBackend, ProducerConsumerPipeline, TensorMap, bulk_commit_group,
    bulk_wait_group, bulk_wait_group_read, prefetch_tensor_map, tensor_store,
};
use pipeline_suite::{
    HEADER_WORDS, PAYLOAD_WORDS, TENSOR_BOX_ROWS, TENSOR_ROW_WORDS, TMA_BYTES, barrier_region,
};

use crate::Report;
use crate::arch::{
    WARP, block_idx, dynamic_smem, st_shared_cluster_u32, sync_cluster, sync_threads, thread_idx,
};
use crate::{drain, slot};

/// Words of one TMA item.
const TMA_WORDS: usize = TMA_BYTES / 4;

/// The pipeline of the TMA kernels: one producer lane (arrive count 1, its `arrive_expect_tx`),
/// four consumer warps (128).
type TmaPipe<const STAGES: usize> = ProducerConsumerPipeline<STAGES, NvidiaMbarBackend<1, 128>>;

/// The block setup both TMA kernels share: the pipeline over the barrier region at the start of
/// dynamic shared memory, initialised by thread 0 before a block barrier.
///
/// # Safety
///
/// Every thread of the block calls it once, launched with `tma_smem_bytes(STAGES)`.
#[inline(always)]
unsafe fn tma_pipe<const STAGES: usize>() -> TmaPipe<STAGES> {
    // SAFETY: the barrier region starts the dynamic shared memory; init by thread 0, then a barrier.
    let pipe = unsafe { TmaPipe::<STAGES>::new(dynamic_smem().cast()) };
    if thread_idx() == 0 {
        // SAFETY: one thread, then the block barrier.
        unsafe { pipe.init() };
    }
    sync_threads();
    pipe
}

/// The TMA slot of `stage`: after the barrier region, 128-byte aligned, `TMA_BYTES` each.
#[inline(always)]
fn tma_slot<const STAGES: usize>(stage: u32) -> *mut u8 {
    // SAFETY: inside the dynamic shared memory the harness sizes with `tma_smem_bytes`.
    unsafe { dynamic_smem().add(barrier_region(STAGES) + stage as usize * TMA_BYTES) }
}

/// TMA ring: lane 0 of warp 0 produces each item with `arrive_expect_tx(TMA_BYTES)` and one bulk
/// copy completing on the slot's full barrier (producer arrive count 1); warps 1..=4 consume
/// (128 arrivals) and copy the slot to `output`.
///
/// With `AFTER` (`tma_after_s*`), the consumers work on their half of the pipeline: each waits
/// with a suspend-time hint (`acquire_ticks`) and releases with an arrival ordered after its
/// copy (`MbarrierRef::arrive_after` on the exclusive or of the words it copied; the guard's
/// nonzero value is the output's address). The harness checks the same: `output == input` and
/// the cursors.
#[inline(always)]
unsafe fn tma<const STAGES: usize, const AFTER: bool>(
    input: *const u32,
    output: *mut u32,
    items: u32,
    report: *mut u32,
) {
    let tid = thread_idx();
    let block = block_idx();
    let base = block as usize * items as usize * TMA_WORDS;
    // SAFETY: the harness sizes the buffers for `grid * items` TMA items.
    let (input, output) = unsafe { (input.add(base), output.add(base)) };
    let report = Report::of_block(report, block);
    let tma_slot = tma_slot::<STAGES>;
    // SAFETY: every thread, once, with the harness's launch shape.
    let pipe = unsafe { tma_pipe::<STAGES>() };

    if tid == 0 {
        for item in 0..items {
            pipe.produce_tma(TMA_BYTES as u32, |stage| {
                let bar = stage.barrier();
                // SAFETY: the slot is free (the wait returned), 128-byte aligned, TMA_BYTES long;
                // the source is this block's item, 16-byte aligned (4096-byte items).
                unsafe {
                    bar.bulk_copy_from_global(
                        tma_slot(stage.index()),
                        input.add(item as usize * TMA_WORDS).cast(),
                        TMA_BYTES as u32,
                    )
                };
            });
        }
        report.producer(pipe.producer_cursor());
    } else if tid >= WARP && AFTER {
        let ctid = tid - WARP;
        // The output's address, never 0 (the harness allocates it; 1 would do as well).
        let nonzero =
            core::num::NonZeroU64::new(output as u64).unwrap_or(core::num::NonZeroU64::MIN);
        let consumer = pipe.into_consumer();
        for item in 0..items {
            let stage = consumer.acquire_ticks(0x0098_9680);
            let src = tma_slot(stage.index()).cast::<u32>();
            let dst = item as usize * TMA_WORDS;
            let mut copied = 0u32;
            let mut j = ctid as usize;
            while j < TMA_WORDS {
                // SAFETY: inside the slot and this block's output.
                let word = unsafe { src.add(j).read() };
                // SAFETY: as above.
                unsafe { output.add(dst + j).write(word) };
                copied ^= word;
                j += 128;
            }
            stage.barrier().arrive_after(copied, nonzero);
            stage.release_without_signal();
        }
        if ctid == 0 {
            report.consumer(consumer.cursor(), items);
        }
    } else if tid >= WARP {
        let ctid = tid - WARP;
        for item in 0..items {
            pipe.consume(|stage| {
                let src = tma_slot(stage.index()).cast::<u32>();
                let dst = item as usize * TMA_WORDS;
                let mut j = ctid as usize;
                while j < TMA_WORDS {
                    // SAFETY: inside the slot and this block's output.
                    unsafe { output.add(dst + j).write(src.add(j).read()) };
                    j += 128;
                }
            });
        }
        if ctid == 0 {
            report.consumer(pipe.consumer_cursor(), items);
        }
    }
    sync_threads();
    if tid == 0 {
        report.done();
    }
}

/// Cluster of two CTAs. Warp 0 of CTA 0 produces each item into the slot of *both* CTAs (its own
/// shared memory and, through `mapa` + `st.shared::cluster`, its peer's) and arrives on both full
/// barriers (locally, and remotely with `.release.cluster`). Warp 1 of each CTA consumes its own
/// copy; both release CTA 0's empty barrier, CTA 1's consumers remotely. So CTA 0's empty barriers
/// count 64 arrivals (32 local, 32 remote) and the waits are cluster-scope acquires.
#[inline(always)]
unsafe fn cluster<const STAGES: usize>(
    input: *const u32,
    output: *mut u32,
    items: u32,
    report: *mut u32,
) {
    type B = NvidiaMbarBackend<32, 64, Cluster>;
    let tid = thread_idx();
    let block = block_idx();
    let rank = cluster_cta_rank();
    let cluster_id = block / 2;
    // SAFETY: the harness sizes `input` per cluster and `output` per CTA.
    let (input, output) = unsafe {
        (
            input.add(cluster_id as usize * items as usize * PAYLOAD_WORDS),
            output.add(block as usize * items as usize * PAYLOAD_WORDS),
        )
    };
    let report = Report::of_block(report, block);

    // SAFETY: as in `ring`; every CTA initialises its own barriers, and a cluster barrier
    // separates the initialisation from any remote arrival.
    let pipe = unsafe { ProducerConsumerPipeline::<STAGES, B>::new(dynamic_smem().cast()) };
    if tid == 0 {
        // SAFETY: one thread per CTA; `init` issues fence.mbarrier_init; the cluster barrier follows.
        unsafe { pipe.init() };
    }
    sync_cluster();

    let lane = tid % WARP;
    if tid < WARP && rank == 0 {
        for item in 0..items {
            let stage = pipe.acquire_producer();
            let local = slot(STAGES, stage.index());
            let mut j = lane as usize;
            while j < PAYLOAD_WORDS {
                // SAFETY: this CTA's item and slot; the peer's slot at the same offset is free too
                // (its consumers released it on CTA 0's empty barrier, which the wait observed).
                unsafe {
                    let value = input.add(item as usize * PAYLOAD_WORDS + j).read();
                    let word = local.add(HEADER_WORDS + j);
                    word.write(value);
                    st_shared_cluster_u32(
                        mapa_shared_cluster(cvta_to_shared(word.cast()), 1),
                        value,
                    );
                }
                j += WARP as usize;
            }
            if lane == 0 {
                // SAFETY: the header word of both slots.
                unsafe {
                    local.write(item);
                    st_shared_cluster_u32(
                        mapa_shared_cluster(cvta_to_shared(local.cast()), 1),
                        item,
                    );
                }
            }
            // SAFETY: CTA 1 exists (cluster of 2), initialised its barriers before the cluster
            // barrier above, and stays alive until the cluster barrier below.
            unsafe { stage.barrier().arrive_remote(1) };
            stage.release();
        }
        if lane == 0 {
            report.producer(pipe.producer_cursor());
        }
    } else if tid >= WARP {
        let ctid = tid - WARP;
        let mut errors = 0;
        for item in 0..items {
            if rank == 0 {
                // SAFETY: `drain` reads the slot handed out.
                errors += pipe.consume(|stage| unsafe {
                    drain(slot(STAGES, stage.index()), output, item, ctid, WARP)
                });
            } else {
                errors += pipe.consume_explicit(|stage| {
                    // SAFETY: as above.
                    let e = unsafe { drain(slot(STAGES, stage.index()), output, item, ctid, WARP) };
                    // SAFETY: CTA 0 is alive until the final cluster barrier; its barriers are initialised.
                    unsafe { stage.barrier().arrive_remote(0) };
                    e
                });
            }
        }
        report.errors(errors);
        if ctid == 0 {
            report.consumer(pipe.consumer_cursor(), items);
        }
    }
    // No CTA exits while its peer may still arrive on its barriers or write its slots.
    sync_cluster();
    if tid == 0 {
        report.done();
    }
}

macro_rules! tma_kernel {
    ($kind:ident, $s:literal, $after:literal) => {
        const _: () = {
            /// A TMA test kernel (see `tma`).
            #[unsafe(export_name = concat!("tma_", stringify!($kind), "_s", stringify!($s)))]
            pub unsafe extern "gpu-kernel" fn kernel(
                input: *const u32,
                output: *mut u32,
                items: u32,
                report: *mut u32,
            ) {
                // SAFETY: the harness launches 5 warps with `tma_smem_bytes`.
                unsafe { tma::<$s, $after>(input, output, items, report) }
            }
        };
    };
}

/// The tensor-TMA test (see `pipeline_suite::tma_tensor_kernels!`): block `b`'s item `i` is the
/// box at row `(b * items + i) * TENSOR_BOX_ROWS` of the input tensor; it is stored to the same
/// place of the output tensor, so the harness checks `output == input`.
unsafe fn tma_tensor<const STAGES: usize>(
    input: *const u32,
    items: u32,
    report: *mut u32,
    maps: *const TensorMap,
) {
    let tid = thread_idx();
    let block = block_idx();
    let report = Report::of_block(report, block);
    // SAFETY: the harness passes two tensor maps in global memory: input, then output.
    let (in_map, out_map) = (maps, unsafe { maps.add(1) });
    let tma_slot = tma_slot::<STAGES>;
    let row = |item: u32| ((block * items + item) as usize * TENSOR_BOX_ROWS) as i32;
    // SAFETY: every thread, once, with the harness's launch shape.
    let pipe = unsafe { tma_pipe::<STAGES>() };

    if tid == 0 {
        let producer = pipe.into_producer();
        // SAFETY: a valid map in global memory.
        unsafe { prefetch_tensor_map(in_map) };
        // The L2 hints' loads copy the same boxes: items in turn plain, evict-first and
        // evict-last.
        let (first, last) = (L2Policy::evict_first(), L2Policy::evict_last());
        for item in 0..items {
            producer.produce_tma(TMA_BYTES as u32, |stage| {
                let bar = stage.barrier();
                let (dst, at) = (tma_slot(stage.index()), [0, row(item)]);
                // SAFETY: the slot is free (the wait returned), 128-byte aligned (no swizzle),
                // `TMA_BYTES` long: the box's size.
                unsafe {
                    match item % 3 {
                        0 => bar.tensor_load::<2>(dst, in_map, at),
                        1 => bar.tensor_load_hinted::<2>(dst, in_map, at, first),
                        _ => bar.tensor_load_hinted::<2>(dst, in_map, at, last),
                    }
                }
            });
        }
        report.producer(producer.cursor());
    } else if tid >= WARP {
        let ctid = tid - WARP;
        let consumer = pipe.into_consumer();
        let mut errors = 0;
        for item in 0..items {
            let stage = consumer.acquire();
            let slot = tma_slot(stage.index());
            let words = slot.cast::<u32>();
            let base = row(item) as usize * TENSOR_ROW_WORDS;
            let mut j = ctid as usize;
            while j < TMA_BYTES / 4 {
                // SAFETY: inside the slot and the input tensor.
                if unsafe { words.add(j).read() != input.add(base + j).read() } {
                    errors += 1;
                }
                j += 128;
            }
            if ctid == 0 {
                // SAFETY: the slot holds the box (written by the tensor copy, read by the tensor
                // store: both async proxy, no generic writes in between); it is released only
                // after the store has read it.
                unsafe {
                    tensor_store::<2>(out_map, [0, row(item)], slot);
                    bulk_commit_group();
                    bulk_wait_group_read::<0>();
                }
            }
            stage.release();
        }
        if ctid == 0 {
            // The stores' writes are performed before the kernel reports done.
            bulk_wait_group::<0>();
        }
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

macro_rules! tma_tensor_kernel {
    ($s:literal) => {
        const _: () = {
            /// A tensor-TMA test kernel (see `tma_tensor`).
            #[unsafe(export_name = concat!("tma_tensor_s", stringify!($s)))]
            pub unsafe extern "gpu-kernel" fn kernel(
                input: *const u32,
                _output: *mut u32,
                items: u32,
                report: *mut u32,
                maps: *const TensorMap,
            ) {
                // SAFETY: the harness launches 5 warps with `tma_smem_bytes` and two tensor maps.
                unsafe { tma_tensor::<$s>(input, items, report, maps) }
            }
        };
    };
}

macro_rules! cluster_kernel {
    ($s:literal) => {
        const _: () = {
            /// A cluster-of-2 test kernel (see `cluster`).
            #[unsafe(export_name = concat!("cluster_mbar_s", stringify!($s)))]
            pub unsafe extern "gpu-kernel" fn kernel(
                input: *const u32,
                output: *mut u32,
                items: u32,
                report: *mut u32,
            ) {
                // SAFETY: the harness launches clusters of 2 CTAs of 2 warps with `ring_smem_bytes`.
                unsafe { cluster::<$s>(input, output, items, report) }
            }
        };
    };
}

pipeline_suite::tma_kernels!(tma_kernel);
pipeline_suite::tma_tensor_kernels!(tma_tensor_kernel);
pipeline_suite::cluster_kernels!(cluster_kernel);
