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
//! # The bound
//!
//! At most [`CacheLimits::entries`] plans and [`CacheLimits::bytes`] bytes of their device
//! memory (tensor maps and workspace) are kept for eager calls, the least recently used evicted
//! first (its memory is freed then, in its stream's order, after the launches that used it). A
//! plan larger than the byte bound alone is used once and freed, as before the cache.
//!
//! # CUDA graphs
//!
//! A call captured into a graph bakes the plan's addresses (maps, workspace) into the graph. So
//! the plans that captures used are kept apart from the eager ones, for the `Gemm`'s life (or
//! until [`Gemm::release_captured`](crate::Gemm::release_captured)), and never evicted. A plan
//! with a workspace moves to them: the next eager call of its key gets a new workspace, so
//! that a replay of the graph on another stream never shares one with an eager launch. A plan
//! without one (its maps are only read) is shared. Within one capture sequence (its id), the
//! same key finds the same captured plan: those launches are ordered in the graph as on the
//! stream. A key with no plan cannot be captured (`lookup` says so; the caller refuses it):
//! making one allocates and uploads, which a capture cannot hold.

use std::collections::HashMap;
use std::sync::Arc;

/// How many plans, and how many bytes of their device memory, a [`Gemm`](crate::Gemm) keeps for
/// eager calls ([`Gemm::set_cache_limits`](crate::Gemm::set_cache_limits)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CacheLimits {
    /// At most this many plans (0: no cache; every call prepares and frees, as before it).
    pub entries: usize,
    /// At most this many bytes of device memory in them (tensor maps and split-K workspace).
    pub bytes: u64,
}

impl Default for CacheLimits {
    /// 1024 plans and 1 GiB: the GEMMs of a decoding step of a large model (a few hundred
    /// weights) at a few batch sizes; a decode shape's split-K workspace is a few MiB.
    fn default() -> Self {
        Self {
            entries: 1024,
            bytes: 1 << 30,
        }
    }
}

/// What the cache holds now and how it was used ([`Gemm::cache_stats`](crate::Gemm::cache_stats)).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Plans kept for eager calls.
    pub entries: usize,
    /// Their device memory in bytes.
    pub bytes: u64,
    /// Plans kept for captured graphs (outside the limits).
    pub captured: usize,
    /// Their device memory in bytes.
    pub captured_bytes: u64,
    /// Calls that found a plan.
    pub hits: u64,
    /// Calls that made one.
    pub misses: u64,
    /// Plans evicted to keep the limits.
    pub evictions: u64,
}

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

/// What the cache needs to know of a plan.
pub(crate) trait Plan {
    /// Its device memory in bytes (maps and workspace).
    fn bytes(&self) -> u64;
    /// Whether it has a workspace that launches write (not only read).
    fn has_workspace(&self) -> bool;
}

/// Whether the caller's stream is being captured into a graph, and in which capture sequence.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Capture {
    /// Eager: the launch runs now.
    None,
    /// Captured (or a capture that failed and is still open: its launches are refused by the
    /// driver), in the sequence of this id (`cuStreamGetCaptureInfo`).
    Active(u64),
}

/// One plan kept for eager calls, with when it was last used.
struct Eager<V> {
    plan: Arc<V>,
    used: u64,
}

/// The plans of one `Gemm` (behind its mutex).
pub(crate) struct PlanCache<V> {
    limits: CacheLimits,
    eager: HashMap<Key, Eager<V>>,
    /// The eager plans' bytes.
    bytes: u64,
    /// Plans captured graphs use: capture id, key, plan.
    captured: Vec<(u64, Key, Arc<V>)>,
    /// A use counter: the eager plans' recency.
    clock: u64,
    stats: CacheStats,
}

impl<V: Plan> PlanCache<V> {
    pub fn new(limits: CacheLimits) -> Self {
        Self {
            limits,
            eager: HashMap::new(),
            bytes: 0,
            captured: Vec::new(),
            clock: 0,
            stats: CacheStats::default(),
        }
    }

    /// The plan of `key` for a call under `capture`, or `None` (a miss: the caller makes one, and
    /// under a capture refuses the call instead).
    pub fn lookup(&mut self, key: &Key, capture: Capture) -> Option<Arc<V>> {
        self.clock += 1;
        let found = match capture {
            Capture::None => self.eager.get_mut(key).map(|e| {
                e.used = self.clock;
                e.plan.clone()
            }),
            Capture::Active(id) => self.lookup_captured(key, id),
        };
        match found {
            Some(_) => self.stats.hits += 1,
            None => self.stats.misses += 1,
        }
        found
    }

    /// A plan for a captured call: this capture's own, or an eager one handed over to it.
    fn lookup_captured(&mut self, key: &Key, id: u64) -> Option<Arc<V>> {
        if let Some((_, _, plan)) = self.captured.iter().find(|(i, k, _)| *i == id && k == key) {
            return Some(plan.clone());
        }
        let plan = if self.eager.get(key)?.plan.has_workspace() {
            // The graph gets the workspace to itself; eager calls will make another.
            let e = self.eager.remove(key).expect("found above");
            self.bytes -= e.plan.bytes();
            e.plan
        } else {
            self.eager[key].plan.clone()
        };
        self.captured.push((id, *key, plan.clone()));
        Some(plan)
    }

    /// Keeps `plan` for `key` (made after a miss outside any capture), evicting the least
    /// recently used plans that `evictable` allows until the limits hold; returns the plan the
    /// call uses (one another thread kept meanwhile, if any) and the evicted plans, for the caller
    /// to drop after it lets the cache go (dropping frees device memory). A plan that cannot fit
    /// is not kept.
    pub fn insert(
        &mut self,
        key: Key,
        plan: Arc<V>,
        evictable: impl Fn(&V) -> bool,
    ) -> (Arc<V>, Vec<Arc<V>>) {
        if let Some(e) = self.eager.get(&key) {
            return (e.plan.clone(), vec![plan]);
        }
        let size = plan.bytes();
        let mut evicted = Vec::new();
        if self.limits.entries == 0 || size > self.limits.bytes {
            return (plan, evicted);
        }
        while self.eager.len() + 1 > self.limits.entries || self.bytes + size > self.limits.bytes {
            match self.evict_one(&evictable) {
                Some(old) => evicted.push(old),
                // Every plan left is in use by a capture now: this one is not kept.
                None => return (plan, evicted),
            }
        }
        self.bytes += size;
        self.clock += 1;
        self.eager.insert(
            key,
            Eager {
                plan: plan.clone(),
                used: self.clock,
            },
        );
        (plan, evicted)
    }

    /// Removes the least recently used eager plan that `evictable` allows.
    fn evict_one(&mut self, evictable: &impl Fn(&V) -> bool) -> Option<Arc<V>> {
        let key = *self
            .eager
            .iter()
            .filter(|(_, e)| evictable(&e.plan))
            .min_by_key(|(_, e)| e.used)?
            .0;
        let e = self.eager.remove(&key).expect("found above");
        self.bytes -= e.plan.bytes();
        self.stats.evictions += 1;
        Some(e.plan)
    }

    /// New limits, applied at once; returns the plans evicted.
    pub fn set_limits(
        &mut self,
        limits: CacheLimits,
        evictable: impl Fn(&V) -> bool,
    ) -> Vec<Arc<V>> {
        self.limits = limits;
        let mut evicted = Vec::new();
        while self.eager.len() > limits.entries || self.bytes > limits.bytes {
            match self.evict_one(&evictable) {
                Some(old) => evicted.push(old),
                None => break,
            }
        }
        evicted
    }

    /// Every eager plan that `evictable` allows, removed.
    pub fn clear(&mut self, evictable: impl Fn(&V) -> bool) -> Vec<Arc<V>> {
        let keys: Vec<Key> = self
            .eager
            .iter()
            .filter(|(_, e)| evictable(&e.plan))
            .map(|(k, _)| *k)
            .collect();
        keys.into_iter()
            .map(|k| {
                let e = self.eager.remove(&k).expect("listed above");
                self.bytes -= e.plan.bytes();
                e.plan
            })
            .collect()
    }

    /// The captured graphs' plans, removed.
    pub fn release_captured(&mut self) -> Vec<Arc<V>> {
        self.captured.drain(..).map(|(_, _, plan)| plan).collect()
    }

    pub fn stats(&self) -> CacheStats {
        let mut captured: Vec<&Arc<V>> = self.captured.iter().map(|(_, _, p)| p).collect();
        // A plan without a workspace may be in several captures: count it once.
        captured.sort_by_key(|p| Arc::as_ptr(p));
        captured.dedup_by(|x, y| Arc::ptr_eq(x, y));
        CacheStats {
            entries: self.eager.len(),
            bytes: self.bytes,
            captured: captured.len(),
            captured_bytes: captured.iter().map(|p| p.bytes()).sum(),
            ..self.stats
        }
    }
}

#[cfg(test)]
mod tests {
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

    fn cache(entries: usize, bytes: u64) -> PlanCache<Fake> {
        PlanCache::new(CacheLimits { entries, bytes })
    }

    fn keep(c: &mut PlanCache<Fake>, k: Key, p: Arc<Fake>) -> Vec<u64> {
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

    #[test]
    fn the_entry_bound_evicts_the_least_recently_used() {
        let mut c = cache(3, 1 << 30);
        for d in 0..3 {
            assert!(keep(&mut c, key(d), plan(d, 10, true)).is_empty());
        }
        // Use 0, so 1 is now the oldest.
        assert!(c.lookup(&key(0), Capture::None).is_some());
        assert_eq!(keep(&mut c, key(3), plan(3, 10, true)), [1]);
        assert_eq!(keep(&mut c, key(4), plan(4, 10, true)), [2]);
        assert_eq!(c.stats().entries, 3);
        assert_eq!(c.stats().bytes, 30);
        assert!(c.lookup(&key(1), Capture::None).is_none());
        assert!(c.lookup(&key(0), Capture::None).is_some());
        assert_eq!(c.stats().evictions, 2);
    }

    #[test]
    fn the_byte_bound_counts_every_plans_memory() {
        let mut c = cache(100, 100);
        keep(&mut c, key(0), plan(0, 40, true));
        keep(&mut c, key(1), plan(1, 40, true));
        // 80 + 30 > 100: the oldest goes.
        assert_eq!(keep(&mut c, key(2), plan(2, 30, true)), [0]);
        assert_eq!(c.stats().bytes, 70);
        // Larger than the whole bound: used once, not kept, nothing evicted.
        let (used, evicted) = c.insert(key(3), plan(3, 101, true), |_| true);
        assert_eq!((used.name, evicted.len()), (3, 0));
        assert!(c.lookup(&key(3), Capture::None).is_none());
        assert_eq!(c.stats().bytes, 70);
        // Limits lowered: evicted at once.
        let evicted = c.set_limits(
            CacheLimits {
                entries: 1,
                bytes: 100,
            },
            |_| true,
        );
        assert_eq!(evicted.iter().map(|p| p.name).collect::<Vec<_>>(), [1]);
        assert_eq!((c.stats().entries, c.stats().bytes), (1, 30));
        // No cache at all.
        c.set_limits(
            CacheLimits {
                entries: 0,
                bytes: 100,
            },
            |_| true,
        );
        keep(&mut c, key(5), plan(5, 1, false));
        assert_eq!(c.stats().entries, 0);
    }

    #[test]
    fn a_plan_in_use_by_a_capture_is_not_evicted() {
        let mut c = cache(2, 1 << 30);
        keep(&mut c, key(0), plan(0, 10, true));
        keep(&mut c, key(1), plan(1, 10, true));
        // Plan 0's stream is capturing (the caller's `evictable` says so): 1 goes instead.
        let (_, evicted) = c.insert(key(2), plan(2, 10, true), |p| p.name != 0);
        assert_eq!(evicted.iter().map(|p| p.name).collect::<Vec<_>>(), [1]);
        // Nothing evictable: the new plan is used but not kept.
        let (used, evicted) = c.insert(key(3), plan(3, 10, true), |_| false);
        assert_eq!((used.name, evicted.len()), (3, 0));
        assert_eq!(c.stats().entries, 2);
    }

    #[test]
    fn a_second_insert_of_a_key_keeps_the_first_plan() {
        let mut c = cache(8, 1 << 30);
        keep(&mut c, key(0), plan(0, 10, true));
        let (used, dropped) = c.insert(key(0), plan(9, 10, true), |_| true);
        assert_eq!((used.name, dropped[0].name), (0, 9));
        assert_eq!((c.stats().entries, c.stats().bytes), (1, 10));
    }

    #[test]
    fn a_capture_takes_a_plans_workspace_from_eager_calls() {
        let mut c = cache(8, 1 << 30);
        keep(&mut c, key(0), plan(0, 10, true));
        // No plan, no capture: the caller refuses it.
        assert!(c.lookup(&key(1), Capture::Active(5)).is_none());
        let captured = c.lookup(&key(0), Capture::Active(5)).unwrap();
        assert_eq!(captured.name, 0);
        // The same key again in the same capture: the same plan (ordered in the graph).
        assert!(Arc::ptr_eq(
            &c.lookup(&key(0), Capture::Active(5)).unwrap(),
            &captured
        ));
        // Eager calls no longer see it: the next one makes a workspace of its own.
        assert!(c.lookup(&key(0), Capture::None).is_none());
        // Another capture has no plan of its own for it.
        assert!(c.lookup(&key(0), Capture::Active(6)).is_none());
        let s = c.stats();
        assert_eq!(
            (s.entries, s.bytes, s.captured, s.captured_bytes),
            (0, 0, 1, 10)
        );
        // Kept outside the limits, never evicted.
        c.set_limits(
            CacheLimits {
                entries: 0,
                bytes: 0,
            },
            |_| true,
        );
        assert_eq!(c.stats().captured, 1);
        assert!(c.clear(|_| true).is_empty());
        assert_eq!(c.release_captured()[0].name, 0);
        assert_eq!(c.stats().captured, 0);
    }

    #[test]
    fn a_plan_without_workspace_is_shared_with_captures() {
        let mut c = cache(8, 1 << 30);
        keep(&mut c, key(0), plan(0, 10, false));
        let a = c.lookup(&key(0), Capture::Active(1)).unwrap();
        let b = c.lookup(&key(0), Capture::Active(2)).unwrap();
        let eager = c.lookup(&key(0), Capture::None).unwrap();
        assert!(Arc::ptr_eq(&a, &b) && Arc::ptr_eq(&a, &eager));
        let s = c.stats();
        assert_eq!((s.entries, s.captured, s.captured_bytes), (1, 1, 10));
        // Evicted from the eager plans, still held for the graphs.
        assert_eq!(c.clear(|_| true).len(), 1);
        assert_eq!(
            Arc::strong_count(&a),
            5,
            "a, b, eager, and the captures' two"
        );
    }
}
