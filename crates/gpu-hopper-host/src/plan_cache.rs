//! The plans a host API keeps, so that a problem it has seen costs a lookup and a launch, not
//! tensor maps, an upload and a workspace: [`PlanCache`], by a key each host defines (everything
//! its plan is a function of; the host's docs say why that is enough). gpu-gemm-host's `Gemm::run`
//! and gpu-attention-host's `Attention::run` keep theirs here.
//!
//! Pure: no CUDA call (the values are generic), so every rule below is host-tested.
//!
//! # The bound
//!
//! At most [`CacheLimits::entries`] plans and [`CacheLimits::bytes`] bytes of their device
//! memory are kept for eager calls, the least recently used evicted first (the caller drops the
//! evicted plans after it lets the cache go; dropping frees their memory in their streams' order,
//! after the launches that used them). A plan larger than the byte bound alone is used once and
//! freed.
//!
//! # CUDA graphs
//!
//! A call captured into a graph bakes the plan's addresses (maps, workspace) into the graph. So
//! the plans that captures used are kept apart from the eager ones, until the host releases them
//! (its `release_captured`), and never evicted; dropping the cache leaks them (a graph may
//! outlive the host API object). A plan with a workspace moves to them: the next
//! eager call of its key gets a new workspace, so that a replay of the graph on another stream
//! never shares one with an eager launch. A plan without one (its memory is only read) is shared.
//! Within one capture sequence (its id), the same key finds the same captured plan: those
//! launches are ordered in the graph as on the stream. A key with no plan cannot be captured
//! (`lookup` says so; the caller refuses it): making one allocates and uploads, which a capture
//! cannot hold.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::Arc;

/// How many plans, and how many bytes of their device memory, a host API keeps for eager calls
/// (gpu-gemm-host's `Gemm::set_cache_limits`, gpu-attention-host's `Attention::set_cache_limits`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CacheLimits {
    /// At most this many plans (0: no cache; every call prepares and frees, as before it).
    pub entries: usize,
    /// At most this many bytes of device memory in them (tensor maps, tables, workspaces).
    pub bytes: u64,
}

impl Default for CacheLimits {
    /// 1024 plans and 1 GiB: the GEMMs of a decoding step of a large model (a few hundred
    /// weights) at a few batch sizes (a decode shape's split-K workspace is a few MiB), or its
    /// attention layers' problems.
    fn default() -> Self {
        Self {
            entries: 1024,
            bytes: 1 << 30,
        }
    }
}

/// What a cache holds now and how it was used (the host APIs' `cache_stats`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Plans kept for eager calls.
    pub entries: usize,
    /// Their device memory in bytes.
    pub bytes: u64,
    /// Plans kept for captured graphs (outside the limits).
    pub captured: usize,
    /// Their device memory in bytes (a plan without a workspace, shared with eager calls, counts
    /// here and in `bytes` both).
    pub captured_bytes: u64,
    /// Calls that found a plan.
    pub hits: u64,
    /// Calls that made one.
    pub misses: u64,
    /// Plans evicted to keep the limits.
    pub evictions: u64,
}

/// What the cache needs to know of a plan.
pub trait Plan {
    /// Its device memory in bytes (maps and workspace).
    fn bytes(&self) -> u64;
    /// Whether it has a workspace that launches write (not only read).
    fn has_workspace(&self) -> bool;
}

/// Whether the caller's stream is being captured into a graph, and in which capture sequence.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Capture {
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

/// The plans of one host API object (behind its mutex), by key `K`: everything a plan is a
/// function of (each host's docs say why its key is enough).
pub struct PlanCache<K, V> {
    limits: CacheLimits,
    eager: HashMap<K, Eager<V>>,
    /// The eager plans' bytes.
    bytes: u64,
    /// Plans captured graphs use, by capture id and key (a map: a server that captures many
    /// graphs of many calls looks each call up in constant time, not by a scan of them all).
    captured: HashMap<(u64, K), Arc<V>>,
    /// A use counter: the eager plans' recency.
    clock: u64,
    stats: CacheStats,
}

/// The plans captured graphs use are leaked, not freed, with the cache (the host API object):
/// a graph may be replayed after the object is gone (cudarc's `CudaGraph::launch` is safe), and
/// its replays read those plans' tensor maps and workspace. The host's `release_captured`
/// (`unsafe`: no graph that used them is launched again) frees them.
impl<K, V> Drop for PlanCache<K, V> {
    fn drop(&mut self) {
        for (_, plan) in self.captured.drain() {
            core::mem::forget(plan);
        }
    }
}

impl<K: Eq + Hash + Clone, V: Plan> PlanCache<K, V> {
    /// An empty cache of `limits`.
    pub fn new(limits: CacheLimits) -> Self {
        Self {
            limits,
            eager: HashMap::new(),
            bytes: 0,
            captured: HashMap::new(),
            clock: 0,
            stats: CacheStats::default(),
        }
    }

    /// The plan of `key` for a call under `capture`, or `None` (a miss: the caller makes one, and
    /// under a capture refuses the call instead).
    pub fn lookup(&mut self, key: &K, capture: Capture) -> Option<Arc<V>> {
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
    fn lookup_captured(&mut self, key: &K, id: u64) -> Option<Arc<V>> {
        // The lookup key owns a clone of `key`: a miss in this capture is rare (its first call
        // of the key), a hit pays the clone (keys are a few words).
        let at = (id, key.clone());
        if let Some(plan) = self.captured.get(&at) {
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
        self.captured.insert(at, plan.clone());
        Some(plan)
    }

    /// Keeps `plan` for `key` (made after a miss outside any capture), evicting the least
    /// recently used plans that `evictable` allows until the limits hold; returns the plan the
    /// call uses (one another thread kept meanwhile, if any) and the evicted plans, for the caller
    /// to drop after it lets the cache go (dropping frees device memory). A plan that cannot fit
    /// is not kept.
    pub fn insert(
        &mut self,
        key: K,
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

    /// Removes the least recently used eager plan that `evictable` allows. `evictable` is asked
    /// of the least recently used plan first, and of the others only if it refuses (a host's
    /// asks the driver: once per eviction, not once per plan kept).
    fn evict_one(&mut self, evictable: &impl Fn(&V) -> bool) -> Option<Arc<V>> {
        let (oldest, e) = self.eager.iter().min_by_key(|(_, e)| e.used)?;
        let key = if evictable(&e.plan) {
            oldest.clone()
        } else {
            self.eager
                .iter()
                .filter(|(_, e)| evictable(&e.plan))
                .min_by_key(|(_, e)| e.used)?
                .0
                .clone()
        };
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
        let keys: Vec<K> = self
            .eager
            .iter()
            .filter(|(_, e)| evictable(&e.plan))
            .map(|(k, _)| k.clone())
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
        self.captured.drain().map(|(_, plan)| plan).collect()
    }

    /// What it holds, and its hits, misses and evictions.
    pub fn stats(&self) -> CacheStats {
        let mut captured: Vec<&Arc<V>> = self.captured.values().collect();
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

    /// A key: any `Eq + Hash + Clone` value does.
    fn key(d: u64) -> u64 {
        d
    }

    fn plan(name: u64, bytes: u64, workspace: bool) -> Arc<Fake> {
        Arc::new(Fake {
            name,
            bytes,
            workspace,
        })
    }

    fn cache(entries: usize, bytes: u64) -> PlanCache<u64, Fake> {
        PlanCache::new(CacheLimits { entries, bytes })
    }

    fn keep(c: &mut PlanCache<u64, Fake>, k: u64, p: Arc<Fake>) -> Vec<u64> {
        let (_, evicted) = c.insert(k, p, |_| true);
        evicted.iter().map(|p| p.name).collect()
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

    /// A full cache asks `evictable` (a driver query in the hosts) of one plan per eviction, not
    /// of every plan kept (the review of 97427cc: 1024 queries per miss at the default limits).
    #[test]
    fn an_eviction_asks_of_the_oldest_plan_first() {
        let mut c = cache(64, 1 << 30);
        for d in 0..64 {
            keep(&mut c, key(d), plan(d, 10, true));
        }
        let asked = std::cell::Cell::new(0);
        let (_, evicted) = c.insert(key(64), plan(64, 10, true), |_| {
            asked.set(asked.get() + 1);
            true
        });
        assert_eq!(evicted[0].name, 0);
        assert_eq!(asked.get(), 1);
        // The oldest refused (its stream capturing): the others are asked, the next oldest goes.
        let (_, evicted) = c.insert(key(65), plan(65, 10, true), |p| p.name != 1);
        assert_eq!(evicted[0].name, 2);
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

    /// Dropping the cache (its host API object) does not free the plans captured graphs use:
    /// a graph outlives the object that made it (cudarc's `CudaGraph::launch` is safe), and its
    /// replays read the plans' tensor maps and workspace. They are leaked, unless released first
    /// (found by a review, 2026-12-05: dropping a `Gemm` freed them).
    #[test]
    fn dropping_the_cache_leaks_the_captured_plans() {
        let mut c = cache(8, 1 << 30);
        keep(&mut c, key(0), plan(0, 10, true));
        keep(&mut c, key(1), plan(1, 10, true));
        let captured = Arc::downgrade(&c.lookup(&key(0), Capture::Active(5)).unwrap());
        let eager = Arc::downgrade(&c.lookup(&key(1), Capture::None).unwrap());
        drop(c);
        assert!(
            eager.upgrade().is_none(),
            "an eager plan is freed with the cache"
        );
        assert!(
            captured.upgrade().is_some(),
            "a captured plan outlives the cache"
        );
        // Released first: freed with the caller's handle.
        let mut c = cache(8, 1 << 30);
        keep(&mut c, key(0), plan(0, 10, true));
        let captured = Arc::downgrade(&c.lookup(&key(0), Capture::Active(5)).unwrap());
        drop(c.release_captured());
        drop(c);
        assert!(captured.upgrade().is_none());
    }
}
