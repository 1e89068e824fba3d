// expect: error[E0133]: call to unsafe function `gpu_pipeline::backend::nvidia::MbarrierRef::<'a, S>::arrive_expect_tx` is unsafe and requires unsafe block
//! `arrive_expect_tx` adds to the phase's transaction count: two calls of 600,000 bytes in one
//! phase take it past 2^20 - 1 (PTX ISA, "Contents of the mbarrier object"), and the H200 faults
//! the kernel, though each call is in range. The library cannot see the phase's total, so the
//! call is `unsafe` (before, it was safe and asserted only its own argument); the safe form is a
//! pipeline's `produce_tma`, for a producer arrive count of 1.
#![no_std]
#![feature(abi_gpu_kernel)]
use compile_fail::pipe;

#[unsafe(no_mangle)]
pub extern "gpu-kernel" fn kernel() {
    let p = unsafe { pipe() };
    p.full_barrier(0).arrive_expect_tx(600_000);
    p.full_barrier(0).arrive_expect_tx(600_000);
}
