// expect: error: gpu-pipeline: nvptx64 builds need sm_90 (Hopper) or newer: add -Ctarget-cpu=sm_90 to RUSTFLAGS
// rustflags:
//! A plain user of the library, built with no flags at all: the default processor of
//! nvptx64-nvidia-cuda (sm_70, PTX ISA 7.0). The library's sm_90 instructions (`mbarrier`
//! try_wait, `expect_tx`, `cp.async.bulk`, `mapa`, cluster barriers) would compile and fail only
//! when the CUDA driver loads the module. The library must refuse the build and name the flag
//! (the PTX ISA 8.0 error is reported beside this one).
#![no_std]
#![feature(abi_gpu_kernel)]
use compile_fail::pipe;

#[unsafe(no_mangle)]
pub unsafe extern "gpu-kernel" fn kernel(out: *mut u32) {
    let p = unsafe { pipe() };
    let x = p.produce(|s| s.index());
    let y = p.consume(|s| s.index());
    unsafe { out.write(x + y) };
}
