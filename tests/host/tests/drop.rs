//! The run-time drop check of stage handles on the host (`panic = "unwind"`).
//!
//! On GPU targets dropping an unreleased `ProducerStage`/`ConsumerStage` does not compile; on
//! the host it panics, unless the thread is already panicking (then a second panic would abort
//! the process, so the check stays quiet). A dropped handle makes no arrival.

// Loom's atomics only work inside a loom model: under `--cfg loom` only `loom.rs` runs.
#![cfg(not(loom))]

use std::panic::{AssertUnwindSafe, catch_unwind};

use gpu_pipeline::{HostCounterBackend, HostMbarBackend, ProducerConsumerPipeline};
use protocol_tests::{HostBackend, Ring, signal_state};

/// The text both handles' drop panics contain.
const DROPPED: &str = "dropped without being released";

type Mbar = HostMbarBackend<1, 1>;
type Counter = HostCounterBackend<1, 1>;

/// A 2-slot ring with one pipeline value playing both sides.
fn ring<B: HostBackend>() -> (Ring<2, B, ()>, ProducerConsumerPipeline<2, B>) {
    let ring = Ring::<2, B, ()>::new(|_| ());
    // SAFETY: the value is only used while the ring lives (the callers drop both together;
    // the value is never used after the ring in any test) and plays both sides, 1 + 1 arrivals.
    let pipe = unsafe { ring.pipeline() };
    (ring, pipe)
}

#[test]
#[should_panic(expected = "a ProducerStage was dropped without being released")]
fn producer_stage_dropped_unreleased_panics_mbar() {
    let (_ring, pipe) = ring::<Mbar>();
    let stage = pipe.acquire_producer();
    drop(stage);
}

#[test]
#[should_panic(expected = "a ProducerStage was dropped without being released")]
fn producer_stage_dropped_unreleased_panics_counter() {
    let (_ring, pipe) = ring::<Counter>();
    let _ = pipe.acquire_producer();
}

#[test]
#[should_panic(expected = "a ConsumerStage was dropped without being released")]
fn consumer_stage_dropped_unreleased_panics_mbar() {
    let (_ring, pipe) = ring::<Mbar>();
    pipe.produce(|_| ());
    let stage = pipe.acquire_consumer();
    drop(stage);
}

#[test]
#[should_panic(expected = "a ConsumerStage was dropped without being released")]
fn consumer_stage_dropped_unreleased_panics_counter() {
    let (_ring, pipe) = ring::<Counter>();
    pipe.produce(|_| ());
    let _ = pipe.acquire_consumer();
}

/// A function that forgets the release on one branch: the classic bug the check is for.
fn consume_unless<B: HostBackend>(pipe: &mut ProducerConsumerPipeline<2, B>, skip: bool) {
    let stage = pipe.acquire_consumer();
    if skip {
        return; // BUG on purpose: the handle is dropped here.
    }
    stage.release();
}

#[test]
fn a_forgotten_release_on_one_branch_panics_only_on_that_branch() {
    fn check<B: HostBackend>() {
        let (_ring, mut pipe) = ring::<B>();
        pipe.produce(|_| ());
        pipe.produce(|_| ());
        consume_unless(&mut pipe, false);
        let panic = catch_unwind(AssertUnwindSafe(|| consume_unless(&mut pipe, true)))
            .expect_err("the dropped ConsumerStage did not panic");
        let message = panic
            .downcast_ref::<String>()
            .expect("a formatted panic message");
        assert!(message.contains(DROPPED), "{}: {message}", B::NAME);
        assert!(
            message.contains("hangs the producer"),
            "{}: {message}",
            B::NAME
        );
        // The dropped handle made no arrival: slot 1 was filled but never released.
        assert_eq!(
            signal_state::<B>(&pipe.empty_barrier(0), 1),
            (1, 0),
            "{}",
            B::NAME
        );
        assert_eq!(
            signal_state::<B>(&pipe.empty_barrier(1), 1),
            (0, 0),
            "{}",
            B::NAME
        );
    }
    check::<Mbar>();
    check::<Counter>();
}

#[test]
fn released_handles_and_scopes_do_not_panic() {
    fn check<B: HostBackend>() {
        let (_ring, pipe) = ring::<B>();
        for _ in 0..3 {
            pipe.acquire_producer().release();
            pipe.acquire_consumer().release();
            pipe.produce(|_| ());
            pipe.consume(|_| ());
            pipe.produce_explicit(|stage| stage.arrive());
            pipe.consume_explicit(|stage| stage.arrive());
        }
        // 9 items through 2 slots: 5 and 4, each filled and released once.
        assert_eq!(
            signal_state::<B>(&pipe.full_barrier(0), 1),
            (5, 0),
            "{}",
            B::NAME
        );
        assert_eq!(
            signal_state::<B>(&pipe.empty_barrier(1), 1),
            (4, 0),
            "{}",
            B::NAME
        );
    }
    check::<Mbar>();
    check::<Counter>();
}

#[test]
fn release_without_signal_after_explicit_arrive_moves_the_other_side() {
    fn check<B: HostBackend>() {
        let (_ring, pipe) = ring::<B>();
        for lap in 0..3u64 {
            for slot in 0..2 {
                let stage = pipe.acquire_producer();
                stage.arrive();
                stage.release_without_signal();
                assert_eq!(
                    signal_state::<B>(&pipe.full_barrier(slot), 1),
                    (lap + 1, 0),
                    "{} full[{slot}]",
                    B::NAME
                );
                assert!(
                    pipe.try_wait_producer(),
                    "{}: the consumer sees the explicit arrival",
                    B::NAME
                );
                let stage = pipe.acquire_consumer();
                stage.arrive();
                stage.release_without_signal();
                assert_eq!(
                    signal_state::<B>(&pipe.empty_barrier(slot), 1),
                    (lap + 1, 0),
                    "{} empty[{slot}]",
                    B::NAME
                );
            }
        }
        assert_eq!(pipe.producer_cursor().lap(), 4);
        assert_eq!(pipe.consumer_cursor().lap(), 3);
    }
    check::<Mbar>();
    check::<Counter>();
}

#[test]
fn release_without_signal_and_no_arrival_leaves_the_other_side_waiting() {
    fn check<B: HostBackend>() {
        let (_ring, pipe) = ring::<B>();
        pipe.acquire_producer().release_without_signal();
        assert_eq!(
            pipe.producer_stage(),
            1,
            "{}: the producer stepped",
            B::NAME
        );
        assert!(
            !pipe.try_wait_producer(),
            "{}: no arrival, so the consumer must wait",
            B::NAME
        );
        assert_eq!(
            signal_state::<B>(&pipe.full_barrier(0), 1),
            (0, 0),
            "{}",
            B::NAME
        );
    }
    check::<Mbar>();
    check::<Counter>();
}

/// A handle alive while its thread panics is dropped during unwinding; the check must stay
/// quiet (a panic while panicking aborts the whole test binary), and the original panic must
/// come through.
#[test]
fn handle_dropped_while_panicking_does_not_abort() {
    fn check<B: HostBackend>() {
        let worker = std::thread::spawn(|| {
            let (_ring, pipe) = ring::<B>();
            let _stage = pipe.acquire_producer();
            panic!("original panic with a producer stage held");
        });
        let payload = worker.join().expect_err("the worker panicked");
        assert_eq!(
            payload.downcast_ref::<&str>(),
            Some(&"original panic with a producer stage held"),
            "{}",
            B::NAME
        );

        let (_ring, pipe) = ring::<B>();
        pipe.produce(|_| ());
        let payload = catch_unwind(AssertUnwindSafe(|| {
            let _stage = pipe.acquire_consumer();
            panic!("original panic with a consumer stage held");
        }))
        .expect_err("the closure panicked");
        assert_eq!(
            payload.downcast_ref::<&str>(),
            Some(&"original panic with a consumer stage held"),
            "{}",
            B::NAME
        );
    }
    check::<Mbar>();
    check::<Counter>();
}

/// A panic inside a `produce`/`consume` scope unwinds through the scope's own handle: no
/// arrival is made. The cursor moved on when the scope acquired its stage (acquire steps), so the
/// skipped slot is never signalled: after a panic the pipeline is not usable, only unwound safely.
#[test]
fn panic_inside_a_scope_propagates_without_abort_and_without_arrival() {
    fn check<B: HostBackend>() {
        let (_ring, pipe) = ring::<B>();
        pipe.produce(|_| ());
        let payload = catch_unwind(AssertUnwindSafe(|| {
            pipe.consume(|_| panic!("panic in consume"))
        }))
        .expect_err("the scope panicked");
        assert_eq!(
            payload.downcast_ref::<&str>(),
            Some(&"panic in consume"),
            "{}",
            B::NAME
        );
        assert_eq!(
            signal_state::<B>(&pipe.empty_barrier(0), 1),
            (0, 0),
            "{}: no arrival",
            B::NAME
        );
        assert_eq!(pipe.consumer_stage(), 1, "{}: stepped at acquire", B::NAME);

        let payload = catch_unwind(AssertUnwindSafe(|| {
            pipe.produce(|_| panic!("panic in produce"))
        }))
        .expect_err("the scope panicked");
        assert_eq!(
            payload.downcast_ref::<&str>(),
            Some(&"panic in produce"),
            "{}",
            B::NAME
        );
        assert_eq!(
            signal_state::<B>(&pipe.full_barrier(1), 1),
            (0, 0),
            "{}: no arrival",
            B::NAME
        );
        assert_eq!(pipe.producer_stage(), 0, "{}: stepped at acquire", B::NAME);
    }
    check::<Mbar>();
    check::<Counter>();
}
