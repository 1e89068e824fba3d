//! The AddressSanitizer control of `cargo xtask test` (`host::asan`): a use-after-free of a
//! pipeline signal, which the library's safe API no longer lets anyone write (a signal borrows the
//! pipeline value it came from; see the compile-fail doc test on `gpu_pipeline::HostMbarrier`).
//! Here it is made with `unsafe`, on purpose, so that the sanitizer run can show it catches exactly
//! this: before API v2 the same access was one safe line (`let bar = pipe.full_barrier(0);`, kept
//! after the storage was freed, then `bar.arrive()`). Run under `-Zsanitizer=address`, this
//! program must fail with `heap-use-after-free`.

use std::mem::MaybeUninit;
use std::sync::atomic::AtomicU64;

use gpu_pipeline::{HostMbarBackend, PipelineBackend, Signal};

type Backend = HostMbarBackend<1, 1>;

fn main() {
    let mut storage: Vec<MaybeUninit<AtomicU64>> = (0..2).map(|_| MaybeUninit::uninit()).collect();
    // SAFETY: two words, initialised by `init` (the contract is broken on purpose below).
    let backend = unsafe { Backend::new::<1>(storage.as_mut_ptr()) };
    // SAFETY: one thread, before any other use.
    unsafe { backend.init::<1>() };
    // SAFETY: stage 0 of 1. The contract of `new` is then broken on purpose: the storage is
    // freed while the backend value still exists.
    let bar = unsafe { backend.full(0) };
    // SAFETY: none; this widens the signal's borrow on purpose (the old API's raw pointer).
    let bar = unsafe {
        std::mem::transmute::<gpu_pipeline::HostMbarrier<'_>, gpu_pipeline::HostMbarrier<'static>>(
            bar,
        )
    };
    drop(storage);
    bar.arrive();
    println!("arrived on freed storage without a report: the sanitizer is not active");
}
