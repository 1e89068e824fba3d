//! The correctness pass, `gemm-bench --check` (`cargo xtask test-nvidia` runs it): nothing is
//! timed. Every shape ([`problem::CHECK`] unless `--shapes` says otherwise) runs once per
//! implementation (`cublasGemmEx`, then every kernel that [`ours::ours`] returns) for each pair of
//! scalars of [`CHECK_SCALARS`] (beta 0, with C filled with NaN so that a read of it shows; and
//! beta not 0), on two data sets:
//!
//! 1. **Random data** (uniform in [-1, 1)): every implementation's D against `cublasGemmEx`'s
//!    within [`check::bound`], which scales with K; `cublasGemmEx`'s own D must hold no NaN.
//! 2. **Small integers** (in -4..=4, exact in f32 whatever the order of the sums): every
//!    implementation, `cublasGemmEx` included, bit for bit against the host reference
//!    ([`check::integer_dots`], [`check::exact_from_dots`]). Accepted: the exact value rounded
//!    once to bf16, or, where beta is not 0, the product rounded first and then `beta * C` added
//!    (what `cublasGemmEx` gives). With beta 0 there is one correct result, so passing means bit
//!    for bit equality with `cublasGemmEx` as well.
//!
//! One line per (shape, scalars, implementation): `PASS` or `FAIL`, the largest difference on
//! random data and the share of the bound it used, and the integer check's result. A shape that
//! cannot run (an allocation, a cuBLAS call or a kernel launch that fails) is a `FAIL` line
//! naming the error, never a skip.

use crate::check::{self, Rng};
use crate::cuda::{Device, Timer};
use crate::gemm::{CublasGemmEx, Gemm};
use crate::problem::{Problem, Shape};
use crate::runs::{Buffers, prepare_all, run_once};
use crate::{ours, problem};

/// The scalars (alpha, beta) of every shape: beta 0 (C is filled with NaN: it must not be read),
/// then alpha 2 with beta -1 (C read, and scaled by both). Integers, so that the integer check is
/// exact ([`check::integer_data_is_exact`]).
pub const CHECK_SCALARS: [(f32, f32); 2] = [(1.0, 0.0), (2.0, -1.0)];

/// The most multiply-adds (M N K) of one shape's host reference: 2^36, about 30 s on two cores
/// (the largest default shape, 2048^3, is 2^33).
pub const MAX_HOST_WORK: usize = 1 << 36;

/// How long one shape (its runs and its host reference) may take before the pass takes a kernel
/// for hung and exits with `exit::HUNG`, so that a hung kernel does not hold the machine
/// (`run.sh` also bounds the whole pass with `timeout`).
pub const SHAPE_LIMIT: std::time::Duration = std::time::Duration::from_secs(120);

/// Whether `shape` can be checked: the integer check is exact with every pair of
/// [`CHECK_SCALARS`], and the host reference is at most [`MAX_HOST_WORK`]; if not, why (a usage
/// error of `--check --shapes`).
pub fn checkable(shape: Shape) -> Result<(), String> {
    let work = shape.m.saturating_mul(shape.n).saturating_mul(shape.k);
    if work > MAX_HOST_WORK {
        return Err(format!(
            "--check: {shape} is too large for the host reference ({work} multiply-adds, at most 2^36)"
        ));
    }
    if CHECK_SCALARS
        .iter()
        .all(|&(alpha, beta)| check::integer_data_is_exact(shape.k, alpha, beta))
    {
        Ok(())
    } else {
        Err(format!(
            "--check: K = {} of {shape} is too long for the exact integer check (sums must stay below 2^24 in f32)",
            shape.k
        ))
    }
}

/// Runs the pass: `Ok(true)` when every line passed, `Ok(false)` when one failed, `Err` (status,
/// message) when it cannot start (cuBLAS, the module).
pub fn run(
    device: &Device,
    shapes: &[Shape],
    module: &std::path::Path,
    seed: u64,
) -> Result<bool, (u8, String)> {
    use pipeline_suite::exit;
    let setup = |e: String| (exit::SETUP, e);
    // cudarc panics when a symbol is missing from a library it found (an older cuBLAS).
    let reference = crate::cuda::no_panic("cuBLAS cannot be used (too old a version?)", || {
        CublasGemmEx::new(device)
    })
    .map_err(setup)?;
    let mut impls: Vec<Box<dyn Gemm>> = vec![Box::new(reference)];
    match ours::ours(device, Some(module), None).map_err(setup)? {
        Some(list) if !list.is_empty() => impls.extend(list),
        _ => return Err(setup("the GEMM under test has no kernel".into())),
    }
    // Implementations prepare with a timer (cuBLASLt autotunes with it); nothing here is timed.
    let mut timer = Timer::new(device, false).map_err(setup)?;
    let mut rng = Rng::new(seed);
    let names: Vec<String> = impls.iter().map(|i| i.name()).collect();
    println!("gemm-bench --check: {}", device.describe());
    println!(
        "correctness only, nothing timed: D = alpha * A * B^T + beta * C (bf16 row-major, A: M x K, B: N x K, f32 accumulation); {} shapes x {} scalar pairs x {} implementations ({}); data seed {seed}",
        shapes.len(),
        CHECK_SCALARS.len(),
        impls.len(),
        names.join(", ")
    );
    println!(
        "random data in [-1, 1): against cublasGemmEx within the K-scaled bound; integers in -4..=4: every implementation bit for bit against the host reference"
    );
    let width = names.iter().map(String::len).max().unwrap_or(0);
    let current = watchdog();
    let (mut lines, mut failed) = (0usize, 0usize);
    for &shape in shapes {
        let start = std::time::Instant::now();
        *current.lock().unwrap_or_else(|e| e.into_inner()) = Some((shape, start));
        let mut tally = |passed: bool| {
            lines += 1;
            failed += usize::from(!passed);
        };
        if let Err(e) = check_shape(
            device, &mut timer, &mut impls, shape, &mut rng, width, &mut tally,
        ) {
            tally(false);
            println!("FAIL {shape}: {e}");
        }
        println!("     ({shape}: {:.1} s)", start.elapsed().as_secs_f64());
    }
    *current.lock().unwrap_or_else(|e| e.into_inner()) = None;
    println!(
        "{} of {lines} checks passed, {failed} failed",
        lines - failed
    );
    if failed > 0 {
        eprintln!("error: {failed} correctness check(s) failed (FAIL lines above)");
    }
    Ok(failed == 0)
}

/// The shape being checked and since when (`None`: none), watched by a thread that ends the
/// process with `exit::HUNG` once a shape has taken longer than [`SHAPE_LIMIT`]: a hung kernel
/// would block the next synchronisation for ever.
fn watchdog() -> std::sync::Arc<std::sync::Mutex<Option<(Shape, std::time::Instant)>>> {
    let current = std::sync::Arc::new(std::sync::Mutex::new(None::<(Shape, std::time::Instant)>));
    let watched = current.clone();
    std::thread::spawn(move || {
        loop {
            std::thread::sleep(std::time::Duration::from_millis(500));
            let now = *watched.lock().unwrap_or_else(|e| e.into_inner());
            if let Some((shape, since)) = now
                && since.elapsed() > SHAPE_LIMIT
            {
                println!(
                    "FAIL {shape}: not finished after {} s",
                    SHAPE_LIMIT.as_secs()
                );
                eprintln!(
                    "error: {shape} did not finish within {} s: a kernel hung (the pass stopped there)",
                    SHAPE_LIMIT.as_secs()
                );
                std::process::exit(i32::from(pipeline_suite::exit::HUNG));
            }
        }
    });
    current
}

/// Checks one shape with every pair of [`CHECK_SCALARS`], printing a line per (scalars,
/// implementation) and reporting each to `tally`. `Err`: the shape could not run.
fn check_shape(
    device: &Device,
    timer: &mut Timer,
    impls: &mut [Box<dyn Gemm>],
    shape: Shape,
    rng: &mut Rng,
    width: usize,
    tally: &mut impl FnMut(bool),
) -> Result<(), String> {
    checkable(shape)?;
    let Shape { m, n, k } = shape;
    let (ea, eb, ec) = shape.elems();
    let buffers = Buffers::new(device, shape, impls.len())?;
    let (a, b, c) = (
        rng.uniform_bf16(ea),
        rng.uniform_bf16(eb),
        rng.uniform_bf16(ec),
    );
    let (norms_a, norms_b) = (check::row_norms(&a, k), check::row_norms(&b, k));
    let (ai, bi, ci) = (
        rng.small_integers_bf16(ea),
        rng.small_integers_bf16(eb),
        rng.small_integers_bf16(ec),
    );
    let dots = check::integer_dots(m, n, k, &ai, &bi);
    for (alpha, beta) in CHECK_SCALARS {
        let problem = Problem { shape, alpha, beta };
        buffers.upload(device, &a, &b, &c, beta)?;
        prepare_all(device, timer, impls, &problem, &buffers)?;
        let random = run_once(device, impls, &problem, &buffers)?;
        buffers.upload(device, &ai, &bi, &ci, beta)?;
        let integer = run_once(device, impls, &problem, &buffers)?;
        let (once, twice) = check::exact_from_dots(k, &dots, alpha, beta, &ci);
        for (i, imp) in impls.iter().enumerate() {
            let (random_ok, random_text) = if i == 0 {
                let nans = random[0]
                    .iter()
                    .filter(|&&x| check::f32_from_bf16(x).is_nan())
                    .count();
                if nans == 0 {
                    (true, "the reference (no NaN)".to_string())
                } else {
                    (false, format!("the reference has {nans} NaN elements"))
                }
            } else {
                let cmp = check::compare_bounded(
                    k, alpha, beta, &norms_a, &norms_b, &c, &random[0], &random[i],
                );
                let text = if cmp.passed() {
                    format!(
                        "max |diff| {:.2e}, {:.3} of the bound ({} of {} elements differ)",
                        cmp.max_diff, cmp.max_used, cmp.differing, cmp.elements
                    )
                } else {
                    cmp.summary(false)
                };
                (cmp.passed(), text)
            };
            let exact = check::compare_exact_either(&once, &twice, &integer[i], n);
            let integer_text = if exact.passed() {
                format!("exact ({} elements)", exact.elements)
            } else {
                exact.summary(true)
            };
            let passed = random_ok && exact.passed();
            tally(passed);
            println!(
                "{} {problem}  {:<width$}  random: {random_text}; integers: {integer_text}",
                if passed { "PASS" } else { "FAIL" },
                imp.name(),
            );
        }
    }
    Ok(())
}

/// The fixed shapes of `--check` without `--shapes` ([`RANDOM_SHAPES`] more are drawn from the
/// data's seed when it is known).
pub fn default_shapes() -> Vec<Shape> {
    problem::CHECK.to_vec()
}

/// How many shapes `--check` without `--shapes` draws from the data's seed
/// ([`problem::random`]: M 1 to 4096, N 1 to 8192, K 8 to 8192), after [`default_shapes`]: a
/// different draw each run, each shape named on its lines (`--seed N` without `--shapes` repeats
/// a run, shapes and data; `--shapes MxNxK` runs one shape again on other data).
pub const RANDOM_SHAPES: usize = 16;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_check_shape_gets_the_exact_integer_check_with_both_betas() {
        for s in default_shapes() {
            assert_eq!(checkable(s), Ok(()), "{s}");
        }
        for seed in 0..64 {
            for s in problem::random(RANDOM_SHAPES, seed) {
                assert_eq!(checkable(s), Ok(()), "{s} (seed {seed})");
            }
        }
        assert!(CHECK_SCALARS.iter().any(|&(_, beta)| beta == 0.0));
        assert!(CHECK_SCALARS.iter().any(|&(_, beta)| beta != 0.0));
        let e = checkable(Shape::new(8, 8, 1 << 20)).unwrap_err();
        assert!(e.contains("too long"), "{e}");
        let e = checkable(Shape::new(16384, 16384, 16384)).unwrap_err();
        assert!(e.contains("too large"), "{e}");
        assert_eq!(
            checkable(Shape::new(4096, 4096, 4096)),
            Ok(()),
            "2^36 exactly"
        );
    }
}
