// expect: error[E0080]: evaluation panicked: gpu-pipeline: a ProducerStage is dropped without being released
//! A producer stage that goes out of scope unreleased would leave the consumers waiting forever.
#![no_std]
#![feature(abi_gpu_kernel)]
use compile_fail::pipe;

#[unsafe(no_mangle)]
pub unsafe extern "gpu-kernel" fn kernel(out: *mut u32) {
    let p = unsafe { pipe() };
    let stage = p.acquire_producer();
    unsafe { out.write(stage.index()) };
}
