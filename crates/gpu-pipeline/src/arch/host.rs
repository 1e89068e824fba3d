//! The host's stand-ins for the leaves that checked builds use on a GPU: a clock, a thread
//! number, a pause between probes. Only in host builds with the `checked` and `std` features
//! (the host backends' hang diagnostics).

/// Nanoseconds since the first call (the host's counterpart of `%globaltimer`).
pub(crate) fn now_ns() -> u64 {
    use std::sync::OnceLock;
    use std::time::Instant;
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    EPOCH.get_or_init(Instant::now).elapsed().as_nanos() as u64
}

/// A number for the calling thread, given in the order threads first ask (the host's
/// counterpart of a thread index).
pub(crate) fn thread_number() -> u32 {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    std::thread_local! {
        static NUMBER: u32 = NEXT.fetch_add(1, Ordering::Relaxed);
    }
    NUMBER.with(|n| *n)
}

/// Lets other threads run between two failed probes (the host's counterpart of `nanosleep`).
pub(crate) fn yield_now() {
    std::thread::yield_now();
}
