//! The module's entry points: one line per row of the plan's kernel table (the step kernels'
//! rows: `steps`, with the `steps` feature).

use gpu_gemm_plan::Shape as Problem;
use gpu_gemm_plan::abi::Params;
use gpu_gemm_plan::{
    BM, CLUSTER, KernelSpec, Layout, PERSISTENT, PERSISTENT_N64, PERSISTENT_N128, PERSISTENT_N192,
    SKINNY16, SKINNY16_CLUSTER_K, SKINNY32, SKINNY32_CLUSTER_K, SKINNY32_R64, SKINNY64,
    SKINNY64_CLUSTER_K, SKINNY64_R64, SKINNY192, SKINNY192_CLUSTER_K,
};
use gpu_pipeline::Cta;

use crate::epilogue::Out;
use crate::kernel::{gemm, schedule_of};
use crate::tile::Tile;

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

/// Whether two layouts are equal, in a `const`.
const fn same_layout(a: Layout, b: Layout) -> bool {
    a.bn == b.bn && a.stages == b.stages && a.a_rows == b.a_rows
}

/// The consumer warpgroups across a tile's columns in the kernel body of `spec`: 2 for
/// [`Config::split_columns`](gpu_gemm_plan::Config::split_columns), else 1.
const fn halves(spec: KernelSpec) -> u32 {
    if spec.config.split_columns { 2 } else { 1 }
}

/// Checks, at compile time, that an entry named `name` may be built from `spec` by [`entry!`]:
/// the row names this entry, and has the three warpgroups and 128-row tiles of the kernel body
/// (64-row tiles across the column halves: transposing, without cluster-K or the staged
/// epilogue, whose code is written for 128 rows; alone or in pairs).
const fn check(spec: KernelSpec, name: &str) {
    assert!(
        same(spec.entry, name),
        "an entry's name differs from its table row's `entry`"
    );
    assert!(
        spec.threads == 384 && spec.rows == BM / halves(spec),
        "entry! builds the three-warpgroup kernel body: 384 threads, 128-row tiles (64 with split_columns)"
    );
    assert!(
        !spec.config.split_columns
            || (spec.config.swap_ab
                && !spec.config.tma_store
                && !spec.config.cluster_k
                && !spec.config.stream_k
                && spec.config.cluster <= 2
                && spec.layout.bn >= 16),
        "split_columns: a transposing kernel, single CTAs or pairs, no cluster-K, stream-K or staged epilogue, at least 16 wide"
    );
    assert!(
        spec.config.cluster == 1 || (spec.layout.bn / 2 * 128) % 1024 == 0,
        "a pair's CTAs each load half of B's box into the stage: that half must start on a 1024-byte swizzle atom (a multiple of 16 rows wide)"
    );
    assert!(
        same_layout(
            spec.layout,
            Layout::ring(spec.layout.bn, spec.layout.stages, spec.rows)
        ),
        "a row's layout is the ring its kernel body builds (`Layout::ring`): narrow (A's slot 64 rows) exactly on 64-row tiles whose 128-row slots would not fit"
    );
    assert!(
        !spec.config.cluster_k
            || (spec.config.swap_ab
                && !spec.config.split_k
                && spec.config.cluster <= 2
                && (spec.layout.bn <= 64
                    || BM * spec.layout.bn * 4 <= spec.layout.stages * spec.layout.stage_bytes())),
        "a cluster-K kernel computes the transpose (D leaves from registers), without the global split-K, in clusters of its parts (or pairs of them) only, and its partial tile fits the staging buffers (at most 64 wide) or the ring (wider: `cluster_k::partials`)"
    );
    assert!(
        !spec.config.stream_k
            || (spec.config.split_k
                && !spec.config.cluster_k
                && matches!(spec.grid, gpu_gemm_plan::Grid::Persistent)),
        "a stream-K kernel is persistent, with split-K's workspace code (its partials meet as split-K's do), not cluster-K"
    );
}

/// The parameter of every entry, one [`Params`] (the plan's `abi`), passed by value: rustc
/// lowers it to one `.param .align 8 .b8 p[56]` in the `#[repr(C)]` layout (its lint
/// `improper_gpu_kernel_arg` warns that aggregates are not guaranteed to be lowered so, which the
/// host checks when it loads the module: one parameter of 56 bytes per entry). Its addresses
/// reach the code as generic pointers (a pointer parameter would be known to be global). The
/// contract of each entry is the same:
///
/// # Safety
///
/// Launched with 384 threads (a 1D grid; the per-tile kernel: `(ceil(N/256), ceil(M/128))`;
/// the cluster kernel: clusters of (2, 1, 1) and an even grid) and the dynamic shared memory of
/// its `Layout` plus the barriers' KiB: `stages * (16 KiB + BN * 128) + 32 KiB + 1 KiB` (A's slots
/// 8 KiB in a narrow ring: `Layout::narrow`)
/// (BN 256 and 4 stages, 225 KiB; the 128-wide kernel: BN 128 and 6 stages, and the 64-wide
/// kernel: BN 64 and 8 stages, also 225 KiB).
/// `params.maps` points to the tensor maps: `maps[0]` is A (box 64 x 128), `maps[1]` B (box 64 x BN; the cluster kernel: 64 x 128), and,
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
        // One `#[repr(C)]` block by value: see [`entry!`].
        #[allow(improper_gpu_kernel_arg)]
        pub unsafe extern "gpu-kernel" fn $name(params: Params) {
            let (out, Problem { m, n, k }, splits) = Out::of(params, $spec.config.swap_ab);
            let maps = out.maps;
            // Each consumer warpgroup's width: the tile's, or half of it across the two.
            type W = Tile<{ $spec.layout.bn / halves($spec) }>;
            let schedule = schedule_of($spec, m, n, k, splits);
            // SAFETY: the entries' contract.
            unsafe {
                gemm::<
                    W,
                    { $spec.layout.stages as usize },
                    { $spec.config.arrivals() },
                    Cta,
                    { halves($spec) },
                >($spec.config, schedule, maps, out, m, n, k)
            }
        }
    };
}

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
    /// [`gemm_bf16_persistent`] on 128 x 192 tiles (`wgmma.m64n192k16`, a ring of 4 stages):
    /// for the shapes whose 128 x 256 and 128 x 128 tiles fill their last wave badly.
    gemm_bf16_persistent_n192 = PERSISTENT_N192
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
    /// The decode kernel for M <= 16: [`gemm_bf16_persistent`] computing `D^T = B A^T` on tiles
    /// of 128 rows of B by 16 rows of A (`wgmma.m64n16k16`, a ring of 10 stages), D written
    /// transposed back from registers. The launch passes B's map as `maps[0]`, A's as `maps[1]`
    /// (box 64 x 16), and M and N exchanged.
    gemm_bf16_skinny16 = SKINNY16
);

entry!(
    /// [`gemm_bf16_skinny16`] 32 rows of A wide (`wgmma.m64n32k16`, 9 stages).
    gemm_bf16_skinny32 = SKINNY32
);

entry!(
    /// [`gemm_bf16_skinny16`] 64 rows of A wide (`wgmma.m64n64k16`, 8 stages).
    gemm_bf16_skinny64 = SKINNY64
);

entry!(
    /// [`gemm_bf16_skinny16`] with split-K inside a cluster: a grid of `tiles x splits` CTAs in
    /// clusters of `splits` (1 to 8, at most the k-blocks; the launch's cluster dimension), each
    /// cluster one tile, each CTA the part of K of its rank; the parts added up through
    /// distributed shared memory. `params.splits` equals the cluster's size, and `work` is not
    /// used.
    gemm_bf16_skinny16_cluster_k = SKINNY16_CLUSTER_K
);

entry!(
    /// [`gemm_bf16_skinny16_cluster_k`] 32 rows of A wide (`wgmma.m64n32k16`, 9 stages).
    gemm_bf16_skinny32_cluster_k = SKINNY32_CLUSTER_K
);

entry!(
    /// [`gemm_bf16_skinny16_cluster_k`] 64 rows of A wide (`wgmma.m64n64k16`, 8 stages).
    gemm_bf16_skinny64_cluster_k = SKINNY64_CLUSTER_K
);

entry!(
    /// [`gemm_bf16_skinny16`] 192 rows of A wide (`wgmma.m64n192k16`, a ring of 4 stages,
    /// `setmaxnreg`), for M in 129..=192 on wide layers: each weight tile of 128 rows is read
    /// once, against the whole of A, where the 128-row tiles would read it twice.
    gemm_bf16_skinny192 = SKINNY192
);

entry!(
    /// [`gemm_bf16_skinny192`] with split-K inside a cluster, as
    /// [`gemm_bf16_skinny64_cluster_k`]; its partial tile (96 KiB) in the ring
    /// (`cluster_k::partials`).
    gemm_bf16_skinny192_cluster_k = SKINNY192_CLUSTER_K
);

entry!(
    /// [`gemm_bf16_skinny32`] on tiles of 64 rows of B by 32 of A, the two consumer warpgroups
    /// on its column halves (`wgmma.m64n16k16` each, over the same A box of 64 rows): twice the
    /// weight tiles, no partial between the warpgroups.
    gemm_bf16_skinny32_r64 = SKINNY32_R64
);

entry!(
    /// [`gemm_bf16_skinny32_r64`] 64 rows of A wide (`wgmma.m64n32k16` each).
    gemm_bf16_skinny64_r64 = SKINNY64_R64
);

#[cfg(feature = "steps")]
mod steps;
