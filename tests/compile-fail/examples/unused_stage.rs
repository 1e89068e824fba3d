// expect: error: unused `gpu_pipeline::stage::Stage` that must be used
//! Ignoring an acquired stage is reported with the reason (`#[must_use]`, denied here).
#![no_std]
#![feature(abi_gpu_kernel)]
#![deny(unused_must_use)]
use compile_fail::pipe;

#[unsafe(no_mangle)]
pub unsafe extern "gpu-kernel" fn kernel() {
    let p = unsafe { pipe() };
    p.acquire_consumer();
}
