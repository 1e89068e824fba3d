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
//! the even one the *leader*): every arrival, the producer's `commit` and the consumers'
//! `release`, goes to the barrier at the same offset in *both* CTAs, and every wait acquires at
//! cluster scope. So each barrier counts the arrivals of the whole pair per phase, and a producer
//! or consumer of either CTA waits on its own CTA's copy. (Before, consumers released only the
//! leader's consumer barrier, and a producer on the odd CTA hung from its second lap.)
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
        }
    }

    /// Initialises every barrier: producer barriers expect `PRODUCER_ARRIVALS` arrivals per
    /// phase, consumer barriers `CONSUMER_ARRIVALS`. With `CTA_GROUP = 2` every barrier receives
    /// the arrivals of both CTAs of the pair: count them all (two producer warps, one per CTA,
    /// committing with all lanes: `PRODUCER_ARRIVALS = 64`). Counts of 0 or above 2^20 - 1 do
    /// not compile.
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

    /// Waits for the phase of this side's lap, at cluster scope for CTA pairs.
    #[cfg_attr(feature = "checked", track_caller)]
    #[inline(always)]
    fn wait_on(&self, bar: MbarrierRef<'_>, sub: u32, call: crate::checked::Call) {
        #[cfg(not(feature = "checked"))]
        {
            let _ = (sub, call);
            if G == 2 {
                bar.wait_parity_cluster(self.cursor.lap());
            } else {
                bar.wait_parity(self.cursor.lap());
            }
        }
        // Checked builds: bounded, not shadowed (tcgen05 commits arrive in hardware, and the
        // arrive counts are given only to `init`).
        #[cfg(feature = "checked")]
        {
            use crate::checked;
            let lap = self.cursor.lap();
            let location = core::panic::Location::caller();
            let word = checked::Diagnostics::DEFAULT.word();
            checked::bounded_wait(
                || {
                    if G == 2 {
                        bar.try_wait_parity_cluster(lap)
                    } else {
                        bar.try_wait_parity(lap)
                    }
                },
                || {},
                || word,
                |elapsed_ns| {
                    checked::fail(&checked::Report {
                        fault: checked::Fault::Timeout,
                        call,
                        role: if call == checked::Call::RoleAcquire {
                            checked::Role::Producer
                        } else {
                            checked::Role::Consumer
                        },
                        diagnostics: word,
                        storage: self.producer_base,
                        stages: STAGES as u32,
                        stage: self.cursor.stage(),
                        sub_stage: sub,
                        lap,
                        per_phase: 0,
                        expected: 0,
                        observed: 0,
                        tracked: false,
                        elapsed_ns,
                        location,
                    })
                },
            );
        }
    }

    /// One arrival of the calling thread on `bar`; for a CTA pair, on the barrier at the same
    /// offset in *both* CTAs of the pair. Every signal of a pair reaches both CTAs, so both CTAs'
    /// waits see every phase: a producer of either CTA may acquire, a consumer of either CTA may
    /// wait. (Releasing only the leader's consumer barrier left the odd CTA's producer waiting on
    /// a barrier nobody signalled, from its second lap on.)
    #[inline(always)]
    fn arrive_pair(bar: MbarrierRef<'_>) {
        if G == 2 {
            let leader = Self::leader_rank();
            // SAFETY: `new`'s contract: a live pair with the same barrier layout, initialised
            // before a cluster barrier, neither CTA exiting while the other may arrive.
            unsafe {
                bar.arrive_remote(leader);
                bar.arrive_remote(leader + 1);
            }
        } else {
            bar.arrive();
        }
    }

    /// Waits on sub-stage `sub` of the barriers this role awaits (a producer the consumer
    /// barriers, a consumer the producer barriers); `sub` is checked by the caller.
    #[cfg_attr(feature = "checked", track_caller)]
    #[inline(always)]
    fn wait_one(&self, sub: u32) {
        let bar = R::awaited(self.producer_at(sub), self.consumer_at(sub));
        let call = R::awaited(
            crate::checked::Call::RoleWait,
            crate::checked::Call::RoleAcquire,
        );
        self.wait_on(bar, sub, call);
    }

    /// Waits on every sub-stage of the barriers this role awaits.
    #[cfg_attr(feature = "checked", track_caller)]
    #[inline(always)]
    fn wait_all(&self) {
        for sub in 0..R::awaited(PS, CS) as u32 {
            self.wait_one(sub);
        }
    }

    /// The even CTA rank of this CTA's pair.
    #[inline(always)]
    fn leader_rank() -> u32 {
        cluster_cta_rank() & !1
    }
}

impl<const STAGES: usize, const PS: usize, const CS: usize, const G: u32>
    RolePipeline<STAGES, Producer, PS, CS, G>
{
    /// Waits until the consumers released every consumer sub-stage of the current stage.
    #[cfg_attr(feature = "checked", track_caller)]
    #[inline(always)]
    pub fn acquire(&self) {
        self.wait_all();
    }

    /// Waits until consumer sub-stage `SUB` of the current stage was released.
    #[cfg_attr(feature = "checked", track_caller)]
    #[inline(always)]
    pub fn acquire_sub<const SUB: usize>(&self) {
        let () = SubStage::<SUB, CS>::CONSUMER;
        self.wait_one(SUB as u32);
    }

    /// The calling thread arrives on every producer sub-stage barrier of the current stage (for a
    /// CTA pair, on those of both CTAs), then steps.
    #[inline(always)]
    pub fn commit(&mut self) {
        for sub in 0..PS as u32 {
            self.arrive_producer(sub);
        }
        self.step();
    }

    /// The calling thread arrives on producer sub-stage `SUB` of the current stage (both CTAs of
    /// a pair). Does not step.
    #[inline(always)]
    pub fn commit_sub<const SUB: usize>(&self) {
        let () = SubStage::<SUB, PS>::PRODUCER;
        self.arrive_producer(SUB as u32);
    }

    #[inline(always)]
    fn arrive_producer(&self, sub: u32) {
        Self::arrive_pair(self.producer_at(sub));
    }

    /// Commits the MMAs issued so far by one elected lane of the calling warp (`elect.sync`): each
    /// producer sub-stage barrier of the current stage receives one arrival when they complete
    /// (`tcgen05.commit`; for a CTA pair, multicast to both CTAs). Does not step.
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
                        bar.tcgen05_commit_multicast(0b11 << Self::leader_rank());
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
        self.wait_all();
    }

    /// Waits until the producer committed producer sub-stage `SUB` of the current stage.
    #[cfg_attr(feature = "checked", track_caller)]
    #[inline(always)]
    pub fn wait_sub<const SUB: usize>(&self) {
        let () = SubStage::<SUB, PS>::PRODUCER;
        self.wait_one(SUB as u32);
    }

    /// Releases consumer sub-stage 0 of the current stage and steps.
    #[inline(always)]
    pub fn release(&mut self) {
        self.release_sub::<0>();
    }

    /// Releases consumer sub-stage `SUB` of the current stage (the calling thread arrives; for a
    /// CTA pair, on the barriers of both CTAs) and steps.
    #[inline(always)]
    pub fn release_sub<const SUB: usize>(&mut self) {
        self.release_no_step::<SUB>();
        self.step();
    }

    /// Releases consumer sub-stage `SUB` of the current stage without stepping: for a consumer
    /// that releases several sub-stages, then calls [`step`](Self::step).
    #[inline(always)]
    pub fn release_no_step<const SUB: usize>(&self) {
        let () = SubStage::<SUB, CS>::CONSUMER;
        Self::arrive_pair(self.consumer_at(SUB as u32));
    }
}
