//! Trace tests: one thread plays every role of a small ring under a deterministic scheduler,
//! and the exact sequence of protocol events is compared with a trace written out literally.
//!
//! The scheduler ([`trace`]) holds one pipeline value per role, all made from the same barrier
//! storage: a producer and `CONSUMERS` consumers (the backend's consumer arrive count). Its
//! policy: run the producer until its next `try_wait_consumer` fails (or it is done), then the
//! next consumer, round robin, until its `try_wait_producer` fails (or it is done), then the
//! producer again, and so on. With one consumer that is "producer, consumer, producer, ...".
//! A role that succeeds in its try-wait acquires the stage through its handle (the wait passes
//! at once), fills or checks the slot, and releases it.
//!
//! Events:
//!
//! | event | meaning |
//! |---|---|
//! | `P acquire s{stage} lap{lap}` | the producer's try-wait passed; it holds slot `stage` on its lap `lap` |
//! | `P commit s{stage}` | it filled the slot and released the handle (arrive on full, step) |
//! | `P blocked s{stage} lap{lap}` | its try-wait failed: the slot is not yet released by every consumer |
//! | `C wait s{stage} lap{lap}` | a consumer's try-wait passed (`C0`, `C1`, ... with several consumers) |
//! | `C release s{stage}` | it checked the item and released the handle (arrive on empty, step) |
//! | `C blocked s{stage} lap{lap}` | its try-wait failed: the slot is not yet filled |
//! | `P done`, `C done` | the role has passed every item |
//!
//! Every trace is run on both host backends and must be identical on both: the protocol above
//! the backend does not depend on how a lap is mapped onto the hardware (parity or threshold).

// Loom's atomics only work inside a loom model: under `--cfg loom` only `loom.rs` runs.
#![cfg(not(loom))]

use gpu_pipeline::{HostCounterBackend, HostMbarBackend};
use protocol_tests::{HostBackend, Ring};

/// What a slot holds before any producer wrote it.
const POISON: u64 = u64::MAX;

/// Runs `items` items through a fresh `STAGES`-slot ring under the scheduler of the module docs
/// and returns the events. Panics on a wrong item, or when no role can make progress.
fn trace<const STAGES: usize, B: HostBackend>(items: u64) -> Vec<String> {
    assert_eq!(B::PRODUCER_ARRIVALS, 1, "the scheduler plays one producer");
    let consumers = B::CONSUMER_ARRIVALS as usize;
    let ring = Ring::<STAGES, B, u64>::new(|_| POISON);
    // SAFETY: every value is used while `ring` lives; one producer value and `consumers`
    // consumer values, matching the arrive counts, each passing every stage.
    let producer = unsafe { ring.pipeline() };
    // SAFETY: as above.
    let mut consumer: Vec<_> = (0..consumers).map(|_| unsafe { ring.pipeline() }).collect();
    let name = |c: usize| {
        if consumers == 1 {
            "C".to_string()
        } else {
            format!("C{c}")
        }
    };

    let mut events = Vec::new();
    let mut produced = 0;
    let mut consumed = vec![0; consumers];
    let mut next_consumer = 0;
    let mut idle_turns = 0;
    while produced < items || consumed.iter().any(|&n| n < items) {
        // The producer's turn.
        let mut progressed = false;
        while produced < items {
            let cursor = producer.producer_cursor();
            if !producer.try_wait_consumer() {
                events.push(format!("P blocked s{} lap{}", cursor.stage(), cursor.lap()));
                break;
            }
            let stage = producer.acquire_producer();
            let index = stage.index();
            assert_eq!(index, cursor.stage());
            events.push(format!("P acquire s{index} lap{}", cursor.lap()));
            // SAFETY: the producer holds slot `index`; everything runs on this thread.
            unsafe { ring.slot(index).with_mut(|slot| *slot = produced) };
            stage.release();
            events.push(format!("P commit s{index}"));
            produced += 1;
            progressed = true;
            if produced == items {
                events.push("P done".to_string());
            }
        }

        // One consumer's turn.
        let c = next_consumer;
        next_consumer = (next_consumer + 1) % consumers;
        let pipe = &mut consumer[c];
        while consumed[c] < items {
            let cursor = pipe.consumer_cursor();
            if !pipe.try_wait_producer() {
                events.push(format!(
                    "{} blocked s{} lap{}",
                    name(c),
                    cursor.stage(),
                    cursor.lap()
                ));
                break;
            }
            let stage = pipe.acquire_consumer();
            let index = stage.index();
            assert_eq!(index, cursor.stage());
            events.push(format!("{} wait s{index} lap{}", name(c), cursor.lap()));
            // SAFETY: the consumer holds slot `index`; everything runs on this thread.
            let item = unsafe { ring.slot(index).with(|slot| *slot) };
            assert_eq!(
                item,
                consumed[c],
                "{} read a wrong item; events so far: {events:#?}",
                name(c)
            );
            stage.release();
            events.push(format!("{} release s{index}", name(c)));
            consumed[c] += 1;
            progressed = true;
            if consumed[c] == items {
                events.push(format!("{} done", name(c)));
            }
        }

        idle_turns = if progressed { 0 } else { idle_turns + 1 };
        assert!(
            idle_turns <= consumers,
            "deadlock: no role can make progress; events: {events:#?}"
        );
    }
    if items == 0 {
        // Nothing to do: each role is done at once.
        events.push("P done".to_string());
        events.extend((0..consumers).map(|c| format!("{} done", name(c))));
    }
    events
}

/// Runs the trace on both host backends with `CONSUMERS` consumers and compares each with
/// `expected`, and the two with each other.
fn check<const STAGES: usize, const CONSUMERS: u32>(items: u64, expected: &[&str]) {
    let mbar = trace::<STAGES, HostMbarBackend<1, CONSUMERS>>(items);
    let counter = trace::<STAGES, HostCounterBackend<1, CONSUMERS>>(items);
    assert_eq!(
        mbar, counter,
        "the backends' traces differ (left: HostMbarBackend, right: HostCounterBackend)"
    );
    assert_eq!(
        mbar, expected,
        "trace of stages {STAGES}, consumers {CONSUMERS}, items {items}"
    );
}

#[test]
fn stages_1_items_3() {
    check::<1, 1>(
        3,
        &[
            "P acquire s0 lap1",
            "P commit s0",
            "P blocked s0 lap2",
            "C wait s0 lap0",
            "C release s0",
            "C blocked s0 lap1",
            "P acquire s0 lap2",
            "P commit s0",
            "P blocked s0 lap3",
            "C wait s0 lap1",
            "C release s0",
            "C blocked s0 lap2",
            "P acquire s0 lap3",
            "P commit s0",
            "P done",
            "C wait s0 lap2",
            "C release s0",
            "C done",
        ],
    );
}

#[test]
fn stages_1_items_4() {
    check::<1, 1>(
        4,
        &[
            "P acquire s0 lap1",
            "P commit s0",
            "P blocked s0 lap2",
            "C wait s0 lap0",
            "C release s0",
            "C blocked s0 lap1",
            "P acquire s0 lap2",
            "P commit s0",
            "P blocked s0 lap3",
            "C wait s0 lap1",
            "C release s0",
            "C blocked s0 lap2",
            "P acquire s0 lap3",
            "P commit s0",
            "P blocked s0 lap4",
            "C wait s0 lap2",
            "C release s0",
            "C blocked s0 lap3",
            "P acquire s0 lap4",
            "P commit s0",
            "P done",
            "C wait s0 lap3",
            "C release s0",
            "C done",
        ],
    );
}

#[test]
fn stages_2_items_3() {
    check::<2, 1>(
        3,
        &[
            "P acquire s0 lap1",
            "P commit s0",
            "P acquire s1 lap1",
            "P commit s1",
            "P blocked s0 lap2",
            "C wait s0 lap0",
            "C release s0",
            "C wait s1 lap0",
            "C release s1",
            "C blocked s0 lap1",
            "P acquire s0 lap2",
            "P commit s0",
            "P done",
            "C wait s0 lap1",
            "C release s0",
            "C done",
        ],
    );
}

#[test]
fn stages_2_items_5() {
    check::<2, 1>(
        5,
        &[
            "P acquire s0 lap1",
            "P commit s0",
            "P acquire s1 lap1",
            "P commit s1",
            "P blocked s0 lap2",
            "C wait s0 lap0",
            "C release s0",
            "C wait s1 lap0",
            "C release s1",
            "C blocked s0 lap1",
            "P acquire s0 lap2",
            "P commit s0",
            "P acquire s1 lap2",
            "P commit s1",
            "P blocked s0 lap3",
            "C wait s0 lap1",
            "C release s0",
            "C wait s1 lap1",
            "C release s1",
            "C blocked s0 lap2",
            "P acquire s0 lap3",
            "P commit s0",
            "P done",
            "C wait s0 lap2",
            "C release s0",
            "C done",
        ],
    );
}

#[test]
fn stages_3_items_3() {
    // Exactly one lap: the producer never blocks, the consumer never sees an empty slot.
    check::<3, 1>(
        3,
        &[
            "P acquire s0 lap1",
            "P commit s0",
            "P acquire s1 lap1",
            "P commit s1",
            "P acquire s2 lap1",
            "P commit s2",
            "P done",
            "C wait s0 lap0",
            "C release s0",
            "C wait s1 lap0",
            "C release s1",
            "C wait s2 lap0",
            "C release s2",
            "C done",
        ],
    );
}

#[test]
fn stages_3_items_4() {
    check::<3, 1>(
        4,
        &[
            "P acquire s0 lap1",
            "P commit s0",
            "P acquire s1 lap1",
            "P commit s1",
            "P acquire s2 lap1",
            "P commit s2",
            "P blocked s0 lap2",
            "C wait s0 lap0",
            "C release s0",
            "C wait s1 lap0",
            "C release s1",
            "C wait s2 lap0",
            "C release s2",
            "C blocked s0 lap1",
            "P acquire s0 lap2",
            "P commit s0",
            "P done",
            "C wait s0 lap1",
            "C release s0",
            "C done",
        ],
    );
}

#[test]
fn stages_3_items_5() {
    check::<3, 1>(
        5,
        &[
            "P acquire s0 lap1",
            "P commit s0",
            "P acquire s1 lap1",
            "P commit s1",
            "P acquire s2 lap1",
            "P commit s2",
            "P blocked s0 lap2",
            "C wait s0 lap0",
            "C release s0",
            "C wait s1 lap0",
            "C release s1",
            "C wait s2 lap0",
            "C release s2",
            "C blocked s0 lap1",
            "P acquire s0 lap2",
            "P commit s0",
            "P acquire s1 lap2",
            "P commit s1",
            "P done",
            "C wait s0 lap1",
            "C release s0",
            "C wait s1 lap1",
            "C release s1",
            "C done",
        ],
    );
}

#[test]
fn stages_2_items_0() {
    check::<2, 1>(0, &["P done", "C done"]);
}

#[test]
fn stages_2_items_1() {
    check::<2, 1>(
        1,
        &[
            "P acquire s0 lap1",
            "P commit s0",
            "P done",
            "C wait s0 lap0",
            "C release s0",
            "C done",
        ],
    );
}

#[test]
fn stages_1_items_2_consumers_2() {
    // The producer stays blocked after the first consumer's release: the empty signal needs
    // both consumers' arrivals.
    check::<1, 2>(
        2,
        &[
            "P acquire s0 lap1",
            "P commit s0",
            "P blocked s0 lap2",
            "C0 wait s0 lap0",
            "C0 release s0",
            "C0 blocked s0 lap1",
            "P blocked s0 lap2",
            "C1 wait s0 lap0",
            "C1 release s0",
            "C1 blocked s0 lap1",
            "P acquire s0 lap2",
            "P commit s0",
            "P done",
            "C0 wait s0 lap1",
            "C0 release s0",
            "C0 done",
            "C1 wait s0 lap1",
            "C1 release s0",
            "C1 done",
        ],
    );
}

#[test]
fn stages_2_items_3_consumers_2() {
    check::<2, 2>(
        3,
        &[
            "P acquire s0 lap1",
            "P commit s0",
            "P acquire s1 lap1",
            "P commit s1",
            "P blocked s0 lap2",
            "C0 wait s0 lap0",
            "C0 release s0",
            "C0 wait s1 lap0",
            "C0 release s1",
            "C0 blocked s0 lap1",
            "P blocked s0 lap2",
            "C1 wait s0 lap0",
            "C1 release s0",
            "C1 wait s1 lap0",
            "C1 release s1",
            "C1 blocked s0 lap1",
            "P acquire s0 lap2",
            "P commit s0",
            "P done",
            "C0 wait s0 lap1",
            "C0 release s0",
            "C0 done",
            "C1 wait s0 lap1",
            "C1 release s0",
            "C1 done",
        ],
    );
}
