// expect: error[E0080]: evaluation panicked: gpu-pipeline: producer sub-stage index out of range (it must be below PRODUCER_SUB_STAGES)
#![no_std]
#![feature(abi_gpu_kernel)]
use gpu_pipeline::ProducerRole;

#[unsafe(no_mangle)]
pub unsafe extern "gpu-kernel" fn kernel(bars: *mut gpu_pipeline::Mbarrier) {
    let p = unsafe { ProducerRole::<2>::new(bars, bars.wrapping_add(2)) };
    p.acquire();
    p.commit_sub::<1>();
}
