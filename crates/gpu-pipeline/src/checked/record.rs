//! The host-readable hang record: its layout, its diagnosis ([`Verdict`]) and its plain-words
//! `Display`, and the layout of the device global a kernel writes records through
//! ([`DiagnosticsSink`]). Compiled in every build: a host program reads records without the
//! `checked` feature.

use core::fmt;

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
    /// A `RolePipeline` CTA pair's producer (or consumer) waited in a CTA that the pair's
    /// `new_pair` does not name for its role: no arrival reaches the barriers it waits on.
    NotInPair = 5,
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
    /// `OrderedSequenceBarrier::wait` of gpu-hopper: a group waited for its turn. The record's
    /// `stage` is the ring, `sub_stage` the waiting group, `held` the number of groups, `lap` the
    /// lap on the ring (the turn is `lap * stages + stage`).
    SequenceWait,
    /// A gpu-hopper `Turn` that went out of scope without `arrive` (a stage-not-released record,
    /// with the fields of [`SequenceWait`](Self::SequenceWait)).
    SequenceTurnDropped,
    /// `Barriers::sync` of gpu-hopper: a named barrier. The record's `stage` is the barrier id,
    /// `lap` its phase, `per_phase` its thread count, `observed - expected + per_phase` the
    /// threads that had reached this phase.
    NamedBarrierSync,
    /// A gpu-hopper `NamedTurn` (turns on named barriers) that went out of scope without
    /// `arrive` (a stage-not-released record, with the fields of
    /// [`SequenceWait`](Self::SequenceWait), one ring).
    NamedTurnDropped,
}

impl Fault {
    /// The fault whose number is `raw`, if any.
    #[must_use]
    pub const fn from_raw(raw: u32) -> Option<Self> {
        match raw {
            1 => Some(Self::Timeout),
            2 => Some(Self::WrongCount),
            3 => Some(Self::WrongRole),
            4 => Some(Self::StageNotReleased),
            5 => Some(Self::NotInPair),
            _ => None,
        }
    }
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
            Self::SequenceWait => "OrderedSequenceBarrier::wait",
            Self::SequenceTurnDropped => "(a Turn taken here, dropped without arrive)",
            Self::NamedBarrierSync => "Barriers::sync",
            Self::NamedTurnDropped => "(a NamedTurn taken here, dropped without arrive)",
        }
    }

    /// The call whose number is `raw`, if any.
    #[must_use]
    pub const fn from_raw(raw: u32) -> Option<Self> {
        const ALL: [Call; 23] = [
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
            Call::SequenceWait,
            Call::SequenceTurnDropped,
            Call::NamedBarrierSync,
            Call::NamedTurnDropped,
        ];
        if raw >= 1 && raw as usize <= ALL.len() {
            Some(ALL[raw as usize - 1])
        } else {
            None
        }
    }
}

/// The side of the thread that reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum Role {
    /// The producer side (waits on *empty*, signals *full*).
    Producer = 0,
    /// The consumer side (waits on *full*, signals *empty*).
    Consumer = 1,
    /// A thread of a barrier that is neither side of a pipeline: a group of an ordered sequence,
    /// a participant of a named barrier (the records of other crates' checked builds).
    Participant = 2,
}

/// `HangRecord::role` of a producer ([`Role::Producer`] as the record stores it).
pub const ROLE_PRODUCER: u32 = Role::Producer as u32;
/// `HangRecord::role` of a consumer ([`Role::Consumer`] as the record stores it).
pub const ROLE_CONSUMER: u32 = Role::Consumer as u32;
/// `HangRecord::role` of a [`Role::Participant`].
pub const ROLE_PARTICIPANT: u32 = Role::Participant as u32;
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
    /// [`ROLE_PRODUCER`], [`ROLE_CONSUMER`] or [`ROLE_PARTICIPANT`].
    pub role: u32,
    /// The pipeline's [`Diagnostics::label`](super::Diagnostics::label).
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
    /// The stages the reporting thread's pipeline half held (acquired, not yet released) when it
    /// reported (0 for a `RolePipeline`, which has no stage handles).
    pub held: u32,
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
        held: 0,
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
        if self.fault == Fault::NotInPair as u32 {
            return Verdict::NotInPair;
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
    /// A CTA pair's role waited in a CTA the pair does not run it on.
    NotInPair,
}

impl fmt::Display for HangRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match Call::from_raw(self.call) {
            Some(Call::SequenceWait | Call::SequenceTurnDropped | Call::NamedTurnDropped) => {
                return self.fmt_sequence(f);
            }
            Some(Call::NamedBarrierSync) => return self.fmt_named_barrier(f),
            _ => {}
        }
        let (role, other, signal) = self.side_names();
        let call = Call::from_raw(self.call).map_or("?", Call::name);
        let fault = match Fault::from_raw(self.fault) {
            Some(Fault::Timeout) => "HANG (wait budget spent)",
            Some(Fault::WrongCount) => "WRONG ARRIVAL COUNT",
            Some(Fault::WrongRole) => "WRONG ROLE",
            Some(Fault::StageNotReleased) => "STAGE NOT RELEASED",
            Some(Fault::NotInPair) => "ROLE NOT IN THIS CTA OF THE PAIR",
            None => "unknown fault",
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
        write!(f, " for lap {}; ", self.lap)?;
        self.fmt_place(f)?;
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
            Verdict::NotInPair => write!(
                f,
                "  this CTA (cluster rank {}) does not run the {role} role of its CTA pair: `RolePipeline::new_pair` names the CTAs of each role, and the {other}s' arrivals go only to those CTAs' barriers, so this wait would never end. Give this CTA the role in `new_pair` (PairCtas::Both), or do not wait here",
                self.cluster_rank
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
        if self.fault == Fault::Timeout as u32 && self.held > 0 {
            writeln!(f)?;
            write!(
                f,
                "  this {role} holds {} of the ring's {} stages while it waits for another: if the {other}s hold stages as they wait too, each side waits for a stage the other holds. A producer that holds P stages at once (the one it waits for included) and consumers that hold C need STAGES >= P + C - 1 (the `stage` module docs)",
                self.held, self.stages
            )?;
        }
        self.fmt_blocked(f)
    }
}

impl HangRecord {
    /// Block, thread and lanes of the reporting thread: every record's second line.
    fn fmt_place(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "block ({}, {}, {}), cluster rank {}, thread {} (warp {}), active lanes 0x{:08x}",
            self.block[0],
            self.block[1],
            self.block[2],
            self.cluster_rank,
            self.thread,
            self.thread / 32,
            self.lanes
        )
    }

    /// The time blocked, on a line of its own, for a timeout: every record's last line.
    fn fmt_blocked(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
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

    /// An ordered-sequence record ([`Call::SequenceWait`], [`Call::SequenceTurnDropped`]).
    fn fmt_sequence(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (rings, ring, group, groups) =
            (self.stages.max(1), self.stage, self.sub_stage, self.held);
        let previous = (group + groups.max(1) - 1) % groups.max(1);
        let turn = self.lap.wrapping_mul(rings).wrapping_add(ring);
        let fault = match Fault::from_raw(self.fault) {
            Some(Fault::Timeout) => "HANG (wait budget spent)",
            Some(Fault::WrongCount) => "WRONG ARRIVAL COUNT",
            Some(Fault::StageNotReleased) => "TURN NOT HANDED ON",
            _ => "unknown fault",
        };
        let named = Call::from_raw(self.call) == Some(Call::NamedTurnDropped);
        let (what, arrive) = if named {
            ("named turns", "NamedTurn::arrive")
        } else {
            ("ordered sequence", "Turn::arrive")
        };
        let call = Call::from_raw(self.call).map_or("?", Call::name);
        writeln!(
            f,
            "gpu-hopper {what} {fault}: sequence {} (barriers at 0x{:x}, {rings} rings, {groups} groups), group {group} in `{call}` at {}:{}:{}",
            self.label,
            self.storage,
            self.file(),
            self.line,
            self.column
        )?;
        write!(f, "  turn {turn} (ring {ring}, lap {}); ", self.lap)?;
        self.fmt_place(f)?;
        writeln!(f)?;
        let arrived = self.arrived_this_lap();
        if self.fault == Fault::StageNotReleased as u32 {
            write!(
                f,
                "  group {group} let its turn go out of scope without `{arrive}`: group {} waits for this turn forever. Call `arrive` on every path (an early `return` or `break` while holding the turn skips it)",
                (group + 1) % groups.max(1)
            )?;
            return Ok(());
        }
        match self.verdict() {
            Verdict::NoArrivals => write!(
                f,
                "  0 of {} arrivals of group {previous} for this turn (count {}, complete at {}): group {previous} never handed this turn on. It took fewer turns than group {group} (the groups' trip counts differ), exited, is blocked itself, or dropped its turn",
                self.per_phase, self.observed, self.expected
            )?,
            Verdict::MissingArrivals => write!(
                f,
                "  {arrived} of {} arrivals of group {previous} for this turn (count {}, complete at {}): the arrivals per phase given to `init` are more than the threads of a group that take turns, or some of group {previous}'s threads skip `arrive`",
                self.per_phase, self.observed, self.expected
            )?,
            Verdict::ExtraArrivals => write!(
                f,
                "  {} arrivals more than this turn completes with (count {}, expected exactly {}, {} per turn): a group has more threads that take turns than the arrivals per phase given to `init` (its phases complete before all of them arrived, and the slower threads fall behind), a thread arrived twice, or a view of the sequence was re-created mid-kernel (its turn count restarted)",
                arrived - i64::from(self.per_phase),
                self.observed,
                self.expected,
                self.per_phase
            )?,
            Verdict::CountedButIncomplete => write!(
                f,
                "  all {} arrivals of group {previous} for this turn were counted, but the barrier did not complete: it was re-initialised or overwritten, or arrivals reached it by other means",
                self.per_phase
            )?,
            _ => write!(f, "  group {previous} did not hand this turn on")?,
        }
        self.fmt_blocked(f)
    }

    /// A named-barrier record ([`Call::NamedBarrierSync`]).
    fn fmt_named_barrier(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let fault = match Fault::from_raw(self.fault) {
            Some(Fault::Timeout) => "HANG (wait budget spent)",
            _ => "unknown fault",
        };
        writeln!(
            f,
            "gpu-hopper named barrier {fault}: barrier {} of registry {} (shadow at 0x{:x}), in `Barriers::sync` at {}:{}:{}",
            self.stage,
            self.label,
            self.storage,
            self.file(),
            self.line,
            self.column
        )?;
        write!(f, "  phase {}; ", self.lap)?;
        self.fmt_place(f)?;
        writeln!(f)?;
        let arrived = self.arrived_this_lap();
        write!(
            f,
            "  {arrived} of {} threads reached this phase (this one included): {} never came. The thread count given to `NamedBarrier::new` is more than the threads that sync or arrive on barrier {} per phase, some warps skip it (a branch, an early return, fewer loop trips), or they wait elsewhere",
            self.per_phase,
            i64::from(self.per_phase) - arrived,
            self.stage
        )?;
        self.fmt_blocked(f)
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
