// expect: error[E0597]: `p` does not live long enough
//! A barrier handle borrows the pipeline value it came from: it cannot outlive it (before API v2
//! `MbarrierRef` was a plain `Copy` address with no lifetime, and this compiled).
#![no_std]
#![feature(abi_gpu_kernel)]
use compile_fail::pipe;

#[unsafe(no_mangle)]
pub unsafe extern "gpu-kernel" fn kernel() {
    let bar = {
        let p = unsafe { pipe() };
        p.full_barrier(0)
    };
    bar.arrive();
}
