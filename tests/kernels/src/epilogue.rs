//! `EpiLoadPipeline` test kernels: `D = accum + beta * C` over 4096 x 4096 f32 matrices.
//!
//! Each CTA takes rows `block, block + grid, ...`. Its epilogue-load thread (thread 0) brings each
//! row of `C` (16 KiB) into a stage with one bulk copy announced by `produce_tma` (producer arrive
//! count 1); its four epilogue warps (128 threads) compute the row of `D` from the stage and
//! `accum`, and release the stage.

use gpu_pipeline::EpiLoadPipeline;
use pipeline_suite::{EPI_N, EPI_ROW_BYTES, barrier_region};

use crate::Report;
use crate::arch::{WARP, block_idx, dynamic_smem, sync_threads, thread_idx};

/// The epilogue test: see the module docs.
#[inline(always)]
unsafe fn epilogue<const S: usize>(
    accum: *const f32,
    c: *const f32,
    d: *mut f32,
    beta: f32,
    report: *mut u32,
) {
    let tid = thread_idx();
    let block = block_idx();
    // SAFETY: reads a special register.
    let grid = unsafe { core::arch::nvptx::_grid_dim_x() };
    let report = Report::of_block(report, block);
    let rows = (block as usize..EPI_N).step_by(grid as usize);
    // SAFETY: stages of one row each follow the barrier region (launched with `epilogue_smem_bytes`).
    let stage_row = |stage: u32| unsafe {
        dynamic_smem().add(barrier_region(S) + stage as usize * EPI_ROW_BYTES)
    };

    // SAFETY: the barriers start the dynamic shared memory; thread 0 initialises, a barrier follows.
    let mut epi = unsafe { EpiLoadPipeline::<S>::new(dynamic_smem().cast()) };
    if tid == 0 {
        // SAFETY: one thread, then the block barrier.
        unsafe { epi.init() };
    }
    sync_threads();

    if tid == 0 {
        for row in rows.clone() {
            epi.produce_tma(EPI_ROW_BYTES as u32, |stage| {
                // SAFETY: the stage is free (the wait returned); 16 KiB, 128-byte aligned; the row of
                // C is 16-byte aligned; the bytes were announced by `produce_tma`.
                unsafe {
                    stage.barrier().bulk_copy_from_global(
                        stage_row(stage.index()),
                        c.add(row * EPI_N).cast(),
                        EPI_ROW_BYTES as u32,
                    )
                };
            });
        }
        report.producer(epi.pipeline().producer_cursor());
    } else if tid >= WARP {
        let ctid = (tid - WARP) as usize;
        let mut done = 0;
        for row in rows {
            epi.consume(|stage| {
                let c_row = stage_row(stage.index()).cast::<f32>();
                let mut j = ctid;
                while j < EPI_N {
                    let at = row * EPI_N + j;
                    // SAFETY: inside the matrices and the stage.
                    unsafe {
                        d.add(at)
                            .write(accum.add(at).read() + beta * c_row.add(j).read())
                    };
                    j += 128;
                }
            });
            done += 1;
        }
        if ctid == 0 {
            report.consumer(epi.pipeline().consumer_cursor(), done);
        }
    }
    sync_threads();
    if tid == 0 {
        report.done();
    }
}

macro_rules! epilogue_kernel {
    ($s:literal) => {
        const _: () = {
            /// An epilogue test kernel (see `epilogue`).
            #[unsafe(export_name = concat!("epilogue_s", stringify!($s)))]
            pub unsafe extern "gpu-kernel" fn kernel(
                accum: *const f32,
                c: *const f32,
                d: *mut f32,
                beta: f32,
                report: *mut u32,
            ) {
                // SAFETY: the harness launches 5 warps per block with `epilogue_smem_bytes`.
                unsafe { epilogue::<$s>(accum, c, d, beta, report) }
            }
        };
    };
}

pipeline_suite::epilogue_kernels!(epilogue_kernel);
