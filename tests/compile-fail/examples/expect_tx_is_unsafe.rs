// expect: error[E0133]: call to unsafe function `gpu_pipeline::backend::nvidia::MbarrierRef::<'a, S>::expect_tx` is unsafe and requires unsafe block
//! `expect_tx` adds to the phase's transaction count, whose range the caller must keep: it is
//! `unsafe` (before API v2 it was a safe call).
#![no_std]
#![feature(abi_gpu_kernel)]
use compile_fail::pipe;

#[unsafe(no_mangle)]
pub extern "gpu-kernel" fn kernel() {
    let p = unsafe { pipe() };
    p.full_barrier(0).expect_tx(16);
}
