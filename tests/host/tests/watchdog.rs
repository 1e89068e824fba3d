//! The watchdog of the host tests ([`run_with_watchdog`]) itself: it fails a run that stopped
//! moving, never one that is merely slow. The stall window is 300 ms here, so that both cases
//! end quickly; the tests assert no upper bound on time (only that a stall is not reported
//! before its window). They rely only on a runnable thread getting a core within a few hundred
//! milliseconds, which holds on a loaded machine too.

#![cfg(not(loom))]

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use protocol_tests::{Worker, run_with_watchdog};

const STALL: Duration = Duration::from_millis(300);

/// A worker that moves `items` items, each taking `pause`, counting them in `done`.
fn slow_worker(id: u64, items: u64, pause: Duration, done: Arc<AtomicU64>) -> Worker<u64> {
    (
        format!("worker {id}"),
        Box::new(move || {
            for _ in 0..items {
                std::thread::sleep(pause);
                done.fetch_add(1, Ordering::Relaxed);
            }
            id
        }),
    )
}

/// The panic message of a failed run.
fn failure(run: impl FnOnce()) -> String {
    let payload = catch_unwind(AssertUnwindSafe(run)).expect_err("the run must fail");
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

#[test]
fn a_slow_run_that_keeps_moving_passes_past_the_stall_window() {
    // Two workers, 10 items each, 50 ms per item: half a second in all, longer than the stall
    // window, with an item every 50 ms (a thread may be late by 250 ms before this fails).
    let done = Arc::new(AtomicU64::new(0));
    let workers = (0..2)
        .map(|id| slow_worker(id, 10, Duration::from_millis(50), done.clone()))
        .collect();
    let results = run_with_watchdog("slow run, seed 0x5eed", STALL, workers, || {
        let moved = done.load(Ordering::Relaxed);
        (moved, format!("{moved} items"))
    });
    assert_eq!(results, [0, 1]);
    assert_eq!(done.load(Ordering::Relaxed), 20);
}

#[test]
fn a_worker_that_stops_moving_fails_with_the_configuration_and_its_progress() {
    let done = [Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0))];
    // Worker 0 finishes its items; worker 1 moves 3 items, then blocks until the test lets it go
    // (after the failure, so that no thread outlives the test).
    let (release, blocked) = mpsc::channel::<()>();
    let stuck = done[1].clone();
    let workers: Vec<Worker<u64>> = vec![
        slow_worker(0, 5, Duration::from_millis(1), done[0].clone()),
        (
            "worker 1".to_string(),
            Box::new(move || {
                for _ in 0..3 {
                    stuck.fetch_add(1, Ordering::Relaxed);
                }
                let _ = blocked.recv();
                1
            }),
        ),
    ];
    let started = Instant::now();
    let message = failure(|| {
        run_with_watchdog("stalled run, seed 0x5eed", STALL, workers, || {
            let each: Vec<u64> = done.iter().map(|d| d.load(Ordering::Relaxed)).collect();
            (each.iter().sum(), format!("workers at {each:?}"))
        });
    });
    let took = started.elapsed();
    drop(release);
    for needle in [
        "watchdog: stalled run, seed 0x5eed",
        "no progress for 300ms",
        "still running: [\"worker 1\"]",
        "workers at [5, 3]",
    ] {
        assert!(message.contains(needle), "no `{needle}` in: {message}");
    }
    assert!(took >= STALL, "reported a stall after only {took:?}");
}

#[test]
fn a_worker_that_panics_fails_with_its_name_and_message() {
    let workers: Vec<Worker<()>> = vec![(
        "worker 0".to_string(),
        Box::new(|| panic!("item 7 was wrong")),
    )];
    // The full stall window: the panic hook may print a backtrace, which takes a while on a
    // loaded machine, before the worker reports (the run still ends as soon as it does).
    let message = failure(|| {
        run_with_watchdog("panicking run", protocol_tests::STALL, workers, || {
            (0, String::new())
        });
    });
    assert!(
        message.contains("panicking run: worker `worker 0` panicked: item 7 was wrong"),
        "{message}"
    );
}
