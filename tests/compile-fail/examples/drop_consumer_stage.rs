// expect: error[E0080]: evaluation panicked: gpu-pipeline: a ConsumerStage is dropped without being released
//! An explicit `drop` of a consumer stage is the same mistake.
#![no_std]
#![feature(abi_gpu_kernel)]
use compile_fail::pipe;

#[unsafe(no_mangle)]
pub unsafe extern "gpu-kernel" fn kernel(out: *mut u32) {
    let p = unsafe { pipe() };
    let stage = p.acquire_consumer();
    unsafe { out.write(stage.index()) };
    drop(stage);
}
