//! The host reference (feature `std`): O and `LSE` accumulated in f64, straight from the
//! definition, for the kernels' tests and the benchmark's checks.
//!
//! For each sequence `b`, query head `h` (reading K/V head `h / group`) and query row `i`:
//! `s_j = scale · q_i · k_j` over the keys `j` the mask keeps ([`visible_keys`]),
//! `LSE = m + ln Σ_j exp(s_j - m)` with `m = max_j s_j`, and
//! `o_i = Σ_j exp(s_j - LSE) v_j`. A row that sees no key has `o_i = 0` and `LSE = -∞`.
//!
//! [`tolerance`] is how far a kernel may be from it (derived in `bound.rs`'s docs), and
//! [`model`] the kernels' arithmetic on the host (f32 scores, weights rounded to 16 bits for
//! `P V`, O rounded at the end), on which the tolerance is tested.

mod bound;

use std::vec;
use std::vec::Vec;

pub use bound::{Tolerance, model, model_with, round, tolerance, tolerance_with};

use crate::mask::visible_keys;
use crate::{AttentionError, Problem, Tensor};

/// The inputs' values (decoded from bf16 or f16 by the caller), each at its tensor's strides.
#[derive(Clone, Copy, Debug)]
pub struct Inputs<'a> {
    pub q: &'a [f32],
    pub k: &'a [f32],
    pub v: &'a [f32],
}

/// The reference's output: O at O's strides ([`Problem::index`]; elements the problem does not
/// write are 0), and `LSE` in [`Extents::lse`](crate::Extents::lse)'s layout
/// ([`Problem::lse_index`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Output {
    pub o: Vec<f64>,
    pub lse: Vec<f64>,
}

/// The attention forward of `problem` on `inputs`, in f64. The problem is checked first, and
/// each input must hold the elements [`Problem::extents`] gives.
pub fn forward(problem: &Problem<'_>, inputs: &Inputs<'_>) -> Result<Output, AttentionError> {
    let Output { mut o, mut lse } = checked_output(problem, inputs)?;
    let d = problem.head_dim;
    let scale = f64::from(problem.scale());
    let at = |x: &[f32], i: u64| f64::from(x[i as usize]);
    let mut scores = Vec::new();
    for Row { b, h, kv, i, keys } in rows(problem) {
        scores.clear();
        scores.extend((0..keys).map(|j| {
            let dot: f64 = (0..d)
                .map(|e| {
                    at(inputs.q, problem.index(Tensor::Q, b, i, h, e))
                        * at(inputs.k, problem.index(Tensor::K, b, j, kv, e))
                })
                .sum();
            scale * dot
        }));
        let row_lse = log_sum_exp(&scores);
        lse[problem.lse_index(b, h, i) as usize] = row_lse;
        if keys == 0 {
            continue;
        }
        for e in 0..d {
            let value: f64 = scores
                .iter()
                .enumerate()
                .map(|(j, s)| {
                    (s - row_lse).exp() * at(inputs.v, problem.index(Tensor::V, b, j as u32, kv, e))
                })
                .sum();
            o[problem.index(Tensor::O, b, i, h, e) as usize] = value;
        }
    }
    Ok(Output { o, lse })
}

/// The checks of every host computation here (the problem's rules, then each input holding the
/// elements [`Problem::extents`] gives), and its zeroed output.
fn checked_output(problem: &Problem<'_>, inputs: &Inputs<'_>) -> Result<Output, AttentionError> {
    problem.check()?;
    let extents = problem.extents();
    for (tensor, given, needed) in [
        (Tensor::Q, inputs.q.len(), extents.q),
        (Tensor::K, inputs.k.len(), extents.k),
        (Tensor::V, inputs.v.len(), extents.v),
    ] {
        if (given as u64) < needed {
            return Err(AttentionError::Buffer {
                tensor,
                needed,
                given: given as u64,
            });
        }
    }
    Ok(Output {
        o: vec![0.0; extents.o as usize],
        lse: vec![0.0; extents.lse as usize],
    })
}

/// One query row of a problem: its sequence, query head, K/V head and row, and how many keys
/// it sees (keys `0..keys`).
struct Row {
    b: u32,
    h: u32,
    kv: u32,
    i: u32,
    keys: u32,
}

/// Every query row of `problem`, sequence by sequence, head by head.
fn rows<'p>(problem: &'p Problem<'_>) -> impl Iterator<Item = Row> + 'p {
    let group = problem.group();
    (0..problem.batches.count()).flat_map(move |b| {
        let (_, seq_q) = problem.batches.queries(b);
        let (_, seq_k) = problem.batches.keys(b);
        (0..problem.heads_q).flat_map(move |h| {
            (0..seq_q).map(move |i| Row {
                b,
                h,
                kv: h / group,
                i,
                keys: visible_keys(problem.mask, seq_q, seq_k, i),
            })
        })
    })
}

/// `ln Σ exp(s)`, from the largest term (no overflow); minus infinity for no terms.
fn log_sum_exp(scores: &[f64]) -> f64 {
    let m = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if m == f64::NEG_INFINITY {
        return m;
    }
    m + scores.iter().map(|s| (s - m).exp()).sum::<f64>().ln()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Mask, Strides};

    /// Deterministic values in [-1, 1).
    fn values(n: u64, seed: u64) -> Vec<f32> {
        let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                ((x >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
            })
            .collect()
    }

    fn run(p: &Problem<'_>, seed: u64) -> (Output, [Vec<f32>; 3]) {
        let e = p.extents();
        let (q, k, v) = (
            values(e.q, seed),
            values(e.k, seed + 1),
            values(e.v, seed + 2),
        );
        let out = forward(
            p,
            &Inputs {
                q: &q,
                k: &k,
                v: &v,
            },
        )
        .unwrap();
        (out, [q, k, v])
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * (1.0 + a.abs().max(b.abs()))
    }

    #[test]
    fn one_key_gives_its_value_and_its_score() {
        let p = Problem::contiguous(2, (3, 1), (2, 1), 64);
        let (out, [q, k, v]) = run(&p, 1);
        for b in 0..2 {
            for h in 0..2 {
                for i in 0..3 {
                    let s: f64 = (0..64)
                        .map(|e| {
                            f64::from(q[p.index(Tensor::Q, b, i, h, e) as usize])
                                * f64::from(k[p.index(Tensor::K, b, 0, 0, e) as usize])
                        })
                        .sum::<f64>()
                        * f64::from(p.scale());
                    assert!(close(out.lse[p.lse_index(b, h, i) as usize], s));
                    for e in 0..64 {
                        let o = out.o[p.index(Tensor::O, b, i, h, e) as usize];
                        assert!(close(
                            o,
                            f64::from(v[p.index(Tensor::V, b, 0, 0, e) as usize])
                        ));
                    }
                }
            }
        }
    }

    #[test]
    fn equal_scores_average_the_values() {
        // Zero queries: every score is 0, O is the mean of V, LSE = ln(seq_k).
        let p = Problem::contiguous(1, (2, 5), (1, 1), 64);
        let e = p.extents();
        let (q, k, v) = (vec![0.0; e.q as usize], values(e.k, 3), values(e.v, 4));
        let out = forward(
            &p,
            &Inputs {
                q: &q,
                k: &k,
                v: &v,
            },
        )
        .unwrap();
        for i in 0..2 {
            assert!(close(out.lse[i], 5f64.ln()));
            for d in 0..64 {
                let mean = (0..5)
                    .map(|j| f64::from(v[p.index(Tensor::V, 0, j, 0, d) as usize]))
                    .sum::<f64>()
                    / 5.0;
                assert!(close(
                    out.o[p.index(Tensor::O, 0, i as u32, 0, d) as usize],
                    mean
                ));
            }
        }
    }

    #[test]
    fn causal_rows_see_their_keys_and_empty_rows_are_zero() {
        // 7 queries, 2 keys: rows 0..4 see none, row 5 key 0 (its value), row 6 both.
        let p = Problem::contiguous(1, (7, 2), (1, 1), 64).with_mask(Mask::Causal);
        let (out, [_, _, v]) = run(&p, 5);
        for i in 0..5 {
            assert_eq!(out.lse[i], f64::NEG_INFINITY);
            assert!((0..64).all(|d| out.o[p.index(Tensor::O, 0, i as u32, 0, d) as usize] == 0.0));
        }
        for d in 0..64 {
            let o = out.o[p.index(Tensor::O, 0, 5, 0, d) as usize];
            assert!(close(
                o,
                f64::from(v[p.index(Tensor::V, 0, 0, 0, d) as usize])
            ));
        }
        // The last row sees everything: the same as without the mask.
        let (full, _) = run(&p.with_mask(Mask::None), 5);
        assert!(close(out.lse[6], full.lse[6]));
    }

    #[test]
    fn grouped_query_heads_read_their_shared_kv_head() {
        // 4 query heads over 1 K/V head = 4 query heads over 4 copies of it.
        let gqa = Problem::contiguous(1, (9, 11), (4, 1), 64);
        let (out, [q, k, v]) = run(&gqa, 7);
        let mha = Problem::contiguous(1, (9, 11), (4, 4), 64);
        let repeat = |x: &[f32]| -> Vec<f32> {
            (0..11)
                .flat_map(|j| (0..4).flat_map(move |_| (0..64).map(move |d| (j, d))))
                .map(|(j, d)| x[gqa.index(Tensor::K, 0, j, 0, d) as usize])
                .collect()
        };
        let (k4, v4) = (repeat(&k), repeat(&v));
        let out4 = forward(
            &mha,
            &Inputs {
                q: &q,
                k: &k4,
                v: &v4,
            },
        )
        .unwrap();
        assert!(out.o.iter().zip(&out4.o).all(|(a, b)| close(*a, *b)));
        assert!(out.lse.iter().zip(&out4.lse).all(|(a, b)| close(*a, *b)));
    }

    #[test]
    fn packed_sequences_are_separate_problems() {
        let offsets_q = [0, 3, 10];
        let offsets_k = [0, 5, 6];
        for mask in [Mask::None, Mask::Causal] {
            let p = Problem::varlen(&offsets_q, &offsets_k, (2, 1), 64).with_mask(mask);
            let (out, [q, k, v]) = run(&p, 11);
            for b in 0..2 {
                let (first_q, seq_q) = p.batches.queries(b);
                let (first_k, seq_k) = p.batches.keys(b);
                // The sequence alone, its tokens copied out.
                let alone = Problem::contiguous(1, (seq_q, seq_k), (2, 1), 64).with_mask(mask);
                let take = |x: &[f32], first: u64, rows: u32, heads: u64| -> Vec<f32> {
                    let from = (first * heads * 64) as usize;
                    x[from..from + (u64::from(rows) * heads * 64) as usize].to_vec()
                };
                let one = forward(
                    &alone,
                    &Inputs {
                        q: &take(&q, first_q, seq_q, 2),
                        k: &take(&k, first_k, seq_k, 1),
                        v: &take(&v, first_k, seq_k, 1),
                    },
                )
                .unwrap();
                for h in 0..2 {
                    for i in 0..seq_q {
                        assert_eq!(
                            out.lse[p.lse_index(b, h, i) as usize],
                            one.lse[alone.lse_index(0, h, i) as usize]
                        );
                        for d in 0..64 {
                            assert_eq!(
                                out.o[p.index(Tensor::O, b, i, h, d) as usize],
                                one.o[alone.index(Tensor::O, 0, i, h, d) as usize]
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn large_scores_do_not_overflow() {
        let mut p = Problem::contiguous(1, (1, 3), (1, 1), 64);
        p.scale = Some(1.0e4);
        let (out, _) = run(&p, 13);
        assert!(out.lse[0].is_finite());
        assert!(out.o.iter().all(|x| x.is_finite()));
    }

    #[test]
    fn strided_layouts_read_the_same_values() {
        // [batch, heads, seq, dim] strides for every tensor: the same numbers as contiguous
        // [batch, seq, heads, dim] once the values are placed accordingly.
        let bshd = Problem::contiguous(2, (5, 6), (2, 2), 64);
        let (out, [q, k, v]) = run(&bshd, 17);
        let bhsd = |seq: u32| Strides {
            batch: 2 * u64::from(seq) * 64,
            seq: 64,
            head: u64::from(seq) * 64,
        };
        let p = Problem {
            q: bhsd(5),
            k: bhsd(6),
            v: bhsd(6),
            o: bhsd(5),
            ..bshd
        };
        let place = |x: &[f32], tensor: Tensor, seq: u32| -> Vec<f32> {
            let mut out = vec![0.0; x.len()];
            for b in 0..2 {
                for s in 0..seq {
                    for h in 0..2 {
                        for d in 0..64 {
                            out[p.index(tensor, b, s, h, d) as usize] =
                                x[bshd.index(tensor, b, s, h, d) as usize];
                        }
                    }
                }
            }
            out
        };
        let strided = forward(
            &p,
            &Inputs {
                q: &place(&q, Tensor::Q, 5),
                k: &place(&k, Tensor::K, 6),
                v: &place(&v, Tensor::V, 6),
            },
        )
        .unwrap();
        for b in 0..2 {
            for s in 0..5 {
                for h in 0..2 {
                    for d in 0..64 {
                        assert_eq!(
                            strided.o[p.index(Tensor::O, b, s, h, d) as usize],
                            out.o[bshd.index(Tensor::O, b, s, h, d) as usize]
                        );
                    }
                }
            }
        }
        assert_eq!(strided.lse, out.lse);
    }

    #[test]
    fn short_buffers_are_an_error() {
        let p = Problem::contiguous(1, (2, 2), (1, 1), 64);
        let short = vec![0.0; 10];
        let full = vec![0.0; 128];
        let e = forward(
            &p,
            &Inputs {
                q: &full,
                k: &short,
                v: &full,
            },
        )
        .unwrap_err();
        assert_eq!(
            e,
            AttentionError::Buffer {
                tensor: Tensor::K,
                needed: 128,
                given: 10
            }
        );
    }
}
