//! The work units of a problem and their order.
//!
//! A unit is one query block (`block_m` rows) of one query head of one sequence: it reads its
//! rows of Q once and streams the key blocks it sees ([`key_blocks`](crate::mask::key_blocks)).
//! A persistent CTA takes units `first, first + grid, ...`, so the order is the schedule:
//!
//! - causal: the query blocks that see the most keys first (FlashAttention-3's longest-first
//!   order), so that the last wave holds the shortest units; within a query block index, the
//!   query heads of one sequence side by side;
//! - not causal: a head's query blocks one after another, then the next head: the units running
//!   at once share K and V in L2. Either way the query heads that share a K/V head (grouped-query
//!   attention) are adjacent.
//!
//! Variable-length batches take their sequences in order, each in the same order within.

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
}

impl<'a> Units<'a> {
    /// The units of `problem` (checked) in blocks of `block_m` query rows.
    pub fn new(problem: &Problem<'a>, block_m: u32) -> Self {
        Self {
            batches: problem.batches,
            heads: problem.heads_q,
            causal: problem.mask == Mask::Causal,
            block_m,
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
        }
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
                let (m, bh) = if self.causal {
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
        for p in problems {
            let units = Units::new(&p, 128);
            let seen: BTreeSet<(u32, u32, u32)> = all(&units)
                .into_iter()
                .map(|u| (u.sequence, u.head, u.m_block))
                .collect();
            let mut expected = BTreeSet::new();
            for b in 0..p.batches.count() {
                for h in 0..p.heads_q {
                    for m in 0..p.batches.queries(b).1.div_ceil(128) {
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
        let units = Units::new(&p, 128);
        let work: Vec<u32> = all(&units)
            .iter()
            .map(|u| key_blocks(p.mask, (1000, 1000), u.m_block, (128, 128)).0)
            .collect();
        assert!(work.windows(2).all(|w| w[0] >= w[1]), "{work:?}");
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
}
