//! Loom models of the protocol over the host backends: a 2-slot ring, 4 items (2 laps of each
//! slot), one producer and one consumer, and one producer and two consumers
//! (`CONSUMER_ARRIVALS = 2`), on `HostMbarBackend` and `HostCounterBackend`.
//!
//! Run with:
//!
//! ```text
//! RUSTFLAGS="--cfg loom" cargo test -p protocol-tests --release --test loom --target-dir target/loom -- --nocapture
//! ```
//!
//! Under `--cfg loom` the library's host backends use loom's atomics (its `primitive` module)
//! and its wait loops yield to the model checker; the slots here are loom `UnsafeCell`s
//! ([`protocol_tests::Slot`]). So loom reports:
//!
//! - a deadlock: the waiting threads spin forever, and the execution fails with loom's
//!   "exceeded maximum number of branches" (spinning threads are never *blocked*, so loom's own
//!   "deadlock" message does not appear);
//! - a lost, duplicated or torn item: each consumer checks the exact sequence number and
//!   payload of every item;
//! - a data race on a slot: a producer write not ordered by happens-before against a consumer
//!   read of the same slot, or the reverse ("Causality violation");
//! - a wrong end state: each signal completed exactly one phase per item through its slot.
//!
//! # Bounds
//!
//! - 1x1 models: exhaustive (no preemption bound), through the library's own blocking waits.
//! - 1x2 models: preemption bound 2, and [`Waits::Bounded`]: with three threads, two can spin
//!   at once, and loom cannot explore the library's yield loops then (see [`wait_until`]).
//!   Preemption bound 3 also passes (counter 828,526 executions, mbar 1,164,044, about 4
//!   minutes each on 2 cores), too slow for every run.
//!
//! Each test counts its executions in its own static counter and prints the count.
//! `LOOM_MAX_PREEMPTIONS` in the environment is ignored: each test sets its bound itself.
//! Nothing sets `max_duration` or `max_permutations`, which would end a check early and
//! silently.
#![cfg(loom)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use gpu_pipeline::{HostCounterBackend, HostMbarBackend};
use protocol_tests::{HostBackend, Ring, signal_state};

/// Slots in the modelled ring.
const STAGES: usize = 2;

/// Items through the ring: two laps of each slot.
const ITEMS: u64 = 4;

/// A slot: the sequence number and a payload derived from it, written separately so that a
/// torn read would show.
type Payload = (u64, u64);

/// What slots hold before any producer wrote them.
const POISON: Payload = (u64::MAX, u64::MAX);

fn payload(seq: u64) -> Payload {
    (seq, seq.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0x5555)
}

/// How the threads of a model wait.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Waits {
    /// The library's own blocking waits (`acquire_*`, `consume`, `wait_*_if_needed`): each is
    /// a loop of try and `loom::thread::yield_now`.
    Library,
    /// Before each library wait, the test's [`wait_until`] loop of try-waits, which stops loom
    /// from branching while a thread is past its spin budget (see [`wait_until`]). The library
    /// wait that follows then passes on its first try.
    Bounded,
}

/// Failed try-waits in one wait before [`wait_until`] stops loom from branching.
const SPIN_BUDGET: u32 = 2;

/// Loops on `ready` (a try-wait), yielding to loom between tries. After `SPIN_BUDGET` failed
/// tries it stops loom's exploration until this wait (and every other wait past its budget)
/// succeeds; `over_budget` counts the threads past their budget in this execution.
///
/// Why: two threads spinning at once (two consumers waiting for the same `full` signal, or a
/// consumer and the producer) give loom an endless tree. A yield is not a preemption, so a
/// preemption bound does not cut the schedules in which the two spinners take turns forever
/// while the thread they wait for never runs, and every execution along such a path exceeds
/// loom's branch limit. Not branching while a spinner is past its budget lets the run go on
/// under loom's default (fair) schedule. What is lost is only schedules that differ in how many
/// *more* failed tries a waiter makes: a failed try reads and changes nothing. A deadlock still
/// fails the model: its spinners never stop, and the execution exceeds the branch limit.
fn wait_until(ready: impl Fn() -> bool, over_budget: &AtomicUsize) {
    let mut failed = 0;
    while !ready() {
        failed += 1;
        if failed == SPIN_BUDGET && over_budget.fetch_add(1, Ordering::Relaxed) == 0 {
            loom::stop_exploring();
        }
        loom::thread::yield_now();
    }
    if failed >= SPIN_BUDGET && over_budget.fetch_sub(1, Ordering::Relaxed) == 1 {
        loom::explore();
    }
}

/// The producer: acquire, fill, release (stage handles), for every item.
fn produce<B: HostBackend>(
    ring: &Ring<STAGES, B, Payload>,
    waits: Waits,
    over_budget: &AtomicUsize,
) {
    // SAFETY: `ring` outlives this call; the one producer thread, passing every stage.
    let pipe = unsafe { ring.pipeline() };
    for seq in 0..ITEMS {
        if waits == Waits::Bounded {
            wait_until(|| pipe.try_wait_consumer(), over_budget);
        }
        let stage = pipe.acquire_producer();
        // SAFETY: the producer holds the slot between its wait and its release.
        unsafe {
            ring.slot(stage.index())
                .with_mut(|slot| *slot = payload(seq))
        };
        stage.release();
    }
}

/// Consumer `id`: waits, reads and checks each item in order, releases. Consumer 0 uses stage
/// handles, consumer 1 the `consume` scope, in the 1x1 models the single consumer alternates
/// between handles and the try-wait / wait-if-needed path with explicit signal and step.
fn consume<B: HostBackend>(
    ring: &Ring<STAGES, B, Payload>,
    id: usize,
    waits: Waits,
    over_budget: &AtomicUsize,
) {
    // SAFETY: `ring` outlives this call; one of the `CONSUMER_ARRIVALS` consumer threads,
    // passing every stage.
    let mut pipe = unsafe { ring.pipeline() };
    // SAFETY: consumers read a slot only between their wait and their release.
    let read = |index: u32| unsafe { ring.slot(index).with(|slot| *slot) };
    for seq in 0..ITEMS {
        if waits == Waits::Bounded {
            wait_until(|| pipe.try_wait_producer(), over_budget);
        }
        let got = match (id, seq % 2) {
            (1, _) => pipe.consume(|view| read(view.index())),
            (_, 0) => {
                let stage = pipe.acquire_consumer();
                let got = read(stage.index());
                stage.release();
                got
            }
            _ => {
                let ready = pipe.try_wait_producer();
                pipe.wait_producer_if_needed(ready);
                let got = read(pipe.consumer_stage());
                pipe.consumer_signal();
                pipe.consumer_step();
                got
            }
        };
        assert_eq!(
            got,
            payload(seq),
            "consumer {id}: item {seq} lost, duplicated or torn"
        );
    }
}

/// Model-checks the ring with one producer and `B::CONSUMER_ARRIVALS` consumers (consumer 0
/// on the model's main thread, the producer and the other consumers on spawned threads).
fn check<B: HostBackend>(
    name: &str,
    waits: Waits,
    preemption_bound: Option<usize>,
    executions: &'static AtomicUsize,
) {
    assert_eq!(B::PRODUCER_ARRIVALS, 1);
    let consumers = B::CONSUMER_ARRIVALS as usize;
    let started = Instant::now();
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = preemption_bound;
    builder.check(move || {
        executions.fetch_add(1, Ordering::Relaxed);
        // Bookkeeping of `wait_until`, outside the model (loom runs one thread at a time).
        let over_budget = Arc::new(AtomicUsize::new(0));
        let ring = Arc::new(Ring::<STAGES, B, Payload>::new(|_| POISON));
        let producer = {
            let (ring, over_budget) = (ring.clone(), over_budget.clone());
            loom::thread::spawn(move || produce(&ring, waits, &over_budget))
        };
        let others: Vec<_> = (1..consumers)
            .map(|id| {
                let (ring, over_budget) = (ring.clone(), over_budget.clone());
                loom::thread::spawn(move || consume(&ring, id, waits, &over_budget))
            })
            .collect();
        consume(&ring, 0, waits, &over_budget);
        producer.join().unwrap();
        for other in others {
            other.join().unwrap();
        }
        // SAFETY: every thread is joined; this value only reads signals.
        let pipe = unsafe { ring.pipeline() };
        for stage in 0..STAGES as u32 {
            let through = ITEMS / STAGES as u64;
            assert_eq!(
                signal_state::<B>(&pipe.full_barrier(stage), B::PRODUCER_ARRIVALS),
                (through, 0)
            );
            assert_eq!(
                signal_state::<B>(&pipe.empty_barrier(stage), B::CONSUMER_ARRIVALS),
                (through, 0)
            );
        }
    });
    eprintln!(
        "loom: {name}: {} executions ({waits:?} waits, preemption bound {preemption_bound:?}) in {:.1?}",
        executions.load(Ordering::Relaxed),
        started.elapsed()
    );
}

#[test]
fn mbar_stages_2_items_4_producers_1_consumers_1() {
    static EXECUTIONS: AtomicUsize = AtomicUsize::new(0);
    check::<HostMbarBackend<1, 1>>("mbar 1x1", Waits::Library, None, &EXECUTIONS);
}

#[test]
fn counter_stages_2_items_4_producers_1_consumers_1() {
    static EXECUTIONS: AtomicUsize = AtomicUsize::new(0);
    check::<HostCounterBackend<1, 1>>("counter 1x1", Waits::Library, None, &EXECUTIONS);
}

#[test]
fn mbar_stages_2_items_4_producers_1_consumers_2() {
    static EXECUTIONS: AtomicUsize = AtomicUsize::new(0);
    check::<HostMbarBackend<1, 2>>("mbar 1x2", Waits::Bounded, Some(2), &EXECUTIONS);
}

#[test]
fn counter_stages_2_items_4_producers_1_consumers_2() {
    static EXECUTIONS: AtomicUsize = AtomicUsize::new(0);
    check::<HostCounterBackend<1, 2>>("counter 1x2", Waits::Bounded, Some(2), &EXECUTIONS);
}
