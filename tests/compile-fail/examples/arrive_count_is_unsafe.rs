// expect: error[E0133]: call to unsafe function `gpu_pipeline::backend::nvidia::MbarrierRef::<'a, S>::arrive_count` is unsafe and requires unsafe block
//! `arrive_count::<N>` takes N arrivals from the phase's pending count at once: more than are
//! pending (here 3 on a barrier whose phase may have only 1 left) leaves the count outside the
//! range the PTX ISA defines ("Contents of the mbarrier object"), and the H200 faults the kernel.
//! The library cannot know the pending count, so the call is `unsafe` (before, it was safe).
#![no_std]
#![feature(abi_gpu_kernel)]
use compile_fail::pipe;

#[unsafe(no_mangle)]
pub extern "gpu-kernel" fn kernel() {
    let p = unsafe { pipe() };
    p.full_barrier(0).arrive_count::<3>();
}
