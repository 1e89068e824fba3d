//! `attention-test [MODULE] [--quick | --sanitize | --programmatic | --capture]
//! [--exp-error=REL]`: the attention kernels on the GPU, every case checked element by element
//! against the plan's f64 reference (`gpu_attention_plan::reference`) within its derived bound
//! (`reference::tolerance`; with `--exp-error`, `reference::tolerance_with` for a variant module
//! whose weights' `2^x` has that relative error, such as `exp_fma_3`'s 1.1e-4), O and `LSE`; O is filled with a sentinel first, and every element the problem does not write must
//! keep it. Then the host API's errors, and (but under `--sanitize`) the programmatic chains
//! (`programmatic`; `--programmatic` runs only them: the suite runs them alone on the module
//! without the kernels' wait, where they must fail) and CUDA graph capture (`capture`;
//! `--capture` runs only those). Prints `PASS`/`FAIL` per case and exits with the harness's
//! statuses (`pipeline_suite::exit`): a failed case `TEST_FAILED`, a module that does not load
//! `SETUP`, no CUDA driver `NO_DRIVER` (with the one-line reason on stderr).

mod capture;
mod programmatic;
mod thread;

use std::process::ExitCode;
use std::sync::Arc;

use cudarc::driver::CudaStream;
use gpu_attention_host::{
    Attention, Batches, Element, Error, KernelSpec, Mask, Problem, Strides, Tensor,
};
use gpu_attention_plan::reference::{Inputs, forward, tolerance_with};
use pipeline_suite::exit;

/// The bits O is filled with before a launch: a NaN in both types, which no result is.
const SENTINEL: u16 = 0x7FFF;

/// A small xorshift generator: the same data on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    /// Uniform in [-1, 1).
    fn unit(&mut self) -> f32 {
        ((self.next() >> 40) as f32 / (1u64 << 23) as f32) - 1.0
    }
}

/// The 16-bit encoding of `x` (rounded to nearest even) and its value.
fn encode(element: Element, x: f32) -> (u16, f32) {
    let r = gpu_attention_plan::reference::round(element, x);
    match element {
        Element::Bf16 => ((r.to_bits() >> 16) as u16, r),
        Element::F16 => {
            let bits = f16_bits(r);
            (bits, f16_value(bits))
        }
    }
}

/// The f16 bits of `x` (already an f16 value, normal or zero).
fn f16_bits(x: f32) -> u16 {
    if x == 0.0 {
        return if x.is_sign_negative() { 0x8000 } else { 0 };
    }
    let bits = x.to_bits();
    let sign = ((bits >> 16) & 0x8000) as u16;
    let exp = ((bits >> 23) & 0xFF) as i32 - 127 + 15;
    if exp <= 0 {
        // Subnormal f16: the value times 2^24 is its integer mantissa.
        let m = (x.abs() * (1u32 << 24) as f32).round() as u16;
        return sign | m;
    }
    sign | ((exp as u16) << 10) | ((bits >> 13) & 0x3FF) as u16
}

/// The value of f16 bits.
fn f16_value(bits: u16) -> f32 {
    let sign = if bits & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = ((bits >> 10) & 0x1F) as i32;
    let m = (bits & 0x3FF) as f32;
    match exp {
        0 => sign * m * f32::powi(2.0, -24),
        31 => {
            if m == 0.0 {
                sign * f32::INFINITY
            } else {
                f32::NAN
            }
        }
        _ => sign * (1.0 + m / 1024.0) * f32::powi(2.0, exp - 15),
    }
}

fn value(element: Element, bits: u16) -> f32 {
    match element {
        Element::Bf16 => f32::from_bits(u32::from(bits) << 16),
        Element::F16 => f16_value(bits),
    }
}

/// One case: a name and its problem (the offsets of a variable-length one are owned here).
struct Case {
    name: String,
    problem: Problem<'static>,
}

fn leak(v: Vec<u32>) -> &'static [u32] {
    Box::leak(v.into_boxed_slice())
}

fn fixed(
    batch: u32,
    (sq, sk): (u32, u32),
    heads: (u32, u32),
    d: u32,
    causal: bool,
    element: Element,
) -> Case {
    let mut p = Problem::contiguous(batch, (sq, sk), heads, d);
    p.element = element;
    if causal {
        p = p.with_mask(Mask::Causal);
    }
    Case {
        name: format!(
            "fixed b{batch} sq{sq} sk{sk} h{}/{} d{d} {} {:?}",
            heads.0,
            heads.1,
            if causal { "causal" } else { "full" },
            element
        ),
        problem: p,
    }
}

fn varlen(lens: &[(u32, u32)], heads: (u32, u32), d: u32, causal: bool) -> Case {
    let mut oq = vec![0u32];
    let mut ok = vec![0u32];
    for &(q, k) in lens {
        oq.push(oq.last().unwrap() + q);
        ok.push(ok.last().unwrap() + k);
    }
    let mut p = Problem::varlen(leak(oq), leak(ok), heads, d);
    if causal {
        p = p.with_mask(Mask::Causal);
    }
    Case {
        name: format!(
            "varlen {lens:?} h{}/{} d{d} {}",
            heads.0,
            heads.1,
            if causal { "causal" } else { "full" }
        ),
        problem: p,
    }
}

/// `[batch, heads, seq, head_dim]` tensors (torch's SDPA layout) as strides of the
/// `[batch, seq, heads, head_dim]` view, with O padded: rows 8 elements longer than its data.
fn strided(mut case: Case) -> Case {
    let p = &mut case.problem;
    let Batches::Fixed { seq_q, seq_k, .. } = p.batches else {
        return case;
    };
    let d = u64::from(p.head_dim);
    let bhsd = |seq: u32, heads: u32| Strides {
        batch: u64::from(heads) * u64::from(seq) * d,
        seq: d,
        head: u64::from(seq) * d,
    };
    p.q = bhsd(seq_q, p.heads_q);
    p.k = bhsd(seq_k, p.heads_kv);
    p.v = bhsd(seq_k, p.heads_kv);
    let row = u64::from(p.heads_q) * d + 8;
    p.o = Strides {
        batch: row * u64::from(seq_q),
        seq: row,
        head: d,
    };
    case.name = format!("{} strided", case.name);
    case
}

/// The case with a scale of its own.
fn scaled(mut case: Case, scale: f32) -> Case {
    case.problem.scale = Some(scale);
    case.name = format!("{} scale {scale}", case.name);
    case
}

fn cases(quick: bool) -> Vec<Case> {
    use Element::{Bf16, F16};
    let mut v = vec![
        fixed(1, (1, 1), (1, 1), 64, false, Bf16),
        fixed(2, (7, 7), (2, 2), 128, false, Bf16),
        fixed(1, (129, 129), (2, 1), 128, true, Bf16),
        fixed(1, (1000, 1000), (2, 2), 128, false, Bf16),
        fixed(1, (1000, 1000), (2, 2), 128, true, Bf16),
        fixed(2, (100, 300), (4, 1), 64, true, Bf16),
        fixed(1, (300, 100), (2, 2), 64, true, Bf16),
        fixed(1, (257, 129), (8, 1), 256, false, Bf16),
        fixed(1, (200, 333), (8, 1), 256, true, Bf16),
        fixed(1, (129, 1000), (4, 4), 64, false, F16),
        fixed(1, (190, 190), (2, 2), 128, true, F16),
        fixed(1, (65, 65), (1, 1), 256, false, F16),
        strided(fixed(2, (130, 77), (4, 2), 128, false, Bf16)),
        strided(fixed(1, (64, 200), (2, 2), 64, true, Bf16)),
        varlen(&[(1, 1), (129, 300), (7, 7), (200, 77)], (4, 1), 128, false),
        varlen(&[(33, 33), (1, 129), (300, 300)], (8, 8), 64, true),
        varlen(&[(130, 5), (3, 250)], (2, 1), 256, true),
        scaled(fixed(1, (150, 200), (2, 1), 128, true, Bf16), -0.2),
        scaled(fixed(1, (70, 90), (2, 2), 64, false, Bf16), 0.0),
        // Longer than the plan's short_keys: the rows of 192 keys a block (a masked tail of
        // 1100 - 5 * 192 = 140 keys; 1500 = 7 * 192 + 156; causal at D 128 above 4096: 4200 =
        // 21 * 192 + 168), and causal D 128 cases between 1024 and 4096 keys (the short row; the
        // long one as every case's other row).
        fixed(1, (64, 1100), (2, 1), 64, false, Bf16),
        fixed(1, (130, 1300), (2, 2), 128, true, Bf16),
        fixed(1, (60, 2100), (2, 1), 128, true, Bf16),
        fixed(1, (70, 4200), (2, 1), 128, true, Bf16),
        fixed(1, (100, 1500), (2, 1), 128, false, F16),
        fixed(1, (40, 1100), (1, 1), 64, true, F16),
        varlen(&[(70, 1200), (5, 3), (33, 1025)], (2, 1), 64, true),
        scaled(fixed(1, (50, 2100), (1, 1), 128, true, Bf16), -0.2),
    ];
    if !quick {
        // More units than the GPU holds CTAs (or pairs) at once: each persistent CTA runs
        // several, its rings' phases carried from unit to unit (the pairs' among them: 128 to
        // 256 units of 256 or 384 rows, the last of each head partly past the sequence).
        v.push(fixed(4, (300, 160), (16, 4), 128, false, Bf16));
        v.push(fixed(4, (260, 100), (16, 4), 256, false, Bf16));
        v.push(fixed(8, (400, 100), (16, 4), 64, false, Bf16));
        v.push(fixed(1, (1000, 1000), (8, 1), 64, true, Bf16));
        v.push(fixed(1, (777, 1000), (4, 1), 256, false, Bf16));
        v.push(fixed(1, (1500, 1500), (2, 2), 128, true, Bf16));
        v.push(fixed(1, (1300, 2000), (4, 1), 64, false, F16));
        // Causal problems the kernels take folded (`Units::folds`: more than grid / 8 heads and
        // at least four rounds of units on a GPU of up to 132 SMs): three query blocks a head (odd:
        // the middle blocks paired across heads, 177 of them, the last one alone; a partial last
        // block), the same with fewer keys than queries (rows that see none), and one query block
        // a head at head dim 256 (64 keys a block: pairs of unequal key blocks).
        v.push(fixed(1, (300, 300), (177, 3), 64, true, Bf16));
        v.push(fixed(1, (300, 200), (177, 3), 64, true, Bf16));
        v.push(fixed(4, (100, 100), (132, 4), 256, true, Bf16));
        v.push(varlen(
            &[(1000, 1000), (17, 5), (129, 129)],
            (4, 4),
            128,
            true,
        ));
        // A causal variable-length batch whose unit table the host lays out folded
        // (`order::folded`, by the fixed batches' rule: 177 heads of three sequences, 1416 units
        // of 128 rows on a GPU of up to 132 SMs; gpu-attention-host's order tests check that it
        // folds), one sequence with fewer keys than queries.
        v.push(varlen(
            &[(300, 300), (129, 129), (257, 200)],
            (177, 3),
            64,
            true,
        ));
    }
    v
}

/// A case's inputs (as the kernels read them) and their host reference, drawn and computed once
/// for every row the case runs on.
struct Drawn {
    q: Vec<u16>,
    k: Vec<u16>,
    v: Vec<u16>,
    reference: gpu_attention_plan::reference::Output,
    tol: gpu_attention_plan::reference::Tolerance,
}

/// Draws a case's inputs and computes their reference (f64) and error bounds.
fn draw(case: &Case, exp_error: f64, rng: &mut Rng) -> Result<Drawn, String> {
    let p = &case.problem;
    let e = p.extents();
    let draw = |n: u64, rng: &mut Rng| -> (Vec<u16>, Vec<f32>) {
        (0..n).map(|_| encode(p.element, rng.unit())).unzip()
    };
    let (q, qf) = draw(e.q, rng);
    let (k, kf) = draw(e.k, rng);
    let (v, vf) = draw(e.v, rng);
    let inputs = Inputs {
        q: &qf,
        k: &kf,
        v: &vf,
    };
    let reference = forward(p, &inputs).map_err(|e| format!("reference: {e}"))?;
    let tol = tolerance_with(p, &inputs, exp_error).map_err(|e| format!("tolerance: {e}"))?;
    Ok(Drawn {
        q,
        k,
        v,
        reference,
        tol,
    })
}

/// Runs one case on `kernel` (the plan's when `None`); `Ok(line)` or `Err(line)`.
fn run_case(
    attention: &Attention,
    stream: &Arc<CudaStream>,
    case: &Case,
    kernel: Option<KernelSpec>,
    drawn: &Drawn,
) -> Result<String, String> {
    let p = &case.problem;
    let e = p.extents();
    let Drawn {
        q: qb,
        k: kb,
        v: vb,
        reference,
        tol,
    } = drawn;
    let cuda = |e: cudarc::driver::DriverError| format!("CUDA: {e:?}");
    let q = stream.clone_htod(qb).map_err(cuda)?;
    let k = stream.clone_htod(kb).map_err(cuda)?;
    let v = stream.clone_htod(vb).map_err(cuda)?;
    let mut o = stream
        .clone_htod(&vec![SENTINEL; e.o as usize])
        .map_err(cuda)?;
    let mut lse = stream
        .clone_htod(&vec![f32::NAN; e.lse as usize])
        .map_err(cuda)?;
    match kernel {
        None => attention.run(stream, p, &q, &k, &v, &mut o, &mut lse),
        Some(kernel) => attention.run_with(kernel, stream, p, &q, &k, &v, &mut o, &mut lse),
    }
    .map_err(|e| format!("run: {e}"))?;
    let o_host = stream.clone_dtoh(&o).map_err(cuda)?;
    let lse_host = stream.clone_dtoh(&lse).map_err(cuda)?;
    // Which elements of O the problem writes.
    let mut written = vec![false; e.o as usize];
    for b in 0..p.batches.count() {
        let (_, seq_q) = p.batches.queries(b);
        for h in 0..p.heads_q {
            for i in 0..seq_q {
                for d in 0..p.head_dim {
                    written[p.index(Tensor::O, b, i, h, d) as usize] = true;
                }
            }
        }
    }
    let (mut worst_o, mut worst_lse) = (0.0f64, 0.0f64);
    for (i, &bits) in o_host.iter().enumerate() {
        if !written[i] {
            if bits != SENTINEL {
                return Err(format!(
                    "O[{i}] is outside the problem but was written ({bits:#06x})"
                ));
            }
            continue;
        }
        let got = f64::from(value(p.element, bits));
        let err = (got - reference.o[i]).abs();
        if err.is_nan() || err > tol.o {
            return Err(format!(
                "O[{i}] = {got}, reference {}, error {err:.3e} above the bound {:.3e}",
                reference.o[i], tol.o
            ));
        }
        worst_o = worst_o.max(err);
    }
    for (i, (&got, &want)) in lse_host.iter().zip(&reference.lse).enumerate() {
        let got = f64::from(got);
        if want == f64::NEG_INFINITY {
            if got != f64::NEG_INFINITY {
                return Err(format!(
                    "LSE[{i}] = {got}, reference -inf (a row that sees no key)"
                ));
            }
            continue;
        }
        let err = (got - want).abs();
        if err.is_nan() || err > tol.lse {
            return Err(format!(
                "LSE[{i}] = {got}, reference {want}, error {err:.3e} above the bound {:.3e}",
                tol.lse
            ));
        }
        worst_lse = worst_lse.max(err);
    }
    Ok(format!(
        "O max error {worst_o:.2e} (bound {:.2e}), LSE {worst_lse:.2e} (bound {:.2e})",
        tol.o, tol.lse
    ))
}

/// The host API's errors: each bad input is an `Err` with words, before any launch.
fn errors(attention: &Attention, stream: &Arc<CudaStream>) -> Vec<(String, Result<(), String>)> {
    let mut out = Vec::new();
    let alloc = |n: usize| stream.alloc_zeros::<u16>(n).unwrap();
    let good = Problem::contiguous(1, (64, 64), (2, 2), 64);
    let e = good.extents();
    let (q, k, v) = (
        alloc(e.q as usize),
        alloc(e.k as usize),
        alloc(e.v as usize),
    );
    let mut o = alloc(e.o as usize);
    let mut lse = stream.alloc_zeros::<f32>(e.lse as usize).unwrap();
    let mut expect =
        |name: &str, p: Problem<'_>, o: &mut cudarc::driver::CudaSlice<u16>, want: &str| {
            let got = attention.run(stream, &p, &q, &k, &v, o, &mut lse);
            let verdict = match got {
                Err(err) if err.to_string().contains(want) => Ok(()),
                Err(err) => Err(format!("the error `{err}` does not say `{want}`")),
                Ok(()) => Err("accepted".to_string()),
            };
            out.push((name.to_string(), verdict));
        };
    let mut bad = good;
    bad.head_dim = 96;
    expect("head dim 96", bad, &mut o, "96");
    let mut bad = good;
    bad.heads_kv = 3;
    expect("heads_kv not dividing heads_q", bad, &mut o, "heads");
    let mut bad = good;
    bad.q.seq = 130;
    expect("Q's row stride not a multiple of 8", bad, &mut o, "stride");
    let offsets_q = [0u32, 10, 5];
    let offsets_k = [0u32, 10, 20];
    expect(
        "offsets not monotonic",
        Problem::varlen(&offsets_q, &offsets_k, (2, 2), 64),
        &mut o,
        "offset",
    );
    let mut short = alloc(e.o as usize - 1);
    expect("O one element short", good, &mut short, "O");
    // A kernel of another head dimension: an `Error::Kernel` that says so.
    let other = attention
        .kernels_for(&Problem::contiguous(1, (64, 64), (2, 2), 128))
        .first()
        .copied();
    let verdict = match other {
        None => Err("the module has no kernel of head dim 128".to_string()),
        Some(kernel) => {
            match attention.run_with(kernel, stream, &good, &q, &k, &v, &mut o, &mut lse) {
                Err(err @ Error::Kernel(_)) if err.to_string().contains("head dim") => Ok(()),
                Err(err) => Err(format!("another error: {err}")),
                Ok(()) => Err("accepted".to_string()),
            }
        }
    };
    out.push(("a kernel of another head dimension".to_string(), verdict));
    // A row of CTA pairs on a causal problem (the halves of a pair would read different key
    // blocks): an `Error::Kernel` that says so, and `kernels_for` does not offer it.
    let causal = Problem::contiguous(1, (32, 32), (2, 2), 128).with_mask(Mask::Causal);
    let pair = gpu_attention_plan::abi::KERNELS
        .iter()
        .find(|k| k.cluster == 2 && k.head_dim == 128 && k.element == causal.element)
        .copied();
    let verdict = match pair {
        None => Err("the module has no row of CTA pairs at head dim 128".to_string()),
        Some(_)
            if attention
                .kernels_for(&causal)
                .iter()
                .any(|k| k.cluster == 2) =>
        {
            Err("kernels_for offers a row of CTA pairs for a causal problem".to_string())
        }
        Some(kernel) => {
            match attention.run_with(kernel, stream, &causal, &q, &k, &v, &mut o, &mut lse) {
                Err(err @ Error::Kernel(_)) if err.to_string().contains("pairs") => Ok(()),
                Err(err) => Err(format!("another error: {err}")),
                Ok(()) => Err("accepted".to_string()),
            }
        }
    };
    out.push((
        "a row of CTA pairs on a causal problem".to_string(),
        verdict,
    ));
    out
}

/// A stream and buffers of a second cudarc handle of the module's context (`context(0)` again:
/// cudarc makes a new handle of the device's one primary context on every call) are the
/// module's context: the first case runs on them and matches the reference. The host API
/// compared the handles and refused them as "another CUDA context" (found by a review,
/// 2026-12-05).
fn second_handle(attention: &Attention, rng: &mut Rng) -> Result<(), String> {
    let ctx = gpu_attention_host::context(0).map_err(|e| e.to_string())?;
    let stream = ctx.new_stream().map_err(|e| format!("CUDA: {e:?}"))?;
    let case = cases(true).into_iter().next().ok_or("no case to run")?;
    let drawn = draw(&case, 0.0, rng)?;
    run_case(attention, &stream, &case, None, &drawn).map(|_| ())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let quick = args.iter().any(|a| a == "--quick");
    // Under compute-sanitizer: the small cases only (each still covers its class: tails,
    // causal, GQA, varlen, strides, both types).
    let sanitize = args.iter().any(|a| a == "--sanitize");
    // Only the programmatic chains (the suite runs them alone on the unwaited module too).
    let only_programmatic = args.iter().any(|a| a == "--programmatic");
    // Only the CUDA graph capture tests.
    let only_capture = args.iter().any(|a| a == "--capture");
    // A variant module's exponential error (the reference module's docs: `tolerance_with`).
    let exp_error = match args.iter().find_map(|a| a.strip_prefix("--exp-error=")) {
        None => 0.0,
        Some(v) => match v.parse::<f64>() {
            Ok(e) if (0.0..0.5).contains(&e) => e,
            _ => {
                eprintln!("error: --exp-error={v}: give a relative error in [0, 0.5), as 1.1e-4");
                return ExitCode::from(exit::SETUP);
            }
        },
    };
    let module = args.iter().find(|a| !a.starts_with("--")).cloned();
    let ctx = match gpu_attention_host::context(0) {
        Ok(ctx) => ctx,
        Err(Error::NoDriver(why)) => {
            eprintln!("error: {why}");
            return ExitCode::from(exit::NO_DRIVER);
        }
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(exit::SETUP);
        }
    };
    let attention = match &module {
        Some(path) => Attention::load(&ctx, path),
        None => Attention::new(&ctx),
    };
    let attention = match attention {
        Ok(a) => a,
        Err(e) => {
            eprintln!("error: loading the module: {e}");
            return ExitCode::from(exit::SETUP);
        }
    };
    let stream: Arc<CudaStream> = ctx.default_stream();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let (mut pass, mut fail) = (0, 0);
    let cases: Vec<Case> = cases(quick || sanitize)
        .into_iter()
        .filter(|c| !sanitize || c.problem.visible_pairs() <= 300_000)
        .filter(|_| !only_programmatic && !only_capture)
        .collect();
    // The rows each case ran on: every row of the table must have run on some case (a row that
    // `kernels_for` stopped offering would otherwise go untested with every case passing).
    let mut ran = std::collections::BTreeSet::new();
    let full_run = !cases.is_empty() && !quick && !sanitize;
    for case in cases {
        // The plan's kernel, then every other row of the module that computes the problem
        // (the other key block, the three-warpgroup row at head dim 64).
        let default = attention.kernel_for(&case.problem).ok();
        ran.extend(default.map(|k| k.entry));
        let others = attention
            .kernels_for(&case.problem)
            .into_iter()
            .filter(|k| Some(*k) != default);
        let drawn = match draw(&case, exp_error, &mut rng) {
            Ok(drawn) => drawn,
            Err(line) => {
                fail += 1;
                println!("FAIL {}: {line}", case.name);
                continue;
            }
        };
        for kernel in std::iter::once(None).chain(others.map(Some)) {
            let name = match kernel {
                None => case.name.to_string(),
                Some(k) => {
                    ran.insert(k.entry);
                    format!("{} [{}]", case.name, k.entry)
                }
            };
            match run_case(&attention, &stream, &case, kernel, &drawn) {
                Ok(line) => {
                    pass += 1;
                    println!("PASS {name}: {line}");
                }
                Err(line) => {
                    fail += 1;
                    println!("FAIL {name}: {line}");
                }
            }
        }
    }
    if full_run {
        // Every row of the table, the 192-row rows at head dim 64 among them.
        for k in gpu_attention_plan::abi::KERNELS {
            if ran.contains(k.entry) {
                pass += 1;
                println!("PASS every case's rows include {}", k.entry);
            } else {
                fail += 1;
                println!("FAIL no case ran on {}", k.entry);
            }
        }
    }
    // The host API's error checks print as `error: NAME`; the programmatic chains and the capture
    // tests by their names alone (the negative control looks for `FAIL NAME`).
    let named = |checks: Vec<(String, Result<(), String>)>, prefix: &str| {
        checks
            .into_iter()
            .map(|(name, verdict)| (format!("{prefix}{name}"), verdict))
            .collect::<Vec<_>>()
    };
    let checks = if only_programmatic {
        programmatic::run(&attention, &stream)
    } else if only_capture {
        capture::run(&ctx, &attention)
    } else {
        let mut checks = named(errors(&attention, &stream), "error: ");
        if !sanitize {
            checks.extend(programmatic::run(&attention, &stream));
            checks.extend(capture::run(&ctx, &attention));
            checks.push((
                "prepare_on_the_default_stream_from_a_fresh_thread".to_string(),
                thread::prepare_from_a_fresh_thread(&ctx, &attention),
            ));
            checks.push((
                "a_second_handle_of_the_modules_context_is_that_context".to_string(),
                second_handle(&attention, &mut rng),
            ));
        }
        checks
    };
    for (name, verdict) in checks {
        match verdict {
            Ok(()) => {
                pass += 1;
                println!("PASS {name}");
            }
            Err(why) => {
                fail += 1;
                println!("FAIL {name}: {why}");
            }
        }
    }
    println!("attention-test: {pass} passed, {fail} failed");
    if fail == 0 {
        ExitCode::from(exit::PASSED)
    } else {
        ExitCode::from(exit::TEST_FAILED)
    }
}
