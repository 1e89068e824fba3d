// expect: error: gpu-pipeline: nvptx64 builds need PTX ISA 8.0 or newer: add -Ctarget-feature=+ptx80 to RUSTFLAGS
// rustflags: -Ctarget-cpu=sm_90
//! A plain user of the library, built for sm_90 without `+ptx80` (so LLVM emits PTX ISA 7.8):
//! the library's PTX ISA 8.0 forms (`.acquire`/`.release` mbarrier waits and arrives,
//! `expect_tx`, `cp.async.bulk`) would compile and fail only when the CUDA driver loads the
//! module. The library must refuse the build and name the flag.
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
