//! Shared set-up of the compile-fail examples: each example is a kernel crate of its own
//! (`examples/*.rs`, built as rlibs so that their kernels are instantiated) whose first line says
//! `// expect: pass` or `// expect: error: <text the compiler must print>`. A second line
//! `// rustflags: <flags>` builds the example with exactly those flags instead of
//! `-Ctarget-cpu=sm_90 -Ctarget-feature=+ptx80` (the `wrong_flags_*` cases).

#![no_std]
#![feature(gpu_intrinsics, gpu_launch_sized_workgroup_mem, core_intrinsics)]
#![allow(internal_features)]

use gpu_pipeline::{NvidiaMbarBackend, ProducerConsumerPipeline};

/// The pipeline every example uses: 4 stages, 32 producer and 32 consumer arrivals.
pub type Pipe = ProducerConsumerPipeline<4, NvidiaMbarBackend<32, 32>>;

/// A pipeline over the dynamic shared memory.
///
/// # Safety
///
/// As [`ProducerConsumerPipeline::new`]; examples are only compiled, never launched.
pub unsafe fn pipe() -> Pipe {
    // SAFETY: forwarded to the caller.
    unsafe { Pipe::new(core::intrinsics::gpu::gpu_launch_sized_workgroup_mem::<u64>().cast()) }
}

/// A value the optimiser cannot see through.
pub fn opaque(x: u32) -> u32 {
    // SAFETY: reads a local.
    unsafe { core::ptr::read_volatile(&x) }
}

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    loop {}
}
