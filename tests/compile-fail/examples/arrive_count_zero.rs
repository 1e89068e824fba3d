// expect: error[E0080]: evaluation panicked: gpu-pipeline: MbarrierRef::arrive_count::<COUNT> needs 1 <= COUNT <= 2^20 - 1
//! `mbarrier.arrive` with a count of 0 is undefined: `arrive_count` takes its count as a constant
//! and rejects 0 at compile time (before API v2, `arrive_count(0)` compiled), even inside the
//! `unsafe` block its pending-count precondition needs.
#![no_std]
#![feature(abi_gpu_kernel)]
use compile_fail::pipe;

#[unsafe(no_mangle)]
pub unsafe extern "gpu-kernel" fn kernel() {
    let p = unsafe { pipe() };
    // SAFETY: never launched; the count's range is what the example checks.
    unsafe { p.full_barrier(0).arrive_count::<0>() };
}
