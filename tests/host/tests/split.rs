//! Threads of one side on different slots at once: the host model of the device suite's split
//! kernels (`pipeline_suite::split_kernels!`), on both host backends.
//!
//! Producer thread `t` of `pt` takes the items `i` with `i % STAGES == t % STAGES`, and so does
//! consumer thread `t` of `ct`: the threads of a side wait on, fill and signal different slots at
//! the same time, and each slot's signal expects `pt / STAGES` (full) and `ct / STAGES` (empty)
//! arrivals per phase. On the GPU these threads are lanes of one warp, whose arrivals on different
//! counters the counter backend once summed onto the leader's counter; how a wave's arrivals are
//! grouped by counter is tested over every split in `gpu_pipeline::threshold` (`wave_share`), and on
//! the H200 by the split kernels. Here every arrival is its own, so these runs check the protocol
//! side of the pattern: cursors that skip `STAGES - 1` slots per item, per-slot arrive counts, and
//! the data, on both backends.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use gpu_pipeline::{HostCounterBackend, HostMbarBackend};
use protocol_tests::{
    HostBackend, Ring, STALL, Worker, XorShift64, run_with_watchdog, seed_from_time,
};

/// Items per run (a multiple of every stage count used).
const ITEMS: u64 = if cfg!(debug_assertions) {
    4_000
} else {
    40_000
};

/// The parts of a slot: one per producer thread of a slot's group.
const PARTS: usize = 4;

/// What producer rank `rank` writes for `item`.
fn part(seed: u64, item: u64, rank: usize) -> u64 {
    let mut x = XorShift64::new(seed ^ item.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ rank as u64);
    x.next()
}

/// Runs the split pattern with `pt` producer and `ct` consumer threads over backend `B` (whose
/// arrive counts must be `pt / STAGES` and `ct / STAGES`), and checks every item.
fn split<const STAGES: usize, B: HostBackend>(pt: usize, ct: usize) {
    assert_eq!(B::PRODUCER_ARRIVALS as usize, pt / STAGES);
    assert_eq!(B::CONSUMER_ARRIVALS as usize, ct / STAGES);
    let seed = seed_from_time();
    let config = format!(
        "{} split: {STAGES} stages, {pt} producer threads, {ct} consumer threads, seed {seed:#x}",
        B::NAME
    );
    let ring = Arc::new(Ring::<STAGES, B, [u64; PARTS]>::new(|_| [0; PARTS]));
    let moved = Arc::new(AtomicU64::new(0));
    let errors = Arc::new(AtomicU64::new(0));
    let mut workers: Vec<Worker<()>> = Vec::new();
    for t in 0..pt {
        let (ring, moved) = (ring.clone(), moved.clone());
        workers.push((
            format!("producer {t}"),
            Box::new(move || {
                // SAFETY: `ring` outlives the value; each producer thread counts in `pt / STAGES`.
                let mut pipe = unsafe { ring.pipeline() };
                let (group, rank) = (t % STAGES, t / STAGES);
                for _ in 0..group {
                    pipe.producer_step();
                }
                let mut item = group as u64;
                while item < ITEMS {
                    let stage = pipe.acquire_producer();
                    // SAFETY: this thread's part of the slot it holds as a producer.
                    unsafe {
                        ring.slot(stage.index())
                            .with_mut(|slot| (*slot)[rank] = part(seed, item, rank))
                    };
                    stage.release();
                    for _ in 1..STAGES {
                        pipe.producer_step();
                    }
                    moved.fetch_add(1, Ordering::Relaxed);
                    item += STAGES as u64;
                }
            }),
        ));
    }
    for t in 0..ct {
        let (ring, moved, errors) = (ring.clone(), moved.clone(), errors.clone());
        workers.push((
            format!("consumer {t}"),
            Box::new(move || {
                // SAFETY: as above, for the consumer side.
                let mut pipe = unsafe { ring.pipeline() };
                let group = t % STAGES;
                for _ in 0..group {
                    pipe.consumer_step();
                }
                let mut item = group as u64;
                while item < ITEMS {
                    let stage = pipe.acquire_consumer();
                    // SAFETY: the slot is full (waited) and only read until the release.
                    let slot = unsafe { ring.slot(stage.index()).with(|slot| *slot) };
                    for (rank, value) in slot.iter().enumerate().take(pt / STAGES) {
                        if *value != part(seed, item, rank) {
                            errors.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                    stage.release();
                    for _ in 1..STAGES {
                        pipe.consumer_step();
                    }
                    moved.fetch_add(1, Ordering::Relaxed);
                    item += STAGES as u64;
                }
            }),
        ));
    }
    let seen = moved.clone();
    run_with_watchdog(&config, STALL, workers, move || {
        let n = seen.load(Ordering::Relaxed);
        (
            n,
            format!(
                "{n} item steps of {} moved",
                ITEMS * (pt + ct) as u64 / STAGES as u64
            ),
        )
    });
    assert_eq!(
        errors.load(Ordering::Relaxed),
        0,
        "{config}: wrong slot data"
    );
    // Every slot's signals completed one phase per item through it.
    // SAFETY: all threads are joined; this value only reads signals.
    let pipe = unsafe { ring.pipeline() };
    for stage in 0..STAGES as u32 {
        let laps = ITEMS / STAGES as u64;
        let full = pipe.full_barrier(stage);
        let empty = pipe.empty_barrier(stage);
        assert_eq!(
            B::completed_phases(&full, B::PRODUCER_ARRIVALS),
            laps,
            "{config}: full[{stage}]"
        );
        assert_eq!(
            B::completed_phases(&empty, B::CONSUMER_ARRIVALS),
            laps,
            "{config}: empty[{stage}]"
        );
    }
}

#[test]
fn stages_2_producers_4_consumers_4_on_alternate_slots() {
    split::<2, HostMbarBackend<2, 2>>(4, 4);
    split::<2, HostCounterBackend<2, 2>>(4, 4);
}

#[test]
fn stages_4_producers_4_consumers_4_each_on_its_own_slot() {
    split::<4, HostMbarBackend<1, 1>>(4, 4);
    split::<4, HostCounterBackend<1, 1>>(4, 4);
}

#[test]
fn stages_2_producers_8_consumers_2() {
    split::<2, HostMbarBackend<4, 1>>(8, 2);
    split::<2, HostCounterBackend<4, 1>>(8, 2);
}
