//! Broken kernels of checked builds: each makes one mistake that hangs (or silently corrupts) a
//! pipeline kernel, and must instead end within a second with a record that names it. The
//! scenarios, their labels, budgets and expected diagnoses are `pipeline_suite::MISUSES` (the
//! host tests run the same ones on the host backends); the kernels are `pipeline_suite::BROKEN`,
//! which the harness runs and checks.
//!
//! Every kernel is one block (or one cluster of 2): warp 0 produces, the other warps consume; only
//! lane 0 of each warp takes part (arrive counts count those lanes). The mistakes are written the
//! way users write them: with the safe API, passing every compile-time check.

use gpu_pipeline::{
    AmdCounterBackend, Cluster, ConsumerRole, Diagnostics, NvidiaMbarBackend, PairCtas,
    PipelineBackend, ProducerConsumerPipeline, ProducerRole,
};

use pipeline_suite::Misuse;
use pipeline_suite::misuse::{
    CLUSTER_PEER_EXITS, DOUBLE_ARRIVE, HALF_RELEASE, HOLD_TOO_MANY, NEVER_RELEASE, TRIP_COUNTS,
    WRONG_LAP, WRONG_ROLE,
};

use crate::arch::{WARP, dynamic_smem, sync_cluster, sync_threads, thread_idx};

const STAGES: usize = 2;

/// A 2-stage pipeline over the dynamic shared memory, initialised with the misuse's label and
/// budget (0: the library's default budget) by thread 0, then a block barrier.
#[inline(always)]
fn pipeline<B: PipelineBackend>(misuse: &Misuse) -> ProducerConsumerPipeline<STAGES, B> {
    // SAFETY: the harness launches with `BROKEN_SMEM_BYTES`, more than the checked storage.
    let pipe = unsafe { ProducerConsumerPipeline::<STAGES, B>::new(dynamic_smem().cast()) };
    if thread_idx() == 0 {
        let mut diagnostics = Diagnostics::DEFAULT;
        diagnostics.label = misuse.label;
        if misuse.budget_us != 0 {
            diagnostics.wait_budget_us = misuse.budget_us;
        }
        // SAFETY: one thread, then the block barrier.
        unsafe { pipe.init_with(diagnostics) };
    }
    sync_threads();
    pipe
}

/// The consumer takes 2 items and never releases them (`release_without_signal` with no
/// `arrive`); the producer blocks on `empty[0]` at lap 2.
#[inline(always)]
fn never_release<B: PipelineBackend>(misuse: &Misuse) {
    let tid = thread_idx();
    let pipe = pipeline::<B>(misuse);
    if tid == 0 {
        for _ in 0..8 {
            pipe.produce(|_| {});
        }
    } else if tid == WARP {
        for _ in 0..2 {
            let stage = pipe.acquire_consumer();
            // The mistake: the stage is let go without the consumer's arrival.
            stage.release_without_signal();
        }
    }
}

/// The producer arrives on `full` with `arrive()` and again with `release()`.
#[inline(always)]
fn double_arrive<B: PipelineBackend>(misuse: &Misuse) {
    let tid = thread_idx();
    let pipe = pipeline::<B>(misuse);
    if tid == 0 {
        for _ in 0..8 {
            let stage = pipe.acquire_producer();
            stage.arrive();
            // The mistake: `release` arrives too.
            stage.release();
        }
    } else if tid == WARP {
        for _ in 0..8 {
            pipe.consume(|_| {});
        }
    }
}

/// The consumer takes 3 items, then makes a new pipeline value over the same storage (its cursor
/// starts again at slot 0, lap 0) for 3 more; the barrier is 1 to 2 laps ahead of it.
#[inline(always)]
fn wrong_lap<B: PipelineBackend>(misuse: &Misuse) {
    let tid = thread_idx();
    let pipe = pipeline::<B>(misuse);
    if tid == 0 {
        for _ in 0..6 {
            pipe.produce(|_| {});
        }
    } else if tid == WARP {
        for _ in 0..3 {
            pipe.consume(|_| {});
        }
        // The mistake: a fresh value (for "the next tile") instead of the one that kept the lap.
        // SAFETY: the same storage, initialised above.
        let again = unsafe { ProducerConsumerPipeline::<STAGES, B>::new(dynamic_smem().cast()) };
        for _ in 0..3 {
            again.consume(|_| {});
        }
    }
}

/// Four consumer warps, one arriving lane each (arrive count 4); from item 1 on, warps 3 and 4
/// take a branch that lets the stage go without arriving. The producer blocks on `empty[1]` at
/// lap 2 with 2 of 4 arrivals.
#[inline(always)]
fn half_release<B: PipelineBackend>(misuse: &Misuse) {
    let tid = thread_idx();
    let pipe = pipeline::<B>(misuse);
    if tid == 0 {
        for _ in 0..8 {
            pipe.produce(|_| {});
        }
    } else if tid % WARP == 0 {
        let warp = tid / WARP;
        for item in 0..8 {
            let stage = pipe.acquire_consumer();
            if item >= 1 && warp >= 3 {
                // The mistake: this branch forgets the arrival.
                stage.release_without_signal();
            } else {
                stage.release();
            }
        }
    }
}

/// The producer makes 5 items, the consumer waits for 6 (with the budget of `TRIP_COUNTS`).
#[inline(always)]
fn trip_counts<B: PipelineBackend>(misuse: &Misuse) {
    let tid = thread_idx();
    let pipe = pipeline::<B>(misuse);
    if tid == 0 {
        for _ in 0..5 {
            pipe.produce(|_| {});
        }
    } else if tid == WARP {
        for _ in 0..6 {
            pipe.consume(|_| {});
        }
    }
}

/// The consumer holds both stages and acquires a third; the producer blocks on `empty[0]` at
/// lap 2 one budget later (see `HOLD_TOO_MANY`).
#[inline(always)]
fn hold_too_many<B: PipelineBackend>(misuse: &Misuse) {
    let tid = thread_idx();
    let pipe = pipeline::<B>(misuse);
    if tid == 0 {
        for _ in 0..2 {
            pipe.produce(|_| {});
        }
        // One budget before the blocking acquire: the consumer's record comes first.
        let clock = gpu_pipeline::arch::nvptx::globaltimer;
        let start = clock();
        while clock() - start < u64::from(misuse.budget_us) * 1000 {}
        pipe.produce(|_| {});
    } else if tid == WARP {
        let first = pipe.acquire_consumer();
        let second = pipe.acquire_consumer();
        // The mistake: a third stage while holding both of a 2-stage ring.
        let third = pipe.acquire_consumer();
        first.release();
        second.release();
        third.release();
    }
}

/// The consumer signals with `producer_signal` where `consumer_signal` was meant.
#[inline(always)]
fn wrong_role<B: PipelineBackend>(misuse: &Misuse) {
    let tid = thread_idx();
    let mut pipe = pipeline::<B>(misuse);
    if tid == 0 {
        for _ in 0..8 {
            pipe.produce(|_| {});
        }
    } else if tid == WARP {
        for _ in 0..8 {
            pipe.wait_producer();
            // The mistake: the producer's signal.
            pipe.producer_signal();
            pipe.consumer_step();
        }
    }
}

/// Each row: a broken kernel that runs the misuse's body on the backend.
macro_rules! broken_kernels {
    ($($name:ident: $body:ident, $backend:ty, $misuse:ident;)*) => {$(
        /// A broken kernel (see the module docs and `pipeline_suite::BROKEN`).
        #[unsafe(no_mangle)]
        pub extern "gpu-kernel" fn $name() {
            $body::<$backend>(&$misuse);
        }
    )*};
}

type Mbar<const C: u32> = NvidiaMbarBackend<1, C>;
type Counter<const C: u32> = AmdCounterBackend<1, C>;

broken_kernels! {
    broken_never_release_mbar: never_release, Mbar<1>, NEVER_RELEASE;
    broken_never_release_counter: never_release, Counter<1>, NEVER_RELEASE;
    broken_double_arrive_mbar: double_arrive, Mbar<1>, DOUBLE_ARRIVE;
    broken_double_arrive_counter: double_arrive, Counter<1>, DOUBLE_ARRIVE;
    broken_wrong_lap_mbar: wrong_lap, Mbar<1>, WRONG_LAP;
    broken_wrong_lap_counter: wrong_lap, Counter<1>, WRONG_LAP;
    broken_half_release_mbar: half_release, Mbar<4>, HALF_RELEASE;
    broken_half_release_counter: half_release, Counter<4>, HALF_RELEASE;
    broken_trip_counts_mbar: trip_counts, Mbar<1>, TRIP_COUNTS;
    broken_trip_counts_counter: trip_counts, Counter<1>, TRIP_COUNTS;
    broken_hold_too_many_mbar: hold_too_many, Mbar<1>, HOLD_TOO_MANY;
    broken_hold_too_many_counter: hold_too_many, Counter<1>, HOLD_TOO_MANY;
    broken_wrong_role_mbar: wrong_role, Mbar<1>, WRONG_ROLE;
}

/// A cluster of 2 with a 1-stage ring in CTA 0: its warp 0 produces; lane 0 of warp 1 of *each*
/// CTA consumes (arrive count 2), CTA 1's releasing remotely on CTA 0's `empty` barrier. CTA 0's
/// producer signals CTA 1's `full` barrier remotely. CTA 1's consumer leaves after its third item
/// without releasing it (an early exit on a boundary check), so CTA 0's producer waits on
/// `empty[0]` at lap 4 with 1 of 2 arrivals. With one stage the producer never signals CTA 1
/// after it left.
#[unsafe(no_mangle)]
pub extern "gpu-kernel" fn broken_cluster_peer_exits() {
    type B = NvidiaMbarBackend<1, 2, Cluster>;
    let tid = thread_idx();
    let rank = gpu_pipeline::cluster_cta_rank();
    // SAFETY: the harness launches with `BROKEN_SMEM_BYTES`.
    let pipe = unsafe { ProducerConsumerPipeline::<1, B>::new(dynamic_smem().cast()) };
    if tid == 0 {
        let mut diagnostics = Diagnostics::DEFAULT;
        diagnostics.label = CLUSTER_PEER_EXITS.label;
        // SAFETY: one thread per CTA; the cluster barrier follows.
        unsafe { pipe.init_with(diagnostics) };
    }
    sync_cluster();
    if tid == 0 && rank == 0 {
        for _ in 0..8 {
            let stage = pipe.acquire_producer();
            // SAFETY: CTA 1 is alive: with one stage, this wait needed its release of the
            // previous item, made before it waits for this one.
            unsafe { stage.barrier().arrive_remote(1) };
            stage.release();
        }
    } else if tid == WARP {
        for item in 0..8 {
            if rank == 0 {
                pipe.consume(|_| {});
            } else {
                let stage = pipe.acquire_consumer();
                if item == 2 {
                    // The mistake: an early exit that skips this stage's release.
                    stage.release_without_signal();
                    return;
                }
                // SAFETY: CTA 0 is alive (it is the one that waits).
                unsafe { stage.barrier().arrive_remote(0) };
                stage.release_without_signal();
            }
        }
    }
}

/// `RolePipeline`: the consumer takes 2 stages and never releases them; the producer's `acquire`
/// runs out of budget on stage 0 at lap 2 (role barriers are bounded, not shadowed).
#[unsafe(no_mangle)]
pub extern "gpu-kernel" fn broken_role_never_release() {
    let tid = thread_idx();
    let base = dynamic_smem().cast::<gpu_pipeline::Mbarrier>();
    let consumer_barriers = base.wrapping_add(STAGES);
    if tid == 0 {
        // SAFETY: the harness launches with `BROKEN_SMEM_BYTES`; one thread, then the barrier.
        unsafe { ProducerRole::<STAGES>::new(base, consumer_barriers).init::<1, 1>() };
    }
    sync_threads();
    if tid == 0 {
        // SAFETY: as above.
        let mut producer = unsafe { ProducerRole::<STAGES>::new(base, consumer_barriers) };
        for _ in 0..8 {
            producer.acquire();
            producer.commit();
        }
    } else if tid == WARP {
        // SAFETY: as above.
        let mut consumer = unsafe { ConsumerRole::<STAGES>::new(base, consumer_barriers) };
        for _ in 0..2 {
            consumer.wait();
            // The mistake: a step without `release`.
            consumer.step();
        }
    }
}

/// A one-sided `RolePipeline` CTA pair (cluster of 2): `new_pair` names only the even CTA for
/// producers, so releases reach only the even CTA's consumer barriers; the odd CTA's producer
/// acquires anyway. Its first `acquire` (stage 0, lap 1) stops the kernel with a not-in-pair
/// record, before the wait that could never end (from its second lap).
#[unsafe(no_mangle)]
pub extern "gpu-kernel" fn broken_role_not_in_pair() {
    let tid = thread_idx();
    let rank = gpu_pipeline::cluster_cta_rank();
    let base = dynamic_smem().cast::<gpu_pipeline::Mbarrier>();
    let consumer_barriers = base.wrapping_add(STAGES);
    let pair = |producers| {
        // SAFETY: the harness launches clusters of 2 with `BROKEN_SMEM_BYTES`; both CTAs lay the
        // barriers out alike; thread 0 of each initialises before the cluster barrier.
        unsafe {
            ProducerRole::<STAGES, 1, 1, 2>::new_pair(
                base,
                consumer_barriers,
                producers,
                PairCtas::Both,
            )
        }
    };
    if tid == 0 {
        // SAFETY: one thread per CTA, then the cluster barrier.
        unsafe { pair(PairCtas::Even).init::<1, 2>() };
    }
    sync_cluster();
    if tid == 0 && rank == 1 {
        // The mistake: the odd CTA's producer, which the pair does not name.
        let producer = pair(PairCtas::Even);
        producer.acquire();
    }
    sync_cluster();
}
