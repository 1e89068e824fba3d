// expect: commit_mma` is unsafe and requires unsafe block
// rustflags: -Ctarget-cpu=sm_100a -Ctarget-feature=+ptx86
//! `commit_mma` elects a lane with `elect.sync` over the full warp, undefined from a divergent
//! warp: it is `unsafe` (before API v2 it was a safe call). Built for sm_100a, where it exists.
#![no_std]
#![feature(abi_gpu_kernel)]
use gpu_pipeline::ProducerRole;

#[unsafe(no_mangle)]
pub extern "gpu-kernel" fn kernel(bars: *mut gpu_pipeline::Mbarrier) {
    let p = unsafe { ProducerRole::<2>::new(bars, bars.wrapping_add(2)) };
    p.acquire();
    p.commit_mma();
}
