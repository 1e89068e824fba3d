// expect: error[E0080]: evaluation panicked: gpu-pipeline: the producer arrive count must be at least 1
#![no_std]
#![feature(abi_gpu_kernel)]
use gpu_pipeline::{NvidiaMbarBackend, ProducerConsumerPipeline};

#[unsafe(no_mangle)]
pub unsafe extern "gpu-kernel" fn kernel(storage: *mut gpu_pipeline::Mbarrier) {
    let p = unsafe { ProducerConsumerPipeline::<2, NvidiaMbarBackend<0, 32>>::new(storage) };
    p.wait_producer();
}
