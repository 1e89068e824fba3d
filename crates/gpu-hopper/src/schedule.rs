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
//! Room for stream-K: a stream-K schedule would cut the total k-blocks (not tiles) evenly over the
//! grid; its units are then ranges of k-blocks that may start inside a tile. It fits the same
//! shape (a unit's tile, its k-range and whether it finishes the tile), and is not written yet.

/// The tile rows per band of the grouped order of [`Schedule::tile`] (the GEMM's choice).
pub const GROUP: u32 = 8;

/// The largest number of work units a schedule holds: the device counts units in `u32` and steps
/// past the last by up to a grid's width (below 2^31 each), so they stay below 2^31.
pub const MAX_UNITS: u64 = 1 << 31;

/// Which work units a CTA (or CTA pair) computes, in order: the first [`full`](Self::full) tiles
/// (in the grouped order) are whole units; each later tile is `splits` units, consecutive, so that
/// a split tile's parts run side by side on neighbouring CTAs.
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
}

impl Schedule {
    /// The schedule of `tiles_m x tiles_n` tiles in `splits` parts (clamped to `1..=k_blocks`, so
    /// that no split is empty) for a CTA (or pair) whose units are `first, first + stride, ...`:
    /// every tile split when they are fewer than `stride`, otherwise all but the last, partial wave
    /// whole.
    ///
    /// `tiles_m * tiles_n` must not overflow `u32` (a host checks [`units_fit`] first).
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
        }
    }

    /// The tiles.
    #[inline]
    pub fn tiles(self) -> u32 {
        self.tiles_m * self.tiles_n
    }

    /// The work units: the whole tiles, then `splits` per split tile.
    #[inline]
    pub fn total(self) -> u32 {
        self.full + (self.tiles() - self.full) * self.splits
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

/// Whether a schedule of `tiles_m x tiles_n` tiles, the last partial wave (or all of them) split
/// `splits` ways on a grid of `stride` clusters, has fewer than [`MAX_UNITS`] units, counted in
/// `u64`: when it does, every count of [`Schedule`] fits its `u32`.
pub fn units_fit(tiles_m: u64, tiles_n: u64, splits: u32, stride: u32) -> bool {
    let (tiles, stride) = (tiles_m * tiles_n, u64::from(stride.max(1)));
    let full = if splits <= 1 {
        tiles
    } else if tiles >= stride {
        tiles - tiles % stride
    } else {
        0
    };
    full + (tiles - full) * u64::from(splits.max(1)) < MAX_UNITS
}

/// Into how many parts to split the K range of the split tiles of `tiles` tiles when `capacity`
/// clusters run at once: the split tiles are every tile when they fill less than half of the grid,
/// or else those of the last, partial wave (as [`Schedule::new`] chooses with `stride =
/// capacity`); they are split into as many parts as keep every cluster busy, at most
/// `max_splits`, each at least `min_blocks` of the `k_blocks`. 1 (no split) when the tiles fill at
/// least half of the grid and the last wave is full or at least half full.
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
    use std::vec::Vec;

    use super::*;

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
