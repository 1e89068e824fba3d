//! The numbers (pure: no CUDA): bf16 conversion, test data, the error bound against cuBLAS, the
//! exact host reference on small-integer data, medians.
//!
//! Two checks, on every result:
//!
//! 1. **Random data** (uniform in [-1, 1)): each implementation's D against `cublasGemmEx`'s D,
//!    within [`bound`], a rigorous bound on the difference of two correct implementations that
//!    scales with K (derived there). It catches wrong data movement anywhere the error is above
//!    the bound; a small slip in a long K (one k-block missing) may stay under it, which is what
//!    check 2 is for.
//! 2. **Small integers** (in -4..=4): every product and every partial sum is an integer of
//!    magnitude at most `16 K`, exact in f32 below 2^24 whatever the order of summation, so every
//!    correct implementation's f32 result is the exact value, and its bf16 output is that value
//!    rounded to nearest even, bit for bit ([`integer_data_is_exact`] checks the condition for a
//!    shape). The small shapes are compared with a host reference ([`reference_exact`]), the
//!    benchmark shapes bit for bit with `cublasGemmEx`.

/// The bf16 bits of `x`, rounded to nearest even (what `cvt.rn.bf16.f32` and cuBLAS's epilogue
/// do); NaN stays a (quiet) NaN.
pub fn bf16_from_f32(x: f32) -> u16 {
    let bits = x.to_bits();
    if x.is_nan() {
        return ((bits >> 16) as u16) | 0x0040;
    }
    let round = 0x7fff + ((bits >> 16) & 1);
    (bits.wrapping_add(round) >> 16) as u16
}

/// The value of bf16 bits.
pub fn f32_from_bf16(bits: u16) -> f32 {
    f32::from_bits(u32::from(bits) << 16)
}

/// A bf16 NaN: what D is filled with before each run, so that an element an implementation did
/// not write fails every check; and what C holds when beta is 0 (it must not be read).
pub const POISON: u16 = 0xffff;

/// Whether two bf16 results agree exactly: the same bits, or both zero (+0 and -0: an exact sum
/// of zero products may carry either sign).
pub fn same_value(x: u16, y: u16) -> bool {
    x == y || (x & 0x7fff == 0 && y & 0x7fff == 0)
}

/// A small, fast generator (xorshift64*): the data need not be cryptographic, only different for
/// every matrix and every run of the benchmark (the seed comes from the clock).
pub struct Rng(u64);

impl Rng {
    /// A generator from `seed` (any value; 0 is moved off the fixed point).
    pub fn new(seed: u64) -> Self {
        Self((seed ^ 0x9e37_79b9_7f4a_7c15) | 1)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A value uniform in [0, 1): the next 53 random bits.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// bf16 values uniform in [-1, 1) (24 random bits, then rounded to bf16).
    pub fn uniform_bf16(&mut self, n: usize) -> Vec<u16> {
        (0..n)
            .map(|_| {
                let x = (self.next_u64() >> 40) as f32 / (1u32 << 23) as f32 - 1.0;
                bf16_from_f32(x)
            })
            .collect()
    }

    /// bf16 integers uniform in -4..=4 (exact in bf16).
    pub fn small_integers_bf16(&mut self, n: usize) -> Vec<u16> {
        (0..n)
            .map(|_| bf16_from_f32(((self.next_u64() >> 32) % 9) as f32 - 4.0))
            .collect()
    }
}

/// Largest magnitude of the integer data ([`Rng::small_integers_bf16`]).
pub const INTEGER_MAX: i64 = 4;

/// Whether, on integer data in -4..=4 with integer scalars `alpha` and `beta`, every correct
/// f32 computation of the K-term dot products and of `alpha * acc + beta * c` is exact: all
/// partial sums and the result are integers of magnitude below 2^24 (f32's 24-bit significand),
/// whatever the order of the additions or whether a fused multiply-add is used.
pub fn integer_data_is_exact(k: usize, alpha: f32, beta: f32) -> bool {
    let integral = |x: f32| x.fract() == 0.0 && x.abs() <= 1024.0;
    if !integral(alpha) || !integral(beta) {
        return false;
    }
    let dot = INTEGER_MAX * INTEGER_MAX * k as i64;
    let worst = (alpha.abs() as i64) * dot + (beta.abs() as i64) * INTEGER_MAX;
    dot < 1 << 24 && worst < 1 << 24
}

/// The exact result of the row-major problem on integer data (bf16 bits, rounded to nearest even
/// from the exact value): `alpha * A * B^T + beta * C` in i64. `c` is not read when `beta` is 0.
/// Needs [`integer_data_is_exact`] (then the f32 rounding of a correct device is none, and its
/// bf16 rounding is this one).
#[allow(clippy::too_many_arguments)]
pub fn reference_exact(
    m: usize,
    n: usize,
    k: usize,
    alpha: f32,
    a: &[u16],
    b: &[u16],
    beta: f32,
    c: &[u16],
) -> Vec<u16> {
    assert!(integer_data_is_exact(k, alpha, beta));
    let int = |bits: u16| f32_from_bf16(bits) as i64;
    let a: Vec<i64> = a.iter().map(|&x| int(x)).collect();
    let b: Vec<i64> = b.iter().map(|&x| int(x)).collect();
    let (alpha, beta) = (alpha as i64, beta as i64);
    let mut d = Vec::with_capacity(m * n);
    for i in 0..m {
        let row = &a[i * k..(i + 1) * k];
        for j in 0..n {
            let col = &b[j * k..(j + 1) * k];
            let dot: i64 = row.iter().zip(col).map(|(x, y)| x * y).sum();
            let mut value = alpha * dot;
            if beta != 0 {
                value += beta * int(c[i * n + j]);
            }
            // Exact in f32: |value| < 2^24 (integer_data_is_exact).
            d.push(bf16_from_f32(value as f32));
        }
    }
    d
}

/// f32's unit roundoff, 2^-24.
const U32: f64 = 1.0 / (1u64 << 24) as f64;
/// bf16's unit roundoff, 2^-8 (8 significant bits, round to nearest).
const U16: f64 = 1.0 / 256.0;

/// The largest difference allowed between two correct implementations' D at one element, on
/// random data. `row_a`, `row_b`: the Euclidean norms of row i of A and row j of B; `c`: the
/// element of C (ignored when `beta` is 0); `d1`, `d2`: the two bf16 results.
///
/// Derivation. Let `S = sum_l a_il b_jl` exactly and `X = alpha S + beta c`. An implementation
/// forms the products exactly (bf16 x bf16 has at most 16 significant bits), adds the K products
/// in f32 in some order, then computes `alpha * acc + beta * c` in f32:
///
/// - the K - 1 additions, each with a relative error of at most u = 2^-24 when it rounds to
///   nearest, or 2u when it truncates (tensor cores may align and truncate inside a block;
///   allowed for): `|acc - S| <= 2 K u sum_l |a_il b_jl|` (first order; the second-order term is
///   negligible for K u << 1);
/// - the epilogue's multiplications and addition, 3 more roundings of at most u each, relative to
///   `|alpha| sum |a b| + |beta c|`;
/// - so `|x - X| <= (2 K + 3) u (|alpha| sum_l |a_il b_jl| + |beta c|) = e` for each
///   implementation's f32 value x, and `|x1 - x2| <= 2 e`;
/// - `sum_l |a_il b_jl| <= |a_i| |b_j|` (Cauchy-Schwarz: row norms, computed in O((M + N) K)
///   rather than the O(M N K) of the sum itself);
/// - rounding to bf16 moves each value by at most `2^-8 |x|` (round to nearest with 8 significant
///   bits), and `|x| <= |D| / (1 - 2^-8)`: `|D1 - D2| <= |x1 - x2| + 2^-8 (|D1| + |D2|) (1 + 2^-7)`.
///
/// The bound is a worst case: for random data the typical f32 error grows like sqrt(K), not K,
/// and the report prints how much of the bound the largest difference used. Split-K schemes that
/// add partial sums in bf16 (cuBLASLt's `INPLACE` and `OUTPUT_TYPE` reductions) break the
/// problem's contract of f32 accumulation and are excluded from the baselines, not allowed for
/// here.
#[allow(clippy::too_many_arguments)]
pub fn bound(
    k: usize,
    alpha: f32,
    beta: f32,
    row_a: f64,
    row_b: f64,
    c: f32,
    d1: f32,
    d2: f32,
) -> f64 {
    let beta_c = if beta == 0.0 {
        0.0
    } else {
        (f64::from(beta) * f64::from(c)).abs()
    };
    let scale = f64::from(alpha).abs() * row_a * row_b + beta_c;
    let accumulate = 2.0 * (2.0 * k as f64 + 3.0) * U32 * scale;
    let round = U16 * (f64::from(d1).abs() + f64::from(d2).abs()) * (1.0 + 2.0 * U16);
    // The smallest normal f32, so that an exact zero against a tiny result is not a failure of a
    // bound of zero (bf16 has f32's exponent range).
    accumulate + round + f64::from(f32::MIN_POSITIVE)
}

/// The Euclidean norm of each row (`cols` elements) of a row-major bf16 matrix.
pub fn row_norms(x: &[u16], cols: usize) -> Vec<f64> {
    x.chunks_exact(cols)
        .map(|row| {
            row.iter()
                .map(|&v| f64::from(f32_from_bf16(v)).powi(2))
                .sum::<f64>()
                .sqrt()
        })
        .collect()
}

/// What comparing one result with another found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Comparison {
    /// Elements compared.
    pub elements: usize,
    /// Elements not within the bound (or not equal, for exact comparisons), NaN included.
    pub failed: usize,
    /// The first such element: (row, column, expected, got).
    pub first: Option<(usize, usize, f32, f32)>,
    /// Elements whose bits differ at all (values of +0 and -0 count as equal).
    pub differing: usize,
    /// The largest |difference| over the elements (NaN-free pairs only).
    pub max_diff: f64,
    /// The largest |difference| / bound (bounded comparisons only).
    pub max_used: f64,
}

impl Comparison {
    /// Whether every element passed.
    pub fn passed(&self) -> bool {
        self.failed == 0
    }

    fn record(&mut self, at: usize, cols: usize, want: u16, got: u16, ok: bool) {
        self.elements += 1;
        let (w, g) = (f32_from_bf16(want), f32_from_bf16(got));
        if !same_value(want, got) {
            self.differing += 1;
        }
        if !w.is_nan() && !g.is_nan() {
            self.max_diff = self.max_diff.max((f64::from(w) - f64::from(g)).abs());
        }
        if !ok {
            self.failed += 1;
            if self.first.is_none() {
                self.first = Some((at / cols, at % cols, w, g));
            }
        }
    }

    /// One line: `exact (N elements)` or what failed.
    pub fn summary(&self, exact: bool) -> String {
        let mut line = if exact {
            format!("{} of {} elements differ", self.failed, self.elements)
        } else {
            format!(
                "{} of {} elements outside the bound; max |diff| {:.3e} ({:.3} of the bound), {} differ at all",
                self.failed, self.elements, self.max_diff, self.max_used, self.differing
            )
        };
        if let Some((i, j, want, got)) = self.first {
            line += &format!("; first at D[{i}][{j}]: expected {want}, got {got}");
        }
        line
    }
}

/// As [`reference_exact`], rounded the way cuBLAS's bf16 epilogue rounds when beta is not 0:
/// `alpha * A B^T` to bf16 first, then `+ beta * C` rounded again (seen on the H200:
/// `cublasGemmEx` gave 284 where the exact 282 is a bf16 value, from 283 - 1 with 283 rounded to
/// 284 first). With beta 0 it is [`reference_exact`].
#[allow(clippy::too_many_arguments)]
pub fn reference_rounded_twice(
    m: usize,
    n: usize,
    k: usize,
    alpha: f32,
    a: &[u16],
    b: &[u16],
    beta: f32,
    c: &[u16],
) -> Vec<u16> {
    let product = reference_exact(m, n, k, alpha, a, b, 0.0, c);
    if beta == 0.0 {
        return product;
    }
    product
        .iter()
        .zip(c)
        .map(|(&p, &c)| bf16_from_f32(f32_from_bf16(p) + beta * f32_from_bf16(c)))
        .collect()
}

/// The exact dot products `sum_l a_il b_jl` of integer data (A: M x K, B: N x K, bf16 integers
/// in -4..=4, as [`Rng::small_integers_bf16`] makes them), row-major M x N, computed on every core:
/// the correctness pass's shapes reach 4 * 10^9 multiply-adds, which one core would take
/// seconds for. Finish them with [`exact_from_dots`]. Needs `16 K < 2^31` (i32 sums).
pub fn integer_dots(m: usize, n: usize, k: usize, a: &[u16], b: &[u16]) -> Vec<i32> {
    assert_eq!((a.len(), b.len()), (m * k, n * k));
    assert!(INTEGER_MAX * INTEGER_MAX * (k as i64) < i64::from(i32::MAX));
    // i16 products summed in i32: a reduction LLVM vectorises.
    let narrow = |x: &[u16]| -> Vec<i16> { x.iter().map(|&v| f32_from_bf16(v) as i16).collect() };
    let (a, b) = (narrow(a), narrow(b));
    let mut dots = vec![0i32; m * n];
    if dots.is_empty() {
        return dots;
    }
    let threads = std::thread::available_parallelism().map_or(1, |t| t.get());
    let rows_per_thread = m.div_ceil(threads).max(1);
    std::thread::scope(|scope| {
        for (chunk, out) in dots.chunks_mut(rows_per_thread * n).enumerate() {
            let (a, b) = (&a, &b);
            scope.spawn(move || {
                for (r, out_row) in out.chunks_exact_mut(n).enumerate() {
                    let i = chunk * rows_per_thread + r;
                    let row = &a[i * k..][..k];
                    for (j, d) in out_row.iter_mut().enumerate() {
                        let col = &b[j * k..][..k];
                        *d = row
                            .iter()
                            .zip(col)
                            .map(|(&x, &y)| i32::from(x) * i32::from(y))
                            .sum();
                    }
                }
            });
        }
    });
    dots
}

/// From [`integer_dots`], the exact result `alpha * dots + beta * C` rounded once to bf16
/// ([`reference_exact`]) and the result rounded twice, the product first
/// ([`reference_rounded_twice`], what cuBLAS gives when beta is not 0): the two results a
/// correct implementation may give. `c` is not read when `beta` is 0. Needs
/// [`integer_data_is_exact`]`(k, alpha, beta)`.
pub fn exact_from_dots(
    k: usize,
    dots: &[i32],
    alpha: f32,
    beta: f32,
    c: &[u16],
) -> (Vec<u16>, Vec<u16>) {
    assert!(integer_data_is_exact(k, alpha, beta));
    let (alpha_i, beta_i) = (alpha as i64, beta as i64);
    let int = |bits: u16| f32_from_bf16(bits) as i64;
    let mut once = Vec::with_capacity(dots.len());
    let mut twice = Vec::with_capacity(dots.len());
    for (at, &dot) in dots.iter().enumerate() {
        let product = alpha_i * i64::from(dot);
        if beta == 0.0 {
            // Exact in f32: below 2^24 (integer_data_is_exact).
            let d = bf16_from_f32(product as f32);
            once.push(d);
            twice.push(d);
        } else {
            once.push(bf16_from_f32((product + beta_i * int(c[at])) as f32));
            let p = f32_from_bf16(bf16_from_f32(product as f32));
            twice.push(bf16_from_f32(p + beta * f32_from_bf16(c[at])));
        }
    }
    (once, twice)
}

/// `got` against the single-rounded exact result, accepting where it differs the value of the
/// twice-rounded one (`either`): both are the IEEE results of a correct computation.
pub fn compare_exact_either(want: &[u16], either: &[u16], got: &[u16], cols: usize) -> Comparison {
    let mut result = Comparison::default();
    for (at, ((&w, &e), &g)) in want.iter().zip(either).zip(got).enumerate() {
        let ok = !f32_from_bf16(w).is_nan() && (same_value(w, g) || same_value(e, g));
        result.record(at, cols, w, g, ok);
    }
    result
}

/// `got` against `want` exactly (bf16 values; NaN never equal). `cols`: N, for positions.
pub fn compare_exact(want: &[u16], got: &[u16], cols: usize) -> Comparison {
    let mut result = Comparison::default();
    for (at, (&w, &g)) in want.iter().zip(got).enumerate() {
        let ok = !f32_from_bf16(w).is_nan() && same_value(w, g);
        result.record(at, cols, w, g, ok);
    }
    result
}

/// `got` against `want` (both from implementations of the random-data problem) within [`bound`].
/// `norms_a`, `norms_b`: [`row_norms`] of A and B; `c`: C (unread when `beta` is 0).
#[allow(clippy::too_many_arguments)]
pub fn compare_bounded(
    k: usize,
    alpha: f32,
    beta: f32,
    norms_a: &[f64],
    norms_b: &[f64],
    c: &[u16],
    want: &[u16],
    got: &[u16],
) -> Comparison {
    let n = norms_b.len();
    let mut result = Comparison::default();
    for (at, (&w, &g)) in want.iter().zip(got).enumerate() {
        let (i, j) = (at / n, at % n);
        let (wf, gf) = (f32_from_bf16(w), f32_from_bf16(g));
        let cf = if beta == 0.0 {
            0.0
        } else {
            f32_from_bf16(c[at])
        };
        let limit = bound(k, alpha, beta, norms_a[i], norms_b[j], cf, wf, gf);
        let diff = (f64::from(wf) - f64::from(gf)).abs();
        // NaN on either side fails (a NaN difference is not <= anything).
        let ok = diff <= limit;
        if ok {
            result.max_used = result.max_used.max(diff / limit);
        }
        result.record(at, n, w, g, ok);
    }
    result
}

/// The median of `values` (the mean of the two middle ones for an even count); `None` if empty.
pub fn median(values: &[f64]) -> Option<f64> {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(sorted[n / 2]),
        _ => Some((sorted[n / 2 - 1] + sorted[n / 2]) / 2.0),
    }
}

/// The geometric mean of positive `values`; `None` if empty.
pub fn geomean(values: &[f64]) -> Option<f64> {
    (!values.is_empty())
        .then(|| (values.iter().map(|v| v.ln()).sum::<f64>() / values.len() as f64).exp())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bf16_rounds_to_nearest_even() {
        assert_eq!(bf16_from_f32(1.0), 0x3f80);
        assert_eq!(bf16_from_f32(-2.0), 0xc000);
        assert_eq!(bf16_from_f32(0.0), 0x0000);
        // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to the even (1.0).
        assert_eq!(bf16_from_f32(1.0 + 1.0 / 256.0), 0x3f80);
        // 1 + 3 * 2^-8 is halfway between 1 + 2^-7 (odd) and 1 + 2^-6: up to the even.
        assert_eq!(bf16_from_f32(1.0 + 3.0 / 256.0), 0x3f82);
        // Just above halfway rounds up.
        assert_eq!(bf16_from_f32(f32::from_bits(0x3f80_8001)), 0x3f81);
        // Integers up to 256 are exact; 257 ties to 256, 259 to 260.
        for i in -256..=256 {
            assert_eq!(f32_from_bf16(bf16_from_f32(i as f32)), i as f32);
        }
        assert_eq!(f32_from_bf16(bf16_from_f32(257.0)), 256.0);
        assert_eq!(f32_from_bf16(bf16_from_f32(259.0)), 260.0);
        assert!(f32_from_bf16(bf16_from_f32(f32::NAN)).is_nan());
        assert!(f32_from_bf16(POISON).is_nan());
        assert_eq!(f32_from_bf16(bf16_from_f32(f32::INFINITY)), f32::INFINITY);
    }

    #[test]
    fn random_data_is_in_range_and_varied() {
        let mut rng = Rng::new(7);
        let u = rng.uniform_bf16(10_000);
        assert!(
            u.iter()
                .map(|&x| f32_from_bf16(x))
                .all(|x| (-1.0..=1.0).contains(&x))
        );
        let distinct: std::collections::HashSet<_> = u.iter().collect();
        assert!(distinct.len() > 500, "{}", distinct.len());
        let ints = rng.small_integers_bf16(10_000);
        let values: std::collections::BTreeSet<i32> =
            ints.iter().map(|&x| f32_from_bf16(x) as i32).collect();
        assert_eq!(
            values.into_iter().collect::<Vec<_>>(),
            (-4..=4).collect::<Vec<_>>()
        );
        assert!(ints.iter().all(|&x| f32_from_bf16(x).fract() == 0.0));
    }

    #[test]
    fn integer_exactness_condition() {
        // 16 K < 2^24: K up to 2^20 - 1 with alpha 1 and beta 0 or 1.
        assert!(integer_data_is_exact(65536, 1.0, 0.0));
        assert!(integer_data_is_exact(16384, 2.0, -1.0));
        assert!(integer_data_is_exact((1 << 20) - 8, 1.0, 0.0));
        assert!(!integer_data_is_exact(1 << 20, 1.0, 0.0));
        assert!(!integer_data_is_exact(1 << 19, 2.0, 0.0));
        assert!(!integer_data_is_exact(64, 0.5, 0.0), "non-integral alpha");
        assert!(!integer_data_is_exact(64, 1.0, 0.25), "non-integral beta");
    }

    #[test]
    fn the_exact_reference_on_a_tiny_problem() {
        // A = [[1, 2], [3, 4]] (2 x 2), B = [[1, 0], [-1, 1], [2, 2]] (3 x 2): A B^T =
        // [[1, 1, 6], [3, 1, 14]].
        let bf = |v: &[f32]| v.iter().map(|&x| bf16_from_f32(x)).collect::<Vec<_>>();
        let a = bf(&[1.0, 2.0, 3.0, 4.0]);
        let b = bf(&[1.0, 0.0, -1.0, 1.0, 2.0, 2.0]);
        let c = bf(&[1.0, 1.0, 1.0, -1.0, -1.0, -1.0]);
        let d = reference_exact(2, 3, 2, 1.0, &a, &b, 0.0, &[POISON; 6]);
        assert_eq!(
            d,
            bf(&[1.0, 1.0, 6.0, 3.0, 1.0, 14.0]),
            "beta 0 never reads C"
        );
        let d = reference_exact(2, 3, 2, 2.0, &a, &b, -1.0, &c);
        assert_eq!(d, bf(&[1.0, 1.0, 11.0, 7.0, 3.0, 29.0]));
    }

    #[test]
    fn the_dots_finish_into_both_references() {
        let mut rng = Rng::new(11);
        for (m, n, k) in [
            (1, 1, 8),
            (7, 5, 64),
            (13, 3, 136),
            (3, 17, 1000),
            (0, 4, 8),
        ] {
            let a = rng.small_integers_bf16(m * k);
            let b = rng.small_integers_bf16(n * k);
            let c = rng.small_integers_bf16(m * n);
            let dots = integer_dots(m, n, k, &a, &b);
            assert_eq!(dots.len(), m * n);
            for (alpha, beta) in [(1.0, 0.0), (2.0, -1.0), (1.0, 1.0)] {
                let (once, twice) = exact_from_dots(k, &dots, alpha, beta, &c);
                assert_eq!(once, reference_exact(m, n, k, alpha, &a, &b, beta, &c));
                let want = reference_rounded_twice(m, n, k, alpha, &a, &b, beta, &c);
                assert_eq!(twice, want, "{m}x{n}x{k} alpha {alpha} beta {beta}");
            }
        }
        // cuBLAS's case (see reference_rounded_twice): 283 - 1 is 282 exactly, a bf16 value;
        // rounded first, 283 ties to 284, and 284 - 1 = 283 ties to 284 again.
        let (once, twice) = exact_from_dots(64, &[283], 1.0, -1.0, &[bf16_from_f32(1.0)]);
        assert_eq!(
            (f32_from_bf16(once[0]), f32_from_bf16(twice[0])),
            (282.0, 284.0)
        );
        let (once, twice) = exact_from_dots(64, &[283], 1.0, 0.0, &[]);
        assert_eq!(once, twice, "beta 0: one rounding, C not read");
    }

    #[test]
    fn the_exact_reference_rounds_large_integers_like_the_device() {
        // A row of 4s against a row of 4s, K = 16: 256; with beta = 1 and C = 1 the exact 257
        // ties between the bf16 neighbours 256 and 258 and goes to the even one (256); with
        // C = 3, 259 ties between 258 and 260 and goes to 260.
        let four = bf16_from_f32(4.0);
        for (c, want) in [(1.0, 256.0), (3.0, 260.0)] {
            let d = reference_exact(
                1,
                1,
                16,
                1.0,
                &[four; 16],
                &[four; 16],
                1.0,
                &[bf16_from_f32(c)],
            );
            assert_eq!(f32_from_bf16(d[0]), want, "16 * 16 + {c}");
        }
    }

    #[test]
    fn the_bound_grows_with_k_and_covers_one_bf16_rounding() {
        let b1 = bound(1024, 1.0, 0.0, 10.0, 10.0, 0.0, 5.0, 5.0);
        let b2 = bound(16384, 1.0, 0.0, 10.0, 10.0, 0.0, 5.0, 5.0);
        assert!(b2 > b1);
        // The accumulation part is linear in K: (2K + 3) * 2 * 2^-24 * 100.
        let acc = |k: f64| 2.0 * (2.0 * k + 3.0) * U32 * 100.0;
        assert!((b2 - b1 - (acc(16384.0) - acc(1024.0))).abs() < 1e-12);
        // Two f32 values that differ by far less than the bound but round to neighbouring bf16
        // values (one ulp apart) pass: an ulp of bf16 at 5.0 is 2^-5.
        let (lo, hi) = (5.0f32, 5.0 + 1.0 / 32.0);
        assert!(f64::from(hi - lo) <= bound(8, 1.0, 0.0, 0.0, 0.0, 0.0, lo, hi));
        // ... but two ulps apart with no accumulation error allowed do not.
        let hi2 = 5.0 + 2.0 / 32.0;
        assert!(f64::from(hi2 - lo) > bound(8, 1.0, 0.0, 0.0, 0.0, 0.0, lo, hi2));
        // beta's term counts only when beta is not 0 (C may be NaN then).
        assert_eq!(
            bound(8, 1.0, 0.0, 1.0, 1.0, f32::NAN, 1.0, 1.0),
            bound(8, 1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0)
        );
        assert!(
            bound(8, 1.0, 2.0, 1.0, 1.0, 100.0, 1.0, 1.0)
                > bound(8, 1.0, 0.0, 1.0, 1.0, 100.0, 1.0, 1.0)
        );
    }

    #[test]
    fn the_bound_holds_for_f32_sums_in_different_orders() {
        // Two correct implementations: a sequential f32 sum and a blocked (k16, then across
        // blocks) f32 sum, both rounded to bf16; the difference must sit inside the bound, and
        // so must each against the exact (f64) value.
        let (m, n, k) = (8, 8, 4096);
        let mut rng = Rng::new(42);
        let a = rng.uniform_bf16(m * k);
        let b = rng.uniform_bf16(n * k);
        let (na, nb) = (row_norms(&a, k), row_norms(&b, k));
        let f = |x: u16| f32_from_bf16(x);
        let mut seq = Vec::new();
        let mut blocked = Vec::new();
        for i in 0..m {
            for j in 0..n {
                let prods: Vec<f32> = (0..k).map(|l| f(a[i * k + l]) * f(b[j * k + l])).collect();
                seq.push(bf16_from_f32(prods.iter().sum::<f32>()));
                let blocks: Vec<f32> = prods.chunks(16).map(|c| c.iter().sum()).collect();
                blocked.push(bf16_from_f32(blocks.iter().rev().sum::<f32>()));
            }
        }
        let cmp = compare_bounded(k, 1.0, 0.0, &na, &nb, &[], &seq, &blocked);
        assert!(cmp.passed(), "{}", cmp.summary(false));
        assert!(cmp.max_used < 1.0);
        // A result that misses one k64 block of the sum (about 2.7 in size, one standard
        // deviation) is caught in some elements only: the worst-case bound at K = 4096 is about
        // 1.6 here. This is the weakness the integer check covers.
        let mut missing = Vec::new();
        for i in 0..m {
            for j in 0..n {
                let s: f32 = (64..k).map(|l| f(a[i * k + l]) * f(b[j * k + l])).sum();
                missing.push(bf16_from_f32(s));
            }
        }
        let cmp = compare_bounded(k, 1.0, 0.0, &na, &nb, &[], &seq, &missing);
        assert!(!cmp.passed(), "{}", cmp.summary(false));
    }

    #[test]
    fn comparisons_fail_on_nan_and_name_the_first_element() {
        let one = bf16_from_f32(1.0);
        let two = bf16_from_f32(2.0);
        let cmp = compare_exact(&[one, one, one, one], &[one, one, two, POISON], 2);
        assert!(!cmp.passed());
        assert_eq!(cmp.failed, 2);
        assert_eq!(cmp.first, Some((1, 0, 1.0, 2.0)));
        let s = cmp.summary(true);
        assert!(
            s.contains("2 of 4 elements differ") && s.contains("D[1][0]"),
            "{s}"
        );
        // +0 and -0 are the same value.
        assert!(compare_exact(&[0x0000], &[0x8000], 1).passed());
        // A NaN reference never passes.
        assert!(!compare_exact(&[POISON], &[POISON], 1).passed());
        let cmp = compare_bounded(8, 1.0, 0.0, &[1.0], &[1.0], &[], &[one], &[POISON]);
        assert!(!cmp.passed());
    }

    #[test]
    fn median_and_geomean() {
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[3.0]), Some(3.0));
        assert_eq!(median(&[5.0, 1.0, 3.0]), Some(3.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[2.0, f64::INFINITY, 1.0]), Some(2.0));
        assert_eq!(geomean(&[]), None);
        assert!((geomean(&[1.0, 4.0]).unwrap() - 2.0).abs() < 1e-12);
        assert!((geomean(&[0.9, 1.1, 1.0]).unwrap() - (0.99f64).cbrt()).abs() < 1e-12);
    }

    #[test]
    fn cublas_rounding_of_the_product_first_is_accepted_only_where_it_differs() {
        // A = [283] (1 x 1), B = [1], C = [-1]: exact 282 (a bf16 value); the product rounded
        // first is 284 (283 is halfway, to even), and 284 - 1 = 283 rounds to 284.
        let a = [bf16_from_f32(283.0)];
        assert_eq!(
            f32_from_bf16(a[0]),
            284.0,
            "283 is not a bf16 value: use a dot product"
        );
        let a = [bf16_from_f32(141.0), bf16_from_f32(1.0)];
        let b = [bf16_from_f32(2.0), bf16_from_f32(1.0)];
        let c = [bf16_from_f32(-1.0)];
        let want = reference_exact(1, 1, 2, 1.0, &a, &b, 1.0, &c);
        let twice = reference_rounded_twice(1, 1, 2, 1.0, &a, &b, 1.0, &c);
        assert_eq!(f32_from_bf16(want[0]), 282.0);
        assert_eq!(f32_from_bf16(twice[0]), 284.0);
        assert!(compare_exact_either(&want, &twice, &twice, 1).passed());
        assert!(compare_exact_either(&want, &twice, &want, 1).passed());
        assert!(!compare_exact_either(&want, &twice, &[bf16_from_f32(286.0)], 1).passed());
    }
}
