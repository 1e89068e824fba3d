//! The kernel table and the arithmetic of a launch: tiles, split-K, grids, workspace.
//!
//! Tile counts are computed in `u64`: a host accepts M and N up to 2^31 - 1, whose tile count is
//! far beyond `u32`. What a kernel can run is checked by [`KernelSpec::check_launch`]: its grid
//! and its schedule, which counts work units in 32 bits on the device; past that check, the
//! host builds the kernel's own `u32` [`Schedule`].

use crate::{BK, BM, Config, Layout, Schedule};

/// A problem's shape: D is M x N, the sum runs over K.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    pub m: u32,
    pub n: u32,
    pub k: u32,
}

/// How a kernel's grid covers its tiles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Grid {
    /// One CTA per tile: a 2D grid `(tile columns, tile rows)`, no split-K.
    PerTile,
    /// A persistent grid of at most as many clusters as fit on the GPU at once, each walking its
    /// units of the [`Schedule`] (`blockIdx.x / cluster, gridDim.x / cluster`).
    Persistent,
    /// One CTA per split of each tile: `tiles x splits` CTAs in clusters of `splits` (the
    /// launch's cluster dimension, 1 to 8), cluster `c` computing tile `c` of the grouped
    /// order, its CTA of rank `r` the `r`-th part of K ([`Config::cluster_k`]); in CTA pairs
    /// ([`Config::cluster`] 2) clusters of `2 x splits` over cluster tiles of two tile rows, rank
    /// `pair * splits + part`. Not persistent:
    /// no CTA waits for another cluster, so more tiles than fit at once run in waves. Its grid
    /// does not depend on the capacity (only a capacity of 0 is refused): the host plans it with
    /// the clusters of its unsplit launch and takes its part count from the clusters of each
    /// size that fit ([`KernelSpec::cluster_k_splits`]); [`KernelSpec::splits`], without those,
    /// takes a capacity of clusters of 8 CTAs (each holds two clusters of 4, four of 2).
    ClusterK,
}

/// One row of the kernel table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelSpec {
    /// The entry point's name in the module.
    pub entry: &'static str,
    /// A short name for reports.
    pub name: &'static str,
    /// Threads per block (the entry's `.maxntid`).
    pub threads: u32,
    /// Rows of D per CTA tile (also the rows of A's tensor-map box).
    pub rows: u32,
    /// The shared-memory layout: the tile's width (columns of D, rows of B per stage) and the
    /// ring's stages.
    pub layout: Layout,
    /// How the kernel is built.
    pub config: Config,
    /// How its grid covers the tiles.
    pub grid: Grid,
    /// `wgmma.mma_async` instructions in the entry's code: 4 k16 steps for a tile's first stage,
    /// 4 in the loop.
    pub wgmmas: u32,
    /// A kernel kept only to show a step of the design (measured against the one after it), not
    /// chosen by the host's default.
    pub step: bool,
}

/// One CTA per 128 x 256 tile (a step: the persistent kernels replace it).
pub const PER_TILE: KernelSpec = KernelSpec {
    entry: "gemm_bf16_ws",
    name: "per-tile",
    threads: 384,
    rows: BM,
    layout: Layout::new(256, 4),
    config: Config::SINGLE,
    grid: Grid::PerTile,
    wgmmas: 8,
    step: true,
};
/// One CTA per SM, walking 128 x 256 tiles in bands of 8 tile rows, with split-K.
pub const PERSISTENT: KernelSpec = KernelSpec {
    entry: "gemm_bf16_persistent",
    name: "persistent",
    grid: Grid::Persistent,
    step: false,
    ..PER_TILE
};
/// [`PERSISTENT`] on 128 x 128 tiles (`wgmma.m64n128k16`) in a ring of 6 stages: twice the
/// tiles, for shapes whose 128 x 256 tiles leave SMs idle.
pub const PERSISTENT_N128: KernelSpec = KernelSpec {
    entry: "gemm_bf16_persistent_n128",
    name: "persistent-128",
    layout: Layout::new(128, 6),
    ..PERSISTENT
};
/// [`PERSISTENT`] on 128 x 64 tiles (`wgmma.m64n64k16`) in a ring of 8 stages: four times the
/// tiles, for the smallest problems.
pub const PERSISTENT_N64: KernelSpec = KernelSpec {
    entry: "gemm_bf16_persistent_n64",
    name: "persistent-64",
    layout: Layout::new(64, 8),
    config: Config::SLIM,
    ..PERSISTENT
};
/// The decode kernel for M <= 16: [`PERSISTENT`] computing `D^T = B A^T` ([`Config::swap_ab`])
/// on tiles of 128 rows of B by 16 rows of A (`wgmma.m64n16k16`), in a ring of 10 stages, each
/// 16 KiB of B: the weights stream through every SM (split-K where their tiles are few), and the
/// MMAs are 16 wide instead of 128 rows padded from M.
pub const SKINNY16: KernelSpec = KernelSpec {
    entry: "gemm_bf16_skinny16",
    name: "skinny-16",
    layout: Layout::new(16, 10),
    config: Config::SKINNY,
    ..PERSISTENT
};
/// [`SKINNY16`] 32 rows of A wide (`wgmma.m64n32k16`), 9 stages: for M <= 32.
pub const SKINNY32: KernelSpec = KernelSpec {
    entry: "gemm_bf16_skinny32",
    name: "skinny-32",
    layout: Layout::new(32, 9),
    ..SKINNY16
};
/// [`SKINNY16`] 64 rows of A wide (`wgmma.m64n64k16`), 8 stages: for M <= 64.
pub const SKINNY64: KernelSpec = KernelSpec {
    entry: "gemm_bf16_skinny64",
    name: "skinny-64",
    layout: Layout::new(64, 8),
    ..SKINNY16
};
/// [`SKINNY16`] with split-K inside a cluster ([`Config::cluster_k`], [`Grid::ClusterK`]): one
/// cluster per tile of 128 rows of B, its `splits` CTAs each streaming a part of K, the parts
/// added up through distributed shared memory. For layers whose weight tiles are fewer than the
/// SMs: every SM streams weights, and no CTA adds up the others' partials alone at the end.
pub const SKINNY16_CLUSTER_K: KernelSpec = KernelSpec {
    entry: "gemm_bf16_skinny16_cluster_k",
    name: "skinny-16-ck",
    config: Config::SKINNY_CLUSTER_K,
    grid: Grid::ClusterK,
    ..SKINNY16
};
/// [`SKINNY16_CLUSTER_K`] 32 rows of A wide (`wgmma.m64n32k16`, 9 stages).
pub const SKINNY32_CLUSTER_K: KernelSpec = KernelSpec {
    entry: "gemm_bf16_skinny32_cluster_k",
    name: "skinny-32-ck",
    layout: SKINNY32.layout,
    ..SKINNY16_CLUSTER_K
};
/// [`SKINNY16_CLUSTER_K`] 64 rows of A wide (`wgmma.m64n64k16`, 8 stages).
pub const SKINNY64_CLUSTER_K: KernelSpec = KernelSpec {
    entry: "gemm_bf16_skinny64_cluster_k",
    name: "skinny-64-ck",
    layout: SKINNY64.layout,
    ..SKINNY16_CLUSTER_K
};
/// [`PERSISTENT`] in CTA pairs (clusters of 2): the two CTAs of a pair compute vertically
/// adjacent tiles and share B's box through TMA multicast.
pub const CLUSTER: KernelSpec = KernelSpec {
    entry: "gemm_bf16_cluster",
    name: "cluster",
    config: Config::PAIR,
    ..PERSISTENT
};
/// The persistent kernel as first built (a step): every consumer thread releases each stage, no
/// `setmaxnreg`, no TMA store, no split-K.
pub const PERSISTENT_FIRST: KernelSpec = KernelSpec {
    entry: "gemm_bf16_persistent_first",
    name: "persistent-first",
    config: Config::FIRST,
    step: true,
    ..PERSISTENT
};
/// The step before warp specialization: one warpgroup (128 threads) per 64 x 256 tile, whose
/// thread 0 issues the tensor loads between its MMAs; every thread releases each stage (the
/// configuration's other fields are [`Config::FIRST`]'s).
pub const SINGLE_WARPGROUP: KernelSpec = KernelSpec {
    entry: "gemm_bf16_single",
    name: "single-warpgroup",
    threads: 128,
    rows: 64,
    config: Config::FIRST,
    grid: Grid::PerTile,
    step: true,
    ..PER_TILE
};

/// A measurement: [`SKINNY16`] on tiles of 64 rows of B by 16 of A, the two consumer
/// warpgroups each 8 of the 16 (`wgmma.m64n8k16`, [`Config::split_columns`]), in a ring of 10
/// stages (of whose A slots the first 8 KiB hold the box): twice the weight tiles of [`SKINNY16`]
/// with the same split-K. Run 153 (an H100): at M <= 16 within 2 % of the 128-row kernels where
/// its tiles fill a wave, 3-8 % behind them on fewer; not in the default, so a step.
pub const SKINNY16_R64: KernelSpec = KernelSpec {
    entry: "gemm_bf16_skinny16_r64",
    name: "skinny-16-r64",
    rows: BM / 2,
    config: Config::SKINNY_HALVES,
    step: true,
    ..SKINNY16
};
/// [`SKINNY32`] on tiles of 64 rows of B (the consumer warpgroups on the tile's column halves,
/// `wgmma.m64n16k16` each, [`Config::split_columns`]) in a ring of 9 stages: twice the weight
/// tiles of [`SKINNY32`] with the same split-K, for layers whose 128-row tiles are fewer than
/// the SMs ([`crate::half_rows_fit`] says where the default takes it).
pub const SKINNY32_R64: KernelSpec = KernelSpec {
    entry: "gemm_bf16_skinny32_r64",
    name: "skinny-32-r64",
    layout: SKINNY32.layout,
    step: false,
    ..SKINNY16_R64
};
/// [`SKINNY64`] on tiles of 64 rows of B, as [`SKINNY32_R64`] (`wgmma.m64n32k16` a warpgroup,
/// 8 stages).
pub const SKINNY64_R64: KernelSpec = KernelSpec {
    entry: "gemm_bf16_skinny64_r64",
    name: "skinny-64-r64",
    layout: SKINNY64.layout,
    ..SKINNY32_R64
};
/// A measurement, kept beside the steps: [`SKINNY16`] in a ring of 4 stages (105 KiB of shared
/// memory instead of 213). Run 91 measured the smallest decode layers at 8.5-9 us whichever way
/// K was split (2048 x 2048: 8 parts globally, 6 in clusters) against cuBLAS's 7.2-7.5: a fixed
/// cost; this row and [`SKINNY16_CLUSTER_K_S4`] tell whether it comes with the ring's size (its
/// shared-memory carveout, its barriers) rather than with the split.
pub const SKINNY16_S4: KernelSpec = KernelSpec {
    entry: "gemm_bf16_skinny16_s4",
    name: "skinny-16-s4",
    layout: Layout::new(16, 4),
    step: true,
    ..SKINNY16
};
/// [`SKINNY16_CLUSTER_K`] in a ring of 4 stages: the measurement of [`SKINNY16_S4`] for the
/// cluster-K form.
pub const SKINNY16_CLUSTER_K_S4: KernelSpec = KernelSpec {
    entry: "gemm_bf16_skinny16_cluster_k_s4",
    name: "skinny-16-ck-s4",
    layout: Layout::new(16, 4),
    step: true,
    ..SKINNY16_CLUSTER_K
};

/// A measurement: [`PERSISTENT_N64`] in CTA pairs ([`Config::cluster`] 2): the two CTAs of a
/// pair compute vertically adjacent 128 x 64 tiles and share B's 64-row box through TMA
/// multicast (each loads 32 rows for both), the mid-M shape the issue saw cuBLAS choose (1024^3:
/// 128 x 64 tiles in clusters of 2) where ours ran at 0.78.
pub const PERSISTENT_N64_PAIR: KernelSpec = KernelSpec {
    entry: "gemm_bf16_persistent_n64_pair",
    name: "persistent-64-pair",
    config: Config {
        cluster: 2,
        ..Config::SLIM
    },
    step: true,
    ..PERSISTENT_N64
};

/// A measurement: [`PERSISTENT`] with a stream-K schedule ([`Config::stream_k`]). Where the
/// 128 x 256 tiles fill between half a wave and a wave (768 x 3072: 72 tiles for 132 SMs), the
/// split-K rule leaves them whole and 45 % of the SMs idle; where a small last wave is split
/// many ways (1024 x 4608: 12 tiles in 11 parts), one CTA adds ten 128 KiB partials up at the
/// end. Run 58 had the persistent kernels at 0.63-0.72 of cuBLAS on such shapes. Stream-K gives
/// every CTA the same k-blocks, and a tile two or three parts.
pub const PERSISTENT_SK: KernelSpec = KernelSpec {
    entry: "gemm_bf16_persistent_sk",
    name: "persistent-sk",
    config: Config::STREAM_K,
    step: true,
    ..PERSISTENT
};
/// A measurement: [`PERSISTENT_N128`] with a stream-K schedule.
pub const PERSISTENT_N128_SK: KernelSpec = KernelSpec {
    entry: "gemm_bf16_persistent_n128_sk",
    name: "persistent-128-sk",
    config: Config::STREAM_K,
    step: true,
    ..PERSISTENT_N128
};

/// [`PERSISTENT`] on 128 x 192 tiles (`wgmma.m64n192k16`) in a ring of 4 stages. Where the
/// 128 x 256 tiles fill a wave badly and the 128 x 128 ones fill two badly, the width between
/// often fills better: 768 x 3072 makes 96 tiles (73 % of 132 SMs) where 128 x 256 makes 72
/// (55 %) and 128 x 128 144 (a second wave of 12), 1024 x 3072 128 (97 %) against 96 and 192.
/// Run 112 (an H100, every kernel in the same rounds): the fastest of ours on 9 of 12 mid-M
/// shapes, 1-24 % ahead of the earlier default (768 x 3072 x 2048: 22.3 us against 26.8).
pub const PERSISTENT_N192: KernelSpec = KernelSpec {
    entry: "gemm_bf16_persistent_n192",
    name: "persistent-192",
    layout: Layout::new(192, 4),
    ..PERSISTENT
};

/// A measurement: [`PERSISTENT_N192`] with a stream-K schedule: where even the 128 x 192 tiles
/// leave SMs idle (768 x 3072: 96 tiles for 132 SMs), their k-blocks cut evenly over every CTA.
/// Run 112: slower than [`PERSISTENT_N192`] on all 12 shapes it ran (1.2-2.0 times).
pub const PERSISTENT_N192_SK: KernelSpec = KernelSpec {
    entry: "gemm_bf16_persistent_n192_sk",
    name: "persistent-192-sk",
    config: Config::STREAM_K,
    step: true,
    ..PERSISTENT_N192
};

/// A measurement: [`CLUSTER`] (CTA pairs sharing B by multicast, the large shapes' kernel) with
/// a stream-K schedule over its cluster tiles: at 8192^3 its 1024 cluster tiles make 15 waves of
/// 66 pairs and 34 more, whose last wave leaves half the pairs idle.
pub const CLUSTER_SK: KernelSpec = KernelSpec {
    entry: "gemm_bf16_cluster_sk",
    name: "cluster-sk",
    config: Config::PAIR_STREAM_K,
    step: true,
    ..CLUSTER
};

/// A measurement: the transposing kernel ([`SKINNY16`]'s `D^T = B A^T`) 128 rows of A wide
/// (`wgmma.m64n128k16`, a ring of 6 stages, `setmaxnreg` for its 64 accumulators a thread): for
/// M in 65..=128, where the 128-row tiles pad M (M = 96: a quarter of each MMA on zeros) and the
/// 64-wide transposing tiles read every weight twice. Each weight tile of 128 rows is read once,
/// against the whole of A.
pub const SKINNY128: KernelSpec = KernelSpec {
    entry: "gemm_bf16_skinny128",
    name: "skinny-128",
    layout: Layout::new(128, 6),
    config: Config {
        setmaxnreg: true,
        ..Config::SKINNY
    },
    step: true,
    ..SKINNY16
};
/// The transposing kernel ([`SKINNY16`]'s `D^T = B A^T`) 192 rows of A wide
/// (`wgmma.m64n192k16`, a ring of 4 stages, `setmaxnreg`): for M in 129..=192, whose second row
/// of 128-row tiles is at most half inside M, and whose 64-wide transposing tiles read every
/// weight three times; here each weight tile of 128 rows is read once, against the whole of A.
/// A step row until run 132; production since (`crate::choice::wide_layer_fits_192`).
pub const SKINNY192: KernelSpec = KernelSpec {
    entry: "gemm_bf16_skinny192",
    name: "skinny-192",
    layout: Layout::new(192, 4),
    step: false,
    ..SKINNY128
};

/// A measurement: [`SKINNY128`] with split-K inside a cluster ([`Config::cluster_k`],
/// [`Grid::ClusterK`]) as [`SKINNY64_CLUSTER_K`]: the partial tile (64 KiB) in the ring once its
/// one unit has consumed it. For M in 65..=128 on layers with few weight tiles, where the global
/// split-K's last CTA adds up the others' 64 KiB partials alone.
pub const SKINNY128_CLUSTER_K: KernelSpec = KernelSpec {
    entry: "gemm_bf16_skinny128_cluster_k",
    name: "skinny-128-ck",
    config: Config {
        setmaxnreg: true,
        ..Config::SKINNY_CLUSTER_K
    },
    grid: Grid::ClusterK,
    ..SKINNY128
};
/// [`SKINNY192`] with split-K inside a cluster, as [`SKINNY64_CLUSTER_K`], its partial tile (96
/// KiB) in the ring once its one unit has consumed it: for M in 144..=192 on layers with few
/// weight tiles and K in 3584..4096 ([`crate::mid_layer_fits_192`]). Run 137 (an H100): 2-12 %
/// ahead of every other kernel of ours at 3584 x 3584 and 4608 x 3584 from M 144 up (176 x 4608
/// x 3584: 1.061 of cuBLAS against 0.951), 10-30 % behind the 32- and 64-wide cluster-K kernels
/// with K = 2048; the global split-K's `skinny-192` ran 160 x 3072 x 2048 at 0.50 of cuBLAS.
pub const SKINNY192_CLUSTER_K: KernelSpec = KernelSpec {
    entry: "gemm_bf16_skinny192_cluster_k",
    name: "skinny-192-ck",
    layout: SKINNY192.layout,
    step: false,
    ..SKINNY128_CLUSTER_K
};
const _: () = assert!(SKINNY192_CLUSTER_K.layout.bn == 192 && SKINNY128_CLUSTER_K.layout.bn == 128);

/// A measurement: [`SKINNY192_CLUSTER_K`] in CTA pairs ([`Config::cluster`] 2): a cluster of
/// `2 x splits` CTAs computes two vertically adjacent weight tiles (rank `pair * splits + part`),
/// the two CTAs of each part sharing the activations' box of their k-block by TMA multicast (each
/// loads half of its rows for both), each part's partials added up over the CTAs of its pair
/// index. The transposing kernels read A (the activations) once per weight tile: at M = 192 on
/// 128-row weight tiles that is 1.5 times the weights' bytes through L2, and the pairs halve it
/// (cuBLAS's kernel at 96 x 3584 x 3584, run 119: clusters of 8 with both operands multicast).
/// At most 4 parts (clusters of 8).
pub const SKINNY192_CLUSTER_K_PAIR: KernelSpec = KernelSpec {
    entry: "gemm_bf16_skinny192_cluster_k_pair",
    name: "skinny-192-ckp",
    config: Config {
        cluster: 2,
        ..SKINNY192_CLUSTER_K.config
    },
    step: true,
    ..SKINNY192_CLUSTER_K
};
/// A measurement: [`SKINNY128_CLUSTER_K`] in CTA pairs, as [`SKINNY192_CLUSTER_K_PAIR`].
pub const SKINNY128_CLUSTER_K_PAIR: KernelSpec = KernelSpec {
    entry: "gemm_bf16_skinny128_cluster_k_pair",
    name: "skinny-128-ckp",
    config: SKINNY192_CLUSTER_K_PAIR.config,
    ..SKINNY128_CLUSTER_K
};
/// A measurement: [`SKINNY64_CLUSTER_K`] in CTA pairs, as [`SKINNY192_CLUSTER_K_PAIR`].
pub const SKINNY64_CLUSTER_K_PAIR: KernelSpec = KernelSpec {
    entry: "gemm_bf16_skinny64_cluster_k_pair",
    name: "skinny-64-ckp",
    config: Config {
        cluster: 2,
        ..SKINNY64_CLUSTER_K.config
    },
    step: true,
    ..SKINNY64_CLUSTER_K
};

/// A measurement: [`SKINNY16_R64`] in a deep ring ([`Layout::narrow`]: A's slot the 64-row
/// box alone, 10 KiB a stage), 19 stages instead of 10. Run 119 (`ncu` at 96 x 3584 x 3584) had
/// cuBLAS's kernel (64 x 48 tiles, 15 stages of 14 KiB) receive its stages per SM at 1.7 times
/// our rate, every kernel waiting on full stages; the 64-row kernels' 16 KiB A slots held 8 KiB.
/// Run n8 of 2026-12-07 (an H100, 54 shapes, M 16-192, two processes): the deep rings 16, 32
/// and 64 wide ran at the speed of the rings they deepen (geometric means of shallow over deep
/// time 1.006, 1.000, 0.995): the ring's depth is not what limits the rate. Kept as the control
/// of the new widths below; not in the default.
pub const SKINNY16_R64_DEEP: KernelSpec = KernelSpec {
    entry: "gemm_bf16_skinny16_r64_deep",
    name: "skinny-16-r64-d",
    layout: Layout::narrow(16, 19),
    ..SKINNY16_R64
};
/// A measurement: [`SKINNY32_R64`] in a deep ring of 16 stages ([`SKINNY16_R64_DEEP`]).
pub const SKINNY32_R64_DEEP: KernelSpec = KernelSpec {
    entry: "gemm_bf16_skinny32_r64_deep",
    name: "skinny-32-r64-d",
    layout: Layout::narrow(32, 16),
    step: true,
    ..SKINNY32_R64
};
/// A measurement: the transposing kernel on 64 weight rows by 48 of A (`wgmma.m64n24k16` a
/// warpgroup), in a deep ring of 13 stages: cuBLAS's tile at M = 96 (two tiles of 48, run 119).
/// Run n8: the fastest of ours at 48 x 3584 x 3584, 48 x 2048 x 2048 and 48 x 4096 x 4096 (1-6 %).
pub const SKINNY48_R64_DEEP: KernelSpec = KernelSpec {
    entry: "gemm_bf16_skinny48_r64_deep",
    name: "skinny-48-r64-d",
    layout: Layout::narrow(48, 13),
    ..SKINNY32_R64_DEEP
};
/// A measurement: [`SKINNY64_R64`] in a deep ring of 12 stages ([`SKINNY16_R64_DEEP`]).
pub const SKINNY64_R64_DEEP: KernelSpec = KernelSpec {
    entry: "gemm_bf16_skinny64_r64_deep",
    name: "skinny-64-r64-d",
    layout: Layout::narrow(64, 12),
    ..SKINNY32_R64_DEEP
};
/// A measurement: 64 weight rows by 80 of A (`wgmma.m64n40k16` a warpgroup), a deep ring of 10
/// stages: cuBLAS's tile at M 152-160 (two of 80, the census of 2026-12-07). Run n8: the fastest
/// of ours at M 80 and 160 on the 2048-, 3584- and 4096-wide layers (3-7 %: 80 x 3584 x 3584
/// 14.2 us against `persistent-128`'s 15.1; cuBLAS 11.6), slower past one wave of tiles (4608 and
/// 11008 wide); a candidate for the default at those M, not yet in it.
pub const SKINNY80_R64_DEEP: KernelSpec = KernelSpec {
    entry: "gemm_bf16_skinny80_r64_deep",
    name: "skinny-80-r64-d",
    layout: Layout::narrow(80, 10),
    ..SKINNY32_R64_DEEP
};
/// A measurement: 64 weight rows by 96 of A (`wgmma.m64n48k16` a warpgroup), a deep ring of 9
/// stages: cuBLAS's tile at M = 184-192 (two of 96). Run n8: the fastest of ours at 96 x 3584 x
/// 3584 and 96 x 4096 x 4096 (4-5 %), behind at M = 192.
pub const SKINNY96_R64_DEEP: KernelSpec = KernelSpec {
    entry: "gemm_bf16_skinny96_r64_deep",
    name: "skinny-96-r64-d",
    layout: Layout::narrow(96, 9),
    ..SKINNY32_R64_DEEP
};

/// A measurement: [`SKINNY80_R64_DEEP`] in CTA pairs ([`Config::cluster`] 2): the two CTAs of a
/// pair compute vertically adjacent 64-row weight tiles at the same columns and part of K, and
/// share the activations' box of each k-block by TMA multicast (each loads half of its rows for
/// both; each CTA's consumers release a stage in both CTAs). cuBLAS's kernel at M 152-160 takes
/// the same 64 x 80 tiles in clusters of 4 x 2 that share both operands (the census of
/// 2026-12-07): at 160 x 3584 x 3584 12.7 us against this tile alone 19.1 (run n8); `ncu` (run n12
/// of 2026-12-07, an H100) had both read the same DRAM bytes, ours at 0.68 of cuBLAS's DRAM rate,
/// while each of our CTAs takes its whole 18 KiB stage from L2 and each of cuBLAS's 6.5 KiB.
/// Run n13 (an H100, 54 shapes M 16-192 by six layers, two processes, before the consumers'
/// descriptors moved to uniform registers): exact, and slower than the unpaired rows wherever
/// those fit a wave (0.85-0.95; 160 x 3584 x 3584 22.1 us against 19.2): the instruction-bound
/// consumers (run n12: 5.1 M instructions against cuBLAS's 1.4 M), not L2, set the rate. To be
/// measured again on the new consumer loop.
pub const SKINNY80_R64_DEEP_PAIR: KernelSpec = KernelSpec {
    entry: "gemm_bf16_skinny80_r64_deep_pair",
    name: "skinny-80-r64-dp",
    config: Config {
        cluster: 2,
        ..SKINNY80_R64_DEEP.config
    },
    ..SKINNY80_R64_DEEP
};
/// A measurement: [`SKINNY32_R64_DEEP`] in CTA pairs, as [`SKINNY80_R64_DEEP_PAIR`].
pub const SKINNY32_R64_DEEP_PAIR: KernelSpec = KernelSpec {
    entry: "gemm_bf16_skinny32_r64_deep_pair",
    name: "skinny-32-r64-dp",
    config: SKINNY80_R64_DEEP_PAIR.config,
    ..SKINNY32_R64_DEEP
};
/// A measurement: [`SKINNY48_R64_DEEP`] in CTA pairs, as [`SKINNY80_R64_DEEP_PAIR`].
pub const SKINNY48_R64_DEEP_PAIR: KernelSpec = KernelSpec {
    entry: "gemm_bf16_skinny48_r64_deep_pair",
    name: "skinny-48-r64-dp",
    config: SKINNY80_R64_DEEP_PAIR.config,
    ..SKINNY48_R64_DEEP
};
/// A measurement: [`SKINNY64_R64_DEEP`] in CTA pairs, as [`SKINNY80_R64_DEEP_PAIR`].
pub const SKINNY64_R64_DEEP_PAIR: KernelSpec = KernelSpec {
    entry: "gemm_bf16_skinny64_r64_deep_pair",
    name: "skinny-64-r64-dp",
    config: SKINNY80_R64_DEEP_PAIR.config,
    ..SKINNY64_R64_DEEP
};
/// A measurement: [`SKINNY96_R64_DEEP`] in CTA pairs, as [`SKINNY80_R64_DEEP_PAIR`].
pub const SKINNY96_R64_DEEP_PAIR: KernelSpec = KernelSpec {
    entry: "gemm_bf16_skinny96_r64_deep_pair",
    name: "skinny-96-r64-dp",
    config: SKINNY80_R64_DEEP_PAIR.config,
    ..SKINNY96_R64_DEEP
};

/// How many clusters a stream-K kernel cuts the split tiles' k-blocks over
/// ([`Schedule::stream_k`]'s `workers`): every cluster of the grid (`capacity`), or fewer where that
/// would leave a worker fewer than 4 k-blocks or a quarter of a tile's (then a tile has at most
/// five parts, whose partials its last CTA reads alone).
pub fn stream_k_workers(tiles: u64, capacity: u32, k_blocks: u32) -> u32 {
    let capacity = u64::from(capacity.max(1));
    let split = tiles - gpu_hopper::schedule::stream_k_whole(tiles, capacity);
    let shortest = u64::from(k_blocks.div_ceil(4).max(4));
    // At most `capacity`: the conversion cannot fail.
    (split.saturating_mul(u64::from(k_blocks)) / shortest).clamp(1, capacity) as u32
}

/// The production kernels: the module's entries, the host's `Kernel` variants, in the host's
/// `Kernel::ALL` order.
pub const KERNELS: [KernelSpec; 15] = [
    CLUSTER,
    PERSISTENT,
    PERSISTENT_N128,
    PERSISTENT_N64,
    SKINNY16,
    SKINNY32,
    SKINNY64,
    SKINNY16_CLUSTER_K,
    SKINNY32_CLUSTER_K,
    SKINNY64_CLUSTER_K,
    PERSISTENT_N192,
    SKINNY192,
    SKINNY192_CLUSTER_K,
    SKINNY32_R64,
    SKINNY64_R64,
];

/// The kernels kept only to show the steps of the design, and the measurements beside them
/// (`step: true`): built into the steps module (the kernel crate's `steps` feature) and the
/// host's `Kernel` variants only with its `steps` feature, for the benchmark's step table.
pub const STEPS: [KernelSpec; 27] = [
    PER_TILE,
    PERSISTENT_FIRST,
    SINGLE_WARPGROUP,
    SKINNY16_S4,
    SKINNY16_CLUSTER_K_S4,
    PERSISTENT_N64_PAIR,
    PERSISTENT_SK,
    PERSISTENT_N128_SK,
    CLUSTER_SK,
    PERSISTENT_N192_SK,
    SKINNY128,
    SKINNY128_CLUSTER_K,
    SKINNY192_CLUSTER_K_PAIR,
    SKINNY128_CLUSTER_K_PAIR,
    SKINNY64_CLUSTER_K_PAIR,
    SKINNY16_R64,
    SKINNY16_R64_DEEP,
    SKINNY32_R64_DEEP,
    SKINNY48_R64_DEEP,
    SKINNY64_R64_DEEP,
    SKINNY80_R64_DEEP,
    SKINNY96_R64_DEEP,
    SKINNY32_R64_DEEP_PAIR,
    SKINNY48_R64_DEEP_PAIR,
    SKINNY64_R64_DEEP_PAIR,
    SKINNY80_R64_DEEP_PAIR,
    SKINNY96_R64_DEEP_PAIR,
];

/// Calls `$callback!` with the production rows as `Variant = ROW` items, each with its doc
/// comment, after the tokens given after the callback's name, if any: the host crate defines its `Kernel` enum from it (with [`with_steps!`](crate::with_steps)'s rows under
/// its `steps` feature), so that a row added to [`KERNELS`] and here is a host kernel too.
#[macro_export]
macro_rules! with_kernels {
    ($callback:ident $(, $($before:tt)*)?) => {
        $callback! {
            $($($before)*)?
            /// The persistent kernel in CTA pairs (clusters of 2): the two CTAs of a pair
            /// compute vertically adjacent tiles and share B's box through TMA multicast
            /// (`gemm_bf16_cluster`).
            Cluster = CLUSTER,
            /// One CTA per SM, each walking its tiles in bands of 8 tile rows
            /// (`gemm_bf16_persistent`).
            Persistent = PERSISTENT,
            /// The persistent kernel on 128 x 128 tiles (`wgmma.m64n128k16`) in a ring of 6
            /// stages (`gemm_bf16_persistent_n128`): twice the tiles, for shapes with too few
            /// 128 x 256 tiles to fill the GPU (skinny M), which then need less split-K or none.
            PersistentNarrow = PERSISTENT_N128,
            /// The persistent kernel on 128 x 64 tiles (`wgmma.m64n64k16`) in a ring of 8 stages
            /// (`gemm_bf16_persistent_n64`): four times the tiles, for the smallest problems.
            PersistentSlim = PERSISTENT_N64,
            /// The decode kernel for M <= 16 (`gemm_bf16_skinny16`): it computes `D^T = B A^T`
            /// on tiles of 128 rows of B by 16 of A (`wgmma.m64n16k16`), so that the weights
            /// stream through every SM and the MMAs are not padded from M to 128 rows.
            Skinny16 = SKINNY16,
            /// The decode kernel for M <= 32 (`gemm_bf16_skinny32`, `wgmma.m64n32k16`).
            Skinny32 = SKINNY32,
            /// The decode kernel for M <= 64 (`gemm_bf16_skinny64`, `wgmma.m64n64k16`).
            Skinny64 = SKINNY64,
            /// [`Skinny16`](Self::Skinny16) with split-K inside a cluster
            /// (`gemm_bf16_skinny16_cluster_k`): one cluster of `splits` CTAs per tile of 128
            /// rows of B, each streaming a part of K, the parts added up through distributed
            /// shared memory. For layers with fewer weight tiles than SMs.
            Skinny16ClusterK = SKINNY16_CLUSTER_K,
            /// [`Skinny32`](Self::Skinny32) with split-K inside a cluster
            /// (`gemm_bf16_skinny32_cluster_k`).
            Skinny32ClusterK = SKINNY32_CLUSTER_K,
            /// [`Skinny64`](Self::Skinny64) with split-K inside a cluster
            /// (`gemm_bf16_skinny64_cluster_k`).
            Skinny64ClusterK = SKINNY64_CLUSTER_K,
            /// The persistent kernel on 128 x 192 tiles (`wgmma.m64n192k16`) in a ring of 4
            /// stages (`gemm_bf16_persistent_n192`): for the shapes whose 128 x 256 and 128 x 128
            /// tiles fill their last wave badly (768 x 3072: 96 tiles for 132 SMs, against 72 and
            /// 144).
            PersistentN192 = PERSISTENT_N192,
            /// The transposing kernel 192 rows of A wide (`gemm_bf16_skinny192`,
            /// `wgmma.m64n192k16`): for M in 144..=176 on wide layers, where it reads each weight
            /// tile once (the 128-row tiles read it twice).
            Skinny192 = SKINNY192,
            /// [`Skinny192`](Self::Skinny192) with split-K inside a cluster
            /// (`gemm_bf16_skinny192_cluster_k`): for M in 144..=192 on layers with few weight
            /// tiles and K >= 3584.
            Skinny192ClusterK = SKINNY192_CLUSTER_K,
            /// [`Skinny32`](Self::Skinny32) on tiles of 64 rows of B, the two consumer
            /// warpgroups on the tile's column halves (`gemm_bf16_skinny32_r64`): twice the
            /// weight tiles, for layers with fewer 128-row tiles than SMs.
            Skinny32R64 = SKINNY32_R64,
            /// [`Skinny64`](Self::Skinny64) on 64-row tiles, as
            /// [`Skinny32R64`](Self::Skinny32R64) (`gemm_bf16_skinny64_r64`).
            Skinny64R64 = SKINNY64_R64,
        }
    };
}

/// Calls `$callback!` with the step rows ([`STEPS`]), as [`with_kernels!`] does with the
/// production rows.
#[macro_export]
macro_rules! with_steps {
    ($callback:ident $(, $($before:tt)*)?) => {
        $callback! {
            $($($before)*)?
            /// A step: one CTA per 128 x 256 tile (`gemm_bf16_ws`).
            PerTile = PER_TILE,
            /// A step: the persistent kernel as first built, every consumer thread releasing each
            /// stage and no `setmaxnreg` (`gemm_bf16_persistent_first`).
            PersistentFirst = PERSISTENT_FIRST,
            /// A step: before warp specialization, one warpgroup (128 threads) per 64 x 256 tile,
            /// whose thread 0 issues the tensor loads between its MMAs (`gemm_bf16_single`).
            /// Never split.
            SingleWarpgroup = SINGLE_WARPGROUP,
            /// A measurement: [`Skinny16`](Self::Skinny16) in a ring of 4 stages
            /// (`gemm_bf16_skinny16_s4`).
            Skinny16S4 = SKINNY16_S4,
            /// A measurement: [`Skinny16ClusterK`](Self::Skinny16ClusterK) in a ring of 4 stages
            /// (`gemm_bf16_skinny16_cluster_k_s4`).
            Skinny16ClusterKS4 = SKINNY16_CLUSTER_K_S4,
            /// A measurement: [`PersistentSlim`](Self::PersistentSlim) in CTA pairs sharing B's
            /// box by multicast (`gemm_bf16_persistent_n64_pair`).
            PersistentSlimPair = PERSISTENT_N64_PAIR,
            /// A measurement: [`Persistent`](Self::Persistent) with a stream-K schedule
            /// (`gemm_bf16_persistent_sk`).
            PersistentStreamK = PERSISTENT_SK,
            /// A measurement: [`PersistentNarrow`](Self::PersistentNarrow) with a stream-K
            /// schedule (`gemm_bf16_persistent_n128_sk`).
            PersistentNarrowStreamK = PERSISTENT_N128_SK,
            /// A measurement: [`Cluster`](Self::Cluster) with a stream-K schedule
            /// (`gemm_bf16_cluster_sk`).
            ClusterStreamK = CLUSTER_SK,
            /// A measurement: [`PersistentN192`](Self::PersistentN192) with a stream-K schedule
            /// (`gemm_bf16_persistent_n192_sk`).
            PersistentN192StreamK = PERSISTENT_N192_SK,
            /// A measurement: the transposing kernel 128 rows of A wide
            /// (`gemm_bf16_skinny128`, `wgmma.m64n128k16`).
            Skinny128 = SKINNY128,
            /// A measurement: [`Skinny128`](Self::Skinny128) with split-K inside a cluster
            /// (`gemm_bf16_skinny128_cluster_k`).
            Skinny128ClusterK = SKINNY128_CLUSTER_K,
            /// A measurement: [`Skinny192ClusterK`](Self::Skinny192ClusterK) in CTA pairs sharing
            /// the activations' box by multicast (`gemm_bf16_skinny192_cluster_k_pair`).
            Skinny192ClusterKPair = SKINNY192_CLUSTER_K_PAIR,
            /// A measurement: [`Skinny128ClusterK`](Self::Skinny128ClusterK) in CTA pairs
            /// (`gemm_bf16_skinny128_cluster_k_pair`).
            Skinny128ClusterKPair = SKINNY128_CLUSTER_K_PAIR,
            /// A measurement: [`Skinny64ClusterK`](Self::Skinny64ClusterK) in CTA pairs
            /// (`gemm_bf16_skinny64_cluster_k_pair`).
            Skinny64ClusterKPair = SKINNY64_CLUSTER_K_PAIR,
            /// A measurement: [`Skinny16`](Self::Skinny16) on tiles of 64 rows of B, the two
            /// consumer warpgroups on the tile's column halves (`gemm_bf16_skinny16_r64`).
            Skinny16R64 = SKINNY16_R64,
            /// A measurement: [`Skinny16R64`](Self::Skinny16R64) in a deep ring, A's slot the
            /// 64-row box alone (`gemm_bf16_skinny16_r64_deep`, 19 stages).
            Skinny16R64Deep = SKINNY16_R64_DEEP,
            /// A measurement: [`Skinny32R64`](Self::Skinny32R64) in a deep ring
            /// (`gemm_bf16_skinny32_r64_deep`, 16 stages).
            Skinny32R64Deep = SKINNY32_R64_DEEP,
            /// A measurement: the transposing kernel on 64 weight rows by 48 of A in a deep ring
            /// (`gemm_bf16_skinny48_r64_deep`, 13 stages).
            Skinny48R64Deep = SKINNY48_R64_DEEP,
            /// A measurement: [`Skinny64R64`](Self::Skinny64R64) in a deep ring
            /// (`gemm_bf16_skinny64_r64_deep`, 12 stages).
            Skinny64R64Deep = SKINNY64_R64_DEEP,
            /// A measurement: 64 weight rows by 80 of A in a deep ring
            /// (`gemm_bf16_skinny80_r64_deep`, 10 stages).
            Skinny80R64Deep = SKINNY80_R64_DEEP,
            /// A measurement: 64 weight rows by 96 of A in a deep ring
            /// (`gemm_bf16_skinny96_r64_deep`, 9 stages).
            Skinny96R64Deep = SKINNY96_R64_DEEP,
            /// A measurement: [`Skinny32R64Deep`](Self::Skinny32R64Deep) in CTA pairs sharing
            /// the activations' box by multicast (`gemm_bf16_skinny32_r64_deep_pair`).
            Skinny32R64DeepPair = SKINNY32_R64_DEEP_PAIR,
            /// A measurement: [`Skinny48R64Deep`](Self::Skinny48R64Deep) in CTA pairs
            /// (`gemm_bf16_skinny48_r64_deep_pair`).
            Skinny48R64DeepPair = SKINNY48_R64_DEEP_PAIR,
            /// A measurement: [`Skinny64R64Deep`](Self::Skinny64R64Deep) in CTA pairs
            /// (`gemm_bf16_skinny64_r64_deep_pair`).
            Skinny64R64DeepPair = SKINNY64_R64_DEEP_PAIR,
            /// A measurement: [`Skinny80R64Deep`](Self::Skinny80R64Deep) in CTA pairs
            /// (`gemm_bf16_skinny80_r64_deep_pair`).
            Skinny80R64DeepPair = SKINNY80_R64_DEEP_PAIR,
            /// A measurement: [`Skinny96R64Deep`](Self::Skinny96R64Deep) in CTA pairs
            /// (`gemm_bf16_skinny96_r64_deep_pair`).
            Skinny96R64DeepPair = SKINNY96_R64_DEEP_PAIR,
        }
    };
}

/// How many clusters of each size a [`Grid::ClusterK`] kernel can hold on the GPU at once:
/// element `s - 1` for clusters of `s` CTAs (`cuOccupancyMaxActiveClusters`).
pub type ClusterFit = [u32; 8];

/// The clusters of each size of a transposing cluster-K kernel (one CTA per SM) that fit at once
/// on an H100 SXM (132 SMs), as `cuOccupancyMaxActiveClusters` reported them: a reference for
/// host tests and for plans made without a GPU (a host asks its own GPU: `Gemm::cluster_fit`).
pub const H100_CLUSTER_FIT: ClusterFit = [132, 66, 40, 32, 24, 20, 16, 16];

/// [`H100_CLUSTER_FIT`] on the H200 of the device runs (132 SMs; run 90): fewer clusters of 3 to
/// 8, its SMs grouped differently into GPCs.
pub const H200_CLUSTER_FIT: ClusterFit = [132, 66, 39, 30, 22, 17, 15, 15];

/// The fewest k-blocks (of 64) a part of K has in a [`Grid::ClusterK`] kernel's split: 4, as
/// the global split-K's. Run 146 (an H100, K of 256 to 1536): with parts of two k-blocks the
/// cluster-K kernels ran K = 256 in two parts at 7.8-9.3 us, in one (this minimum) at 5.8-7.3;
/// at K = 1024 in six parts 2-12 % behind four.
pub const CLUSTER_K_MIN_BLOCKS: u32 = 4;

/// The fewest k-blocks (of 64) a [`Grid::ClusterK`] kernel at most 64 wide splits at all: 16;
/// a shorter K it computes whole in each tile's one CTA. Run 151 (an H100; K of 256 to 1536 by
/// M 1 to 128, the 16-, 32- and 64-wide kernels unsplit below 16 k-blocks against parts of at
/// least [`CLUSTER_K_MIN_BLOCKS`], two processes each): unsplit they ran 1.11-1.19 times as fast
/// at 8 and 12 k-blocks (geometric means by K and width; 1.00-1.07 at 14); at 16 k-blocks the
/// split in up to four parts stayed 2 % ahead of two. The 192-wide kernel (wider partials, a
/// longer k-block) ran 10-21 % faster split at 12 and 14 k-blocks, and keeps the minimum alone.
pub const CLUSTER_K_SPLIT_FROM: u32 = 16;

/// Whether a K of `k` is too short for the [`Grid::ClusterK`] kernels at most 64 wide to split:
/// fewer than [`CLUSTER_K_SPLIT_FROM`] k-blocks (each tile whole in one CTA).
pub(crate) const fn below_cluster_k_split(k: u32) -> bool {
    k.div_ceil(BK) < CLUSTER_K_SPLIT_FROM
}

/// The largest grid y dimension (CUDA's limit): the tile rows of the per-tile kernels.
const MAX_GRID_Y: u64 = 65_535;

/// Why a kernel cannot run a shape ([`KernelSpec::check_launch`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LaunchLimit {
    /// A per-tile kernel would need `rows` tile rows, above the grid's 65535.
    GridRows { rows: u64 },
    /// The schedule would hold `units` work units, not below 2^31.
    Units { units: u64 },
    /// A [`Grid::ClusterK`] kernel launched in `splits` parts: its clusters are 1 to 8 CTAs
    /// (the portable cluster size; a pair kernel's `2 x splits`: [`KernelSpec::max_parts`]),
    /// each part at least one of the `k_blocks`.
    ClusterSplits { splits: u32, k_blocks: u32 },
    /// An input of 0 where the schedule needs at least 1: `what` (M, N, K, the split count or
    /// the clusters that fit).
    Zero { what: &'static str },
    /// `splits` parts of `k_blocks` k-blocks: the device's k-range arithmetic (`split *
    /// k_blocks` in 32 bits) needs their product below 2^32 (the split count the plan gives is at
    /// most 16).
    SplitBlocks { splits: u32, k_blocks: u32 },
}

impl KernelSpec {
    /// Columns of D per CTA tile.
    pub const fn cols(&self) -> u32 {
        self.layout.bn
    }

    /// CTAs per cluster.
    pub const fn cluster(&self) -> u32 {
        self.config.cluster
    }

    /// The kernel's dynamic shared memory (its launch's `sharedMemBytes`).
    pub const fn smem_bytes(&self) -> u32 {
        self.layout.bytes()
    }

    /// Rows of B's tensor-map box: a CTA of a pair loads half of the tile's.
    pub const fn b_box_rows(&self) -> u32 {
        self.cols() / self.cluster()
    }

    /// Whether the kernel splits K at all.
    const fn splits_k(&self) -> bool {
        self.config.split_k && matches!(self.grid, Grid::Persistent)
    }

    /// Whether the kernel's schedule is stream-K ([`Config::stream_k`]).
    const fn stream_k(&self) -> bool {
        self.config.stream_k && self.splits_k()
    }

    /// The problem the kernel itself computes for `shape`: `shape`, or for a kernel that
    /// computes the transpose ([`Config::swap_ab`]) N x M: its launch passes these M and N, and
    /// its tiles, splits, grid and workspace are this problem's.
    pub const fn problem(&self, shape: Shape) -> Shape {
        if self.config.swap_ab {
            Shape {
                m: shape.n,
                n: shape.m,
                k: shape.k,
            }
        } else {
            shape
        }
    }

    /// Tile rows and columns of `shape` as the kernel's schedule counts them: CTA tiles, or for
    /// CTA pairs cluster tiles (two CTA tiles stacked along M); of the kernel's own
    /// [`problem`](Self::problem).
    pub fn tiles(&self, shape: Shape) -> (u64, u64) {
        let shape = self.problem(shape);
        (
            u64::from(shape.m.div_ceil(self.rows * self.cluster())),
            u64::from(shape.n.div_ceil(self.cols())),
        )
    }

    /// Into how many parts the kernel splits the K range of the tiles it splits, for `shape`,
    /// when `capacity` clusters fit on the GPU at once: as many parts as keep every cluster busy,
    /// at most 16, each at least 4 k-blocks of 64 ([`gpu_hopper::schedule::split_k`]); 1 for a
    /// kernel without split-K.
    ///
    /// A stream-K kernel ([`Config::stream_k`]): its workers, [`stream_k_workers`].
    ///
    /// A [`Grid::ClusterK`] kernel, whose `capacity` is taken as the clusters of 8 CTAs that fit
    /// at once: [`KernelSpec::cluster_k_splits`] with the clusters of 4 and 2 that those hold
    /// (two and four each) and no others; a host that knows how many clusters of each size fit
    /// calls that with them.
    pub fn splits(&self, shape: Shape, capacity: u32) -> u32 {
        if shape.m == 0 || shape.n == 0 || shape.k == 0 {
            // Nothing to split (and no launch: `check_launch` refuses it).
            return 1;
        }
        let capacity = capacity.max(1);
        if matches!(self.grid, Grid::ClusterK) {
            let mut fit = [0; 8];
            for s in [2, 4, 8] {
                fit[s - 1] = capacity.saturating_mul(8 / s as u32);
            }
            return self.cluster_k_splits(shape, &fit);
        }
        if !self.splits_k() {
            return 1;
        }
        let (tm, tn) = self.tiles(shape);
        if self.config.stream_k {
            return stream_k_workers(tm * tn, capacity, shape.k.div_ceil(BK));
        }
        gpu_hopper::schedule::split_k(tm * tn, capacity, shape.k.div_ceil(BK), 4, 16)
    }

    /// How many clusters of this kernel a GPU of `sms` SMs holds at once, where `fit` is what
    /// the host read for it (`fit[s - 1]` clusters of `s` CTAs; for a pair kernel the SMs and the
    /// pairs): the capacity its launches are planned with. The SMs for the single-CTA kernels,
    /// the pairs that fit for the pair kernels; for the [`Grid::ClusterK`] kernels the clusters
    /// of their unsplit launch (one CTA a tile; a pair for a step in pairs), all a launch needs
    /// to be possible, since [`KernelSpec::launch_splits`] takes only a part count whose
    /// clusters fit. 0 where none fits: [`KernelSpec::check_launch`] refuses it.
    pub fn capacity_on(&self, sms: u32, fit: &ClusterFit) -> u32 {
        if matches!(self.grid, Grid::ClusterK) {
            fit[self.cluster() as usize - 1]
        } else if self.cluster() == 2 {
            fit[1]
        } else {
            sms
        }
    }

    /// The part count of this kernel's launch for `shape` on a GPU of `sms` SMs where `fit`
    /// clusters fit ([`KernelSpec::capacity_on`]'s): a [`Grid::ClusterK`] kernel's from the
    /// clusters of each size ([`KernelSpec::cluster_k_splits`]), the others' split-K from their
    /// capacity ([`KernelSpec::splits`]). What the host launches with.
    pub fn launch_splits(&self, shape: Shape, sms: u32, fit: &ClusterFit) -> u32 {
        match self.grid {
            Grid::ClusterK => self.cluster_k_splits(shape, fit),
            _ => self.splits(shape, self.capacity_on(sms, fit)),
        }
    }

    /// Into how many parts a [`Grid::ClusterK`] kernel splits K for `shape` when `fit[s - 1]`
    /// clusters of `s` CTAs fit on the GPU at once: the most parts, 2 to 8, whose clusters (one
    /// per tile) all fit at once, each part at least [`CLUSTER_K_MIN_BLOCKS`] k-blocks; 1 when
    /// none does, or when a kernel at most 64 wide has fewer than [`CLUSTER_K_SPLIT_FROM`]
    /// k-blocks (the kernel then computes each tile whole in one CTA). How many fit depends on
    /// how the GPU's SMs are grouped (a cluster runs inside one GPC): on the H200, with one CTA
    /// per SM, fewer than 132 / s for most sizes (run 90: 30 of 4, 15 of 8), so it is asked of
    /// the driver, not computed. 1 for the other kernels.
    pub fn cluster_k_splits(&self, shape: Shape, fit: &ClusterFit) -> u32 {
        if !matches!(self.grid, Grid::ClusterK) {
            return 1;
        }
        let (tm, tn) = self.tiles(shape);
        let k_blocks = shape.k.div_ceil(BK);
        if self.cols() <= 64 && below_cluster_k_split(shape.k) {
            return 1;
        }
        let c = self.cluster();
        (2..=self.max_parts())
            .rev()
            .find(|&s| {
                tm * tn <= u64::from(fit[(s * c) as usize - 1])
                    && k_blocks >= s * CLUSTER_K_MIN_BLOCKS
            })
            .unwrap_or(1)
    }

    /// CTAs per cluster of the launch for `splits`: the [`Grid::ClusterK`] kernels' clusters are
    /// their `splits` (in pairs: twice), the others' [`KernelSpec::cluster`].
    pub const fn launch_cluster(&self, splits: u32) -> u32 {
        if matches!(self.grid, Grid::ClusterK) {
            splits * self.cluster()
        } else {
            self.cluster()
        }
    }

    /// The most parts of K a [`Grid::ClusterK`] kernel's launch may have: its clusters hold at
    /// most 8 CTAs (the portable cluster size), `parts x` [`KernelSpec::cluster`] of them.
    pub const fn max_parts(&self) -> u32 {
        8 / self.cluster()
    }

    /// Whether this kernel can run `shape` in `splits` parts with `capacity` clusters: every
    /// kernel's schedule counts its work units (tiles, and the splits of split tiles) in 32 bits
    /// on the device, which holds below 2^31 units; the per-tile kernels also take at most 65535
    /// tile rows (the grid's y dimension).
    pub fn check_launch(
        &self,
        shape: Shape,
        splits: u32,
        capacity: u32,
    ) -> Result<(), LaunchLimit> {
        for (what, n) in [
            ("M", shape.m),
            ("N", shape.n),
            ("K", shape.k),
            ("the split count", splits),
            ("the clusters that fit (capacity)", capacity),
        ] {
            if n == 0 {
                return Err(LaunchLimit::Zero { what });
            }
        }
        let (tm, tn) = self.tiles(shape);
        if matches!(self.grid, Grid::ClusterK) {
            let k_blocks = shape.k.div_ceil(BK);
            if !(1..=self.max_parts()).contains(&splits) || splits > k_blocks {
                return Err(LaunchLimit::ClusterSplits { splits, k_blocks });
            }
            // One CTA per split of each tile: the grid's x dimension, and the units the
            // schedule counts, are the same number.
            let units = tm * tn * u64::from(splits);
            return if units < gpu_hopper::schedule::MAX_UNITS {
                Ok(())
            } else {
                Err(LaunchLimit::Units { units })
            };
        }
        if self.stream_k() {
            // The workers' arithmetic in `u64` on the device stays below 2^64 where the units fit
            // (`stream_k_units`).
            let units = Schedule::stream_k_units(tm * tn, shape.k.div_ceil(BK), splits, capacity);
            return if tm * tn < gpu_hopper::schedule::MAX_UNITS
                && units < gpu_hopper::schedule::MAX_UNITS
            {
                Ok(())
            } else {
                Err(LaunchLimit::Units {
                    units: units.max(tm * tn),
                })
            };
        }
        let splits = if self.splits_k() { splits } else { 1 };
        let k_blocks = shape.k.div_ceil(BK);
        // The device clamps the parts to the k-blocks, then multiplies them in 32 bits.
        if u64::from(splits.min(k_blocks)) * u64::from(k_blocks) >= 1 << 32 {
            return Err(LaunchLimit::SplitBlocks { splits, k_blocks });
        }
        if matches!(self.grid, Grid::PerTile) && tm > MAX_GRID_Y {
            return Err(LaunchLimit::GridRows { rows: tm });
        }
        if !gpu_hopper::schedule::units_fit(tm, tn, splits, capacity) {
            let full = if splits <= 1 {
                tm * tn
            } else if tm * tn >= u64::from(capacity) {
                tm * tn - tm * tn % u64::from(capacity)
            } else {
                0
            };
            let units = full + (tm * tn - full) * u64::from(splits);
            return Err(LaunchLimit::Units { units });
        }
        Ok(())
    }

    /// The schedule a CTA of this kernel walks for `shape`, `splits` and `capacity`, as the device
    /// builds it from its grid, for CTA (or pair) `first`; the launch's limit if it cannot run
    /// ([`KernelSpec::check_launch`]).
    pub fn schedule(
        &self,
        shape: Shape,
        splits: u32,
        capacity: u32,
        first: u32,
    ) -> Result<Schedule, LaunchLimit> {
        self.check_launch(shape, splits, capacity)?;
        let (tm, tn) = self.tiles(shape);
        // Below 2^31 each, and so is their product, by the launch check.
        let (tm, tn) = (tm as u32, tn as u32);
        Ok(match self.grid {
            Grid::PerTile => Schedule::new(tm, tn, 1, 1, first, tm * tn),
            // Every CTA its own unit: `first` is the CTA's index, the stride the grid's size.
            Grid::ClusterK => Schedule::new(
                tm,
                tn,
                splits,
                shape.k.div_ceil(BK),
                first,
                tm * tn * splits,
            ),
            // Stream-K: every cluster of the grid a worker or a holder of whole tiles (the grid is
            // `capacity` clusters, the stride the device sees).
            Grid::Persistent if self.stream_k() => {
                Schedule::stream_k(tm, tn, shape.k.div_ceil(BK), splits, first, capacity)
            }
            Grid::Persistent => {
                let splits = if self.splits_k() { splits } else { 1 };
                let k_blocks = shape.k.div_ceil(BK);
                // The units against the GPU's capacity, then the grid the device sees.
                let units = Schedule::new(tm, tn, splits, k_blocks, 0, capacity).total();
                Schedule::new(tm, tn, splits, k_blocks, first, units.min(capacity))
            }
        })
    }

    /// The launch's grid `(x, y)` in CTAs: per tile, `(tile columns, tile rows)`; persistent, one
    /// cluster per unit up to `capacity` clusters.
    pub fn grid(
        &self,
        shape: Shape,
        splits: u32,
        capacity: u32,
    ) -> Result<(u32, u32), LaunchLimit> {
        let schedule = self.schedule(shape, splits, capacity, 0)?;
        Ok(match self.grid {
            Grid::PerTile => (schedule.tiles_n, schedule.tiles_m),
            Grid::Persistent => (self.cluster() * schedule.stride, 1),
            Grid::ClusterK => (self.cluster() * schedule.stride, 1),
        })
    }

    /// The split-K workspace's bytes for `shape` in `splits` parts with `capacity` clusters: a
    /// CTA tile's f32 block (`rows x cols`) per slot (a CTA tile of the split tiles) and split,
    /// then a 4-byte counter per slot; none without split-K (nor for the [`Grid::ClusterK`]
    /// kernels, whose parts meet in shared memory); the launch's limit if it cannot run.
    pub fn workspace_bytes(
        &self,
        shape: Shape,
        splits: u32,
        capacity: u32,
    ) -> Result<u64, LaunchLimit> {
        let schedule = self.schedule(shape, splits, capacity, 0)?;
        // The cluster-K kernels' parts meet in shared memory, not in a workspace.
        if schedule.splits <= 1 || !self.splits_k() {
            return Ok(0);
        }
        let slots = u64::from(schedule.slots(self.cluster()));
        let block = u64::from(self.rows * self.cols() * 4);
        Ok(slots * u64::from(schedule.splits) * block + slots * 4)
    }
}

#[cfg(test)]
mod tests;
