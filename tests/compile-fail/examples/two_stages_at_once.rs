// expect: error[E0499]: cannot borrow `p` as mutable more than once at a time
//! A pipeline value hands out one stage at a time: its cursor moves only when the stage is released.
#![no_std]
#![feature(abi_gpu_kernel)]
use compile_fail::pipe;

#[unsafe(no_mangle)]
pub unsafe extern "gpu-kernel" fn kernel() {
    let mut p = unsafe { pipe() };
    let first = p.acquire_consumer();
    let second = p.acquire_consumer();
    first.release();
    second.release();
}
