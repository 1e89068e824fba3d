// expect: error[E0599]: no method named `release_no_step` found for struct `RolePipeline<2,
//! A producer-role pipeline has no consumer methods.
#![no_std]
#![feature(abi_gpu_kernel)]
use gpu_pipeline::ProducerRole;

#[unsafe(no_mangle)]
pub unsafe extern "gpu-kernel" fn kernel(bars: *mut gpu_pipeline::Mbarrier) {
    let p = unsafe { ProducerRole::<2>::new(bars, bars.wrapping_add(2)) };
    p.acquire();
    p.release_no_step::<0>();
}
