//! [`RolePipeline`]: one role per value, several barriers per stage, CTA pairs.
//!
//! The NVIDIA pipeline of Blackwell-style kernels (the reference's `RolePipeline`): the producer
//! value and the consumer value are different types, so a producer method on a consumer (or the
//! reverse) does not compile, and the start lap comes from the role.
//!
//! ```text
//!   producer barriers  [STAGES][PRODUCER_SUB_STAGES]   signalled by the producer (commit / commit_mma)
//!   consumer barriers  [STAGES][CONSUMER_SUB_STAGES]   signalled by the consumers (release)
//!
//!   producer: acquire (wait consumer barriers of the stage) → produce → commit (+ step)
//!   consumer: wait (wait producer barriers of the stage)    → consume → release (+ step)
//! ```
//!
//! Sub-stages split a stage's signal: a producer may publish a stage in parts (`commit_sub::<i>`,
//! consumers `wait_sub::<i>`), and several consumer groups may each release their own part
//! (`release_sub::<i>` / `release_no_step::<i>`). Sub-stage indices are const generics checked at
//! compile time.
//!
//! With `CTA_GROUP = 2` a stage is shared by a pair of CTAs of a cluster (ranks `2k`, `2k + 1`,
//! the even one the *leader*), and every wait acquires at cluster scope. Each role runs on the
//! CTAs of the pair that [`new_pair`](RolePipeline::new_pair) names ([`PairCtas`]; [`new`] is
//! both CTAs for both roles): the producer's `commit` arrives on the producer barrier at the same
//! offset in every CTA whose consumers wait, and the consumers' `release` on the consumer barrier
//! in every CTA whose producer waits. So each barrier counts the arrivals of the whole pair per
//! phase, a producer or consumer of a CTA of its role waits on its own CTA's copy, and no barrier
//! receives arrivals that nobody waits for. (A one-sided pair whose releases reached both CTAs
//! left the other CTA's consumer barriers completing phase after phase with no wait:
//! compute-sanitizer's synccheck stops such a kernel with "Missing wait"; the outside review of
//! bf6166c.)
//!
//! [`new`]: RolePipeline::new
//!
//! # Sub-stage indices
//!
//! The `_sub::<SUB>` forms take the index as a constant, checked at compile time and free at run
//! time; the `_sub_at(sub)` forms take it at run time, for code generic over the sub-stage count
//! (where `release_sub::<1>()` would not compile for one sub-stage, even in a branch that is never
//! taken). An index out of range there stops the kernel (a panic, which traps on the GPU): one
//! comparison, folded away when the index is known.
//!
//! # Differences from the reference
//!
//! - Roles are types ([`Producer`], [`Consumer`]); the reference's `is_producer: Bool` keeps every
//!   method on both.
//! - `acquire` waits for *every* consumer sub-stage and `wait` for *every* producer sub-stage of the
//!   stage (the reference waits on sub-stage 0 only, which lets a producer overwrite a stage that
//!   another consumer group still reads); the single-sub-stage forms are `acquire_sub::<i>` and
//!   `wait_sub::<i>`.
//! - `commit` arrives on every producer sub-stage barrier of the stage, then steps; `commit_sub::<i>`
//!   arrives on one. `commit_mma` commits to every producer sub-stage barrier.
//! - `commit_mma` compiles only for sm_100a; elsewhere it is a compile error that says why.
//! - Arrive counts are given to `init` as const generics and checked at compile time.

use crate::backend::{
    MAX_MBARRIER_ARRIVALS, MBARRIER_BYTES, Mbarrier, MbarrierRef, cluster_cta_rank, elect_one,
    fence_mbarrier_init,
};
use crate::cursor::{Consumer, Cursor, Producer, Side, StageCount};

/// The shared-memory bytes of a [`RolePipeline`]'s barriers: `stages * (producer_sub_stages +
/// consumer_sub_stages)` mbarriers (the same with or without the `checked` feature: role
/// barriers have no shadows). The layout formula of role pipelines, written once; kernels and
/// hosts that size shared memory at run time use this.
#[must_use]
pub const fn role_barrier_bytes(
    stages: usize,
    producer_sub_stages: usize,
    consumer_sub_stages: usize,
) -> usize {
    stages * (producer_sub_stages + consumer_sub_stages) * MBARRIER_BYTES as usize
}

/// A role pipeline: `STAGES` stages, role `R` ([`Producer`] or [`Consumer`]),
/// `PRODUCER_SUB_STAGES` producer barriers and `CONSUMER_SUB_STAGES` consumer barriers per stage,
/// shared by `CTA_GROUP` (1 or 2) CTAs.
///
/// Every thread of a role holds its own value, made by [`new`](Self::new) from the same barrier
/// storage; one thread calls [`init`](Self::init), and a block (for `CTA_GROUP = 2`, cluster)
/// barrier follows.
///
/// # Memory ordering
///
/// Producer arrivals are `mbarrier.arrive.release` (CTA scope, or cluster scope for the remote
/// arrivals of `CTA_GROUP = 2`), waits `try_wait.parity.acquire` at CTA scope (cluster scope for
/// `CTA_GROUP = 2`). `commit_mma` arrives when the issuing thread's earlier `tcgen05` operations
/// have completed (PTX ISA, "tcgen05.commit").
pub struct RolePipeline<
    const STAGES: usize,
    R: Side,
    const PRODUCER_SUB_STAGES: usize = 1,
    const CONSUMER_SUB_STAGES: usize = 1,
    const CTA_GROUP: u32 = 1,
> {
    producer_base: u32,
    consumer_base: u32,
    cursor: Cursor<STAGES, R>,
    /// `CTA_GROUP = 2`: the CTAs of the pair whose producers acquire (where releases go), as a
    /// mask of the pair (bit 0 the even CTA, bit 1 the odd one).
    producer_ctas: u8,
    /// `CTA_GROUP = 2`: the CTAs of the pair whose consumers wait (where commits go).
    consumer_ctas: u8,
}

/// The CTAs of a pair (`CTA_GROUP = 2`) on which a role runs: see
/// [`RolePipeline::new_pair`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PairCtas {
    /// The even CTA of the pair (cluster rank `2k`, the leader) only.
    Even,
    /// The odd CTA of the pair (cluster rank `2k + 1`) only.
    Odd,
    /// Both CTAs of the pair.
    Both,
}

impl PairCtas {
    /// The CTAs as a mask of the pair: bit 0 the even CTA, bit 1 the odd one.
    #[inline(always)]
    const fn mask(self) -> u8 {
        match self {
            PairCtas::Even => 0b01,
            PairCtas::Odd => 0b10,
            PairCtas::Both => 0b11,
        }
    }

    /// How many CTAs: the factor of a role's per-CTA arrivals in the arrive counts of the
    /// barriers it arrives on.
    #[must_use]
    pub const fn count(self) -> u32 {
        match self {
            PairCtas::Even | PairCtas::Odd => 1,
            PairCtas::Both => 2,
        }
    }
}

/// A producer-role pipeline (see [`RolePipeline`]).
pub type ProducerRole<
    const STAGES: usize,
    const PRODUCER_SUB: usize = 1,
    const CONSUMER_SUB: usize = 1,
    const CTA_GROUP: u32 = 1,
> = RolePipeline<STAGES, Producer, PRODUCER_SUB, CONSUMER_SUB, CTA_GROUP>;

/// A consumer-role pipeline (see [`RolePipeline`]).
pub type ConsumerRole<
    const STAGES: usize,
    const PRODUCER_SUB: usize = 1,
    const CONSUMER_SUB: usize = 1,
    const CTA_GROUP: u32 = 1,
> = RolePipeline<STAGES, Consumer, PRODUCER_SUB, CONSUMER_SUB, CTA_GROUP>;

/// Compile-time checks of a role pipeline's shape.
struct Shape<const PS: usize, const CS: usize, const G: u32>;

impl<const PS: usize, const CS: usize, const G: u32> Shape<PS, CS, G> {
    const CHECK: () = {
        assert!(
            PS >= 1,
            "gpu-pipeline: a RolePipeline needs at least one producer sub-stage"
        );
        assert!(
            CS >= 1,
            "gpu-pipeline: a RolePipeline needs at least one consumer sub-stage"
        );
        assert!(
            G == 1 || G == 2,
            "gpu-pipeline: CTA_GROUP must be 1 or 2 (tcgen05 cta_group::1 or ::2)"
        );
    };
}

/// Compile-time check of a sub-stage index.
struct SubStage<const SUB: usize, const COUNT: usize>;

impl<const SUB: usize, const COUNT: usize> SubStage<SUB, COUNT> {
    const PRODUCER: () = assert!(
        SUB < COUNT,
        "gpu-pipeline: producer sub-stage index out of range (it must be below PRODUCER_SUB_STAGES)"
    );
    const CONSUMER: () = assert!(
        SUB < COUNT,
        "gpu-pipeline: consumer sub-stage index out of range (it must be below CONSUMER_SUB_STAGES)"
    );
}

/// Compile-time check of `init`'s arrive counts.
struct RoleArrivals<const P: u32, const C: u32>;

impl<const P: u32, const C: u32> RoleArrivals<P, C> {
    const CHECK: () = {
        assert!(
            P >= 1,
            "gpu-pipeline: the producer arrive count must be at least 1"
        );
        assert!(
            C >= 1,
            "gpu-pipeline: the consumer arrive count must be at least 1"
        );
        assert!(
            P <= MAX_MBARRIER_ARRIVALS,
            "gpu-pipeline: the producer arrive count is above the mbarrier maximum (2^20 - 1)"
        );
        assert!(
            C <= MAX_MBARRIER_ARRIVALS,
            "gpu-pipeline: the consumer arrive count is above the mbarrier maximum (2^20 - 1)"
        );
    };
}

/// Fails the build when `commit_mma` is used on a target without `tcgen05`.
#[cfg(not(target_feature = "sm_100a"))]
struct NoTcgen05<T>(core::marker::PhantomData<T>);

#[cfg(not(target_feature = "sm_100a"))]
impl<T> NoTcgen05<T> {
    const ERROR: () = panic!(
        "gpu-pipeline: commit_mma emits tcgen05.commit, which exists only on Blackwell sm_100a (PTX ISA 8.6); build with -Ctarget-cpu=sm_100a -Ctarget-feature=+ptx86, or signal with commit() on this target"
    );
}

impl<const STAGES: usize, R: Side, const PS: usize, const CS: usize, const G: u32>
    RolePipeline<STAGES, R, PS, CS, G>
{
    /// Producer barriers: `STAGES * PRODUCER_SUB_STAGES`.
    pub const PRODUCER_BARRIERS: usize = STAGES * PS;
    /// Consumer barriers: `STAGES * CONSUMER_SUB_STAGES`.
    pub const CONSUMER_BARRIERS: usize = STAGES * CS;
    /// Shared-memory bytes of all the barriers ([`role_barrier_bytes`]).
    pub const SMEM_BYTES: usize = role_barrier_bytes(STAGES, PS, CS);

    /// A pipeline of role `R` over `PRODUCER_BARRIERS` mbarriers at `producer_barriers` and
    /// `CONSUMER_BARRIERS` at `consumer_barriers`; the cursor starts on the role's start lap.
    /// With `CTA_GROUP = 2`, both CTAs of the pair run both roles
    /// ([`new_pair`](Self::new_pair) with [`PairCtas::Both`] twice).
    ///
    /// # Safety
    ///
    /// Both pointers are in this CTA's shared memory, 8-byte aligned, hold that many [`Mbarrier`]s,
    /// are used for nothing else, and are initialised by one thread's [`init`](Self::init) followed
    /// by a block barrier (a cluster barrier for `CTA_GROUP = 2`) before any other use. With
    /// `CTA_GROUP = 2`, both CTAs of the pair lay their barriers out at the same offsets, and
    /// neither exits while the other may still arrive on its barriers.
    #[inline(always)]
    #[must_use]
    pub unsafe fn new(producer_barriers: *mut Mbarrier, consumer_barriers: *mut Mbarrier) -> Self {
        let () = StageCount::<STAGES>::CHECK;
        let () = Shape::<PS, CS, G>::CHECK;
        // SAFETY: the caller guarantees shared-memory pointers.
        let (producer_base, consumer_base) = unsafe {
            (
                MbarrierRef::from_ptr(producer_barriers).shared_addr(),
                MbarrierRef::from_ptr(consumer_barriers).shared_addr(),
            )
        };
        Self {
            producer_base,
            consumer_base,
            cursor: Cursor::start(),
            producer_ctas: PairCtas::Both.mask(),
            consumer_ctas: PairCtas::Both.mask(),
        }
    }

    /// Initialises every barrier: producer barriers expect `PRODUCER_ARRIVALS` arrivals per
    /// phase, consumer barriers `CONSUMER_ARRIVALS`. With `CTA_GROUP = 2` a producer barrier
    /// receives the commits of every producing CTA of the pair, and a consumer barrier the
    /// releases of every consuming CTA: count them all (two producer warps, one per CTA,
    /// committing with all lanes: `PRODUCER_ARRIVALS = 64`; one producing CTA's warp: 32;
    /// [`PairCtas::count`]). Counts of 0 or above 2^20 - 1 do not compile.
    ///
    /// # Safety
    ///
    /// One thread, before any other use of the barriers, followed by a block (cluster) barrier.
    #[inline(always)]
    pub unsafe fn init<const PRODUCER_ARRIVALS: u32, const CONSUMER_ARRIVALS: u32>(&self) {
        let () = RoleArrivals::<PRODUCER_ARRIVALS, CONSUMER_ARRIVALS>::CHECK;
        for i in 0..Self::PRODUCER_BARRIERS as u32 {
            // SAFETY: the caller is the only thread using the barriers, which `new`'s contract
            // places in this CTA's shared memory; the count is in range (checked above).
            unsafe {
                MbarrierRef::from_shared_addr(self.producer_base + i * MBARRIER_BYTES)
                    .init(PRODUCER_ARRIVALS)
            };
        }
        for i in 0..Self::CONSUMER_BARRIERS as u32 {
            // SAFETY: as above.
            unsafe {
                MbarrierRef::from_shared_addr(self.consumer_base + i * MBARRIER_BYTES)
                    .init(CONSUMER_ARRIVALS)
            };
        }
        fence_mbarrier_init();
    }

    /// The current stage index, in `0..STAGES`.
    #[inline(always)]
    #[must_use]
    pub fn stage(&self) -> u32 {
        self.cursor.stage()
    }

    /// The cursor (stage and lap; the producer starts on lap 1, the consumer on lap 0).
    #[inline(always)]
    #[must_use]
    pub fn cursor(&self) -> Cursor<STAGES, R> {
        self.cursor
    }

    /// The producer barrier of sub-stage `SUB` of the current stage (an out-of-range `SUB` does
    /// not compile).
    #[inline(always)]
    #[must_use]
    pub fn producer_mbar<const SUB: usize>(&self) -> MbarrierRef<'_> {
        let () = SubStage::<SUB, PS>::PRODUCER;
        self.producer_at(SUB as u32)
    }

    /// The consumer barrier of sub-stage `SUB` of the current stage.
    #[inline(always)]
    #[must_use]
    pub fn consumer_mbar<const SUB: usize>(&self) -> MbarrierRef<'_> {
        let () = SubStage::<SUB, CS>::CONSUMER;
        self.consumer_at(SUB as u32)
    }

    /// The producer barrier of sub-stage `sub` of the current stage, the index given at run time.
    ///
    /// # Panics
    ///
    /// If `sub >= PRODUCER_SUB_STAGES`.
    #[cfg_attr(feature = "checked", track_caller)]
    #[inline(always)]
    #[must_use]
    pub fn producer_mbar_at(&self, sub: usize) -> MbarrierRef<'_> {
        self.producer_at(checked_producer_sub::<PS>(sub))
    }

    /// The consumer barrier of sub-stage `sub` of the current stage, the index given at run time.
    ///
    /// # Panics
    ///
    /// If `sub >= CONSUMER_SUB_STAGES`.
    #[cfg_attr(feature = "checked", track_caller)]
    #[inline(always)]
    #[must_use]
    pub fn consumer_mbar_at(&self, sub: usize) -> MbarrierRef<'_> {
        self.consumer_at(checked_consumer_sub::<CS>(sub))
    }

    /// Moves to the next stage (and lap, past the last).
    #[inline(always)]
    pub fn step(&mut self) {
        self.cursor.step();
    }

    #[inline(always)]
    fn producer_at(&self, sub: u32) -> MbarrierRef<'_> {
        let index = self.cursor.stage() * PS as u32 + sub;
        // SAFETY: stage < STAGES and sub < PS, inside the producer barriers given to `new`.
        unsafe { MbarrierRef::from_shared_addr(self.producer_base + index * MBARRIER_BYTES) }
    }

    #[inline(always)]
    fn consumer_at(&self, sub: u32) -> MbarrierRef<'_> {
        let index = self.cursor.stage() * CS as u32 + sub;
        // SAFETY: stage < STAGES and sub < CS, inside the consumer barriers given to `new`.
        unsafe { MbarrierRef::from_shared_addr(self.consumer_base + index * MBARRIER_BYTES) }
    }

    /// Whether this CTA runs this value's role in its pair: always with `CTA_GROUP = 1`.
    #[cfg(feature = "checked")]
    #[inline(always)]
    fn in_role_ctas(&self) -> bool {
        let ctas = R::awaited(self.consumer_ctas, self.producer_ctas);
        G == 1 || (ctas >> (cluster_cta_rank() & 1)) & 1 != 0
    }

    /// One probe of `bar` for the phase of this side's lap (at cluster scope for CTA pairs),
    /// with a suspend-time hint of `ticks` ns if given.
    #[inline(always)]
    fn try_on(&self, bar: MbarrierRef<'_>, ticks: Option<u32>) -> bool {
        let lap = self.cursor.lap();
        match (G == 2, ticks) {
            (true, None) => bar.try_wait_parity_cluster(lap),
            (true, Some(ticks)) => bar.try_wait_parity_cluster_ticks(lap, ticks),
            (false, None) => bar.try_wait_parity(lap),
            (false, Some(ticks)) => bar.try_wait_parity_ticks(lap, ticks),
        }
    }

    /// Waits for the phase of this side's lap on `bar` (sub-stage `sub`), at cluster scope for
    /// CTA pairs, with a suspend-time hint of `ticks` ns per try if given.
    #[cfg_attr(feature = "checked", track_caller)]
    #[inline(always)]
    fn wait_on(
        &self,
        bar: MbarrierRef<'_>,
        sub: u32,
        ticks: Option<u32>,
        call: crate::checked::Call,
    ) {
        #[cfg(not(feature = "checked"))]
        {
            let _ = (sub, call);
            let lap = self.cursor.lap();
            match (G == 2, ticks) {
                (true, None) => bar.wait_parity_cluster(lap),
                (true, Some(ticks)) => bar.wait_parity_cluster_ticks(lap, ticks),
                (false, None) => bar.wait_parity(lap),
                (false, Some(ticks)) => bar.wait_parity_ticks(lap, ticks),
            }
        }
        // Checked builds: bounded, not shadowed (tcgen05 commits arrive in hardware, and the
        // arrive counts are given only to `init`).
        #[cfg(feature = "checked")]
        {
            use crate::checked;
            self.check_in_pair(sub, call);
            let location = core::panic::Location::caller();
            let word = checked::Diagnostics::DEFAULT.word();
            checked::bounded_wait(
                || self.try_on(bar, ticks),
                || {},
                || word,
                |elapsed_ns| {
                    checked::fail(&self.report(
                        checked::Fault::Timeout,
                        sub,
                        call,
                        elapsed_ns,
                        location,
                    ))
                },
            );
        }
    }

    /// One probe of sub-stage `sub` of the barriers this role awaits.
    #[cfg_attr(feature = "checked", track_caller)]
    #[inline(always)]
    fn try_one(&self, sub: u32) -> bool {
        #[cfg(feature = "checked")]
        self.check_in_pair(
            sub,
            R::awaited(
                crate::checked::Call::RoleWait,
                crate::checked::Call::RoleAcquire,
            ),
        );
        self.try_on(
            R::awaited(self.producer_at(sub), self.consumer_at(sub)),
            None,
        )
    }

    /// One probe of every sub-stage of the barriers this role awaits: whether all completed.
    #[cfg_attr(feature = "checked", track_caller)]
    #[inline(always)]
    fn try_all(&self) -> bool {
        let mut all = true;
        for sub in 0..R::awaited(PS, CS) as u32 {
            all &= self.try_one(sub);
        }
        all
    }

    /// Checked builds: the record of a fault of this value's wait on sub-stage `sub`.
    #[cfg(feature = "checked")]
    #[inline(always)]
    fn report(
        &self,
        fault: crate::checked::Fault,
        sub: u32,
        call: crate::checked::Call,
        elapsed_ns: u64,
        location: &'static core::panic::Location<'static>,
    ) -> crate::checked::Report {
        use crate::checked;
        checked::Report {
            fault,
            call,
            role: R::awaited(checked::Role::Consumer, checked::Role::Producer),
            diagnostics: checked::Diagnostics::DEFAULT.word(),
            storage: self.producer_base,
            stages: STAGES as u32,
            stage: self.cursor.stage(),
            sub_stage: sub,
            lap: self.cursor.lap(),
            per_phase: 0,
            expected: 0,
            observed: 0,
            tracked: false,
            held: 0,
            elapsed_ns,
            location,
        }
    }

    /// Checked builds: stops the kernel when this CTA does not run this value's role in its
    /// pair: no arrival reaches the barriers it would wait on.
    #[cfg(feature = "checked")]
    #[track_caller]
    #[inline(always)]
    fn check_in_pair(&self, sub: u32, call: crate::checked::Call) {
        if !self.in_role_ctas() {
            crate::checked::fail(&self.report(
                crate::checked::Fault::NotInPair,
                sub,
                call,
                0,
                core::panic::Location::caller(),
            ));
        }
    }

    /// One arrival of the calling thread on `bar`; for a CTA pair, on the barrier at the same
    /// offset in each CTA of `ctas` (a mask of the pair: the CTAs whose other role waits on it).
    /// No barrier gets arrivals that nobody waits for. (Releasing only the leader's consumer
    /// barrier left an odd CTA's producer waiting on a barrier nobody signalled, from its second
    /// lap on; releasing to both CTAs in a pair where one produces left the other's consumer
    /// barriers completing with no wait.)
    #[inline(always)]
    fn arrive_pair(bar: MbarrierRef<'_>, ctas: u8) {
        if G == 2 {
            let leader = Self::leader_rank();
            // SAFETY: `new`'s contract: a live pair with the same barrier layout, initialised
            // before a cluster barrier, neither CTA exiting while the other may arrive.
            unsafe {
                if ctas & 0b01 != 0 {
                    bar.arrive_remote(leader);
                }
                if ctas & 0b10 != 0 {
                    bar.arrive_remote(leader + 1);
                }
            }
        } else {
            bar.arrive();
        }
    }

    /// Waits on sub-stage `sub` of the barriers this role awaits (a producer the consumer
    /// barriers, a consumer the producer barriers); `sub` is checked by the caller.
    #[cfg_attr(feature = "checked", track_caller)]
    #[inline(always)]
    fn wait_one(&self, sub: u32, ticks: Option<u32>) {
        let bar = R::awaited(self.producer_at(sub), self.consumer_at(sub));
        let call = R::awaited(
            crate::checked::Call::RoleWait,
            crate::checked::Call::RoleAcquire,
        );
        self.wait_on(bar, sub, ticks, call);
    }

    /// Waits on every sub-stage of the barriers this role awaits.
    #[cfg_attr(feature = "checked", track_caller)]
    #[inline(always)]
    fn wait_all(&self, ticks: Option<u32>) {
        for sub in 0..R::awaited(PS, CS) as u32 {
            self.wait_one(sub, ticks);
        }
    }

    /// The even CTA rank of this CTA's pair.
    #[inline(always)]
    fn leader_rank() -> u32 {
        cluster_cta_rank() & !1
    }
}

/// `sub` as a producer sub-stage index of a pipeline with `PS` of them.
///
/// # Panics
///
/// If `sub >= PS`.
#[cfg_attr(feature = "checked", track_caller)]
#[inline(always)]
fn checked_producer_sub<const PS: usize>(sub: usize) -> u32 {
    assert!(
        sub < PS,
        "gpu-pipeline: producer sub-stage index out of range (it must be below PRODUCER_SUB_STAGES)"
    );
    sub as u32
}

/// `sub` as a consumer sub-stage index of a pipeline with `CS` of them.
///
/// # Panics
///
/// If `sub >= CS`.
#[cfg_attr(feature = "checked", track_caller)]
#[inline(always)]
fn checked_consumer_sub<const CS: usize>(sub: usize) -> u32 {
    assert!(
        sub < CS,
        "gpu-pipeline: consumer sub-stage index out of range (it must be below CONSUMER_SUB_STAGES)"
    );
    sub as u32
}

impl<const STAGES: usize, R: Side, const PS: usize, const CS: usize>
    RolePipeline<STAGES, R, PS, CS, 2>
{
    /// As [`new`](Self::new), for a CTA pair whose producers run on the CTAs `producers` and
    /// whose consumers on the CTAs `consumers` (one CTA of each pair, or both): commits arrive
    /// only on the producer barriers of the consuming CTAs, releases only on the consumer
    /// barriers of the producing CTAs, so that every barrier that receives arrivals has a
    /// waiter each phase (compute-sanitizer's synccheck reports one that completes phases
    /// unwaited). Every thread of both CTAs makes its values with the same `producers` and
    /// `consumers`. A producer of a CTA outside `producers` (or a consumer outside `consumers`)
    /// would wait on barriers nobody arrives on: in checked builds its first wait stops the kernel
    /// with a record saying so.
    ///
    /// The arrive counts given to [`init`](Self::init): a producer barrier counts the commits of
    /// every CTA of `producers` (`producers.count()` times one CTA's committing threads), a
    /// consumer barrier the releases of every CTA of `consumers`.
    ///
    /// # Safety
    ///
    /// As [`new`](Self::new).
    #[inline(always)]
    #[must_use]
    pub unsafe fn new_pair(
        producer_barriers: *mut Mbarrier,
        consumer_barriers: *mut Mbarrier,
        producers: PairCtas,
        consumers: PairCtas,
    ) -> Self {
        // SAFETY: forwarded from this function's contract.
        let pipe = unsafe { Self::new(producer_barriers, consumer_barriers) };
        Self {
            producer_ctas: producers.mask(),
            consumer_ctas: consumers.mask(),
            ..pipe
        }
    }
}

impl<const STAGES: usize, const PS: usize, const CS: usize, const G: u32>
    RolePipeline<STAGES, Producer, PS, CS, G>
{
    /// Waits until the consumers released every consumer sub-stage of the current stage.
    #[cfg_attr(feature = "checked", track_caller)]
    #[inline(always)]
    pub fn acquire(&self) {
        self.wait_all(None);
    }

    /// As [`acquire`](Self::acquire), letting the hardware suspend the thread for up to `ticks`
    /// ns per try while a sub-stage is still held.
    #[cfg_attr(feature = "checked", track_caller)]
    #[inline(always)]
    pub fn acquire_ticks(&self, ticks: u32) {
        self.wait_all(Some(ticks));
    }

    /// Whether the consumers have released every consumer sub-stage of the current stage, tried
    /// once each (`mbarrier.try_wait`, which may wait a short hardware-defined time before
    /// answering false); `true` acquires as [`acquire`](Self::acquire) does. Does not step.
    #[cfg_attr(feature = "checked", track_caller)]
    #[inline(always)]
    #[must_use]
    pub fn try_acquire(&self) -> bool {
        self.try_all()
    }

    /// Waits until consumer sub-stage `SUB` of the current stage was released.
    #[cfg_attr(feature = "checked", track_caller)]
    #[inline(always)]
    pub fn acquire_sub<const SUB: usize>(&self) {
        let () = SubStage::<SUB, CS>::CONSUMER;
        self.wait_one(SUB as u32, None);
    }

    /// [`acquire_sub`](Self::acquire_sub) with the index given at run time.
    ///
    /// # Panics
    ///
    /// If `sub >= CONSUMER_SUB_STAGES`.
    #[cfg_attr(feature = "checked", track_caller)]
    #[inline(always)]
    pub fn acquire_sub_at(&self, sub: usize) {
        self.wait_one(checked_consumer_sub::<CS>(sub), None);
    }

    /// Whether consumer sub-stage `SUB` of the current stage was released, tried once.
    #[cfg_attr(feature = "checked", track_caller)]
    #[inline(always)]
    #[must_use]
    pub fn try_acquire_sub<const SUB: usize>(&self) -> bool {
        let () = SubStage::<SUB, CS>::CONSUMER;
        self.try_one(SUB as u32)
    }

    /// [`try_acquire_sub`](Self::try_acquire_sub) with the index given at run time.
    ///
    /// # Panics
    ///
    /// If `sub >= CONSUMER_SUB_STAGES`.
    #[cfg_attr(feature = "checked", track_caller)]
    #[inline(always)]
    #[must_use]
    pub fn try_acquire_sub_at(&self, sub: usize) -> bool {
        self.try_one(checked_consumer_sub::<CS>(sub))
    }

    /// The calling thread arrives on every producer sub-stage barrier of the current stage (for a
    /// CTA pair, on those of the consuming CTAs), then steps.
    #[inline(always)]
    pub fn commit(&mut self) {
        for sub in 0..PS as u32 {
            self.arrive_producer(sub);
        }
        self.step();
    }

    /// The calling thread arrives on producer sub-stage `SUB` of the current stage (for a CTA
    /// pair, in the consuming CTAs). Does not step.
    #[inline(always)]
    pub fn commit_sub<const SUB: usize>(&self) {
        let () = SubStage::<SUB, PS>::PRODUCER;
        self.arrive_producer(SUB as u32);
    }

    /// [`commit_sub`](Self::commit_sub) with the index given at run time.
    ///
    /// # Panics
    ///
    /// If `sub >= PRODUCER_SUB_STAGES`.
    #[cfg_attr(feature = "checked", track_caller)]
    #[inline(always)]
    pub fn commit_sub_at(&self, sub: usize) {
        self.arrive_producer(checked_producer_sub::<PS>(sub));
    }

    #[inline(always)]
    fn arrive_producer(&self, sub: u32) {
        Self::arrive_pair(self.producer_at(sub), self.consumer_ctas);
    }

    /// Commits the MMAs issued so far by one elected lane of the calling warp (`elect.sync`): each
    /// producer sub-stage barrier of the current stage receives one arrival when they complete
    /// (`tcgen05.commit`; for a CTA pair, multicast to the consuming CTAs). Does not step.
    ///
    /// Only on sm_100a: elsewhere this does not compile, with a message saying so.
    ///
    /// # Safety
    ///
    /// All 32 lanes of the calling warp call it together, converged: `elect.sync` with the full
    /// member mask is undefined otherwise (PTX ISA, "elect.sync"). From a divergent path, elect a
    /// lane yourself and call [`commit_mma_elected`](Self::commit_mma_elected).
    #[inline(always)]
    pub unsafe fn commit_mma(&self) {
        // SAFETY: the caller guarantees a converged, full warp.
        self.commit_mma_elected(unsafe { elect_one() });
    }

    /// As [`commit_mma`](Self::commit_mma), with the caller's election: the thread with
    /// `elected = true` commits (exactly one per warp should).
    #[inline(always)]
    pub fn commit_mma_elected(&self, elected: bool) {
        #[cfg(not(target_feature = "sm_100a"))]
        {
            let () = NoTcgen05::<Self>::ERROR;
            let _ = elected;
        }
        #[cfg(target_feature = "sm_100a")]
        if elected {
            for sub in 0..PS as u32 {
                let bar = self.producer_at(sub);
                // SAFETY: an initialised barrier of this CTA (its pair peer has the same layout,
                // by `new`'s contract).
                unsafe {
                    if G == 2 {
                        bar.tcgen05_commit_multicast(
                            u32::from(self.consumer_ctas) << Self::leader_rank(),
                        );
                    } else {
                        bar.tcgen05_commit();
                    }
                }
            }
        }
    }
}

impl<const STAGES: usize, const PS: usize, const CS: usize, const G: u32>
    RolePipeline<STAGES, Consumer, PS, CS, G>
{
    /// Waits until the producer committed every producer sub-stage of the current stage.
    #[cfg_attr(feature = "checked", track_caller)]
    #[inline(always)]
    pub fn wait(&self) {
        self.wait_all(None);
    }

    /// As [`wait`](Self::wait), letting the hardware suspend the thread for up to `ticks` ns
    /// per try while a sub-stage is still uncommitted.
    #[cfg_attr(feature = "checked", track_caller)]
    #[inline(always)]
    pub fn wait_ticks(&self, ticks: u32) {
        self.wait_all(Some(ticks));
    }

    /// Whether the producer committed every producer sub-stage of the current stage, tried once
    /// each (`mbarrier.try_wait`, which may wait a short hardware-defined time before answering
    /// false); `true` acquires as [`wait`](Self::wait) does. Does not step.
    #[cfg_attr(feature = "checked", track_caller)]
    #[inline(always)]
    #[must_use]
    pub fn try_wait(&self) -> bool {
        self.try_all()
    }

    /// Waits until the producer committed producer sub-stage `SUB` of the current stage.
    #[cfg_attr(feature = "checked", track_caller)]
    #[inline(always)]
    pub fn wait_sub<const SUB: usize>(&self) {
        let () = SubStage::<SUB, PS>::PRODUCER;
        self.wait_one(SUB as u32, None);
    }

    /// [`wait_sub`](Self::wait_sub) with the index given at run time.
    ///
    /// # Panics
    ///
    /// If `sub >= PRODUCER_SUB_STAGES`.
    #[cfg_attr(feature = "checked", track_caller)]
    #[inline(always)]
    pub fn wait_sub_at(&self, sub: usize) {
        self.wait_one(checked_producer_sub::<PS>(sub), None);
    }

    /// Whether the producer committed producer sub-stage `SUB` of the current stage, tried once.
    #[cfg_attr(feature = "checked", track_caller)]
    #[inline(always)]
    #[must_use]
    pub fn try_wait_sub<const SUB: usize>(&self) -> bool {
        let () = SubStage::<SUB, PS>::PRODUCER;
        self.try_one(SUB as u32)
    }

    /// [`try_wait_sub`](Self::try_wait_sub) with the index given at run time.
    ///
    /// # Panics
    ///
    /// If `sub >= PRODUCER_SUB_STAGES`.
    #[cfg_attr(feature = "checked", track_caller)]
    #[inline(always)]
    #[must_use]
    pub fn try_wait_sub_at(&self, sub: usize) -> bool {
        self.try_one(checked_producer_sub::<PS>(sub))
    }

    /// Releases consumer sub-stage 0 of the current stage and steps.
    #[inline(always)]
    pub fn release(&mut self) {
        self.release_sub::<0>();
    }

    /// Releases consumer sub-stage `SUB` of the current stage (the calling thread arrives; for a
    /// CTA pair, on the barriers of the producing CTAs) and steps.
    #[inline(always)]
    pub fn release_sub<const SUB: usize>(&mut self) {
        self.release_no_step::<SUB>();
        self.step();
    }

    /// [`release_sub`](Self::release_sub) with the index given at run time.
    ///
    /// # Panics
    ///
    /// If `sub >= CONSUMER_SUB_STAGES`.
    #[cfg_attr(feature = "checked", track_caller)]
    #[inline(always)]
    pub fn release_sub_at(&mut self, sub: usize) {
        self.release_no_step_at(sub);
        self.step();
    }

    /// Releases consumer sub-stage `SUB` of the current stage without stepping: for a consumer
    /// that releases several sub-stages, then calls [`step`](Self::step).
    #[inline(always)]
    pub fn release_no_step<const SUB: usize>(&self) {
        let () = SubStage::<SUB, CS>::CONSUMER;
        self.arrive_consumer(SUB as u32);
    }

    /// [`release_no_step`](Self::release_no_step) with the index given at run time.
    ///
    /// # Panics
    ///
    /// If `sub >= CONSUMER_SUB_STAGES`.
    #[cfg_attr(feature = "checked", track_caller)]
    #[inline(always)]
    pub fn release_no_step_at(&self, sub: usize) {
        self.arrive_consumer(checked_consumer_sub::<CS>(sub));
    }

    #[inline(always)]
    fn arrive_consumer(&self, sub: u32) {
        Self::arrive_pair(self.consumer_at(sub), self.producer_ctas);
    }
}
