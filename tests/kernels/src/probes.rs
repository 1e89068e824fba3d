//! Probe kernels: one barrier operation each, so that the machine code of every operation can be
//! read on its own and compared with the committed snapshots (`tests/snapshots/`, checked by
//! `cargo xtask test`; update with `--bless`). A changed instruction, scope or ordering shows up
//! in review as a snapshot diff.
//!
//! Each probe takes a pointer for results and an input word, so that nothing is folded away.

use gpu_pipeline::{AmdCounterBackend, PipelineBackend, ProducerConsumerPipeline};

use crate::arch::dynamic_smem;

/// The one-stage pipeline every probe uses, over the dynamic shared memory.
#[inline(always)]
fn pipe<B: PipelineBackend>() -> ProducerConsumerPipeline<1, B> {
    // SAFETY: probes are only compiled and disassembled, never launched.
    unsafe { ProducerConsumerPipeline::new(dynamic_smem().cast()) }
}

macro_rules! probe {
    ($name:ident, |$out:ident, $x:ident| $body:expr) => {
        /// A probe kernel (see the module docs).
        #[unsafe(no_mangle)]
        pub unsafe extern "gpu-kernel" fn $name($out: *mut u32, $x: u32) {
            let _ = (&$out, &$x);
            $body;
        }
    };
}

type Counter = AmdCounterBackend<1, 32>;

probe!(probe_counter_init, |out, x| unsafe {
    pipe::<Counter>().init()
});
probe!(probe_counter_arrive, |out, x| pipe::<Counter>()
    .producer_signal());
// Lanes of one wave arriving on two different counters in one call (lane `l` on stage `l & 1`):
// the general arrive path, one aggregated add per distinct counter.
probe!(probe_counter_arrive_split, |out, x| {
    // SAFETY: probes are only compiled and disassembled, never launched.
    let pipe = unsafe { ProducerConsumerPipeline::<2, Counter>::new(dynamic_smem().cast()) };
    pipe.full_barrier(crate::arch::thread_idx() & 1).arrive()
});
probe!(probe_counter_wait, |out, x| pipe::<Counter>()
    .wait_producer());
probe!(probe_counter_wait_ticks, |out, x| pipe::<Counter>()
    .wait_producer_ticks(x));
probe!(probe_counter_try_wait, |out, x| unsafe {
    out.write(u32::from(pipe::<Counter>().try_wait_producer()))
});

#[cfg(target_arch = "nvptx64")]
mod nvidia {
    use gpu_pipeline::{Cluster, NvidiaMbarBackend, fence_proxy_async};

    use super::pipe;
    use crate::arch::dynamic_smem;

    type Mbar = NvidiaMbarBackend<1, 32>;
    type MbarCluster = NvidiaMbarBackend<1, 32, Cluster>;

    probe!(probe_mbar_init, |out, x| unsafe { pipe::<Mbar>().init() });
    probe!(probe_mbar_arrive, |out, x| pipe::<Mbar>().producer_signal());
    probe!(probe_mbar_wait, |out, x| pipe::<Mbar>().wait_producer());
    probe!(probe_mbar_wait_ticks, |out, x| pipe::<Mbar>()
        .wait_producer_ticks(x));
    probe!(probe_mbar_try_wait, |out, x| unsafe {
        out.write(u32::from(pipe::<Mbar>().try_wait_producer()))
    });
    probe!(probe_mbar_test_wait, |out, x| unsafe {
        out.write(u32::from(
            pipe::<Mbar>().full_barrier(0).test_wait_parity(x),
        ))
    });
    probe!(probe_mbar_arrive_count, |out, x| unsafe {
        pipe::<Mbar>().full_barrier(0).arrive_count_unchecked(x)
    });
    probe!(probe_mbar_arrive_expect_tx, |out, x| unsafe {
        pipe::<Mbar>().full_barrier(0).arrive_expect_tx(x)
    });
    probe!(probe_mbar_expect_tx, |out, x| unsafe {
        pipe::<Mbar>().full_barrier(0).expect_tx(x)
    });
    probe!(probe_mbar_complete_tx, |out, x| unsafe {
        pipe::<Mbar>().full_barrier(0).complete_tx(x)
    });
    probe!(probe_mbar_inval, |out, x| unsafe {
        pipe::<Mbar>().full_barrier(0).inval()
    });
    // The bulk store's public wrappers: a shared-to-global copy, its group, and the full wait
    // (`cp.async.bulk.wait_group`, writes performed) beside the read wait.
    probe!(probe_bulk_store, |out, x| unsafe {
        gpu_pipeline::bulk_copy_to_global(out.cast(), dynamic_smem(), 64);
        gpu_pipeline::bulk_commit_group();
        gpu_pipeline::bulk_wait_group_read::<1>();
        gpu_pipeline::bulk_wait_group::<0>();
    });
    // Tensor copies (TMA): a 2D and a 5D load, a 2D multicast load, a 2D store, the map prefetch.
    // The map pointer is the probe's `out` (never launched).
    probe!(probe_tensor_load_2d, |out, x| unsafe {
        pipe::<Mbar>().full_barrier(0).tensor_load::<2>(
            dynamic_smem().add(1024),
            out.cast(),
            [x as i32, 64],
        )
    });
    probe!(probe_tensor_load_5d, |out, x| unsafe {
        pipe::<Mbar>().full_barrier(0).tensor_load::<5>(
            dynamic_smem().add(1024),
            out.cast(),
            [x as i32, 1, 2, 3, 4],
        )
    });
    probe!(probe_tensor_load_hinted, |out, x| unsafe {
        pipe::<Mbar>().full_barrier(0).tensor_load_hinted::<2>(
            dynamic_smem().add(1024),
            out.cast(),
            [x as i32, 64],
            gpu_pipeline::L2Policy::evict_last(),
        )
    });
    probe!(probe_tensor_load_multicast, |out, x| unsafe {
        pipe::<Mbar>().full_barrier(0).tensor_load_multicast::<2>(
            dynamic_smem().add(1024),
            out.cast(),
            [x as i32, 0],
            0b11,
        )
    });
    probe!(probe_tensor_store_2d, |out, x| unsafe {
        gpu_pipeline::prefetch_tensor_map(out.cast());
        gpu_pipeline::tensor_store::<2>(out.cast(), [x as i32, 0], dynamic_smem().add(1024));
        gpu_pipeline::bulk_commit_group();
        gpu_pipeline::bulk_wait_group_read::<0>();
    });
    probe!(probe_mbar_arrive_remote, |out, x| unsafe {
        pipe::<Mbar>().empty_barrier(0).arrive_remote(x)
    });
    probe!(probe_mbar_arrive_remote_cta, |out, x| unsafe {
        pipe::<Mbar>().empty_barrier(0).arrive_remote_cta(x)
    });
    probe!(probe_mbar_wait_cluster, |out, x| pipe::<MbarCluster>()
        .wait_consumer());
    probe!(probe_mbar_wait_cluster_ticks, |out, x| pipe::<MbarCluster>(
    )
    .wait_consumer_ticks(x));
    probe!(probe_fence_proxy_async, |out, x| fence_proxy_async());
    probe!(probe_bulk_copy, |out, x| unsafe {
        pipe::<Mbar>().full_barrier(0).bulk_copy_from_global(
            dynamic_smem().add(128),
            out.cast_const().cast(),
            x,
        )
    });

    /// Blackwell only: `commit_mma` (tcgen05.commit), single CTA and CTA pair with multicast.
    #[cfg(target_feature = "sm_100a")]
    mod blackwell {
        use gpu_pipeline::ProducerRole;

        use crate::arch::dynamic_smem;

        /// A producer role over the dynamic shared memory.
        fn role<const G: u32>() -> ProducerRole<2, 1, 1, G> {
            let base = dynamic_smem().cast::<gpu_pipeline::Mbarrier>();
            // SAFETY: probes are only compiled and assembled, never launched.
            unsafe { ProducerRole::new(base, base.wrapping_add(2)) }
        }

        probe!(probe_commit_mma_cta_group1, |out, x| role::<1>()
            .commit_mma());
        probe!(probe_commit_mma_cta_group2, |out, x| role::<2>()
            .commit_mma());
    }
}
