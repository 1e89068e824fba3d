// expect: error[E0080]: evaluation panicked: gpu-pipeline: the producer arrive count is above the backend's maximum
//! mbarrier counts arrivals in 20 bits: 2^20 is one too many.
#![no_std]
#![feature(abi_gpu_kernel)]
use gpu_pipeline::{NvidiaMbarBackend, ProducerConsumerPipeline};

#[unsafe(no_mangle)]
pub unsafe extern "gpu-kernel" fn kernel(storage: *mut gpu_pipeline::Mbarrier) {
    let p =
        unsafe { ProducerConsumerPipeline::<2, NvidiaMbarBackend<{ 1 << 20 }, 32>>::new(storage) };
    p.wait_producer();
}
