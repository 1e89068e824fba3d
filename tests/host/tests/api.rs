//! Single-threaded facts of the public API on both host backends: sizes, the start
//! convention, cursor progression, the try-waits, and what the barrier handles show.
//!
//! One thread may hold several pipeline values over one storage (a producer value and a
//! consumer value, or two producer values for a producer arrive count of 2): each value keeps
//! its own cursors, so the thread plays several threads of a kernel, one after the other.

// Loom's atomics only work inside a loom model: under `--cfg loom` only `loom.rs` runs.
#![cfg(not(loom))]

use gpu_pipeline::{
    Consumer, Cursor, HostCounterBackend, HostMbarBackend, PipelineBackend, Producer,
    ProducerConsumerPipeline,
};
use protocol_tests::{HostBackend, Ring, run_with_watchdog, signal_state};

/// Calls `$check::<STAGES, Backend>()` for stage counts 1, 2, 3, 4, 8 on both backends with
/// arrive counts `$p`, `$c`.
macro_rules! for_all_stages_and_backends {
    ($check:ident, $p:literal, $c:literal) => {
        $check::<1, HostMbarBackend<$p, $c>>();
        $check::<2, HostMbarBackend<$p, $c>>();
        $check::<3, HostMbarBackend<$p, $c>>();
        $check::<4, HostMbarBackend<$p, $c>>();
        $check::<8, HostMbarBackend<$p, $c>>();
        $check::<1, HostCounterBackend<$p, $c>>();
        $check::<2, HostCounterBackend<$p, $c>>();
        $check::<3, HostCounterBackend<$p, $c>>();
        $check::<4, HostCounterBackend<$p, $c>>();
        $check::<8, HostCounterBackend<$p, $c>>();
    };
}

// ------------------------------------------------------------------------------------ sizes

fn sizes<const STAGES: usize, B: HostBackend>() {
    type Pipe<const S: usize, B> = ProducerConsumerPipeline<S, B>;
    // Two 8-byte signals per stage; checked builds add the diagnostics word (host backends keep
    // no shadows: their signals are exact counts).
    let elems = 2 * STAGES + usize::from(cfg!(feature = "checked"));
    assert_eq!(
        Pipe::<STAGES, B>::SMEM_BYTES,
        elems * 8,
        "{} SMEM_BYTES, {STAGES} stages",
        B::NAME
    );
    assert_eq!(
        Pipe::<STAGES, B>::smem_bytes(),
        elems * 8,
        "{} smem_bytes(), {STAGES} stages",
        B::NAME
    );
    assert_eq!(Pipe::<STAGES, B>::STORAGE_ELEMS, elems);
    assert_eq!(gpu_pipeline::barrier_elems::<B>(STAGES), elems);
    assert_eq!(gpu_pipeline::barrier_bytes::<B>(STAGES), elems * 8);
    assert_eq!(std::mem::size_of::<B::Storage>(), 8);
}

#[test]
fn smem_bytes_is_two_signals_of_8_bytes_per_stage() {
    for_all_stages_and_backends!(sizes, 1, 1);
    for_all_stages_and_backends!(sizes, 4, 3);
}

#[test]
fn arrive_counts_are_the_backend_type_parameters() {
    assert_eq!(
        (
            HostMbarBackend::<3, 5>::PRODUCER_ARRIVALS,
            HostMbarBackend::<3, 5>::CONSUMER_ARRIVALS
        ),
        (3, 5)
    );
    assert_eq!(
        (
            HostCounterBackend::<7, 2>::PRODUCER_ARRIVALS,
            HostCounterBackend::<7, 2>::CONSUMER_ARRIVALS
        ),
        (7, 2)
    );
    assert_eq!(HostMbarBackend::<1, 1>::MAX_ARRIVALS, (1 << 20) - 1);
    assert_eq!(HostCounterBackend::<1, 1>::MAX_ARRIVALS, 1024);
}

// ------------------------------------------------------------------------------------ start convention

/// The producer's first pass never blocks; its second pass blocks on each slot until the
/// consumer released that slot, and not longer.
fn first_pass<const STAGES: usize, B: HostBackend>() {
    let ring = Ring::<STAGES, B, ()>::new(|_| ());
    // SAFETY: one producer value and one consumer value (arrive counts 1, 1), used while `ring` lives.
    let (producer, consumer) = unsafe { (ring.pipeline(), ring.pipeline()) };
    let what = format!("{}, {STAGES} stages", B::NAME);
    for stage in 0..STAGES as u32 {
        assert_eq!(producer.producer_cursor().lap(), 1, "{what}");
        assert!(
            producer.try_wait_consumer(),
            "{what}: first pass blocked at slot {stage}"
        );
        producer.produce(|view| assert_eq!(view.index(), stage));
    }
    // Second pass: slot 0 on lap 2 waits for the consumer's release of lap 0.
    assert_eq!(
        (producer.producer_stage(), producer.producer_cursor().lap()),
        (0, 2),
        "{what}"
    );
    assert!(
        !producer.try_wait_consumer(),
        "{what}: second pass did not wait for the consumer"
    );
    for stage in 0..STAGES as u32 {
        // The consumer's wait passes on every filled slot (lap 0).
        assert!(
            consumer.try_wait_producer(),
            "{what}: slot {stage} filled but not ready"
        );
        consumer.consume(|view| assert_eq!(view.index(), stage));
        // Releasing slot `stage` frees exactly that slot for the producer's second pass.
        assert_eq!(producer.producer_stage(), stage);
        assert!(
            producer.try_wait_consumer(),
            "{what}: slot {stage} released but still blocked"
        );
        producer.produce(|_| ());
        if stage + 1 < STAGES as u32 {
            assert!(
                !producer.try_wait_consumer(),
                "{what}: slot {} not yet released but ready",
                stage + 1
            );
        }
    }
}

#[test]
fn producer_first_pass_never_blocks_and_second_pass_waits_for_release() {
    for_all_stages_and_backends!(first_pass, 1, 1);
}

/// The consumer's wait fails before any commit, on every slot it could be on.
fn nothing_before_commit<const STAGES: usize, B: HostBackend>() {
    let ring = Ring::<STAGES, B, ()>::new(|_| ());
    // SAFETY: as in `first_pass`.
    let (producer, consumer) = unsafe { (ring.pipeline(), ring.pipeline()) };
    let what = format!("{}, {STAGES} stages", B::NAME);
    assert!(
        !consumer.try_wait_producer(),
        "{what}: consumer ready before any commit"
    );
    // Acquiring without committing does not make the slot ready.
    let stage = producer.acquire_producer();
    assert!(
        !consumer.try_wait_producer(),
        "{what}: consumer ready after acquire, before commit"
    );
    stage.release();
    assert!(
        consumer.try_wait_producer(),
        "{what}: consumer not ready after commit"
    );
}

#[test]
fn try_wait_producer_is_false_before_any_commit() {
    for_all_stages_and_backends!(nothing_before_commit, 1, 1);
}

// ------------------------------------------------------------------------------------ cursors

/// Both cursors move slot by slot and lap by lap, through every API path.
fn cursors<const STAGES: usize, B: HostBackend>() {
    let ring = Ring::<STAGES, B, ()>::new(|_| ());
    // SAFETY: as in `first_pass`.
    let mut pipe = unsafe { ring.pipeline() };
    let what = format!("{}, {STAGES} stages", B::NAME);
    assert_eq!(pipe.producer_cursor(), Cursor::<STAGES, Producer>::start());
    assert_eq!(pipe.consumer_cursor(), Cursor::<STAGES, Consumer>::start());
    let items = 3 * STAGES as u32 + 1;
    for item in 0..items {
        let (stage, lap) = (item % STAGES as u32, item / STAGES as u32);
        let p = pipe.producer_cursor();
        assert_eq!(
            (p.stage(), p.lap(), p.parity()),
            (stage, lap + 1, (lap + 1) & 1),
            "{what}: producer, item {item}"
        );
        assert_eq!(pipe.producer_stage(), stage);
        match item % 4 {
            0 => pipe.produce(|view| assert_eq!(view.index(), stage)),
            1 => {
                let handle = pipe.acquire_producer();
                assert_eq!(handle.index(), stage);
                handle.release();
            }
            2 => pipe.produce_explicit(|handle| handle.arrive()),
            _ => {
                pipe.wait_consumer();
                pipe.producer_signal();
                pipe.producer_step();
            }
        }
        let c = pipe.consumer_cursor();
        assert_eq!(
            (c.stage(), c.lap(), c.parity()),
            (stage, lap, lap & 1),
            "{what}: consumer, item {item}"
        );
        assert_eq!(pipe.consumer_stage(), stage);
        match item % 4 {
            0 => pipe.consume(|view| assert_eq!(view.index(), stage)),
            1 => {
                let handle = pipe.acquire_consumer();
                assert_eq!(handle.index(), stage);
                handle.release();
            }
            2 => pipe.consume_explicit(|handle| handle.arrive()),
            _ => {
                pipe.wait_producer();
                pipe.consumer_signal();
                pipe.consumer_step();
            }
        }
    }
    let expect = |start: u32| (items % STAGES as u32, start + items / STAGES as u32);
    let (p, c) = (pipe.producer_cursor(), pipe.consumer_cursor());
    assert_eq!(
        (p.stage(), p.lap()),
        expect(1),
        "{what}: producer at the end"
    );
    assert_eq!(
        (c.stage(), c.lap()),
        expect(0),
        "{what}: consumer at the end"
    );
}

#[test]
fn cursors_progress_by_stage_and_lap_on_every_api_path() {
    for_all_stages_and_backends!(cursors, 1, 1);
}

/// `*_signal_and_step` and the `_ticks` and `_if_needed` waits move the cursors like the others.
fn sync_only_paths<const STAGES: usize, B: HostBackend>() {
    let ring = Ring::<STAGES, B, ()>::new(|_| ());
    // SAFETY: as in `first_pass`.
    let mut pipe = unsafe { ring.pipeline() };
    let what = format!("{}, {STAGES} stages", B::NAME);
    for item in 0..2 * STAGES as u32 + 1 {
        assert_eq!(pipe.producer_stage(), item % STAGES as u32, "{what}");
        if item % 2 == 0 {
            pipe.producer_signal_and_step();
            pipe.consumer_signal_and_step();
        } else {
            let ready = pipe.try_wait_consumer();
            assert!(ready, "{what}: item {item}");
            pipe.wait_consumer_if_needed(ready);
            pipe.wait_consumer_ticks(100);
            pipe.producer_signal();
            pipe.producer_step();
            let ready = pipe.try_wait_producer();
            assert!(ready, "{what}: item {item}");
            pipe.wait_producer_if_needed(ready);
            pipe.wait_producer_ticks(100);
            pipe.consumer_signal();
            pipe.consumer_step();
        }
        assert_eq!(
            pipe.consumer_cursor().lap(),
            (item + 1) / STAGES as u32,
            "{what}"
        );
    }
}

#[test]
fn signal_and_step_ticks_and_if_needed_waits_move_the_cursors() {
    for_all_stages_and_backends!(sync_only_paths, 1, 1);
}

#[test]
fn wait_if_needed_with_ready_true_does_not_wait() {
    // Nothing was produced, so a real wait would never return: the watchdog turns that into
    // a failure.
    let ring = std::sync::Arc::new(Ring::<2, HostMbarBackend<1, 1>, ()>::new(|_| ()));
    let worker = ring.clone();
    run_with_watchdog(
        "wait_producer_if_needed(true) on an empty ring",
        protocol_tests::STALL,
        vec![(
            "consumer".to_string(),
            Box::new(move || {
                // SAFETY: `worker` keeps the ring alive; one consumer value.
                let pipe = unsafe { worker.pipeline() };
                assert!(!pipe.try_wait_producer());
                pipe.wait_producer_if_needed(true);
            }),
        )],
        // One call, no items: the stall window bounds the whole call.
        || (0, "blocked in wait_producer_if_needed".to_string()),
    );
}

// ------------------------------------------------------------------------------------ barrier handles

#[test]
fn mbarrier_handles_show_phase_and_pending_arrivals() {
    // Two producers, three consumers: one thread plays all five in turn.
    let ring = Ring::<2, HostMbarBackend<2, 3>, ()>::new(|_| ());
    // SAFETY: two producer values and three consumer values, as the arrive counts say.
    let p: Vec<_> = (0..2).map(|_| unsafe { ring.pipeline() }).collect();
    // SAFETY: as above.
    let mut c: Vec<_> = (0..3).map(|_| unsafe { ring.pipeline() }).collect();
    let full0 = p[0].full_barrier(0);
    let empty0 = p[0].empty_barrier(0);
    let full1 = p[0].full_barrier(1);
    assert_eq!(
        (full0.phase(), full0.pending()),
        (0, 2),
        "fresh full: phase 0, 2 pending"
    );
    assert_eq!(
        (empty0.phase(), empty0.pending()),
        (0, 3),
        "fresh empty: phase 0, 3 pending"
    );
    // A fresh barrier is in phase 0: parity 1 ("the phase before") has completed, parity 0 not.
    assert!(full0.try_wait_parity(1));
    assert!(!full0.try_wait_parity(0));

    p[0].produce(|view| assert_eq!(view.barrier().pending(), 2, "the view's barrier is full[0]"));
    assert_eq!(
        (full0.phase(), full0.pending()),
        (0, 1),
        "one of two producer arrivals"
    );
    assert!(
        !c[0].try_wait_producer(),
        "consumers wait for both producers"
    );
    p[1].produce(|_| ());
    assert_eq!(
        (full0.phase(), full0.pending()),
        (1, 2),
        "phase 0 complete, pending reloaded"
    );
    assert!(full0.try_wait_parity(0));
    assert!(!full0.try_wait_parity(1));
    assert_eq!(
        (full1.phase(), full1.pending()),
        (0, 2),
        "full[1] untouched"
    );

    for (i, consumer) in c.iter_mut().enumerate() {
        assert!(consumer.try_wait_producer());
        let stage = consumer.acquire_consumer();
        assert_eq!(
            stage.barrier().pending(),
            3 - i as u32,
            "the consumer handle's barrier is empty[0]"
        );
        stage.release();
    }
    assert_eq!(
        (empty0.phase(), empty0.pending()),
        (1, 3),
        "all three consumers released slot 0"
    );
    // The barrier of the other side is the same object seen from every pipeline value.
    assert_eq!(c[2].full_barrier(0).phase(), 1);
    assert_eq!(c[2].empty_barrier(0).phase(), 1);

    // An arrival through the handle counts like a signal.
    full1.arrive();
    assert_eq!((full1.phase(), full1.pending()), (0, 1));
}

#[test]
fn counter_handles_show_arrivals_since_init() {
    let ring = Ring::<2, HostCounterBackend<2, 3>, ()>::new(|_| ());
    // SAFETY: two producer values and three consumer values, as the arrive counts say.
    let p: Vec<_> = (0..2).map(|_| unsafe { ring.pipeline() }).collect();
    // SAFETY: as above.
    let mut c: Vec<_> = (0..3).map(|_| unsafe { ring.pipeline() }).collect();
    let (full0, empty0, full1) = (
        p[0].full_barrier(0),
        p[0].empty_barrier(0),
        p[0].full_barrier(1),
    );
    assert_eq!((full0.value(), empty0.value(), full1.value()), (0, 0, 0));
    // A consumer on lap 0 needs 2 producer arrivals; a producer on lap 1 needs 0 consumer arrivals.
    assert!(!full0.reached(2) && full0.reached(0) && empty0.reached(0));

    p[0].produce(|view| assert_eq!(view.barrier().value(), 0, "the view's barrier is full[0]"));
    assert_eq!(full0.value(), 1);
    assert!(
        !c[0].try_wait_producer(),
        "consumers wait for both producers"
    );
    p[1].produce(|_| ());
    assert_eq!(full0.value(), 2);
    assert!(c[0].try_wait_producer());
    for (i, consumer) in c.iter_mut().enumerate() {
        consumer.consume(|view| {
            assert_eq!(
                view.barrier().value(),
                i as u64,
                "the view's barrier is empty[0]"
            )
        });
    }
    assert_eq!((full0.value(), empty0.value(), full1.value()), (2, 3, 0));

    // Both producers fill slot 1; then they are on slot 0, lap 2, which needs empty[0] >= 3.
    p[0].produce(|_| ());
    p[1].produce(|_| ());
    assert_eq!(full1.value(), 2);
    assert_eq!(
        (p[0].producer_stage(), p[0].producer_cursor().lap()),
        (0, 2)
    );
    assert!(
        p[0].try_wait_consumer() && p[1].try_wait_consumer(),
        "slot 0, lap 2: the 3 releases are in"
    );
    assert_eq!(c[0].consumer_stage(), 1);
    assert!(c[0].try_wait_producer(), "slot 1 filled by both producers");
    full1.arrive_n(2);
    assert_eq!(full1.value(), 4, "arrive_n adds n");
    assert!(full1.reached(4) && !full1.reached(5));
}

/// After `n` items through a 1x1 ring, the handles of both backends show the same state.
fn states_after<const STAGES: usize, B: HostBackend>(n: u32) -> Vec<((u64, u32), (u64, u32))> {
    let ring = Ring::<STAGES, B, ()>::new(|_| ());
    // SAFETY: one value, playing both sides in turn.
    let pipe = unsafe { ring.pipeline() };
    for _ in 0..n {
        pipe.produce(|_| ());
        pipe.consume(|_| ());
    }
    pipe.produce(|_| ()); // one more fill, not consumed
    (0..STAGES as u32)
        .map(|s| {
            (
                signal_state::<B>(&pipe.full_barrier(s), 1),
                signal_state::<B>(&pipe.empty_barrier(s), 1),
            )
        })
        .collect()
}

#[test]
fn both_backends_count_the_same_completions() {
    let mbar = states_after::<3, HostMbarBackend<1, 1>>(7);
    let counter = states_after::<3, HostCounterBackend<1, 1>>(7);
    assert_eq!(mbar, counter);
    // 7 items through 3 slots (3, 2, 2), then an 8th fill of slot 1.
    assert_eq!(
        mbar,
        vec![((3, 0), (3, 0)), ((3, 0), (2, 0)), ((2, 0), (2, 0))]
    );
}

// ------------------------------------------------------------------------------------ known bugs

/// `full_barrier(stage)` and `empty_barrier(stage)` are safe: an out-of-range index panics in
/// every build (it once was only a `debug_assert!`, which let safe code build a handle past the
/// barrier storage in release builds).
#[test]
#[should_panic(expected = "stage index out of range")]
fn full_barrier_rejects_an_out_of_range_stage_in_every_build() {
    let ring = Ring::<2, HostMbarBackend<1, 1>, ()>::new(|_| ());
    // SAFETY: one value, used while `ring` lives.
    let pipe = unsafe { ring.pipeline() };
    let _out_of_range = pipe.full_barrier(2);
}
