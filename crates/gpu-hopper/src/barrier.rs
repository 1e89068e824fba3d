//! Named barriers (`barrier.sync` / `barrier.arrive` with an id) and the registry that makes
//! two pieces of a kernel using the same hardware id a compile error.
//!
//! A CTA has 16 named barriers, ids 0..=15; id 0 is the one `__syncthreads` (`bar.sync 0`)
//! uses. Two pieces of one kernel (say an epilogue and a split-K reduction) that pick the same
//! id with different thread counts, or whose phases interleave, hang or release the wrong
//! threads — a hang that shows up only under some timings, and among the most reported in
//! CUTLASS and FlashAttention. Here each piece declares the barriers it uses as a constant
//! list, and the kernel registers all its pieces' lists in one [`BarrierRegistry`]: a repeated
//! id stops the build with a message that names both users.
//!
//! ```
//! use gpu_hopper::barrier::{BarrierRegistry, NamedBarrier};
//!
//! /// The epilogue: one barrier per consumer warpgroup.
//! const EPILOGUE: &[NamedBarrier] = &[
//!     NamedBarrier::new("epilogue, warpgroup 1", 1, 128),
//!     NamedBarrier::new("epilogue, warpgroup 2", 2, 128),
//! ];
//! /// The split-K reduction: both consumer warpgroups.
//! const SPLIT_K: &[NamedBarrier] = &[NamedBarrier::new("split-K consumers", 3, 256)];
//!
//! const BARRIERS: BarrierRegistry = BarrierRegistry::new(&[EPILOGUE, SPLIT_K]);
//! assert_eq!(BARRIERS.used(), 0b1110);
//! assert_eq!(BARRIERS.first_free(), 4);
//! ```
//!
//! The same with the split-K barrier on id 2 does not compile:
//!
//! ```compile_fail,E0080
//! use gpu_hopper::barrier::{BarrierRegistry, NamedBarrier};
//!
//! const EPILOGUE: &[NamedBarrier] = &[
//!     NamedBarrier::new("epilogue, warpgroup 1", 1, 128),
//!     NamedBarrier::new("epilogue, warpgroup 2", 2, 128),
//! ];
//! const SPLIT_K: &[NamedBarrier] = &[NamedBarrier::new("split-K consumers", 2, 256)];
//! // error: "gpu-hopper: named barrier 2 is used by both `epilogue, warpgroup 2` and
//! // `split-K consumers`"
//! const BARRIERS: BarrierRegistry = BarrierRegistry::new(&[EPILOGUE, SPLIT_K]);
//! ```
//!
//! Nor does a thread count that is not a whole number of warps, or id 0:
//!
//! ```compile_fail,E0080
//! const B: gpu_hopper::barrier::NamedBarrier = gpu_hopper::barrier::NamedBarrier::new("half a warp", 1, 16);
//! ```
//!
//! ```compile_fail,E0080
//! const B: gpu_hopper::barrier::NamedBarrier = gpu_hopper::barrier::NamedBarrier::new("syncthreads' own", 0, 128);
//! ```

use crate::arch::nvptx as ptx;

/// The hardware named barriers of a CTA: ids 0..=15.
pub const NAMED_BARRIERS: u32 = 16;

/// One named barrier: a hardware id (1..=15; 0 is `__syncthreads`'), the threads that take part
/// in each phase (a multiple of the warp size), and the name of its user, for the registry's
/// messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NamedBarrier {
    id: u32,
    threads: u32,
    name: &'static str,
}

impl NamedBarrier {
    /// Named barrier `id` for `threads` threads, used by `name`.
    ///
    /// # Panics
    ///
    /// (At compile time in a constant.) If `id` is not in 1..=15 or `threads` is not a non-zero
    /// multiple of 32 of at most 1024.
    #[must_use]
    pub const fn new(name: &'static str, id: u32, threads: u32) -> Self {
        assert!(
            id >= 1 && id < NAMED_BARRIERS,
            "gpu-hopper: a named barrier's id is 1..=15 (0 is __syncthreads' barrier)"
        );
        assert!(
            threads > 0 && threads % 32 == 0 && threads <= 1024,
            "gpu-hopper: a named barrier's thread count is a non-zero multiple of the warp size (32), at most 1024"
        );
        Self { id, threads, name }
    }

    /// The hardware id.
    #[must_use]
    pub const fn id(self) -> u32 {
        self.id
    }

    /// The threads per phase.
    #[must_use]
    pub const fn threads(self) -> u32 {
        self.threads
    }

    /// The user's name.
    #[must_use]
    pub const fn name(self) -> &'static str {
        self.name
    }

    /// The calling warp arrives and waits until [`threads`](Self::threads) threads have
    /// (`barrier.sync.aligned id, threads`). Accesses before it are ordered before the
    /// participants' accesses after it.
    ///
    /// # Safety
    ///
    /// Every lane of the calling warp calls it, converged; exactly `threads` threads take part
    /// in each phase (syncing or arriving); no other user of the id exists (the registry).
    #[inline(always)]
    pub unsafe fn sync(self) {
        // SAFETY: the caller's contract; the id and count were checked in `new`.
        unsafe { ptx::barrier_sync_aligned(self.id, self.threads) }
    }

    /// The calling warp arrives without waiting (`barrier.arrive.aligned id, threads`): a
    /// producer's signal to threads that [`sync`](Self::sync).
    ///
    /// # Safety
    ///
    /// As [`sync`](Self::sync).
    #[inline(always)]
    pub unsafe fn arrive(self) {
        // SAFETY: the caller's contract; the id and count were checked in `new`.
        unsafe { ptx::barrier_arrive_aligned(self.id, self.threads) }
    }
}

/// The named barriers of one kernel, from the lists its pieces declare; ids used twice are a
/// compile error where the registry is a constant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BarrierRegistry {
    used: u16,
}

/// A message for a collision, written into a buffer (const code cannot format).
struct Message {
    bytes: [u8; 256],
    len: usize,
}

impl Message {
    const fn push(mut self, s: &str) -> Self {
        let s = s.as_bytes();
        let mut i = 0;
        while i < s.len() && self.len < self.bytes.len() {
            self.bytes[self.len] = s[i];
            self.len += 1;
            i += 1;
        }
        self
    }

    const fn push_id(self, id: u32) -> Self {
        let digits = [b'0' + (id / 10) as u8, b'0' + (id % 10) as u8];
        let skip = if id < 10 { 1 } else { 0 };
        match core::str::from_utf8(digits.split_at(skip).1) {
            Ok(s) => self.push(s),
            Err(_) => self,
        }
    }

    const fn panic(&self) -> ! {
        match core::str::from_utf8(self.bytes.split_at(self.len).0) {
            Ok(text) => panic!("{}", text),
            Err(_) => panic!("gpu-hopper: two named barriers share an id"),
        }
    }
}

impl BarrierRegistry {
    /// The registry of `pieces`, each one piece's barriers.
    ///
    /// # Panics
    ///
    /// (At compile time in a constant.) If two barriers have the same id, naming both.
    #[must_use]
    pub const fn new(pieces: &[&[NamedBarrier]]) -> Self {
        let mut owners: [Option<NamedBarrier>; NAMED_BARRIERS as usize] =
            [None; NAMED_BARRIERS as usize];
        let mut used = 0u16;
        let mut p = 0;
        while p < pieces.len() {
            let mut b = 0;
            while b < pieces[p].len() {
                let barrier = pieces[p][b];
                if let Some(first) = owners[barrier.id as usize] {
                    Message {
                        bytes: [0; 256],
                        len: 0,
                    }
                    .push("gpu-hopper: named barrier ")
                    .push_id(barrier.id)
                    .push(" is used by both `")
                    .push(first.name)
                    .push("` and `")
                    .push(barrier.name)
                    .push("`")
                    .panic();
                }
                owners[barrier.id as usize] = Some(barrier);
                used |= 1 << barrier.id;
                b += 1;
            }
            p += 1;
        }
        Self { used }
    }

    /// The ids in use, as a bit mask (bit `i`: id `i`).
    #[must_use]
    pub const fn used(self) -> u16 {
        self.used
    }

    /// The lowest id in 1..=15 no piece uses, or 16 if none is left.
    #[must_use]
    pub const fn first_free(self) -> u32 {
        let mut id = 1;
        while id < NAMED_BARRIERS && self.used & (1 << id) != 0 {
            id += 1;
        }
        id
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_registry_collects_the_ids() {
        const A: &[NamedBarrier] = &[NamedBarrier::new("a", 4, 64), NamedBarrier::new("b", 1, 32)];
        const B: &[NamedBarrier] = &[NamedBarrier::new("c", 15, 1024)];
        const R: BarrierRegistry = BarrierRegistry::new(&[A, B, &[]]);
        assert_eq!(R.used(), (1 << 4) | (1 << 1) | (1 << 15));
        assert_eq!(R.first_free(), 2);
        assert_eq!(BarrierRegistry::new(&[]).first_free(), 1);
    }

    #[test]
    fn a_collision_names_both_users() {
        let a = [NamedBarrier::new("epilogue", 12, 128)];
        let b = [
            NamedBarrier::new("mainloop", 3, 256),
            NamedBarrier::new("split-K", 12, 256),
        ];
        let message = std::panic::catch_unwind(|| BarrierRegistry::new(&[&a, &b]))
            .expect_err("a collision panics");
        let message = message
            .downcast_ref::<std::string::String>()
            .cloned()
            .unwrap_or_default();
        assert_eq!(
            message,
            "gpu-hopper: named barrier 12 is used by both `epilogue` and `split-K`"
        );
    }

    #[test]
    fn fifteen_ids_fill_the_registry() {
        let all: std::vec::Vec<NamedBarrier> =
            (1..16).map(|id| NamedBarrier::new("x", id, 32)).collect();
        assert_eq!(BarrierRegistry::new(&[&all]).first_free(), 16);
    }
}
