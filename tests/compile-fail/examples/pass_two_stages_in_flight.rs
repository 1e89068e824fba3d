// expect: pass
//! A side may hold several stages at once (the cursor moves at `acquire`): a consumer keeps the
//! previous stage while it takes the next, and releases them in either order. (Before API v2 the
//! handle borrowed the pipeline mutably and this was `error[E0499]`.)
#![no_std]
#![feature(abi_gpu_kernel)]
use compile_fail::pipe;

#[unsafe(no_mangle)]
pub unsafe extern "gpu-kernel" fn kernel(out: *mut u32) {
    let consumer = unsafe { pipe() }.into_consumer();
    let mut previous = consumer.acquire();
    for _ in 0..8 {
        let next = consumer.acquire();
        unsafe { out.write(next.index()) };
        previous.release();
        previous = next;
    }
    previous.release();
    let p = unsafe { pipe() };
    let first = p.acquire_consumer();
    let second = p.acquire_consumer();
    second.release();
    first.release();
}
