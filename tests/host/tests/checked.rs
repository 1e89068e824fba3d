//! Checked builds on the host: the broken kernels of the device suite, as threads over the host
//! backends. Each mistake must end (in a panic whose message is the hang record) within the
//! budget, with the right diagnosis; the correct ring must run without a false alarm.
//!
//! Run with `cargo test -p protocol-tests --features checked --test checked`.

#![cfg(all(feature = "checked", not(loom)))]

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::time::{Duration, Instant};

use gpu_pipeline::{Diagnostics, HostCounterBackend, HostMbarBackend, ProducerConsumerPipeline};
use protocol_tests::{HostBackend, Ring};

const STAGES: usize = 2;
type Pipe<B> = ProducerConsumerPipeline<STAGES, B>;

/// The budget of these tests: 50 ms.
const BUDGET_US: u32 = 50_000;

/// Runs `producer` and `consumer` (one thread each, or `consumers` threads) over a fresh ring,
/// and returns the panic messages of the threads that panicked, with the time it all took.
fn run<B: HostBackend>(
    label: u32,
    consumers: usize,
    producer: impl FnOnce(&mut Pipe<B>) + Send + 'static,
    consumer: impl Fn(usize, &mut Pipe<B>, &Ring<STAGES, B, ()>) + Send + Sync + 'static,
) -> (Vec<String>, Duration) {
    let ring = Arc::new(Ring::<STAGES, B, ()>::with_diagnostics(
        |_| (),
        Diagnostics {
            label,
            wait_budget_us: BUDGET_US,
        },
    ));
    let consumer = Arc::new(consumer);
    let start = Instant::now();
    let mut threads = Vec::new();
    {
        let ring = ring.clone();
        threads.push(std::thread::spawn(move || {
            // The value is made inside: checked builds compare its last count checks on drop.
            catch_unwind(AssertUnwindSafe(|| {
                // SAFETY: the ring outlives the value (the Arc); one producer thread.
                let mut pipe = unsafe { ring.pipeline() };
                producer(&mut pipe)
            }))
        }));
    }
    for c in 0..consumers {
        let (ring, consumer) = (ring.clone(), consumer.clone());
        threads.push(std::thread::spawn(move || {
            catch_unwind(AssertUnwindSafe(|| {
                // SAFETY: as above; `consumers` matches the consumer arrive count.
                let mut pipe = unsafe { ring.pipeline() };
                consumer(c, &mut pipe, &ring)
            }))
        }));
    }
    let mut messages = Vec::new();
    for thread in threads {
        if let Err(payload) = thread.join().expect("the thread's panic was caught") {
            let message = payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            messages.push(message);
        }
    }
    (messages, start.elapsed())
}

/// Asserts that some message contains every one of `needles`, and that it all took less than a
/// second.
fn expect(what: &str, (messages, took): (Vec<String>, Duration), needles: &[&str]) {
    assert!(
        took < Duration::from_secs(1),
        "{what}: took {took:?}; messages: {messages:#?}"
    );
    assert!(
        messages
            .iter()
            .any(|m| needles.iter().all(|n| m.contains(n))),
        "{what}: no message contains {needles:?}; messages: {messages:#?}"
    );
}

fn never_release<B: HostBackend>() {
    let result = run::<B>(
        11,
        1,
        |p| {
            for _ in 0..8 {
                p.produce(|_| {});
            }
        },
        |_, p, _| {
            for _ in 0..2 {
                p.acquire_consumer().release_without_signal();
            }
        },
    );
    expect(
        "never_release",
        result,
        &[
            "HANG",
            "pipeline 11",
            "producer in `produce`",
            "waited on empty[0] for lap 2",
            "0 of 1 consumer arrivals",
            "checked.rs:",
            "budget 50000 us",
        ],
    );
}

fn double_arrive<B: HostBackend>() {
    let result = run::<B>(
        21,
        1,
        |p| {
            for _ in 0..8 {
                let stage = p.acquire_producer();
                stage.arrive();
                stage.release();
            }
        },
        |_, p, _| {
            for _ in 0..8 {
                p.consume(|_| {});
            }
        },
    );
    expect(
        "double_arrive",
        result,
        &[
            "consumer in `consume`",
            "arrivals more than this lap completes with",
        ],
    );
}

fn wrong_lap<B: HostBackend>() {
    let result = run::<B>(
        31,
        1,
        |p| {
            for _ in 0..6 {
                p.produce(|_| {});
            }
        },
        |_, p, ring| {
            for _ in 0..3 {
                p.consume(|_| {});
            }
            // The mistake: a fresh value over the same storage ("for the next tile"), whose
            // cursor starts again at lap 0.
            // SAFETY: the ring outlives the value.
            let mut again = unsafe { ring.pipeline() };
            for _ in 0..3 {
                again.consume(|_| {});
            }
        },
    );
    expect(
        "wrong_lap",
        result,
        &[
            "WRONG ARRIVAL COUNT",
            "consumer in `consume`",
            "waited on full[0] for lap 0",
            "lap is behind the barrier's",
        ],
    );
}

fn half_release<B: HostBackend>() {
    let result = run::<B>(
        41,
        4,
        |p| {
            for _ in 0..8 {
                p.produce(|_| {});
            }
        },
        |c, p, _| {
            for item in 0..8 {
                let stage = p.acquire_consumer();
                if item >= 1 && c >= 2 {
                    stage.release_without_signal();
                } else {
                    stage.release();
                }
            }
        },
    );
    expect(
        "half_release",
        result,
        &[
            "producer in `produce`",
            "waited on empty[1] for lap 2",
            "2 of 4 consumer arrivals",
            "2 arriving thread(s) did not arrive",
        ],
    );
}

fn trip_counts<B: HostBackend>() {
    let result = run::<B>(
        51,
        1,
        |p| {
            for _ in 0..5 {
                p.produce(|_| {});
            }
        },
        |_, p, _| {
            for _ in 0..6 {
                p.consume(|_| {});
            }
        },
    );
    expect(
        "trip_counts",
        result,
        &[
            "consumer in `consume`",
            "waited on full[1] for lap 2",
            "0 of 1 producer arrivals",
        ],
    );
}

fn wrong_role<B: HostBackend>() {
    let result = run::<B>(
        71,
        1,
        |p| {
            for _ in 0..8 {
                p.produce(|_| {});
            }
        },
        |_, p, _| {
            for _ in 0..8 {
                p.wait_producer();
                // The mistake: the producer's signal where the consumer's was meant.
                p.producer_signal();
                p.consumer_step();
            }
        },
    );
    expect(
        "wrong_role",
        result,
        &[
            "WRONG ROLE",
            "producer in `producer_signal`",
            "used on the consumer side before",
        ],
    );
}

fn correct_ring<B: HostBackend>() {
    let (messages, _) = run::<B>(
        1,
        B::CONSUMER_ARRIVALS as usize,
        |p| {
            for _ in 0..10_000 {
                p.produce(|_| {});
            }
        },
        |_, p, _| {
            for _ in 0..10_000 {
                p.consume(|_| {});
            }
        },
    );
    assert!(messages.is_empty(), "false alarm: {messages:#?}");
}

macro_rules! on_both_backends {
    ($($name:ident: $body:ident, $c:literal;)*) => {
        mod mbar {
            use super::*;
            $(#[test] fn $name() { $body::<HostMbarBackend<1, $c>>() })*
        }
        mod counter {
            use super::*;
            $(#[test] fn $name() { $body::<HostCounterBackend<1, $c>>() })*
        }
    };
}

on_both_backends! {
    consumer_never_releases: never_release, 1;
    producer_arrives_twice: double_arrive, 1;
    consumer_restarts_at_lap_0: wrong_lap, 1;
    half_the_consumers_release: half_release, 4;
    trip_counts_differ: trip_counts, 1;
    consumer_calls_a_producer_method: wrong_role, 1;
    correct_ring_one_consumer: correct_ring, 1;
    correct_ring_four_consumers: correct_ring, 4;
}
