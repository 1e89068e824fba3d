//! The work units of a problem and their order.
//!
//! A unit is one query block (`block_m` rows) of one query head of one sequence: it reads its
//! rows of Q once and streams the key blocks it sees ([`key_blocks`](crate::mask::key_blocks)).
//! A persistent grid takes the units in rounds of `grid` (one per CTA), so the order is the
//! schedule; within a round the CTAs take them in turn, forwards in even rounds and backwards in
//! odd ones ([`Assignment`]), so that a CTA given a round's longest unit gets the next round's
//! shortest:
//!
//! - causal: the query blocks that see the most keys first (FlashAttention-3's longest-first
//!   order), so that the last wave holds the shortest units; within a query block index, the
//!   query heads of one sequence side by side. Where a round of that order would spread over
//!   more heads than it reads each one's keys from L2 ([`Units::folds`]), a fixed batch's units
//!   come *folded* instead ([`Units::folded`]): head by head, each head's longest query block
//!   paired with its shortest, then the next longest with the next shortest, and the alternating
//!   rounds ([`Assignment`]) give a CTA both units of a pair, one round after the other, so the
//!   CTAs' work over two rounds is about the same and the CTAs running at once read the keys of
//!   a few heads together;
//! - not causal: a head's query blocks one after another, then the next head: the units running
//!   at once share K and V in L2. Either way the query heads that share a K/V head (grouped-query
//!   attention) are adjacent.
//!
//! Variable-length batches take their sequences in order, each in the same order within; the host
//! lists their units in its table by their key blocks, most first across the sequences
//! (gpu-attention-host's `order`), and the kernels take the table's order.

use crate::{Batches, Mask, Problem};

/// A work unit: sequence, query head, query block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Unit {
    pub sequence: u32,
    pub head: u32,
    pub m_block: u32,
}

/// The units of a problem in query blocks of `block_m` rows.
#[derive(Clone, Copy, Debug)]
pub struct Units<'a> {
    batches: Batches<'a>,
    heads: u32,
    causal: bool,
    block_m: u32,
    /// A causal fixed batch's units in the folded order for a grid of this many CTAs
    /// ([`Units::folded`]); 0: not folded.
    fold_grid: u64,
}

impl<'a> Units<'a> {
    /// The units of `problem` (checked) in blocks of `block_m` query rows.
    pub fn new(problem: &Problem<'a>, block_m: u32) -> Self {
        Self {
            batches: problem.batches,
            heads: problem.heads_q,
            causal: problem.mask == Mask::Causal,
            block_m,
            fold_grid: 0,
        }
    }

    /// The units of `heads` query heads of `batches` in blocks of `block_m` rows, causal or not
    /// (the kernels' form of [`new`](Self::new), from their launch parameters).
    pub const fn of(batches: Batches<'a>, heads: u32, causal: bool, block_m: u32) -> Self {
        Self {
            batches,
            heads,
            causal,
            block_m,
            fold_grid: 0,
        }
    }

    /// The same units in the folded order for a persistent grid of `grid` CTAs taking them in
    /// alternating rounds ([`Assignment::new`] with `alternate`), when `on` and the problem is a
    /// causal fixed batch (the only one the order changes); otherwise as they are.
    ///
    /// Folded, each query head of each sequence lists its `n` query blocks as `n - 1, 0, n - 2,
    /// 1, ..`, heads one after another (sequence by sequence): pair `i` is the list's units `2 i`
    /// and `2 i + 1`, a long block and a short one of one head, whose key blocks add up to about
    /// the same in every pair (`n + 1` where a key block is as long as a query block); with `n`
    /// odd, the middle block comes last in the list of an even head (counted across the
    /// sequences: `sequence · heads + head`) and first in an odd one's, so that two heads'
    /// middle blocks make a pair. Place `x` of the schedule holds,
    /// in two rounds `2 grid` places long, the pairs' first units in the first round and their
    /// second units in the second in reverse order, so that the CTA given a pair's first unit in
    /// one round is given its second in the next. The places after the last whole two rounds
    /// (fewer than `2 grid`) hold the rest of the list one by one, the pairs' first units in
    /// order, then their second units in reverse order: the long ones first.
    #[must_use]
    pub const fn folded(mut self, on: bool, grid: u64) -> Self {
        let fold = on && self.causal && matches!(self.batches, Batches::Fixed { .. });
        self.fold_grid = if fold { grid } else { 0 };
        self
    }

    /// Unit `u` as [`get`](Self::get) gives it, but for folded units with the last rounds in
    /// the longest-first order instead: the places from the start of the last whole two rounds
    /// on (two to four rounds' worth) hold the rest of the folded list sorted by query block, the
    /// last first (the most key blocks), a block's heads in order, so that the schedule ends on
    /// the shortest units as the longest-first order does, where the folded tail ends on a
    /// partial round of long ones. A model of the rounds (a unit: its key blocks and 3.4) gives
    /// it 0.98-0.99 of the longest-first balance on the benchmark's causal cells where the
    /// folded order gives 0.95-0.97: the kernel crate's `folded_tail` variant modules, to
    /// measure. (A method of its own, so that the production kernels' code is what was measured.)
    pub fn get_sorted_tail(&self, u: u64) -> Unit {
        let Batches::Fixed { .. } = self.batches else {
            return self.get(u);
        };
        if self.fold_grid == 0 {
            return self.get(u);
        }
        let (_, seq_q) = self.batches.queries(0);
        let per_block = u64::from(self.batches.count()) * u64::from(self.heads);
        let (m_blocks, heads) = (self.blocks(seq_q), u64::from(self.heads));
        let (m, bh) = folded_unit_sorted_tail(u, per_block, m_blocks, self.fold_grid);
        Unit {
            sequence: (bh / heads) as u32,
            head: (bh % heads) as u32,
            m_block: m as u32,
        }
    }

    /// Whether a persistent grid of `grid` CTAs should take this problem's units folded: a
    /// causal fixed batch in query blocks of at most 128 rows (two consumer warpgroups) whose
    /// longest-first rounds hold fewer than eight units of each head (`8 · batch · heads >
    /// grid`), with at least four rounds of units (`count >= 4 grid`, so that whole pairs, not
    /// the tail, make up most of the schedule). A longest-first round of such a problem reads the
    /// keys of up to `grid` heads at once, each from memory (at 2k keys and head dim 128 the
    /// benchmark's 128 heads: 128 MiB of K and V against the L2's 50 MB); folded, the CTAs
    /// running at once read a few heads' keys, each from L2 for all the units of the head that
    /// run together.
    ///
    /// Measured against the longest-first order (same call, two alternating processes, causal,
    /// beside cuDNN; tests/results/2026-12-03-issue25.md): run 102 (the H200, this order with the
    /// rule but for the 128-row condition) at 2k keys +10 % and +10-17 % (head dims 128, 256), at
    /// 4k +5 % and +3 %, at 8k +4 % (128), and GQA at 8k (folded: 64 heads) -2 %; run 101 (an
    /// H100, an earlier form of the order under a looser rule, whose varlen control cell, not
    /// folded, read +5-6 %) at 1k +11 %, +45 %, +43 % (64, 128, 256), at 2k +45 % and +13 % (128,
    /// 256). The 192-row units of head dim 64 above 1k keys are not folded: their last round is a
    /// partial one of long units (at 8k a model of the rounds gives 0.95 of the longest-first
    /// balance), and run 102 measured them folded -0.4 % to -5 % (run 101: +7 % to -1 %).
    pub const fn folds(&self, grid: u64) -> bool {
        let (per, blocks) = match self.batches {
            Batches::Fixed { batch, seq_q, .. } => (
                batch as u64 * self.heads as u64,
                seq_q.div_ceil(self.block_m) as u64,
            ),
            Batches::Varlen { .. } => return false,
        };
        fold_rule(self.causal, self.block_m, per, per * blocks, grid)
    }

    /// Whether the units are in the folded order.
    pub const fn is_folded(&self) -> bool {
        self.fold_grid != 0
    }

    /// The sequences.
    pub const fn batches(&self) -> Batches<'a> {
        self.batches
    }

    /// Query blocks of a sequence of `seq_q` queries.
    fn blocks(&self, seq_q: u32) -> u64 {
        u64::from(seq_q.div_ceil(self.block_m))
    }

    /// How many units there are.
    pub fn count(&self) -> u64 {
        (0..self.batches.count())
            .map(|b| self.blocks(self.batches.queries(b).1) * u64::from(self.heads))
            .sum()
    }

    /// Unit `u` (below [`count`](Self::count)) in the schedule's order.
    pub fn get(&self, u: u64) -> Unit {
        let (sequence, within) = match self.batches {
            Batches::Fixed { .. } => {
                // Every sequence alike: the causal order runs across sequences (the longest
                // blocks of all of them first), as one sequence of `batch * heads` heads.
                let (_, seq_q) = self.batches.queries(0);
                let per_block = u64::from(self.batches.count()) * u64::from(self.heads);
                let (m_blocks, heads) = (self.blocks(seq_q), u64::from(self.heads));
                let (m, bh) = if self.fold_grid != 0 {
                    // `list_unit`, written out: through the helper LLVM lays the kernels out
                    // otherwise than the module that run 103 checked.
                    let f = folded_place(u, per_block * m_blocks, self.fold_grid);
                    (
                        folded_block(m_blocks, f / m_blocks, f % m_blocks),
                        f / m_blocks,
                    )
                } else if self.causal {
                    (m_blocks - 1 - u / per_block, u % per_block)
                } else {
                    (u % m_blocks, u / m_blocks)
                };
                return Unit {
                    sequence: (bh / heads) as u32,
                    head: (bh % heads) as u32,
                    m_block: m as u32,
                };
            }
            Batches::Varlen { .. } => {
                let mut rest = u;
                let mut b = 0;
                loop {
                    let n = self.blocks(self.batches.queries(b).1) * u64::from(self.heads);
                    if rest < n {
                        break (b, rest);
                    }
                    rest -= n;
                    b += 1;
                }
            }
        };
        let m_blocks = self.blocks(self.batches.queries(sequence).1);
        let heads = u64::from(self.heads);
        let (m, h) = if self.causal {
            (m_blocks - 1 - within / heads, within % heads)
        } else {
            (within % m_blocks, within / m_blocks)
        };
        Unit {
            sequence,
            head: h as u32,
            m_block: m as u32,
        }
    }
}

/// [`Units::folds`]'s rule for `heads` heads (sequences times query heads) in `count` units of
/// `unit_rows` query rows on `grid` CTAs, causal or not; a variable-length batch's table may be
/// folded by it too.
pub const fn fold_rule(causal: bool, unit_rows: u32, heads: u64, count: u64, grid: u64) -> bool {
    causal && unit_rows <= 128 && 8 * heads > grid && count >= 4 * grid
}

/// The unit of a folded list (pairs of units one after another: `2 i` and `2 i + 1`) at place
/// `x` of the schedule of `count` units for a grid of `grid` CTAs taking them in alternating
/// rounds ([`Units::folded`] says how; a variable-length batch's table may be laid out so too).
pub const fn folded_place(x: u64, count: u64, grid: u64) -> u64 {
    let rounds = 2 * grid;
    let base = count / rounds * rounds;
    if x < base {
        let (k, w) = (x / rounds, x % rounds);
        let (pair, second) = if w < grid {
            (w, 0)
        } else {
            (rounds - 1 - w, 1)
        };
        2 * (k * grid + pair) + second
    } else {
        let (tail, w) = (count - base, x - base);
        let firsts = tail.div_ceil(2);
        if w < firsts {
            base + 2 * w
        } else {
            base + 2 * (tail / 2 - 1 - (w - firsts)) + 1
        }
    }
}

/// Unit `f` of the folded list (heads' lists of `n` query blocks one after another):
/// `(m_block, head)`.
const fn list_unit(f: u64, n: u64) -> (u64, u64) {
    (folded_block(n, f / n, f % n), f / n)
}

/// Place `x` of `per` heads' lists of `n` query blocks folded for a grid of `grid` CTAs, the
/// last rounds sorted ([`Units::get_sorted_tail`]): `(m_block, head)`.
const fn folded_unit_sorted_tail(x: u64, per: u64, n: u64, grid: u64) -> (u64, u64) {
    let count = per * n;
    let rounds = 2 * grid;
    let whole = count / rounds;
    let cut = if whole == 0 { 0 } else { (whole - 1) * rounds };
    if x < cut {
        return list_unit(folded_place(x, cut, grid), n);
    }
    sorted_tail_unit(x - cut, cut, per, n)
}

/// Unit `y` of the folded list's units from place `cut` on (the rest of head `cut / n`'s list
/// and the heads after it), sorted by query block, the last first, a block's heads in order:
/// `(m_block, head)`.
const fn sorted_tail_unit(y: u64, cut: u64, per: u64, n: u64) -> (u64, u64) {
    let (h0, i0) = (cut / n, cut % n);
    // The heads whose whole lists are in the tail, from `full` on; head `h0`'s list from
    // place `i0` on (if `i0 > 0`): blocks `lo ..= hi`, but for the middle one where `hole`.
    let full = if i0 == 0 { h0 } else { h0 + 1 };
    let c = per - full;
    let mid = n / 2;
    // The zigzag list's places `i ..` hold blocks `i / 2 ..= n - 1 - i / 2` (`i` even) or
    // `(i - 1) / 2 ..= n - 2 - (i - 1) / 2` (`i` odd: the pair's long block is before it).
    const fn from(n: u64, i: u64) -> (u64, u64) {
        if i % 2 == 0 {
            (i / 2, n - 1 - i / 2)
        } else {
            ((i - 1) / 2, n - 2 - (i - 1) / 2)
        }
    }
    let (lo, hi, hole) = if i0 == 0 {
        // No part head: an empty range above the blocks.
        (n, n - 1, false)
    } else if n % 2 == 1 && h0 % 2 == 1 {
        // An odd head of an odd count: its middle block first (before `cut`), then the zigzag.
        let (lo, hi) = from(n, i0 - 1);
        (lo, hi, true)
    } else {
        let (lo, hi) = from(n, i0);
        (lo, hi, false)
    };
    // The part head `h0` comes first among a block's heads, then the whole ones.
    const fn head(j: u64, with_part: bool, h0: u64, full: u64) -> u64 {
        if with_part {
            if j == 0 { h0 } else { full + j - 1 }
        } else {
            full + j
        }
    }
    let mut y = y;
    // Blocks above `hi`: the whole heads only.
    let above = (n - 1 - hi) * c;
    if y < above {
        return (n - 1 - y / c, head(y % c, false, h0, full));
    }
    y -= above;
    if hole {
        // `hi ..> mid` with the part head, `mid` without it, `mid >.. lo` with it.
        let upper = (hi - mid) * (c + 1);
        if y < upper {
            return (hi - y / (c + 1), head(y % (c + 1), true, h0, full));
        }
        y -= upper;
        if y < c {
            return (mid, head(y, false, h0, full));
        }
        y -= c;
        let lower = (mid - lo) * (c + 1);
        if y < lower {
            return (mid - 1 - y / (c + 1), head(y % (c + 1), true, h0, full));
        }
        y -= lower;
    } else {
        let part = (hi + 1 - lo) * (c + 1);
        if y < part {
            return (hi - y / (c + 1), head(y % (c + 1), true, h0, full));
        }
        y -= part;
    }
    // Blocks below `lo`: the whole heads only (`c > 0` here: the part head alone has none).
    let c = if c == 0 { 1 } else { c };
    (lo - 1 - y / c, head(y % c, false, h0, full))
}

/// The query block at place `i` of head `bh`'s folded list of `n` blocks ([`Units::folded`]):
/// `n - 1, 0, n - 2, 1, ..`, with an odd `n`'s middle block last for an even `bh` and first for an
/// odd one.
const fn folded_block(n: u64, bh: u64, i: u64) -> u64 {
    const fn zigzag(n: u64, i: u64) -> u64 {
        if i % 2 == 0 { n - 1 - i / 2 } else { i / 2 }
    }
    if n % 2 == 0 || (bh % 2 == 0 && i < n - 1) {
        zigzag(n, i)
    } else if bh % 2 == 0 || i == 0 {
        n / 2
    } else {
        zigzag(n, i - 1)
    }
}

/// The units one CTA of a persistent grid takes, in order: unit `r * grid + c` of each round
/// `r`, where `c` is the CTA's index in even rounds and, when alternating, `grid - 1 -` it in odd
/// ones (a boustrophedon: over two rounds of units in decreasing length every CTA gets one long
/// and one short unit). Over the grid's CTAs every unit below `count` comes exactly once.
///
/// With the causal units' longest-first order a plain stride (`c, c + grid, ..`, not
/// alternating) gives CTA 0 the longest unit of every round: 6 % (D 128) to 12 % (D 256) more
/// work than the mean at 8k keys, which the whole launch waits for
/// (`causal_rounds_balance_the_ctas`).
///
/// A kernel walks it as `while a.unit() < count { ..; a.advance() }`: every value is defined on
/// every path (an `Option`, as `Iterator::next` returns, left LLVM an undefined payload on the
/// exhausted path, its PTX `implicit-def`, which the convergence check reads as lane-varying, and
/// then every `wgmma` of the loop as divergent). The step between a CTA's units alternates
/// between `2 (grid - 1 - c) + 1` and `2 c + 1`; not alternating, it is `grid`.
#[derive(Clone, Copy, Debug)]
pub struct Assignment {
    unit: u64,
    step: u64,
    grid: u64,
    count: u64,
    alternate: bool,
}

impl Assignment {
    /// The units of CTA `cta` (below `grid`) of a grid of `grid` CTAs over `count` units,
    /// alternating the order within a round (`alternate`) or not.
    #[inline(always)]
    #[must_use]
    pub const fn new(cta: u64, grid: u64, count: u64, alternate: bool) -> Self {
        let step = if alternate {
            2 * (grid - 1 - cta) + 1
        } else {
            grid
        };
        Self {
            unit: cta,
            step,
            grid,
            count,
            alternate,
        }
    }

    /// The CTA's current unit: at or past the count once it has no more (a round's units lie in
    /// `r * grid .. (r + 1) * grid`, so they only grow).
    #[inline(always)]
    #[must_use]
    pub const fn unit(&self) -> u64 {
        self.unit
    }

    /// On to the CTA's unit of the next round.
    #[inline(always)]
    pub const fn advance(&mut self) {
        self.unit += self.step;
        if self.alternate {
            self.step = 2 * self.grid - self.step;
        }
    }
}

impl Iterator for Assignment {
    type Item = u64;

    #[inline(always)]
    fn next(&mut self) -> Option<u64> {
        let u = self.unit;
        if u >= self.count {
            return None;
        }
        self.advance();
        Some(u)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::vec::Vec;

    use super::*;
    use crate::mask::key_blocks;

    fn all(units: &Units<'_>) -> Vec<Unit> {
        (0..units.count()).map(|u| units.get(u)).collect()
    }

    #[test]
    fn every_unit_once() {
        let offsets_q = [0, 1, 130, 130, 1130];
        let offsets_k = [0, 300, 301, 400, 1400];
        let problems = [
            Problem::contiguous(3, (1000, 1000), (8, 2), 128),
            Problem::contiguous(3, (1000, 1000), (8, 2), 128).with_mask(Mask::Causal),
            Problem::varlen(&offsets_q, &offsets_k, (4, 1), 64),
            Problem::varlen(&offsets_q, &offsets_k, (4, 1), 64).with_mask(Mask::Causal),
        ];
        // Blocks of 128 query rows, and of 192 (three consumer warpgroups).
        // Blocks of 128 and 192 query rows, folded or not (an odd count of query blocks too).
        let folds = [false, true];
        let shapes = problems
            .into_iter()
            .flat_map(|p| [(p, 128), (p, 192), (p, 100)]);
        for ((p, block_m), fold) in shapes.flat_map(|s| folds.map(|f| (s, f))) {
            let units = Units::new(&p, block_m).folded(fold, 7);
            assert_eq!(
                units.is_folded(),
                fold && p.mask == Mask::Causal && !matches!(p.batches, Batches::Varlen { .. })
            );
            let seen: BTreeSet<(u32, u32, u32)> = all(&units)
                .into_iter()
                .map(|u| (u.sequence, u.head, u.m_block))
                .collect();
            let mut expected = BTreeSet::new();
            for b in 0..p.batches.count() {
                for h in 0..p.heads_q {
                    for m in 0..p.batches.queries(b).1.div_ceil(block_m) {
                        expected.insert((b, h, m));
                    }
                }
            }
            assert_eq!(seen.len() as u64, units.count());
            assert_eq!(seen, expected);
        }
    }

    #[test]
    fn causal_units_come_longest_first() {
        let p = Problem::contiguous(2, (1000, 1000), (4, 4), 128).with_mask(Mask::Causal);
        // Blocks of 192 rows too (three consumer warpgroups).
        for block_m in [128, 192] {
            let work: Vec<u32> = all(&Units::new(&p, block_m))
                .iter()
                .map(|u| key_blocks(p.mask, (1000, 1000), u.m_block, (block_m, 128)).0)
                .collect();
            assert!(work.windows(2).all(|w| w[0] >= w[1]), "{block_m}: {work:?}");
        }
        let units = Units::new(&p, 128);
        // Within a query block index, the heads of one sequence side by side.
        assert_eq!(
            all(&units)[..3],
            [
                Unit {
                    sequence: 0,
                    head: 0,
                    m_block: 7
                },
                Unit {
                    sequence: 0,
                    head: 1,
                    m_block: 7
                },
                Unit {
                    sequence: 0,
                    head: 2,
                    m_block: 7
                },
            ]
        );
    }

    #[test]
    fn a_heads_blocks_run_together_without_the_mask() {
        let p = Problem::contiguous(1, (300, 300), (4, 2), 64);
        let units = all(&Units::new(&p, 128));
        assert_eq!(units.len(), 12);
        assert_eq!(
            units[..4]
                .iter()
                .map(|u| (u.head, u.m_block))
                .collect::<Vec<_>>(),
            [(0, 0), (0, 1), (0, 2), (1, 0)]
        );
    }

    #[test]
    fn a_grid_takes_every_unit_once_in_alternating_rounds() {
        for (grid, count) in [
            (1, 1),
            (1, 5),
            (4, 4),
            (4, 9),
            (132, 2048),
            (132, 100),
            (7, 50),
        ] {
            let mut seen = Vec::new();
            for cta in 0..grid {
                let mine: Vec<u64> = Assignment::new(cta, grid, count, true).collect();
                // One unit per round, in increasing rounds.
                for (k, u) in mine.iter().enumerate() {
                    assert_eq!(u / grid, k as u64, "cta {cta} of {grid}: {mine:?}");
                    let within = if k % 2 == 0 { cta } else { grid - 1 - cta };
                    assert_eq!(u % grid, within);
                }
                seen.extend(mine);
            }
            seen.sort_unstable();
            assert_eq!(
                seen,
                (0..count).collect::<Vec<_>>(),
                "grid {grid}, {count} units"
            );
        }
        // Not alternating: the plain stride.
        let plain: Vec<u64> = Assignment::new(3, 4, 20, false).collect();
        assert_eq!(plain, [3, 7, 11, 15, 19]);
    }

    /// The most work any CTA gets over the mean, for a causal problem whose units are taken by a
    /// persistent grid of 132 CTAs (the H200's SMs): a unit's work is its key blocks plus one
    /// (its Q load and epilogue).
    fn imbalance(seq: u32, head_dim: u32, block_n: u32, alternate: bool) -> f64 {
        imbalance_of(
            seq,
            (head_dim, block_n),
            132,
            alternate,
            Order::LongestFirst,
        )
    }

    /// How [`imbalance_of`] takes the units.
    #[derive(Clone, Copy, PartialEq)]
    enum Order {
        LongestFirst,
        Folded,
        SortedTail,
    }

    /// [`imbalance`] of the benchmark's causal problem at `seq` keys, `(head_dim, block_n)`, on
    /// `grid` CTAs, the units in `order`.
    fn imbalance_of(
        seq: u32,
        (head_dim, block_n): (u32, u32),
        grid: u64,
        alternate: bool,
        order: Order,
    ) -> f64 {
        let (batch, heads) = (16384 / seq, 2048 / head_dim);
        let p = Problem::contiguous(batch, (seq, seq), (heads, heads), head_dim)
            .with_mask(Mask::Causal);
        let units = Units::new(&p, 128).folded(order != Order::LongestFirst, grid);
        let work = |u: u64| {
            let unit = if order == Order::SortedTail {
                units.get_sorted_tail(u)
            } else {
                units.get(u)
            };
            f64::from(key_blocks(p.mask, (seq, seq), unit.m_block, (128, block_n)).0 + 1)
        };
        let per_cta: Vec<f64> = (0..grid)
            .map(|c| {
                Assignment::new(c, grid, units.count(), alternate)
                    .map(work)
                    .sum()
            })
            .collect();
        let mean = per_cta.iter().sum::<f64>() / grid as f64;
        per_cta.iter().cloned().fold(0.0, f64::max) / mean
    }

    #[test]
    fn causal_rounds_balance_the_ctas() {
        for (seq, d, n) in [
            (4096, 128, 192),
            (8192, 128, 192),
            (8192, 256, 64),
            (16384, 64, 192),
        ] {
            let r = imbalance(seq, d, n, true);
            assert!(
                r < 1.01,
                "seq {seq}, D {d}: the busiest CTA has {r:.3} of the mean"
            );
        }
        // The plain stride, for comparison: CTA 0 takes every round's longest unit.
        assert!(imbalance(8192, 128, 192, false) > 1.05);
        assert!(imbalance(8192, 256, 64, false) > 1.10);
    }

    #[test]
    fn folded_pairs_are_a_heads_long_and_short_blocks() {
        // 8 query blocks a head (even), and 7 (odd: the middle blocks of two heads pair up).
        for (seq, block_m) in [(1000, 128), (1000, 150)] {
            let p = Problem::contiguous(2, (seq, seq), (3, 1), 128).with_mask(Mask::Causal);
            let units = Units::new(&p, block_m).folded(true, 1);
            let n = seq.div_ceil(block_m);
            let all = all(&units);
            let blocks = |u: &Unit| key_blocks(p.mask, (seq, seq), u.m_block, (block_m, 128)).0;
            let mut total: Vec<u32> = Vec::new();
            for pair in all.chunks(2) {
                if let [a, b] = pair {
                    if a.head == b.head && a.sequence == b.sequence {
                        // A head's pair: blocks m and n - 1 - m.
                        assert_eq!(a.m_block + b.m_block, n - 1, "{pair:?}");
                        assert!(a.m_block > b.m_block);
                    } else {
                        // Two heads' middle blocks.
                        assert_eq!((a.m_block, b.m_block), (n / 2, n / 2), "{pair:?}");
                    }
                    total.push(blocks(a) + blocks(b));
                }
            }
            let (lo, hi) = (total.iter().min().unwrap(), total.iter().max().unwrap());
            assert!(
                hi - lo <= 2,
                "{seq}/{block_m}: pairs of {lo} to {hi} key blocks"
            );
            // Head by head: the first n units are sequence 0's head 0.
            assert!(
                all[..n as usize]
                    .iter()
                    .all(|u| (u.sequence, u.head) == (0, 0))
                    || n % 2 == 1
            );
        }
        // Not causal, or a variable-length batch: the order does not change.
        let p = Problem::contiguous(1, (300, 300), (4, 2), 64);
        assert!(!Units::new(&p, 128).folded(true, 132).is_folded());
    }

    #[test]
    fn a_folded_grid_gives_each_cta_both_units_of_a_pair() {
        // Heads of 8 query blocks (1000 rows in blocks of 128) and of 7 (blocks of 150).
        for (grid, heads, block_m) in [
            (1, 1, 128),
            (4, 1, 150),
            (4, 3, 128),
            (7, 5, 150),
            (132, 128, 128),
            (132, 17, 150),
            (114, 64, 128),
            (16, 2, 150),
        ] {
            let p = Problem::contiguous(1, (1000, 1000), (heads, 1), 64).with_mask(Mask::Causal);
            let units = Units::new(&p, block_m).folded(true, grid);
            let count = units.count();
            let n = 1000u32.div_ceil(block_m);
            let mut seen = BTreeSet::new();
            for cta in 0..grid {
                let mine: Vec<Unit> = Assignment::new(cta, grid, count, true)
                    .map(|u| units.get(u))
                    .collect();
                // The whole two rounds: a head's blocks m and n - 1 - m, or two middle blocks.
                let whole = (count / (2 * grid)) as usize;
                for pair in mine[..2 * whole].chunks(2) {
                    let (a, b) = (pair[0], pair[1]);
                    assert!(
                        (a.head == b.head
                            && a.m_block + b.m_block == n - 1
                            && a.m_block > b.m_block)
                            || (a.m_block, b.m_block) == (n / 2, n / 2),
                        "grid {grid}, cta {cta}: {pair:?}"
                    );
                }
                for u in mine {
                    assert!(seen.insert((u.sequence, u.head, u.m_block)), "{u:?} twice");
                }
            }
            assert_eq!(seen.len() as u64, count, "grid {grid}: every unit once");
        }
    }

    #[test]
    fn folded_rounds_balance_the_ctas_and_fold_where_heads_spread() {
        for (seq, d, n) in [
            (1024, 128, 128),
            (2048, 128, 128),
            (4096, 128, 192),
            (2048, 256, 64),
        ] {
            let r = imbalance_of(seq, (d, n), 132, true, Order::Folded);
            assert!(
                r < 1.05,
                "seq {seq}, D {d}: the busiest CTA has {r:.3} of the mean"
            );
        }
        // The rule: folded where a longest-first round holds fewer than 8 units of a head and
        // the units fill at least four rounds.
        let units = |seq: u32, d: u32| {
            let p = Problem::contiguous(16384 / seq, (seq, seq), (2048 / d, 2048 / d), d)
                .with_mask(Mask::Causal);
            Units::new(&p, 128)
        };
        assert!(units(2048, 128).folds(132));
        assert!(units(4096, 128).folds(132));
        assert!(units(8192, 128).folds(132));
        assert!(!units(16384, 128).folds(132));
        assert!(units(16384, 128).folds(114));
        // Too few units for whole pairs: 4 heads of 4 query blocks.
        let small = Problem::contiguous(1, (512, 512), (4, 4), 128).with_mask(Mask::Causal);
        assert!(!Units::new(&small, 128).folds(16));
        assert!(Units::new(&small, 128).folds(4));
        assert!(!units(2048, 128).folded(false, 132).is_folded());
        // attention-test's folded cases fold on GPUs of 114 and 132 SMs.
        for (batch, (sq, sk), heads, d) in [
            (1, (300, 300), (177, 3), 64),
            (1, (300, 200), (177, 3), 64),
            (4, (100, 100), (132, 4), 256),
        ] {
            let p = Problem::contiguous(batch, (sq, sk), heads, d).with_mask(Mask::Causal);
            for grid in [114, 132] {
                assert!(
                    Units::new(&p, 128).folds(grid),
                    "{batch} x {sq} x {heads:?}"
                );
            }
        }
        // Not the 192-row units (three consumer warpgroups at head dim 64).
        let p = Problem::contiguous(2, (8192, 8192), (32, 32), 64).with_mask(Mask::Causal);
        assert!(Units::new(&p, 128).folds(132));
        assert!(!Units::new(&p, 192).folds(132));
        let p = Problem::contiguous(8, (2048, 2048), (16, 16), 128);
        assert!(!Units::new(&p, 128).folds(132));
    }

    #[test]
    fn the_sorted_tail_is_the_rest_of_the_folded_list_longest_first() {
        for per in 1..=11u64 {
            for n in 1..=13u64 {
                for grid in 1..=17u64 {
                    let count = per * n;
                    let list: Vec<(u64, u64)> = (0..count).map(|f| list_unit(f, n)).collect();
                    let whole = count / (2 * grid);
                    let cut = if whole == 0 {
                        0
                    } else {
                        (whole - 1) * 2 * grid
                    };
                    let mut want: Vec<(u64, u64)> = (0..cut)
                        .map(|x| list[folded_place(x, cut, grid) as usize])
                        .collect();
                    let mut tail = list[cut as usize..].to_vec();
                    tail.sort_by_key(|&(m, bh)| (std::cmp::Reverse(m), bh));
                    want.extend(tail);
                    // One sequence of `per` heads of `n` query blocks of 128 rows.
                    let p = Problem::contiguous(
                        1,
                        (128 * n as u32, 128 * n as u32),
                        (per as u32, 1),
                        64,
                    )
                    .with_mask(Mask::Causal);
                    let units = Units::new(&p, 128).folded(true, grid);
                    let unit = |u: Unit| (u64::from(u.m_block), u64::from(u.head));
                    let got: Vec<(u64, u64)> =
                        (0..count).map(|x| unit(units.get_sorted_tail(x))).collect();
                    assert_eq!(got, want, "{per} heads of {n} blocks, grid {grid}");
                    // Without the sorted tail: the folded list by `folded_place`.
                    for x in 0..count {
                        let f = folded_place(x, count, grid);
                        assert_eq!(unit(units.get(x)), list[f as usize]);
                    }
                }
            }
        }
    }

    #[test]
    fn the_sorted_tail_balances_the_ctas() {
        for (seq, d, n) in [
            (2048, 128, 128),
            (4096, 128, 192),
            (8192, 128, 192),
            (2048, 256, 64),
        ] {
            let folded = imbalance_of(seq, (d, n), 132, true, Order::Folded);
            let sorted = imbalance_of(seq, (d, n), 132, true, Order::SortedTail);
            assert!(
                sorted <= folded + 1e-9,
                "seq {seq}, D {d}: {sorted:.3} against {folded:.3}"
            );
            assert!(sorted < 1.03, "seq {seq}, D {d}: {sorted:.3}");
        }
    }
}
