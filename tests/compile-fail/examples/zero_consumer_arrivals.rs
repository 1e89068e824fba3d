// expect: error[E0080]: evaluation panicked: gpu-pipeline: the consumer arrive count must be at least 1
#![no_std]
#![feature(abi_gpu_kernel)]
use gpu_pipeline::{AmdCounterBackend, ProducerConsumerPipeline};

#[unsafe(no_mangle)]
pub unsafe extern "gpu-kernel" fn kernel(storage: *mut core::sync::atomic::AtomicU64) {
    let p = unsafe { ProducerConsumerPipeline::<2, AmdCounterBackend<1, 0>>::new(storage) };
    p.wait_producer();
}
