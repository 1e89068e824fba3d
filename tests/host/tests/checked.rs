//! Checked builds on the host: the broken kernels of the device suite, as threads over the host
//! backends. Each mistake is a scenario of `pipeline_suite::MISUSES`, the table the device's
//! broken kernels are checked against too; it must end in a panic whose message is the hang
//! record, with the scenario's diagnosis (`Misuse::expected_texts`); a record of a spent budget
//! must report the budget it was given and a blocked time of about that budget; the correct ring
//! must run without a false alarm.
//!
//! No test bounds its wall-clock time: a loaded machine may deschedule a thread for a while, and
//! a test that failed for that would be flaky, not strict. The budget is checked through what
//! the library measured itself (`blocked N us (budget M us)`, see [`check_blocked_time`]), and a
//! hang (a diagnosis that never comes) is caught by the no-progress watchdog of
//! [`run_with_watchdog`].
//!
//! Run with `cargo test -p protocol-tests --features checked --test checked`.

#![cfg(all(feature = "checked", not(loom)))]

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use gpu_pipeline::{Diagnostics, HostCounterBackend, HostMbarBackend, ProducerConsumerPipeline};
use pipeline_suite::misuse::{
    DOUBLE_ARRIVE, FORGOTTEN_STAGE, HALF_RELEASE, HOLD_TOO_MANY, NEVER_RELEASE, TRIP_COUNTS,
    WRONG_LAP, WRONG_ROLE,
};
use pipeline_suite::{MISUSES, Misuse, Sides};
use protocol_tests::{HostBackend, Ring, STALL, Worker, run_with_watchdog, signal_state};

const STAGES: usize = 2;
type Pipe<B> = ProducerConsumerPipeline<STAGES, B>;

/// The budget of the broken protocols: 50 ms.
const BUDGET_US: u32 = 50_000;

/// How far past its budget a wait may report having blocked. A wait reads the clock once per 32
/// probes, and the host yields the thread between probes, so on a loaded machine it notices a
/// spent budget late by up to 32 yields and a deschedule. The bound is far above that, and far
/// below what a budget read in the wrong unit (1000 times too long) would give.
const BLOCKED_SLACK_US: u64 = 5_000_000;

/// The budget of the correct rings. A time budget can always be spent by a thread that the
/// machine descheduled, so these runs give one that only a hang would spend: they check that
/// correct code never trips the arrival-count checks.
const CORRECT_RING_BUDGET_US: u32 = 10_000_000;

/// Runs `producer` and `consumer` (one thread each, or `consumers` threads) over a fresh ring
/// whose pipelines wait `budget_us` at most, and returns the panic messages of the threads that
/// panicked. The no-progress watchdog fails the test if the threads stop arriving on the ring's
/// barriers for [`STALL`] without all of them having ended: a diagnosis that never comes.
fn run<B: HostBackend>(
    label: u32,
    budget_us: u32,
    consumers: usize,
    producer: impl FnOnce(&mut Pipe<B>) + Send + 'static,
    consumer: impl Fn(usize, &mut Pipe<B>, &Ring<STAGES, B, ()>) + Send + Sync + 'static,
) -> Vec<String> {
    let ring = Arc::new(Ring::<STAGES, B, ()>::with_diagnostics(
        |_| (),
        Diagnostics {
            label,
            wait_budget_us: budget_us,
        },
    ));
    let consumer = Arc::new(consumer);
    let mut workers: Vec<Worker<Option<String>>> = Vec::new();
    {
        let ring = ring.clone();
        workers.push((
            "producer".to_string(),
            Box::new(move || {
                // The value is made inside: checked builds compare its last count checks on drop.
                panic_message(move || {
                    // SAFETY: the ring outlives the value (the Arc); one producer thread.
                    let mut pipe = unsafe { ring.pipeline() };
                    producer(&mut pipe)
                })
            }),
        ));
    }
    for c in 0..consumers {
        let (ring, consumer) = (ring.clone(), consumer.clone());
        workers.push((
            format!("consumer {c}"),
            Box::new(move || {
                panic_message(move || {
                    // SAFETY: as above; `consumers` matches the consumer arrive count.
                    let mut pipe = unsafe { ring.pipeline() };
                    consumer(c, &mut pipe, &ring)
                })
            }),
        ));
    }
    let config = format!("{}, pipeline {label}, {consumers} consumer(s)", B::NAME);
    let progress = || {
        let arrivals = arrivals(&ring);
        (
            arrivals,
            format!("{arrivals} arrivals on the ring's barriers"),
        )
    };
    run_with_watchdog(&config, STALL, workers, progress)
        .into_iter()
        .flatten()
        .collect()
}

/// Runs `body`, and returns the message of its panic, if it panicked.
fn panic_message(body: impl FnOnce()) -> Option<String> {
    let payload = catch_unwind(AssertUnwindSafe(body)).err()?;
    Some(
        payload
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default(),
    )
}

/// Every arrival made so far on the ring's barriers: the watchdog's progress count.
fn arrivals<B: HostBackend>(ring: &Ring<STAGES, B, ()>) -> u64 {
    // SAFETY: the ring outlives the value; the value only reads the barriers (no wait, no signal).
    let pipe: Pipe<B> = unsafe { ring.pipeline() };
    (0..STAGES as u32)
        .map(|stage| {
            let (full, full_now) =
                signal_state::<B>(&pipe.full_barrier(stage), B::PRODUCER_ARRIVALS);
            let (empty, empty_now) =
                signal_state::<B>(&pipe.empty_barrier(stage), B::CONSUMER_ARRIVALS);
            full * u64::from(B::PRODUCER_ARRIVALS)
                + u64::from(full_now)
                + empty * u64::from(B::CONSUMER_ARRIVALS)
                + u64::from(empty_now)
        })
        .sum()
}

/// Asserts that some message says the diagnosis of `misuse` (`Misuse::expected_texts`), at a line
/// of this file where the record names the call, and checks the blocked time of every record of a
/// spent budget among them.
fn expect(misuse: &Misuse, messages: Vec<String>) {
    let what = misuse.name;
    assert!(
        messages
            .iter()
            .any(|m| misuse.missing_from(m).is_empty()
                && (!misuse.at_call || m.contains("checked.rs:"))),
        "{what}: no message says {:?}{}; messages: {messages:#?}",
        misuse.expected_texts(),
        if misuse.at_call {
            " at a line of checked.rs"
        } else {
            ""
        }
    );
    for message in messages.iter().filter(|m| m.contains("HANG")) {
        check_blocked_time(what, message);
    }
}

/// A record of a spent budget says `blocked N us (budget M us)`: the budget must be the one the
/// pipeline was given, and the wait must have blocked at least that long (it did not give up
/// early) and not much longer (it kept to that budget, not another one).
fn check_blocked_time(what: &str, message: &str) {
    let figures = message
        .split_once("blocked ")
        .and_then(|(_, rest)| rest.split_once(" us (budget "))
        .and_then(|(blocked, rest)| Some((blocked, rest.split_once(" us)")?.0)))
        .and_then(|(blocked, budget)| Some((blocked.parse().ok()?, budget.parse().ok()?)));
    let Some((blocked, budget)): Option<(u64, u64)> = figures else {
        panic!("{what}: a HANG record without `blocked N us (budget M us)`: {message}");
    };
    assert_eq!(
        budget,
        u64::from(BUDGET_US),
        "{what}: the record's budget is not the pipeline's: {message}"
    );
    assert!(
        (budget..=budget + BLOCKED_SLACK_US).contains(&blocked),
        "{what}: blocked {blocked} us on a budget of {budget} us (allowed: {budget} to {} us): {message}",
        budget + BLOCKED_SLACK_US
    );
}

fn never_release<B: HostBackend>() {
    let result = run::<B>(
        NEVER_RELEASE.label,
        BUDGET_US,
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
    expect(&NEVER_RELEASE, result);
}

fn double_arrive<B: HostBackend>() {
    let result = run::<B>(
        DOUBLE_ARRIVE.label,
        BUDGET_US,
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
    expect(&DOUBLE_ARRIVE, result);
}

fn wrong_lap<B: HostBackend>() {
    let result = run::<B>(
        WRONG_LAP.label,
        BUDGET_US,
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
            let again = unsafe { ring.pipeline() };
            for _ in 0..3 {
                again.consume(|_| {});
            }
        },
    );
    expect(&WRONG_LAP, result);
}

fn half_release<B: HostBackend>() {
    let result = run::<B>(
        HALF_RELEASE.label,
        BUDGET_US,
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
    expect(&HALF_RELEASE, result);
}

fn trip_counts<B: HostBackend>() {
    let result = run::<B>(
        TRIP_COUNTS.label,
        BUDGET_US,
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
    expect(&TRIP_COUNTS, result);
}

fn hold_too_many<B: HostBackend>() {
    let result = run::<B>(
        HOLD_TOO_MANY.label,
        BUDGET_US,
        1,
        |p| {
            for _ in 0..2 {
                p.produce(|_| {});
            }
            std::thread::sleep(std::time::Duration::from_micros(u64::from(BUDGET_US)));
            p.produce(|_| {});
        },
        |_, p, _| {
            let first = p.acquire_consumer();
            let second = p.acquire_consumer();
            let third = p.acquire_consumer();
            first.release();
            second.release();
            third.release();
        },
    );
    expect(&HOLD_TOO_MANY, result);
}

fn wrong_role<B: HostBackend>() {
    let result = run::<B>(
        WRONG_ROLE.label,
        BUDGET_US,
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
    expect(&WRONG_ROLE, result);
}

fn correct_ring<B: HostBackend>() {
    let messages = run::<B>(
        1,
        CORRECT_RING_BUDGET_US,
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

/// A consumer that forgets a stage (`core::mem::forget`, which the types cannot stop): the
/// checked half reports it when it goes out of scope, naming the side and the cursor.
fn forgotten_stage<B: HostBackend>() {
    let ring = Ring::<STAGES, B, ()>::with_diagnostics(
        |_| (),
        Diagnostics {
            label: FORGOTTEN_STAGE.label,
            wait_budget_us: BUDGET_US,
        },
    );
    let message = panic_message(|| {
        // SAFETY: the halves live while `ring` does; one thread plays both sides (counts 1, 1).
        let (producer, consumer) = unsafe { ring.pipeline() }.split();
        producer.produce(|_| {});
        let stage = consumer.acquire();
        core::mem::forget(stage);
        drop(producer);
        drop(consumer);
    })
    .expect("the forgotten stage is reported");
    expect(&FORGOTTEN_STAGE, vec![message]);
}

/// Several stages held at once and released in order: no false alarm, no leak report.
fn stages_in_flight<B: HostBackend>() {
    let ring = Ring::<STAGES, B, ()>::with_diagnostics(
        |_| (),
        Diagnostics {
            label: 82,
            wait_budget_us: CORRECT_RING_BUDGET_US,
        },
    );
    let message = panic_message(|| {
        // SAFETY: as in `forgotten_stage`.
        let (producer, consumer) = unsafe { ring.pipeline() }.split();
        for _ in 0..100 {
            let (a, b) = (producer.acquire(), producer.acquire());
            a.release();
            b.release();
            let first = consumer.acquire();
            let second = consumer.acquire();
            first.release();
            second.release();
        }
    });
    assert_eq!(message, None, "false alarm");
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
    consumer_holds_every_stage_and_acquires_one_more: hold_too_many, 1;
    consumer_calls_a_producer_method: wrong_role, 1;
    correct_ring_one_consumer: correct_ring, 1;
    correct_ring_four_consumers: correct_ring, 4;
    consumer_forgets_a_stage: forgotten_stage, 1;
    consumer_holds_two_stages: stages_in_flight, 1;
}

/// The scenarios this file runs, each on both host backends.
const HOST_SCENARIOS: &[&Misuse] = &[
    &NEVER_RELEASE,
    &DOUBLE_ARRIVE,
    &WRONG_LAP,
    &HALF_RELEASE,
    &TRIP_COUNTS,
    &HOLD_TOO_MANY,
    &WRONG_ROLE,
    &FORGOTTEN_STAGE,
];

/// Every scenario of the table that runs on the host is run here, and only those.
#[test]
fn every_host_scenario_of_the_table_is_run() {
    for m in MISUSES {
        let here = HOST_SCENARIOS.iter().any(|h| h.name == m.name);
        assert_eq!(
            here,
            m.sides != Sides::Device,
            "{}: sides {:?}, run here: {here}",
            m.name,
            m.sides
        );
    }
}
