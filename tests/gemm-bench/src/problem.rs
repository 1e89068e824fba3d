//! The problem and its shapes (pure: no CUDA).
//!
//! `D = alpha * A * B^T + beta * C`: A is M x K, B is N x K (the layout of a linear layer's
//! weight), C and D are M x N, all row-major bf16; accumulation and the scalars are f32.
//! [`column_major`] maps it onto cuBLAS's column-major interface.

use std::fmt;

/// The sizes of one GEMM.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    /// Rows of A, C and D.
    pub m: usize,
    /// Rows of B; columns of C and D.
    pub n: usize,
    /// Columns of A and B (the reduction).
    pub k: usize,
}

impl Shape {
    /// `M x N x K`.
    pub const fn new(m: usize, n: usize, k: usize) -> Self {
        Self { m, n, k }
    }

    /// The floating-point operations counted for TFLOP/s: `2 * M * N * K` (one multiply and one
    /// add per term of every dot product). The epilogue (`alpha * acc + beta * C`, 3 operations
    /// per element of D) is left out: it is `3 / (2 K)` of that, under 0.02% for every K of
    /// the benchmark (K >= 1024), and cuBLAS's own figures leave it out too.
    pub fn flops(&self) -> f64 {
        2.0 * self.m as f64 * self.n as f64 * self.k as f64
    }

    /// TFLOP/s of one GEMM that took `ms` milliseconds.
    pub fn tflops(&self, ms: f64) -> f64 {
        self.flops() / (ms * 1e-3) / 1e12
    }

    /// Elements of A, B and C (= D).
    pub fn elems(&self) -> (usize, usize, usize) {
        (self.m * self.k, self.n * self.k, self.m * self.n)
    }
}

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}x{}x{}", self.m, self.n, self.k)
    }
}

/// One GEMM to run: the shape and the scalars.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Problem {
    /// The sizes.
    pub shape: Shape,
    /// The scale of `A * B^T`.
    pub alpha: f32,
    /// The scale of C; when 0, C is not read (BLAS semantics: it may hold anything, even NaN).
    pub beta: f32,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} alpha {} beta {}", self.shape, self.alpha, self.beta)
    }
}

/// The square shapes: 1024^3 to 16384^3.
pub const SQUARE: [Shape; 5] = [
    Shape::new(1024, 1024, 1024),
    Shape::new(2048, 2048, 2048),
    Shape::new(4096, 4096, 4096),
    Shape::new(8192, 8192, 8192),
    Shape::new(16384, 16384, 16384),
];

/// A large language model's linear layers: M (tokens) in {128, 1024, 8192} against the (N, K)
/// of its projections (an 8B/70B-class model's attention, MLP up/gate and down, and 70B's MLP).
pub const LLM_M: [usize; 3] = [128, 1024, 8192];
/// The (N, K) pairs of [`llm`].
pub const LLM_NK: [(usize, usize); 4] = [(4096, 4096), (14336, 4096), (4096, 14336), (28672, 8192)];

/// The language-model shapes, M-major.
pub fn llm() -> Vec<Shape> {
    LLM_M
        .iter()
        .flat_map(|&m| LLM_NK.iter().map(move |&(n, k)| Shape::new(m, n, k)))
        .collect()
}

/// The shapes of `--quick`: one small and one large square, one skinny and one wide LLM shape.
pub fn quick() -> Vec<Shape> {
    vec![
        Shape::new(1024, 1024, 1024),
        Shape::new(4096, 4096, 4096),
        Shape::new(128, 4096, 4096),
        Shape::new(1024, 14336, 4096),
    ]
}

/// The shapes of the correctness pass (`gemm-bench --check`, run by `cargo xtask test-nvidia`),
/// each with beta 0 and beta not 0. They cover square shapes; odd M and N (1, 7, 1000, 4097), each
/// in the M and in the N position; skinny M (64, 128) with large N and K; a long K (65536); and K
/// a multiple of 8 but not of 64 (8, 72, 136, 1000), where the last k-block of every tile is
/// partial. Small enough that the host reference of the
/// integer check (about 2 * 10^10 multiply-adds in all) and the runs take seconds, not minutes.
pub const CHECK: [Shape; 23] = [
    // Square.
    Shape::new(256, 256, 256),
    Shape::new(1024, 1024, 1024),
    Shape::new(2048, 2048, 2048),
    // Odd M and N.
    Shape::new(1, 1, 8),
    Shape::new(1, 4097, 256),
    Shape::new(4097, 1, 256),
    Shape::new(7, 1000, 512),
    Shape::new(1000, 7, 512),
    Shape::new(1000, 1000, 1000),
    Shape::new(1000, 4097, 136),
    Shape::new(4097, 1000, 136),
    Shape::new(4097, 4097, 64),
    // Skinny M, large N and K.
    Shape::new(64, 8192, 4096),
    Shape::new(128, 4096, 8192),
    // Long K.
    Shape::new(128, 256, 65536),
    Shape::new(7, 1000, 65536),
    // K a multiple of 8, not of 64.
    Shape::new(256, 512, 8),
    Shape::new(520, 264, 72),
    // Decode (M <= 64, the transposing kernels' class): odd M, N and K not multiples of the
    // tile, split-K over a long K.
    Shape::new(1, 4096, 4096),
    Shape::new(3, 1000, 2056),
    Shape::new(17, 4097, 1000),
    Shape::new(63, 2050, 8200),
    Shape::new(33, 7, 3000),
];

/// The M of the sweep (issue 24): decode (1 to 64), mid (96 to 1024) and large.
pub const SWEEP_M: [usize; 18] = [
    1, 2, 4, 8, 16, 32, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 2048, 4096, 8192,
];

/// One open model family's linear layers as `(N, K)` of `D = A B^T` (A: tokens x K, B: the
/// weight, N x K), from the published configurations: the fused q/k/v projection
/// (`(heads + 2 kv_heads) head_dim` x hidden), the attention output (hidden x hidden), the fused
/// gate/up projection (`2 intermediate` x hidden) and the down projection (hidden x
/// intermediate).
#[derive(Clone, Copy, Debug)]
pub struct Family {
    /// The name used in `--shapes sweep-NAME`.
    pub name: &'static str,
    /// The model it is taken from.
    pub model: &'static str,
    /// qkv, o, gate_up, down.
    pub layers: [(usize, usize); 4],
}

/// The families of the sweep, of four sizes.
pub const FAMILIES: [Family; 4] = [
    // hidden 2048, 32 heads and 8 kv heads of 64, intermediate 8192.
    Family {
        name: "llama1b",
        model: "Llama-3.2-1B",
        layers: [(3072, 2048), (2048, 2048), (16384, 2048), (2048, 8192)],
    },
    // hidden 3584, 28 heads and 4 kv heads of 128, intermediate 18944.
    Family {
        name: "qwen7b",
        model: "Qwen2.5-7B",
        layers: [(4608, 3584), (3584, 3584), (37888, 3584), (3584, 18944)],
    },
    // hidden 4096, 32 heads and 8 kv heads of 128, intermediate 14336.
    Family {
        name: "llama8b",
        model: "Llama-3.1-8B",
        layers: [(6144, 4096), (4096, 4096), (28672, 4096), (4096, 14336)],
    },
    // hidden 8192, 64 heads and 8 kv heads of 128, intermediate 28672.
    Family {
        name: "llama70b",
        model: "Llama-3.1-70B",
        layers: [(10240, 8192), (8192, 8192), (57344, 8192), (8192, 28672)],
    },
];

/// The sweep of one family: every M of [`SWEEP_M`] with each of its layers.
pub fn sweep(family: &Family) -> Vec<Shape> {
    SWEEP_M
        .iter()
        .flat_map(|&m| family.layers.iter().map(move |&(n, k)| Shape::new(m, n, k)))
        .collect()
}

/// Parses `--shapes`: `square`, `llm`, `all`, `check` ([`CHECK`]), `sweep` (every family's
/// [`sweep`] and the squares), `sweep-NAME` (one family of [`FAMILIES`]), `decode`, `mid` (the
/// sweep's M <= 64, and 96 <= M <= 1024, of every family), `random-COUNT` or
/// `random-COUNT-SEED` ([`random`]), `layers-COUNT` or `layers-COUNT-SEED` ([`layers`]),
/// `prefill-COUNT` or `prefill-COUNT-SEED` ([`prefill`]), or a comma-separated list of `MxNxK` (each at least
/// 1, K a multiple of 8: the stride rule of the tensor copies the GEMM under test will use, kept
/// for every implementation so that all run the same shapes). Named sets and lists may be mixed
/// (`square,128x4096x4096`); duplicates are dropped, order kept.
pub fn parse_shapes(spec: &str) -> Result<Vec<Shape>, String> {
    let mut shapes = Vec::new();
    for item in spec.split(',').map(str::trim) {
        let more = match item {
            "square" => SQUARE.to_vec(),
            "llm" => llm(),
            "all" => SQUARE.iter().copied().chain(llm()).collect(),
            "check" => CHECK.to_vec(),
            "sweep" => FAMILIES.iter().flat_map(sweep).chain(SQUARE).collect(),
            "decode" => FAMILIES
                .iter()
                .flat_map(sweep)
                .filter(|s| s.m <= 64)
                .collect(),
            "mid" => FAMILIES
                .iter()
                .flat_map(sweep)
                .filter(|s| (96..=1024).contains(&s.m))
                .collect(),
            _ if item.starts_with("random-") => parse_drawn(item, "random", random)?,
            _ if item.starts_with("layers-") => parse_drawn(item, "layers", layers)?,
            _ if item.starts_with("prefill-") => parse_drawn(item, "prefill", prefill)?,
            _ => match item.strip_prefix("sweep-") {
                Some(name) => {
                    let family = FAMILIES.iter().find(|f| f.name == name).ok_or_else(|| {
                        let names: Vec<&str> = FAMILIES.iter().map(|f| f.name).collect();
                        format!(
                            "unknown family `{name}` in `{item}`: the families are {}",
                            names.join(", ")
                        )
                    })?;
                    sweep(family)
                }
                None => vec![parse_one(item)?],
            },
        };
        for shape in more {
            if !shapes.contains(&shape) {
                shapes.push(shape);
            }
        }
    }
    Ok(shapes)
}

/// The most multiply-adds (M N K) of a [`random`] shape: 2^32, a few seconds of `--check`'s host
/// reference.
pub const RANDOM_MAX_WORK: usize = 1 << 32;

/// `count` shapes drawn from `seed` (a user's shapes, not a list: the class the rules must hold
/// for): M log-uniform in 1..=4096, N in 1..=8192, K a multiple of 8 in 8..=8192 (log-uniform),
/// each redrawn until M N K <= [`RANDOM_MAX_WORK`]; about half the M are at most 64 (decode).
pub fn random(count: usize, seed: u64) -> Vec<Shape> {
    // The data's generator: a fixed sequence per seed.
    let mut rng = crate::check::Rng::new(seed);
    // Log-uniform in 1..=max: 2 to a uniform power, rounded.
    let mut log_uniform =
        move |max: usize| ((max as f64).powf(rng.unit()).round() as usize).clamp(1, max);
    let mut shapes = Vec::with_capacity(count);
    while shapes.len() < count {
        let shape = Shape::new(log_uniform(4096), log_uniform(8192), 8 * log_uniform(1024));
        if shape.m * shape.n * shape.k <= RANDOM_MAX_WORK && !shapes.contains(&shape) {
            shapes.push(shape);
        }
    }
    shapes
}

/// The most weight elements (N K) of a [`layers`] shape: 2^28 (512 MiB of bf16), above the
/// largest layer of the sweep's families but one (Llama-3.1-70B's fused gate/up, 57344 x 8192).
pub const LAYERS_MAX_WEIGHT: usize = 1 << 28;

/// `count` shapes of the class a model runtime sends, drawn from `seed`: the timing sweep's
/// out-of-sample set, where the default must stay within 3 % of the fastest kernel on shapes
/// no rule was fitted to. M (tokens) log-uniform in 1..=1024, any integer; N log-uniform in
/// 256..=32768, seven in ten a multiple of 128, two a multiple of 8, one any size; K log-uniform
/// in 512..=28672, four in five a multiple of 64, else of 8; each redrawn until
/// N K <= [`LAYERS_MAX_WEIGHT`].
pub fn layers(count: usize, seed: u64) -> Vec<Shape> {
    drawn_layers(count, seed, 1..=1024, |_| true)
}

/// The most multiply-adds (M N K) of a [`prefill`] shape: 2^40, about 3 ms at the H200's bf16
/// rate, so that every kernel's rounds of a shape take seconds.
pub const PREFILL_MAX_WORK: usize = 1 << 40;
/// The most elements of D of a [`prefill`] shape: 2^26 (128 MiB of bf16 per implementation;
/// the benchmark keeps one D per implementation and checks each on the host).
pub const PREFILL_MAX_D: usize = 1 << 26;

/// [`layers`]' N and K with M (a prompt's tokens) log-uniform in 1025..=8192: the large-M class
/// of the same out-of-sample set, each shape redrawn until M N K <= [`PREFILL_MAX_WORK`] and
/// M N <= [`PREFILL_MAX_D`].
pub fn prefill(count: usize, seed: u64) -> Vec<Shape> {
    drawn_layers(count, seed, 1025..=8192, |s| {
        s.m * s.n * s.k <= PREFILL_MAX_WORK && s.m * s.n <= PREFILL_MAX_D
    })
}

/// `count` distinct shapes with M log-uniform in `ms` and [`layers`]' N and K, each kept only
/// where `keep` says so.
fn drawn_layers(
    count: usize,
    seed: u64,
    ms: std::ops::RangeInclusive<usize>,
    keep: impl Fn(&Shape) -> bool,
) -> Vec<Shape> {
    let mut rng = crate::check::Rng::new(seed);
    let mut unit = move || rng.unit();
    // Log-uniform in lo..=hi (real), from one draw.
    let log_uniform = |u: f64, lo: f64, hi: f64| (lo.ln() + u * (hi.ln() - lo.ln())).exp();
    let round_to = |x: f64, q: usize| ((x / q as f64).round() as usize).max(1) * q;
    let (m_lo, m_hi) = (*ms.start(), *ms.end());
    let mut shapes = Vec::with_capacity(count);
    while shapes.len() < count {
        let m = (log_uniform(unit(), m_lo as f64, (m_hi + 1) as f64) as usize).clamp(m_lo, m_hi);
        let (n, kind) = (log_uniform(unit(), 256.0, 32768.0), unit());
        let n = if kind < 0.7 {
            round_to(n, 128)
        } else if kind < 0.9 {
            round_to(n, 8)
        } else {
            n.round() as usize
        };
        let (k, kind) = (log_uniform(unit(), 512.0, 28672.0), unit());
        let k = round_to(k, if kind < 0.8 { 64 } else { 8 });
        let shape = Shape::new(m, n, k);
        if n * k <= LAYERS_MAX_WEIGHT && keep(&shape) && !shapes.contains(&shape) {
            shapes.push(shape);
        }
    }
    shapes
}

/// `NAME-COUNT` or `NAME-COUNT-SEED` (seed 1 by default), COUNT 1 to 1000: `draw(COUNT, SEED)`.
fn parse_drawn(
    item: &str,
    name: &str,
    draw: fn(usize, u64) -> Vec<Shape>,
) -> Result<Vec<Shape>, String> {
    let bad = || {
        format!(
            "bad shape set `{item}`: expected {name}-COUNT or {name}-COUNT-SEED (COUNT 1 to 1000), for example {name}-24-7"
        )
    };
    let rest = item
        .strip_prefix(name)
        .and_then(|r| r.strip_prefix('-'))
        .ok_or_else(bad)?;
    let (count, seed) = match rest.split_once('-') {
        Some((c, s)) => (c, s.parse::<u64>().map_err(|_| bad())?),
        None => (rest, 1),
    };
    let count = count.parse::<usize>().map_err(|_| bad())?;
    if !(1..=1000).contains(&count) {
        return Err(bad());
    }
    Ok(draw(count, seed))
}

/// Largest size accepted on the command line: cuBLAS's 32-bit interface (`int` sizes and
/// leading dimensions); each matrix must also stay below 2^31 elements.
const MAX_DIM: usize = i32::MAX as usize;

fn parse_one(item: &str) -> Result<Shape, String> {
    let bad = || {
        format!(
            "bad shape `{item}`: expected `square`, `llm`, `all`, `check`, `sweep`, `sweep-FAMILY`, `decode`, `mid`, `random-COUNT[-SEED]`, `layers-COUNT[-SEED]`, `prefill-COUNT[-SEED]` or MxNxK (for example 4096x4096x4096)"
        )
    };
    let dims: Vec<usize> = item
        .split(['x', 'X'])
        .map(|d| d.trim().parse::<usize>().map_err(|_| bad()))
        .collect::<Result<_, _>>()?;
    let [m, n, k] = dims[..] else {
        return Err(bad());
    };
    if m == 0 || n == 0 || k == 0 {
        return Err(format!("bad shape `{item}`: every size must be at least 1"));
    }
    if k % 8 != 0 {
        return Err(format!(
            "bad shape `{item}`: K must be a multiple of 8 (rows of A and B are 16-byte aligned for tensor copies)"
        ));
    }
    let shape = Shape::new(m, n, k);
    let (a, b, c) = shape.elems();
    if [m, n, k, a, b, c].iter().any(|&x| x > MAX_DIM) {
        return Err(format!(
            "bad shape `{item}`: a size or a matrix exceeds 2^31 - 1 elements (cuBLAS's 32-bit interface)"
        ));
    }
    Ok(shape)
}

/// A transpose flag of the column-major interface.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// `CUBLAS_OP_N`: the stored matrix as is.
    N,
    /// `CUBLAS_OP_T`: its transpose.
    T,
}

/// Which of the problem's row-major buffers goes where in the column-major call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Buffer {
    /// The row-major M x K input.
    A,
    /// The row-major N x K input.
    B,
}

/// The arguments of a column-major `C := alpha * op(A_cm) * op(B_cm) + beta * C` (BLAS / cuBLAS
/// naming: `op(A_cm)` is m x k, `op(B_cm)` is k x n, C is m x n, leading dimensions in elements)
/// that computes the row-major problem.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ColumnMajor {
    /// `transa`.
    pub transa: Op,
    /// `transb`.
    pub transb: Op,
    /// Rows of the column-major result.
    pub m: usize,
    /// Columns of the column-major result.
    pub n: usize,
    /// The reduction.
    pub k: usize,
    /// The buffer passed as cuBLAS's A, and its leading dimension.
    pub a: Buffer,
    /// `lda`.
    pub lda: usize,
    /// The buffer passed as cuBLAS's B.
    pub b: Buffer,
    /// `ldb`.
    pub ldb: usize,
    /// `ldc` (= `ldd`): C and D are the problem's C and D.
    pub ldc: usize,
}

impl ColumnMajor {
    /// The stored (column-major) rows and columns of cuBLAS's A: `op(A_cm)` is m x k, so the
    /// stored matrix is m x k for `N` and k x m for `T` (what a cuBLASLt layout describes).
    pub fn a_stored(&self) -> (usize, usize) {
        stored(self.transa, self.m, self.k)
    }

    /// The stored rows and columns of cuBLAS's B (`op(B_cm)` is k x n).
    pub fn b_stored(&self) -> (usize, usize) {
        stored(self.transb, self.k, self.n)
    }

    /// The stored rows and columns of C and D.
    pub fn c_stored(&self) -> (usize, usize) {
        (self.m, self.n)
    }
}

fn stored(op: Op, rows: usize, cols: usize) -> (usize, usize) {
    match op {
        Op::N => (rows, cols),
        Op::T => (cols, rows),
    }
}

/// The column-major call for the row-major problem.
///
/// A row-major r x c matrix with row pitch c is, read column-major, its transpose: a c x r
/// matrix with leading dimension c. So the memory of the row-major M x N result D is the
/// column-major N x M matrix `D^T`, and we ask cuBLAS for
///
/// ```text
/// D^T = (A B^T)^T = B A^T            (N x M = [N x K] [K x M])
/// ```
///
/// - cuBLAS's A must be `B` (N x K). B's memory (row-major N x K) is column-major `B^T`
///   (K x N, ld K), so `transa = T`, `lda = K`.
/// - cuBLAS's B must be `A^T` (K x M). A's memory (row-major M x K) is column-major `A^T`
///   (K x M, ld K) already: `transb = N`, `ldb = K`.
/// - C and D: column-major N x M, `ldc = N`; cuBLAS's m = N, n = M, k = K.
///
/// That is `cublasGemmEx(handle, OP_T, OP_N, N, M, K, &alpha, B, bf16, K, A, bf16, K, &beta,
/// D, bf16, N, COMPUTE_32F, ...)` with C = D, and the same transposes and layouts in cuBLASLt,
/// where C and D may differ.
pub fn column_major(shape: Shape) -> ColumnMajor {
    ColumnMajor {
        transa: Op::T,
        transb: Op::N,
        m: shape.n,
        n: shape.m,
        k: shape.k,
        a: Buffer::B,
        lda: shape.k,
        b: Buffer::A,
        ldb: shape.k,
        ldc: shape.n,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_shapes_are_a_fixed_draw_per_seed_within_their_ranges() {
        let a = parse_shapes("random-200-7").unwrap();
        assert_eq!(a, random(200, 7));
        assert_eq!(
            a,
            parse_shapes("random-200-7").unwrap(),
            "the same seed, the same draw"
        );
        assert_ne!(a, random(200, 8));
        assert_eq!(parse_shapes("random-5").unwrap(), random(5, 1));
        assert_eq!(a.len(), 200);
        for s in &a {
            assert!(
                (1..=4096).contains(&s.m) && (1..=8192).contains(&s.n),
                "{s}"
            );
            assert!(s.k % 8 == 0 && (8..=8192).contains(&s.k), "{s}");
            assert!(s.m * s.n * s.k <= RANDOM_MAX_WORK, "{s}");
        }
        // Every class is drawn: decode M, mid M, large M; a K that is no multiple of 64.
        assert!(a.iter().filter(|s| s.m <= 64).count() >= 20);
        assert!(a.iter().any(|s| (96..=1024).contains(&s.m)));
        assert!(a.iter().any(|s| s.m > 1024));
        assert!(a.iter().any(|s| s.k % 64 != 0));
        assert!(a.iter().any(|s| s.n % 8 != 0));
        for bad in [
            "random-",
            "random-0",
            "random-1001",
            "random-x",
            "random-3-y",
        ] {
            let e = parse_shapes(bad).unwrap_err();
            assert!(e.contains("random-COUNT"), "{bad}: {e}");
        }
    }

    #[test]
    fn layer_shapes_are_a_fixed_draw_per_seed_of_every_kind_a_runtime_sends() {
        let a = parse_shapes("layers-300-5").unwrap();
        assert_eq!(a, layers(300, 5), "the same seed, the same draw");
        assert_ne!(a, layers(300, 6));
        assert_eq!(parse_shapes("layers-4").unwrap(), layers(4, 1));
        assert_eq!(a.len(), 300);
        for s in &a {
            assert!((1..=1024).contains(&s.m), "{s}");
            assert!((256..=32768).contains(&s.n), "{s}");
            assert!(s.k % 8 == 0 && (512..=28672).contains(&s.k), "{s}");
            assert!(s.n * s.k <= LAYERS_MAX_WEIGHT, "{s}");
        }
        // Each class of M, odd M, every kind of N and K.
        let count = |f: &dyn Fn(&Shape) -> bool| a.iter().filter(|s| f(s)).count();
        assert!(
            count(&|s| s.m <= 64) >= 150,
            "about 0.6 of a log-uniform M is at most 64"
        );
        assert!(count(&|s| (96..=1024).contains(&s.m)) >= 60);
        assert!(count(&|s| s.m % 2 == 1) >= 50);
        assert!(count(&|s| s.n % 128 == 0) >= 150);
        assert!(count(&|s| s.n % 128 != 0 && s.n % 8 == 0) >= 20);
        assert!(count(&|s| s.n % 8 != 0) >= 10);
        assert!(count(&|s| s.k % 64 != 0) >= 20);
        assert!(count(&|s| s.k >= 14336) >= 30);
        for bad in [
            "layers-",
            "layers-0",
            "layers-1001",
            "layers-x",
            "layers-3-y",
        ] {
            let e = parse_shapes(bad).unwrap_err();
            assert!(e.contains("layers-COUNT"), "{bad}: {e}");
        }
    }

    #[test]
    fn prefill_shapes_are_the_layers_with_a_prompts_m() {
        let a = parse_shapes("prefill-200-3").unwrap();
        assert_eq!(a, prefill(200, 3));
        assert_ne!(a, prefill(200, 4));
        assert_eq!(parse_shapes("prefill-2").unwrap(), prefill(2, 1));
        for s in &a {
            assert!((1025..=8192).contains(&s.m), "{s}");
            assert!((256..=32768).contains(&s.n), "{s}");
            assert!(s.k % 8 == 0 && (512..=28672).contains(&s.k), "{s}");
            assert!(s.n * s.k <= LAYERS_MAX_WEIGHT, "{s}");
            assert!(
                s.m * s.n * s.k <= PREFILL_MAX_WORK && s.m * s.n <= PREFILL_MAX_D,
                "{s}"
            );
        }
        assert!(a.iter().any(|s| s.m > 4096) && a.iter().any(|s| s.m < 2048));
        assert!(a.iter().any(|s| s.m % 2 == 1) && a.iter().any(|s| s.n % 8 != 0));
        // The layers' draw is unchanged by the shared code: its first shapes of seed 1.
        assert_eq!(
            layers(3, 1),
            vec![
                Shape::new(1, 1280, 3648),
                Shape::new(71, 14592, 4336),
                Shape::new(1, 9088, 20928)
            ]
        );
        for bad in ["prefill-", "prefill-0", "prefill-x-1"] {
            let e = parse_shapes(bad).unwrap_err();
            assert!(e.contains("prefill-COUNT"), "{bad}: {e}");
        }
    }

    #[test]
    fn named_sets() {
        assert_eq!(parse_shapes("square").unwrap(), SQUARE.to_vec());
        let llm = parse_shapes("llm").unwrap();
        assert_eq!(llm.len(), 12);
        assert!(llm.contains(&Shape::new(128, 28672, 8192)));
        assert!(llm.contains(&Shape::new(8192, 4096, 14336)));
        assert_eq!(parse_shapes("all").unwrap().len(), 17);
        assert_eq!(
            parse_shapes("square,all").unwrap().len(),
            17,
            "no duplicates"
        );
    }

    #[test]
    fn the_check_shapes_cover_the_issue() {
        assert_eq!(parse_shapes("check").unwrap(), CHECK.to_vec());
        let has = |f: &dyn Fn(&Shape) -> bool| CHECK.iter().any(f);
        assert!(has(&|s| s.m == s.n && s.n == s.k && s.m >= 1024), "square");
        for size in [1, 7, 1000, 4097] {
            assert!(has(&|s| s.m == size), "M = {size}");
            assert!(has(&|s| s.n == size), "N = {size}");
        }
        for m in [64, 128] {
            assert!(
                has(&|s| s.m == m && s.n >= 4096 && s.k >= 4096),
                "skinny M = {m}"
            );
        }
        assert!(
            has(&|s| s.k == 65536 && s.m <= 128 && s.n <= 1024),
            "long K"
        );
        assert!(
            has(&|s| s.k % 64 != 0 && s.m > 1 && s.n > 1),
            "K not a multiple of 64"
        );
        for s in CHECK {
            assert_eq!(parse_one(&s.to_string()), Ok(s), "{s}: a valid shape");
        }
        let distinct: std::collections::HashSet<_> =
            CHECK.iter().map(|s| (s.m, s.n, s.k)).collect();
        assert_eq!(distinct.len(), CHECK.len(), "no duplicates");
        // The host reference of the integer check stays cheap: multiply-adds in all.
        let work: f64 = CHECK.iter().map(|s| s.flops() / 2.0).sum();
        assert!(work < 3e10, "{work:e}");
    }

    #[test]
    fn the_sweep_covers_every_m_and_layer() {
        let all = parse_shapes("sweep").unwrap();
        // 288 family shapes and the squares; three squares are also layers (2048^3 of the 1B
        // model's o projection, 4096^3 of the 8B's, 8192^3 of the 70B's).
        assert_eq!(
            all.len(),
            FAMILIES.len() * 4 * SWEEP_M.len() + SQUARE.len() - 3
        );
        let one = parse_shapes("sweep-llama8b").unwrap();
        assert_eq!(one.len(), 4 * 18);
        assert!(one.contains(&Shape::new(1, 28672, 4096)));
        assert!(one.contains(&Shape::new(384, 4096, 14336)));
        let decode = parse_shapes("decode").unwrap();
        assert!(decode.iter().all(|s| s.m <= 64) && decode.len() == 4 * 4 * 7);
        let mid = parse_shapes("mid").unwrap();
        assert!(mid.iter().all(|s| (96..=1024).contains(&s.m)) && mid.len() == 4 * 4 * 8);
        // Every layer's K is a multiple of 8 (the tensor-copy rule `parse_one` enforces).
        assert!(all.iter().all(|s| s.k % 8 == 0));
        let e = parse_shapes("sweep-gpt5").unwrap_err();
        assert!(e.contains("llama1b, qwen7b, llama8b, llama70b"), "{e}");
    }

    #[test]
    fn explicit_shapes_in_order() {
        assert_eq!(
            parse_shapes("7x1000x64, 1X1X8,8192x8192x8192").unwrap(),
            vec![
                Shape::new(7, 1000, 64),
                Shape::new(1, 1, 8),
                Shape::new(8192, 8192, 8192)
            ]
        );
        assert_eq!(
            parse_shapes("llm,4096x4096x4096").unwrap().last(),
            Some(&Shape::new(4096, 4096, 4096))
        );
    }

    #[test]
    fn bad_shapes_are_one_line_errors() {
        for (spec, says) in [
            ("4096x4096", "MxNxK"),
            ("4096x4096x4096x1", "MxNxK"),
            ("ax4096x4096", "MxNxK"),
            ("", "MxNxK"),
            ("square,", "MxNxK"),
            ("0x16x16", "at least 1"),
            ("16x16x12", "multiple of 8"),
            ("65536x65536x8", "2^31"),
            ("3000000000x1x8", "2^31"),
        ] {
            let e = parse_shapes(spec).unwrap_err();
            assert!(e.contains(says), "{spec}: {e}");
            assert_eq!(e.lines().count(), 1, "{e}");
        }
    }

    #[test]
    fn flops_and_tflops() {
        let s = Shape::new(8192, 8192, 8192);
        assert_eq!(s.flops(), 2.0 * 8192f64.powi(3));
        // 1.1 TFLOP in 1.39 ms is about 791 TFLOP/s.
        assert!((s.tflops(1.39) - 791.0).abs() < 1.0, "{}", s.tflops(1.39));
    }

    #[test]
    fn the_column_major_call_is_d_transposed_equals_b_times_a_transposed() {
        let cm = column_major(Shape::new(7, 1000, 64));
        assert_eq!((cm.transa, cm.transb), (Op::T, Op::N));
        assert_eq!((cm.m, cm.n, cm.k), (1000, 7, 64));
        assert_eq!(
            (cm.a, cm.lda, cm.b, cm.ldb, cm.ldc),
            (Buffer::B, 64, Buffer::A, 64, 1000)
        );
        assert_eq!(cm.a_stored(), (64, 1000), "B's memory: K x N column-major");
        assert_eq!(cm.b_stored(), (64, 7), "A's memory: K x M column-major");
        assert_eq!(cm.c_stored(), (1000, 7));
    }

    /// BLAS semantics of `C := alpha op(A) op(B) + beta C`, column-major, in f64: what cuBLAS
    /// computes with the arguments of [`column_major`] (up to rounding).
    fn blas_gemm(cm: &ColumnMajor, alpha: f64, a: &[f64], b: &[f64], beta: f64, c: &mut [f64]) {
        let at = |i: usize, l: usize| match cm.transa {
            Op::N => a[i + l * cm.lda],
            Op::T => a[l + i * cm.lda],
        };
        let bt = |l: usize, j: usize| match cm.transb {
            Op::N => b[l + j * cm.ldb],
            Op::T => b[j + l * cm.ldb],
        };
        for j in 0..cm.n {
            for i in 0..cm.m {
                let sum: f64 = (0..cm.k).map(|l| at(i, l) * bt(l, j)).sum();
                c[i + j * cm.ldc] = alpha * sum + beta * c[i + j * cm.ldc];
            }
        }
    }

    #[test]
    fn the_column_major_call_computes_the_row_major_problem() {
        for shape in [
            Shape::new(1, 1, 8),
            Shape::new(7, 3, 8),
            Shape::new(3, 7, 16),
            Shape::new(5, 1, 24),
        ] {
            let (ea, eb, ec) = shape.elems();
            let a: Vec<f64> = (0..ea).map(|i| ((i * 7 + 3) % 11) as f64 - 5.0).collect();
            let b: Vec<f64> = (0..eb).map(|i| ((i * 5 + 1) % 13) as f64 - 6.0).collect();
            let c: Vec<f64> = (0..ec).map(|i| ((i * 3 + 2) % 7) as f64 - 3.0).collect();
            let (alpha, beta) = (2.0, -1.5);
            // Row-major, straight from the definition.
            let mut want = vec![0.0; ec];
            for i in 0..shape.m {
                for j in 0..shape.n {
                    let dot: f64 = (0..shape.k)
                        .map(|l| a[i * shape.k + l] * b[j * shape.k + l])
                        .sum();
                    want[i * shape.n + j] = alpha * dot + beta * c[i * shape.n + j];
                }
            }
            let cm = column_major(shape);
            let pick = |buffer| match buffer {
                Buffer::A => &a,
                Buffer::B => &b,
            };
            let mut got = c.clone();
            blas_gemm(&cm, alpha, pick(cm.a), pick(cm.b), beta, &mut got);
            assert_eq!(got, want, "{shape}");
            // The leading dimensions fit the stored shapes (BLAS: ld >= stored rows).
            assert!(cm.lda >= cm.a_stored().0 && cm.ldb >= cm.b_stored().0);
            assert!(cm.ldc >= cm.c_stored().0);
        }
    }
}
