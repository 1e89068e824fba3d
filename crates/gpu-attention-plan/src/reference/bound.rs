//! How far a kernel's output may be from the f64 reference, and why; and a model of the
//! kernels' arithmetic that the bound is tested on.
//!
//! A kernel computes each row in the FlashAttention way: scores `s_j` in f32 from the 16-bit Q
//! and K (the products are exact in f32, their sum of `head_dim` terms rounds); the weights
//! `p_j = exp(s_j - m)` in f32, summed in f32 for the denominator `l`, and rounded to the input
//! type for the `P V` product; `o = (Σ round(p_j) v_j) / l`, accumulated in f32 and rounded to the
//! output type. Against the exact result, with `u` the unit roundoff of the 16-bit type (2^-8
//! for bf16, 2^-11 for f16) and `V = max |v|`:
//!
//! - rounding each `p_j` moves `o` by at most `u Σ p_j |v_j| / l <= u V` (the weights sum to 1);
//! - rounding `o` itself adds `u |o| <= u V`;
//! - the scores' f32 sums are off by at most `head_dim · 2^-24 · Σ |q_e k_e| · scale`, which moves
//!   each weight by that much relatively (at most twice that, for the weight and the denominator),
//!   so `o` by that times `2 V`; the online softmax's rescaling and the f32 accumulation of
//!   `P V` add a few units of 2^-24 relatively.
//!
//! So `|o - exact| <= (2 u + 2 e + 2^-20) V`, with `e` the scores' bound; [`Tolerance::o`] is that.
//! `LSE` (f32, not rounded to 16 bits) is off by at most `e` plus a few units of 2^-24 of
//! `|LSE|`: [`Tolerance::lse`].
//!
//! The weights' exponential is the MUFU's `ex2.approx.ftz.f32`, whose relative error (a few units
//! of 2^-24 over the weights' range, `x <= 0`) the 2^-20 terms hold. A kernel that takes weights
//! through a less exact `2^x`, of relative error at most `δ` (gpu-hopper's `math::exp2_fma`: below
//! 1.1e-4), has `p'_j = p_j (1 + δ_j)` with `|δ_j| <= δ`, so
//! `o' - o = Σ p_j δ_j (v_j - o) / l'` and `|o' - o| <= 2 δ V l / l' <= 2 δ V / (1 - δ)`, and its
//! `LSE` moves by `|ln(l' / l)| <= δ / (1 - δ)`: [`tolerance_with`] adds those two terms.

use std::vec::Vec;

use super::{Inputs, Output, Row, checked_output, rows};
use crate::{AttentionError, Element, Problem, Tensor};

/// The largest differences a kernel's output may have from the reference's, for one problem and
/// its inputs (the module's docs derive them).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tolerance {
    /// Per element of O.
    pub o: f64,
    /// Per element of `LSE` (rows that see no key must be minus infinity exactly).
    pub lse: f64,
}

/// The unit roundoff of a 16-bit type: half its last place at 1.
fn unit_roundoff(element: Element) -> f64 {
    match element {
        Element::Bf16 => 1.0 / 256.0,
        Element::F16 => 1.0 / 2048.0,
    }
}

/// The tolerance of `problem` on `inputs` (checked as [`forward`] checks them), for a kernel
/// whose weights' exponential is the MUFU's (the production kernels).
pub fn tolerance(problem: &Problem<'_>, inputs: &Inputs<'_>) -> Result<Tolerance, AttentionError> {
    tolerance_with(problem, inputs, 0.0)
}

/// As [`tolerance`], for a kernel whose weights' `2^x` has a relative error of at most
/// `exp_error` (in `[0, 0.5)`) beyond the MUFU's: the module's docs derive the two added terms.
///
/// # Panics
///
/// If `exp_error` is not in `[0, 0.5)` (a bound that large says nothing).
pub fn tolerance_with(
    problem: &Problem<'_>,
    inputs: &Inputs<'_>,
    exp_error: f64,
) -> Result<Tolerance, AttentionError> {
    assert!(
        (0.0..0.5).contains(&exp_error),
        "the exponential's relative error {exp_error} is not in [0, 0.5)"
    );
    checked_output(problem, inputs)?;
    let extents = problem.extents();
    let max_abs = |x: &[f32], n: u64| {
        x[..n as usize]
            .iter()
            .map(|v| f64::from(v.abs()))
            .fold(0.0, f64::max)
    };
    let (q, k, v) = (
        max_abs(inputs.q, extents.q),
        max_abs(inputs.k, extents.k),
        max_abs(inputs.v, extents.v),
    );
    let d = f64::from(problem.head_dim);
    let scale = f64::from(problem.scale()).abs();
    // The scores' f32 sums: `head_dim` roundings, each at most 2^-24 of the running sum, whose
    // terms are at most |q| |k| each.
    let e = d * d * q * k * scale * f64::powi(2.0, -24);
    let u = unit_roundoff(problem.element);
    // The weights' own relative error, over `1 - δ` for the denominator's share.
    let w = exp_error / (1.0 - exp_error);
    Ok(Tolerance {
        o: (2.0 * u + 2.0 * e + 2.0 * w + f64::powi(2.0, -20)) * v,
        lse: e + w + f64::powi(2.0, -20) * (1.0 + d * q * k * scale),
    })
}

/// Rounds `x` to the nearest value of `element`, ties to even (as `cvt.rn` does).
pub fn round(element: Element, x: f32) -> f32 {
    match element {
        Element::Bf16 => {
            let bits = x.to_bits();
            if x.is_nan() {
                return x;
            }
            let lower = bits & 0xFFFF;
            let mut upper = bits & 0xFFFF_0000;
            if lower > 0x8000 || (lower == 0x8000 && (bits >> 16) & 1 == 1) {
                upper = upper.wrapping_add(0x1_0000);
            }
            f32::from_bits(upper)
        }
        Element::F16 => {
            // 11 significant bits, the exponent range aside (the model's values are in range).
            if x == 0.0 || !x.is_finite() {
                return x;
            }
            let e = x.abs().log2().floor() as i32;
            let step = f64::powi(2.0, e - 10);
            let scaled = f64::from(x) / step;
            let r = scaled.round();
            let r = if (scaled - scaled.trunc()).abs() == 0.5 && r % 2.0 != 0.0 {
                r - scaled.signum()
            } else {
                r
            };
            (r * step) as f32
        }
    }
}

/// The kernels' arithmetic on the host (the module's docs): f32 scores, f32 weights and sums,
/// weights rounded to the input type for `P V`, O rounded to it at the end. The inputs are taken
/// as they are (round them to the type first to model a 16-bit input).
pub fn model(problem: &Problem<'_>, inputs: &Inputs<'_>) -> Result<Output, AttentionError> {
    model_with(problem, inputs, |x, _| x.exp())
}

/// As [`model`], with the weights' exponential `exp(x, j)` (`x <= 0`, `j` the key's index in
/// its row): a model of a kernel whose exponential is less exact ([`tolerance_with`]).
pub fn model_with(
    problem: &Problem<'_>,
    inputs: &Inputs<'_>,
    exp: impl Fn(f32, usize) -> f32,
) -> Result<Output, AttentionError> {
    // The same checks and output layout as the reference's.
    let mut out = checked_output(problem, inputs)?;
    let (d, scale) = (problem.head_dim, problem.scale());
    let mut s = Vec::new();
    for Row { b, h, kv, i, keys } in rows(problem) {
        s.clear();
        s.extend((0..keys).map(|j| {
            let dot: f32 = (0..d)
                .map(|e| {
                    inputs.q[problem.index(Tensor::Q, b, i, h, e) as usize]
                        * inputs.k[problem.index(Tensor::K, b, j, kv, e) as usize]
                })
                .sum();
            dot * scale
        }));
        let lse_at = problem.lse_index(b, h, i) as usize;
        if keys == 0 {
            out.lse[lse_at] = f64::NEG_INFINITY;
            continue;
        }
        let m = s.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let p: Vec<f32> = s.iter().enumerate().map(|(j, x)| exp(x - m, j)).collect();
        let l: f32 = p.iter().sum();
        out.lse[lse_at] = f64::from(m + l.ln());
        for e in 0..d {
            let acc: f32 = p
                .iter()
                .enumerate()
                .map(|(j, pj)| {
                    round(problem.element, *pj)
                        * inputs.v[problem.index(Tensor::V, b, j as u32, kv, e) as usize]
                })
                .sum();
            out.o[problem.index(Tensor::O, b, i, h, e) as usize] =
                f64::from(round(problem.element, acc / l));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use std::vec;

    use super::super::forward;
    use super::*;
    use crate::{Batches, Mask};

    #[test]
    fn rounding_is_to_nearest_even() {
        assert_eq!(round(Element::Bf16, 1.0 + 1.0 / 256.0), 1.0);
        assert_eq!(round(Element::Bf16, 1.0 + 3.0 / 256.0), 1.0 + 4.0 / 256.0);
        assert_eq!(round(Element::Bf16, 1.0 + 1.0 / 200.0), 1.0 + 2.0 / 256.0);
        assert_eq!(round(Element::F16, 1.0 + 1.0 / 2048.0), 1.0);
        assert_eq!(round(Element::F16, 1.0 + 3.0 / 2048.0), 1.0 + 4.0 / 2048.0);
        assert_eq!(round(Element::F16, -3.0), -3.0);
    }

    /// Values in [-2, 2), rounded to `element`.
    fn values(n: u64, mut x: u64, element: Element) -> Vec<f32> {
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                round(
                    element,
                    ((x >> 40) as f32 / (1u64 << 24) as f32) * 4.0 - 2.0,
                )
            })
            .collect()
    }

    /// The model of the kernels' arithmetic stays within the tolerance of the reference.
    #[test]
    fn the_kernels_arithmetic_is_within_the_tolerance() {
        within_the_tolerance(0.0, |x, _| x.exp());
    }

    /// So does a model whose weights are off by the FMA pipe's `2^x` error bound (1.1e-4), up on
    /// some keys and down on others, against the tolerance with that bound.
    #[test]
    fn a_less_exact_exponential_is_within_its_tolerance() {
        const DELTA: f64 = 1.1e-4;
        within_the_tolerance(DELTA, |x, j| {
            let off = if j.wrapping_mul(0x9E37_79B9) >> 7 & 1 == 0 {
                1.0 + DELTA
            } else {
                1.0 - DELTA
            };
            (f64::from(x.exp()) * off) as f32
        });
    }

    /// The exponential's term is not free: it widens the f16 bound by more than a tenth.
    #[test]
    fn the_exponentials_term_counts_at_f16() {
        let mut p = Problem::contiguous(1, (4, 4), (1, 1), 64);
        p.element = Element::F16;
        let e = p.extents();
        let (q, k, v) = (
            values(e.q, 1, p.element),
            values(e.k, 2, p.element),
            values(e.v, 3, p.element),
        );
        let inputs = Inputs {
            q: &q,
            k: &k,
            v: &v,
        };
        let plain = tolerance(&p, &inputs).unwrap();
        let less_exact = tolerance_with(&p, &inputs, 1.1e-4).unwrap();
        assert!(
            less_exact.o > 1.1 * plain.o,
            "{less_exact:?} against {plain:?}"
        );
        assert!(less_exact.lse > plain.lse + 1.0e-4);
    }

    fn within_the_tolerance(exp_error: f64, exp: impl Fn(f32, usize) -> f32 + Copy) {
        let offsets_q = [0, 7, 136, 137];
        let offsets_k = [0, 129, 130, 400];
        let mut problems = vec![
            Problem::contiguous(2, (129, 300), (4, 1), 64),
            Problem::contiguous(1, (300, 129), (2, 2), 128).with_mask(Mask::Causal),
            Problem::contiguous(1, (64, 64), (1, 1), 256).with_mask(Mask::Causal),
            Problem::varlen(&offsets_q, &offsets_k, (8, 2), 64).with_mask(Mask::Causal),
        ];
        let mut f16 = Problem::contiguous(1, (33, 65), (2, 1), 128);
        f16.element = Element::F16;
        problems.push(f16);
        for (n, p) in problems.iter().enumerate() {
            let e = p.extents();
            let seed = 0x5EED + n as u64;
            let (q, k, v) = (
                values(e.q, seed, p.element),
                values(e.k, seed ^ 0xABCD, p.element),
                values(e.v, seed ^ 0x1234, p.element),
            );
            let inputs = Inputs {
                q: &q,
                k: &k,
                v: &v,
            };
            let exact = forward(p, &inputs).unwrap();
            let kernel = model_with(p, &inputs, exp).unwrap();
            let tol = tolerance_with(p, &inputs, exp_error).unwrap();
            let worst_o = exact
                .o
                .iter()
                .zip(&kernel.o)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f64::max);
            assert!(
                worst_o <= tol.o,
                "{n}: O off by {worst_o}, tolerance {}",
                tol.o
            );
            for (a, b) in exact.lse.iter().zip(&kernel.lse) {
                if a.is_infinite() {
                    assert_eq!(a, b);
                } else {
                    assert!((a - b).abs() <= tol.lse, "{n}: LSE {a} vs {b}, {}", tol.lse);
                }
            }
        }
    }

    /// The tolerance is not so loose that it passes a wrong kernel: one that drops each row's
    /// last key (8 keys a row) is far outside it.
    #[test]
    fn a_lost_key_is_outside_the_tolerance() {
        let p = Problem::contiguous(2, (16, 8), (2, 1), 64);
        let e = p.extents();
        let (q, k, v) = (
            values(e.q, 1, p.element),
            values(e.k, 2, p.element),
            values(e.v, 3, p.element),
        );
        let inputs = Inputs {
            q: &q,
            k: &k,
            v: &v,
        };
        let exact = forward(&p, &inputs).unwrap();
        let tol = tolerance(&p, &inputs).unwrap();
        // The same strides over 7 keys of each sequence: the last key left out.
        let short = Problem {
            batches: Batches::Fixed {
                batch: 2,
                seq_q: 16,
                seq_k: 7,
            },
            ..p
        };
        let lost = forward(&short, &inputs).unwrap();
        let worst = exact
            .o
            .iter()
            .zip(&lost.o)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        assert!(
            worst > 4.0 * tol.o,
            "a lost key moved O by {worst}, the tolerance is {}",
            tol.o
        );
    }

    /// Short buffers are the reference's error, not a panic.
    #[test]
    fn short_buffers_are_an_error_here_too() {
        let p = Problem::contiguous(1, (2, 2), (1, 1), 64);
        let (short, full) = (vec![0.0; 10], vec![0.0; 128]);
        let inputs = Inputs {
            q: &full,
            k: &full,
            v: &short,
        };
        let expected = AttentionError::Buffer {
            tensor: Tensor::V,
            needed: 128,
            given: 10,
        };
        assert_eq!(tolerance(&p, &inputs).unwrap_err(), expected);
        assert_eq!(model(&p, &inputs).unwrap_err(), expected);
    }
}
