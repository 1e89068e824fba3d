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

use core::fmt;
#[cfg(feature = "checked")]
use core::panic::Location;

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

/// `HangRecord::magic` of a complete record: "GPPL" in little-endian bytes.
pub const RECORD_MAGIC: u32 = u32::from_le_bytes(*b"GPPL");

/// The fault a [`HangRecord`] reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum Fault {
    /// A wait ran past its budget.
    Timeout = 1,
    /// A wait or try-wait succeeded, but the barrier's shadow count is not the exact count of the
    /// lap the waiter waited for.
    WrongCount = 2,
    /// A pipeline value that served one side was used for the other side's call.
    WrongRole = 3,
    /// A pipeline half went away while holding a stage: a handle was forgotten
    /// (`core::mem::forget`), so its release never came.
    StageNotReleased = 4,
}

/// The library call that waited (or, for [`Fault::WrongCount`], that saw the completion).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum Call {
    /// `wait_producer` or `wait_producer_ticks` (consumer).
    WaitProducer = 1,
    /// `wait_consumer` or `wait_consumer_ticks` (producer).
    WaitConsumer,
    /// `try_wait_producer` (consumer).
    TryWaitProducer,
    /// `try_wait_consumer` (producer).
    TryWaitConsumer,
    /// `acquire_consumer` (consumer).
    AcquireConsumer,
    /// `acquire_producer` (producer).
    AcquireProducer,
    /// `consume` (consumer).
    Consume,
    /// `produce` (producer).
    Produce,
    /// `consume_explicit` (consumer).
    ConsumeExplicit,
    /// `produce_explicit` (producer).
    ProduceExplicit,
    /// `consumer_signal_and_step` (consumer).
    ConsumerSignalAndStep,
    /// `producer_signal_and_step` (producer).
    ProducerSignalAndStep,
    /// `RolePipeline::acquire` or `acquire_sub` (producer).
    RoleAcquire,
    /// `RolePipeline::wait` or `wait_sub` (consumer).
    RoleWait,
    /// `producer_signal` (a wrong-role record).
    ProducerSignal,
    /// `consumer_signal` (a wrong-role record).
    ConsumerSignal,
    /// `producer_step` (a wrong-role record).
    ProducerStep,
    /// `consumer_step` (a wrong-role record).
    ConsumerStep,
    /// The end of a pipeline half's scope (a stage-not-released record).
    PipelineDropped,
}

impl Call {
    /// The method's name as written in the API.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::WaitProducer => "wait_producer",
            Self::WaitConsumer => "wait_consumer",
            Self::TryWaitProducer => "try_wait_producer",
            Self::TryWaitConsumer => "try_wait_consumer",
            Self::AcquireConsumer => "acquire_consumer",
            Self::AcquireProducer => "acquire_producer",
            Self::Consume => "consume",
            Self::Produce => "produce",
            Self::ConsumeExplicit => "consume_explicit",
            Self::ProduceExplicit => "produce_explicit",
            Self::ConsumerSignalAndStep => "consumer_signal_and_step",
            Self::ProducerSignalAndStep => "producer_signal_and_step",
            Self::RoleAcquire => "RolePipeline::acquire",
            Self::RoleWait => "RolePipeline::wait",
            Self::ProducerSignal => "producer_signal",
            Self::ConsumerSignal => "consumer_signal",
            Self::ProducerStep => "producer_step",
            Self::ConsumerStep => "consumer_step",
            Self::PipelineDropped => "(end of the pipeline's scope)",
        }
    }

    /// The call whose number is `raw`, if any.
    #[must_use]
    pub const fn from_raw(raw: u32) -> Option<Self> {
        const ALL: [Call; 19] = [
            Call::WaitProducer,
            Call::WaitConsumer,
            Call::TryWaitProducer,
            Call::TryWaitConsumer,
            Call::AcquireConsumer,
            Call::AcquireProducer,
            Call::Consume,
            Call::Produce,
            Call::ConsumeExplicit,
            Call::ProduceExplicit,
            Call::ConsumerSignalAndStep,
            Call::ProducerSignalAndStep,
            Call::RoleAcquire,
            Call::RoleWait,
            Call::ProducerSignal,
            Call::ConsumerSignal,
            Call::ProducerStep,
            Call::ConsumerStep,
            Call::PipelineDropped,
        ];
        if raw >= 1 && raw as usize <= ALL.len() {
            Some(ALL[raw as usize - 1])
        } else {
            None
        }
    }
}

/// The role of the thread that reports: `HangRecord::role`.
pub const ROLE_PRODUCER: u32 = 0;
/// The role of the thread that reports: `HangRecord::role`.
pub const ROLE_CONSUMER: u32 = 1;
/// `HangRecord::sub_stage` when the pipeline has no sub-stages.
pub const NO_SUB_STAGE: u32 = u32::MAX;

/// One hang report, `#[repr(C)]` so that a host program reads it from the sink memory as written
/// by the device (176 bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct HangRecord {
    /// [`RECORD_MAGIC`] once the record is complete (written last).
    pub magic: u32,
    /// A [`Fault`] number.
    pub fault: u32,
    /// A [`Call`] number.
    pub call: u32,
    /// [`ROLE_PRODUCER`] or [`ROLE_CONSUMER`].
    pub role: u32,
    /// The pipeline's [`Diagnostics::label`].
    pub label: u32,
    /// The low 32 bits of the barrier storage's address (on a GPU, its shared-memory offset).
    pub storage: u32,
    /// The pipeline's `STAGES`.
    pub stages: u32,
    /// The slot the reporting thread waited on.
    pub stage: u32,
    /// The sub-stage of a [`RolePipeline`](crate::RolePipeline) wait, or [`NO_SUB_STAGE`].
    pub sub_stage: u32,
    /// The reporting thread's lap (its cursor's).
    pub lap: u32,
    /// Arrivals per phase of the barrier waited on (0: not tracked).
    pub per_phase: u32,
    /// The total arrivals, modulo 2^32, at which the awaited lap is complete.
    pub expected: u32,
    /// The total arrivals, modulo 2^32, that the shadow counted.
    pub observed: u32,
    /// 1 when `per_phase`, `expected` and `observed` are meaningful.
    pub tracked: u32,
    /// The thread block's index (x, y, z).
    pub block: [u32; 3],
    /// The CTA's rank in its cluster (0 without clusters).
    pub cluster_rank: u32,
    /// The reporting thread's linear index in its block.
    pub thread: u32,
    /// The active lanes of the reporting warp when it reported.
    pub lanes: u32,
    /// The source line of the call.
    pub line: u32,
    /// The source column of the call.
    pub column: u32,
    /// Padding (0).
    pub reserved: u32,
    /// How long the wait had blocked, in nanoseconds (0 for [`Fault::WrongCount`]).
    pub elapsed_ns: u64,
    /// The wait budget, in nanoseconds.
    pub budget_ns: u64,
    /// The source file of the call, NUL-padded (cut to 63 bytes, keeping the end).
    pub file: [u8; 64],
}

impl HangRecord {
    /// An empty record (all zero, not complete).
    pub const EMPTY: Self = Self {
        magic: 0,
        fault: 0,
        call: 0,
        role: 0,
        label: 0,
        storage: 0,
        stages: 0,
        stage: 0,
        sub_stage: 0,
        lap: 0,
        per_phase: 0,
        expected: 0,
        observed: 0,
        tracked: 0,
        block: [0; 3],
        cluster_rank: 0,
        thread: 0,
        lanes: 0,
        line: 0,
        column: 0,
        reserved: 0,
        elapsed_ns: 0,
        budget_ns: 0,
        file: [0; 64],
    };

    /// Whether the record was completely written.
    #[must_use]
    pub fn is_complete(&self) -> bool {
        self.magic == RECORD_MAGIC
    }

    /// The source file of the call, as far as it was kept.
    #[must_use]
    pub fn file(&self) -> &str {
        let len = self
            .file
            .iter()
            .position(|&b| b == 0)
            .unwrap_or(self.file.len());
        core::str::from_utf8(&self.file[..len]).unwrap_or("?")
    }

    /// The arrivals of the awaited lap that were made (negative or above `per_phase` when the
    /// barrier is a lap or more away from the waiter's lap).
    #[must_use]
    pub fn arrived_this_lap(&self) -> i64 {
        i64::from(self.observed.wrapping_sub(self.expected) as i32) + i64::from(self.per_phase)
    }

    /// The diagnosis, in a few words (the first line of `Display`'s explanation).
    #[must_use]
    pub fn verdict(&self) -> Verdict {
        if self.fault == Fault::WrongRole as u32 {
            return Verdict::WrongRole;
        }
        if self.fault == Fault::StageNotReleased as u32 {
            return Verdict::StageNotReleased;
        }
        if self.tracked == 0 {
            return Verdict::NotTracked;
        }
        let diff = self.observed.wrapping_sub(self.expected) as i32;
        if diff < 0 {
            if diff.unsigned_abs() >= self.per_phase {
                Verdict::NoArrivals
            } else {
                Verdict::MissingArrivals
            }
        } else if diff > 0 {
            Verdict::ExtraArrivals
        } else {
            Verdict::CountedButIncomplete
        }
    }

    fn side_names(&self) -> (&'static str, &'static str, &'static str) {
        if self.role == ROLE_PRODUCER {
            ("producer", "consumer", "empty")
        } else {
            ("consumer", "producer", "full")
        }
    }
}

/// The diagnosis of a [`HangRecord`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// No arrival at all of the other side for the awaited lap.
    NoArrivals,
    /// Some, not all, of the awaited lap's arrivals.
    MissingArrivals,
    /// More arrivals than the awaited lap completes with: over-arrival, or a waiter behind the
    /// barrier's lap.
    ExtraArrivals,
    /// The shadow counted every arrival but the barrier did not complete.
    CountedButIncomplete,
    /// Arrivals are not tracked for this barrier.
    NotTracked,
    /// One pipeline value was used for both sides.
    WrongRole,
    /// A stage handle was never released (forgotten).
    StageNotReleased,
}

impl fmt::Display for HangRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (role, other, signal) = self.side_names();
        let call = Call::from_raw(self.call).map_or("?", Call::name);
        let fault = match self.fault {
            1 => "HANG (wait budget spent)",
            2 => "WRONG ARRIVAL COUNT",
            3 => "WRONG ROLE",
            4 => "STAGE NOT RELEASED",
            _ => "unknown fault",
        };
        write!(
            f,
            "gpu-pipeline {fault}: pipeline {} (barriers at 0x{:x}, {} stages), {role} in `{call}` at {}:{}:{}",
            self.label,
            self.storage,
            self.stages,
            self.file(),
            self.line,
            self.column
        )?;
        writeln!(f)?;
        if self.fault == Fault::WrongRole as u32 || self.fault == Fault::StageNotReleased as u32 {
            write!(f, "  its {role} cursor: {signal}[{}]", self.stage)?;
        } else {
            write!(f, "  waited on {signal}[{}]", self.stage)?;
        }
        if self.sub_stage != NO_SUB_STAGE {
            write!(f, " sub-stage {}", self.sub_stage)?;
        }
        write!(
            f,
            " for lap {}; block ({}, {}, {}), cluster rank {}, thread {} (warp {}), active lanes 0x{:08x}",
            self.lap,
            self.block[0],
            self.block[1],
            self.block[2],
            self.cluster_rank,
            self.thread,
            self.thread / 32,
            self.lanes
        )?;
        writeln!(f)?;
        let arrived = self.arrived_this_lap();
        let missing = i64::from(self.per_phase) - arrived;
        match self.verdict() {
            Verdict::WrongRole => write!(
                f,
                "  this pipeline value was used on the {other} side before, and `{call}` is a {role} call: a value serves one side (make one value per role), or a {role} method was called by mistake (for example `producer_signal` where `consumer_signal` was meant)"
            )?,
            Verdict::StageNotReleased => write!(
                f,
                "  the {role} half went out of scope holding a stage it acquired and never released (a handle passed to `core::mem::forget`, or leaked): the {other} side will wait for that stage's arrivals forever"
            )?,
            Verdict::NotTracked => write!(
                f,
                "  the {other} side did not complete this lap of the barrier (arrivals are not counted for RolePipeline barriers)"
            )?,
            Verdict::NoArrivals => write!(
                f,
                "  0 of {} {other} arrivals for this lap (shadow count {}, complete at {}): the {other} side never reached this stage on this lap. It stopped early (its trip count is smaller than the {role}'s), exited, or is itself blocked{}",
                self.per_phase,
                self.observed,
                self.expected,
                if self.role == ROLE_PRODUCER {
                    "; or it never releases stages"
                } else {
                    "; or it never commits stages"
                }
            )?,
            Verdict::MissingArrivals => write!(
                f,
                "  {arrived} of {} {other} arrivals for this lap (shadow count {}, complete at {}): {missing} arriving thread(s) did not arrive. A branch skips the {} on some threads (for example half the warps), or the arrive count is larger than the number of threads that arrive; in a cluster, a peer CTA may have exited",
                self.per_phase,
                self.observed,
                self.expected,
                if self.role == ROLE_PRODUCER {
                    "release"
                } else {
                    "commit"
                }
            )?,
            Verdict::ExtraArrivals => write!(
                f,
                "  {} arrivals more than this lap completes with (shadow count {}, expected exactly {}, {} per lap): {other} threads arrived more than once per stage (a double release or signal), or this {role}'s lap is behind the barrier's (a wrong start lap, a pipeline value re-created mid-kernel, a missed step)",
                -missing, self.observed, self.expected, self.per_phase
            )?,
            Verdict::CountedButIncomplete => write!(
                f,
                "  all {} {other} arrivals of this lap were counted, but the barrier did not complete: it was re-initialised or overwritten, arrivals went to it by other means, or a transaction count (TMA bytes of `expect_tx`) was never completed",
                self.per_phase
            )?,
        }
        if self.fault == Fault::Timeout as u32 {
            writeln!(f)?;
            write!(
                f,
                "  blocked {} us (budget {} us)",
                self.elapsed_ns / 1000,
                self.budget_ns / 1000
            )?;
        }
        Ok(())
    }
}

/// Where a GPU kernel writes its hang records: the layout of the device global
/// `GPU_PIPELINE_DIAGNOSTICS` that checked builds define (find it with `cuModuleGetGlobal` /
/// `hipModuleGetGlobal` under [`DIAGNOSTICS_SYMBOL`] and write `records` and `capacity` before the
/// launch). With a null `records` the kernel only prints and traps.
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub struct DiagnosticsSink {
    /// `capacity` records in memory the host can read after a trap (host memory mapped into the
    /// device).
    pub records: *mut HangRecord,
    /// The number of records at `records`.
    pub capacity: u32,
    /// The next free record, advanced atomically by the device.
    pub next: u32,
}

/// The symbol name of the device global [`DiagnosticsSink`] of checked builds.
pub const DIAGNOSTICS_SYMBOL: &str = "GPU_PIPELINE_DIAGNOSTICS";

/// The device global of checked GPU builds: see [`DiagnosticsSink`].
#[cfg(all(
    feature = "checked",
    any(target_arch = "nvptx64", target_arch = "amdgpu")
))]
#[unsafe(no_mangle)]
pub static mut GPU_PIPELINE_DIAGNOSTICS: DiagnosticsSink = DiagnosticsSink {
    records: core::ptr::null_mut(),
    capacity: 0,
    next: 0,
};

// ---------------------------------------------------------------- checked builds only

/// What the pipeline layer knows about a failing wait; the reporting thread adds where it runs.
#[cfg(feature = "checked")]
#[derive(Clone, Copy)]
pub(crate) struct Report {
    pub fault: Fault,
    pub call: Call,
    pub role: u32,
    pub diagnostics: u64,
    pub storage: u32,
    pub stages: u32,
    pub stage: u32,
    pub sub_stage: u32,
    pub lap: u32,
    pub per_phase: u32,
    pub expected: u32,
    pub observed: u32,
    pub tracked: bool,
    pub elapsed_ns: u64,
    pub location: &'static Location<'static>,
}

/// Now, in nanoseconds, from the platform's constant-rate clock.
#[cfg(feature = "checked")]
#[inline(always)]
pub(crate) fn now_ns() -> u64 {
    #[cfg(target_arch = "nvptx64")]
    return crate::arch::nvptx::globaltimer();
    #[cfg(target_arch = "amdgpu")]
    return crate::arch::amdgpu::realtime_ns();
    #[cfg(not(any(target_arch = "nvptx64", target_arch = "amdgpu")))]
    return host::now_ns();
}

/// The budget in nanoseconds from a diagnostics word.
#[cfg(feature = "checked")]
#[inline(always)]
pub(crate) fn budget_ns(word: u64) -> u64 {
    u64::from(word as u32) * 1000
}

/// Polls `ready` until it returns true; past the budget of `diagnostics`, calls `expired` with
/// the time spent. The clock is read only after the first probe failed. `settle` runs right after
/// the first probe: the previous wait's count check, whose shared-memory read has had the whole
/// probe to arrive (compared before the probe, its latency showed in every round trip).
#[cfg(feature = "checked")]
#[inline(always)]
pub(crate) fn bounded_wait(
    mut ready: impl FnMut() -> bool,
    settle: impl FnOnce(),
    diagnostics: impl Fn() -> u64,
    expired: impl FnOnce(u64) -> !,
) {
    let first = ready();
    settle();
    if first {
        return;
    }
    slow_wait(&mut ready, diagnostics, expired);
}

/// Probes between two clock reads in [`slow_wait`].
#[cfg(feature = "checked")]
const PROBES_PER_CLOCK_READ: u32 = 32;

/// The loop after a failed first probe: the clock is read once per [`PROBES_PER_CLOCK_READ`]
/// probes (first after that many), so a wait that ends within them reads no clock at all.
/// Inlined: an out-of-line call would need its closures' captures in local memory, and LLVM builds
/// them before the first probe (seen in the SASS: nine `STL.64` per wait on the fast path).
#[cfg(feature = "checked")]
#[inline(always)]
fn slow_wait(
    ready: &mut impl FnMut() -> bool,
    diagnostics: impl Fn() -> u64,
    expired: impl FnOnce(u64) -> !,
) {
    let mut start = None;
    loop {
        for _ in 0..PROBES_PER_CLOCK_READ {
            if ready() {
                return;
            }
            pause();
        }
        let now = now_ns();
        match start {
            None => start = Some(now),
            Some(start) => {
                let elapsed = now.wrapping_sub(start);
                if elapsed > budget_ns(diagnostics()) {
                    expired(elapsed);
                }
            }
        }
    }
}

/// Between two failed probes: NVIDIA `nanosleep 0` (cheaper than a spin, as the counter
/// backend's own wait measured; an mbarrier `try_wait` has already suspended in hardware), the
/// host yields, AMD polls on.
#[cfg(feature = "checked")]
#[inline(always)]
fn pause() {
    #[cfg(target_arch = "nvptx64")]
    crate::arch::nvptx::nanosleep(0);
    #[cfg(not(any(target_arch = "nvptx64", target_arch = "amdgpu")))]
    std::thread::yield_now();
}

/// Builds the full record of `report` for the calling thread.
#[cfg(feature = "checked")]
fn record(report: &Report, lanes: u32) -> HangRecord {
    let mut record = HangRecord::EMPTY;
    record.fault = report.fault as u32;
    record.call = report.call as u32;
    record.role = report.role;
    record.label = (report.diagnostics >> 32) as u32;
    record.storage = report.storage;
    record.stages = report.stages;
    record.stage = report.stage;
    record.sub_stage = report.sub_stage;
    record.lap = report.lap;
    record.per_phase = report.per_phase;
    record.expected = report.expected;
    record.observed = report.observed;
    record.tracked = u32::from(report.tracked);
    record.elapsed_ns = report.elapsed_ns;
    record.budget_ns = budget_ns(report.diagnostics);
    record.line = report.location.line();
    record.column = report.location.column();
    let file = report.location.file().as_bytes();
    let keep = if file.len() > 63 { file.len() - 63 } else { 0 };
    let mut i = 0;
    while keep + i < file.len() {
        record.file[i] = file[keep + i];
        i += 1;
    }
    let place = where_am_i();
    record.block = place.block;
    record.cluster_rank = place.cluster_rank;
    record.thread = place.thread;
    record.lanes = lanes;
    record
}

#[cfg(feature = "checked")]
struct Place {
    block: [u32; 3],
    cluster_rank: u32,
    thread: u32,
}

#[cfg(all(feature = "checked", target_arch = "nvptx64"))]
fn where_am_i() -> Place {
    use crate::arch::nvptx as ptx;
    let [tx, ty, tz] = ptx::tid();
    let [nx, ny, _] = ptx::ntid();
    Place {
        block: ptx::ctaid(),
        cluster_rank: ptx::cluster_ctarank(),
        thread: tx + nx * (ty + ny * tz),
    }
}

#[cfg(all(feature = "checked", target_arch = "amdgpu"))]
fn where_am_i() -> Place {
    use core::arch::amdgpu as amd;
    // The work-group size is in the dispatch packet, not in a register: the record keeps the x
    // index of the work-item (kernels of this library are one-dimensional).
    Place {
        block: [
            amd::workgroup_id_x(),
            amd::workgroup_id_y(),
            amd::workgroup_id_z(),
        ],
        cluster_rank: 0,
        thread: amd::workitem_id_x(),
    }
}

#[cfg(all(
    feature = "checked",
    not(any(target_arch = "nvptx64", target_arch = "amdgpu"))
))]
fn where_am_i() -> Place {
    Place {
        block: [0; 3],
        cluster_rank: 0,
        thread: host::thread_number(),
    }
}

/// Reports `report` and stops: on a GPU, the lowest active lane of the warp writes the record and
/// prints one line, then every lane traps; on the host, a panic with the explanation.
#[cfg(feature = "checked")]
#[cold]
#[inline(never)]
pub(crate) fn fail(report: &Report) -> ! {
    #[cfg(target_arch = "nvptx64")]
    {
        use crate::arch::nvptx as ptx;
        let lanes = ptx::activemask();
        if lanes & ptx::lanemask_lt() == 0 {
            let record = record(report, lanes);
            // SAFETY: the sink is the host's to set before the launch; a slot index below the
            // capacity addresses one record of it, written by this lane only.
            unsafe { publish(&record) };
            print_line(&record);
        }
        // SAFETY: every lane of `lanes` runs this call with the same mask.
        unsafe { ptx::bar_warp_sync(lanes) };
        ptx::trap()
    }
    #[cfg(target_arch = "amdgpu")]
    {
        let lanes = crate::arch::amdgpu::active_lanes();
        if crate::arch::amdgpu::lanes_below(lanes) == 0 {
            let record = record(report, lanes as u32);
            // SAFETY: as on NVIDIA.
            unsafe { publish(&record) };
        }
        crate::arch::amdgpu::trap()
    }
    #[cfg(not(any(target_arch = "nvptx64", target_arch = "amdgpu")))]
    {
        let record = record(report, 1);
        panic!("{record}")
    }
}

/// Writes `record` to the next free slot of the sink, `magic` last, after a system-scope fence.
///
/// # Safety
///
/// The host set `GPU_PIPELINE_DIAGNOSTICS` to null or to `capacity` writable records.
#[cfg(all(
    feature = "checked",
    any(target_arch = "nvptx64", target_arch = "amdgpu")
))]
unsafe fn publish(record: &HangRecord) {
    use core::ptr::{addr_of, addr_of_mut};
    use core::sync::atomic::{AtomicU32, Ordering};
    // SAFETY: plain reads of the device global, which only the host writes (before the launch).
    let (records, capacity) = unsafe {
        (
            addr_of!(GPU_PIPELINE_DIAGNOSTICS.records).read_volatile(),
            addr_of!(GPU_PIPELINE_DIAGNOSTICS.capacity).read_volatile(),
        )
    };
    if records.is_null() {
        return;
    }
    // SAFETY: `next` is a 4-byte aligned word of the device global, only ever accessed atomically
    // by the device.
    let next = unsafe { AtomicU32::from_ptr(addr_of_mut!(GPU_PIPELINE_DIAGNOSTICS.next)) };
    let slot = next.fetch_add(1, Ordering::Relaxed);
    if slot >= capacity {
        return;
    }
    // SAFETY: slot < capacity (the caller's contract covers the memory).
    unsafe {
        let dst = records.add(slot as usize);
        let mut body = *record;
        body.magic = 0;
        dst.write_volatile(body);
        #[cfg(target_arch = "nvptx64")]
        crate::arch::nvptx::fence_sc_sys();
        #[cfg(target_arch = "amdgpu")]
        core::sync::atomic::fence(Ordering::SeqCst);
        addr_of_mut!((*dst).magic).write_volatile(RECORD_MAGIC);
        #[cfg(target_arch = "nvptx64")]
        crate::arch::nvptx::fence_sc_sys();
        #[cfg(target_arch = "amdgpu")]
        core::sync::atomic::fence(Ordering::SeqCst);
    }
}

/// One line on the device's printf stream: `vprintf` with every argument 8 bytes wide.
#[cfg(all(feature = "checked", target_arch = "nvptx64"))]
fn print_line(record: &HangRecord) {
    let verdict: &'static [u8] = match record.verdict() {
        Verdict::NoArrivals => b"no arrivals for this lap\0",
        Verdict::MissingArrivals => b"missing arrivals\0",
        Verdict::ExtraArrivals => b"extra arrivals, or the waiter's lap is behind\0",
        Verdict::CountedButIncomplete => b"all arrivals counted, barrier incomplete\0",
        Verdict::NotTracked => b"not tracked\0",
        Verdict::WrongRole => b"a value used for both sides\0",
        Verdict::StageNotReleased => b"a stage never released\0",
    };
    let fault: &'static [u8] = match record.fault {
        1 => b"HANG\0",
        2 => b"WRONG ARRIVAL COUNT\0",
        3 => b"WRONG ROLE\0",
        _ => b"STAGE NOT RELEASED\0",
    };
    let role: &'static [u8] = if record.role == ROLE_PRODUCER {
        b"producer\0"
    } else {
        b"consumer\0"
    };
    let mut file = [0u8; 65];
    file[..64].copy_from_slice(&record.file);
    #[repr(C)]
    struct Args {
        values: [u64; 13],
    }
    let args = Args {
        values: [
            fault.as_ptr() as u64,
            u64::from(record.label),
            role.as_ptr() as u64,
            u64::from(record.stage),
            u64::from(record.lap),
            record.arrived_this_lap() as u64,
            u64::from(record.per_phase),
            verdict.as_ptr() as u64,
            u64::from(record.block[0]),
            u64::from(record.thread),
            record.elapsed_ns / 1000,
            file.as_ptr() as u64,
            u64::from(record.line),
        ],
    };
    // SAFETY: the format's conversions match the 13 8-byte arguments in order; the strings are
    // NUL-terminated.
    unsafe {
        crate::arch::nvptx::vprintf(
            b"gpu-pipeline %s: pipeline %llu, %s, stage %llu lap %llu: %lld of %llu arrivals (%s); block %llu thread %llu, %llu us; %s:%llu\n\0"
                .as_ptr(),
            (&raw const args).cast(),
        );
    }
}

/// The host's clock and thread numbers.
#[cfg(all(
    feature = "checked",
    not(any(target_arch = "nvptx64", target_arch = "amdgpu"))
))]
mod host {
    #[cfg(not(feature = "std"))]
    compile_error!(
        "gpu-pipeline: the `checked` feature on the host needs the `std` feature (its clock and panics)"
    );

    #[cfg(feature = "std")]
    pub(super) fn now_ns() -> u64 {
        use std::sync::OnceLock;
        use std::time::Instant;
        static EPOCH: OnceLock<Instant> = OnceLock::new();
        EPOCH.get_or_init(Instant::now).elapsed().as_nanos() as u64
    }

    #[cfg(feature = "std")]
    pub(super) fn thread_number() -> u32 {
        use std::sync::atomic::{AtomicU32, Ordering};
        static NEXT: AtomicU32 = AtomicU32::new(0);
        std::thread_local! {
            static NUMBER: u32 = NEXT.fetch_add(1, Ordering::Relaxed);
        }
        NUMBER.with(|n| *n)
    }
}

/// Checked builds: where a pipeline keeps its [`Diagnostics`] word (the element after the
/// backend's storage), and the storage's base, for records.
#[cfg(feature = "checked")]
#[derive(Clone, Copy, Debug)]
pub(crate) struct DiagnosticsWord {
    base: *mut u8,
    word: *mut u64,
}

// SAFETY: a description of shared memory used by all threads of a pipeline, like the backends'
// pointers; the word is written once by `init` before the block barrier and only read after.
#[cfg(feature = "checked")]
unsafe impl Send for DiagnosticsWord {}
// SAFETY: as above.
#[cfg(feature = "checked")]
unsafe impl Sync for DiagnosticsWord {}

#[cfg(feature = "checked")]
impl DiagnosticsWord {
    /// # Safety
    ///
    /// `word` is an 8-byte aligned word of the pipeline's storage starting at `base`.
    #[inline(always)]
    pub(crate) unsafe fn new(base: *mut u8, word: *mut u64) -> Self {
        Self { base, word }
    }

    /// # Safety
    ///
    /// Only the initialising thread, before the block barrier.
    #[inline(always)]
    pub(crate) unsafe fn store(self, value: u64) {
        // Relaxed atomics, not volatile accesses, off NVIDIA: LLVM keeps inferring the LDS
        // address space of atomics on AMD (a volatile access through a generic pointer stays
        // `flat_*`). On NVIDIA, Rust atomics are system scope: a plain volatile access suffices.
        #[cfg(not(target_arch = "nvptx64"))]
        // SAFETY: the word is valid (`new`) and 8-byte aligned.
        unsafe {
            core::sync::atomic::AtomicU64::from_ptr(self.word)
                .store(value, core::sync::atomic::Ordering::Relaxed);
        }
        #[cfg(target_arch = "nvptx64")]
        // SAFETY: the word is valid (`new`); no other thread reads it before the block barrier.
        unsafe {
            self.word.write_volatile(value);
        }
    }

    /// The word `init` stored.
    #[inline(always)]
    pub(crate) fn load(self) -> u64 {
        #[cfg(not(target_arch = "nvptx64"))]
        // SAFETY: the word is valid (`new`) and 8-byte aligned.
        return unsafe {
            core::sync::atomic::AtomicU64::from_ptr(self.word)
                .load(core::sync::atomic::Ordering::Relaxed)
        };
        #[cfg(target_arch = "nvptx64")]
        // SAFETY: the word is valid (`new`) and was written before the block barrier.
        return unsafe { self.word.read_volatile() };
    }

    /// The low 32 bits of the storage's address: its shared-memory offset on NVIDIA.
    #[inline(always)]
    pub(crate) fn storage(self) -> u32 {
        #[cfg(target_arch = "nvptx64")]
        // SAFETY: the storage is in shared memory (the pipeline's contract).
        return unsafe { crate::arch::nvptx::cvta_to_shared(self.base) };
        #[cfg(not(target_arch = "nvptx64"))]
        return self.base as usize as u32;
    }
}
