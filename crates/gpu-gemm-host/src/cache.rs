//! The plans [`Gemm::run`](crate::Gemm::run) keeps, so that a problem it has seen costs a
//! lookup and a launch, not tensor maps, an upload and a workspace (20 to 35 us of host time per
//! call before the cache, measured on the H200 against a prepared launch).
//!
//! Pure: no CUDA call (the values are generic), so every rule below is host-tested.
//!
//! # The key, and why it is enough
//!
//! A plan (the crate's `Prepared`) is a function of: the kernel; the shape; the addresses of A,
//! B, C and D and how C is read (none, its own buffer, D in place); this `Gemm`'s capacity (the
//! clusters that fit on its GPU, fixed at load); and the stream, which owns the plan's
//! workspace. Everything the plan holds follows from these alone:
//!
//! - each tensor map encodes an address, the dims (K and M or N, or N and M), the row stride (from
//!   the same dims) and the box (from the kernel): nothing of the buffer but its address. A
//!   buffer freed and another of the same shape allocated at the same address gets the map it
//!   would have been encoded with: the entry is right for it. A buffer at the same address but
//!   shorter than the shape needs fails `check_shape`, which runs on every call, hit or miss;
//! - the split count, the grid and the workspace's size and layout come from (kernel, shape,
//!   capacity): a workspace is never used for a shape other than the one that sized it (the
//!   counters of one shape's layout could lie on another's partials);
//! - the checks that `encode` makes (the kernel is in the module, the launch limits, each
//!   address's 16-byte alignment for its tensor map) depend on the key alone, so an entry exists
//!   only for a key that passed them;
//! - the stream: a plan's workspace (partials and split counters) is reused by each launch, which
//!   is safe only for launches that cannot overlap, those of one stream. The entry holds its
//!   stream, so the handle in the key cannot name a new stream while the entry lives.
//!
//! The checks that do not follow from the key (the buffers' lengths, their contexts, the
//! stream's context, beta != 0 without C) run before the lookup on every call.
//!
//!
//! The bound (least recently used eviction) and the rules for CUDA graphs are the shared cache's
//! (`gpu_hopper_host::plan_cache`).

pub use gpu_hopper_host::plan_cache::{CacheLimits, CacheStats};
pub(crate) use gpu_hopper_host::plan_cache::{Capture, Plan, PlanCache};

/// Everything a plan is a function of (the module docs: why it is enough). The `Gemm`'s
/// capacity is not in it: one cache belongs to one `Gemm`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Key {
    /// The kernel's position in `Kernel::ALL`.
    pub kernel: usize,
    /// M, N, K.
    pub shape: (u32, u32, u32),
    pub a: u64,
    pub b: u64,
    /// How C is read: 0 none, 1 its own buffer at `c`, 2 in place (C is D).
    pub c_kind: u8,
    pub c: u64,
    pub d: u64,
    /// The stream's handle (`CUstream` as an integer; the plan holds the stream).
    pub stream: usize,
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    /// A plan of `bytes` bytes, with a workspace or not, named for the test.
    #[derive(Debug)]
    struct Fake {
        name: u64,
        bytes: u64,
        workspace: bool,
    }

    impl Plan for Fake {
        fn bytes(&self) -> u64 {
            self.bytes
        }
        fn has_workspace(&self) -> bool {
            self.workspace
        }
    }

    fn key(d: u64) -> Key {
        Key {
            kernel: 0,
            shape: (16, 4096, 4096),
            a: 0x1000,
            b: 0x2000,
            c_kind: 0,
            c: 0,
            d,
            stream: 7,
        }
    }

    fn plan(name: u64, bytes: u64, workspace: bool) -> Arc<Fake> {
        Arc::new(Fake {
            name,
            bytes,
            workspace,
        })
    }

    fn cache(entries: usize, bytes: u64) -> PlanCache<Key, Fake> {
        PlanCache::new(CacheLimits { entries, bytes })
    }

    fn keep(c: &mut PlanCache<Key, Fake>, k: Key, p: Arc<Fake>) -> Vec<u64> {
        let (_, evicted) = c.insert(k, p, |_| true);
        evicted.iter().map(|p| p.name).collect()
    }

    #[test]
    fn every_field_of_the_key_tells_plans_apart() {
        let base = key(0x3000);
        let changed = [
            Key { kernel: 1, ..base },
            Key {
                shape: (17, 4096, 4096),
                ..base
            },
            Key {
                shape: (16, 4104, 4096),
                ..base
            },
            Key {
                shape: (16, 4096, 4104),
                ..base
            },
            Key { a: 0x1100, ..base },
            Key { b: 0x2100, ..base },
            Key { c_kind: 1, ..base },
            Key {
                c_kind: 1,
                c: 0x5000,
                ..base
            },
            Key { d: 0x3100, ..base },
            Key { stream: 8, ..base },
        ];
        let mut c = cache(64, 1 << 30);
        keep(&mut c, base, plan(0, 10, true));
        for (i, k) in changed.iter().enumerate() {
            assert_ne!(*k, base, "change {i}");
            assert!(c.lookup(k, Capture::None).is_none(), "change {i} hit");
        }
        // The same key, built again, finds the plan (an address reused by a buffer of the same
        // shape: the maps encode nothing else).
        assert_eq!(c.lookup(&key(0x3000), Capture::None).unwrap().name, 0);
        let s = c.stats();
        assert_eq!((s.hits, s.misses), (1, changed.len() as u64));
    }
}
