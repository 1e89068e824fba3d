//! Arithmetic for kernels: `2^x` on the FMA pipe.
//!
//! On sm_90 `ex2.approx` runs on the multi-function unit, 16 results per clock per SM (CUDA C++
//! Programming Guide, "Arithmetic Instructions": throughput of `exp2` for compute capability
//! 9.0), against 128 fused multiply-adds. An attention kernel at head dimension 64 needs one
//! exponential per score for every 256 flops of its two products, which is about what the
//! tensor cores and the MUFU each take per clock: the exponentials bound it. [`exp2_fma`]
//! computes `2^x` with adds, fused multiply-adds and one integer shift and add instead, so a
//! kernel can move a share of its exponentials off the MUFU (FlashAttention-4 does this on
//! Blackwell).

/// `2^x` for `x <= 0` (minus infinity included) from fused multiply-adds: `fma(a, b, c)` must be
/// `a * b + c` rounded once to nearest (on the GPU `arch::nvptx::fma_rn_f32`; `f32::mul_add` on
/// the host).
///
/// `x` is clamped to `-127`, split as `n + f` with `n` the nearest integer (`x + 1.5 · 2^23`
/// rounds it into the low bits of the sum) and `f` in `[-1/2, 1/2]`; `2^f` is the cubic
/// `1 + c1 f + c2 f² + c3 f³` (coefficients fitted here for the least maximum relative error with
/// the constant term 1: `1.02e-4` on `[-1/2, 1/2]`, against bf16's `2^-9` = `1.95e-3`), and
/// `2^n` is added to its exponent field. The result's relative error is below `1.1e-4` for
/// `x >= -126`. Between -127 and -126 the sum lands in the subnormal range with the wrong scale
/// (at -126.5: 4.9e-39 against 8.3e-39): not `2^x`, but below `2^-126`, which a softmax's weights
/// (next to the row maximum's 1) never feel, and which `ftz` arithmetic flushes to zero. `x <=
/// -127` (minus infinity too) gives exactly `+0.0`, as `ex2.approx.ftz` does, because the cubic is
/// exactly 1 at `f = 0`. `x = 0` gives exactly 1. NaN gives `+0.0` (the clamp's `max` takes the
/// number), where `ex2` gives NaN: a caller that must see NaN scores does not use it. Positive
/// `x` is outside the contract (the exponent field would overflow for `x >= 128`).
///
/// Eight instructions (a max, three adds, three fused multiply-adds, a shift and an integer
/// add, which ptxas may fuse) in place of one `ex2`.
#[inline(always)]
#[must_use]
pub fn exp2_fma(x: f32, fma: impl Fn(f32, f32, f32) -> f32) -> f32 {
    /// `1.5 · 2^23`: `x + ROUND` for `|x| < 2^22` is `ROUND + round(x)`, exactly, with
    /// `round(x)` in the low bits of its significand (two's complement).
    const ROUND: f32 = 12_582_912.0;
    const C1: f32 = 0.693_280_34;
    const C2: f32 = 0.242_220_3;
    const C3: f32 = 0.055_042_543;
    let x = x.max(-127.0);
    let t = x + ROUND;
    let f = x - (t - ROUND);
    let p = fma(fma(fma(C3, f, C2), f, C1), f, 1.0);
    // The low 9 bits of `t`'s pattern are `n` (two's complement): shifted into the exponent
    // field, they add `n` to `p`'s exponent (127 + n >= 0, so no borrow past the field).
    f32::from_bits(p.to_bits().wrapping_add(t.to_bits() << 23))
}

#[cfg(test)]
mod tests {
    use super::exp2_fma;

    fn exp2(x: f32) -> f32 {
        exp2_fma(x, f32::mul_add)
    }

    #[test]
    fn within_its_bound_of_the_true_power_on_a_dense_grid() {
        let mut worst = (0.0f64, 0.0f32);
        // Every 1/4096 from -126 to 0, and the floats just below each integer.
        let steps = 126 * 4096;
        let mut xs: std::vec::Vec<f32> = (0..=steps).map(|i| -(i as f32) / 4096.0).collect();
        xs.extend((0..126).map(|n| f32::from_bits((-(n as f32)).to_bits() + 1)));
        xs.extend((0..126).map(|n| -(n as f32) - 0.5));
        for x in xs {
            let want = (x as f64).exp2();
            let got = exp2(x) as f64;
            let rel = (got - want).abs() / want;
            if rel > worst.0 {
                worst = (rel, x);
            }
        }
        assert!(
            worst.0 < 1.1e-4,
            "relative error {:e} at x = {}",
            worst.0,
            worst.1
        );
    }

    #[test]
    fn exact_where_the_softmax_needs_it() {
        // The row's maximum gives 1, hidden keys (minus infinity) and anything at or below -127
        // give +0.0: a row that sees no key sums to 0.
        assert_eq!(exp2(0.0).to_bits(), 1.0f32.to_bits());
        assert_eq!(exp2(-0.0).to_bits(), 1.0f32.to_bits());
        for x in [f32::NEG_INFINITY, -1e30, -1000.0, -127.0] {
            assert_eq!(exp2(x).to_bits(), 0, "x = {x}");
        }
        // Integers are exact powers of two.
        for n in 0..=126 {
            assert_eq!(exp2(-(n as f32)), (-(n as f32)).exp2(), "n = {n}");
        }
    }

    #[test]
    fn what_the_docs_say_of_the_edges() {
        // Between -127 and -126: not 2^x, but a non-negative number below 2^-126.
        for i in 1..1000 {
            let x = -127.0 + i as f32 / 1000.0;
            let y = exp2(x);
            assert!((0.0..f32::MIN_POSITIVE).contains(&y), "x = {x}: {y:e}");
        }
        // NaN: +0, where `ex2` gives NaN.
        assert_eq!(exp2(f32::NAN).to_bits(), 0);
    }
}
