//! Hang diagnostics: the `checked` feature.
//!
//! With the `checked` cargo feature, every wait of [`ProducerConsumerPipeline`](crate::ProducerConsumerPipeline),
//! [`EpiLoadPipeline`](crate::EpiLoadPipeline) and [`RolePipeline`](crate::RolePipeline) is
//! bounded by a time budget, and every arrival made through the pipeline (its methods, its stage
//! handles, and the barrier handles they give out) is also counted in a software *shadow*. A wait
//! that runs out of budget, or a phase that completes with the wrong number of arrivals, ends the
//! kernel with a [`HangRecord`] that says which pipeline, role, stage, lap and call, how many
//! arrivals were expected and how many were made, and the source line of the call.
//!
//! Without the feature none of this exists: no field, no instruction, no shared memory (the
//! benchmark kernels' PTX is byte-identical with and without this module in the build).
//!
//! # What is checked
//!
//! | when | what | diagnosis |
//! |---|---|---|
//! | a wait's first probe fails | the time spent since (`%globaltimer`, `s_memrealtime`, `Instant`) against the budget | the record, with the shadow count at expiry |
//! | a wait or try-wait succeeds | the shadow count is not above the exact count of the completed lap (read at completion, compared after the next wait's first probe or when the value is dropped) | over-arrival, or a waiter whose lap is behind the barrier's |
//!
//! The exact count is a protocol invariant: when a consumer's wait for lap `p` of `full[s]`
//! returns, `full[s]` has received exactly `(p + 1) * PRODUCER_ARRIVALS` arrivals, because the
//! producer cannot start lap `p + 1` of slot `s` before this consumer released lap `p`. The same
//! holds for producers and `empty[s]` with `(q - 1) * CONSUMER_ARRIVALS`. A shadow never counts
//! an arrival before it happened, so a count above the exact one at completion is always a fault.
//! On NVIDIA the shadow increment follows its arrival (an arrival is a release and would wait for
//! an increment made before it), so a fresh completion may not show the last increments yet: a
//! count *below* the exact one is only reported by an expired wait, when every increment has
//! long landed. The counter and host backends are their own shadows, and exact.
//!
//! # The budget
//!
//! [`DEFAULT_WAIT_BUDGET_US`] (200 ms, or `GPU_PIPELINE_WAIT_BUDGET_MS` in the environment of
//! the build), overridden per pipeline at init with
//! [`ProducerConsumerPipeline::init_with`](crate::ProducerConsumerPipeline::init_with) and [`Diagnostics`]. The clock is read only after a
//! failed probe, so a wait that succeeds at once costs no clock read.
//!
//! # Where the record goes
//!
//! On a GPU, one lane per warp (the lowest active lane) writes the record to the buffer that
//! [`GPU_PIPELINE_DIAGNOSTICS`](DiagnosticsSink) points to, if the host set one, prints one line
//! (`vprintf` on NVIDIA; AMD has no device printf without the HIP runtime's host-call buffer),
//! and every waiting lane traps. A trap leaves an NVIDIA context unusable, so the host must give
//! the sink memory that survives it: host memory mapped into the device (`cuMemHostRegister` with
//! `CU_MEMHOSTREGISTER_DEVICEMAP`, or `cuMemHostAlloc`), read after the failed launch. The record's
//! `magic` is written last, after a system-scope fence, so a record cut short by another warp's
//! trap is never read as complete. [`HangRecord`]'s `Display` explains it in plain words.
//!
//! On the host (the `std` backends) the record is the message of a panic.
//!
//! # Not covered
//!
//! - A loop the caller writes around `try_wait_*` is the caller's; checked builds bound the
//!   library's own waits.
//! - [`RolePipeline`](crate::RolePipeline) barriers are bounded but not shadowed: tcgen05 commits
//!   arrive in hardware, and arrive counts are given only to `init`.
//! - Suspend-time hints (`*_ticks`) are not used by checked waits, which poll.
//!
//! # Other crates' barriers
//!
//! [`BarrierWait`] gives crates built on this one the same bounded wait and record for their own
//! barriers: gpu-hopper's named barriers and ordered-sequence barrier use it, with the
//! [`Call`] variants `NamedBarrierSync`, `SequenceWait`, `SequenceTurnDropped`, `NamedTurnDropped` and
//! [`Role::Participant`].
//!
//! # Layout
//!
//! - `record.rs`: the host-readable record ([`HangRecord`], [`Verdict`], [`Fault`], [`Call`], the
//!   `ROLE_*` and [`NO_SUB_STAGE`] values, [`DiagnosticsSink`]) and its plain-words `Display`,
//!   compiled in every build so that a host program can read records.
//! - `runtime.rs` (feature `checked` only): the bounded wait, the report (record writer, printed
//!   line, trap or panic), the diagnostics word, the device global. Its instructions come from
//!   `crate::arch`; what differs by target is one small private module at its end.
//! - here: [`Diagnostics`] and the budget, and the re-exports (every item keeps its
//!   `crate::checked::` path).

mod record;
#[cfg(feature = "checked")]
mod runtime;

pub use record::{
    Call, DIAGNOSTICS_SYMBOL, DiagnosticsSink, Fault, HangRecord, NO_SUB_STAGE, RECORD_MAGIC,
    ROLE_CONSUMER, ROLE_PARTICIPANT, ROLE_PRODUCER, Role, Verdict,
};
#[cfg(feature = "checked")]
pub use runtime::BarrierWait;
#[cfg(all(
    feature = "checked",
    any(target_arch = "nvptx64", target_arch = "amdgpu")
))]
pub use runtime::GPU_PIPELINE_DIAGNOSTICS;
#[cfg(feature = "checked")]
pub(crate) use runtime::{DiagnosticsWord, Report, bounded_wait, fail};
// Kept at their `crate::checked::` paths for the pipeline layer, which does not call them today.
#[cfg(feature = "checked")]
#[allow(unused_imports)]
pub(crate) use runtime::{budget_ns, now_ns};

#[cfg(all(
    feature = "checked",
    not(feature = "std"),
    not(any(target_arch = "nvptx64", target_arch = "amdgpu"))
))]
compile_error!(
    "gpu-pipeline: the `checked` feature on the host needs the `std` feature (its clock and panics)"
);

/// The wait budget of checked builds when none is given at init, in microseconds: 200 ms, or the
/// decimal number of milliseconds in `GPU_PIPELINE_WAIT_BUDGET_MS` at build time.
pub const DEFAULT_WAIT_BUDGET_US: u32 = match option_env!("GPU_PIPELINE_WAIT_BUDGET_MS") {
    Some(ms) => parse_ms_to_us(ms),
    None => 200_000,
};

const fn parse_ms_to_us(text: &str) -> u32 {
    let bytes = text.as_bytes();
    assert!(
        !bytes.is_empty(),
        "GPU_PIPELINE_WAIT_BUDGET_MS must be a decimal number of milliseconds"
    );
    let mut value: u32 = 0;
    let mut i = 0;
    while i < bytes.len() {
        let digit = bytes[i];
        assert!(
            digit.is_ascii_digit(),
            "GPU_PIPELINE_WAIT_BUDGET_MS must be a decimal number of milliseconds"
        );
        value = match value.checked_mul(10) {
            Some(v) => v + (digit - b'0') as u32,
            None => panic!("GPU_PIPELINE_WAIT_BUDGET_MS is too large (at most 4294967 ms)"),
        };
        i += 1;
    }
    match value.checked_mul(1000) {
        Some(us) if us > 0 => us,
        _ => panic!("GPU_PIPELINE_WAIT_BUDGET_MS must be between 1 and 4294967 ms"),
    }
}

/// What checked builds report about one pipeline: a label that names it in hang records, and the
/// budget of each of its waits. Give it to
/// [`ProducerConsumerPipeline::init_with`](crate::ProducerConsumerPipeline::init_with); builds
/// without the `checked` feature accept and ignore it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Diagnostics {
    /// A number of your choice that names the pipeline in hang records (for example 1 for the
    /// A/B load pipeline, 2 for the epilogue pipeline).
    pub label: u32,
    /// How long one wait may block before the kernel is stopped, in microseconds (at least 1).
    pub wait_budget_us: u32,
}

impl Diagnostics {
    /// Label 0 and [`DEFAULT_WAIT_BUDGET_US`]: what `init` uses.
    pub const DEFAULT: Self = Self {
        label: 0,
        wait_budget_us: DEFAULT_WAIT_BUDGET_US,
    };

    /// The word kept in the pipeline's shared memory: label high, budget low.
    #[cfg_attr(not(feature = "checked"), allow(dead_code))]
    pub(crate) const fn word(self) -> u64 {
        let budget = if self.wait_budget_us == 0 {
            1
        } else {
            self.wait_budget_us
        };
        ((self.label as u64) << 32) | budget as u64
    }
}

impl Default for Diagnostics {
    fn default() -> Self {
        Self::DEFAULT
    }
}
