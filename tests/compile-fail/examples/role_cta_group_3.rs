// expect: error[E0080]: evaluation panicked: gpu-pipeline: CTA_GROUP must be 1 or 2 (tcgen05 cta_group::1 or ::2)
#![no_std]
#![feature(abi_gpu_kernel)]
use gpu_pipeline::ProducerRole;

#[unsafe(no_mangle)]
pub unsafe extern "gpu-kernel" fn kernel(bars: *mut gpu_pipeline::Mbarrier) {
    let p = unsafe { ProducerRole::<2, 1, 1, 3>::new(bars, bars.wrapping_add(2)) };
    p.acquire();
}
