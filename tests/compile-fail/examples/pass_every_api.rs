// expect: pass
//! Every stage-handle and scope path used correctly compiles: proves the harness builds. A handle
//! alive across code that may panic (a bounds check) is fine: with `panic = "abort"` there is no
//! unwinding path that would drop it.
#![no_std]
#![feature(abi_gpu_kernel)]
use compile_fail::{opaque, pipe};

#[unsafe(no_mangle)]
pub unsafe extern "gpu-kernel" fn kernel(out: *mut u32) {
    let p = unsafe { pipe() };
    let stage = p.acquire_producer();
    let table = [1u32, 2, 3, 4];
    let i = table[opaque(stage.index()) as usize];
    stage.release();
    let stage = p.acquire_consumer();
    if opaque(i) == 0 {
        stage.arrive();
    }
    stage.release_without_signal();
    let x = p.produce(|s| s.index());
    let y = p.consume(|s| s.index());
    p.consume_explicit(|s| s.arrive());
    p.produce_explicit(|s| s.arrive());
    unsafe { out.write(x + y) };
}
