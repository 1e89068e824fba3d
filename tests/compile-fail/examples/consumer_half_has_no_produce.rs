// expect: error[E0599]: no method named `produce` found for struct `PipelineHalf<4, NvidiaMbarBackend<32, 32>, Consumer>` in the current scope
//! A consumer half has no producer methods: the role is in the type.
#![no_std]
#![feature(abi_gpu_kernel)]
use compile_fail::pipe;

#[unsafe(no_mangle)]
pub unsafe extern "gpu-kernel" fn kernel() {
    let consumer = unsafe { pipe() }.into_consumer();
    consumer.produce(|_| ());
}
