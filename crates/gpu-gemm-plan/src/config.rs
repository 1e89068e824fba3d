//! How a kernel is built: the steps from the first persistent kernel to the production ones, so
//! that each can be measured against the one before in the same run.

use gpu_hopper::regs::RegisterSplit;

/// Consumer warps: 2 warpgroups of 4.
pub const CONSUMER_WARPS: u32 = 8;
/// The register split of the kernel body's three warpgroups (`setmaxnreg`): the producer
/// warpgroup keeps 40 registers per thread (it gives up those it does not use), and the two
/// consumer warpgroups share the rest of the launch's budget for their accumulators. The
/// toolkit derives it from the launch: `.maxntid 384` caps a thread at 168 of the SM's 65536
/// registers, 384 x 168 = 64512, and (64512 - 128 x 40) / 256 = 232.
const SPLIT: RegisterSplit = RegisterSplit::new(3 * 128, 1, 2, 40);
/// Registers per thread of the producer warpgroup after `setmaxnreg`.
pub const PRODUCER_REGS: u32 = SPLIT.producer;
/// Registers per thread of the consumer warpgroups after `setmaxnreg`.
pub const CONSUMER_REGS: u32 = SPLIT.consumer;
const _: () = assert!(PRODUCER_REGS == 40 && CONSUMER_REGS == 232);

/// A kernel's configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    /// CTAs per cluster: 1, or 2 (vertically adjacent tiles sharing B through TMA multicast).
    pub cluster: u32,
    /// One elected lane per consumer warp releases a stage (`false`: every consumer thread does,
    /// the first kernel's way).
    pub warp_arrivals: bool,
    /// `setmaxnreg` moves registers from the producer warpgroup to the consumers.
    pub setmaxnreg: bool,
    /// D leaves through shared memory and TMA tensor stores (when N is a multiple of 8, the
    /// tensor map's stride rule), which run on while the warpgroup starts its next tile.
    pub tma_store: bool,
    /// The persistent schedule splits K as the launch's `splits` says (`false`: it ignores it,
    /// and the split-K code is not compiled in).
    pub split_k: bool,
    /// The kernel computes the transpose, `D^T = B A^T` ("swap AB"): its tile rows are rows of
    /// B (N) and its tile columns rows of A (M), so that a small M is the `wgmma`'s N (8 to 64)
    /// rather than padding 128 tile rows. The host passes B's map as the kernel's A and A's as
    /// its B, and M and N exchanged; the epilogue writes each element to D transposed back,
    /// from registers (no TMA store: D's rows are the kernel's columns).
    pub swap_ab: bool,
    /// Split-K inside a cluster: the launch's clusters are `splits` CTAs, one per split of one
    /// tile (the grid [`Grid::ClusterK`](crate::Grid::ClusterK)); each CTA leaves its partial
    /// tile in its own shared memory, and after a cluster barrier adds up one slice of the
    /// tile's rows from every CTA's partial (distributed shared memory) and writes that slice of
    /// D. No workspace, no counter, no CTA finishing alone: the split-K of [`Config::split_k`]
    /// without its global memory round trips. The transposing kernels only (D out from
    /// registers; the staging buffers hold the partials).
    pub cluster_k: bool,
    /// The persistent schedule is stream-K ([`Schedule::stream_k`](crate::Schedule::stream_k)):
    /// the tiles of the last waves are cut by k-blocks evenly over the launch's `splits` CTAs
    /// (its workers: clusters, whose CTAs walk the same units), each one range that may start and
    /// end inside a tile, the partials meeting as split-K's do. Needs [`Config::split_k`]'s
    /// workspace code.
    pub stream_k: bool,
    /// Tiles of 64 rows ([`BM`](crate::BM) / 2) whose two consumer warpgroups take the tile's
    /// two column halves, each `wgmma.m64n(BN/2)k16` over the same 64 rows of A (the row's
    /// `rows` is 64): twice the tiles of the 128-row kernel of the same width, with no partial to
    /// add up between the warpgroups. Only in the transposing kernels without cluster-K (a
    /// measurement: their weight tiles 64 rows high, as cuBLAS's decode kernels take them).
    pub split_columns: bool,
}

impl Config {
    /// The first kernel's configuration: every consumer thread releases, no `setmaxnreg`, no
    /// cluster. It has no split-K either: without `setmaxnreg` a consumer thread has 168
    /// registers, which its 128 accumulators and the split-K code do not fit (ptxas spills).
    pub const FIRST: Config = Config {
        cluster: 1,
        warp_arrivals: false,
        setmaxnreg: false,
        tma_store: false,
        split_k: false,
        swap_ab: false,
        cluster_k: false,
        stream_k: false,
        split_columns: false,
    };
    /// One CTA, elected warp arrivals, `setmaxnreg`, the TMA-store epilogue and split-K.
    pub const SINGLE: Config = Config {
        cluster: 1,
        warp_arrivals: true,
        setmaxnreg: true,
        tma_store: true,
        split_k: true,
        swap_ab: false,
        cluster_k: false,
        stream_k: false,
        split_columns: false,
    };
    /// [`Config::SINGLE`] without `setmaxnreg`, for 128 x 64 tiles: their 32 accumulators fit the
    /// 168 registers a thread has at launch (ptxas gives such a kernel fewer, and then ignores
    /// its `setmaxnreg`: warning C7508).
    pub const SLIM: Config = Config {
        setmaxnreg: false,
        ..Config::SINGLE
    };
    /// [`Config::SLIM`] computing the transpose ([`Config::swap_ab`]), D out from registers: the
    /// decode kernels (M <= 64), whose few accumulators need no `setmaxnreg`.
    pub const SKINNY: Config = Config {
        tma_store: false,
        swap_ab: true,
        ..Config::SLIM
    };
    /// [`Config::SKINNY`] with its split-K inside a cluster ([`Config::cluster_k`]) instead of
    /// through a global workspace: the decode kernels for layers with few weight tiles.
    pub const SKINNY_CLUSTER_K: Config = Config {
        split_k: false,
        cluster_k: true,
        ..Config::SKINNY
    };
    /// [`Config::SKINNY`] on 64-row tiles, the consumer warpgroups on the column halves
    /// ([`Config::split_columns`]).
    pub const SKINNY_HALVES: Config = Config {
        split_columns: true,
        ..Config::SKINNY
    };
    /// [`Config::SINGLE`] with a stream-K schedule ([`Config::stream_k`]).
    pub const STREAM_K: Config = Config {
        stream_k: true,
        ..Config::SINGLE
    };
    /// [`Config::PAIR`] with a stream-K schedule.
    pub const PAIR_STREAM_K: Config = Config {
        stream_k: true,
        ..Config::PAIR
    };
    /// [`Config::SINGLE`] in CTA pairs with multicast B.
    pub const PAIR: Config = Config {
        cluster: 2,
        ..Config::SINGLE
    };

    /// Whether D of a whole tile leaves through the staging buffers and tensor stores (and C,
    /// when read, comes in through them): with this configuration's TMA-store epilogue when
    /// N % 8 == 0 (the tensor maps' 16-byte row stride).
    #[inline(always)]
    pub const fn staged(self, n: u32) -> bool {
        self.tma_store && n % 8 == 0
    }

    /// The empty barriers' arrival count of this configuration.
    pub const fn arrivals(self) -> u32 {
        if self.warp_arrivals {
            CONSUMER_WARPS * self.cluster
        } else {
            2 * 128
        }
    }
}
