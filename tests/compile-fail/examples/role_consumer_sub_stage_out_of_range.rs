// expect: error[E0080]: evaluation panicked: gpu-pipeline: consumer sub-stage index out of range (it must be below CONSUMER_SUB_STAGES)
//! Two consumer sub-stages are numbered 0 and 1.
#![no_std]
#![feature(abi_gpu_kernel)]
use gpu_pipeline::ConsumerRole;

#[unsafe(no_mangle)]
pub unsafe extern "gpu-kernel" fn kernel(bars: *mut gpu_pipeline::Mbarrier) {
    let c = unsafe { ConsumerRole::<2, 1, 2>::new(bars, bars.wrapping_add(2)) };
    c.wait();
    c.release_no_step::<2>();
}
