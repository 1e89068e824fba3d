//! Warpgroup register reallocation: the budget of each role derived from the launch and the role
//! split, and `setmaxnreg` with it.
//!
//! A kernel launched with `.maxntid T` gets `floor(65536 / T)` registers per thread, rounded
//! down to the allocation granule of 8 (so that the block fits the SM's 64 Ki-register file; at
//! most 255 per thread, so 248 after rounding). That is the pool the warpgroups share. The
//! producer warpgroups give registers back with `setmaxnreg.dec` (they mostly issue TMA), and
//! the consumer warpgroups take what is free with `setmaxnreg.inc`:
//!
//! ```text
//! launch   = round8(min(65536 / threads, 255))
//! pool     = threads * launch
//! consumer = round8((pool - producer_wg * 128 * producer) / (consumer_wg * 128)), at most 256
//! ```
//!
//! With 384 threads, one producer warpgroup at 40 and two consumer warpgroups: launch 168,
//! pool 64512, consumers 232 (the GEMM's split). A split that cannot work (the producers asking
//! for more than they have, the consumers getting less than they start with, or a register
//! count outside `setmaxnreg`'s 24..=256) is a compile error where the split is a constant:
//!
//! ```
//! use gpu_hopper::regs::RegisterSplit;
//! const SPLIT: RegisterSplit = RegisterSplit::new(384, 1, 2, 40);
//! assert_eq!((SPLIT.producer, SPLIT.consumer), (40, 232));
//! ```
//!
//! ```compile_fail,E0080
//! // error: "the producer's registers exceed the launch budget"
//! const SPLIT: gpu_hopper::regs::RegisterSplit = gpu_hopper::regs::RegisterSplit::new(384, 1, 2, 176);
//! ```
//!
//! ```compile_fail,E0080
//! // error: "setmaxnreg takes 24 to 256 registers, a multiple of 8"
//! const SPLIT: gpu_hopper::regs::RegisterSplit = gpu_hopper::regs::RegisterSplit::new(384, 1, 2, 44);
//! ```

/// Threads per warpgroup.
pub const WARPGROUP_THREADS: u32 = 128;

/// The SM's register file: 64 Ki 32-bit registers (CUDA C++ Programming Guide, "Compute
/// Capabilities": 64 K registers per SM and per block for compute capability 9.0).
pub const REGISTER_FILE: u32 = 65536;

/// The most registers one thread can have at launch (255), rounded down to the granule.
pub const MAX_LAUNCH_REGISTERS: u32 = 248;

/// Rounds down to a multiple of 8 (register allocation granule, and `setmaxnreg`'s step).
const fn round8(x: u32) -> u32 {
    x - x % 8
}

/// The registers per thread at launch for a block of `threads` threads (`.maxntid threads`):
/// registers are allocated per warp, so a partial last warp counts whole.
#[must_use]
pub const fn launch_registers(threads: u32) -> u32 {
    assert!(
        threads > 0 && threads <= 1024,
        "gpu-hopper: a block has 1 to 1024 threads"
    );
    let per_thread = REGISTER_FILE / (threads.div_ceil(32) * 32);
    let capped = if per_thread > 255 { 255 } else { per_thread };
    round8(capped)
}

/// The register budgets of a producer/consumer warpgroup split.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RegisterSplit {
    /// Registers per thread at launch.
    pub launch: u32,
    /// Registers per producer thread after `setmaxnreg.dec`.
    pub producer: u32,
    /// Registers per consumer thread after `setmaxnreg.inc`.
    pub consumer: u32,
}

impl RegisterSplit {
    /// The split of a launch of `threads` threads into `producer_wgs` producer warpgroups at
    /// `producer_regs` registers and `consumer_wgs` consumer warpgroups that take the rest.
    ///
    /// # Panics
    ///
    /// (At compile time where the arguments are constants.) If the warpgroups do not fit the
    /// launch, `producer_regs` is outside 24..=256, not a multiple of 8 or above the launch
    /// budget, or the consumers would get fewer registers than at launch.
    #[must_use]
    pub const fn new(
        threads: u32,
        producer_wgs: u32,
        consumer_wgs: u32,
        producer_regs: u32,
    ) -> Self {
        assert!(
            consumer_wgs > 0,
            "gpu-hopper: a register split needs at least one consumer warpgroup"
        );
        assert!(
            producer_wgs
                .saturating_add(consumer_wgs)
                .saturating_mul(WARPGROUP_THREADS)
                <= threads,
            "gpu-hopper: the producer and consumer warpgroups need more threads than the launch has"
        );
        assert!(
            producer_regs >= 24 && producer_regs <= 256 && producer_regs % 8 == 0,
            "gpu-hopper: setmaxnreg takes 24 to 256 registers, a multiple of 8 (the producer's count)"
        );
        let launch = launch_registers(threads);
        assert!(
            producer_regs <= launch,
            "gpu-hopper: the producer's registers exceed the launch budget (setmaxnreg.dec only lowers it)"
        );
        // Whole warps (registers are allocated per warp).
        let pool = threads.div_ceil(32) * 32 * launch;
        let producers = producer_wgs * WARPGROUP_THREADS * producer_regs;
        // Threads outside both roles keep their launch budget, their last warp whole.
        let others = (threads - (producer_wgs + consumer_wgs) * WARPGROUP_THREADS).div_ceil(32)
            * 32
            * launch;
        let free = pool - producers - others;
        let share = round8(free / (consumer_wgs * WARPGROUP_THREADS));
        let consumer = if share > 256 { 256 } else { share };
        assert!(
            consumer >= launch,
            "gpu-hopper: the consumers would get fewer registers than at launch (setmaxnreg.inc only raises it): lower the producer's count"
        );
        Self {
            launch,
            producer: producer_regs,
            consumer,
        }
    }
}

/// `setmaxnreg.dec` to `REGS` for the executing warpgroup (see
/// [`arch::nvptx::setmaxnreg_dec`](crate::arch::nvptx::setmaxnreg_dec)); `REGS` out of range is a
/// compile error.
///
/// # Safety
///
/// As the leaf: the whole warpgroup, a launch bound, `REGS` not above the current budget.
#[inline(always)]
pub unsafe fn decrease<const REGS: u32>() {
    const {
        assert!(
            crate::arch::nvptx::setmaxnreg_in_range(REGS),
            "gpu-hopper: setmaxnreg takes 24 to 256 registers, a multiple of 8"
        )
    };
    // SAFETY: the caller's contract is the leaf's.
    unsafe { crate::arch::nvptx::setmaxnreg_dec::<REGS>() }
}

/// `setmaxnreg.inc` to `REGS` for the executing warpgroup (see
/// [`arch::nvptx::setmaxnreg_inc`](crate::arch::nvptx::setmaxnreg_inc)).
///
/// # Safety
///
/// As the leaf: the whole warpgroup, a launch bound, `REGS` not below the current budget, and
/// the registers released by the other warpgroups.
#[inline(always)]
pub unsafe fn increase<const REGS: u32>() {
    const {
        assert!(
            crate::arch::nvptx::setmaxnreg_in_range(REGS),
            "gpu-hopper: setmaxnreg takes 24 to 256 registers, a multiple of 8"
        )
    };
    // SAFETY: the caller's contract is the leaf's.
    unsafe { crate::arch::nvptx::setmaxnreg_inc::<REGS>() }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Registers are allocated per warp: a block of threads that is not a whole number of warps
    /// takes its last warp's registers whole (found by a review, 2026-12-05: 400 threads at 160
    /// a thread are 13 warps of 5120, more than the 64 Ki of the file).
    #[test]
    fn too_many_warpgroups_is_the_documented_panic() {
        // 2^25 warpgroups of 128 threads wrapped 32 bits before the check (a review, 2026-12-05).
        let e = std::panic::catch_unwind(|| RegisterSplit::new(256, 1 << 25, 1, 24))
            .expect_err("a panic");
        let message = e
            .downcast_ref::<&str>()
            .map(|s| std::string::String::from(*s))
            .or_else(|| e.downcast_ref::<std::string::String>().cloned())
            .unwrap_or_default();
        assert!(message.contains("need more threads"), "{message}");
    }

    #[test]
    fn the_launch_budget_counts_whole_warps() {
        for threads in 1..=1024u32 {
            let launch = launch_registers(threads);
            assert!(
                threads.div_ceil(32) * 32 * launch <= REGISTER_FILE,
                "{threads} threads at {launch}"
            );
        }
        // A split of 400 threads: the consumers' share from what 13 warps leave.
        let split = RegisterSplit::new(400, 1, 2, 24);
        let warps_of = |threads: u32| threads.div_ceil(32) * 32;
        assert!(
            warps_of(400 - 384) * split.launch + 128 * split.producer + 256 * split.consumer
                <= REGISTER_FILE,
            "{split:?}"
        );
    }

    #[test]
    fn the_gemms_split() {
        const SPLIT: RegisterSplit = RegisterSplit::new(384, 1, 2, 40);
        assert_eq!(
            SPLIT,
            RegisterSplit {
                launch: 168,
                producer: 40,
                consumer: 232
            }
        );
        // The GEMM's check: 128 x 40 + 256 x 232 fits the pool of 384 x 168.
        let split = std::hint::black_box(SPLIT);
        assert!(128 * split.producer + 256 * split.consumer <= 384 * split.launch);
    }

    #[test]
    fn launch_budgets() {
        assert_eq!(launch_registers(128), 248);
        assert_eq!(launch_registers(256), 248);
        assert_eq!(launch_registers(384), 168);
        assert_eq!(launch_registers(512), 128);
        assert_eq!(launch_registers(640), 96);
    }

    #[test]
    fn other_splits() {
        // Ping-pong: one producer, two consumers at 24 and 240 (CUTLASS's choice) fits.
        assert_eq!(RegisterSplit::new(384, 1, 2, 24).consumer, 240);
        // Three consumer warpgroups of a 512-thread launch.
        assert_eq!(RegisterSplit::new(512, 1, 3, 24).consumer, 160);
        // Capped at 256.
        assert_eq!(RegisterSplit::new(256, 1, 1, 24).consumer, 256);
    }

    #[test]
    #[should_panic(expected = "exceed the launch budget")]
    fn a_greedy_producer_is_refused() {
        let _ = RegisterSplit::new(384, 1, 2, 176);
    }

    #[test]
    #[should_panic(expected = "need more threads than the launch has")]
    fn too_many_warpgroups_are_refused() {
        let _ = RegisterSplit::new(256, 1, 2, 40);
    }
}
