// expect: error[E0382]: borrow of moved value: `stage`
//! A released stage cannot be used again: `release` consumes it.
#![no_std]
#![feature(abi_gpu_kernel)]
use compile_fail::pipe;

#[unsafe(no_mangle)]
pub unsafe extern "gpu-kernel" fn kernel(out: *mut u32) {
    let p = unsafe { pipe() };
    let stage = p.acquire_consumer();
    stage.release();
    unsafe { out.write(stage.index()) };
}
