//! The device suite's single source of truth: which test kernels exist, with which
//! configuration, and the shared-memory and report layout both sides agree on.
//!
//! The kernels crate expands [`ring_kernels!`] (and the other lists) into kernel definitions; the
//! harness expands the same lists into its table of launches. A kernel and its launch cannot
//! drift apart.

#![no_std]
#[cfg(any(feature = "std", test))]
extern crate std;

use gpu_pipeline::checked::{Fault, Verdict};

/// Payload words of one ring slot (1 KiB).
pub const PAYLOAD_WORDS: usize = 256;
/// Header words in front of the payload of a ring slot (word 0: the item's sequence number).
pub const HEADER_WORDS: usize = 4;
/// Words of one ring slot.
pub const SLOT_WORDS: usize = PAYLOAD_WORDS + HEADER_WORDS;
/// Bytes of one TMA slot (one bulk copy per stage).
pub const TMA_BYTES: usize = 4096;
/// Words each block writes into the report buffer.
pub const REPORT_WORDS: usize = 8;
/// Written to report word [`R_DONE`] by a block that reached its end.
pub const DONE: u32 = 0x600D_600D;

/// Report word: header mismatches seen by consumers (must be 0).
pub const R_ERRORS: usize = 0;
/// Report words: the producer cursor at the end (stage, lap).
pub const R_PRODUCER: usize = 1;
/// Report words: the consumer cursor at the end (stage, lap).
pub const R_CONSUMER: usize = 3;
/// Report word: items consumed (counted by consumer thread 0).
pub const R_CONSUMED: usize = 5;
/// Report word: [`DONE`].
pub const R_DONE: usize = 6;

/// API paths a ring kernel can exercise.
pub mod api {
    /// `acquire_*` handles and `release` (elected sides: `arrive` + `release_without_signal`).
    pub const HANDLES: u32 = 0;
    /// `produce`/`consume` scopes (elected sides: `produce_explicit`/`consume_explicit`).
    pub const SCOPES: u32 = 1;
    /// `wait_*`, `*_signal`, `*_step` by hand.
    pub const DIRECT: u32 = 2;
    /// `try_wait_*` polling, then `wait_*_if_needed`.
    pub const TRYWAIT: u32 = 3;
    /// `wait_*_ticks` with a suspend-time hint.
    pub const TICKS: u32 = 4;
    /// Control: the producer signals `full` *before* it fills the slot (a deliberate race that
    /// keeps every barrier's arrival count right, so it cannot hang). The checks must catch it; the
    /// harness counts the test as passed only if they do.
    pub const SIGNAL_EARLY: u32 = 5;
    /// The pipeline split into its halves (`into_producer` / `into_consumer`), and consumers
    /// that keep one stage in flight: each releases stage `k - 1` only after it acquired and
    /// read stage `k` (two handles held at once), as a Hopper GEMM's MMA warps do.
    pub const INFLIGHT: u32 = 6;
}

/// The exit status of the host binaries (`pipeline-harness`, its `--broken-one` child processes
/// and `pipeline-bench`), in the one place that the harness and the xtask both read, so that
/// they cannot drift apart.
///
/// Only [`NO_DRIVER`](exit::NO_DRIVER) may become a `SKIPPED` line (in `cargo xtask ci`, on a
/// machine without a GPU); every other non-zero status is a failure.
pub mod exit {
    /// Every test passed.
    pub const PASSED: u8 = 0;
    /// A test failed (wrong data, a wrong diagnosis, a kernel that reported an error).
    pub const TEST_FAILED: u8 = 1;
    /// The command line was wrong (an unknown argument, a missing value, an unknown test name).
    pub const USAGE: u8 = 2;
    /// A kernel hung: the process stopped at once, since a hung context cannot be recovered.
    pub const HUNG: u8 = 3;
    /// No CUDA driver: the driver library (`libcuda.so`) cannot be loaded on this machine.
    pub const NO_DRIVER: u8 = 4;
    /// The driver is there but the run could not be set up: the PTX file cannot be read, the
    /// driver rejected the module (for example `CUDA_ERROR_INVALID_IMAGE`), no device, a GPU
    /// older than sm_90, a failed allocation or host-memory registration, a test process that
    /// could not be started.
    pub const SETUP: u8 = 5;

    /// What an exit status means, in a few words; `None` for a status not listed here.
    pub const fn meaning(code: i32) -> Option<&'static str> {
        if code < 0 || code > u8::MAX as i32 {
            return None;
        }
        match code as u8 {
            PASSED => Some("passed"),
            TEST_FAILED => Some("a test failed"),
            USAGE => Some("usage error"),
            HUNG => Some("a kernel hung"),
            NO_DRIVER => Some("no CUDA driver"),
            SETUP => Some("CUDA setup error"),
            _ => None,
        }
    }
}

const fn align_up(x: usize, a: usize) -> usize {
    x.div_ceil(a) * a
}

/// Bytes at the start of dynamic shared memory reserved for the barriers of a `stages`-stage
/// pipeline (8-byte elements on every backend), rounded up to 128 bytes: room for the storage of
/// checked builds too (the library's `barrier_bytes_any_build`), so that one layout serves both.
pub const fn barrier_region(stages: usize) -> usize {
    align_up(gpu_pipeline::barrier_bytes_any_build(stages), 128)
}

/// Dynamic shared memory of a ring kernel.
pub const fn ring_smem_bytes(stages: usize) -> usize {
    barrier_region(stages) + stages * SLOT_WORDS * 4
}

/// Dynamic shared memory of a TMA kernel.
pub const fn tma_smem_bytes(stages: usize) -> usize {
    barrier_region(stages) + stages * TMA_BYTES
}

/// The ring kernels of the NVIDIA suite: `(backend, stages, producer threads, producer mode,
/// consumer threads, consumer mode, api)`. Mode `e`: one elected lane arrives (arrive count 1,
/// the side is one warp); `a`: every thread of the side arrives. Backends: `mbar`
/// (`NvidiaMbarBackend`), `counter` (`AmdCounterBackend` compiled for nvptx).
///
/// Calls `$m!(backend, stages, pt, pe, ct, ce, api);` for each.
#[macro_export]
macro_rules! ring_kernels {
    ($m:ident) => {
        $crate::ring_kernels!(@backend $m, mbar);
        $crate::ring_kernels!(@backend $m, counter);
    };
    (@backend $m:ident, $b:ident) => {
        // Stage counts, one warp producing, four warps consuming, every thread arriving.
        $m!($b, 1, 32, a, 128, a, handles);
        $m!($b, 2, 32, a, 128, a, handles);
        $m!($b, 3, 32, a, 128, a, handles);
        $m!($b, 4, 32, a, 128, a, handles);
        $m!($b, 8, 32, a, 128, a, handles);
        // Arrivals per phase: 1 elected thread, 1 warp, 4 warps, on both sides.
        $m!($b, 4, 32, e, 32, e, handles);
        $m!($b, 4, 32, e, 32, a, handles);
        $m!($b, 4, 32, e, 128, a, handles);
        $m!($b, 4, 32, a, 32, e, handles);
        $m!($b, 4, 32, a, 32, a, handles);
        $m!($b, 4, 128, a, 32, e, handles);
        $m!($b, 4, 128, a, 32, a, handles);
        $m!($b, 4, 128, a, 128, a, handles);
        // API paths.
        $m!($b, 3, 32, a, 128, a, scopes);
        $m!($b, 3, 32, a, 128, a, direct);
        $m!($b, 3, 32, a, 128, a, trywait);
        $m!($b, 3, 32, a, 128, a, ticks);
        $m!($b, 2, 32, e, 32, e, scopes);
        $m!($b, 2, 128, a, 32, e, scopes);
        $m!($b, 3, 32, a, 128, a, inflight);
        $m!($b, 4, 32, e, 32, e, inflight);
        $m!($b, 2, 32, e, 32, a, inflight);
    };
}

/// The split kernels (`split_{backend}_s{stages}_p{pt}_c{ct}_{api}`): the lanes of one warp work
/// on different slots at the same time and arrive together on different barriers. Producer thread
/// `t` takes the items `i` with `i % stages == t % stages` (so lane `l` of a 2-stage ring signals
/// stage `l & 1`), and so does consumer thread `t` (with 4 consumer threads on 4 stages, lanes 0-3
/// each release their own stage). Arrive counts: `pt / stages` and `ct / stages` per phase. Each
/// side syncs its warp before it signals, so that the arrivals of all its slots are one call.
/// The item count must be a multiple of `stages`.
///
/// Calls `$m!(backend, stages, pt, ct, api);` for each.
#[macro_export]
macro_rules! split_kernels {
    ($m:ident) => {
        $crate::split_kernels!(@backend $m, mbar);
        $crate::split_kernels!(@backend $m, counter);
    };
    (@backend $m:ident, $b:ident) => {
        $m!($b, 2, 32, 32, handles);
        $m!($b, 2, 32, 32, scopes);
        $m!($b, 2, 32, 32, direct);
        $m!($b, 4, 32, 4, handles);
        $m!($b, 4, 32, 4, direct);
        $m!($b, 4, 64, 32, handles);
    };
}

/// The split kernels built for AMD (wave64 and wave32: thread counts multiples of 64). Compiled
/// and disassembled; no AMD GPU runs them here. Same row shape as [`split_kernels!`].
#[macro_export]
macro_rules! amd_split_kernels {
    ($m:ident) => {
        $m!(counter, 2, 64, 64, handles);
        $m!(counter, 4, 64, 4, direct);
    };
}

/// Builds a split kernel's exported name from its row, as a `&'static str`.
#[macro_export]
macro_rules! split_kernel_name {
    ($b:ident, $s:literal, $pt:literal, $ct:literal, $api:ident) => {
        concat!(
            "split_",
            stringify!($b),
            "_s",
            stringify!($s),
            "_p",
            stringify!($pt),
            "_c",
            stringify!($ct),
            "_",
            stringify!($api)
        )
    };
}

/// Control kernels: deliberately broken rings (producers that signal before they fill), to prove
/// that the data checks can fail. Same row shape as [`ring_kernels!`].
#[macro_export]
macro_rules! control_kernels {
    ($m:ident) => {
        $m!(mbar, 2, 32, a, 128, a, signal_early);
        $m!(counter, 2, 32, a, 128, a, signal_early);
    };
}

/// The ring kernels built for AMD (counter backend; thread counts are multiples of 64 so that
/// they hold for wave64 and wave32). Same row shape as [`ring_kernels!`].
#[macro_export]
macro_rules! amd_ring_kernels {
    ($m:ident) => {
        $m!(counter, 1, 64, a, 256, a, handles);
        $m!(counter, 2, 64, a, 256, a, handles);
        $m!(counter, 3, 64, a, 256, a, handles);
        $m!(counter, 4, 64, a, 256, a, handles);
        $m!(counter, 8, 64, a, 256, a, handles);
        $m!(counter, 4, 256, a, 64, a, handles);
        $m!(counter, 3, 64, a, 256, a, scopes);
        $m!(counter, 3, 64, a, 256, a, direct);
        $m!(counter, 3, 64, a, 256, a, trywait);
        $m!(counter, 3, 64, a, 256, a, ticks);
    };
}

/// The TMA kernels, `(kind, stages, after)` each, named `tma_{kind}_s{stages}`: one lane produces
/// with `arrive_expect_tx` + a bulk copy of [`TMA_BYTES`], four warps consume. With `after`
/// (`tma_after_s*`) the consumers wait with a suspend-time hint (`acquire_ticks`) and release
/// with an arrival ordered after the data they copied (`MbarrierRef::arrive_after`, its guard's
/// nonzero value the output's address).
#[macro_export]
macro_rules! tma_kernels {
    ($m:ident) => {
        $m!(mbar, 2, false);
        $m!(mbar, 4, false);
        $m!(after, 3, true);
    };
}

/// Stage counts of the tensor-TMA kernels (`tma_tensor_s{stages}`): each item is a
/// [`TENSOR_BOX_ROWS`] x [`TENSOR_ROW_WORDS`] box of a 2D `u32` tensor (the same bytes as a
/// [`TMA_BYTES`] item); one lane loads it with `arrive_expect_tx` + a 2D tensor copy, four warps
/// check it against global memory, and one consumer lane stores it back with a 2D tensor store
/// before the stage is released. The kernel's fifth argument points to two tensor maps in global
/// memory (input, then output; 128 bytes each).
#[macro_export]
macro_rules! tma_tensor_kernels {
    ($m:ident) => {
        $m!(2);
        $m!(4);
    };
}

/// `u32` words in one row of the tensor-TMA kernels' 2D tensors (128 bytes).
pub const TENSOR_ROW_WORDS: usize = 32;
/// Rows of one tensor-TMA box (one item): `TENSOR_BOX_ROWS * TENSOR_ROW_WORDS * 4 == TMA_BYTES`.
pub const TENSOR_BOX_ROWS: usize = TMA_BYTES / (TENSOR_ROW_WORDS * 4);

/// Stage counts of the cluster-of-2 kernels (`cluster_mbar_s{stages}`).
#[macro_export]
macro_rules! cluster_kernels {
    ($m:ident) => {
        $m!(2);
        $m!(4);
    };
}

/// Builds a ring kernel's exported name from its row, as a `&'static str`.
#[macro_export]
macro_rules! ring_kernel_name {
    ($b:ident, $s:literal, $pt:literal, $pe:ident, $ct:literal, $ce:ident, $api:ident) => {
        concat!(
            "ring_",
            stringify!($b),
            "_s",
            stringify!($s),
            "_p",
            stringify!($pt),
            stringify!($pe),
            "_c",
            stringify!($ct),
            stringify!($ce),
            "_",
            stringify!($api)
        )
    };
}

/// The synchronisation-only kernels (`sync_{backend}_s{stages}`): one producer warp runs
/// `producer_signal_and_step`, one consumer warp `consumer_signal_and_step`, no data.
#[macro_export]
macro_rules! sync_kernels {
    ($m:ident) => {
        $m!(mbar, 1);
        $m!(mbar, 3);
        $m!(counter, 1);
        $m!(counter, 3);
    };
}

/// Columns (and rows) of the epilogue test's matrices (`D = accum + beta * C`, f32).
pub const EPI_N: usize = 4096;
/// Bytes of one row of `C`: one TMA transaction (`cp.async.bulk`) per stage.
pub const EPI_ROW_BYTES: usize = EPI_N * 4;

/// Bytes at the start of dynamic shared memory for a role pipeline's barriers (producer barriers,
/// then consumer barriers), rounded up to 128 bytes.
pub const fn role_barrier_region(stages: usize, producer_sub: usize, consumer_sub: usize) -> usize {
    align_up(
        gpu_pipeline::role::role_barrier_bytes(stages, producer_sub, consumer_sub),
        128,
    )
}

/// Dynamic shared memory of a role kernel.
pub const fn role_smem_bytes(stages: usize, producer_sub: usize, consumer_sub: usize) -> usize {
    role_barrier_region(stages, producer_sub, consumer_sub) + stages * SLOT_WORDS * 4
}

/// Dynamic shared memory of an epilogue kernel.
pub const fn epilogue_smem_bytes(stages: usize) -> usize {
    barrier_region(stages) + stages * EPI_ROW_BYTES
}

/// The `RolePipeline` kernels (`role_s{stages}_p{producer sub-stages}_c{consumer sub-stages}`):
/// one producer warp, one consumer warp per consumer sub-stage.
#[macro_export]
macro_rules! role_kernels {
    ($m:ident) => {
        $m!(1, 1, 1);
        $m!(2, 1, 1);
        $m!(4, 1, 1);
        $m!(1, 1, 2);
        $m!(2, 1, 2);
        $m!(4, 1, 2);
        $m!(1, 2, 4);
        $m!(2, 2, 4);
        $m!(4, 2, 4);
    };
}

/// The CTA-pair `RolePipeline` kernels (`CTA_GROUP = 2`): `(stages, producers)`, where
/// `leader` has only the leader CTA's warp produce (into both CTAs' slots; `role_pair_s{stages}`)
/// and `both` has the producer warp of each CTA fill its own CTA's slot
/// (`role_pair_both_s{stages}`): the odd CTA's producer then waits on its own consumer barriers,
/// which only the both-CTA release keeps moving (before API v2 it hung from lap 2).
#[macro_export]
macro_rules! role_pair_kernels {
    ($m:ident) => {
        $m!(2, leader);
        $m!(4, leader);
        $m!(2, both);
        $m!(4, both);
    };
}

/// The export name of a CTA-pair kernel (see [`role_pair_kernels!`]).
#[macro_export]
macro_rules! role_pair_kernel_name {
    ($s:literal, leader) => {
        concat!("role_pair_s", stringify!($s))
    };
    ($s:literal, both) => {
        concat!("role_pair_both_s", stringify!($s))
    };
}

/// The one-sided CTA-pair `RolePipeline` kernels: `(stages, producing CTA, producer sub-stages,
/// consumer sub-stages)`. Only the `even` (rank 0) or the `odd` (rank 1) CTA of each pair runs a
/// producer, which fills the slots of both CTAs; each CTA runs one consumer warp per consumer
/// sub-stage. The bundle runs them under compute-sanitizer's synccheck, which reports a barrier
/// whose phases complete without a wait.
#[macro_export]
macro_rules! role_pair_one_sided_kernels {
    ($m:ident) => {
        $m!(2, even, 1, 1);
        $m!(4, odd, 1, 1);
        $m!(2, odd, 2, 2);
        $m!(4, even, 2, 2);
    };
}

/// The export name of a one-sided CTA-pair kernel (see [`role_pair_one_sided_kernels!`]).
#[macro_export]
macro_rules! role_pair_one_sided_kernel_name {
    ($s:literal, $who:ident, $ps:tt, $cs:tt) => {
        concat!(
            "role_pair_",
            stringify!($who),
            "_s",
            stringify!($s),
            "_p",
            stringify!($ps),
            "_c",
            stringify!($cs)
        )
    };
}

/// The cluster rank of a one-sided pair's producing CTA.
#[macro_export]
macro_rules! pair_producer_rank {
    (even) => {
        0
    };
    (odd) => {
        1
    };
}

/// Whether the CTA of cluster rank `rank` runs a producer in the CTA-pair kernel `kernel`: both
/// CTAs in `role_pair_both_*`, the odd one in `role_pair_odd_*`, the even one otherwise.
pub fn pair_cta_produces(kernel: &str, rank: u32) -> bool {
    if kernel.starts_with("role_pair_both") {
        true
    } else if kernel.starts_with("role_pair_odd") {
        rank == 1
    } else {
        rank == 0
    }
}

/// The `EpiLoadPipeline` kernels (`epilogue_s{stages}`).
#[macro_export]
macro_rules! epilogue_kernels {
    ($m:ident) => {
        $m!(2);
        $m!(3);
        $m!(4);
    };
}

/// The cycle benchmarks of `cargo xtask bench-nvidia`: one row per kernel, which the kernels crate
/// (feature `bench`, `tests/kernels/src/bench.rs`) defines and the harness's `pipeline-bench`
/// launches and labels. Each Rust kernel exists in the loop shapes `_llvm`, `_flat` and `_x4`
/// (see `repeat` in the kernels); its CUDA C++ twin in `tests/bench/bench.cu`, named by
/// [`bench_twin_name!`], in `_flat` and `_x4`. Backends: `mbar` (`NvidiaMbarBackend`), `counter`
/// (`AmdCounterBackend` compiled for nvptx).
///
/// Calls, for each row, one of
/// - `$m!(roundtrip, backend, wait, "what");`: thread 0 produces, thread 32 consumes through one
///   stage; `wait` is `wait` (`wait_*`), `ticks` (with a suspend-time hint) or `poll`
///   (`try_wait_*` polling); `"what"` labels the row in the tables;
/// - `$m!(cluster_roundtrip, "what");`: the remote-arrive round trip in a cluster of 2;
/// - `$m!(ring, backend, stages, consumer warps, release);`: one producer warp and the consumer
///   warps, where only lane 0 of each warp takes part; `release` is `warp` (lane 0 of each warp
///   arrives) or `thread` (every lane arrives);
/// - `$m!(elect, stages, consumer warps, release, api);`: every lane waits, lane 0 arrives
///   (consumers: per `warp`, or every `thread`), through the `api` `handles`, `scopes` or `direct`
///   (mbarrier backend).
///
/// The order is the kernels' order in the PTX; the harness prints the elected-lane rows grouped
/// by `release` first.
#[macro_export]
macro_rules! bench_kernels {
    ($m:ident) => {
        $m!(roundtrip, mbar, wait, "round trip, 1 stage (cycles)");
        $m!(roundtrip, mbar, ticks, "round trip, ticks hint 1000 ns");
        $m!(roundtrip, mbar, poll, "round trip, try-wait polling");
        $m!(roundtrip, counter, wait, "round trip, counter backend");
        $m!(cluster_roundtrip, "cluster of 2, remote-arrive round trip");
        $m!(ring, mbar, 2, 1, warp);
        $m!(ring, mbar, 4, 1, warp);
        $m!(ring, mbar, 8, 1, warp);
        $m!(ring, mbar, 2, 4, warp);
        $m!(ring, mbar, 4, 4, warp);
        $m!(ring, mbar, 8, 4, warp);
        $m!(ring, mbar, 2, 1, thread);
        $m!(ring, mbar, 4, 1, thread);
        $m!(ring, mbar, 8, 1, thread);
        $m!(ring, mbar, 2, 4, thread);
        $m!(ring, mbar, 4, 4, thread);
        $m!(ring, mbar, 8, 4, thread);
        $m!(ring, counter, 4, 1, warp);
        $m!(ring, counter, 4, 4, warp);
        $m!(ring, counter, 4, 1, thread);
        $m!(ring, counter, 4, 4, thread);
        // Elected-lane rings: (stages, consumer warps), each per warp and per thread, through
        // each API.
        $crate::bench_kernels!(@elect $m, 1, 1);
        $crate::bench_kernels!(@elect $m, 2, 1);
        $crate::bench_kernels!(@elect $m, 4, 1);
        $crate::bench_kernels!(@elect $m, 8, 1);
        $crate::bench_kernels!(@elect $m, 1, 4);
        $crate::bench_kernels!(@elect $m, 2, 4);
        $crate::bench_kernels!(@elect $m, 4, 4);
        $crate::bench_kernels!(@elect $m, 8, 4);
    };
    (@elect $m:ident, $s:literal, $w:literal) => {
        $crate::bench_kernels!(@elect $m, $s, $w, warp);
        $crate::bench_kernels!(@elect $m, $s, $w, thread);
    };
    (@elect $m:ident, $s:literal, $w:literal, $release:ident) => {
        $m!(elect, $s, $w, $release, handles);
        $m!(elect, $s, $w, $release, scopes);
        $m!(elect, $s, $w, $release, direct);
    };
}

/// A cycle benchmark's Rust name without its loop-shape suffix, from its row of
/// [`bench_kernels!`] (the `"what"` label left out), as a `&'static str`.
#[macro_export]
macro_rules! bench_kernel_name {
    (roundtrip, $b:ident, wait) => {
        concat!("bench_roundtrip_", stringify!($b))
    };
    (roundtrip, $b:ident, $wait:ident) => {
        concat!("bench_roundtrip_", stringify!($b), "_", stringify!($wait))
    };
    (cluster_roundtrip) => {
        "bench_cluster_roundtrip"
    };
    (ring, $b:ident, $s:literal, $w:literal, $release:ident) => {
        concat!(
            "bench_ring_",
            stringify!($b),
            "_s",
            stringify!($s),
            "_c",
            stringify!($w),
            "_",
            stringify!($release)
        )
    };
    (elect, $s:literal, $w:literal, $release:ident, $api:ident) => {
        concat!(
            $crate::bench_twin_name!(elect, $s, $w, $release, $api),
            "_",
            stringify!($api)
        )
    };
}

/// The name of a cycle benchmark's C++ twin (`tests/bench/bench.cu`) without its loop-shape
/// suffix: the Rust name ([`bench_kernel_name!`]), but one twin serves the three APIs of an
/// elected-lane ring (`bench_elect_s{stages}_c{warps}_{release}`).
#[macro_export]
macro_rules! bench_twin_name {
    (elect, $s:literal, $w:literal, $release:ident, $api:ident) => {
        concat!(
            "bench_elect_s",
            stringify!($s),
            "_c",
            stringify!($w),
            "_",
            stringify!($release)
        )
    };
    ($($row:tt)*) => {
        $crate::bench_kernel_name!($($row)*)
    };
}

/// The streaming benchmarks of `cargo xtask bench-nvidia` (kernels and C++ twins of the same
/// name, `STREAM` in `tests/bench/bench.cu`): a copy through an `S`-stage ring of `KIB` KiB slots,
/// one loader lane and `W` storer lanes, each storer keeping `PENDING` stores in flight past the
/// one it releases; `mode` assigns the chunks to CTAs (`contig`: a contiguous range per CTA,
/// `interleaved`: every grid-th chunk, `dynamic`: from a global counter); the harness launches
/// `CTAs per SM` CTAs on each SM. The first nine rows are the original shape.
///
/// Calls `$m!(kernel, S, KIB, PENDING, mode, W, CTAs per SM);` for each.
#[macro_export]
macro_rules! bench_stream_kernels {
    ($m:ident) => {
        $m!(bench_stream_s2_k8, 2, 8, 1, contig, 1, 1);
        $m!(bench_stream_s2_k16, 2, 16, 1, contig, 1, 1);
        $m!(bench_stream_s2_k32, 2, 32, 1, contig, 1, 1);
        $m!(bench_stream_s2_k64, 2, 64, 1, contig, 1, 1);
        $m!(bench_stream_s4_k8, 4, 8, 1, contig, 1, 1);
        $m!(bench_stream_s4_k16, 4, 16, 1, contig, 1, 1);
        $m!(bench_stream_s4_k32, 4, 32, 1, contig, 1, 1);
        $m!(bench_stream_s8_k8, 8, 8, 1, contig, 1, 1);
        $m!(bench_stream_s8_k16, 8, 16, 1, contig, 1, 1);
        $m!(bench_stream_s4_k32_p2, 4, 32, 2, contig, 1, 1);
        $m!(bench_stream_s4_k32_p3, 4, 32, 3, contig, 1, 1);
        $m!(bench_stream_s8_k16_p3, 8, 16, 3, contig, 1, 1);
        $m!(bench_stream_s8_k16_p6, 8, 16, 6, contig, 1, 1);
        $m!(bench_stream_s3_k64_p1, 3, 64, 1, contig, 1, 1);
        $m!(bench_stream_s3_k64_p2, 3, 64, 2, contig, 1, 1);
        $m!(bench_stream_s6_k32_p2, 6, 32, 2, contig, 1, 1);
        $m!(bench_stream_s6_k32_p4, 6, 32, 4, contig, 1, 1);
        $m!(bench_stream_s7_k32_p3, 7, 32, 3, contig, 1, 1);
        $m!(bench_stream_s14_k16_p6, 14, 16, 6, contig, 1, 1);
        $m!(bench_stream_s4_k32_p1_i, 4, 32, 1, interleaved, 1, 1);
        $m!(bench_stream_s6_k32_p2_i, 6, 32, 2, interleaved, 1, 1);
        $m!(bench_stream_s8_k16_p3_i, 8, 16, 3, interleaved, 1, 1);
        $m!(bench_stream_s3_k64_p1_i, 3, 64, 1, interleaved, 1, 1);
        $m!(bench_stream_s4_k32_p1_d, 4, 32, 1, dynamic, 1, 1);
        $m!(bench_stream_s6_k32_p2_d, 6, 32, 2, dynamic, 1, 1);
        $m!(bench_stream_s8_k16_p3_d, 8, 16, 3, dynamic, 1, 1);
        $m!(bench_stream_s3_k64_p1_d, 3, 64, 1, dynamic, 1, 1);
        $m!(bench_stream_s7_k32_p3_d, 7, 32, 3, dynamic, 1, 1);
        $m!(bench_stream_s3_k32_p1, 3, 32, 1, contig, 1, 2);
        $m!(bench_stream_s3_k32_p1_i, 3, 32, 1, interleaved, 1, 2);
        $m!(bench_stream_s3_k32_p1_d, 3, 32, 1, dynamic, 1, 2);
        $m!(bench_stream_s6_k16_p2, 6, 16, 2, contig, 1, 2);
        $m!(bench_stream_s6_k16_p2_d, 6, 16, 2, dynamic, 1, 2);
        $m!(bench_stream_s7_k16_p3_d, 7, 16, 3, dynamic, 1, 2);
        $m!(bench_stream_s4_k16_p2_d, 4, 16, 2, dynamic, 1, 3);
        $m!(bench_stream_s3_k16_p1_d, 3, 16, 1, dynamic, 1, 4);
        $m!(bench_stream_s6_k32_p1_w2, 6, 32, 1, contig, 2, 1);
        $m!(bench_stream_s8_k16_p2_w2, 8, 16, 2, contig, 2, 1);
        $m!(bench_stream_s6_k32_p1_d_w2, 6, 32, 1, dynamic, 2, 1);
        $m!(bench_stream_s8_k16_p1_d_w4, 8, 16, 1, dynamic, 4, 1);
        $m!(bench_stream_s8_k16_p1_d_w2, 8, 16, 1, dynamic, 2, 1);
        $m!(bench_stream_s8_k8_p1_d_w4, 8, 8, 1, dynamic, 4, 1);
        $m!(bench_stream_s12_k16_p2_d_w4, 12, 16, 2, dynamic, 4, 1);
        $m!(bench_stream_s16_k8_p1_d_w4, 16, 8, 1, dynamic, 4, 1);
        $m!(bench_stream_s8_k16_p0_d_w4, 8, 16, 0, dynamic, 4, 1);
        $m!(bench_stream_s4_k16_p1_d_w2, 4, 16, 1, dynamic, 2, 2);
    };
}

/// Where a misuse scenario ([`Misuse`]) is run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sides {
    /// On the device (broken kernels, [`BROKEN`]) and on the host (threads over the host
    /// backends, `tests/host/tests/checked.rs`).
    Both,
    /// On the device only (the scenario's docs say why).
    Device,
    /// On the host only (the scenario's docs say why).
    Host,
}

/// A mistake users make with a pipeline, which must end in a diagnosis instead of a hang (checked
/// builds), and that diagnosis: written once, checked on the device by the harness
/// (`tests/harness/src/broken.rs`, each kernel of [`BROKEN`]) and on the host by
/// `tests/host/tests/checked.rs`. Some record of the run must carry every part of it.
#[derive(Clone, Copy, Debug)]
pub struct Misuse {
    /// The scenario's name (the device kernels are `broken_{name}_{backend}`).
    pub name: &'static str,
    /// What goes wrong, in words.
    pub mistake: &'static str,
    /// Where it runs.
    pub sides: Sides,
    /// The pipeline label given at init (0: none, as `RolePipeline`'s).
    pub label: u32,
    /// The wait budget the device kernels give at init, in microseconds (0: the library's
    /// default); the host tests give every pipeline a budget of their own.
    pub budget_us: u32,
    /// The side whose call reports it: `"producer"` or `"consumer"`.
    pub role: &'static str,
    /// The library call that reports it (`Call::name`).
    pub call: &'static str,
    /// The fault, where the mistake fixes it (`None`: a spent budget or a wrong count, whichever
    /// the timing gives).
    pub fault: Option<Fault>,
    /// The diagnosis.
    pub verdict: Verdict,
    /// The stage and lap of the call, where the mistake fixes them.
    pub stage_lap: Option<(u32, u32)>,
    /// Further words the record must say (its explanation of the verdict).
    pub says: &'static [&'static str],
    /// Whether the record names the line of the scenario's own call (false for a report made
    /// where a half goes away: it names the library's line).
    pub at_call: bool,
}

/// The misuse scenarios, by name.
pub mod misuse {
    use super::{Fault, Misuse, Sides, Verdict};

    /// The consumer takes 2 items and never releases them.
    pub const NEVER_RELEASE: Misuse = Misuse {
        name: "never_release",
        mistake: "the consumer never releases (release_without_signal, no arrive)",
        sides: Sides::Both,
        label: 11,
        budget_us: 0,
        role: "producer",
        call: "produce",
        fault: Some(Fault::Timeout),
        verdict: Verdict::NoArrivals,
        stage_lap: Some((0, 2)),
        says: &["0 of 1 consumer arrivals"],
        at_call: true,
    };

    /// The producer arrives twice per stage.
    pub const DOUBLE_ARRIVE: Misuse = Misuse {
        name: "double_arrive",
        mistake: "the producer arrives twice per stage (arrive() then release())",
        sides: Sides::Both,
        label: 21,
        budget_us: 0,
        role: "consumer",
        call: "consume",
        fault: None,
        verdict: Verdict::ExtraArrivals,
        stage_lap: None,
        says: &["arrivals more than this lap completes with"],
        at_call: true,
    };

    /// The consumer starts again at lap 0.
    pub const WRONG_LAP: Misuse = Misuse {
        name: "wrong_lap",
        mistake: "the consumer re-creates its pipeline value mid-kernel, so it starts again at lap 0",
        sides: Sides::Both,
        label: 31,
        budget_us: 0,
        role: "consumer",
        call: "consume",
        fault: Some(Fault::WrongCount),
        verdict: Verdict::ExtraArrivals,
        stage_lap: Some((0, 0)),
        says: &["lap is behind the barrier's"],
        at_call: true,
    };

    /// Half the consumers forget to release.
    pub const HALF_RELEASE: Misuse = Misuse {
        name: "half_release",
        mistake: "arrive count 4 (one lane per consumer warp), but on a branch only 2 of the 4 warps release",
        sides: Sides::Both,
        label: 41,
        budget_us: 0,
        role: "producer",
        call: "produce",
        fault: Some(Fault::Timeout),
        verdict: Verdict::MissingArrivals,
        stage_lap: Some((1, 2)),
        says: &[
            "2 of 4 consumer arrivals",
            "2 arriving thread(s) did not arrive",
        ],
        at_call: true,
    };

    /// The two sides' trip counts differ (a budget of 20 ms on the device).
    pub const TRIP_COUNTS: Misuse = Misuse {
        name: "trip_counts",
        mistake: "the producer makes 5 items, the consumer expects 6",
        sides: Sides::Both,
        label: 51,
        budget_us: 20_000,
        role: "consumer",
        call: "consume",
        fault: Some(Fault::Timeout),
        verdict: Verdict::NoArrivals,
        stage_lap: Some((1, 2)),
        says: &["0 of 1 producer arrivals"],
        at_call: true,
    };

    /// The consumer holds both stages of the 2-stage ring and acquires a third (three at once:
    /// C = 3 with P = 1 needs STAGES >= 3); the producer, which needs one of them back, blocks
    /// later (it waits one budget first, so that the consumer's record comes first on the
    /// device, where the first record ends the kernel).
    pub const HOLD_TOO_MANY: Misuse = Misuse {
        name: "hold_too_many",
        mistake: "the consumer holds all the ring's stages and acquires one more",
        sides: Sides::Both,
        label: 91,
        budget_us: 20_000,
        role: "consumer",
        call: "acquire_consumer",
        fault: Some(Fault::Timeout),
        verdict: Verdict::NoArrivals,
        stage_lap: Some((0, 1)),
        says: &[
            "holds 2 of the ring's 2 stages while it waits for another",
            "STAGES >= P + C - 1",
        ],
        at_call: true,
    };

    /// Device only: the host models have no clusters.
    pub const CLUSTER_PEER_EXITS: Misuse = Misuse {
        name: "cluster_peer_exits",
        mistake: "in a cluster of 2, the peer CTA's consumer exits early without releasing its last stage (remote arrivals count on CTA 0's barrier)",
        sides: Sides::Device,
        label: 61,
        budget_us: 0,
        role: "producer",
        call: "acquire_producer",
        fault: Some(Fault::Timeout),
        verdict: Verdict::MissingArrivals,
        stage_lap: Some((0, 4)),
        says: &["1 of 2 consumer arrivals"],
        at_call: true,
    };

    /// A consumer calls a producer method.
    pub const WRONG_ROLE: Misuse = Misuse {
        name: "wrong_role",
        mistake: "the consumer calls producer_signal where consumer_signal was meant",
        sides: Sides::Both,
        label: 71,
        budget_us: 0,
        role: "producer",
        call: "producer_signal",
        fault: Some(Fault::WrongRole),
        verdict: Verdict::WrongRole,
        stage_lap: Some((0, 1)),
        says: &["used on the consumer side before"],
        at_call: true,
    };

    /// Device only: `RolePipeline` is NVIDIA-only (mbarrier sub-stages), with no host model.
    pub const ROLE_NEVER_RELEASE: Misuse = Misuse {
        name: "role_never_release",
        mistake: "RolePipeline: the consumer never releases",
        sides: Sides::Device,
        label: 0,
        budget_us: 0,
        role: "producer",
        call: "RolePipeline::acquire",
        fault: Some(Fault::Timeout),
        verdict: Verdict::NotTracked,
        stage_lap: Some((0, 2)),
        says: &["arrivals are not counted for RolePipeline barriers"],
        at_call: true,
    };

    /// Device only (as [`ROLE_NEVER_RELEASE`]): a one-sided `RolePipeline` CTA pair whose
    /// `new_pair` names only the even CTA for producers, and the odd CTA's producer acquires.
    pub const ROLE_NOT_IN_PAIR: Misuse = Misuse {
        name: "role_not_in_pair",
        mistake: "RolePipeline CTA pair: a producer acquires in a CTA new_pair does not name for producers",
        sides: Sides::Device,
        label: 0,
        budget_us: 0,
        role: "producer",
        call: "RolePipeline::acquire",
        fault: Some(Fault::NotInPair),
        verdict: Verdict::NotInPair,
        stage_lap: Some((0, 1)),
        says: &["(cluster rank 1) does not run the producer role of its CTA pair"],
        at_call: true,
    };

    /// Host only: the half reports a forgotten stage when it goes out of scope, which a device
    /// kernel of this suite does not do yet (no broken kernel is written for it).
    pub const FORGOTTEN_STAGE: Misuse = Misuse {
        name: "forgotten_stage",
        mistake: "the consumer forgets a stage handle (core::mem::forget)",
        sides: Sides::Host,
        label: 81,
        budget_us: 0,
        role: "consumer",
        call: "(end of the pipeline's scope)",
        fault: Some(Fault::StageNotReleased),
        verdict: Verdict::StageNotReleased,
        stage_lap: None,
        says: &["never released"],
        at_call: false,
    };
}

/// Every misuse scenario.
pub const MISUSES: &[Misuse] = &[
    misuse::NEVER_RELEASE,
    misuse::DOUBLE_ARRIVE,
    misuse::WRONG_LAP,
    misuse::HALF_RELEASE,
    misuse::TRIP_COUNTS,
    misuse::HOLD_TOO_MANY,
    misuse::CLUSTER_PEER_EXITS,
    misuse::WRONG_ROLE,
    misuse::ROLE_NEVER_RELEASE,
    misuse::ROLE_NOT_IN_PAIR,
    misuse::FORGOTTEN_STAGE,
];

#[cfg(any(feature = "std", test))]
impl Misuse {
    /// The texts the record's plain words (its `Display`: the device's printed record, the host's
    /// panic message) must all contain: the label, the side and its call, the fault's header,
    /// the stage and lap, and [`says`](Self::says).
    pub fn expected_texts(&self) -> std::vec::Vec<std::string::String> {
        use std::string::ToString;
        let signal = if self.role == "producer" {
            "empty"
        } else {
            "full"
        };
        let mut texts = std::vec![
            std::format!("pipeline {} (", self.label),
            std::format!("{} in `{}`", self.role, self.call),
        ];
        if let Some(fault) = self.fault {
            // The library's own header for the fault: the words before the first colon of a
            // record of that fault.
            let record = gpu_pipeline::checked::HangRecord {
                fault: fault as u32,
                ..gpu_pipeline::checked::HangRecord::EMPTY
            }
            .to_string();
            let header = record.split_once(':').map_or(record.as_str(), |(h, _)| h);
            texts.push(std::format!("{header}:"));
        }
        if let Some((stage, lap)) = self.stage_lap {
            texts.push(std::format!("{signal}[{stage}]"));
            texts.push(std::format!(" for lap {lap};"));
        }
        texts.extend(self.says.iter().map(|s| s.to_string()));
        texts
    }

    /// The expected texts ([`expected_texts`](Self::expected_texts)) that `record` lacks: empty
    /// when it says everything.
    pub fn missing_from(&self, record: &str) -> std::vec::Vec<std::string::String> {
        self.expected_texts()
            .into_iter()
            .filter(|text| !record.contains(text.as_str()))
            .collect()
    }
}

/// A broken kernel of checked builds (`tests/kernels/src/broken.rs`): one [`Misuse`] on one
/// backend, which must end within a second with the misuse's diagnosis, never hang.
#[derive(Clone, Copy, Debug)]
pub struct Broken {
    /// The kernel's name (no parameters).
    pub name: &'static str,
    /// The scenario it runs (its label and budget too).
    pub misuse: &'static Misuse,
    /// Threads per block.
    pub threads: u32,
    /// CTAs per cluster (1: no cluster); the grid is one cluster.
    pub cluster: u32,
}

/// Dynamic shared memory of every broken kernel: barriers only (checked storage of 4 stages or
/// fewer).
pub const BROKEN_SMEM_BYTES: u32 = 256;

/// The broken kernels: every scenario of [`MISUSES`] that runs on the device, on the mbarrier
/// backend (`_mbar`) and, where the mistake is the same there, on the counter backend compiled for
/// nvptx (`_counter`).
pub const BROKEN: &[Broken] = &[
    broken("broken_never_release_mbar", &misuse::NEVER_RELEASE, 64, 1),
    broken(
        "broken_never_release_counter",
        &misuse::NEVER_RELEASE,
        64,
        1,
    ),
    broken("broken_double_arrive_mbar", &misuse::DOUBLE_ARRIVE, 64, 1),
    broken(
        "broken_double_arrive_counter",
        &misuse::DOUBLE_ARRIVE,
        64,
        1,
    ),
    broken("broken_wrong_lap_mbar", &misuse::WRONG_LAP, 64, 1),
    broken("broken_wrong_lap_counter", &misuse::WRONG_LAP, 64, 1),
    broken("broken_half_release_mbar", &misuse::HALF_RELEASE, 160, 1),
    broken("broken_half_release_counter", &misuse::HALF_RELEASE, 160, 1),
    broken("broken_trip_counts_mbar", &misuse::TRIP_COUNTS, 64, 1),
    broken("broken_trip_counts_counter", &misuse::TRIP_COUNTS, 64, 1),
    broken("broken_hold_too_many_mbar", &misuse::HOLD_TOO_MANY, 64, 1),
    broken(
        "broken_hold_too_many_counter",
        &misuse::HOLD_TOO_MANY,
        64,
        1,
    ),
    broken(
        "broken_cluster_peer_exits",
        &misuse::CLUSTER_PEER_EXITS,
        64,
        2,
    ),
    broken("broken_wrong_role_mbar", &misuse::WRONG_ROLE, 64, 1),
    broken(
        "broken_role_never_release",
        &misuse::ROLE_NEVER_RELEASE,
        64,
        1,
    ),
    broken("broken_role_not_in_pair", &misuse::ROLE_NOT_IN_PAIR, 64, 2),
];

const fn broken(name: &'static str, misuse: &'static Misuse, threads: u32, cluster: u32) -> Broken {
    Broken {
        name,
        misuse,
        threads,
        cluster,
    }
}

#[cfg(test)]
mod tests {
    use super::{BROKEN, MISUSES, Sides};

    /// Every scenario that runs on the device has a broken kernel, and every broken kernel runs
    /// a device scenario, named after it.
    #[test]
    fn the_broken_kernels_are_the_device_scenarios() {
        for m in MISUSES {
            let kernels = BROKEN.iter().filter(|b| b.misuse.name == m.name).count();
            let on_device = m.sides != Sides::Host;
            assert_eq!(
                kernels > 0,
                on_device,
                "{}: {kernels} broken kernel(s)",
                m.name
            );
        }
        for b in BROKEN {
            assert!(
                b.name
                    .starts_with(&*std::format!("broken_{}", b.misuse.name)),
                "{}",
                b.name
            );
            assert!(
                MISUSES.iter().any(|m| m.name == b.misuse.name),
                "{}",
                b.name
            );
        }
    }

    /// The expected texts of a record say its fault in the library's words, and the stage and
    /// lap on the signal the side waits on.
    #[test]
    fn the_fault_header_is_the_librarys() {
        let texts = super::misuse::NEVER_RELEASE.expected_texts();
        assert!(
            texts.contains(&"gpu-pipeline HANG (wait budget spent):".into()),
            "{texts:?}"
        );
        assert!(texts.contains(&"empty[0]".into()), "{texts:?}");
        assert!(texts.contains(&" for lap 2;".into()), "{texts:?}");
    }
}
