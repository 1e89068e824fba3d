// expect: error[E0597]: `p` does not live long enough
//! A stage handle borrows the pipeline value it came from: it cannot outlive it.
#![no_std]
#![feature(abi_gpu_kernel)]
use compile_fail::pipe;

#[unsafe(no_mangle)]
pub unsafe extern "gpu-kernel" fn kernel() {
    let stage = {
        let p = unsafe { pipe() };
        p.acquire_consumer()
    };
    stage.release();
}
