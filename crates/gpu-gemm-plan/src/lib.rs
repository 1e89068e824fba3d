//! The plan of the gpu-gemm kernels: what the kernel crate (`gpu-gemm`, on the device) and its
//! host crate (`gpu-gemm-host`) must agree on, written once and compiled by both.
//!
//! - [`KERNELS`]: the kernel table (and [`STEPS`], the kernels kept to show the design's steps). A row ([`KernelSpec`]) names the entry point and gives its
//!   threads, tile, ring stages, cluster, configuration ([`Config`]), grid kind ([`Grid`]) and
//!   `wgmma` count. The device's entries, the host's `Kernel` enum ([`with_kernels!`]) and the
//!   xtask's PTX checks follow from the rows.
//! - [`Layout`]: a kernel's dynamic shared memory (ring stages, staging buffers, barriers).
//! - The schedule: [`KernelSpec::schedule`] builds the very [`Schedule`] (the toolkit's) that a
//!   kernel's CTAs walk, from which the host takes the grid ([`KernelSpec::grid`]) and the split-K
//!   workspace ([`KernelSpec::workspace_bytes`]); [`KernelSpec::splits`] is the split count.
//!
//! - [`abi`]: the entries' one launch parameter ([`abi::Params`]) and the ABI version.
//! - [`reduce`]: which rows of a tile each part of a cluster-K kernel adds up, and where a
//!   pushed part's rows land (the `ck_push` measurement module).
//!
//! Pure: no `unsafe`, no CUDA call, no target-specific code. The host tests every rule here.
#![no_std]
#![forbid(unsafe_code)]

pub mod abi;
mod choice;
mod config;
mod layout;
pub mod reduce;
mod table;

// Kept for the crates that named it (deprecated since run n20).
#[allow(deprecated)]
pub use choice::HALF_ROWS_K;
pub use choice::{
    MID_HALF_ROWS_K, MID_ROWS_K, SHORT_K, default_kernel, default_kernel_on, fills_waves_better,
    half_row_fits_transposed, half_rows_fit, mid_layer_fits_192, mid_rows_fit,
    second_row_a_quarter, short_k_narrow, short_rows_long_k, wide_layer_fits_192,
};
pub use config::{CONSUMER_REGS, CONSUMER_WARPS, Config, PRODUCER_REGS};
pub use gpu_hopper::schedule::{GROUP, MAX_UNITS, Schedule, Work};
pub use layout::{A_BYTES, BK, BM, BOX_BYTES, Layout, STAGING_BYTES, SWIZZLE, epilogue_quarters};
pub use table::{
    CLUSTER, CLUSTER_K_MIN_BLOCKS, CLUSTER_K_SPLIT_FROM, CLUSTER_SK, ClusterFit, Grid,
    H100_CLUSTER_FIT, H200_CLUSTER_FIT, KERNELS, KernelSpec, LaunchLimit, PER_TILE, PERSISTENT,
    PERSISTENT_FIRST, PERSISTENT_N64, PERSISTENT_N64_PAIR, PERSISTENT_N128, PERSISTENT_N128_SK,
    PERSISTENT_N192, PERSISTENT_N192_SK, PERSISTENT_SK, SINGLE_WARPGROUP, SKINNY16,
    SKINNY16_CLUSTER_K, SKINNY16_CLUSTER_K_S4, SKINNY16_R64, SKINNY16_R64_DEEP, SKINNY16_S4,
    SKINNY32, SKINNY32_CLUSTER_K, SKINNY32_R64, SKINNY32_R64_DEEP, SKINNY32_R64_DEEP_PAIR,
    SKINNY48_R64_DEEP, SKINNY48_R64_DEEP_PAIR, SKINNY64, SKINNY64_CLUSTER_K,
    SKINNY64_CLUSTER_K_PAIR, SKINNY64_R64, SKINNY64_R64_DEEP, SKINNY64_R64_DEEP_PAIR,
    SKINNY80_R64_DEEP, SKINNY80_R64_DEEP_PAIR, SKINNY96_R64_DEEP, SKINNY96_R64_DEEP_PAIR,
    SKINNY128, SKINNY128_CLUSTER_K, SKINNY128_CLUSTER_K_PAIR, SKINNY192, SKINNY192_CLUSTER_K,
    SKINNY192_CLUSTER_K_PAIR, STEPS, Shape, stream_k_workers,
};
