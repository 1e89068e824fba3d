//! The host primitives the host backends are built on, swapped for loom's under `--cfg loom`
//! with the `loom` feature, so that the model checker explores every interleaving of the real
//! protocol code. Both are needed: the feature brings the `loom` dependency (so that a crate
//! that does not model-check never resolves it), the cfg is loom's own switch.

#[cfg(not(all(loom, feature = "loom")))]
pub(crate) use core::sync::atomic::{AtomicU64, Ordering};
#[cfg(all(loom, feature = "loom"))]
pub(crate) use loom::sync::atomic::{AtomicU64, Ordering};

/// One round of a host wait loop. Under loom it yields to the model checker (a spin loop that
/// never yields cannot be explored); otherwise it spins a little, then yields the thread, so
/// that tests with more threads than cores make progress.
#[inline]
pub(crate) fn wait_round(round: &mut u32) {
    #[cfg(all(loom, feature = "loom"))]
    {
        let _ = round;
        loom::thread::yield_now();
    }
    #[cfg(not(all(loom, feature = "loom")))]
    {
        *round = round.saturating_add(1);
        if *round < 64 {
            core::hint::spin_loop();
        } else {
            std::thread::yield_now();
        }
    }
}
