// expect: error[E0599]: no method named `commit` found for struct `RolePipeline<2,
//! A consumer-role pipeline has no producer methods.
#![no_std]
#![feature(abi_gpu_kernel)]
use gpu_pipeline::ConsumerRole;

#[unsafe(no_mangle)]
pub unsafe extern "gpu-kernel" fn kernel(bars: *mut gpu_pipeline::Mbarrier) {
    let mut c = unsafe { ConsumerRole::<2>::new(bars, bars.wrapping_add(2)) };
    c.wait();
    c.commit();
}
