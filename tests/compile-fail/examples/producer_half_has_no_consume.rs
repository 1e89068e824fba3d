// expect: error[E0599]: no method named `consume` found for struct `PipelineHalf<4, NvidiaMbarBackend<32, 32>, Producer>` in the current scope
//! A producer half has no consumer methods: the role is in the type.
#![no_std]
#![feature(abi_gpu_kernel)]
use compile_fail::pipe;

#[unsafe(no_mangle)]
pub unsafe extern "gpu-kernel" fn kernel() {
    let (producer, _consumer) = unsafe { pipe() }.split();
    producer.consume(|_| ());
}
