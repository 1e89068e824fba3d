//! The mask: which keys each query row sees, the key blocks a query block needs, and the FLOP
//! counts.
//!
//! Causal attention with `seq_q != seq_k` aligns the mask to the bottom right, as
//! FlashAttention 2 and later do: the last query sees every key, and query row `i` sees keys
//! `0 ..= i + seq_k - seq_q`. With more queries than keys the first `seq_q - seq_k` rows see
//! none: their rows of O are 0 and of `LSE` minus infinity (the log of an empty sum).

use crate::{Batches, Mask, Problem};

/// How many keys query row `row` (of `seq_q`) sees, of `seq_k`: it sees keys `0..` that count.
pub fn visible_keys(mask: Mask, seq_q: u32, seq_k: u32, row: u32) -> u32 {
    match mask {
        Mask::None => seq_k,
        Mask::Causal => {
            let n = i64::from(row) + 1 + i64::from(seq_k) - i64::from(seq_q);
            n.clamp(0, i64::from(seq_k)) as u32
        }
    }
}

/// The key blocks (of `block_n` keys) that query block `m_block` (rows `m_block * block_m ..`,
/// at most `seq_q`) reads, and of those the first that needs the mask applied inside it (a
/// block that some row of the query block does not see whole, or the partial last block of the
/// keys): `(blocks, first_masked)`, with `first_masked == blocks` when none does. `blocks` is 0
/// when no row of the block sees a key.
pub fn key_blocks(
    mask: Mask,
    (seq_q, seq_k): (u32, u32),
    m_block: u32,
    (block_m, block_n): (u32, u32),
) -> (u32, u32) {
    let first_row = m_block * block_m;
    let last_row = (first_row + block_m).min(seq_q) - 1;
    let most = visible_keys(mask, seq_q, seq_k, last_row);
    let least = visible_keys(mask, seq_q, seq_k, first_row);
    let blocks = most.div_ceil(block_n);
    // Keys below `least` are seen by every row of the block; a block wholly below it, and not
    // past the keys' end, needs no mask.
    let whole = least / block_n;
    let whole = if !seq_k.is_multiple_of(block_n) {
        whole.min(seq_k / block_n)
    } else {
        whole
    };
    (blocks, whole.min(blocks))
}

impl Problem<'_> {
    /// The (query, key) pairs the mask keeps, summed over sequences and query heads.
    pub fn visible_pairs(&self) -> u64 {
        let per_head: u64 = (0..self.batches.count())
            .map(|b| {
                let (_, seq_q) = self.batches.queries(b);
                let (_, seq_k) = self.batches.keys(b);
                pairs(self.mask, seq_q, seq_k)
            })
            .sum();
        per_head * u64::from(self.heads_q)
    }

    /// The FLOPs a benchmark reports: `4 · pairs · head_dim` (two GEMMs of 2 FLOPs per
    /// multiply-add), with the pairs counted as FlashAttention's paper does, `seq_q · seq_k` per
    /// sequence and head, halved for causal.
    pub fn nominal_flops(&self) -> f64 {
        let pairs: f64 = match self.batches {
            Batches::Fixed {
                batch,
                seq_q,
                seq_k,
            } => f64::from(batch) * f64::from(seq_q) * f64::from(seq_k),
            Batches::Varlen { .. } => (0..self.batches.count())
                .map(|b| f64::from(self.batches.queries(b).1) * f64::from(self.batches.keys(b).1))
                .sum(),
        };
        let causal = if self.mask == Mask::Causal { 0.5 } else { 1.0 };
        4.0 * pairs * f64::from(self.heads_q) * f64::from(self.head_dim) * causal
    }
}

/// The pairs the mask keeps in one sequence and head.
fn pairs(mask: Mask, seq_q: u32, seq_k: u32) -> u64 {
    match mask {
        Mask::None => u64::from(seq_q) * u64::from(seq_k),
        Mask::Causal => {
            // Rows see 0, .., 0, 1, 2, .., seq_k keys: the last min(seq_q, seq_k) rows see
            // seq_k - (seq_q - 1 - i) each, a run of consecutive counts ending at seq_k.
            let seen = u64::from(seq_q.min(seq_k));
            let top = u64::from(seq_k);
            seen * (2 * top - seen + 1) / 2
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn causal_is_aligned_to_the_bottom_right() {
        // Square: row i sees i + 1 keys.
        assert_eq!(visible_keys(Mask::Causal, 5, 5, 0), 1);
        assert_eq!(visible_keys(Mask::Causal, 5, 5, 4), 5);
        // More keys: the last row sees all, the first seq_k - seq_q + 1.
        assert_eq!(visible_keys(Mask::Causal, 2, 7, 0), 6);
        assert_eq!(visible_keys(Mask::Causal, 2, 7, 1), 7);
        // More queries: the first rows see none.
        assert_eq!(visible_keys(Mask::Causal, 7, 2, 0), 0);
        assert_eq!(visible_keys(Mask::Causal, 7, 2, 4), 0);
        assert_eq!(visible_keys(Mask::Causal, 7, 2, 5), 1);
        assert_eq!(visible_keys(Mask::Causal, 7, 2, 6), 2);
        assert_eq!(visible_keys(Mask::None, 7, 2, 0), 2);
    }

    #[test]
    fn pairs_match_the_rows_sum() {
        for (q, k) in [(1, 1), (5, 5), (2, 7), (7, 2), (129, 1000), (1000, 129)] {
            let by_rows: u64 = (0..q)
                .map(|i| u64::from(visible_keys(Mask::Causal, q, k, i)))
                .sum();
            assert_eq!(pairs(Mask::Causal, q, k), by_rows, "{q} x {k}");
        }
        let p = Problem::contiguous(2, (8, 8), (4, 2), 64).with_mask(Mask::Causal);
        assert_eq!(p.visible_pairs(), 2 * 4 * 36);
        assert_eq!(p.nominal_flops(), 4.0 * 2.0 * 64.0 * 4.0 * 64.0 * 0.5);
    }

    #[test]
    fn key_blocks_cover_exactly_the_visible_keys() {
        for mask in [Mask::None, Mask::Causal] {
            for (seq_q, seq_k) in [
                (1u32, 1u32),
                (7, 300),
                (300, 7),
                (1000, 1000),
                (129, 1000),
                (256, 256),
            ] {
                for (bm, bn) in [(128, 128), (128, 176), (64, 80), (192, 128), (192, 192)] {
                    for m in 0..seq_q.div_ceil(bm) {
                        let (blocks, first_masked) = key_blocks(mask, (seq_q, seq_k), m, (bm, bn));
                        let rows = m * bm..((m + 1) * bm).min(seq_q);
                        let most = rows
                            .clone()
                            .map(|r| visible_keys(mask, seq_q, seq_k, r))
                            .max()
                            .unwrap();
                        assert_eq!(blocks, most.div_ceil(bn));
                        assert!(first_masked <= blocks);
                        // Every block before `first_masked` is seen whole by every row and
                        // inside the keys.
                        for n in 0..first_masked {
                            let end = (n + 1) * bn;
                            assert!(end <= seq_k);
                            for r in rows.clone() {
                                assert!(visible_keys(mask, seq_q, seq_k, r) >= end);
                            }
                        }
                        // The block at `first_masked` (if read) is not: some row or the keys'
                        // end cuts it.
                        if first_masked < blocks {
                            let end = (first_masked + 1) * bn;
                            let cut = end > seq_k
                                || rows
                                    .clone()
                                    .any(|r| visible_keys(mask, seq_q, seq_k, r) < end);
                            assert!(cut, "{mask:?} {seq_q} x {seq_k}, block {m}");
                        }
                    }
                }
            }
        }
    }
}
