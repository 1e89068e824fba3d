//! The module's entry points: one line per row of the plan's kernel table.

use gpu_gemm_plan::{
    A_BYTES, BK, BM, CLUSTER, KernelSpec, PER_TILE, PERSISTENT, PERSISTENT_FIRST, PERSISTENT_N64,
    PERSISTENT_N128, SINGLE_WARPGROUP,
};
use gpu_pipeline::{Cta, NvidiaMbarBackend, ProducerConsumerPipeline, TensorMap};

use crate::epilogue::{Out, epilogue};
use crate::kernel::{gemm, schedule_of};
use crate::mainloop::mma_stage;
use crate::tile::Tile;
use gpu_hopper::arch::nvptx::{dynamic_smem_1024 as dynamic_smem, wgmma_wait_group};
use gpu_hopper::wgmma::Shape;

/// Whether two strings are equal, in a `const`.
const fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// Checks, at compile time, that an entry named `name` may be built from `spec` by [`entry!`]:
/// the row names this entry, and has the three warpgroups and 128-row tiles of the kernel body.
const fn check(spec: KernelSpec, name: &str) {
    assert!(
        same(spec.entry, name),
        "an entry's name differs from its table row's `entry`"
    );
    assert!(
        spec.threads == 384 && spec.rows == BM,
        "entry! builds the three-warpgroup kernel body: 384 threads, 128-row tiles"
    );
}

/// The parameters of every entry; the contract of each is the same:
///
/// # Safety
///
/// Launched with 384 threads (a 1D grid; the per-tile kernel: `(ceil(N/256), ceil(M/128))`;
/// the cluster kernel: clusters of (2, 1, 1) and an even grid) and the dynamic shared memory of
/// its `Layout` plus the barriers' KiB: `stages * (16 KiB + BN * 128) + 32 KiB + 1 KiB`
/// (BN 256 and 4 stages, 225 KiB; the 128-wide kernel: BN 128 and 6 stages, and the 64-wide
/// kernel: BN 64 and 8 stages, also 225 KiB).
/// `maps[0]` is A (box 64 x 128), `maps[1]` B (box 64 x BN; the cluster kernel: 64 x 128), and,
/// when N % 8 == 0, `maps[2]` D and (when `beta != 0`) `maps[3]` C (boxes 64 x 64), all bf16
/// with 128-byte swizzle, in global memory; D and (when `beta != 0`) C hold M x N bf16 (C may
/// be D: each element of C is read before its element of D is written). With `splits > 1`
/// (persistent kernels only; the per-tile kernel and the first persistent kernel ignore it) the
/// split tiles (see `Schedule::new`: every tile, or those of the last, partial wave) go
/// through `work`, a
/// 16-byte aligned workspace used by no other launch running at the same time: one slot per
/// CTA tile of the split tiles (`(tiles - full) * c`, c: CTAs per cluster) of
/// `min(splits, ceil(K / 64))` blocks of 128 x BN f32 each, then one u32 counter per slot, all
/// counters zero at the launch (each launch leaves them zero); with `splits <= 1` it is not
/// touched. The launch writes all of D either way (`last_split`).
macro_rules! entry {
    ($(#[$doc:meta])* $name:ident = $spec:ident) => {
        const _: () = check($spec, stringify!($name));
        $(#[$doc])*
        ///
        /// # Safety
        ///
        /// See [`entry!`]: the launch, the tensor maps, the matrices and the workspace.
        #[unsafe(no_mangle)]
        #[allow(clippy::too_many_arguments)]
        pub unsafe extern "gpu-kernel" fn $name(
            maps: *const TensorMap,
            c: *const u16,
            d: *mut u16,
            m: u32,
            n: u32,
            k: u32,
            alpha: f32,
            beta: f32,
            splits: u32,
            work: *mut u32,
        ) {
            let out = Out {
                maps,
                c,
                d,
                alpha,
                beta,
                work,
            };
            type W = Tile<{ $spec.layout.bn }>;
            let schedule = schedule_of::<W>($spec, m, n, k, splits);
            // SAFETY: the entries' contract.
            unsafe {
                gemm::<W, { $spec.layout.stages as usize }, { $spec.config.arrivals() }, Cta>(
                    $spec.config, schedule, maps, out, m, n, k,
                )
            }
        }
    };
}

entry!(
    /// One CTA per 128 x 256 tile of D (grid `(ceil(N/256), ceil(M/128))`), no split-K.
    gemm_bf16_ws = PER_TILE
);

entry!(
    /// A persistent grid (one CTA per SM): CTA `b` computes units `b, b + grid, ...` in the
    /// grouped order of the schedule, with split-K when `splits > 1`.
    gemm_bf16_persistent = PERSISTENT
);

entry!(
    /// [`gemm_bf16_persistent`] on 128 x 128 tiles (`wgmma.m64n128k16`, a ring of 6 stages):
    /// twice the tiles, for shapes whose 128 x 256 tiles leave SMs idle.
    gemm_bf16_persistent_n128 = PERSISTENT_N128
);

entry!(
    /// [`gemm_bf16_persistent`] on 128 x 64 tiles (`wgmma.m64n64k16`, a ring of 8 stages): four
    /// times the tiles, for the smallest problems.
    gemm_bf16_persistent_n64 = PERSISTENT_N64
);

entry!(
    /// The persistent kernel in CTA pairs (clusters of 2 along x): the pair computes 256 x 256
    /// cluster tiles, each CTA 128 rows; each CTA loads its A box and half of the B box,
    /// multicast to both, so B crosses L2 once per pair.
    gemm_bf16_cluster = CLUSTER
);

entry!(
    /// The persistent kernel as first built (every consumer thread releases, no `setmaxnreg`, no
    /// split-K: `splits` is ignored): kept as the step before, measured against
    /// [`gemm_bf16_persistent`] in the same run.
    gemm_bf16_persistent_first = PERSISTENT_FIRST
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
#[allow(clippy::too_many_arguments)]
pub unsafe extern "gpu-kernel" fn gemm_bf16_single(
    maps: *const TensorMap,
    c: *const u16,
    d: *mut u16,
    m: u32,
    n: u32,
    k: u32,
    alpha: f32,
    beta: f32,
    splits: u32,
    work: *mut u32,
) {
    let _ = (splits, work);
    let out = Out {
        maps,
        c,
        d,
        alpha,
        beta,
        work: core::ptr::null_mut(),
    };
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
