// expect: error[E0382]: use of moved value: `stage`
//! Releasing twice (an over-arrival) does not compile.
#![no_std]
#![feature(abi_gpu_kernel)]
use compile_fail::pipe;

#[unsafe(no_mangle)]
pub unsafe extern "gpu-kernel" fn kernel() {
    let p = unsafe { pipe() };
    let stage = p.acquire_producer();
    stage.release();
    stage.release();
}
