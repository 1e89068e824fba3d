// expect: pass
//! Every RolePipeline and EpiLoadPipeline method used on its own role compiles.
#![no_std]
#![feature(abi_gpu_kernel)]
use gpu_pipeline::{ConsumerRole, EpiLoadPipeline, ProducerRole};

#[unsafe(no_mangle)]
pub unsafe extern "gpu-kernel" fn kernel(
    bars: *mut gpu_pipeline::Mbarrier,
    src: *const u8,
    out: *mut u32,
) {
    let mut p = unsafe { ProducerRole::<2, 2, 2>::new(bars, bars.wrapping_add(4)) };
    unsafe { p.init::<1, 64>() };
    p.acquire();
    p.acquire_sub::<1>();
    p.commit_sub::<1>();
    let _ = (p.producer_mbar::<1>(), p.consumer_mbar::<1>());
    p.commit();
    let mut c = unsafe { ConsumerRole::<2, 2, 2>::new(bars, bars.wrapping_add(4)) };
    c.wait();
    c.wait_sub::<1>();
    c.release_no_step::<1>();
    c.release_sub::<0>();
    c.release();
    c.step();
    let mut e = unsafe { EpiLoadPipeline::<2>::new(bars.wrapping_add(8)) };
    unsafe { e.init() };
    e.produce_tma(16, |s| unsafe {
        s.barrier().bulk_copy_from_global(bars.cast(), src, 16)
    });
    let x = e.consume(|s| s.index());
    let stage = e.acquire_consumer();
    stage.release();
    unsafe { out.write(x + c.stage() + p.stage()) };
}
