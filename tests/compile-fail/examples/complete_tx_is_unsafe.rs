// expect: error[E0133]: call to unsafe function `gpu_pipeline::backend::nvidia::MbarrierRef::<'a, S>::complete_tx` is unsafe and requires unsafe block
//! `complete_tx` can complete a phase whose bytes have not landed: it is `unsafe` (before API v2
//! it was a safe call).
#![no_std]
#![feature(abi_gpu_kernel)]
use compile_fail::pipe;

#[unsafe(no_mangle)]
pub extern "gpu-kernel" fn kernel() {
    let p = unsafe { pipe() };
    p.full_barrier(0).complete_tx(16);
}
