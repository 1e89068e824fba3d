// expect: error[E0080]: evaluation panicked: gpu-pipeline: a ConsumerStage is dropped without being released
//! Releasing on one branch only: the other branch drops the stage (the classic arrive-count hang).
#![no_std]
#![feature(abi_gpu_kernel)]
use compile_fail::{opaque, pipe};

#[unsafe(no_mangle)]
pub unsafe extern "gpu-kernel" fn kernel(out: *mut u32) {
    let p = unsafe { pipe() };
    let stage = p.acquire_consumer();
    if opaque(0) == 0 {
        stage.release();
    }
    unsafe { out.write(1) };
}
