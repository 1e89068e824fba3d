//! Stress tests: real threads move sequence-numbered, checksummed data through the ring.
//!
//! One helper, [`run`], runs a configuration: `STAGES` slots, `producers` producer threads and
//! `consumers` consumer threads (the backend's arrive counts, as const generics), `items`
//! items, and one API path ([`Api`]). Each slot has one part per producer thread; producer `i`
//! writes `(sequence number, i, value)` into part `i`, where the values are an xorshift stream
//! seeded from the clock for every run. Every consumer reads all parts of every item and checks
//! the exact sequence number it expects next (each item in order, exactly once) and the producer
//! id of each part, and folds the values into a checksum that is compared at the end with the
//! checksum computed independently from the seed. The slots are plain `UnsafeCell` memory, so a
//! protocol bug is a real data race, visible as torn or stale parts.
//!
//! After the threads are joined, the run checks the end state: each slot holds the last item
//! that went through it (or the poison it started with, when none did), and every barrier
//! completed exactly one phase per item that went through its slot, with no arrival left over.
//!
//! A watchdog turns a hang (no item moved for [`STALL`]) into a failure that names the
//! configuration, the seed and how far each thread got; a run that is merely slow (a loaded
//! machine) is never failed for its length.
//!
//! Cases are named by configuration: `stages_3_producers_2_consumers_4::counter_scopes` runs
//! 3 stages, 2 producers, 4 consumers on `HostCounterBackend` through `produce`/`consume`.

// Loom's atomics only work inside a loom model: under `--cfg loom` only `loom.rs` runs.
#![cfg(not(loom))]

use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use gpu_pipeline::{HostCounterBackend, HostMbarBackend, ProducerConsumerPipeline};
use protocol_tests::{
    HostBackend, Ring, Worker, XorShift64, run_with_watchdog, seed_from_time, signal_state,
};

/// Items per run of the main cases: each configuration's main API path on each backend.
/// `cargo xtask` runs the tests with `--release`; debug builds (the edit-compile-test loop) run
/// a fifth of it.
const ITEMS: u64 = if cfg!(debug_assertions) {
    20_000
} else {
    100_000
};

/// Items per run of the other API paths of each configuration.
const SHORT_ITEMS: u64 = if cfg!(debug_assertions) { 1_000 } else { 5_000 };

/// The most producer threads a case uses: the number of parts in a slot.
const MAX_PRODUCERS: usize = 4;

/// A run in which no item moved for this long has hung (a healthy item takes microseconds; a
/// run on a loaded machine may take minutes and still never stall for this long).
const STALL: Duration = protocol_tests::STALL;

/// How often a try-wait loop probes before it falls back to the blocking `*_if_needed` wait.
const TRY_WAIT_SPINS: u32 = 16;

/// What producer `producer` writes into its part of a slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Part {
    seq: u64,
    producer: u64,
    value: u64,
}

/// A part no producer wrote: slots start with it.
const POISON: Part = Part {
    seq: u64::MAX,
    producer: u64::MAX,
    value: 0xdead_beef_dead_beef,
};

/// One slot: a part per producer thread.
type Payload = [Part; MAX_PRODUCERS];

/// The API path both sides use in a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Api {
    /// `acquire_producer`/`acquire_consumer`, then `release()` of the stage handle.
    Handles,
    /// `produce(|view| ..)` / `consume(|view| ..)`.
    Scopes,
    /// `produce_explicit`/`consume_explicit`, the closure arriving itself with `stage.arrive()`.
    Explicit,
    /// `wait_*` (every other item `wait_*_ticks`), then `*_signal` and `*_step`.
    Direct,
    /// `try_wait_*` probes, then `wait_*_if_needed`, then `*_signal` and `*_step`.
    TryWait,
}

/// The value stream of producer `producer` in a run seeded with `seed`.
fn values(seed: u64, producer: usize) -> XorShift64 {
    XorShift64::new(seed ^ (producer as u64 + 1).wrapping_mul(0xa076_1d64_78bd_642f))
}

/// Folds one part's value into a consumer's checksum (order-sensitive).
fn fold(checksum: u64, producer: usize, value: u64) -> u64 {
    checksum
        .wrapping_mul(0x100_0000_01b3)
        .wrapping_add(value.rotate_left(producer as u32 * 7) ^ producer as u64)
}

/// The checksum every consumer must end with, computed from the seed alone.
fn expected_checksum(seed: u64, producers: usize, items: u64) -> u64 {
    let mut streams: Vec<XorShift64> = (0..producers).map(|i| values(seed, i)).collect();
    let mut checksum = 0;
    for _ in 0..items {
        for (i, stream) in streams.iter_mut().enumerate() {
            checksum = fold(checksum, i, stream.next());
        }
    }
    checksum
}

/// Probes `ready` a few times (spinning in between) and says whether it held.
fn probe(ready: impl Fn() -> bool) -> bool {
    for _ in 0..TRY_WAIT_SPINS {
        if ready() {
            return true;
        }
        std::hint::spin_loop();
    }
    false
}

/// What the threads of one run share.
struct Shared<const STAGES: usize, B: HostBackend> {
    ring: Ring<STAGES, B, Payload>,
    /// Items each thread finished: producers first, then consumers.
    progress: Vec<AtomicU64>,
    /// The first few data errors the consumers saw (they keep going so that the run ends).
    errors: Mutex<Vec<String>>,
    error_count: AtomicU64,
}

impl<const STAGES: usize, B: HostBackend> Shared<STAGES, B> {
    fn report(&self, message: String) {
        if self.error_count.fetch_add(1, Ordering::Relaxed) < 8 {
            self.errors.lock().unwrap().push(message);
        }
    }
}

/// One producer thread: fills its part of `items` slots through `api`.
fn producer<const STAGES: usize, B: HostBackend>(
    shared: &Shared<STAGES, B>,
    id: usize,
    items: u64,
    api: Api,
    seed: u64,
) {
    // SAFETY: the caller keeps `shared` (and so the ring) alive for the whole run; this thread is
    // one of the `PRODUCER_ARRIVALS` producer threads and passes every stage.
    let mut pipe = unsafe { shared.ring.pipeline() };
    let mut stream = values(seed, id);
    for seq in 0..items {
        let part = Part {
            seq,
            producer: id as u64,
            value: stream.next(),
        };
        let fill = |index: u32| {
            // SAFETY: this thread holds slot `index` as a producer (its wait returned and it has
            // not signalled yet), and only this thread writes part `id`.
            unsafe { shared.ring.slot(index).with_mut(|slot| (*slot)[id] = part) }
        };
        match api {
            Api::Handles => {
                let stage = pipe.acquire_producer();
                fill(stage.index());
                stage.release();
            }
            Api::Scopes => pipe.produce(|view| fill(view.index())),
            Api::Explicit => pipe.produce_explicit(|stage| {
                fill(stage.index());
                stage.arrive();
            }),
            Api::Direct => {
                if seq % 2 == 0 {
                    pipe.wait_consumer();
                } else {
                    pipe.wait_consumer_ticks(1_000);
                }
                fill(pipe.producer_stage());
                pipe.producer_signal();
                pipe.producer_step();
            }
            Api::TryWait => {
                let ready = probe(|| pipe.try_wait_consumer());
                pipe.wait_consumer_if_needed(ready);
                fill(pipe.producer_stage());
                pipe.producer_signal();
                pipe.producer_step();
            }
        }
        shared.progress[id].store(seq + 1, Ordering::Relaxed);
    }
}

/// One consumer thread: reads all parts of `items` slots through `api`, checks each, and
/// returns its checksum.
fn consumer<const STAGES: usize, B: HostBackend>(
    shared: &Shared<STAGES, B>,
    id: usize,
    producers: usize,
    items: u64,
    api: Api,
) -> u64 {
    // SAFETY: as in `producer`, for the consumer side.
    let mut pipe = unsafe { shared.ring.pipeline() };
    let read = |index: u32| -> Payload {
        // SAFETY: this thread holds slot `index` as a consumer (its wait returned and it has not
        // signalled yet); producers write it only after every consumer released it.
        unsafe { shared.ring.slot(index).with(|slot| *slot) }
    };
    let mut checksum = 0;
    for seq in 0..items {
        let payload = match api {
            Api::Handles => {
                let stage = pipe.acquire_consumer();
                let payload = read(stage.index());
                stage.release();
                payload
            }
            Api::Scopes => pipe.consume(|view| read(view.index())),
            Api::Explicit => pipe.consume_explicit(|stage| {
                let payload = read(stage.index());
                stage.arrive();
                payload
            }),
            Api::Direct => {
                if seq % 2 == 0 {
                    pipe.wait_producer();
                } else {
                    pipe.wait_producer_ticks(1_000);
                }
                let payload = read(pipe.consumer_stage());
                pipe.consumer_signal();
                pipe.consumer_step();
                payload
            }
            Api::TryWait => {
                let ready = probe(|| pipe.try_wait_producer());
                pipe.wait_producer_if_needed(ready);
                let payload = read(pipe.consumer_stage());
                pipe.consumer_signal();
                pipe.consumer_step();
                payload
            }
        };
        for (i, part) in payload.iter().take(producers).enumerate() {
            if part.seq != seq || part.producer != i as u64 {
                shared.report(format!(
                    "consumer {id} expected item {seq} from producer {i} in slot {}, found item {} from producer {}",
                    seq % STAGES as u64,
                    part.seq as i64,
                    part.producer as i64
                ));
            }
            checksum = fold(checksum, i, part.value);
        }
        shared.progress[producers + id].store(seq + 1, Ordering::Relaxed);
    }
    checksum
}

/// Runs one configuration and checks everything; panics with a message naming it otherwise.
/// Returns the number of items moved (each item is `producers` parts read by `consumers` threads).
fn run<const STAGES: usize, B: HostBackend>(
    producers: usize,
    consumers: usize,
    items: u64,
    api: Api,
) -> u64 {
    assert_eq!(
        producers as u32,
        B::PRODUCER_ARRIVALS,
        "one producer arrival per producer thread"
    );
    assert_eq!(
        consumers as u32,
        B::CONSUMER_ARRIVALS,
        "one consumer arrival per consumer thread"
    );
    assert!((1..=MAX_PRODUCERS).contains(&producers));
    let seed = seed_from_time();
    let config = format!(
        "stages {STAGES}, producers {producers}, consumers {consumers}, {}, api {api:?}, items {items}, seed {seed:#018x}",
        B::NAME
    );

    let shared = Arc::new(Shared::<STAGES, B> {
        ring: Ring::new(|_| [POISON; MAX_PRODUCERS]),
        progress: (0..producers + consumers)
            .map(|_| AtomicU64::new(0))
            .collect(),
        errors: Mutex::new(Vec::new()),
        error_count: AtomicU64::new(0),
    });

    let mut workers: Vec<Worker<Option<u64>>> = Vec::new();
    for id in 0..producers {
        let shared = shared.clone();
        workers.push((
            format!("producer {id}"),
            Box::new(move || {
                producer(&shared, id, items, api, seed);
                None
            }),
        ));
    }
    for id in 0..consumers {
        let shared = shared.clone();
        workers.push((
            format!("consumer {id}"),
            Box::new(move || Some(consumer(&shared, id, producers, items, api))),
        ));
    }
    let progress = || {
        let done: Vec<u64> = shared
            .progress
            .iter()
            .map(|p| p.load(Ordering::Relaxed))
            .collect();
        let description = format!(
            "producers {:?}, consumers {:?}",
            &done[..producers],
            &done[producers..]
        );
        (done.iter().sum(), description)
    };
    let results = run_with_watchdog(&config, STALL, workers, progress);

    let errors = shared.error_count.load(Ordering::Relaxed);
    assert!(
        errors == 0,
        "{config}: {errors} data errors, the first: {:#?}",
        shared.errors.lock().unwrap()
    );
    let expected = expected_checksum(seed, producers, items);
    for (id, checksum) in results.iter().skip(producers).enumerate() {
        assert_eq!(
            *checksum,
            Some(expected),
            "{config}: checksum of consumer {id}"
        );
    }

    // End state: every slot holds the last item that went through it, every signal completed
    // one phase per item through its slot and has no arrival left over.
    // SAFETY: all threads are joined; this value only reads signals.
    let pipe: ProducerConsumerPipeline<STAGES, B> = unsafe { shared.ring.pipeline() };
    for stage in 0..STAGES as u64 {
        let through = items / STAGES as u64 + u64::from(stage < items % STAGES as u64);
        // SAFETY: all threads are joined.
        let payload = unsafe { shared.ring.slot(stage as u32).with(|slot| *slot) };
        for (i, part) in payload.iter().enumerate() {
            if i >= producers || through == 0 {
                assert_eq!(*part, POISON, "{config}: slot {stage} part {i} was written");
            } else {
                assert_eq!(
                    (part.seq, part.producer),
                    ((through - 1) * STAGES as u64 + stage, i as u64),
                    "{config}: last item in slot {stage} part {i}"
                );
            }
        }
        let full = signal_state::<B>(&pipe.full_barrier(stage as u32), B::PRODUCER_ARRIVALS);
        let empty = signal_state::<B>(&pipe.empty_barrier(stage as u32), B::CONSUMER_ARRIVALS);
        assert_eq!(
            full,
            (through, 0),
            "{config}: full[{stage}] (completed phases, arrivals left over)"
        );
        assert_eq!(
            empty,
            (through, 0),
            "{config}: empty[{stage}] (completed phases, arrivals left over)"
        );
    }
    items
}

/// Runs one stress case: `ITEMS` items when `api` is the configuration's main path on this
/// backend, `SHORT_ITEMS` otherwise.
fn case<const STAGES: usize, B: HostBackend>(
    producers: usize,
    consumers: usize,
    api: Api,
    main: Option<Api>,
) {
    let items = if main == Some(api) {
        ITEMS
    } else {
        SHORT_ITEMS
    };
    run::<STAGES, B>(producers, consumers, items, api);
}

/// Instantiates the ten tests of one configuration: both backends, every API path. The main
/// path of each backend (`main mbar X, counter Y`) moves `ITEMS` items, the others `SHORT_ITEMS`;
/// `main none` runs every path short.
macro_rules! stress_cases {
    ($($name:ident: stages $s:literal, producers $p:literal, consumers $c:literal, main $main:tt;)*) => {$(
        mod $name {
            use super::*;
            type Mbar = HostMbarBackend<$p, $c>;
            type Counter = HostCounterBackend<$p, $c>;
            const MAIN: (Option<Api>, Option<Api>) = stress_cases!(@main $main);
            #[test] fn mbar_handles() { case::<$s, Mbar>($p, $c, Api::Handles, MAIN.0); }
            #[test] fn mbar_scopes() { case::<$s, Mbar>($p, $c, Api::Scopes, MAIN.0); }
            #[test] fn mbar_explicit() { case::<$s, Mbar>($p, $c, Api::Explicit, MAIN.0); }
            #[test] fn mbar_direct() { case::<$s, Mbar>($p, $c, Api::Direct, MAIN.0); }
            #[test] fn mbar_try_wait() { case::<$s, Mbar>($p, $c, Api::TryWait, MAIN.0); }
            #[test] fn counter_handles() { case::<$s, Counter>($p, $c, Api::Handles, MAIN.1); }
            #[test] fn counter_scopes() { case::<$s, Counter>($p, $c, Api::Scopes, MAIN.1); }
            #[test] fn counter_explicit() { case::<$s, Counter>($p, $c, Api::Explicit, MAIN.1); }
            #[test] fn counter_direct() { case::<$s, Counter>($p, $c, Api::Direct, MAIN.1); }
            #[test] fn counter_try_wait() { case::<$s, Counter>($p, $c, Api::TryWait, MAIN.1); }
        }
    )*};
    (@main none) => { (None, None) };
    (@main [$mbar:ident, $counter:ident]) => { (Some(Api::$mbar), Some(Api::$counter)) };
}

// The main paths form a Latin square: for each stage count and backend, the five required
// configurations (1x1, 1x4, 4x1, 2x3, 4x4) take the five API paths once each, and for each
// configuration and backend the five stage counts take the five paths once each.
stress_cases! {
    stages_1_producers_1_consumers_1: stages 1, producers 1, consumers 1, main [Handles, Scopes];
    stages_1_producers_1_consumers_4: stages 1, producers 1, consumers 4, main [Scopes, Explicit];
    stages_1_producers_4_consumers_1: stages 1, producers 4, consumers 1, main [Explicit, Direct];
    stages_1_producers_2_consumers_3: stages 1, producers 2, consumers 3, main [Direct, TryWait];
    stages_1_producers_4_consumers_4: stages 1, producers 4, consumers 4, main [TryWait, Handles];

    stages_2_producers_1_consumers_1: stages 2, producers 1, consumers 1, main [Explicit, Direct];
    stages_2_producers_1_consumers_4: stages 2, producers 1, consumers 4, main [Direct, TryWait];
    stages_2_producers_4_consumers_1: stages 2, producers 4, consumers 1, main [TryWait, Handles];
    stages_2_producers_2_consumers_3: stages 2, producers 2, consumers 3, main [Handles, Scopes];
    stages_2_producers_4_consumers_4: stages 2, producers 4, consumers 4, main [Scopes, Explicit];
    stages_2_producers_3_consumers_2: stages 2, producers 3, consumers 2, main none;

    stages_3_producers_1_consumers_1: stages 3, producers 1, consumers 1, main [TryWait, Handles];
    stages_3_producers_1_consumers_4: stages 3, producers 1, consumers 4, main [Handles, Scopes];
    stages_3_producers_4_consumers_1: stages 3, producers 4, consumers 1, main [Scopes, Explicit];
    stages_3_producers_2_consumers_3: stages 3, producers 2, consumers 3, main [Explicit, Direct];
    stages_3_producers_4_consumers_4: stages 3, producers 4, consumers 4, main [Direct, TryWait];
    stages_3_producers_1_consumers_2: stages 3, producers 1, consumers 2, main none;

    stages_4_producers_1_consumers_1: stages 4, producers 1, consumers 1, main [Scopes, Explicit];
    stages_4_producers_1_consumers_4: stages 4, producers 1, consumers 4, main [Explicit, Direct];
    stages_4_producers_4_consumers_1: stages 4, producers 4, consumers 1, main [Direct, TryWait];
    stages_4_producers_2_consumers_3: stages 4, producers 2, consumers 3, main [TryWait, Handles];
    stages_4_producers_4_consumers_4: stages 4, producers 4, consumers 4, main [Handles, Scopes];
    stages_4_producers_3_consumers_3: stages 4, producers 3, consumers 3, main none;

    stages_8_producers_1_consumers_1: stages 8, producers 1, consumers 1, main [Direct, TryWait];
    stages_8_producers_1_consumers_4: stages 8, producers 1, consumers 4, main [TryWait, Handles];
    stages_8_producers_4_consumers_1: stages 8, producers 4, consumers 1, main [Handles, Scopes];
    stages_8_producers_2_consumers_3: stages 8, producers 2, consumers 3, main [Scopes, Explicit];
    stages_8_producers_4_consumers_4: stages 8, producers 4, consumers 4, main [Explicit, Direct];
    stages_8_producers_2_consumers_1: stages 8, producers 2, consumers 1, main none;
}

// ------------------------------------------------------------------------ zero and one trip

/// Every API path, a few configurations, `items` items: each run must end, and its end state
/// (checked by `run`) must show `items` items through the ring: with 0, no barrier moved and
/// no slot was written; with 1, slot 0 holds item 0 and only its barriers completed one phase.
fn short_trips<const P: u32, const C: u32>(items: u64) {
    const APIS: [Api; 5] = [
        Api::Handles,
        Api::Scopes,
        Api::Explicit,
        Api::Direct,
        Api::TryWait,
    ];
    for api in APIS {
        let (p, c) = (P as usize, C as usize);
        run::<1, HostMbarBackend<P, C>>(p, c, items, api);
        run::<2, HostMbarBackend<P, C>>(p, c, items, api);
        run::<3, HostMbarBackend<P, C>>(p, c, items, api);
        run::<8, HostMbarBackend<P, C>>(p, c, items, api);
        run::<1, HostCounterBackend<P, C>>(p, c, items, api);
        run::<2, HostCounterBackend<P, C>>(p, c, items, api);
        run::<3, HostCounterBackend<P, C>>(p, c, items, api);
        run::<8, HostCounterBackend<P, C>>(p, c, items, api);
    }
}

#[test]
fn zero_trip_producers_1_consumers_1() {
    short_trips::<1, 1>(0);
}

#[test]
fn zero_trip_producers_2_consumers_3() {
    short_trips::<2, 3>(0);
}

#[test]
fn one_trip_producers_1_consumers_1() {
    short_trips::<1, 1>(1);
}

#[test]
fn one_trip_producers_2_consumers_3() {
    short_trips::<2, 3>(1);
}

#[test]
fn two_trips_producers_4_consumers_4() {
    short_trips::<4, 4>(2);
}

// ------------------------------------------------------------------------ sync-only roles

/// Sync-only roles: producers and consumers use only `producer_signal_and_step` and
/// `consumer_signal_and_step` (no data), and the ring's throttling is checked instead:
///
/// - a consumer that finished item `k` sees every producer *started* on item `k` (the producer
///   counts before its call; the count happens before its arrival, which the consumer's wait
///   acquired);
/// - a consumer that finished item `k` sees no producer *finished* with more than `k + STAGES + 1`
///   items (a producer finishes item `j` only after every consumer released item `j - STAGES`;
///   this consumer has not released item `k + 1` yet, and its read happens before that release);
/// - a producer that finished item `j` sees every consumer started on item `j - STAGES`.
///
/// Counters use `Relaxed` ordering on purpose: every bound rests on the pipeline's own
/// release/acquire ordering.
fn sync_only<const STAGES: usize, B: HostBackend>(items: u64) {
    let (producers, consumers) = (B::PRODUCER_ARRIVALS as usize, B::CONSUMER_ARRIVALS as usize);
    let config = format!(
        "sync-only: stages {STAGES}, producers {producers}, consumers {consumers}, {}, items {items}",
        B::NAME
    );
    struct Counters<const STAGES: usize, B: HostBackend> {
        ring: Ring<STAGES, B, ()>,
        started: Vec<AtomicU64>,
        finished: Vec<AtomicU64>,
        consumer_started: Vec<AtomicU64>,
        consumer_finished: Vec<AtomicU64>,
    }
    let counters = |n: usize| (0..n).map(|_| AtomicU64::new(0)).collect::<Vec<_>>();
    let shared = Arc::new(Counters::<STAGES, B> {
        ring: Ring::new(|_| ()),
        started: counters(producers),
        finished: counters(producers),
        consumer_started: counters(consumers),
        consumer_finished: counters(consumers),
    });

    let mut workers: Vec<Worker<Vec<String>>> = Vec::new();
    for id in 0..producers {
        let shared = shared.clone();
        workers.push((
            format!("producer {id}"),
            Box::new(move || {
                // SAFETY: `shared` keeps the ring alive; one of the `producers` producer threads.
                let mut pipe = unsafe { shared.ring.pipeline() };
                let mut errors = Vec::new();
                for j in 0..items {
                    shared.started[id].store(j + 1, Ordering::Relaxed);
                    pipe.producer_signal_and_step();
                    shared.finished[id].store(j + 1, Ordering::Relaxed);
                    if j >= STAGES as u64 {
                        for (c, started) in shared.consumer_started.iter().enumerate() {
                            let started = started.load(Ordering::Relaxed);
                            if started < j + 1 - STAGES as u64 && errors.len() < 4 {
                                errors.push(format!("producer {id} finished item {j} while consumer {c} had started only {started} items"));
                            }
                        }
                    }
                }
                errors
            }),
        ));
    }
    for id in 0..consumers {
        let shared = shared.clone();
        workers.push((
            format!("consumer {id}"),
            Box::new(move || {
                // SAFETY: as above, for the consumer side.
                let mut pipe = unsafe { shared.ring.pipeline() };
                let mut errors = Vec::new();
                for k in 0..items {
                    shared.consumer_started[id].store(k + 1, Ordering::Relaxed);
                    pipe.consumer_signal_and_step();
                    for p in 0..producers {
                        let started = shared.started[p].load(Ordering::Relaxed);
                        let finished = shared.finished[p].load(Ordering::Relaxed);
                        if (started < k + 1 || finished > k + 1 + STAGES as u64) && errors.len() < 4 {
                            errors.push(format!(
                                "consumer {id} finished item {k}: producer {p} had started {started} and finished {finished} items (allowed: started >= {}, finished <= {})",
                                k + 1,
                                k + 1 + STAGES as u64
                            ));
                        }
                    }
                    shared.consumer_finished[id].store(k + 1, Ordering::Relaxed);
                }
                errors
            }),
        ));
    }
    let progress = || {
        let load = |v: &Vec<AtomicU64>| {
            v.iter()
                .map(|a| a.load(Ordering::Relaxed))
                .collect::<Vec<_>>()
        };
        let (finished, consumer_finished) =
            (load(&shared.finished), load(&shared.consumer_finished));
        let description =
            format!("producers finished {finished:?}, consumers finished {consumer_finished:?}");
        (finished.iter().chain(&consumer_finished).sum(), description)
    };
    let errors: Vec<String> = run_with_watchdog(&config, STALL, workers, progress).concat();
    assert!(errors.is_empty(), "{config}: {errors:#?}");
    // SAFETY: all threads are joined; this value only reads signals.
    let pipe: ProducerConsumerPipeline<STAGES, B> = unsafe { shared.ring.pipeline() };
    for stage in 0..STAGES as u64 {
        let through = items / STAGES as u64 + u64::from(stage < items % STAGES as u64);
        let full = signal_state::<B>(&pipe.full_barrier(stage as u32), B::PRODUCER_ARRIVALS);
        let empty = signal_state::<B>(&pipe.empty_barrier(stage as u32), B::CONSUMER_ARRIVALS);
        assert_eq!(
            (full, empty),
            ((through, 0), (through, 0)),
            "{config}: signals of slot {stage}"
        );
    }
}

/// Items per sync-only run.
const SYNC_ITEMS: u64 = if cfg!(debug_assertions) {
    5_000
} else {
    20_000
};

#[test]
fn sync_only_stages_1_producers_1_consumers_1() {
    sync_only::<1, HostMbarBackend<1, 1>>(SYNC_ITEMS);
    sync_only::<1, HostCounterBackend<1, 1>>(SYNC_ITEMS);
}

#[test]
fn sync_only_stages_2_producers_2_consumers_3() {
    sync_only::<2, HostMbarBackend<2, 3>>(SYNC_ITEMS);
    sync_only::<2, HostCounterBackend<2, 3>>(SYNC_ITEMS);
}

#[test]
fn sync_only_stages_3_producers_1_consumers_4() {
    sync_only::<3, HostMbarBackend<1, 4>>(SYNC_ITEMS);
    sync_only::<3, HostCounterBackend<1, 4>>(SYNC_ITEMS);
}

#[test]
fn sync_only_stages_4_producers_4_consumers_1() {
    sync_only::<4, HostMbarBackend<4, 1>>(SYNC_ITEMS);
    sync_only::<4, HostCounterBackend<4, 1>>(SYNC_ITEMS);
}

#[test]
fn sync_only_stages_8_producers_4_consumers_4() {
    sync_only::<8, HostMbarBackend<4, 4>>(SYNC_ITEMS);
    sync_only::<8, HostCounterBackend<4, 4>>(SYNC_ITEMS);
}
