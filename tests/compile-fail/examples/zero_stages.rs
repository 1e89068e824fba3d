// expect: error[E0080]: evaluation panicked: gpu-pipeline: a pipeline needs at least one stage (STAGES = 0 was given)
#![no_std]
#![feature(abi_gpu_kernel)]
use gpu_pipeline::{NvidiaMbarBackend, ProducerConsumerPipeline};

#[unsafe(no_mangle)]
pub unsafe extern "gpu-kernel" fn kernel(storage: *mut gpu_pipeline::Mbarrier) {
    let p = unsafe { ProducerConsumerPipeline::<0, NvidiaMbarBackend<1, 1>>::new(storage) };
    p.wait_producer();
}
