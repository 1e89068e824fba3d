//! The split pipeline: producer and consumer halves on their own threads, and consumers that
//! keep stages in flight (hold up to `K` handles, releasing the oldest after acquiring the
//! next), as a Hopper GEMM's MMA warps keep the previous stage until the next stage's MMAs are
//! issued. On both host backends, with the data of every item checked.
//!
//! Before the halves existed a consumer could hold only one handle at a time (the handle borrowed
//! the whole pipeline mutably), so the in-flight pattern needed the unchecked low-level calls.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use gpu_pipeline::{ConsumerHalf, HostCounterBackend, HostMbarBackend, ProducerHalf};
use protocol_tests::{
    HostBackend, Ring, STALL, Worker, XorShift64, run_with_watchdog, seed_from_time,
};

/// Items per run.
const ITEMS: u64 = if cfg!(debug_assertions) {
    3_000
} else {
    30_000
};

/// What the producer writes for `item`.
fn value(seed: u64, item: u64) -> u64 {
    XorShift64::new(seed ^ item.wrapping_mul(0x9e37_79b9_7f4a_7c15)).next()
}

/// One producer thread on a [`ProducerHalf`], `ct` consumer threads on [`ConsumerHalf`]s, each
/// consumer holding up to `in_flight` stages (`in_flight <= STAGES`); `B`'s arrive counts are
/// 1 and `ct`.
fn in_flight<const STAGES: usize, B: HostBackend>(ct: usize, in_flight: usize) {
    assert!(in_flight >= 1 && in_flight <= STAGES);
    assert_eq!(B::PRODUCER_ARRIVALS, 1);
    assert_eq!(B::CONSUMER_ARRIVALS as usize, ct);
    let seed = seed_from_time();
    let config = format!(
        "{} halves: {STAGES} stages, {ct} consumers holding {in_flight}, seed {seed:#x}",
        B::NAME
    );
    let ring = Arc::new(Ring::<STAGES, B, u64>::new(|_| 0));
    let moved = Arc::new(AtomicU64::new(0));
    let errors = Arc::new(AtomicU64::new(0));
    let mut workers: Vec<Worker<()>> = Vec::new();
    {
        let (ring, moved) = (ring.clone(), moved.clone());
        workers.push((
            "producer".into(),
            Box::new(move || {
                // SAFETY: `ring` outlives the half; one producer thread, arrive count 1.
                let producer: ProducerHalf<STAGES, B> = unsafe { ring.pipeline() }.into_producer();
                for item in 0..ITEMS {
                    let stage = producer.acquire();
                    // SAFETY: the producer holds the slot (its wait returned).
                    unsafe {
                        ring.slot(stage.index())
                            .with_mut(|slot| *slot = value(seed, item))
                    };
                    stage.release();
                    moved.fetch_add(1, Ordering::Relaxed);
                }
            }),
        ));
    }
    for t in 0..ct {
        let (ring, moved, errors) = (ring.clone(), moved.clone(), errors.clone());
        workers.push((
            format!("consumer {t}"),
            Box::new(move || {
                // SAFETY: `ring` outlives the half; each consumer thread counts in `ct`.
                let consumer: ConsumerHalf<STAGES, B> = unsafe { ring.pipeline() }.into_consumer();
                let mut held = VecDeque::new();
                for item in 0..ITEMS {
                    let stage = consumer.acquire();
                    // SAFETY: the slot is full (waited) and only read until its release.
                    let got = unsafe { ring.slot(stage.index()).with(|slot| *slot) };
                    if got != value(seed, item) {
                        errors.fetch_add(1, Ordering::Relaxed);
                    }
                    held.push_back(stage);
                    if held.len() == in_flight {
                        // The oldest stage goes back once the next one is in hand.
                        held.pop_front().expect("held").release();
                    }
                    moved.fetch_add(1, Ordering::Relaxed);
                }
                for stage in held {
                    stage.release();
                }
            }),
        ));
    }
    let seen = moved.clone();
    run_with_watchdog(&config, STALL, workers, move || {
        let n = seen.load(Ordering::Relaxed);
        (
            n,
            format!("{n} item steps of {} moved", ITEMS * (1 + ct) as u64),
        )
    });
    assert_eq!(
        errors.load(Ordering::Relaxed),
        0,
        "{config}: wrong slot data"
    );
    // SAFETY: all threads are joined; this value only reads signals.
    let pipe = unsafe { ring.pipeline() };
    for stage in 0..STAGES as u32 {
        assert_eq!(ITEMS % STAGES as u64, 0);
        let laps = ITEMS / STAGES as u64;
        assert_eq!(
            B::completed_phases(&pipe.full_barrier(stage), 1),
            laps,
            "{config}: full[{stage}]"
        );
        assert_eq!(
            B::completed_phases(&pipe.empty_barrier(stage), ct as u32),
            laps,
            "{config}: empty[{stage}]"
        );
    }
}

#[test]
fn stages_4_consumers_1_holding_2() {
    in_flight::<4, HostMbarBackend<1, 1>>(1, 2);
    in_flight::<4, HostCounterBackend<1, 1>>(1, 2);
}

#[test]
fn stages_3_consumers_4_holding_3() {
    in_flight::<3, HostMbarBackend<1, 4>>(4, 3);
    in_flight::<3, HostCounterBackend<1, 4>>(4, 3);
}

#[test]
fn stages_2_consumers_2_holding_1() {
    in_flight::<2, HostMbarBackend<1, 2>>(2, 1);
    in_flight::<2, HostCounterBackend<1, 2>>(2, 1);
}

/// Stage handles of one half released out of acquisition order: each slot's signal is its own,
/// so the order of releases does not matter, only that each stage is released once.
#[test]
fn stages_released_out_of_order() {
    fn check<B: HostBackend>() {
        let ring = Ring::<4, B, ()>::new(|_| ());
        // SAFETY: the values live while `ring` does; one thread plays both sides (counts 1, 1).
        let (producer, consumer) = unsafe { ring.pipeline() }.split();
        for _ in 0..3 {
            let (a, b, c) = (producer.acquire(), producer.acquire(), producer.acquire());
            assert_eq!((a.index(), b.index(), c.index()), (0, 1, 2));
            c.release();
            a.release();
            b.release();
            let (x, y, z) = (consumer.acquire(), consumer.acquire(), consumer.acquire());
            z.release();
            y.release();
            x.release();
            // The fourth slot, in order, brings both cursors back to slot 0 on the next lap.
            producer.acquire().release();
            consumer.acquire().release();
        }
        assert_eq!(producer.cursor().lap(), 4, "{}", B::NAME);
        assert_eq!(consumer.cursor().lap(), 3, "{}", B::NAME);
    }
    check::<HostMbarBackend<1, 1>>();
    check::<HostCounterBackend<1, 1>>();
}
