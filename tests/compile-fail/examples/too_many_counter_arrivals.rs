// expect: error[E0080]: evaluation panicked: gpu-pipeline: the consumer arrive count is above the backend's maximum
//! A counter backend's arrivals are threads of one block: at most 1024.
#![no_std]
#![feature(abi_gpu_kernel)]
use gpu_pipeline::{AmdCounterBackend, ProducerConsumerPipeline};

#[unsafe(no_mangle)]
pub unsafe extern "gpu-kernel" fn kernel(storage: *mut core::sync::atomic::AtomicU64) {
    let p = unsafe { ProducerConsumerPipeline::<2, AmdCounterBackend<1, 1025>>::new(storage) };
    p.wait_producer();
}
