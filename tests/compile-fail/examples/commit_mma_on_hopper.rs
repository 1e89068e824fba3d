// expect: error[E0080]: evaluation panicked: gpu-pipeline: commit_mma emits tcgen05.commit, which exists only on Blackwell sm_100a
//! This crate is built for sm_90: `commit_mma` must not compile, and must say why.
#![no_std]
#![feature(abi_gpu_kernel)]
use gpu_pipeline::ProducerRole;

#[unsafe(no_mangle)]
pub unsafe extern "gpu-kernel" fn kernel(bars: *mut gpu_pipeline::Mbarrier) {
    let p = unsafe { ProducerRole::<2>::new(bars, bars.wrapping_add(2)) };
    p.acquire();
    unsafe { p.commit_mma() };
}
