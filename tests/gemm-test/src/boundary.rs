//! The host API where a user's program meets it: modules, streams, contexts.
//!
//! Each test is one function returning `Err` with what went wrong. They need a GPU and the
//! module `cargo xtask build` writes; `main` runs them after the exact cases (they put the
//! context in cudarc's multi-stream mode, which the cases do not need).
//!
//! - A module whose entries take other parameters than `launch` passes (a module built a few
//!   commits earlier), one without an entry, one without the launch bounds the build adds, and one
//!   without the ABI version global or with another version: `Gemm::load` must refuse each, with
//!   an error that names the entry and says what to do.
//! - Two streams (cudarc tracks each buffer's reads and writes with events): D read on another
//!   stream right after the GEMM, and C overwritten on another stream right after it, must both
//!   be ordered after the GEMM. The problem takes milliseconds (2048 x 2048 x 524288), so that an
//!   unordered read or write lands while the kernel still runs.
//! - A second context on the same GPU: a prepared problem launched on its stream, and a run on
//!   its stream with buffers of the first context, must be errors.

use std::sync::Arc;

use cudarc::driver::{CudaContext, CudaSlice, CudaStream, DevicePtrMut, sys};
use gpu_gemm_host::{ABI_SYMBOL, ABI_VERSION, Addend, Gemm, Kernel, Shape, bf16};

/// A named test and its outcome.
pub type Outcome = (&'static str, Result<(), String>);

/// Runs the boundary tests on `ctx` with the module at `ptx`: all of them, or under a sanitizer
/// (`all == false`) only those that make no failing CUDA call on purpose (the refused modules'
/// failed lookups are API errors to compute-sanitizer) and no long problem.
pub fn run(ctx: &Arc<CudaContext>, gemm: &Gemm, ptx: &str, all: bool) -> Vec<Outcome> {
    let module = |name, test: fn(&Arc<CudaContext>, &str) -> Result<(), String>| -> Outcome {
        (name, test(ctx, ptx))
    };
    let mut outcomes = Vec::new();
    if all {
        outcomes.extend([
            module(
                "load_rejects_an_entry_with_an_extra_parameter",
                load_rejects_an_entry_with_an_extra_parameter,
            ),
            module("load_names_a_missing_entry", load_names_a_missing_entry),
            module(
                "load_rejects_a_module_without_launch_bounds",
                load_rejects_a_module_without_launch_bounds,
            ),
            module(
                "load_rejects_a_module_without_its_abi_version",
                load_rejects_a_module_without_its_abi_version,
            ),
            module(
                "load_rejects_a_module_of_another_abi_version",
                load_rejects_a_module_of_another_abi_version,
            ),
            (
                "d_read_on_another_stream_waits_for_run",
                d_read_on_another_stream_waits_for_run(ctx, gemm),
            ),
            (
                "c_overwritten_on_another_stream_waits_for_run",
                c_overwritten_on_another_stream_waits_for_run(ctx, gemm),
            ),
            (
                "prepared_launches_are_ordered_with_other_streams",
                prepared_launches_are_ordered_with_other_streams(ctx, gemm),
            ),
        ]);
    }
    outcomes.extend([
        (
            "prepared_launch_with_other_buffers_is_an_error",
            prepared_launch_with_other_buffers_is_an_error(ctx, gemm),
        ),
        (
            "prepared_launch_on_another_contexts_stream_is_an_error",
            prepared_launch_on_another_contexts_stream_is_an_error(ctx, gemm),
        ),
        (
            "prepare_on_the_default_stream_from_a_fresh_thread",
            prepare_on_the_default_stream_from_a_fresh_thread(ctx, gemm),
        ),
        // Last: before the fix, this launch went to the wrong context.
        (
            "run_on_another_contexts_stream_is_an_error",
            run_on_another_contexts_stream_is_an_error(ctx, gemm),
        ),
    ]);
    outcomes
}

fn cuda(what: &'static str) -> impl Fn(cudarc::driver::DriverError) -> String {
    move |e| format!("{what}: {e:?}")
}

/// Loads the module at `ptx` rewritten by `edit` (written next to the system's temporary
/// files), and returns what `Gemm::load` said.
fn load_edited(
    ctx: &Arc<CudaContext>,
    ptx: &str,
    name: &str,
    edit: impl Fn(&str) -> String,
) -> Result<Result<Gemm, String>, String> {
    let text = std::fs::read_to_string(ptx).map_err(|e| format!("reading {ptx}: {e}"))?;
    let edited = edit(&text);
    if edited == text {
        return Err(format!("{name}: the edit changed nothing in {ptx}"));
    }
    let path = std::env::temp_dir().join(format!("gemm-test-{}-{name}.ptx", std::process::id()));
    std::fs::write(&path, edited).map_err(|e| format!("writing {}: {e}", path.display()))?;
    let loaded = Gemm::load(ctx, path.to_str().expect("a UTF-8 temporary path"));
    let _ = std::fs::remove_file(&path);
    Ok(loaded.map_err(|e| e.to_string()))
}

/// Requires `Err` from the load, with every one of `words` in its message.
fn refused(loaded: Result<Gemm, String>, words: &[&str]) -> Result<(), String> {
    match loaded {
        Ok(_) => Err("Gemm::load accepted the module".into()),
        Err(message) => match words.iter().find(|w| !message.contains(*w)) {
            Some(missing) => Err(format!(
                "Gemm::load refused the module, but its error does not say `{missing}`: {message}"
            )),
            None => Ok(()),
        },
    }
}

/// Every `.entry` of `text` with one more `.u32` parameter, as a module built for a launch with
/// another parameter list has.
fn with_extra_parameter(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 1024);
    let mut entry: Option<String> = None;
    for line in text.lines() {
        if let Some(name) = line
            .trim_start()
            .strip_prefix(".visible .entry ")
            .and_then(|rest| rest.strip_suffix('('))
        {
            entry = Some(name.to_string());
        } else if line == ")"
            && let Some(name) = entry.take()
        {
            // The parameter list ends: the last parameter gets a comma, then one more.
            while out.ends_with('\n') {
                out.pop();
            }
            out.push_str(",\n\t.param .u32 ");
            out.push_str(&name);
            out.push_str("_param_extra\n");
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

fn load_rejects_an_entry_with_an_extra_parameter(
    ctx: &Arc<CudaContext>,
    ptx: &str,
) -> Result<(), String> {
    let loaded = load_edited(ctx, ptx, "extra-parameter", with_extra_parameter)?;
    refused(loaded, &[Kernel::ALL[0].entry(), "parameter", "rebuild"])
}

fn load_names_a_missing_entry(ctx: &Arc<CudaContext>, ptx: &str) -> Result<(), String> {
    let entry = Kernel::PersistentSlim.entry();
    let loaded = load_edited(ctx, ptx, "missing-entry", |text| {
        text.replace(
            &format!(".entry {entry}("),
            &format!(".entry {entry}_renamed("),
        )
    })?;
    refused(loaded, &[entry, "rebuild"])
}

fn load_rejects_a_module_without_launch_bounds(
    ctx: &Arc<CudaContext>,
    ptx: &str,
) -> Result<(), String> {
    // rustc's own PTX: the build adds `.maxntid` to each entry (rustc has no launch bounds).
    let loaded = load_edited(ctx, ptx, "no-maxntid", |text| {
        text.lines()
            .filter(|line| !line.starts_with(".maxntid"))
            .map(|line| format!("{line}\n"))
            .collect()
    })?;
    refused(loaded, &[".maxntid", "cargo xtask build"])
}

fn load_rejects_a_module_without_its_abi_version(
    ctx: &Arc<CudaContext>,
    ptx: &str,
) -> Result<(), String> {
    let loaded = load_edited(ctx, ptx, "no-abi-version", |text| {
        text.lines()
            .filter(|line| !line.contains(ABI_SYMBOL))
            .map(|line| format!("{line}\n"))
            .collect()
    })?;
    refused(loaded, &[ABI_SYMBOL, "rebuild"])
}

fn load_rejects_a_module_of_another_abi_version(
    ctx: &Arc<CudaContext>,
    ptx: &str,
) -> Result<(), String> {
    let loaded = load_edited(ctx, ptx, "other-abi-version", |text| {
        text.lines()
            .map(|line| {
                if line.contains(ABI_SYMBOL) {
                    line.replace(
                        &format!("{{{ABI_VERSION}}}"),
                        &format!("{{{}}}", ABI_VERSION + 1),
                    )
                } else {
                    line.to_string()
                }
            })
            .map(|line| format!("{line}\n"))
            .collect()
    })?;
    refused(
        loaded,
        &[&format!("version {}", ABI_VERSION + 1), "rebuild"],
    )
}

/// Sets every element of `buffer` to `bits` on `stream` (a write cudarc tracks).
fn fill(stream: &Arc<CudaStream>, buffer: &mut CudaSlice<u16>, bits: u16) -> Result<(), String> {
    let n = buffer.len();
    let (pointer, _write) = buffer.device_ptr_mut(stream);
    stream
        .context()
        .bind_to_thread()
        .map_err(cuda("binding the context"))?;
    // SAFETY: `pointer` holds `n` u16 elements, written on `stream` (the guard records it).
    let status = unsafe { sys::cuMemsetD16Async(pointer, bits, n, stream.cu_stream()) };
    if status != sys::CUresult::CUDA_SUCCESS {
        return Err(format!("cuMemsetD16Async: {status:?}"));
    }
    Ok(())
}

/// A buffer of `n` bf16 elements, every one `bits`, written on `stream`.
fn filled(stream: &Arc<CudaStream>, n: usize, bits: u16) -> Result<CudaSlice<u16>, String> {
    let mut buffer = stream
        .alloc_zeros::<u16>(n)
        .map_err(cuda("allocating a test buffer"))?;
    fill(stream, &mut buffer, bits)?;
    Ok(buffer)
}

/// The long problem of the stream tests: 2048 x 2048 x 524288, A = B = 1 (each 2 GiB).
const LONG: Shape = Shape {
    m: 2048,
    n: 2048,
    k: 524_288,
};

/// [`LONG`] on two streams of one context: A = B = 1, C = 2 and D poisoned, written on `first`
/// and synchronised. With `alpha = 1 / K` and beta 1, D comes out as 3 everywhere.
struct LongProblem {
    first: Arc<CudaStream>,
    second: Arc<CudaStream>,
    a: CudaSlice<u16>,
    b: CudaSlice<u16>,
    c: CudaSlice<u16>,
    d: CudaSlice<u16>,
}

impl LongProblem {
    fn new(ctx: &Arc<CudaContext>) -> Result<Self, String> {
        let first = ctx.new_stream().map_err(cuda("a stream"))?;
        let second = ctx.new_stream().map_err(cuda("a stream"))?;
        let (m, n, k) = (LONG.m as usize, LONG.n as usize, LONG.k as usize);
        let a = filled(&first, m * k, bf16(1.0))?;
        let b = filled(&first, n * k, bf16(1.0))?;
        let c = filled(&first, m * n, bf16(2.0))?;
        let d = filled(&first, m * n, POISON)?;
        first.synchronize().map_err(cuda("filling A, B, C and D"))?;
        Ok(Self {
            first,
            second,
            a,
            b,
            c,
            d,
        })
    }

    /// The alpha of `D = 1 + C`.
    const ALPHA: f32 = 1.0 / LONG.k as f32;
}

/// `got` must be `want` everywhere.
fn all_equal(got: &[u16], want: f32, what: &str) -> Result<(), String> {
    let right = got.iter().filter(|&&x| x == bf16(want)).count();
    if right == got.len() {
        Ok(())
    } else {
        let first = got.iter().position(|&x| x != bf16(want)).unwrap_or(0);
        Err(format!(
            "{what}: {right} of {} elements are {want}; the first other is element {first}: {}",
            got.len(),
            gpu_gemm_host::f32_of(got[first])
        ))
    }
}

const POISON: u16 = 0xFFC1;

fn d_read_on_another_stream_waits_for_run(
    ctx: &Arc<CudaContext>,
    gemm: &Gemm,
) -> Result<(), String> {
    let LongProblem {
        first,
        second,
        a,
        b,
        mut d,
        ..
    } = LongProblem::new(ctx)?;
    gemm.run(&first, LONG, 1.0, &a, &b, 0.0, None, &mut d)
        .map_err(|e| e.to_string())?;
    // cudarc orders this read after the GEMM only if the GEMM recorded its write of D.
    let got = second.clone_dtoh(&d).map_err(cuda("reading D"))?;
    first.synchronize().map_err(cuda("the GEMM"))?;
    all_equal(&got, LONG.k as f32, "D read on the second stream")
}

fn c_overwritten_on_another_stream_waits_for_run(
    ctx: &Arc<CudaContext>,
    gemm: &Gemm,
) -> Result<(), String> {
    let LongProblem {
        first,
        second,
        a,
        b,
        mut c,
        mut d,
    } = LongProblem::new(ctx)?;
    gemm.run(
        &first,
        LONG,
        LongProblem::ALPHA,
        &a,
        &b,
        1.0,
        Some(&c),
        &mut d,
    )
    .map_err(|e| e.to_string())?;
    // cudarc orders this write after the GEMM's reads of C only if the GEMM recorded them.
    second.memset_zeros(&mut c).map_err(cuda("overwriting C"))?;
    second.synchronize().map_err(cuda("overwriting C"))?;
    first.synchronize().map_err(cuda("the GEMM"))?;
    let got = first.clone_dtoh(&d).map_err(cuda("reading D"))?;
    all_equal(&got, 3.0, "D after C was overwritten on the second stream")
}

/// A shape and its A, B and D.
type Problem = (Shape, CudaSlice<u16>, CudaSlice<u16>, CudaSlice<u16>);

/// Small operands for the context tests: 256 x 256 x 64, on `stream`.
fn small(stream: &Arc<CudaStream>) -> Result<Problem, String> {
    let shape = Shape {
        m: 256,
        n: 256,
        k: 64,
    };
    let a = filled(stream, 256 * 64, bf16(1.0))?;
    let b = filled(stream, 256 * 64, bf16(1.0))?;
    let d = filled(stream, 256 * 256, POISON)?;
    stream.synchronize().map_err(cuda("small operands"))?;
    Ok((shape, a, b, d))
}

/// Requires an error that says another context was involved.
fn context_error(result: Result<(), gpu_gemm_host::GemmError>, what: &str) -> Result<(), String> {
    match result {
        Ok(()) => Err(format!("{what} was accepted")),
        Err(e) if e.to_string().contains("another CUDA context") => Ok(()),
        Err(e) => Err(format!(
            "{what} failed, but the error does not say that another CUDA context was involved: {e}"
        )),
    }
}

fn prepared_launches_are_ordered_with_other_streams(
    ctx: &Arc<CudaContext>,
    gemm: &Gemm,
) -> Result<(), String> {
    let LongProblem {
        first,
        second,
        a,
        b,
        mut c,
        mut d,
    } = LongProblem::new(ctx)?;
    let alpha = LongProblem::ALPHA;
    let kernel = gemm.default_kernel(LONG);
    let prepared = gemm
        .prepare(&first, kernel, LONG, &a, &b, Some(&c), &d)
        .map_err(|e| e.to_string())?;
    // First launch: D read on the second stream must see the GEMM's result.
    gemm.launch(&first, &prepared, alpha, 1.0, &a, &b, Some(&c), &mut d)
        .map_err(|e| e.to_string())?;
    let got = second.clone_dtoh(&d).map_err(cuda("reading D"))?;
    all_equal(
        &got,
        3.0,
        "D read on the second stream after the first launch",
    )?;
    // Second launch over a poisoned D: C zeroed on the second stream must wait for its reads.
    fill(&first, &mut d, POISON)?;
    gemm.launch(&first, &prepared, alpha, 1.0, &a, &b, Some(&c), &mut d)
        .map_err(|e| e.to_string())?;
    second.memset_zeros(&mut c).map_err(cuda("overwriting C"))?;
    second.synchronize().map_err(cuda("overwriting C"))?;
    let got = first.clone_dtoh(&d).map_err(cuda("reading D"))?;
    all_equal(
        &got,
        3.0,
        "D of the second launch, C overwritten on the second stream right after it",
    )
}

/// `prepare` on the legacy default stream from a thread that has bound no context: the capture
/// query `prepare` makes reads the calling thread's context for that stream, and was made with
/// none bound (the review of dac735c: a spurious `GemmError::Cuda`). cudarc's tracking is off
/// for the call, so that nothing else binds the context first; the result is checked.
fn prepare_on_the_default_stream_from_a_fresh_thread(
    ctx: &Arc<CudaContext>,
    gemm: &Gemm,
) -> Result<(), String> {
    let stream = ctx.default_stream();
    let (shape, a, b, mut d) = small(&stream)?;
    let kernel = gemm.default_kernel(shape);
    let tracking = ctx.is_event_tracking();
    // SAFETY: the buffers are this test's, used on the one stream, in order; restored below.
    unsafe { ctx.disable_event_tracking() };
    let prepared = std::thread::scope(|s| {
        s.spawn(|| gemm.prepare(&stream, kernel, shape, &a, &b, None, &d))
            .join()
    });
    if tracking {
        // SAFETY: as above.
        unsafe { ctx.enable_event_tracking() };
    }
    let prepared = prepared
        .map_err(|_| "the thread panicked".to_string())?
        .map_err(|e| format!("prepare from a fresh thread: {e}"))?;
    gemm.launch(&stream, &prepared, 1.0, 0.0, &a, &b, None, &mut d)
        .map_err(|e| e.to_string())?;
    let got = stream.clone_dtoh(&d).map_err(cuda("reading D"))?;
    // A and B are ones, K = 64.
    all_equal(&got, 64.0, "D of the launch prepared from a fresh thread")
}

fn prepared_launch_with_other_buffers_is_an_error(
    ctx: &Arc<CudaContext>,
    gemm: &Gemm,
) -> Result<(), String> {
    let stream = ctx.default_stream();
    let (shape, a, b, mut d) = small(&stream)?;
    let mut other = filled(&stream, d.len(), POISON)?;
    let c = filled(&stream, d.len(), bf16(1.0))?;
    let prepared = gemm
        .prepare(&stream, Kernel::Persistent, shape, &a, &b, Some(&c), &d)
        .map_err(|e| e.to_string())?;
    let mut problems = Vec::new();
    if gemm
        .launch(&stream, &prepared, 1.0, 1.0, &a, &b, Some(&c), &mut other)
        .is_ok()
    {
        problems.push("a launch into another D was accepted");
    }
    if gemm
        .launch(
            &stream,
            &prepared,
            1.0,
            1.0,
            &a,
            &b,
            Addend::InPlace,
            &mut d,
        )
        .is_ok()
    {
        problems.push("an in-place launch of a problem prepared with its own C was accepted");
    }
    if gemm
        .launch(&stream, &prepared, 1.0, 1.0, &a, &b, None, &mut d)
        .is_ok()
    {
        problems.push("beta 1 without C was accepted");
    }
    gemm.launch(&stream, &prepared, 1.0, 1.0, &a, &b, Some(&c), &mut d)
        .map_err(|e| format!("the launch it was prepared for failed: {e}"))?;
    let got = stream.clone_dtoh(&d).map_err(cuda("reading D"))?;
    all_equal(&got, 65.0, "D of the prepared launch (K + C)")?;
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("; "))
    }
}

fn prepared_launch_on_another_contexts_stream_is_an_error(
    ctx: &Arc<CudaContext>,
    gemm: &Gemm,
) -> Result<(), String> {
    let stream = ctx.default_stream();
    let (shape, a, b, mut d) = small(&stream)?;
    let other = CudaContext::new_non_primary(0, 0).map_err(cuda("a second context"))?;
    let prepared = gemm
        .prepare(&stream, Kernel::Persistent, shape, &a, &b, None, &d)
        .map_err(|e| e.to_string())?;
    // Both default streams are the legacy stream (handle 0) of their own context.
    let result = gemm.launch(
        &other.default_stream(),
        &prepared,
        1.0,
        0.0,
        &a,
        &b,
        None,
        &mut d,
    );
    stream.synchronize().map_err(cuda("the GEMM"))?;
    context_error(
        result,
        "launching a prepared problem on another context's default stream",
    )
}

fn run_on_another_contexts_stream_is_an_error(
    ctx: &Arc<CudaContext>,
    gemm: &Gemm,
) -> Result<(), String> {
    let stream = ctx.default_stream();
    let (shape, a, b, mut d) = small(&stream)?;
    let other = CudaContext::new_non_primary(0, 0).map_err(cuda("a second context"))?;
    let foreign = other
        .new_stream()
        .map_err(cuda("a stream of the second context"))?;
    let result = gemm.run(&foreign, shape, 1.0, &a, &b, 0.0, None, &mut d);
    let _ = foreign.synchronize();
    context_error(result, "running on a stream of another context")
}
