//! The kernels kept only to show the steps of the design, each measured against the one after it
//! by the benchmark's step table (the `steps` feature; not in the production module): one CTA
//! per tile, the first persistent kernel, and the single warpgroup before warp specialization;
//! and the measurements beside them: the 16-wide decode kernels in a ring of 4 stages, the
//! 128 x 64 kernel in CTA pairs, the 128 x 256 and 128 x 128 kernels and the CTA pairs on a
//! stream-K schedule, the persistent kernel on 128 x 192 tiles on a stream-K schedule, and the
//! transposing kernel 128 rows of A wide, the transposing cluster-K kernels in CTA pairs, and
//! the 16-wide transposing kernel on 64-row tiles (its warpgroups on the column halves).

use gpu_gemm_plan::Shape as Problem;
use gpu_gemm_plan::abi::Params;
use gpu_gemm_plan::{
    A_BYTES, BK, CLUSTER_SK, PER_TILE, PERSISTENT_FIRST, PERSISTENT_N64_PAIR, PERSISTENT_N128_SK,
    PERSISTENT_N192_SK, PERSISTENT_SK, SINGLE_WARPGROUP, SKINNY16_CLUSTER_K_S4, SKINNY16_R64,
    SKINNY16_R64_DEEP, SKINNY16_S4, SKINNY32_R64_DEEP, SKINNY32_R64_DEEP_PAIR, SKINNY48_R64_DEEP,
    SKINNY48_R64_DEEP_PAIR, SKINNY64_CLUSTER_K_PAIR, SKINNY64_R64_DEEP, SKINNY64_R64_DEEP_PAIR,
    SKINNY80_R64_DEEP, SKINNY80_R64_DEEP_PAIR, SKINNY96_R64_DEEP, SKINNY96_R64_DEEP_PAIR,
    SKINNY128, SKINNY128_CLUSTER_K, SKINNY128_CLUSTER_K_PAIR, SKINNY192_CLUSTER_K_PAIR,
};
use gpu_hopper::arch::nvptx::{
    dynamic_smem_1024 as dynamic_smem, griddepcontrol_wait, wgmma_wait_group,
};
use gpu_hopper::wgmma::Shape;
use gpu_pipeline::{Cta, NvidiaMbarBackend, ProducerConsumerPipeline};

use super::{check, halves, same};
use crate::epilogue::{Out, epilogue};
use crate::kernel::{gemm, schedule_of};
use crate::mainloop::mma_stage;
use crate::tile::Tile;

entry!(
    /// One CTA per 128 x 256 tile of D (grid `(ceil(N/256), ceil(M/128))`), no split-K.
    gemm_bf16_ws = PER_TILE
);

entry!(
    /// The persistent kernel as first built (every consumer thread releases, no `setmaxnreg`, no
    /// split-K: `splits` is ignored): kept as the step before, measured against
    /// [`gemm_bf16_persistent`] in the same run.
    gemm_bf16_persistent_first = PERSISTENT_FIRST
);

entry!(
    /// A measurement: [`super::gemm_bf16_skinny16`] in a ring of 4 stages (105 KiB of shared
    /// memory instead of 213), against it in the same rounds.
    gemm_bf16_skinny16_s4 = SKINNY16_S4
);

entry!(
    /// A measurement: [`super::gemm_bf16_skinny16_cluster_k`] in a ring of 4 stages.
    gemm_bf16_skinny16_cluster_k_s4 = SKINNY16_CLUSTER_K_S4
);

entry!(
    /// A measurement: [`super::gemm_bf16_persistent_n64`] in CTA pairs (clusters of 2 along x),
    /// B's 64-row box shared by multicast, each CTA loading 32 of its rows for both.
    gemm_bf16_persistent_n64_pair = PERSISTENT_N64_PAIR
);

entry!(
    /// A measurement: [`super::gemm_bf16_persistent`] on a stream-K schedule: the whole waves'
    /// tiles as before, the rest's k-blocks cut evenly over `splits` CTAs (the workers,
    /// `Schedule::stream_k`), their partials meeting in `work` as split-K's do: one slot per split
    /// tile, of `Schedule::stream_k`'s `splits` (the most parts of a tile) blocks each.
    gemm_bf16_persistent_sk = PERSISTENT_SK
);

entry!(
    /// A measurement: [`super::gemm_bf16_persistent_n128`] on a stream-K schedule, as
    /// [`gemm_bf16_persistent_sk`].
    gemm_bf16_persistent_n128_sk = PERSISTENT_N128_SK
);

entry!(
    /// A measurement: [`super::gemm_bf16_persistent_n192`] on a stream-K schedule, as
    /// [`gemm_bf16_persistent_sk`].
    gemm_bf16_persistent_n192_sk = PERSISTENT_N192_SK
);

entry!(
    /// A measurement: [`super::gemm_bf16_cluster`] (CTA pairs, B multicast) on a stream-K
    /// schedule over its cluster tiles, as [`gemm_bf16_persistent_sk`]: the two CTAs of a pair
    /// walk the same units, each its own CTA tile's slot of the workspace.
    gemm_bf16_cluster_sk = CLUSTER_SK
);

/// The single-warpgroup kernel's layout: the wide kernels' ring of 4 stages of 128 x 256 tiles
/// (of whose A box it uses the first 64 rows).
const WIDE: gpu_gemm_plan::Layout = SINGLE_WARPGROUP.layout;
const _: () = {
    assert!(same(SINGLE_WARPGROUP.entry, "gemm_bf16_single"));
    assert!(SINGLE_WARPGROUP.threads == 128 && SINGLE_WARPGROUP.rows == 64 && WIDE.bn == 256);
};

/// The first step, before warp specialization: one warpgroup (128 threads) per 64 x 256 tile of
/// D (grid `(ceil(N/256), ceil(M/64))`), with the same 4-stage ring, `wgmma` and register
/// epilogue as the others, but no producer warp: its thread 0 also issues the tensor loads, three
/// k-blocks ahead, between its MMAs; every thread releases each stage. `maps[0]` is A with a box
/// of 64 x 64; otherwise as [`entry!`] (`splits` and `work` are ignored; 128 threads).
///
/// # Safety
///
/// See [`entry!`]: the tensor maps, the matrices, and the launch (128 threads, the grid above).
#[unsafe(no_mangle)]
// One `#[repr(C)]` block by value: see [`entry!`].
#[allow(improper_gpu_kernel_arg)]
pub unsafe extern "gpu-kernel" fn gemm_bf16_single(params: Params) {
    // `splits` and the workspace are ignored.
    let (out, Problem { m, n, k }, _) = Out::of(params, false);
    let out = Out {
        work: core::ptr::null_mut(),
        ..out
    };
    let maps = out.maps;
    // SAFETY: special-register reads.
    let (tid, x, y) = unsafe {
        (
            core::arch::nvptx::_thread_idx_x() as u32,
            core::arch::nvptx::_block_idx_x() as u32,
            core::arch::nvptx::_block_idx_y() as u32,
        )
    };
    let smem = dynamic_smem();
    // SAFETY: one thread initialises, then the block barrier.
    let pipe = unsafe {
        ProducerConsumerPipeline::<{ WIDE.stages as usize }, NvidiaMbarBackend<1, 128>>::new(
            smem.add(WIDE.ring_barriers_at(crate::epilogue::Epi::SMEM_BYTES))
                .cast(),
        )
    };
    if tid == 0 {
        // SAFETY: one thread initialises, before the block barrier below.
        unsafe { pipe.init() };
    }
    // SAFETY: every thread of the block reaches it, converged.
    unsafe { core::arch::nvptx::_syncthreads() };
    // Before any access to global memory, as in `gemm` (a programmatic dependent launch).
    if !cfg!(feature = "unwaited") {
        griddepcontrol_wait();
    }
    let (producer, consumer) = pipe.split();
    let (m0, n0) = (y * 64, x * WIDE.bn);
    let k_blocks = k.div_ceil(BK);
    // Thread 0 loads k-block `kb` into the next free stage.
    let load = |kb: u32| {
        producer.produce_tma(A_BYTES / 2 + WIDE.b_bytes(), |stage| {
            let bar = stage.barrier();
            // SAFETY: the stage's slot lies inside the layout.
            let base = unsafe { smem.add((stage.index() * WIDE.stage_bytes()) as usize) };
            let kc = (kb * BK) as i32;
            // SAFETY: the stage is free; 1024-aligned boxes of the maps' sizes (A: 64 rows).
            unsafe {
                bar.tensor_load::<2>(base, maps, [kc, m0 as i32]);
                bar.tensor_load::<2>(base.add(A_BYTES as usize), maps.add(1), [kc, n0 as i32]);
            }
        })
    };
    let mut next = 0;
    if tid == 0 {
        while next < k_blocks.min(WIDE.stages - 1) {
            load(next);
            next += 1;
        }
    }
    let mut acc = <Tile<256> as Shape>::ZERO;
    let mut previous = consumer.acquire();
    // SAFETY: the stage is full; the whole warpgroup is here.
    unsafe { mma_stage::<Tile<256>>(&mut acc, smem, WIDE, previous.index(), 0, true) };
    if tid == 0 && next < k_blocks {
        load(next);
        next += 1;
    }
    for _ in 1..k_blocks {
        let stage = consumer.acquire();
        // SAFETY: as above.
        unsafe { mma_stage::<Tile<256>>(&mut acc, smem, WIDE, stage.index(), 0, false) };
        // SAFETY: the whole warpgroup is here.
        unsafe { wgmma_wait_group::<1>() };
        previous.release();
        previous = stage;
        if tid == 0 && next < k_blocks {
            load(next);
            next += 1;
        }
    }
    // SAFETY: the whole warpgroup is here.
    unsafe { wgmma_wait_group::<0>() };
    previous.release();
    let (w, l) = (tid / 32, tid % 32);
    epilogue::<Tile<256>>(&acc, m0 + 16 * w + l / 4, n0 + 2 * (l % 4), out, m, n);
}

entry!(
    /// A measurement: [`super::gemm_bf16_skinny64`] 128 rows of A wide (`wgmma.m64n128k16`, a
    /// ring of 6 stages, `setmaxnreg`), for M in 65..=128.
    gemm_bf16_skinny128 = SKINNY128
);

entry!(
    /// A measurement: [`gemm_bf16_skinny128`] with split-K inside a cluster, as
    /// [`super::gemm_bf16_skinny64_cluster_k`]; the partial tile in the ring.
    gemm_bf16_skinny128_cluster_k = SKINNY128_CLUSTER_K
);

entry!(
    /// A measurement: [`super::gemm_bf16_skinny192_cluster_k`] in CTA pairs: clusters of `2 x
    /// splits`, the two CTAs of a part computing adjacent weight tiles and sharing the
    /// activations' box by multicast.
    gemm_bf16_skinny192_cluster_k_pair = SKINNY192_CLUSTER_K_PAIR
);

entry!(
    /// A measurement: [`gemm_bf16_skinny128_cluster_k`] in CTA pairs, as
    /// [`gemm_bf16_skinny192_cluster_k_pair`].
    gemm_bf16_skinny128_cluster_k_pair = SKINNY128_CLUSTER_K_PAIR
);

entry!(
    /// A measurement: [`super::gemm_bf16_skinny64_cluster_k`] in CTA pairs, as
    /// [`gemm_bf16_skinny192_cluster_k_pair`].
    gemm_bf16_skinny64_cluster_k_pair = SKINNY64_CLUSTER_K_PAIR
);

entry!(
    /// A measurement: [`super::gemm_bf16_skinny32_r64`] 16 rows of A wide (`wgmma.m64n8k16`
    /// each): [`super::gemm_bf16_skinny16`] on 64-row tiles.
    gemm_bf16_skinny16_r64 = SKINNY16_R64
);

entry!(
    /// A measurement: [`gemm_bf16_skinny16_r64`] in a deep ring (A's slot the 64-row box alone,
    /// 19 stages).
    gemm_bf16_skinny16_r64_deep = SKINNY16_R64_DEEP
);

entry!(
    /// A measurement: [`super::gemm_bf16_skinny32_r64`] in a deep ring (16 stages).
    gemm_bf16_skinny32_r64_deep = SKINNY32_R64_DEEP
);

entry!(
    /// A measurement: the transposing kernel on 64 weight rows by 48 of A
    /// (`wgmma.m64n24k16` each warpgroup), in a deep ring (13 stages).
    gemm_bf16_skinny48_r64_deep = SKINNY48_R64_DEEP
);

entry!(
    /// A measurement: [`super::gemm_bf16_skinny64_r64`] in a deep ring (12 stages).
    gemm_bf16_skinny64_r64_deep = SKINNY64_R64_DEEP
);

entry!(
    /// A measurement: 64 weight rows by 80 of A (`wgmma.m64n40k16` each warpgroup), in a deep
    /// ring (10 stages).
    gemm_bf16_skinny80_r64_deep = SKINNY80_R64_DEEP
);

entry!(
    /// A measurement: 64 weight rows by 96 of A (`wgmma.m64n48k16` each warpgroup), in a deep
    /// ring (9 stages).
    gemm_bf16_skinny96_r64_deep = SKINNY96_R64_DEEP
);

entry!(
    /// A measurement: [`gemm_bf16_skinny32_r64_deep`] in CTA pairs: the two CTAs of a pair take
    /// vertically adjacent weight tiles and share the activations' box by multicast.
    gemm_bf16_skinny32_r64_deep_pair = SKINNY32_R64_DEEP_PAIR
);

entry!(
    /// A measurement: [`gemm_bf16_skinny48_r64_deep`] in CTA pairs, as
    /// [`gemm_bf16_skinny32_r64_deep_pair`].
    gemm_bf16_skinny48_r64_deep_pair = SKINNY48_R64_DEEP_PAIR
);

entry!(
    /// A measurement: [`gemm_bf16_skinny64_r64_deep`] in CTA pairs, as
    /// [`gemm_bf16_skinny32_r64_deep_pair`].
    gemm_bf16_skinny64_r64_deep_pair = SKINNY64_R64_DEEP_PAIR
);

entry!(
    /// A measurement: [`gemm_bf16_skinny80_r64_deep`] in CTA pairs, as
    /// [`gemm_bf16_skinny32_r64_deep_pair`].
    gemm_bf16_skinny80_r64_deep_pair = SKINNY80_R64_DEEP_PAIR
);

entry!(
    /// A measurement: [`gemm_bf16_skinny96_r64_deep`] in CTA pairs, as
    /// [`gemm_bf16_skinny32_r64_deep_pair`].
    gemm_bf16_skinny96_r64_deep_pair = SKINNY96_R64_DEEP_PAIR
);
