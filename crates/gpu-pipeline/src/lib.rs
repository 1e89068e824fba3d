//! Warp-specialized producer/consumer pipelines over shared memory, for GPU kernels written in
//! Rust: NVIDIA (`nvptx64-nvidia-cuda`, `mbarrier`) and AMD (`amdgcn-amd-amdhsa`, LDS counters)
//! behind one API, with host backends that run the same protocol code on CPU threads.
//!
//! Producer warps and consumer warps share a ring of `STAGES` shared-memory slots. Each slot has
//! two signals: **full** (the producer raised it: the slot holds fresh data) and **empty** (the
//! consumers raised it: the slot may be refilled). The protocol, which slot and which lap, is in
//! [`ProducerConsumerPipeline`] and [`Cursor`]; the mechanism is a [`PipelineBackend`].
//!
//! # The protocol
//!
//! ```text
//!        producer  (cursor: slot s, lap q; starts s = 0, q = 1)
//!      ┌───────────────────────────────────────────────────────────┐
//!      │ (1) acquire   wait until empty[s] completed lap q - 1      │
//!      │               fill slot s                                  │
//!      │ (2) commit    arrive on full[s]; step (s + 1, wrap: q + 1) │
//!      └───────────────┬───────────────────────────▲───────────────┘
//!                      │ full[s]                   │ empty[s]
//!      ┌───────────────▼───────────────────────────┴───────────────┐
//!      │ (3) wait      wait until full[s] completed lap p           │
//!      │               read slot s                                  │
//!      │ (4) release   arrive on empty[s]; step (s + 1, wrap: p + 1)│
//!      └───────────────────────────────────────────────────────────┘
//!        consumer  (cursor: slot s, lap p; starts s = 0, p = 0)
//! ```
//!
//! | transition | performed by |
//! |---|---|
//! | (1) acquire | [`ProducerConsumerPipeline::acquire_producer`], [`wait_consumer`](ProducerConsumerPipeline::wait_consumer), entry of [`produce`](ProducerConsumerPipeline::produce) |
//! | (2) commit  | [`ProducerStage::release`], [`producer_signal`](ProducerConsumerPipeline::producer_signal) + [`producer_step`](ProducerConsumerPipeline::producer_step), exit of `produce` |
//! | (3) wait    | [`ProducerConsumerPipeline::acquire_consumer`], [`wait_producer`](ProducerConsumerPipeline::wait_producer), entry of [`consume`](ProducerConsumerPipeline::consume) |
//! | (4) release | [`ConsumerStage::release`], [`consumer_signal`](ProducerConsumerPipeline::consumer_signal) + [`consumer_step`](ProducerConsumerPipeline::consumer_step), exit of `consume` |
//!
//! Because every slot starts empty, the producer starts on lap 1: its first pass waits for
//! "lap 0 released", which holds at once. The roles' start laps are fixed by [`Cursor`]'s type.
//!
//! # The arrival unit
//!
//! An arrive count is **the number of threads that call arrive per phase**, on every backend.
//! A warp whose 32 lanes all release a stage contributes 32; a single elected lane contributes 1.
//! (Mojo's NVIDIA backend counts threads while its AMD backend counts lane 0 of each warp; here
//! the same kernel means the same thing everywhere.) The counts are part of the backend type,
//! checked at compile time: `NvidiaMbarBackend<1, 128>` is one producer thread and four consumer
//! warps.
//!
//! # Stage handles
//!
//! [`ProducerStage`] and [`ConsumerStage`] (one generic [`Stage`]) must be released exactly
//! once, by a consuming `release(self)` or `release_without_signal(self)`. Dropping one without
//! release **does not compile** on the GPU targets (`panic = "abort"`; the error comes at code
//! generation, so `cargo check` does not show it); on the host it panics. `acquire` moves the
//! cursor on, so a side may hold several stages at once. What the types cannot catch, the
//! `checked` build reports at run time: see the table in [`stage`].
//!
//! # Roles in the type
//!
//! [`ProducerConsumerPipeline::split`] gives a [`ProducerHalf`] and a [`ConsumerHalf`]: a thread
//! that holds only its own side's half cannot call the other side's methods (they do not
//! exist on it). The whole pipeline keeps the reference's method names for both sides.
//!
//! # Example
//!
//! A kernel body, generic over the backend; every thread runs it, warp 0 produces, warps 1..=4
//! consume (the full kernel is in `tests/kernels`):
//!
//! ```
//! use gpu_pipeline::{PipelineBackend, ProducerConsumerPipeline};
//!
//! /// `storage` and `slots` live in shared memory; `init` ran on one thread, then a block barrier.
//! unsafe fn ring<B: PipelineBackend>(storage: *mut B::Storage, slots: *mut [u32; 4], warp: u32, lane: u32, items: u32, out: &mut u32) {
//!     let pipe = unsafe { ProducerConsumerPipeline::<4, B>::new(storage) };
//!     if warp == 0 {
//!         for item in 0..items {
//!             pipe.produce(|stage| {
//!                 if lane == 0 { unsafe { (*slots.add(stage.index() as usize))[0] = item } }
//!             });
//!         }
//!     } else {
//!         for _ in 0..items {
//!             let stage = pipe.acquire_consumer();
//!             *out = out.wrapping_add(unsafe { (*slots.add(stage.index() as usize))[0] });
//!             stage.release();
//!         }
//!     }
//! }
//! ```
//!
//! # Targets
//!
//! - `nvptx64-nvidia-cuda`: sm_90 or newer with PTX ISA 8.0 or newer, set with
//!   `RUSTFLAGS="-Ctarget-cpu=sm_90 -Ctarget-feature=+ptx80"` (`-Zbuild-std=core`). Anything less
//!   is a compile error that names the missing flag: the library's PTX (`mbarrier.try_wait`,
//!   `.release`/`.acquire` scoped arrivals and waits, `expect_tx`, `cp.async.bulk`, `mapa`,
//!   clusters) would otherwise compile and be rejected by the CUDA driver only when it loads the
//!   module. [`RolePipeline::commit_mma`] (`tcgen05.commit`) also needs
//!   `-Ctarget-cpu=sm_100a -Ctarget-feature=+ptx86`.
//! - `amdgcn-amd-amdhsa`: with an explicit `-Ctarget-cpu` (gfx90a, gfx942, gfx1100, ...).
//! - The host: the host backends (feature `std`); GPU-only functions exist and panic with their
//!   instruction's name.
//!
//! # Features
//!
//! - `std`: the host backends [`HostMbarBackend`] and [`HostCounterBackend`] (std atomics), and
//!   a run-time drop check that stays quiet while already panicking.
//! - `loom`: model checking of the host backends: built with `--cfg loom` too, they use loom's
//!   atomics and yield to loom in their wait loops. Host only; without it the `loom` crate is
//!   not a dependency at all.
//! - `checked`: hang diagnostics. Every wait is bounded by a time budget and every arrival is
//!   counted in a shadow; a hang or a wrong arrival count stops the kernel with a record that names
//!   the pipeline, role, stage, lap and source line (see [`checked`]). Off by default, and without
//!   it the generated code is unchanged.

#![no_std]
#![cfg_attr(
    any(target_arch = "nvptx64", target_arch = "amdgpu"),
    feature(asm_experimental_arch)
)]
#![cfg_attr(target_arch = "amdgpu", feature(stdarch_amdgpu))]
#![cfg_attr(
    any(target_arch = "nvptx64", target_arch = "amdgpu"),
    feature(link_llvm_intrinsics)
)]
#![cfg_attr(
    any(target_arch = "nvptx64", target_arch = "amdgpu"),
    allow(internal_features)
)]
#![deny(missing_docs)]
#![warn(clippy::undocumented_unsafe_blocks)]

#[cfg(any(feature = "std", test))]
extern crate std;

// The minimum NVIDIA target, for the whole crate. Every NVIDIA leaf in `arch/nvptx.rs` is inline
// PTX, which rustc and LLVM pass through unchecked: built for an older processor or PTX ISA, a
// kernel compiles and the CUDA driver rejects the module only when it loads it
// (`Feature 'mbarrier.init' requires .target sm_80`, `Modifier '.acquire' ... requires PTX ISA
// 8.0`). So the target features are checked here, once, where they are known at compile time.
// rustc reports `target_feature = "sm_90"` for sm_90 and every newer processor (sm_90a, sm_100a,
// ...), and `ptx80` for `+ptx80` and every newer `+ptx*`; `-Ctarget-cpu=sm_90` alone reports no
// `ptx*` feature and LLVM writes `.version 7.8`. Blackwell-only forms (`tcgen05.commit`) have
// their own, narrower check beside them (`role.rs`, `NoTcgen05`).
#[cfg(all(target_arch = "nvptx64", not(target_feature = "sm_90")))]
compile_error!(
    "gpu-pipeline: nvptx64 builds need sm_90 (Hopper) or newer: add -Ctarget-cpu=sm_90 to RUSTFLAGS \
     (RUSTFLAGS=\"-Ctarget-cpu=sm_90 -Ctarget-feature=+ptx80\", or a newer sm_* with a newer +ptx*). \
     The library emits sm_90 instructions (mbarrier.try_wait, expect_tx, cp.async.bulk, mapa, cluster \
     barriers); built for an older processor (the default is sm_70) a kernel would compile, and the \
     CUDA driver would reject its module only when loading it."
);
#[cfg(all(target_arch = "nvptx64", not(target_feature = "ptx80")))]
compile_error!(
    "gpu-pipeline: nvptx64 builds need PTX ISA 8.0 or newer: add -Ctarget-feature=+ptx80 to RUSTFLAGS \
     (RUSTFLAGS=\"-Ctarget-cpu=sm_90 -Ctarget-feature=+ptx80\"). -Ctarget-cpu=sm_90 alone emits PTX \
     ISA 7.8 (.version 7.8), while the library's mbarrier arrives and waits (.release.cta, \
     .acquire.cta), expect_tx, cp.async.bulk and fence.proxy.async need PTX ISA 8.0: a kernel would \
     compile, and the CUDA driver would reject its module only when loading it."
);

pub mod arch;
pub mod backend;
pub mod checked;

pub mod cursor;
mod epilogue;
#[cfg(feature = "checked")]
mod guard;
mod half;
mod pipeline;
#[cfg(any(feature = "std", test))]
mod primitive;
pub mod role;
pub mod stage;
pub mod threshold;

#[cfg(any(target_arch = "nvptx64", target_arch = "amdgpu", feature = "std", test))]
pub use backend::DefaultBackend;
pub use backend::{
    AmdCounterBackend, Cluster, CounterBackend, CounterRef, Cta, L2Policy, MbarScope, Mbarrier,
    MbarrierRef, NvidiaMbarBackend, PipelineBackend, Signal, TensorMap, barrier_bytes,
    barrier_bytes_any_build, barrier_elems, bulk_commit_group, bulk_copy_to_global,
    bulk_wait_group, bulk_wait_group_read, cluster_cta_rank, cluster_sync, elect_one,
    fence_mbarrier_init, fence_proxy_async, lds_data_fence, prefetch_tensor_map, tensor_store,
};
// The toolkit's tensor copies (`gpu-hopper`) check and pad their coordinates with it too.
#[doc(hidden)]
pub use backend::tensor_coords;
#[cfg(any(feature = "std", test))]
pub use backend::{HostCounterBackend, HostCounterSignal, HostMbarBackend, HostMbarrier};
pub use checked::Diagnostics;
pub use cursor::{Consumer, Cursor, Producer, Side};
pub use epilogue::EpiLoadPipeline;
pub use half::{ConsumerHalf, PipelineHalf, ProducerHalf};
pub use pipeline::ProducerConsumerPipeline;
pub use role::{ConsumerRole, PairCtas, ProducerRole, RolePipeline};
pub use stage::{ConsumerStage, ProducerStage, Stage, StageView};

/// Type-level facts of the API, checked when the crate's tests compile.
#[cfg(test)]
mod type_facts {
    use static_assertions::{
        assert_eq_align, assert_eq_size, assert_impl_all, assert_not_impl_any,
    };

    use crate::{
        ConsumerHalf, ConsumerStage, CounterBackend, CounterRef, HostCounterBackend,
        HostMbarBackend, Mbarrier, MbarrierRef, NvidiaMbarBackend, ProducerStage, StageView,
    };

    type Mbar = NvidiaMbarBackend<1, 1>;

    // A stage handle is linear: never copied, never cloned, never sent to another thread.
    assert_not_impl_any!(ProducerStage<'static, 4, Mbar>: Copy, Clone, Send, Sync);
    assert_not_impl_any!(ConsumerStage<'static, 4, CounterBackend<1, 1>>: Copy, Clone, Send, Sync);
    assert_not_impl_any!(ConsumerStage<'static, 4, HostCounterBackend<1, 1>>: Copy, Clone, Send, Sync);
    // A scope's view and a signal are plain copies of an index and an address.
    assert_impl_all!(StageView<'static, Mbar>: Copy);
    assert_impl_all!(MbarrierRef<'static>: Copy);
    assert_impl_all!(CounterRef<'static>: Copy);
    // A half keeps its cursor in a cell: one thread's value, not shared.
    assert_not_impl_any!(ConsumerHalf<4, HostMbarBackend<1, 1>>: Sync);
    // Storage: one mbarrier is 8 bytes, 8-byte aligned (PTX ISA, "mbarrier": an opaque 64-bit
    // object in shared memory, 8-byte aligned); counters are 64-bit.
    assert_eq_size!(Mbarrier, u64);
    assert_eq_align!(Mbarrier, u64);
    assert_eq_size!(
        <CounterBackend<1, 1> as crate::PipelineBackend>::Storage,
        u64
    );
    assert_eq_align!(
        <CounterBackend<1, 1> as crate::PipelineBackend>::Storage,
        u64
    );
}

/// The crate README's Rust example (the repository README's, kept identical by a tidy test of
/// `xtask`), compiled as a doc test so that it cannot drift from the API. The README is inside
/// the package, so the packaged crate's doc tests build too.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeExample;
