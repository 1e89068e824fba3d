//! Tile schedulers: which work units a CTA computes, and in which order, as plain values that the
//! host and the device both compile, so that the host's grid, split count and workspace and the
//! device's walk come from the same functions.
//!
//! A kernel's output is cut into *tiles* (for CTA pairs, *cluster tiles*: `cluster` CTA tiles
//! stacked along M). A [`Schedule`] orders the tiles in bands of `GROUP` tile rows
//! ([`Schedule::tile`], grouped rasterization: consecutive CTAs read the same columns of B and a
//! band of A, which stay in L2), and cuts each tile of the last, partial wave (or every tile, when
//! there are too few to fill the GPU) into `splits` *units* along K (split-K): a unit is one tile,
//! or one split of one tile. A persistent CTA (or CTA pair) `first` computes units `first,
//! first + stride, ...`; a per-tile launch is the schedule of one unit per CTA.
//!
//! The split tiles' partial sums meet in a workspace: one slot per CTA tile of a split tile
//! ([`Schedule::slot`], [`Schedule::slots`]); the CTA that finishes a tile's last split adds them
//! up (the in-kernel reduction: no second kernel, no CTA waiting for another).
//!
//! Everything here counts in `u32`, as the device does. A host checks first that a problem's units
//! fit ([`units_fit`], in `u64`), then builds the same [`Schedule`] the kernel will.
//!
//! A stream-K schedule ([`Schedule::stream_k`]) computes the first tiles whole, as above, and
//! cuts the k-blocks of the rest (not their tiles) evenly over `workers` CTAs: each worker takes
//! one contiguous range of the split tiles' k-blocks, which may start and end inside a tile, so
//! that every worker does the same work whatever the tile count, and a tile meets the partials of
//! the few workers whose ranges cross it (two or three where the split tiles are at least half
//! a wave; more where they are fewer, as split-K would). Its units are the pieces of
//! a worker's range, one per tile it crosses ([`Schedule::work`]); the partials meet as split-K's
//! do, in part order, the last to arrive adding them up.

/// The tile rows per band of the grouped order of [`Schedule::tile`] (the GEMM's choice).
pub const GROUP: u32 = 8;

/// The largest number of work units a schedule holds: the device counts units in `u32` and steps
/// past the last by up to a grid's width (below 2^31 each), so they stay below 2^31.
pub const MAX_UNITS: u64 = 1 << 31;

/// Which work units a CTA (or CTA pair) computes, in order: the first [`full`](Self::full) tiles
/// (in the grouped order) are whole units; each later tile is `splits` units, consecutive, so that
/// a split tile's parts run side by side on neighbouring CTAs. A stream-K schedule
/// ([`Schedule::stream_k`], `workers > 0`) cuts the later tiles' k-blocks over its workers
/// instead ([`Schedule::work`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Schedule {
    /// Tile rows (along M).
    pub tiles_m: u32,
    /// Tile columns (along N).
    pub tiles_n: u32,
    /// Splits of each tile after the first `full` (1: no split-K).
    pub splits: u32,
    /// Tiles computed whole, before the split ones.
    pub full: u32,
    /// The CTA's first unit (persistent: its index in the grid of clusters).
    pub first: u32,
    /// The stride between its units (persistent: the grid's size in clusters).
    pub stride: u32,
    /// Stream-K: the CTAs the split tiles' k-blocks are cut over, each one contiguous range (0:
    /// not stream-K; then [`Schedule::work`] is split-K's units).
    pub workers: u32,
    /// Stream-K: the most units of one worker, one per tile its range crosses (an upper bound:
    /// a worker with fewer has empty units, [`Work::parts`] 0, at the end of its walk).
    pub segments: u32,
}

/// One unit of a [`Schedule`]: k-blocks `kb0..kb1` of tile `tile` (in the grouped order), part
/// `part` of the `parts` that compute the tile (1: the whole tile). An empty unit of a stream-K
/// schedule has `parts == 0` (and `kb0 == kb1`): the walk steps past it, loading and computing
/// nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Work {
    /// The tile's index in the grouped order ([`Schedule::tile`]).
    pub tile: u32,
    /// Which part of the tile: partials add up in part order.
    pub part: u32,
    /// The parts of the tile (0: an empty unit).
    pub parts: u32,
    /// The first k-block.
    pub kb0: u32,
    /// One past the last k-block.
    pub kb1: u32,
}

impl Schedule {
    /// The schedule of `tiles_m x tiles_n` tiles in `splits` parts (clamped to `1..=k_blocks`, so
    /// that no split is empty) for a CTA (or pair) whose units are `first, first + stride, ...`:
    /// every tile split when they are fewer than `stride`, otherwise all but the last, partial wave
    /// whole.
    ///
    /// `tiles_m * tiles_n` must not overflow `u32` (a host checks [`units_fit`] first), nor
    /// [`GROUP`]` * tiles_n` ([`tile`](Self::tile)), nor `splits * k_blocks`
    /// ([`k_range`](Self::k_range)); `k_blocks` is at least 1 (a panic for 0). Outside these, the
    /// counts wrap: a GEMM host checks them before a launch.
    #[inline(always)]
    pub fn new(
        tiles_m: u32,
        tiles_n: u32,
        splits: u32,
        k_blocks: u32,
        first: u32,
        stride: u32,
    ) -> Self {
        let splits = splits.clamp(1, k_blocks);
        let tiles = tiles_m * tiles_n;
        let full = if splits == 1 {
            tiles
        } else if tiles >= stride {
            tiles - tiles % stride
        } else {
            0
        };
        Self {
            tiles_m,
            tiles_n,
            splits,
            full,
            first,
            stride,
            workers: 0,
            segments: 0,
        }
    }

    /// The stream-K schedule of `tiles_m x tiles_n` tiles of `k_blocks` k-blocks for CTA `first`
    /// of a grid of `stride` CTAs, the split tiles' k-blocks cut over `workers` of them (clamped
    /// to `1..=stride` and to the split tiles' k-blocks, so that no worker's range is empty).
    ///
    /// The split tiles: every tile when they are fewer than the grid; none when they fill whole
    /// waves; otherwise the last, partial wave, and one whole wave with it when that wave is
    /// less than half full (so that a tile's k-blocks are cut over two or three workers, not
    /// over `stride / remainder`). The tiles before them are whole units, CTA `c` computing
    /// tiles `c, c + stride, ...` as [`Schedule::new`]'s. Then worker `c` computes the split
    /// tiles' k-blocks `c * I / workers .. (c + 1) * I / workers` of their `I` (tile-major), as
    /// units `full + c + j * stride` for `j < segments`, one per tile its range crosses.
    ///
    /// [`splits`](Self::splits) is then a bound on the parts any tile has (each worker's range
    /// is at least `I / workers` k-blocks long; a tile may have fewer), which a workspace holds
    /// per slot. `tiles_m * tiles_n` must not overflow `u32`, and [`Schedule::stream_k_units`]
    /// must be below [`MAX_UNITS`] (a host checks it first: then every count of the work fits);
    /// `stride` and `k_blocks` are at least 1 (a panic for `k_blocks` 0).
    #[inline(always)]
    pub fn stream_k(
        tiles_m: u32,
        tiles_n: u32,
        k_blocks: u32,
        workers: u32,
        first: u32,
        stride: u32,
    ) -> Self {
        let tiles = tiles_m * tiles_n;
        // At most `tiles`.
        let full = stream_k_whole(u64::from(tiles), u64::from(stride)) as u32;
        let kb = u64::from(k_blocks);
        let iterations = u64::from(tiles - full) * kb;
        if iterations == 0 {
            // Whole waves only (or nothing): every tile a whole unit.
            return Self::new(tiles_m, tiles_n, 1, k_blocks, first, stride);
        }
        let workers = u64::from(workers.clamp(1, stride)).min(iterations);
        let (shortest, longest) = (iterations / workers, iterations.div_ceil(workers));
        // A range of `longest` k-blocks starting anywhere in a tile crosses at most this many.
        let segments = (longest + kb - 2) / kb + 1;
        // Of an interval of `k_blocks`, every range but the first and the last inside it is whole
        // and at least `shortest` long.
        let parts = if k_blocks >= 2 {
            ((kb - 2) / shortest + 2).min(workers)
        } else {
            1
        };
        // All three are at most `stride`, or `longest` (at most `k_blocks` times the tiles).
        Self {
            tiles_m,
            tiles_n,
            splits: parts as u32,
            full,
            first,
            stride,
            workers: workers as u32,
            segments: segments as u32,
        }
    }

    /// The units of the stream-K schedule of `tiles` tiles of `k_blocks` on a grid of `stride`
    /// with `workers` ([`Schedule::stream_k`]), counted in `u64`: below [`MAX_UNITS`], every count
    /// of that schedule fits its `u32`.
    pub fn stream_k_units(tiles: u64, k_blocks: u32, workers: u32, stride: u32) -> u64 {
        let stride = u64::from(stride.max(1));
        let full = stream_k_whole(tiles, stride);
        let kb = u64::from(k_blocks);
        let iterations = (tiles - full).saturating_mul(kb);
        if iterations == 0 {
            return tiles;
        }
        let workers = u64::from(workers).clamp(1, stride).min(iterations);
        // The device's `(i + 1) * workers` for the split tiles' k-blocks `i` must not overflow.
        if iterations.checked_mul(workers + 1).is_none() {
            return u64::MAX;
        }
        let longest = iterations.div_ceil(workers);
        full.saturating_add(stride.saturating_mul((longest + kb - 2) / kb + 1))
    }

    /// The tiles.
    #[inline]
    pub fn tiles(self) -> u32 {
        self.tiles_m * self.tiles_n
    }

    /// The work units: the whole tiles, then `splits` per split tile (stream-K: `segments` per
    /// CTA of the grid, some of them empty).
    #[inline]
    pub fn total(self) -> u32 {
        if self.workers == 0 {
            self.full + (self.tiles() - self.full) * self.splits
        } else {
            self.full + self.stride * self.segments
        }
    }

    /// Unit `u` of this schedule, whose tiles have `k_blocks` k-blocks each (the value the
    /// schedule was built with): [`Schedule::unit`] and [`Schedule::k_range`], or a stream-K
    /// schedule's piece of a worker's range (empty where the worker's range has ended, or for a
    /// CTA that is not a worker).
    #[inline(always)]
    pub fn work(self, u: u32, k_blocks: u32) -> Work {
        if self.workers == 0 || u < self.full {
            let (tile, part, parts) = self.unit(u);
            let (kb0, kb1) = Self::k_range(part, parts, k_blocks);
            return Work {
                tile,
                part,
                parts,
                kb0,
                kb1,
            };
        }
        let v = u - self.full;
        let (c, j) = (v % self.stride, v / self.stride);
        if c >= self.workers {
            return self.no_work();
        }
        let iterations = u64::from(self.tiles() - self.full) * u64::from(k_blocks);
        // Where every product below fits 32 bits (`(i + 1) * workers` for the k-blocks `i`,
        // `(c + 1) * iterations`: both at most `iterations * (workers + 1)`), the same arithmetic
        // in 32 bits: a 64-bit division is a subroutine call of about a hundred instructions on
        // the GPU, and the producer does five per unit before its first load of it (run 106's
        // profile of the stream-K kernels: their consumers wait at each unit's first k-block).
        if iterations * (u64::from(self.workers) + 1) <= u64::from(u32::MAX) {
            self.stream_k_work_narrow(c, j, k_blocks)
        } else {
            self.stream_k_work_wide(c, j, k_blocks)
        }
    }

    /// The empty unit of a stream-K schedule.
    #[inline(always)]
    fn no_work(self) -> Work {
        Work {
            tile: self.full,
            part: 0,
            parts: 0,
            kb0: 0,
            kb1: 0,
        }
    }

    /// [`Schedule::work`] of worker `c`'s piece `j` in 32-bit arithmetic, where the split tiles'
    /// k-blocks `I` times `workers + 1` fit 32 bits (the caller checks).
    #[inline(always)]
    fn stream_k_work_narrow(self, c: u32, j: u32, k_blocks: u32) -> Work {
        let kb = k_blocks;
        let iterations = (self.tiles() - self.full) * kb;
        let workers = self.workers;
        // The worker's range of the split tiles' k-blocks.
        let (b0, b1) = (c * iterations / workers, (c + 1) * iterations / workers);
        let local = b0 / kb + j;
        let start = local * kb;
        if start >= b1 {
            return self.no_work();
        }
        // The worker whose range holds k-block `i`: the last `w` with `w * I / workers <= i`.
        let worker_of = |i: u32| ((i + 1) * workers - 1) / iterations;
        let (w0, w1) = (worker_of(start), worker_of(start + kb - 1));
        Work {
            tile: self.full + local,
            part: c - w0,
            parts: w1 - w0 + 1,
            kb0: b0.max(start) - start,
            kb1: b1.min(start + kb) - start,
        }
    }

    /// [`Schedule::work`] of worker `c`'s piece `j` in 64-bit arithmetic.
    #[inline(always)]
    fn stream_k_work_wide(self, c: u32, j: u32, k_blocks: u32) -> Work {
        let none = self.no_work();
        let kb = u64::from(k_blocks);
        let iterations = u64::from(self.tiles() - self.full) * kb;
        let workers = u64::from(self.workers);
        let c = u64::from(c);
        // The worker's range of the split tiles' k-blocks.
        let (b0, b1) = (c * iterations / workers, (c + 1) * iterations / workers);
        let local = b0 / kb + u64::from(j);
        let start = local * kb;
        if start >= b1 {
            return none;
        }
        // The worker whose range holds k-block `i`: the last `w` with `w * I / workers <= i`.
        let worker_of = |i: u64| ((i + 1) * workers - 1) / iterations;
        let (w0, w1) = (worker_of(start), worker_of(start + kb - 1));
        // Each below 2^32: tiles, parts and k-blocks of the schedule.
        Work {
            tile: self.full + local as u32,
            part: (c - w0) as u32,
            parts: (w1 - w0 + 1) as u32,
            kb0: (b0.max(start) - start) as u32,
            kb1: (b1.min(start + kb) - start) as u32,
        }
    }

    /// Unit `u`: its tile's index (in the grouped order), its split, and how many splits the tile
    /// has.
    #[inline]
    pub fn unit(self, u: u32) -> (u32, u32, u32) {
        if u < self.full {
            (u, 0, 1)
        } else {
            let v = u - self.full;
            (self.full + v / self.splits, v % self.splits, self.splits)
        }
    }

    /// The k-blocks `first..end` of split `split` of `parts` of `k_blocks` (at least one each when
    /// `parts <= k_blocks`, which [`Schedule::new`]'s clamp gives).
    #[inline]
    pub fn k_range(split: u32, parts: u32, k_blocks: u32) -> (u32, u32) {
        (split * k_blocks / parts, (split + 1) * k_blocks / parts)
    }

    /// The workspace slot of split tile `tile` (at least `full`), CTA `rank` of a cluster of
    /// `cluster`: one slot per CTA tile of the split tiles.
    #[inline]
    pub fn slot(self, tile: u32, cluster: u32, rank: u32) -> u32 {
        (tile - self.full) * cluster + rank
    }

    /// The workspace slots, `cluster` CTAs per cluster tile: one per CTA tile of the split tiles
    /// (none without split-K).
    #[inline]
    pub fn slots(self, cluster: u32) -> u32 {
        (self.tiles() - self.full) * cluster
    }

    /// The (row, column) of tile `t` in the grouped order: bands of [`GROUP`] tile rows, each band
    /// walked column by column.
    #[inline]
    pub fn tile(self, t: u32) -> (u32, u32) {
        let per_band = GROUP * self.tiles_n;
        let band = t / per_band;
        let first_m = band * GROUP;
        let rows = if self.tiles_m - first_m < GROUP {
            self.tiles_m - first_m
        } else {
            GROUP
        };
        let within = t % per_band;
        (first_m + within % rows, within / rows)
    }
}

/// The tiles a stream-K schedule of `tiles` on a grid of `stride` (at least 1) computes whole
/// ([`Schedule::stream_k`]): none when they are fewer than the grid; all when they fill whole
/// waves; otherwise all but the last, partial wave, and but one whole wave more when that last
/// wave is less than half full.
#[inline(always)]
pub fn stream_k_whole(tiles: u64, stride: u64) -> u64 {
    let rest = tiles % stride;
    if tiles < stride {
        0
    } else if rest == 0 {
        tiles
    } else if 2 * rest < stride {
        tiles - rest - stride
    } else {
        tiles - rest
    }
}

/// Whether a schedule of `tiles_m x tiles_n` tiles, the last partial wave (or all of them) split
/// `splits` ways on a grid of `stride` clusters, has fewer than [`MAX_UNITS`] units, counted
/// without overflow: when it does, every count of units and tiles of [`Schedule`] fits its
/// `u32` (the k-block arithmetic of [`Schedule::k_range`] needs `splits * k_blocks` below 2^32
/// besides, which a host checks with its K).
pub fn units_fit(tiles_m: u64, tiles_n: u64, splits: u32, stride: u32) -> bool {
    let Some(tiles) = tiles_m.checked_mul(tiles_n) else {
        return false;
    };
    let stride = u64::from(stride.max(1));
    let full = if splits <= 1 {
        tiles
    } else if tiles >= stride {
        tiles - tiles % stride
    } else {
        0
    };
    (tiles - full)
        .checked_mul(u64::from(splits.max(1)))
        .and_then(|split| split.checked_add(full))
        .is_some_and(|units| units < MAX_UNITS)
}

/// Into how many parts to split the K range of the split tiles of `tiles` tiles when `capacity`
/// clusters run at once: the split tiles are every tile when they fill less than half of the grid,
/// or else those of the last, partial wave (as [`Schedule::new`] chooses with `stride =
/// capacity`); they are split into as many parts as keep every cluster busy, at most
/// `max_splits`, each at least `min_blocks` of the `k_blocks`. 1 (no split) when the tiles fill
/// whole waves, or at least half of the grid and at most one wave (a partial last wave after
/// whole ones is always split).
pub fn split_k(tiles: u64, capacity: u32, k_blocks: u32, min_blocks: u32, max_splits: u32) -> u32 {
    let capacity = u64::from(capacity);
    let split = if tiles >= capacity {
        tiles % capacity
    } else if tiles < capacity / 2 {
        tiles
    } else {
        0
    };
    if split == 0 {
        return 1;
    }
    let parts = (capacity / split).min(u64::from(k_blocks / min_blocks.max(1)));
    // At most `max_splits`: the conversion cannot fail.
    parts.clamp(1, u64::from(max_splits.max(1))) as u32
}

#[cfg(test)]
mod tests {
    extern crate std;
    use std::format;
    use std::vec::Vec;

    use super::*;

    /// `units_fit` on counts whose product passes 64 bits: false, not a wrapped product under
    /// the bound (found by a review, 2026-12-05: `units_fit(2^32, 2^32, 1, 1)` was true in a
    /// release build and panicked in a debug one).
    #[test]
    fn units_fit_does_not_wrap() {
        assert!(!units_fit(1 << 32, 1 << 32, 1, 1));
        assert!(!units_fit(1 << 40, 1 << 30, 16, 132));
        assert!(!units_fit(u64::MAX, 2, 2, 1));
        assert!(units_fit(1 << 15, 1 << 15, 1, 132));
    }

    /// Every unit of every CTA, walked as the device walks them.
    fn walk(tiles_m: u32, tiles_n: u32, splits: u32, k_blocks: u32, grid: u32) -> Vec<(u32, u32)> {
        let mut seen = Vec::new();
        for first in 0..grid {
            let s = Schedule::new(tiles_m, tiles_n, splits, k_blocks, first, grid);
            let mut u = s.first;
            while u < s.total() {
                let (tile, split, parts) = s.unit(u);
                let (kb0, kb1) = Schedule::k_range(split, parts, k_blocks);
                assert!(kb0 < kb1, "an empty split");
                for kb in kb0..kb1 {
                    seen.push((tile, kb));
                }
                u += s.stride;
            }
        }
        seen.sort_unstable();
        seen
    }

    #[test]
    fn every_k_block_of_every_tile_is_computed_once() {
        for (tm, tn, splits, k_blocks, grid) in [
            (1, 1, 1, 1, 132),
            (3, 5, 4, 7, 4),
            (17, 9, 2, 64, 132),
            (9, 1, 16, 3, 8),
            (2, 2, 8, 8, 132),
            (33, 32, 1, 64, 132),
        ] {
            let seen = walk(tm, tn, splits, k_blocks, grid);
            let want: Vec<_> = (0..tm * tn)
                .flat_map(|t| (0..k_blocks).map(move |kb| (t, kb)))
                .collect();
            assert_eq!(
                seen, want,
                "{tm} x {tn} tiles, {splits} splits, {k_blocks} k-blocks"
            );
        }
    }

    /// One k-block of a walk: `(tile, k-block, part, parts, cta)`.
    type Visit = (u32, u32, u32, u32, u32);

    /// Every unit of every CTA of a stream-K schedule, walked as the device walks them.
    fn walk_stream_k(
        tiles_m: u32,
        tiles_n: u32,
        k_blocks: u32,
        workers: u32,
        grid: u32,
    ) -> (Schedule, Vec<Visit>) {
        let mut seen = Vec::new();
        let s0 = Schedule::stream_k(tiles_m, tiles_n, k_blocks, workers, 0, grid);
        for first in 0..grid {
            let s = Schedule::stream_k(tiles_m, tiles_n, k_blocks, workers, first, grid);
            assert_eq!(s.total(), s0.total());
            let mut u = s.first;
            let mut ended = false;
            while u < s.total() {
                let w = s.work(u, k_blocks);
                if w.parts == 0 {
                    assert_eq!((w.kb0, w.kb1), (0, 0));
                    ended = true;
                } else {
                    // A worker's units are one range: none after its first empty one.
                    assert!(!ended, "a unit after an empty one");
                    assert!(w.kb0 < w.kb1 && w.kb1 <= k_blocks, "{w:?}");
                    assert!(w.part < w.parts && w.parts <= s.splits, "{w:?} {s:?}");
                    for kb in w.kb0..w.kb1 {
                        seen.push((w.tile, kb, w.part, w.parts, first));
                    }
                }
                u += s.stride;
            }
        }
        seen.sort_unstable();
        (s0, seen)
    }

    #[test]
    fn stream_k_work_in_32_bits_is_the_64_bit_work() {
        // Every unit of many schedules (the small ones exhaustively, large ones by their edges),
        // where the 32-bit arithmetic applies: the same piece as the 64-bit arithmetic.
        let mut checked = 0u64;
        let cases = (1..=5u32).flat_map(|tm| {
            (1..=7u32).flat_map(move |tn| {
                [1u32, 2, 3, 7, 64, 4096].into_iter().flat_map(move |kb| {
                    [1u32, 3, 16, 132].into_iter().flat_map(move |grid| {
                        [1, grid.div_ceil(2), grid].map(|w| (tm, tn, kb, w, grid))
                    })
                })
            })
        });
        let large = [
            (64, 64, 65_536, 132, 132),
            (1, 1, 1 << 24, 132, 132),
            (33, 32, 4096, 132, 132),
        ];
        for (tm, tn, kb, workers, grid) in cases.chain(large) {
            for first in 0..grid {
                let s = Schedule::stream_k(tm, tn, kb, workers, first, grid);
                if s.workers == 0 {
                    continue;
                }
                let iterations = u64::from(s.tiles() - s.full) * u64::from(kb);
                assert!(iterations * (u64::from(s.workers) + 1) <= u64::from(u32::MAX));
                let mut u = first.max(s.full);
                while u < s.total() {
                    if u >= s.full {
                        let v = u - s.full;
                        let (c, j) = (v % s.stride, v / s.stride);
                        if c < s.workers {
                            assert_eq!(
                                s.stream_k_work_narrow(c, j, kb),
                                s.stream_k_work_wide(c, j, kb),
                                "{tm} x {tn} tiles, {kb} k-blocks, {workers} of {grid}, unit {u}"
                            );
                            checked += 1;
                        }
                    }
                    u += s.stride;
                }
            }
        }
        assert!(checked > 10_000, "{checked}");
    }

    #[test]
    fn stream_k_computes_every_k_block_of_every_tile_once_in_part_order() {
        for (tm, tn, k_blocks, workers, grid) in [
            (1, 1, 1, 132, 132),
            (1, 1, 64, 132, 132),
            (6, 12, 32, 132, 132),
            (12, 12, 56, 132, 132),
            (3, 5, 7, 4, 4),
            (9, 1, 3, 8, 8),
            (2, 9, 5, 7, 9),
            (4, 33, 64, 132, 132),
            (8, 33, 2, 132, 132),
            (5, 3, 17, 1, 6),
            (1, 7, 100, 50, 132),
            (2, 8, 32, 128, 132),
            (33, 32, 64, 132, 132),
        ]
        .into_iter()
        .chain(
            // Every small case: 1 to 4 x 1 to 9 tiles of 1, 2, 3, 5 or 8 k-blocks on grids of
            // 1, 2, 3, 7 and 16, with one worker, half the grid, or all of it.
            (1..=4).flat_map(|tm| {
                (1..=9).flat_map(move |tn| {
                    [1, 2, 3, 5, 8].into_iter().flat_map(move |kb| {
                        [1u32, 2, 3, 7, 16].into_iter().flat_map(move |grid| {
                            [1, grid.div_ceil(2), grid].map(|w| (tm, tn, kb, w, grid))
                        })
                    })
                })
            }),
        ) {
            let (s, seen) = walk_stream_k(tm, tn, k_blocks, workers, grid);
            let got: Vec<_> = seen.iter().map(|&(t, kb, ..)| (t, kb)).collect();
            let want: Vec<_> = (0..tm * tn)
                .flat_map(|t| (0..k_blocks).map(move |kb| (t, kb)))
                .collect();
            let case = format!("{tm} x {tn} tiles, {k_blocks} k-blocks, {workers} of {grid}");
            assert_eq!(got, want, "{case}");
            assert_eq!(
                u64::from(s.total()),
                Schedule::stream_k_units(u64::from(tm * tn), k_blocks, workers, grid),
                "{case}"
            );
            for t in 0..tm * tn {
                let of_tile: Vec<_> = seen.iter().filter(|x| x.0 == t).collect();
                let parts = of_tile[0].3;
                // Every k-block of the tile agrees on its parts; the parts run in k order, each
                // its own CTA's, numbered from 0 without a gap.
                assert!(of_tile.iter().all(|x| x.3 == parts), "{case}: tile {t}");
                let mut order: Vec<_> = of_tile.iter().map(|x| x.2).collect();
                assert!(order.windows(2).all(|w| w[0] <= w[1]), "{case}: tile {t}");
                order.dedup();
                assert_eq!(order, (0..parts).collect::<Vec<_>>(), "{case}: tile {t}");
                let mut ctas: Vec<_> = of_tile.iter().map(|x| (x.2, x.4)).collect();
                ctas.dedup();
                assert_eq!(ctas.len() as u32, parts, "{case}: tile {t}");
                if t < s.full {
                    assert_eq!(parts, 1, "{case}: a whole tile {t}");
                }
            }
            // The split tiles' k-blocks are shared evenly: the workers' loads differ by one at
            // most, and the other CTAs have none.
            if s.workers > 0 {
                let load = |c: u32| seen.iter().filter(|x| x.4 == c && x.0 >= s.full).count();
                let loads: Vec<_> = (0..s.workers).map(load).collect();
                let (lo, hi) = (loads.iter().min().unwrap(), loads.iter().max().unwrap());
                assert!(hi - lo <= 1 && *lo >= 1, "{case}: {loads:?}");
                assert!((s.workers..grid).all(|c| load(c) == 0), "{case}");
            }
        }
    }

    #[test]
    fn stream_k_splits_the_last_wave_and_a_whole_one_when_it_is_small() {
        // 72 tiles on 132 CTAs: all split, 32 k-blocks cut 132 ways: 17 or 18 each, a tile in
        // two or three parts.
        let s = Schedule::stream_k(6, 12, 32, 132, 0, 132);
        assert_eq!((s.full, s.workers, s.splits, s.segments), (0, 132, 3, 2));
        // 144 tiles: the remainder of 12 is under half a wave: one whole wave split with it.
        let s = Schedule::stream_k(12, 12, 56, 132, 0, 132);
        assert_eq!((s.full, s.slots(1)), (0, 144));
        // 264 + 80: the last 80 tiles alone.
        let s = Schedule::stream_k(8, 43, 56, 132, 0, 132);
        assert_eq!((s.full, s.slots(1)), (264, 80));
        // Whole waves: no split tile, no worker.
        let s = Schedule::stream_k(4, 33, 56, 132, 0, 132);
        assert_eq!((s.full, s.workers, s.total()), (132, 0, 132));
        // Fewer k-blocks than workers: one worker per k-block.
        assert_eq!(Schedule::stream_k(1, 1, 5, 132, 0, 132).workers, 5);
    }

    #[test]
    fn stream_k_units_refuse_what_the_device_cannot_count() {
        assert!(Schedule::stream_k_units(72, 32, 132, 132) < MAX_UNITS);
        assert!(Schedule::stream_k_units(1 << 40, 1 << 30, 1 << 30, 1 << 31) >= MAX_UNITS);
        assert_eq!(Schedule::stream_k_units(264, 32, 132, 132), 264);
    }

    #[test]
    fn the_grouped_order_visits_every_tile_once() {
        for (tm, tn) in [(1, 1), (8, 3), (9, 4), (20, 7), (3, 50)] {
            let s = Schedule::new(tm, tn, 1, 1, 0, 1);
            let mut tiles: Vec<_> = (0..s.tiles()).map(|t| s.tile(t)).collect();
            // Bands of GROUP rows: the first tiles of a band run down its rows.
            assert_eq!(s.tile(0), (0, 0));
            if tm > 1 {
                assert_eq!(s.tile(1), (1, 0));
            }
            tiles.sort_unstable();
            let want: Vec<_> = (0..tm).flat_map(|m| (0..tn).map(move |n| (m, n))).collect();
            assert_eq!(tiles, want);
        }
    }

    #[test]
    fn only_the_last_partial_wave_is_split_when_the_tiles_fill_the_grid() {
        // 448 tiles on 132 CTAs: 3 waves whole, the last 52 tiles split.
        let s = Schedule::new(8, 56, 2, 64, 0, 132);
        assert_eq!((s.full, s.total(), s.slots(1)), (396, 396 + 104, 52));
        // Fewer tiles than the grid: every tile split.
        let s = Schedule::new(1, 16, 8, 64, 0, 132);
        assert_eq!((s.full, s.total(), s.slots(2)), (0, 128, 32));
        // Splits clamp to the k-blocks: no empty split.
        assert_eq!(Schedule::new(1, 1, 16, 3, 0, 132).splits, 3);
        assert_eq!(Schedule::new(1, 1, 0, 3, 0, 132).splits, 1);
    }

    #[test]
    fn split_k_keeps_the_gpu_busy_within_its_bounds() {
        // 16 tiles for 132 SMs: 8 parts; 56: 2; 448 tiles: the last 52 in 2.
        assert_eq!(split_k(16, 132, 64, 4, 16), 8);
        assert_eq!(split_k(56, 132, 64, 4, 16), 2);
        assert_eq!(split_k(448, 132, 64, 4, 16), 2);
        // Enough tiles, or a last wave at least half full: no split.
        assert_eq!(split_k(1024, 132, 128, 4, 16), 1);
        assert_eq!(split_k(100, 132, 128, 4, 16), 1);
        // At most 16 parts, at least 4 k-blocks each, never 0.
        assert_eq!(split_k(1, 132, 1024, 4, 16), 16);
        assert_eq!(split_k(1, 132, 1, 4, 16), 1);
        assert_eq!(split_k(1, 132, 16, 4, 16), 4);
    }

    #[test]
    fn units_fit_below_two_to_the_31() {
        assert!(units_fit(1 << 15, 1 << 15, 1, 132));
        assert!(!units_fit(1 << 16, 1 << 15, 1, 132));
        // Split tiles count once per split.
        assert!(!units_fit(1, 1 << 28, 16, 1 << 30));
        assert!(units_fit(1, 1 << 26, 16, 1 << 30));
    }
}
