//! `RolePipeline` test kernels: stages 1, 2, 4 with sub-stages (1,1), (1,2), (2,4), and CTA pairs.
//!
//! One producer warp fills each slot (in `PRODUCER_SUB_STAGES` parts, each committed on its own
//! barrier); consumer warp `k` (one per consumer sub-stage) waits, copies its share of every part to
//! `output`, checks the header, and releases consumer sub-stage `k`.

use gpu_pipeline::arch::nvptx::{cvta_to_shared, mapa_shared_cluster};
use gpu_pipeline::{ConsumerRole, PairCtas, ProducerRole, cluster_cta_rank};
use pipeline_suite::{HEADER_WORDS, PAYLOAD_WORDS, SLOT_WORDS, role_barrier_region};

use crate::Report;
use crate::arch::{
    WARP, block_idx, dynamic_smem, st_shared_cluster_u32, sync_cluster, sync_threads, thread_idx,
};
use crate::{drain_range, fill_range};

/// The slots of a role kernel, after its barrier region.
#[inline(always)]
fn role_slot(region: usize, stage: u32) -> *mut u32 {
    // SAFETY: the harness launches with `role_smem_bytes`.
    unsafe {
        dynamic_smem()
            .add(region)
            .cast::<u32>()
            .add(stage as usize * SLOT_WORDS)
    }
}

/// The barrier storage of a role kernel: producer barriers, then consumer barriers.
#[inline(always)]
fn role_barriers<const S: usize, const PS: usize>()
-> (*mut gpu_pipeline::Mbarrier, *mut gpu_pipeline::Mbarrier) {
    let base = dynamic_smem().cast::<gpu_pipeline::Mbarrier>();
    (base, base.wrapping_add(S * PS))
}

/// The producer and consumer steps of one role-kernel shape (written by the macro per shape, so
/// that only valid sub-stage indices are instantiated).
struct Shape<Acquire, Publish, Take, Release> {
    /// Producer: wait for the stage's consumer sub-stages.
    acquire: Acquire,
    /// Producer: fill the slot (the callback fills part `p`) and commit; ends stepped.
    publish: Publish,
    /// Consumer: wait for, and drain (the callback drains part `p`), every part.
    take: Take,
    /// Consumer `k`: release its sub-stage; ends stepped.
    release: Release,
}

/// The role test: see the module docs.
#[inline(always)]
unsafe fn role<const S: usize, const PS: usize, const CS: usize, A, P, T, R>(
    input: *const u32,
    output: *mut u32,
    items: u32,
    report: *mut u32,
    shape: Shape<A, P, T, R>,
) where
    A: Fn(&ProducerRole<S, PS, CS>),
    P: Fn(&mut ProducerRole<S, PS, CS>, &dyn Fn(usize)),
    T: Fn(&ConsumerRole<S, PS, CS>, &mut dyn FnMut(usize)),
    R: Fn(&mut ConsumerRole<S, PS, CS>, u32),
{
    let tid = thread_idx();
    let block = block_idx();
    let base = block as usize * items as usize * PAYLOAD_WORDS;
    // SAFETY: the harness sizes the buffers for `grid * items` items.
    let (input, output) = unsafe { (input.add(base), output.add(base)) };
    let report = Report::of_block(report, block);
    let region = role_barrier_region(S, PS, CS);
    let (producer_barriers, consumer_barriers) = role_barriers::<S, PS>();
    let part_words = PAYLOAD_WORDS / PS;
    let lane = tid % WARP;

    if tid == 0 {
        // SAFETY: the barriers start the dynamic shared memory; one thread initialises them, and
        // the block barrier below (reached by every thread, outside the role branches) follows.
        unsafe {
            ProducerRole::<S, PS, CS>::new(producer_barriers, consumer_barriers).init::<32, 32>()
        };
    }
    sync_threads();

    if tid < WARP {
        // SAFETY: the barriers were initialised before the block barrier.
        let mut pipe =
            unsafe { ProducerRole::<S, PS, CS>::new(producer_barriers, consumer_barriers) };
        for item in 0..items {
            (shape.acquire)(&pipe);
            let slot = role_slot(region, pipe.stage());
            let fill_part = |p: usize| {
                // SAFETY: the stage is free (acquired); the part lies inside the slot.
                unsafe {
                    fill_range(
                        slot,
                        input,
                        item,
                        lane,
                        WARP,
                        p * part_words,
                        (p + 1) * part_words,
                    )
                };
            };
            (shape.publish)(&mut pipe, &fill_part);
        }
        if tid == 0 {
            report.producer(pipe.cursor());
        }
    } else {
        // SAFETY: as above.
        let mut pipe =
            unsafe { ConsumerRole::<S, PS, CS>::new(producer_barriers, consumer_barriers) };
        let group = tid / WARP - 1;
        let ctid = tid - WARP;
        let mut errors = 0;
        for item in 0..items {
            let slot = role_slot(region, pipe.stage());
            let mut drain_part = |p: usize| {
                // SAFETY: the part was committed (waited for); it lies inside the slot.
                errors += unsafe {
                    drain_range(
                        slot,
                        output,
                        item,
                        ctid,
                        WARP * CS as u32,
                        p * part_words,
                        (p + 1) * part_words,
                    )
                };
            };
            (shape.take)(&pipe, &mut drain_part);
            (shape.release)(&mut pipe, group);
        }
        report.errors(errors);
        if ctid == 0 {
            report.consumer(pipe.cursor(), items);
        }
    }
    sync_threads();
    if tid == 0 {
        report.done();
    }
}

/// The shapes' producer and consumer steps.
macro_rules! shape {
    // One producer sub-stage, one consumer sub-stage: acquire / commit / wait / release.
    (1, 1) => {
        Shape {
            acquire: |p: &ProducerRole<_, 1, 1>| p.acquire(),
            publish: |p: &mut ProducerRole<_, 1, 1>, fill: &dyn Fn(usize)| {
                fill(0);
                p.commit();
            },
            take: |c: &ConsumerRole<_, 1, 1>, drain: &mut dyn FnMut(usize)| {
                c.wait();
                drain(0);
            },
            release: |c: &mut ConsumerRole<_, 1, 1>, _group: u32| c.release(),
        }
    };
    // Two consumer groups, each releasing its own sub-stage with `release_sub` (arrive + step);
    // the producer polls with `try_acquire`, the consumers wait with a suspend-time hint.
    (1, 2) => {
        Shape {
            acquire: |p: &ProducerRole<_, 1, 2>| while !p.try_acquire() {},
            publish: |p: &mut ProducerRole<_, 1, 2>, fill: &dyn Fn(usize)| {
                fill(0);
                p.commit();
            },
            take: |c: &ConsumerRole<_, 1, 2>, drain: &mut dyn FnMut(usize)| {
                c.wait_ticks(1000);
                drain(0);
            },
            release: |c: &mut ConsumerRole<_, 1, 2>, group: u32| match group {
                0 => c.release_sub::<0>(),
                _ => c.release_sub::<1>(),
            },
        }
    };
    // The producer publishes two parts on two barriers and waits for each of four consumer
    // sub-stages by index (constant and run-time, waiting and polling); consumers wait part by
    // part (polling the first) and release with `release_no_step` + `step`.
    (2, 4) => {
        Shape {
            acquire: |p: &ProducerRole<_, 2, 4>| {
                while !p.try_acquire_sub::<0>() {}
                p.acquire_sub::<1>();
                p.acquire_sub_at(2);
                while !p.try_acquire_sub_at(3) {}
            },
            publish: |p: &mut ProducerRole<_, 2, 4>, fill: &dyn Fn(usize)| {
                fill(0);
                p.commit_sub::<0>();
                fill(1);
                p.commit_sub::<1>();
                p.step();
            },
            take: |c: &ConsumerRole<_, 2, 4>, drain: &mut dyn FnMut(usize)| {
                while !c.try_wait_sub::<0>() {}
                drain(0);
                c.wait_sub_at(1);
                drain(1);
            },
            release: |c: &mut ConsumerRole<_, 2, 4>, group: u32| {
                match group {
                    0 => c.release_no_step::<0>(),
                    1 => c.release_no_step::<1>(),
                    2 => c.release_no_step::<2>(),
                    _ => c.release_no_step::<3>(),
                }
                c.step();
            },
        }
    };
}

macro_rules! role_kernel {
    ($s:literal, $ps:tt, $cs:tt) => {
        const _: () = {
            /// A role test kernel (see `role`).
            #[unsafe(export_name = concat!("role_s", stringify!($s), "_p", stringify!($ps), "_c", stringify!($cs)))]
            pub unsafe extern "gpu-kernel" fn kernel(input: *const u32, output: *mut u32, items: u32, report: *mut u32) {
                // SAFETY: the harness launches (1 + consumer sub-stages) warps with `role_smem_bytes`.
                unsafe { role::<$s, $ps, $cs, _, _, _, _>(input, output, items, report, shape!($ps, $cs)) }
            }
        };
    };
}

pipeline_suite::role_kernels!(role_kernel);

/// CTA pair (`CTA_GROUP = 2`, cluster of 2). Without `BOTH`: warp 0 of the leader CTA (rank 0)
/// produces each item into the slots of both CTAs (its own, and its peer's through distributed
/// shared memory) and `commit`s, which arrives on the producer barriers of both CTAs (32
/// arrivals each). With `BOTH`: warp 0 of each CTA fills its own CTA's slot and commits (64
/// arrivals on each producer barrier), and each producer `acquire`s on its own CTA's consumer
/// barrier. Warp 1 of each CTA waits on its own producer barrier (cluster-scope acquire), copies
/// its slot to its output, and `release`s, which arrives on the consumer barriers of both CTAs
/// (64 arrivals: both CTAs' consumers).
#[inline(always)]
unsafe fn role_pair<const S: usize, const BOTH: bool>(
    input: *const u32,
    output: *mut u32,
    items: u32,
    report: *mut u32,
) {
    let tid = thread_idx();
    let block = block_idx();
    let rank = cluster_cta_rank();
    // SAFETY: the harness sizes `input` per cluster and `output` per CTA.
    let (input, output) = unsafe {
        (
            input.add((block / 2) as usize * items as usize * PAYLOAD_WORDS),
            output.add(block as usize * items as usize * PAYLOAD_WORDS),
        )
    };
    let report = Report::of_block(report, block);
    let region = role_barrier_region(S, 1, 1);
    let (producer_barriers, consumer_barriers) = role_barriers::<S, 1>();
    let lane = tid % WARP;

    if tid == 0 {
        // SAFETY: each CTA's thread 0 initialises its own barriers; the cluster barrier below
        // (reached by every thread of both CTAs) comes before any remote arrival, and the final one
        // keeps both CTAs alive to the end.
        unsafe {
            let pipe = ProducerRole::<S, 1, 1, 2>::new(producer_barriers, consumer_barriers);
            if BOTH {
                pipe.init::<64, 64>();
            } else {
                pipe.init::<32, 64>();
            }
        };
    }
    sync_cluster();

    if tid < WARP {
        // SAFETY: initialised before the cluster barrier.
        let mut pipe =
            unsafe { ProducerRole::<S, 1, 1, 2>::new(producer_barriers, consumer_barriers) };
        if BOTH {
            for item in 0..items {
                pipe.acquire();
                let slot = role_slot(region, pipe.stage());
                let mut j = lane as usize;
                while j < PAYLOAD_WORDS {
                    // SAFETY: the stage is free in this CTA (its consumer barrier counts both
                    // CTAs' releases); only this CTA's slot is written.
                    unsafe {
                        slot.add(HEADER_WORDS + j)
                            .write(input.add(item as usize * PAYLOAD_WORDS + j).read())
                    };
                    j += WARP as usize;
                }
                if lane == 0 {
                    // SAFETY: the header of this CTA's slot.
                    unsafe { slot.write(item) };
                }
                pipe.commit();
            }
            if tid == 0 {
                report.producer(pipe.cursor());
            }
        } else if rank == 0 {
            for item in 0..items {
                pipe.acquire();
                let slot = role_slot(region, pipe.stage());
                let mut j = lane as usize;
                while j < PAYLOAD_WORDS {
                    // SAFETY: the stage is free in both CTAs (the leader's consumer barrier counts
                    // both CTAs' releases); the peer's slot is at the same offset.
                    unsafe {
                        let value = input.add(item as usize * PAYLOAD_WORDS + j).read();
                        let word = slot.add(HEADER_WORDS + j);
                        word.write(value);
                        st_shared_cluster_u32(
                            mapa_shared_cluster(cvta_to_shared(word.cast()), 1),
                            value,
                        );
                    }
                    j += WARP as usize;
                }
                if lane == 0 {
                    // SAFETY: the header of both slots.
                    unsafe {
                        slot.write(item);
                        st_shared_cluster_u32(
                            mapa_shared_cluster(cvta_to_shared(slot.cast()), 1),
                            item,
                        );
                    }
                }
                pipe.commit();
            }
            if tid == 0 {
                report.producer(pipe.cursor());
            }
        } else {
            // The odd CTA's producer warp fills nothing, but acquires every stage: every signal
            // of a pair reaches both CTAs, so its consumer barriers complete each phase too, and
            // each phase is waited on (compute-sanitizer's synccheck reports a barrier whose
            // phases complete with no wait).
            for _ in 0..items {
                pipe.acquire();
                pipe.step();
            }
        }
    } else {
        // SAFETY: as above.
        let mut pipe =
            unsafe { ConsumerRole::<S, 1, 1, 2>::new(producer_barriers, consumer_barriers) };
        let ctid = tid - WARP;
        let mut errors = 0;
        for item in 0..items {
            // The cluster-scope wait with a suspend-time hint (the one-sided kernels poll with
            // `try_wait` instead).
            pipe.wait_ticks(1000);
            // SAFETY: the stage was committed; the slot belongs to this CTA.
            errors += unsafe {
                drain_range(
                    role_slot(region, pipe.stage()),
                    output,
                    item,
                    ctid,
                    WARP,
                    0,
                    PAYLOAD_WORDS,
                )
            };
            pipe.release();
        }
        report.errors(errors);
        if ctid == 0 {
            report.consumer(pipe.cursor(), items);
        }
    }
    sync_cluster();
    if tid == 0 {
        report.done();
    }
}

/// Whether both CTAs of a pair produce (see `pipeline_suite::role_pair_kernels!`).
macro_rules! both_produce {
    (leader) => {
        false
    };
    (both) => {
        true
    };
}

macro_rules! role_pair_kernel {
    ($s:literal, $who:ident) => {
        const _: () = {
            /// A CTA-pair role test kernel (see `role_pair`).
            #[unsafe(export_name = pipeline_suite::role_pair_kernel_name!($s, $who))]
            pub unsafe extern "gpu-kernel" fn kernel(
                input: *const u32,
                output: *mut u32,
                items: u32,
                report: *mut u32,
            ) {
                // SAFETY: the harness launches clusters of 2 CTAs of 2 warps with `role_smem_bytes`.
                unsafe { role_pair::<$s, { both_produce!($who) }>(input, output, items, report) }
            }
        };
    };
}

pipeline_suite::role_pair_kernels!(role_pair_kernel);

/// Writes `value` to word `word` of this CTA's slot and to the same word of the peer CTA's slot
/// (rank `peer`, through distributed shared memory).
///
/// # Safety
///
/// `word` is inside a slot of this CTA's dynamic shared memory; the peer is alive and has the
/// same layout; the stage is free in both CTAs.
#[inline(always)]
unsafe fn write_both(word: *mut u32, peer: u32, value: u32) {
    // SAFETY: forwarded from this function's contract.
    unsafe {
        word.write(value);
        st_shared_cluster_u32(
            mapa_shared_cluster(cvta_to_shared(word.cast()), peer),
            value,
        );
    }
}

/// The producer and consumer steps of a one-sided pair's shape (see `pair_shape!`).
struct PairShape<Publish, Release> {
    /// Producer: fill the slot in parts (the callback fills part `p`) and commit; ends stepped.
    publish: Publish,
    /// Consumer warp `g`: release its sub-stage; ends stepped.
    release: Release,
}

/// One-sided CTA pair (`CTA_GROUP = 2`, cluster of 2): only the CTA of rank `PRODUCER_RANK`
/// runs a producer. Its warp 0 fills each item into the slots of both CTAs (its own, and its
/// peer's through distributed shared memory), in `PS` parts, each committed on its own producer
/// sub-stage, which reaches the producer barriers of both CTAs (32 arrivals each). The other
/// CTA's warp 0 does nothing at all. In each CTA, consumer warp `g` (one per consumer sub-stage,
/// `1 + g`) waits on its own CTA's producer barriers, copies its share of the slot to its CTA's
/// output and releases consumer sub-stage `g`; the producing CTA's consumer barriers count the
/// releases of both CTAs (64 arrivals).
///
/// Nobody waits on the non-producing CTA's consumer barriers: a release that arrived there too
/// would complete phase after phase with no wait, which compute-sanitizer's synccheck reports
/// ("Missing wait"). The bundle runs these kernels under synccheck.
#[inline(always)]
unsafe fn role_pair_one_sided<
    const S: usize,
    const PS: usize,
    const CS: usize,
    const PRODUCER_RANK: u32,
    P,
    R,
>(
    input: *const u32,
    output: *mut u32,
    items: u32,
    report: *mut u32,
    shape: PairShape<P, R>,
) where
    P: Fn(&mut ProducerRole<S, PS, CS, 2>, &dyn Fn(usize)),
    R: Fn(&mut ConsumerRole<S, PS, CS, 2>, u32),
{
    let tid = thread_idx();
    let block = block_idx();
    let rank = cluster_cta_rank();
    // SAFETY: the harness sizes `input` per cluster and `output` per CTA.
    let (input, output) = unsafe {
        (
            input.add((block / 2) as usize * items as usize * PAYLOAD_WORDS),
            output.add(block as usize * items as usize * PAYLOAD_WORDS),
        )
    };
    let report = Report::of_block(report, block);
    let region = role_barrier_region(S, PS, CS);
    let (producer_barriers, consumer_barriers) = role_barriers::<S, PS>();
    let lane = tid % WARP;
    let part_words = PAYLOAD_WORDS / PS;

    if tid == 0 {
        // SAFETY: each CTA's thread 0 initialises its own barriers; the cluster barrier below
        // (reached by every thread of both CTAs) comes before any remote arrival, and the final
        // one keeps both CTAs alive to the end.
        unsafe {
            one_sided::<S, PS, CS, PRODUCER_RANK, gpu_pipeline::Producer>(
                producer_barriers,
                consumer_barriers,
            )
            .init::<32, 64>()
        };
    }
    sync_cluster();

    if tid < WARP {
        if rank == PRODUCER_RANK {
            // SAFETY: initialised before the cluster barrier.
            let mut pipe = unsafe {
                one_sided::<S, PS, CS, PRODUCER_RANK, gpu_pipeline::Producer>(
                    producer_barriers,
                    consumer_barriers,
                )
            };
            let peer = rank ^ 1;
            for item in 0..items {
                pipe.acquire_ticks(1000);
                let slot = role_slot(region, pipe.stage());
                let fill_part = |p: usize| {
                    let mut j = p * part_words + lane as usize;
                    while j < (p + 1) * part_words {
                        // SAFETY: the stage is free in both CTAs (this CTA's consumer barriers
                        // count both CTAs' releases); the peer's slot is at the same offset.
                        unsafe {
                            let value = input.add(item as usize * PAYLOAD_WORDS + j).read();
                            write_both(slot.add(HEADER_WORDS + j), peer, value);
                        }
                        j += WARP as usize;
                    }
                    if p == 0 && lane == 0 {
                        // SAFETY: the header of both slots.
                        unsafe { write_both(slot, peer, item) };
                    }
                };
                (shape.publish)(&mut pipe, &fill_part);
            }
            if tid == 0 {
                report.producer(pipe.cursor());
            }
        }
    } else {
        // SAFETY: as above.
        let mut pipe = unsafe {
            one_sided::<S, PS, CS, PRODUCER_RANK, gpu_pipeline::Consumer>(
                producer_barriers,
                consumer_barriers,
            )
        };
        let group = tid / WARP - 1;
        let ctid = tid - WARP;
        let mut errors = 0;
        for item in 0..items {
            while !pipe.try_wait() {}
            // SAFETY: the stage was committed; the slot belongs to this CTA.
            errors += unsafe {
                drain_range(
                    role_slot(region, pipe.stage()),
                    output,
                    item,
                    ctid,
                    WARP * CS as u32,
                    0,
                    PAYLOAD_WORDS,
                )
            };
            (shape.release)(&mut pipe, group);
        }
        report.errors(errors);
        if ctid == 0 {
            report.consumer(pipe.cursor(), items);
        }
    }
    sync_cluster();
    if tid == 0 {
        report.done();
    }
}

/// A one-sided pair's pipeline value of role `R`: CTA pairs where only the CTA of rank
/// `PRODUCER_RANK` produces.
///
/// # Safety
///
/// As `RolePipeline::new`.
#[inline(always)]
unsafe fn one_sided<
    const S: usize,
    const PS: usize,
    const CS: usize,
    const PRODUCER_RANK: u32,
    R: gpu_pipeline::cursor::Side,
>(
    producer_barriers: *mut gpu_pipeline::Mbarrier,
    consumer_barriers: *mut gpu_pipeline::Mbarrier,
) -> gpu_pipeline::RolePipeline<S, R, PS, CS, 2> {
    let producers = if PRODUCER_RANK == 0 {
        PairCtas::Even
    } else {
        PairCtas::Odd
    };
    // SAFETY: forwarded from this function's contract.
    unsafe {
        gpu_pipeline::RolePipeline::new_pair(
            producer_barriers,
            consumer_barriers,
            producers,
            PairCtas::Both,
        )
    }
}

/// A one-sided pair's producer and consumer steps per `(PS, CS)`.
macro_rules! pair_shape {
    (1, 1) => {
        PairShape {
            publish: |p: &mut ProducerRole<_, 1, 1, 2>, fill: &dyn Fn(usize)| {
                fill(0);
                p.commit();
            },
            release: |c: &mut ConsumerRole<_, 1, 1, 2>, _group: u32| c.release(),
        }
    };
    (2, 2) => {
        PairShape {
            publish: |p: &mut ProducerRole<_, 2, 2, 2>, fill: &dyn Fn(usize)| {
                fill(0);
                p.commit_sub_at(0);
                fill(1);
                p.commit_sub_at(1);
                p.step();
            },
            // The run-time index form: one call for every consumer warp.
            release: |c: &mut ConsumerRole<_, 2, 2, 2>, group: u32| {
                c.release_sub_at(group as usize)
            },
        }
    };
}

macro_rules! role_pair_one_sided_kernel {
    ($s:literal, $who:ident, $ps:tt, $cs:tt) => {
        const _: () = {
            /// A one-sided CTA-pair role test kernel (see `role_pair_one_sided`).
            #[unsafe(export_name = pipeline_suite::role_pair_one_sided_kernel_name!($s, $who, $ps, $cs))]
            pub unsafe extern "gpu-kernel" fn kernel(
                input: *const u32,
                output: *mut u32,
                items: u32,
                report: *mut u32,
            ) {
                // SAFETY: the harness launches clusters of 2 CTAs of 1 + CS warps with
                // `role_smem_bytes`.
                unsafe {
                    role_pair_one_sided::<$s, $ps, $cs, { pipeline_suite::pair_producer_rank!($who) }, _, _>(
                        input, output, items, report, pair_shape!($ps, $cs),
                    )
                }
            }
        };
    };
}

pipeline_suite::role_pair_one_sided_kernels!(role_pair_one_sided_kernel);
