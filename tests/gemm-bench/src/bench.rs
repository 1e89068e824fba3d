//! The benchmark: command line, the exact checks on small shapes, the timed shapes (alternating,
//! medians, every result checked), the report and the CSV.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{SystemTime, UNIX_EPOCH};

use pipeline_suite::exit;

use crate::check::{self, Rng};
use crate::cuda::{Device, OpenError, Step, Timer};
use crate::gemm::{Gemm, baselines};
use crate::ours;
use crate::problem::{self, Problem, Shape};
use crate::runs::{Buffers, prepare_all, run_once};
use crate::targets;

const USAGE: &str = "\
usage: gemm-bench [--shapes SPEC] [--reps N] [--warmup N] [--quick] [--beta X] [--csv FILE]
                  [--no-gate] [--cold-l2] [--ours-module FILE [--kernels NAMES]] [--seed N]
       gemm-bench --check --ours-module FILE [--shapes SPEC] [--seed N]
                  (without --shapes: check, then 16 shapes drawn from the data's seed)
       gemm-bench --host-time --ours-module FILE [--shapes SPEC] [--reps N] [--csv FILE]

  --shapes SPEC   square | llm | all | check | sweep | sweep-FAMILY | decode | mid
                  | random-COUNT[-SEED] | layers-COUNT[-SEED] | prefill-COUNT[-SEED]
                  | MxNxK[,MxNxK...] (sets and shapes may be mixed; K % 8 == 0); default: all
                  (square: 1024^3 .. 16384^3; llm: M in {128, 1024, 8192} x (N, K) in
                  {(4096, 4096), (14336, 4096), (4096, 14336), (28672, 8192)}); sweep: M 1 to
                  8192 x the linear layers of four model families, and the squares; decode, mid:
                  its M <= 64 and 96 <= M <= 1024; random-COUNT-SEED: COUNT shapes drawn
                  from SEED (M 1..4096, N 1..8192, K 8..8192 log-uniform, M N K <= 2^32);
                  layers-COUNT-SEED: COUNT model-like shapes drawn from SEED (M 1..1024 any,
                  N 256..32768 mostly multiples of 128, K 512..28672 multiples of 8 or 64,
                  log-uniform, N K <= 2^28), the out-of-sample set of the default;
                  prefill-COUNT-SEED: the same N and K with M 1025..8192 (M N K <= 2^40,
                  M N <= 2^26); with
                  --check: check (23 shapes: square, odd M and N, skinny M, decode M, K = 65536)
  --reps N        timed rounds per shape (default 20; --quick 5)
  --warmup N      untimed rounds before them (default 5; --quick 2)
  --quick         fewer shapes, rounds, autotuning candidates and exact checks
  --beta X        beta of the timed shapes (default 0: C is not read); alpha is 1; their
                  integer-data check runs with beta 0 (see --check for beta != 0 bit for bit)
  --csv FILE      write one row per shape and implementation
  --no-gate       do not hold the stream until a round is enqueued (see cuda::Timer)
  --cold-l2       before every run (untimed), overwrite a buffer twice the L2's size, so that
                  each run reads its operands from memory (as a model's layers do) and not from
                  what the run before it left in the L2 (operands under the L2's size otherwise
                  time by the order of the round)
  --ours-module F the GEMM under test's module
  --kernels NAMES only these of the module's kernels beside its default (`ours`), by name,
                  comma-separated (skinny-80-r64-d,skinny-80-r64-dp); a name the module does not
                  hold is an error. Default: every kernel of the module
  --seed N        the data's seed (default: from the clock; printed either way)
  --check         correctness only, nothing timed: each shape once per implementation
                  (cublasGemmEx and every kernel of the module), with beta 0 and beta -1 (alpha 2):
                  random data against cublasGemmEx within the K-scaled bound, integer data bit for
                  bit against the host reference; one PASS/FAIL line per (shape, beta,
                  implementation). Needs --ours-module; takes no timing flag.
  --host-time     host microseconds per call, nothing checked: Gemm::run cold (no plan kept)
                  and repeated (its plan kept; cudarc's event tracking on and off), a prepared
                  launch and launch_raw, CUDA graph replays of captured runs, cublasGemmEx and
                  cublasLtMatmul; 100 calls back to back per batch, median over --reps batches
                  (default 20; --quick 5). Default shapes: 1x4096x4096, 16x4096x4096,
                  64x4096x4096, 512x4096x4096. --csv FILE appends rows (the benchmark's columns,
                  implementation host:NAME and wall:NAME, milliseconds per call; the header only
                  when the file is new). Needs --ours-module; takes --shapes, --reps, --quick,
                  --csv, not --warmup, --beta, --no-gate, --check.

D = alpha * A * B^T + beta * C; A: M x K, B: N x K, C, D: M x N, row-major bf16, f32 accumulation.
Exit status: 0 every check passed, 1 a check or a run failed, 2 usage, 3 a kernel hung (--check:
a shape not done within 120 s), 4 no CUDA driver, 5 CUDA setup (no sm_90 GPU, cuBLAS cannot be
loaded, a handle cannot be created).";

/// The command line, parsed.
#[derive(Clone, Debug, PartialEq)]
pub struct Options {
    /// The timed shapes.
    pub shapes: Vec<Shape>,
    /// Timed rounds per shape.
    pub reps: usize,
    /// Untimed rounds first.
    pub warmup: usize,
    /// Reduced everything.
    pub quick: bool,
    /// beta of the timed shapes.
    pub beta: f32,
    /// Where the CSV goes.
    pub csv: Option<PathBuf>,
    /// Hold the stream until each round is enqueued.
    pub gated: bool,
    /// Evict the L2 before every run (untimed): each run reads its operands from memory, as a
    /// model's layers do, rather than from what the run before it left in the L2.
    pub cold_l2: bool,
    /// The GEMM under test's module.
    pub ours_module: Option<PathBuf>,
    /// `--kernels`: only these of the module's kernels (by name) beside its default.
    pub kernels: Option<Vec<String>>,
    /// The data's seed (`None`: from the clock).
    pub seed: Option<u64>,
    /// The correctness pass (`--check`, [`crate::verify`]) instead of the benchmark.
    pub check: bool,
    /// With `--check` and no `--shapes`: this many shapes drawn from the data's seed
    /// ([`crate::problem::random`]) after the fixed ones.
    pub check_random: usize,
    /// The host-time measurement (`--host-time`, [`crate::host_time`]) instead of the benchmark.
    pub host_time: bool,
}

/// The flags that set how the benchmark times (or what it writes); `--check` times nothing and
/// refuses them rather than ignore them.
const TIMING_FLAGS: [&str; 7] = [
    "--reps",
    "--warmup",
    "--quick",
    "--beta",
    "--csv",
    "--no-gate",
    "--cold-l2",
];

/// What the command line asked for: a run, or the usage text.
#[derive(Debug, PartialEq)]
pub enum Command {
    /// Run with these options.
    Run(Options),
    /// Print the usage and exit 0.
    Help,
}

/// Parses the arguments (without the program name).
pub fn parse_args(args: &[String]) -> Result<Command, String> {
    let mut shapes = None;
    let (mut reps, mut warmup) = (None, None);
    let mut options = Options {
        shapes: Vec::new(),
        reps: 0,
        warmup: 0,
        quick: false,
        beta: 0.0,
        csv: None,
        gated: true,
        cold_l2: false,
        ours_module: None,
        kernels: None,
        seed: None,
        check: false,
        check_random: 0,
        host_time: false,
    };
    let mut timing_flags = Vec::new();
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        if TIMING_FLAGS.contains(&arg.as_str()) {
            timing_flags.push(arg.clone());
        }
        let mut value = |name: &str| {
            it.next()
                .cloned()
                .ok_or_else(|| format!("{name} needs a value"))
        };
        let count = |name: &str, v: String, min: usize| match v.parse::<usize>() {
            Ok(n) if n >= min => Ok(n),
            _ => Err(format!(
                "{name} needs a whole number of at least {min}, not `{v}`"
            )),
        };
        match arg.as_str() {
            "--shapes" => shapes = Some(problem::parse_shapes(&value("--shapes")?)?),
            "--reps" => reps = Some(count("--reps", value("--reps")?, 1)?),
            "--warmup" => warmup = Some(count("--warmup", value("--warmup")?, 0)?),
            "--quick" => options.quick = true,
            "--beta" => {
                let v = value("--beta")?;
                options.beta = v
                    .parse::<f32>()
                    .ok()
                    .filter(|b| b.is_finite())
                    .ok_or_else(|| format!("--beta needs a finite number, not `{v}`"))?;
            }
            "--csv" => options.csv = Some(PathBuf::from(value("--csv")?)),
            "--no-gate" => options.gated = false,
            "--cold-l2" => options.cold_l2 = true,
            "--ours-module" => options.ours_module = Some(PathBuf::from(value("--ours-module")?)),
            "--kernels" => {
                // In the order given, a name given twice once.
                let mut names: Vec<String> = Vec::new();
                for name in value("--kernels")?.split(',').map(str::trim) {
                    if !name.is_empty() && !names.iter().any(|n| n == name) {
                        names.push(name.into());
                    }
                }
                if names.is_empty() {
                    return Err("--kernels needs at least one kernel name".into());
                }
                options.kernels = Some(names);
            }
            "--seed" => {
                let v = value("--seed")?;
                options.seed = Some(
                    v.parse::<u64>()
                        .map_err(|_| format!("--seed needs a whole number, not `{v}`"))?,
                );
            }
            "--check" => options.check = true,
            "--host-time" => options.host_time = true,
            "-h" | "--help" => return Ok(Command::Help),
            other => return Err(format!("unknown argument `{other}` (--help for the usage)")),
        }
    }
    if options.kernels.is_some() && (options.host_time || options.check) {
        return Err("--kernels chooses the timed kernels: not with --check or --host-time".into());
    }
    if options.kernels.is_some() && options.ours_module.is_none() {
        return Err("--kernels names kernels of --ours-module FILE: give the module too".into());
    }
    if options.host_time {
        if options.check {
            return Err("--host-time and --check are two modes: give one".into());
        }
        if let Some(flag) = timing_flags
            .iter()
            .find(|f| ["--warmup", "--beta", "--no-gate", "--cold-l2"].contains(&f.as_str()))
        {
            return Err(format!(
                "{flag} has no meaning with --host-time (it times the host's calls, beta 0, one untimed batch)"
            ));
        }
        if options.ours_module.is_none() {
            return Err("--host-time needs --ours-module FILE (the GEMM under test)".into());
        }
        options.shapes = shapes.unwrap_or_else(|| crate::host_time::SHAPES.to_vec());
        options.reps = reps.unwrap_or(if options.quick { 5 } else { 20 });
        return Ok(Command::Run(options));
    }
    if options.check {
        if let Some(flag) = timing_flags.first() {
            return Err(format!(
                "{flag} has no meaning with --check (it times nothing)"
            ));
        }
        if options.ours_module.is_none() {
            return Err("--check needs --ours-module FILE (the GEMM under test)".into());
        }
        if shapes.is_none() {
            options.check_random = crate::verify::RANDOM_SHAPES;
        }
        options.shapes = shapes.unwrap_or_else(crate::verify::default_shapes);
        for &shape in &options.shapes {
            crate::verify::checkable(shape)?;
        }
        return Ok(Command::Run(options));
    }
    options.shapes = shapes.unwrap_or_else(|| {
        if options.quick {
            problem::quick()
        } else {
            problem::parse_shapes("all").expect("the named set parses")
        }
    });
    options.reps = reps.unwrap_or(if options.quick { 5 } else { 20 });
    options.warmup = warmup.unwrap_or(if options.quick { 2 } else { 5 });
    Ok(Command::Run(options))
}

/// The small shapes checked exactly against the host reference: odd M and N (1, 7, 1000, 4097),
/// skinny M, a long K. Each with (alpha, beta) = (1, 0), (1, 1), (2, -1).
pub fn exact_shapes(quick: bool) -> Vec<Shape> {
    let all = [
        Shape::new(1, 1, 8),
        Shape::new(7, 7, 64),
        Shape::new(1, 1000, 256),
        Shape::new(1000, 1, 128),
        Shape::new(7, 1000, 64),
        Shape::new(1000, 7, 512),
        Shape::new(1000, 1000, 256),
        Shape::new(64, 4097, 128),
        Shape::new(128, 256, 4096),
        Shape::new(64, 64, 65536),
    ];
    if quick {
        vec![all[0], all[4], all[5], all[8]]
    } else {
        all.to_vec()
    }
}

/// The scalars of the exact checks: beta 0 (C poisoned with NaN, so never read), 1, and a
/// negative beta with alpha 2.
pub const EXACT_SCALARS: [(f32, f32); 3] = [(1.0, 0.0), (1.0, 1.0), (2.0, -1.0)];

/// `nvidia-smi`'s SM clocks now, or why not.
fn clocks() -> String {
    match std::process::Command::new("nvidia-smi")
        .args([
            "--query-gpu=clocks.sm,clocks.max.sm",
            "--format=csv,noheader",
        ])
        .output()
    {
        Ok(out) if out.status.success() => {
            let text = String::from_utf8_lossy(&out.stdout);
            let first = text.lines().next().unwrap_or("").trim().to_string();
            format!("SM clock, max SM clock: {first}")
        }
        _ => "clocks: nvidia-smi not available".into(),
    }
}

/// One timed shape's outcome, per implementation.
struct Row {
    name: String,
    median_ms: Option<f64>,
    min_ms: f64,
    max_ms: f64,
    runs: usize,
    /// `PASS`, `reference`, or `FAIL: why`.
    check: String,
    /// The module's kernel it ran (`ours`: the default's pick; `ours-NAME`: NAME), else `None`.
    kernel: Option<String>,
}

struct ShapeResult {
    problem: Problem,
    rows: Vec<Row>,
    /// For a decode shape (M <= [`COPY_M`]), the device-to-device copy of as many bytes as the
    /// GEMM moves, timed in the same rounds ([`copy_bytes`]); its CSV row's `ours_over_this` is
    /// the fraction of the copy's bandwidth the host API's default reaches.
    copy: Option<Row>,
    /// A failure of the shape as a whole (allocation, a run that failed).
    error: Option<String>,
}

impl ShapeResult {
    fn passed(&self) -> bool {
        self.error.is_none() && self.rows.iter().all(|r| !r.check.starts_with("FAIL"))
    }
}

/// The exact checks: every implementation against the host reference, bit for bit, on
/// small-integer data. Returns whether all passed.
fn exact_checks(
    device: &Device,
    timer: &mut Timer,
    impls: &mut [Box<dyn Gemm>],
    shapes: &[Shape],
    rng: &mut Rng,
) -> bool {
    println!(
        "\n== exact checks: integer data in -4..=4 (every sum exact in f32), each implementation bit for bit against the host reference"
    );
    let mut all = true;
    for &shape in shapes {
        let (ea, eb, ec) = shape.elems();
        let result = (|| -> Result<Vec<String>, String> {
            let buffers = Buffers::new(device, shape, impls.len())?;
            let (a, b, c) = (
                rng.small_integers_bf16(ea),
                rng.small_integers_bf16(eb),
                rng.small_integers_bf16(ec),
            );
            let first = Problem {
                shape,
                alpha: EXACT_SCALARS[0].0,
                beta: EXACT_SCALARS[0].1,
            };
            buffers.upload(device, &a, &b, &c, first.beta)?;
            prepare_all(device, timer, impls, &first, &buffers)?;
            let mut lines = Vec::new();
            for (alpha, beta) in EXACT_SCALARS {
                let problem = Problem { shape, alpha, beta };
                assert!(
                    check::integer_data_is_exact(shape.k, alpha, beta),
                    "{problem}"
                );
                buffers.upload(device, &a, &b, &c, beta)?;
                let want =
                    check::reference_exact(shape.m, shape.n, shape.k, alpha, &a, &b, beta, &c);
                // cuBLAS rounds the product before adding beta * C: that result is right too.
                let twice = check::reference_rounded_twice(
                    shape.m, shape.n, shape.k, alpha, &a, &b, beta, &c,
                );
                let got = run_once(device, impls, &problem, &buffers)?;
                let mut failures = Vec::new();
                for (imp, d) in impls.iter().zip(&got) {
                    let cmp = check::compare_exact_either(&want, &twice, d, shape.n);
                    if !cmp.passed() {
                        failures.push(format!("{}: {}", imp.name(), cmp.summary(true)));
                    }
                }
                lines.push(if failures.is_empty() {
                    format!("PASS {problem}")
                } else {
                    format!("FAIL {problem}: {}", failures.join("; "))
                });
            }
            Ok(lines)
        })();
        match result {
            Ok(lines) => {
                for line in lines {
                    all &= line.starts_with("PASS");
                    println!("{line}");
                }
            }
            Err(e) => {
                all = false;
                println!("FAIL {shape}: {e}");
            }
        }
    }
    let names: Vec<String> = impls.iter().map(|i| i.name()).collect();
    println!("(implementations: {})", names.join(", "));
    all
}

/// Times one problem (alternating rounds) and checks every implementation's last result: on the
/// random data against `cublasGemmEx` within the bound, then on integer data with beta 0 bit for
/// bit ([`integer_problem`]).
fn bench_shape(
    device: &Device,
    timer: &mut Timer,
    impls: &mut [Box<dyn Gemm>],
    problem: Problem,
    options: &Options,
    rng: &mut Rng,
) -> ShapeResult {
    let mut result = ShapeResult {
        problem,
        rows: Vec::new(),
        copy: None,
        error: None,
    };
    if let Err(e) = bench_shape_inner(device, timer, impls, &problem, options, rng, &mut result) {
        result.error = Some(e);
    }
    result
}

fn bench_shape_inner(
    device: &Device,
    timer: &mut Timer,
    impls: &mut [Box<dyn Gemm>],
    problem: &Problem,
    options: &Options,
    rng: &mut Rng,
    result: &mut ShapeResult,
) -> Result<(), String> {
    let shape = problem.shape;
    let (ea, eb, ec) = shape.elems();
    let buffers = Buffers::new(device, shape, impls.len())?;
    let (a, b) = (rng.uniform_bf16(ea), rng.uniform_bf16(eb));
    let c = if problem.beta == 0.0 {
        Vec::new()
    } else {
        rng.uniform_bf16(ec)
    };
    // This shape's round orders (and cuBLASLt's autotuning rounds), from the data's seed: an
    // implementation's places in the rounds differ between shapes and processes.
    timer.order_seed = rng.next_u64();
    buffers.upload(device, &a, &b, &c, problem.beta)?;
    prepare_all(device, timer, impls, problem, &buffers)?;
    // The equal-bytes copy of a decode shape: a copy of X bytes reads X and writes X.
    let copy = if shape.m <= COPY_M {
        let elems = copy_bytes(problem).div_ceil(4);
        let (src, dst) = (
            device.alloc(elems, "the copy's source")?,
            device.alloc(elems, "the copy's destination")?,
        );
        device.upload(&src, &rng.uniform_bf16(elems))?;
        Some((src, dst))
    } else {
        None
    };
    let items = impls.len() + usize::from(copy.is_some());
    // The L2 flush: twice the L2, at least 64 MiB.
    let flush = if options.cold_l2 {
        let bytes = (2 * device.l2_bytes()?).max(64 << 20);
        Some(crate::cuda::Workspace::new(device, bytes)?)
    } else {
        None
    };
    let forced_before = timer.forced.load(std::sync::atomic::Ordering::Relaxed);
    let mut times = timer.round_robin(items, options.warmup, options.reps, |i, step| {
        if let (Some(flush), Step::Before) = (&flush, step) {
            device.overwrite(flush, i as u8)?;
        }
        if i == impls.len() {
            let (src, dst) = copy
                .as_ref()
                .expect("the copy's item exists only with the copy");
            return match step {
                Step::Before => Ok(()),
                Step::Run => device.copy(dst, src),
            };
        }
        let ops = buffers.operands(i);
        let imp = &mut impls[i];
        match step {
            Step::Before => imp.before_run(&device.stream, problem, &ops),
            Step::Run => imp.run(&device.stream, problem, &ops),
        }
        .map_err(|e| format!("{}: {e}", imp.name()))
    })?;
    let forced = timer.forced.load(std::sync::atomic::Ordering::Relaxed) - forced_before;
    if forced > 0 {
        println!(
            "  note: the watchdog opened the timing gate in {forced} round(s) (a host call blocked on the GPU); those rounds were discarded"
        );
    }
    if copy.is_some() {
        let t = times.pop().expect("a time per item");
        result.copy = Some(Row {
            name: COPY_NAME.into(),
            median_ms: check::median(&t),
            min_ms: t.iter().copied().fold(f64::INFINITY, f64::min),
            max_ms: t.iter().copied().fold(0.0, f64::max),
            runs: t.len(),
            check: format!(
                "reference: a device-to-device copy of {} bytes, as many read and written as the GEMM moves",
                copy_bytes(problem) / 2
            ),
            kernel: None,
        });
    }
    for (imp, t) in impls.iter().zip(&times) {
        result.rows.push(Row {
            name: imp.name(),
            median_ms: check::median(t),
            min_ms: t.iter().copied().fold(f64::INFINITY, f64::min),
            max_ms: t.iter().copied().fold(0.0, f64::max),
            runs: t.len(),
            check: String::new(),
            kernel: imp.chosen_kernel(),
        });
    }
    // The random-data results of the last timed round, against cublasGemmEx's.
    let want = device.download(&buffers.d[0])?;
    let nans = want
        .iter()
        .filter(|&&x| check::f32_from_bf16(x).is_nan())
        .count();
    result.rows[0].check = if nans == 0 {
        "reference".into()
    } else {
        format!("FAIL: the reference has {nans} NaN elements (not written?)")
    };
    let (norms_a, norms_b) = (check::row_norms(&a, shape.k), check::row_norms(&b, shape.k));
    for i in 1..impls.len() {
        let got = device.download(&buffers.d[i])?;
        let cmp = check::compare_bounded(
            shape.k,
            problem.alpha,
            problem.beta,
            &norms_a,
            &norms_b,
            &c,
            &want,
            &got,
        );
        result.rows[i].check = if cmp.passed() {
            format!(
                "PASS: max |diff| {:.2e} ({:.3} of the bound), {} of {} elements differ",
                cmp.max_diff, cmp.max_used, cmp.differing, cmp.elements
            )
        } else {
            format!("FAIL: {}", cmp.summary(false))
        };
    }
    // Integer data, beta 0: every implementation bit for bit equal to cublasGemmEx.
    let int_problem = integer_problem(problem);
    if !check::integer_data_is_exact(shape.k, int_problem.alpha, int_problem.beta) {
        for row in &mut result.rows {
            row.check += "; integer check skipped (K too long for exact f32 sums)";
        }
        return Ok(());
    }
    let (a, b, c) = (
        rng.small_integers_bf16(ea),
        rng.small_integers_bf16(eb),
        rng.small_integers_bf16(ec),
    );
    buffers.upload(device, &a, &b, &c, int_problem.beta)?;
    let got = run_once(device, impls, &int_problem, &buffers)?;
    let nans = got[0]
        .iter()
        .filter(|&&x| check::f32_from_bf16(x).is_nan())
        .count();
    if nans > 0 {
        result.rows[0].check =
            format!("FAIL: on integer data the reference has {nans} NaN elements");
    }
    for i in 1..impls.len() {
        let cmp = check::compare_exact(&got[0], &got[i], shape.n);
        if cmp.passed() {
            result.rows[i].check += "; integer data: bit for bit equal";
        } else {
            result.rows[i].check = format!("FAIL: integer data: {}", cmp.summary(true));
        }
    }
    Ok(())
}

/// The integer-data problem of the benchmark's check of `problem`: its shape with alpha 1 and
/// beta 0, whatever `problem`'s beta. With beta != 0 `cublasGemmEx`, the reference here, rounds
/// the product to bf16 before adding beta * C, so a correct implementation that rounds once may
/// differ from it; the correctness pass (`--check`) checks beta != 0 bit for bit against the host
/// reference, which accepts both roundings.
fn integer_problem(problem: &Problem) -> Problem {
    Problem {
        shape: problem.shape,
        alpha: 1.0,
        beta: 0.0,
    }
}

/// The ratio columns: ours over each baseline, where ours exists and both have a time.
fn ratio(ours: Option<&Row>, row: &Row) -> Option<f64> {
    Some(row.median_ms? / ours?.median_ms?)
}

/// `ours / NAME RATIO` for each baseline (the rows before `ours`, the row of the host API's
/// default kernel); `-` where a median is missing. A shape that failed before its rows were made
/// (a module without a kernel, an allocation) has none, and no ratios.
fn ratio_line(result: &ShapeResult, ours: usize) -> String {
    let baselines = &result.rows[..ours.min(result.rows.len())];
    let ratios: Vec<String> = baselines
        .iter()
        .map(|row| {
            let r = ratio(result.rows.get(ours), row);
            format!(
                "ours / {} {}",
                row.name,
                r.map_or("-".into(), |r| format!("{r:.3}"))
            )
        })
        .collect();
    if ratios.is_empty() {
        "no ratios (no timed rows)".into()
    } else {
        ratios.join(", ")
    }
}

fn print_shape(result: &ShapeResult, ours: Option<usize>, impls: &[Box<dyn Gemm>]) {
    let shape = result.problem.shape;
    for (row, imp) in result.rows.iter().zip(impls) {
        let tflops = row
            .median_ms
            .map_or("-".to_string(), |ms| format!("{:.1}", shape.tflops(ms)));
        let mut line = format!(
            "  {:<20} {:>7} TFLOP/s  median {:.4} ms (min {:.4}, max {:.4}, {} runs)",
            row.name,
            tflops,
            row.median_ms.unwrap_or(f64::NAN),
            row.min_ms,
            row.max_ms,
            row.runs
        );
        if let Some(choice) = imp.choice() {
            let _ = write!(line, "\n  {:<20} {choice}", "");
        }
        let _ = write!(line, "\n  {:<20} check: {}", "", row.check);
        println!("{line}");
    }
    if let Some(copy) = &result.copy {
        let bytes = copy_bytes(&result.problem) as f64;
        let rate = |ms: f64| bytes / (ms * 1e-3) / 1e9;
        let ours_rate = ours
            .and_then(|o| result.rows.get(o))
            .and_then(|row| row.median_ms)
            .zip(copy.median_ms)
            .map_or(String::new(), |(ours, c)| {
                format!(
                    "; ours {:.0} GB/s, {:.3} of the copy's",
                    rate(ours),
                    c / ours
                )
            });
        println!(
            "  {:<20} median {:.4} ms: {:.0} GB/s for the GEMM's {} bytes{ours_rate}",
            copy.name,
            copy.median_ms.unwrap_or(f64::NAN),
            copy.median_ms.map_or(f64::NAN, rate),
            bytes
        );
    }
    match ours {
        None => println!("  {}", ours::SKIPPED),
        Some(o) => println!("  {}", ratio_line(result, o)),
    }
    match &result.error {
        Some(e) => println!("FAIL {shape}: {e}"),
        None if result.passed() => println!("PASS {shape}"),
        None => println!("FAIL {shape}: a check failed (above)"),
    }
}

/// Shapes with M up to this are decode shapes: their bandwidth is measured against a copy.
const COPY_M: usize = 64;
/// The copy's name in the report and the CSV.
const COPY_NAME: &str = "copy-equal-bytes";

/// Bytes a GEMM of `problem` moves at least: A and B read, D written (and C read when beta != 0),
/// 2 bytes an element. The copy it is measured against copies half of them.
fn copy_bytes(problem: &Problem) -> usize {
    let (ea, eb, ec) = problem.shape.elems();
    let c = if problem.beta == 0.0 { 0 } else { ec };
    2 * (ea + eb + ec + c)
}

/// The CSV's first line: the columns of the benchmark's rows and of `--host-time`'s.
/// `kernel`: the module's kernel the row ran (the default's pick on the `ours` row), else empty.
pub const CSV_HEADER: &str = "shape,m,n,k,alpha,beta,implementation,median_ms,min_ms,max_ms,runs,tflops,ours_over_this,check,kernel\n";

fn csv_rows(results: &[ShapeResult], ours: Option<usize>) -> String {
    let mut csv = String::from(CSV_HEADER);
    for r in results {
        let s = r.problem.shape;
        for (row, copy) in r
            .rows
            .iter()
            .map(|row| (row, false))
            .chain(r.copy.iter().map(|row| (row, true)))
        {
            let over = ours.and_then(|o| ratio(r.rows.get(o), row));
            let opt = |v: Option<f64>, p: usize| v.map_or(String::new(), |v| format!("{v:.p$}"));
            let check = r
                .error
                .clone()
                .unwrap_or_else(|| row.check.clone())
                .replace(',', ";");
            let _ = writeln!(
                csv,
                "{s},{},{},{},{},{},{},{},{:.6},{:.6},{},{},{},{},{}",
                s.m,
                s.n,
                s.k,
                r.problem.alpha,
                r.problem.beta,
                row.name,
                opt(row.median_ms, 6),
                row.min_ms,
                row.max_ms,
                row.runs,
                opt(row.median_ms.filter(|_| !copy).map(|ms| s.tflops(ms)), 2),
                opt(over, 4),
                check,
                row.kernel.as_deref().unwrap_or("")
            );
        }
    }
    csv
}

fn summary(results: &[ShapeResult], ours: Option<usize>, names: &[String]) {
    println!("\n== summary: TFLOP/s (median), {} shapes", results.len());
    let mut header = format!("{:<20}", "shape (MxNxK)");
    for name in names {
        let _ = write!(header, " {name:>20}");
    }
    if ours.is_some() {
        for name in &names[..names.len() - 1] {
            let _ = write!(header, " {:>20}", format!("ours/{name}"));
        }
    }
    println!("{header}  check");
    for r in results {
        let mut line = format!("{:<20}", r.problem.shape.to_string());
        for row in &r.rows {
            let t = row.median_ms.map(|ms| r.problem.shape.tflops(ms));
            let _ = write!(line, " {:>20}", t.map_or("-".into(), |t| format!("{t:.1}")));
        }
        if let Some(o) = ours {
            for row in &r.rows[..o.min(r.rows.len())] {
                let x = ratio(r.rows.get(o), row);
                let _ = write!(line, " {:>20}", x.map_or("-".into(), |x| format!("{x:.3}")));
            }
        }
        let verdict = if r.passed() { "PASS" } else { "FAIL" };
        println!("{line}  {verdict}");
    }
    match ours {
        None => println!("{}", ours::SKIPPED),
        Some(o) => {
            let timed: Vec<targets::Timed> = results.iter().map(|r| timed(r, o)).collect();
            // The target: ours over the faster of cublasGemmEx and cuBLASLt's first choice.
            let llm = problem::llm();
            let llm_ratios: Vec<f64> = timed
                .iter()
                .filter(|t| llm.contains(&t.shape))
                .filter_map(|t| Some(t.cublas? / t.ours?))
                .collect();
            if let Some(g) = check::geomean(&llm_ratios) {
                println!(
                    "geometric mean over the {} language-model shapes of ours / the faster of cublasGemmEx and cublasLt-heuristic: {g:.3}",
                    llm_ratios.len()
                );
            }
            print!("{}", targets::report(&timed));
        }
    }
}

/// A shape's medians as the targets read them ([`targets::Timed`]): the baselines are the rows
/// before `ours`, the module's kernels the rows after it.
fn timed(r: &ShapeResult, ours: usize) -> targets::Timed {
    let median = |name: &str| {
        r.rows[..ours.min(r.rows.len())]
            .iter()
            .find(|row| row.name == name)
            .and_then(|row| row.median_ms)
    };
    let cublas = [median("cublasGemmEx"), median("cublasLt-heuristic")]
        .into_iter()
        .flatten()
        .reduce(f64::min);
    let default = r.rows.get(ours);
    targets::Timed {
        shape: r.problem.shape,
        cublas,
        ours: default.and_then(|row| row.median_ms),
        chosen: default.and_then(|row| row.kernel.clone()),
        kernels: r
            .rows
            .iter()
            .skip(ours + 1)
            .filter_map(|row| Some((row.kernel.clone()?, row.median_ms?)))
            .collect(),
        copy: r.copy.as_ref().and_then(|c| c.median_ms),
    }
}

/// Runs the benchmark; the exit status is `pipeline_suite::exit`'s.
fn run(options: Options) -> Result<bool, (u8, String)> {
    let device = Device::open().map_err(|e| match e {
        OpenError::NoDriver if options.check => {
            (e.exit_code(), crate::cuda::NO_DRIVER_CHECK.to_string())
        }
        OpenError::NoDriver => (e.exit_code(), crate::cuda::NO_DRIVER.to_string()),
        OpenError::Setup(_) => (e.exit_code(), e.to_string()),
    })?;
    let seed = options.seed.unwrap_or_else(|| {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64)
    });
    if options.check {
        let module = options
            .ours_module
            .as_deref()
            .expect("--check needs a module (parse_args)");
        let mut shapes = options.shapes.clone();
        for shape in crate::problem::random(options.check_random, seed) {
            if !shapes.contains(&shape) {
                shapes.push(shape);
            }
        }
        return crate::verify::run(&device, &shapes, module, seed);
    }
    if options.host_time {
        println!("gemm-bench --host-time: {}", device.describe());
        // cudarc panics when a symbol is missing from a library it found (an older cuBLAS).
        return crate::cuda::no_panic("--host-time", || crate::host_time::run(&device, &options))
            .map_err(|e| (exit::TEST_FAILED, e));
    }
    let setup = |e: String| (exit::SETUP, e);
    // cudarc panics when a symbol is missing from a library it found (an older cuBLAS).
    let mut impls = crate::cuda::no_panic("cuBLAS cannot be used (too old a version?)", || {
        baselines(&device, options.quick)
    })
    .map_err(setup)?;
    // The host API's default kernel for each shape is "ours" in the ratios; every kernel of the
    // module is timed and checked beside it under its own name.
    let ours = match ours::ours(
        &device,
        options.ours_module.as_deref(),
        options.kernels.as_deref(),
    )
    .map_err(setup)?
    {
        Some(list) => {
            let first = impls.len();
            impls.extend(list);
            Some(first)
        }
        None => None,
    };
    let mut timer = Timer::new(&device, options.gated).map_err(setup)?;
    let mut rng = Rng::new(seed);
    println!("gemm-bench: {}", device.describe());
    println!("{}", clocks());
    println!(
        "D = alpha * A * B^T + beta * C, bf16 row-major (A: M x K, B: N x K), f32 accumulation; TFLOP/s = 2 M N K / median time (the epilogue's 3 M N operations are left out: under 0.02% for K >= 1024)"
    );
    println!(
        "timing: {} warm-up and {} timed rounds per shape; each round runs every implementation once, in a different pseudo-random order (each shape's orders drawn from the data seed), on one stream, CUDA events around each run{}; data seed {seed}",
        options.warmup,
        options.reps,
        if timer.gated() {
            ", the stream held until the round is enqueued"
        } else {
            ""
        }
    );
    let mut ok = exact_checks(
        &device,
        &mut timer,
        &mut impls,
        &exact_shapes(options.quick),
        &mut rng,
    );
    if ours.is_none() {
        println!("{}", ours::SKIPPED);
    }
    let names: Vec<String> = impls.iter().map(|i| i.name()).collect();
    let mut results = Vec::new();
    for &shape in &options.shapes {
        let problem = Problem {
            shape,
            alpha: 1.0,
            beta: options.beta,
        };
        println!("\n== {shape} (M x N x K), alpha 1, beta {}", options.beta);
        let result = bench_shape(&device, &mut timer, &mut impls, problem, &options, &mut rng);
        print_shape(&result, ours, &impls);
        ok &= result.passed();
        results.push(result);
    }
    summary(&results, ours, &names);
    println!("{} (after the runs)", clocks());
    if let Some(path) = &options.csv {
        std::fs::write(path, csv_rows(&results, ours))
            .map_err(|e| (exit::SETUP, format!("cannot write {}: {e}", path.display())))?;
        println!("CSV written: {}", path.display());
    }
    if !ok {
        eprintln!("error: a check or a run failed (FAIL lines above)");
    }
    Ok(ok)
}

/// The binary: parses the command line, runs, and returns the exit status.
pub fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let options = match parse_args(&args) {
        Ok(Command::Run(options)) => options,
        Ok(Command::Help) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("error: {e}\n{USAGE}");
            return ExitCode::from(exit::USAGE);
        }
    };
    match run(options) {
        Ok(true) => ExitCode::from(exit::PASSED),
        Ok(false) => ExitCode::from(exit::TEST_FAILED),
        Err((code, message)) => {
            eprintln!("error: {message}");
            ExitCode::from(code)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A shape whose run failed before any row was timed prints its error, not a panic (the
    /// sweep of a production module once panicked here on "range end index 3 out of range").
    #[test]
    fn a_shape_without_rows_has_no_ratios() {
        let row = |name: &str, ms: Option<f64>| Row {
            name: name.into(),
            median_ms: ms,
            min_ms: 0.0,
            max_ms: 0.0,
            runs: 1,
            check: "PASS".into(),
            kernel: None,
        };
        let mut result = ShapeResult {
            problem: Problem {
                shape: crate::problem::Shape::new(1, 8, 8),
                alpha: 1.0,
                beta: 0.0,
            },
            rows: Vec::new(),
            copy: None,
            error: Some("gemm: no kernel".into()),
        };
        assert_eq!(ratio_line(&result, 3), "no ratios (no timed rows)");
        result.rows = vec![row("a", Some(2.0)), row("b", None), row("ours", Some(1.0))];
        assert_eq!(ratio_line(&result, 2), "ours / a 2.000, ours / b -");
        result.rows.truncate(1);
        assert_eq!(ratio_line(&result, 2), "ours / a -");
    }

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    fn options(s: &str) -> Options {
        match parse_args(&args(s)).unwrap() {
            Command::Run(o) => o,
            Command::Help => panic!("help"),
        }
    }

    #[test]
    fn the_benchmark_integer_check_never_compares_a_beta_against_cublas_gemm_ex() {
        // cublasGemmEx rounds the product to bf16 before adding beta * C (seen on the H200 with
        // beta 1: 10867303 of 8192^2 elements one bf16 step off, in every other implementation
        // alike; tests/results/2026-12-01-issue13.md),
        // so the benchmark's bit-for-bit check against it holds only with beta 0. Beta != 0 is
        // checked exactly by `--check`, against the host reference, which accepts both roundings.
        let shape = Shape {
            m: 8192,
            n: 8192,
            k: 8192,
        };
        for beta in [0.0, 1.0, -0.5] {
            let problem = Problem {
                shape,
                alpha: 1.0,
                beta,
            };
            let integer = integer_problem(&problem);
            assert_eq!((integer.shape, integer.beta), (shape, 0.0), "{problem}");
        }
    }

    #[test]
    fn defaults_and_quick() {
        let o = options("");
        assert_eq!(
            (o.shapes.len(), o.reps, o.warmup, o.gated, o.beta),
            (17, 20, 5, true, 0.0)
        );
        let q = options("--quick");
        assert_eq!((q.shapes, q.reps, q.warmup), (problem::quick(), 5, 2));
        let q = options("--quick --reps 9 --shapes square");
        assert_eq!((q.shapes.len(), q.reps, q.warmup), (5, 9, 2));
    }

    #[test]
    fn every_flag() {
        let o = options(
            "--shapes 128x4096x4096,llm --reps 3 --warmup 0 --beta -0.5 --csv x.csv --no-gate --ours-module k.ptx",
        );
        assert_eq!(
            o.shapes.len(),
            12,
            "128x4096x4096 is one of llm: kept once, first"
        );
        assert_eq!(o.shapes[0], Shape::new(128, 4096, 4096));
        assert_eq!((o.reps, o.warmup, o.beta, o.gated), (3, 0, -0.5, false));
        assert_eq!(o.csv, Some(PathBuf::from("x.csv")));
        assert_eq!(o.ours_module, Some(PathBuf::from("k.ptx")));
        assert_eq!(o.kernels, None);
        assert_eq!(parse_args(&args("--help")).unwrap(), Command::Help);
        let o = options("--ours-module k.ptx --kernels skinny-80-r64-d,,skinny-80-r64-dp");
        assert_eq!(
            o.kernels,
            Some(vec!["skinny-80-r64-d".into(), "skinny-80-r64-dp".into()])
        );
        // In the order given, a repeated name once.
        let o = options("--ours-module k.ptx --kernels b,a,b,a");
        assert_eq!(o.kernels, Some(vec!["b".into(), "a".into()]));
    }

    /// `--cold-l2` flushes the L2 before every timed run; it is a timing flag, which `--check`
    /// and `--host-time` refuse.
    #[test]
    fn cold_l2_is_a_timing_flag() {
        assert!(options("--cold-l2 --shapes 96x4096x4096").cold_l2);
        assert!(!options("--shapes 96x4096x4096").cold_l2);
        let e = parse_args(&args("--check --ours-module k.ptx --cold-l2")).unwrap_err();
        assert!(e.contains("--cold-l2") && e.contains("--check"), "{e}");
        let e = parse_args(&args("--host-time --ours-module k.ptx --cold-l2")).unwrap_err();
        assert!(e.contains("--cold-l2") && e.contains("--host-time"), "{e}");
    }

    #[test]
    fn check_mode() {
        let o = options("--check --ours-module k.ptx");
        assert!(o.check);
        assert_eq!(o.shapes, problem::CHECK.to_vec());
        assert_eq!(o.ours_module, Some(PathBuf::from("k.ptx")));
        assert_eq!(o.seed, None);
        let o = options("--ours-module k.ptx --shapes 7x1000x136,check --check --seed 42");
        assert_eq!(o.shapes[0], Shape::new(7, 1000, 136));
        assert_eq!(o.shapes.len(), 1 + problem::CHECK.len());
        assert_eq!(o.seed, Some(42));
        assert!(
            !options("--ours-module k.ptx").check,
            "the benchmark by default"
        );
        assert_eq!(
            options("--seed 7").seed,
            Some(7),
            "the benchmark takes a seed too"
        );
        for flag in TIMING_FLAGS {
            let value = match flag {
                "--reps" | "--warmup" => " 3",
                "--beta" => " 1",
                "--csv" => " x.csv",
                _ => "",
            };
            let line = format!("--check --ours-module k.ptx {flag}{value}");
            let e = parse_args(&args(&line)).unwrap_err();
            assert!(e.contains(flag) && e.contains("--check"), "{line}: {e}");
            let line = format!("--ours-module k.ptx {flag}{value}");
            assert!(parse_args(&args(&line)).is_ok(), "{line}");
        }
        let e = parse_args(&args("--check")).unwrap_err();
        assert!(e.contains("--ours-module"), "{e}");
        let e = parse_args(&args("--check --ours-module k.ptx --shapes 8x8x1048576")).unwrap_err();
        assert!(e.contains("too long"), "{e}");
        let e = parse_args(&args("--seed -1")).unwrap_err();
        assert!(e.contains("--seed"), "{e}");
    }

    #[test]
    fn host_time_mode() {
        let o = options("--host-time --ours-module k.ptx");
        assert!(o.host_time && !o.check);
        assert_eq!(o.shapes, crate::host_time::SHAPES.to_vec());
        assert_eq!((o.reps, o.csv.as_ref()), (20, None));
        let o = options("--host-time --ours-module k.ptx --quick --csv h.csv --shapes 1x8192x8192");
        assert_eq!(o.shapes, [Shape::new(1, 8192, 8192)]);
        assert_eq!((o.reps, o.csv), (5, Some(PathBuf::from("h.csv"))));
        assert_eq!(options("--host-time --ours-module k.ptx --reps 7").reps, 7);
        assert!(
            !options("--ours-module k.ptx").host_time,
            "the benchmark by default"
        );
        for (line, says) in [
            ("--host-time", "--ours-module"),
            ("--host-time --ours-module k.ptx --check", "two modes"),
            ("--host-time --ours-module k.ptx --warmup 2", "--warmup"),
            ("--host-time --ours-module k.ptx --beta 1", "--beta"),
            ("--host-time --ours-module k.ptx --no-gate", "--no-gate"),
            ("--host-time --ours-module k.ptx --reps 0", "at least 1"),
        ] {
            let e = parse_args(&args(line)).unwrap_err();
            assert!(e.contains(says), "{line}: {e}");
        }
    }

    /// The usage names every named set of `--shapes` and the check set's size.
    #[test]
    fn the_usage_names_the_shape_sets() {
        for set in ["square", "llm", "all", "check", "sweep", "decode", "mid"] {
            assert!(problem::parse_shapes(set).is_ok(), "{set}");
            assert!(USAGE.contains(&format!(" {set}")), "{set}");
        }
        let check = format!("check ({} shapes", problem::CHECK.len());
        assert!(USAGE.contains(&check), "{check}");
    }

    #[test]
    fn usage_errors() {
        for (line, says) in [
            ("--bogus", "unknown argument"),
            ("--reps", "needs a value"),
            ("--reps 0", "at least 1"),
            ("--reps x", "whole number"),
            ("--warmup -1", "whole number"),
            ("--beta nan", "finite"),
            ("--shapes 3x3x3", "multiple of 8"),
            ("--kernels ,", "at least one kernel name"),
            ("--kernels skinny-80-r64-d", "give the module too"),
            (
                "--check --ours-module k.ptx --kernels skinny-80-r64-d",
                "not with --check",
            ),
        ] {
            let e = parse_args(&args(line)).unwrap_err();
            assert!(e.contains(says), "{line}: {e}");
        }
    }

    #[test]
    fn the_exact_shapes_are_exact_and_cover_the_odd_sizes() {
        for quick in [false, true] {
            for s in exact_shapes(quick) {
                assert_eq!(s.k % 8, 0, "{s}");
                for (alpha, beta) in EXACT_SCALARS {
                    assert!(check::integer_data_is_exact(s.k, alpha, beta), "{s}");
                }
            }
        }
        let all = exact_shapes(false);
        for size in [1, 7, 1000] {
            assert!(all.iter().any(|s| s.m == size), "M = {size}");
            assert!(all.iter().any(|s| s.n == size), "N = {size}");
        }
        assert!(all.iter().any(|s| s.n == 4097));
        assert!(all.iter().any(|s| s.k == 65536));
        assert!(EXACT_SCALARS.iter().any(|&(_, b)| b == 0.0));
        assert!(EXACT_SCALARS.iter().any(|&(_, b)| b != 0.0));
    }

    #[test]
    fn every_benchmark_shape_gets_the_integer_check() {
        for s in problem::parse_shapes("all").unwrap() {
            assert!(check::integer_data_is_exact(s.k, 1.0, 1.0), "{s}");
        }
    }

    /// The targets read a shape's rows as the benchmark makes them: the faster of
    /// `cublasGemmEx` and cuBLASLt's first choice (not the autotuned one), the default's pick
    /// from its row, the module's kernels from the rows after it (a row without a median or a
    /// kernel left out), the copy's median.
    #[test]
    fn the_targets_read_the_baselines_the_pick_and_the_kernels() {
        let row = |name: &str, ms: Option<f64>, kernel: Option<&str>| Row {
            name: name.into(),
            median_ms: ms,
            min_ms: 0.0,
            max_ms: 0.0,
            runs: 3,
            check: "PASS".into(),
            kernel: kernel.map(String::from),
        };
        let result = ShapeResult {
            problem: Problem {
                shape: Shape::new(16, 4096, 4096),
                alpha: 1.0,
                beta: 0.0,
            },
            rows: vec![
                row("cublasGemmEx", Some(0.012), None),
                row("cublasLt-heuristic", Some(0.010), None),
                row("cublasLt-autotuned", Some(0.008), None),
                row("ours", Some(0.011), Some("skinny-16")),
                row("ours-skinny-16", Some(0.0105), Some("skinny-16")),
                row("ours-persistent", None, Some("persistent")),
                row("ours-skinny-32", Some(0.009), Some("skinny-32")),
            ],
            copy: Some(row(COPY_NAME, Some(0.007), None)),
            error: None,
        };
        let t = timed(&result, 3);
        assert_eq!(t.shape, Shape::new(16, 4096, 4096));
        assert_eq!(
            t.cublas,
            Some(0.010),
            "the faster default, not the autotuned"
        );
        assert_eq!(t.ours, Some(0.011));
        assert_eq!(t.chosen.as_deref(), Some("skinny-16"));
        assert_eq!(
            t.kernels,
            vec![
                ("skinny-16".to_string(), 0.0105),
                ("skinny-32".to_string(), 0.009)
            ]
        );
        assert_eq!(t.copy, Some(0.007));
        assert_eq!(t.fastest(), Some(("skinny-32", 0.009)));
        assert_eq!(t.chosen_column(), Some(0.0105));
        // A shape whose rows were never made reads as nothing timed.
        let empty = ShapeResult {
            rows: Vec::new(),
            copy: None,
            error: Some("no kernel".into()),
            ..result
        };
        let t = timed(&empty, 3);
        assert_eq!(
            (t.cublas, t.ours, t.chosen, t.kernels.len()),
            (None, None, None, 0)
        );
    }

    #[test]
    fn csv_has_a_row_per_implementation_and_no_stray_commas() {
        let row = |name: &str, ms: Option<f64>| Row {
            name: name.into(),
            median_ms: ms,
            min_ms: 1.0,
            max_ms: 2.0,
            runs: 5,
            check: "PASS: a, b".into(),
            kernel: (name == "ours").then(|| "k".to_string()),
        };
        let results = [ShapeResult {
            problem: Problem {
                shape: Shape::new(8, 16, 32),
                alpha: 1.0,
                beta: 0.0,
            },
            rows: vec![row("x", Some(2.0)), row("ours", Some(1.0))],
            copy: Some(row(COPY_NAME, Some(0.5))),
            error: None,
        }];
        let csv = csv_rows(&results, Some(1));
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines.len(), 4);
        // The copy's row: no TFLOP/s, and ours at half of its bandwidth.
        assert!(lines[3].contains(&format!(",{COPY_NAME},")), "{csv}");
        assert!(lines[3].contains(",,0.5000,"), "{csv}");
        let columns = lines[0].split(',').count();
        assert!(
            lines.iter().all(|l| l.split(',').count() == columns),
            "{csv}"
        );
        assert!(
            lines[1].contains(",2.0000,"),
            "ours is twice as fast: {csv}"
        );
        assert!(lines[2].contains(",1.0000,"), "{csv}");
        // The kernel column: the default's pick on its row, empty elsewhere.
        assert!(lines[2].ends_with(",k"), "{csv}");
        assert!(lines[1].ends_with(','), "{csv}");
        assert!(
            csv_rows(&results, None)
                .lines()
                .nth(1)
                .unwrap()
                .contains(",,PASS")
        );
    }
}
