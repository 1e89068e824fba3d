//! Warpgroups and elected lanes: where a thread sits in its block's warpgroups, and the one-lane
//! election the pipelines' elected releases use.
//!
//! A warpgroup is four consecutive warps whose first warp's index is a multiple of 4 (PTX ISA,
//! "Asynchronous Warpgroup Level Matrix Multiply-Accumulate Instructions": the unit `wgmma` and
//! `setmaxnreg` execute in). In a one-dimensional block, thread `t` is in warpgroup `t / 128`, warp
//! `(t % 128) / 32` of it, lane `t % 32`. The functions of a thread index are pure (and tested on
//! the host); [`Position::current`] reads `%tid.x`.
//!
//! Role code branches on these values, which are uniform over exactly the groups they name: a
//! branch on [`Position::warpgroup`] keeps each warpgroup converged (what `wgmma` needs), one on
//! [`Position::warp`] each warp (what `.aligned` barriers need), one on [`Position::lane`] neither.

pub use gpu_pipeline::elect_one;

/// Threads per warpgroup.
pub const WARPGROUP_THREADS: u32 = 128;
/// Threads per warp.
pub const WARP_THREADS: u32 = 32;

/// A thread's place in a one-dimensional block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Position {
    /// The thread's warpgroup in the block.
    pub warpgroup: u32,
    /// Its warp within that warpgroup (0..4).
    pub warp: u32,
    /// Its lane within that warp (0..32).
    pub lane: u32,
}

impl Position {
    /// The place of thread `tid` (its `%tid.x`) of a one-dimensional block.
    #[inline(always)]
    #[must_use]
    pub const fn of(tid: u32) -> Self {
        Self {
            warpgroup: tid / WARPGROUP_THREADS,
            warp: (tid % WARPGROUP_THREADS) / WARP_THREADS,
            lane: tid % WARP_THREADS,
        }
    }

    /// The calling thread's place (`%tid.x`; the block is one-dimensional).
    #[inline(always)]
    #[must_use]
    pub fn current() -> Self {
        Self::of(gpu_pipeline::arch::nvptx::tid()[0])
    }

    /// The thread's index in its warpgroup (0..128).
    #[inline(always)]
    #[must_use]
    pub const fn in_warpgroup(self) -> u32 {
        self.warp * WARP_THREADS + self.lane
    }

    /// Whether the thread is its warpgroup's first (lane 0 of warp 0): the one thread that issues
    /// a warpgroup's single-thread work (a tensor store, a bulk-group wait) when no election is
    /// needed because the choice is fixed.
    #[inline(always)]
    #[must_use]
    pub const fn leads_warpgroup(self) -> bool {
        self.warp == 0 && self.lane == 0
    }
}

/// The warpgroup's index among the consumer warpgroups of a kernel whose first
/// `producer_warpgroups` warpgroups produce: `None` for a producer thread.
#[inline(always)]
#[must_use]
pub const fn consumer_index(position: Position, producer_warpgroups: u32) -> Option<u32> {
    if position.warpgroup < producer_warpgroups {
        None
    } else {
        Some(position.warpgroup - producer_warpgroups)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_blocks_threads_fall_into_warpgroups_warps_and_lanes() {
        for tid in 0..384 {
            let p = Position::of(tid);
            assert_eq!(p.warpgroup * 128 + p.in_warpgroup(), tid);
            assert!(p.warp < 4 && p.lane < 32);
            assert_eq!(p.leads_warpgroup(), tid % 128 == 0);
        }
        assert_eq!(
            Position::of(200),
            Position {
                warpgroup: 1,
                warp: 2,
                lane: 8
            }
        );
    }

    #[test]
    fn the_producer_warpgroups_come_first() {
        assert_eq!(consumer_index(Position::of(127), 1), None);
        assert_eq!(consumer_index(Position::of(128), 1), Some(0));
        assert_eq!(consumer_index(Position::of(383), 1), Some(1));
        assert_eq!(consumer_index(Position::of(0), 0), Some(0));
    }
}
