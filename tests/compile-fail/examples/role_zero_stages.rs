// expect: error[E0080]: evaluation panicked: gpu-pipeline: a pipeline needs at least one stage (STAGES = 0 was given)
#![no_std]
#![feature(abi_gpu_kernel)]
use gpu_pipeline::ProducerRole;

#[unsafe(no_mangle)]
pub unsafe extern "gpu-kernel" fn kernel(bars: *mut gpu_pipeline::Mbarrier) {
    let p = unsafe { ProducerRole::<0>::new(bars, bars) };
    p.acquire();
}
