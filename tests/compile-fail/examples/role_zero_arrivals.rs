// expect: error[E0080]: evaluation panicked: gpu-pipeline: the producer arrive count must be at least 1
#![no_std]
#![feature(abi_gpu_kernel)]
use gpu_pipeline::ProducerRole;

#[unsafe(no_mangle)]
pub unsafe extern "gpu-kernel" fn kernel(bars: *mut gpu_pipeline::Mbarrier) {
    let p = unsafe { ProducerRole::<2>::new(bars, bars.wrapping_add(2)) };
    unsafe { p.init::<0, 32>() };
}
