//! `--host-time`: the host's microseconds per GEMM call, ours beside cuBLAS's, in one program.
//!
//! For each shape (default [`SHAPES`]: decode M = 1, 16, 64 with N = K = 4096, and a mid shape),
//! on the benchmark's one stream, beta 0:
//!
//! - `run-cold`: `Gemm::run` with no plan kept (the cache cleared before each call): the tensor
//!   maps, their upload, the split-K workspace, the launch. One call timed at a time;
//! - `run-hit`: `Gemm::run` repeated (its plan kept), with cudarc's event tracking as the
//!   benchmark's context has it (on: the context has a stream of its own), and `run-hit-untracked`
//!   with it off (what a single-stream program pays);
//! - `launch`: `Gemm::launch` of a prepared problem (the buffers checked and tracked), and
//!   `launch-raw` (`Gemm::launch_raw`: nothing checked or tracked);
//! - `cublasGemmEx` and `cublasLtMatmul` (cuBLASLt's first heuristic choice, its plan made
//!   beforehand as the benchmark does): cuBLAS's own per-call host time;
//! - `graph-1`: `cuGraphLaunch` of a graph that captured one `Gemm::run`, and `graph-N`: of a
//!   graph of [`CALLS`] captured runs, per GEMM;
//! - `run-hit-pdl`, `run-hit-untracked-pdl`, `launch-raw-pdl` and `graph-N-pdl`: `run-hit`,
//!   `run-hit-untracked`, `launch-raw` and `graph-N` with `Gemm::set_programmatic_launch(true)`,
//!   each call a programmatic dependent of the one before it: their wall time against the plain
//!   ones' is what the overlap of one GEMM's start with the end of the one before saves in a chain
//!   (`graph-N` is the one whose wall time is the GPU's alone, the host far ahead). `run-hit-pdl`
//!   is tracked: each run waits on and records the buffers' events between the kernels, which
//!   may order them fully (then it saves nothing, and `run-hit-untracked-pdl` shows the overlap).
//!
//! Method: a batch is [`CALLS`] calls back to back, the stream not synchronised inside it (so
//! the host time is the enqueue alone, the GPU running behind); host time per call = the batch's
//! time / [`CALLS`]; median (and min, max) over the batches. Each batch also gives the wall time
//! per call, enqueue and the stream's completion (`wall`): where the host is slower than the GPU
//! this is the call rate a model gets. `run-cold` is one call per sample (the cache must be
//! cleared between calls), its wall time with the stream synchronised after it.

use std::io::Write as _;
use std::sync::Arc;
use std::time::Instant;

use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, sys};

use crate::bench::{CSV_HEADER, Options};
use crate::check::median;
use crate::cuda::{Device, Timer};
use crate::gemm::{CublasGemmEx, CublasLt, Gemm, LtChoice, Operands};
use crate::problem::{Problem, Shape};

/// The default shapes: decode (M = 1, 16, 64; N = K = 4096) and a mid shape (M = 512).
pub const SHAPES: [Shape; 4] = [
    Shape {
        m: 1,
        n: 4096,
        k: 4096,
    },
    Shape {
        m: 16,
        n: 4096,
        k: 4096,
    },
    Shape {
        m: 64,
        n: 4096,
        k: 4096,
    },
    Shape {
        m: 512,
        n: 4096,
        k: 4096,
    },
];

/// Calls per batch: enough to average the clock's resolution, few enough that the launch queue
/// (about a thousand kernels) never fills, so that no enqueue waits for the GPU.
pub const CALLS: usize = 100;

/// One measure of one shape: microseconds per call over the batches.
#[derive(Clone, Debug)]
pub struct Measure {
    /// What was timed (no commas).
    pub name: &'static str,
    /// Host microseconds per call, one per batch.
    pub host_us: Vec<f64>,
    /// Wall microseconds per call (enqueue and completion), one per batch.
    pub wall_us: Vec<f64>,
}

impl Measure {
    fn host(&self) -> Option<f64> {
        median(&self.host_us)
    }

    fn wall(&self) -> Option<f64> {
        median(&self.wall_us)
    }
}

fn cuda(what: &'static str) -> impl Fn(cudarc::driver::DriverError) -> String {
    move |e| format!("{what}: {e:?}")
}

/// Times `batches` batches of `calls` calls of `call` (after one untimed batch), the stream
/// synchronised between batches only.
fn batches(
    stream: &Arc<CudaStream>,
    batches: usize,
    calls: usize,
    name: &'static str,
    mut call: impl FnMut() -> Result<(), String>,
) -> Result<Measure, String> {
    let mut m = Measure {
        name,
        host_us: Vec::new(),
        wall_us: Vec::new(),
    };
    for batch in 0..=batches {
        stream.synchronize().map_err(cuda("synchronise"))?;
        let start = Instant::now();
        for _ in 0..calls {
            call().map_err(|e| format!("{name}: {e}"))?;
        }
        let enqueued = start.elapsed();
        stream
            .synchronize()
            .map_err(|e| format!("{name}: the GPU failed: {e:?}"))?;
        let done = start.elapsed();
        if batch > 0 {
            m.host_us.push(enqueued.as_secs_f64() * 1e6 / calls as f64);
            m.wall_us.push(done.as_secs_f64() * 1e6 / calls as f64);
        }
    }
    Ok(m)
}

/// The buffers of one shape (A, B, D; no C: beta 0), zero.
struct Buffers {
    a: CudaSlice<u16>,
    b: CudaSlice<u16>,
    d: CudaSlice<u16>,
}

/// Every measure of one shape.
fn measure_shape(
    device: &Device,
    gemm: &gpu_gemm_host::Gemm,
    shape: Shape,
    reps: usize,
) -> Result<Vec<Measure>, String> {
    let stream = &device.stream;
    let ours = gpu_gemm_host::Shape {
        m: u32::try_from(shape.m).map_err(|_| "M above 2^32")?,
        n: u32::try_from(shape.n).map_err(|_| "N above 2^32")?,
        k: u32::try_from(shape.k).map_err(|_| "K above 2^32")?,
    };
    let (ea, eb, ec) = shape.elems();
    let alloc = |n| stream.alloc_zeros::<u16>(n).map_err(cuda("allocating"));
    let mut buf = Buffers {
        a: alloc(ea)?,
        b: alloc(eb)?,
        d: alloc(ec)?,
    };
    let mut out = Vec::new();
    let run = |buf: &mut Buffers| {
        gemm.run(stream, ours, 1.0, &buf.a, &buf.b, 0.0, None, &mut buf.d)
            .map_err(|e| e.to_string())
    };

    // Cold: one call at a time, the plan cache cleared before it.
    let mut cold = Measure {
        name: "run-cold",
        host_us: Vec::new(),
        wall_us: Vec::new(),
    };
    for _ in 0..reps {
        gemm.clear_cache();
        stream.synchronize().map_err(cuda("synchronise"))?;
        let start = Instant::now();
        run(&mut buf)?;
        let enqueued = start.elapsed();
        stream.synchronize().map_err(cuda("the cold run"))?;
        cold.host_us.push(enqueued.as_secs_f64() * 1e6);
        cold.wall_us.push(start.elapsed().as_secs_f64() * 1e6);
    }
    out.push(cold);
    out.push(batches(stream, reps, CALLS, "run-hit", || run(&mut buf))?);

    let kernel = gemm.default_kernel(ours);
    let prepared = gemm
        .prepare(stream, kernel, ours, &buf.a, &buf.b, None, &buf.d)
        .map_err(|e| e.to_string())?;
    out.push(batches(stream, reps, CALLS, "launch", || {
        gemm.launch(
            stream, &prepared, 1.0, 0.0, &buf.a, &buf.b, None, &mut buf.d,
        )
        .map_err(|e| e.to_string())
    })?);
    out.push(batches(stream, reps, CALLS, "launch-raw", || {
        // SAFETY: the buffers it was prepared for, alive, used on this stream only.
        unsafe { gemm.launch_raw(stream, &prepared, 1.0, 0.0) }.map_err(|e| e.to_string())
    })?);
    // The same two, each call a programmatic dependent of the one before.
    let programmatic = gemm.programmatic_launch();
    let pdl = (|| -> Result<[Measure; 2], String> {
        gemm.set_programmatic_launch(true)
            .map_err(|e| e.to_string())?;
        Ok([
            batches(stream, reps, CALLS, "run-hit-pdl", || run(&mut buf))?,
            batches(stream, reps, CALLS, "launch-raw-pdl", || {
                // SAFETY: as above.
                unsafe { gemm.launch_raw(stream, &prepared, 1.0, 0.0) }.map_err(|e| e.to_string())
            })?,
        ])
    })();
    // Restored before any error goes up. SAFETY: the setting before, which the caller chose.
    unsafe { gemm.set_programmatic_launch_unchecked(programmatic) };
    out.extend(pdl?);

    // cuBLAS on the same buffers.
    let operands = Operands {
        a: buf.a.device_ptr(stream).0,
        b: buf.b.device_ptr(stream).0,
        c: 0,
        d: buf.d.device_ptr(stream).0,
    };
    let problem = Problem {
        shape,
        alpha: 1.0,
        beta: 0.0,
    };
    let mut timer = Timer::new(device, false)?;
    let mut gemm_ex = CublasGemmEx::new(device)?;
    gemm_ex.prepare(&mut timer, &problem, &operands)?;
    out.push(batches(stream, reps, CALLS, "cublasGemmEx", || {
        gemm_ex.run(stream, &problem, &operands)
    })?);
    let mut lt = CublasLt::new(device, LtChoice::Heuristic)?;
    lt.prepare(&mut timer, &problem, &operands)?;
    out.push(batches(stream, reps, CALLS, "cublasLtMatmul", || {
        lt.run(stream, &problem, &operands)
    })?);

    // Without cudarc's event tracking, and the graphs (a capture must not wait on events
    // recorded outside it).
    let tracking = device.ctx.is_event_tracking();
    // SAFETY: every buffer here is used on the one stream, in order; restored below.
    unsafe { device.ctx.disable_event_tracking() };
    let untracked = (|| -> Result<Vec<Measure>, String> {
        let mut out = Vec::new();
        out.push(batches(stream, reps, CALLS, "run-hit-untracked", || {
            run(&mut buf)
        })?);
        // Untracked, nothing lies between two cached runs' kernels: the row where a programmatic
        // launch can overlap them (tracked, each run waits on and records the buffers' events).
        gemm.set_programmatic_launch(true)
            .map_err(|e| e.to_string())?;
        out.push(batches(
            stream,
            reps,
            CALLS,
            "run-hit-untracked-pdl",
            || run(&mut buf),
        )?);
        for (name, runs, pdl) in [
            ("graph-1", 1, false),
            ("graph-N", CALLS, false),
            ("graph-N-pdl", CALLS, true),
        ] {
            gemm.set_programmatic_launch(pdl)
                .map_err(|e| e.to_string())?;
            // An eager call first: the previous capture took the plan (and its workspace), so
            // this capture needs a plan of its own, which only an eager call makes.
            run(&mut buf)?;
            stream
                .begin_capture(sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
                .map_err(cuda("begin_capture"))?;
            let captured = (0..runs).try_for_each(|_| run(&mut buf));
            let graph = stream.end_capture(sys::CUgraphInstantiate_flags(0));
            captured?;
            let graph = graph
                .map_err(cuda("end_capture"))?
                .ok_or("the capture made no graph")?;
            graph.upload().map_err(cuda("uploading the graph"))?;
            let launches = CALLS / runs;
            let mut m = batches(stream, reps, launches, name, || {
                graph.launch().map_err(|e| format!("cuGraphLaunch: {e:?}"))
            })?;
            // Per GEMM, not per graph launch.
            for t in m.host_us.iter_mut().chain(m.wall_us.iter_mut()) {
                *t /= runs as f64;
            }
            out.push(m);
        }
        // The captured plans are the graphs'; the graphs are gone (dropped above, after the
        // stream's synchronisation in `batches`).
        stream.synchronize().map_err(cuda("the graphs"))?;
        // SAFETY: no graph that captured a run is left, and no capture is open.
        unsafe { gemm.release_captured() };
        Ok(out)
    })();
    // SAFETY: the setting before, which the caller chose (restored before any error goes up).
    unsafe { gemm.set_programmatic_launch_unchecked(programmatic) };
    if tracking {
        // SAFETY: as above.
        unsafe { device.ctx.enable_event_tracking() };
    }
    out.extend(untracked?);
    Ok(out)
}

/// The table of one shape.
fn print_shape(shape: Shape, measures: &[Measure]) {
    let hit = measures
        .iter()
        .find(|m| m.name == "run-hit")
        .and_then(Measure::host);
    println!(
        "  {:<20} {:>10} {:>10} {:>10} {:>12} {:>14}",
        "call", "host us", "min", "max", "wall us", "host / run-hit"
    );
    for m in measures {
        let host = m.host();
        let ratio = match (host, hit) {
            (Some(h), Some(r)) => format!("{:.2}", h / r),
            _ => "-".into(),
        };
        println!(
            "  {:<20} {:>10.2} {:>10.2} {:>10.2} {:>12.2} {:>14}",
            m.name,
            host.unwrap_or(f64::NAN),
            m.host_us.iter().copied().fold(f64::INFINITY, f64::min),
            m.host_us.iter().copied().fold(0.0, f64::max),
            m.wall().unwrap_or(f64::NAN),
            ratio
        );
    }
    let _ = shape;
}

/// The CSV rows of one shape, in the benchmark's columns: `implementation` is `host:NAME` (host
/// time per call) or `wall:NAME` (wall time per call), `median_ms`, `min_ms`, `max_ms` in
/// milliseconds per call, `runs` the batches, `tflops` empty, `ours_over_this` this time over
/// `run-hit`'s of the same kind (host or wall), `kernel` empty.
pub fn csv_rows(shape: Shape, measures: &[Measure]) -> String {
    let mut csv = String::new();
    for (kind, pick) in [
        (
            "host",
            (|m: &Measure| &m.host_us) as fn(&Measure) -> &Vec<f64>,
        ),
        ("wall", |m: &Measure| &m.wall_us),
    ] {
        let hit = measures
            .iter()
            .find(|m| m.name == "run-hit")
            .and_then(|m| median(pick(m)));
        for m in measures {
            let t = pick(m);
            let med = median(t);
            let over = match (med, hit) {
                (Some(x), Some(h)) if h > 0.0 => format!("{:.4}", x / h),
                _ => String::new(),
            };
            let ms = |us: f64| format!("{:.6}", us / 1000.0);
            csv.push_str(&format!(
                "{shape},{},{},{},1,0,{kind}:{},{},{},{},{},,{over},{} time per call ({} calls per batch),\n",
                shape.m,
                shape.n,
                shape.k,
                m.name,
                med.map_or(String::new(), ms),
                ms(t.iter().copied().fold(f64::INFINITY, f64::min)),
                ms(t.iter().copied().fold(0.0, f64::max)),
                t.len(),
                kind,
                if m.name == "run-cold" { 1 } else { CALLS },
            ));
        }
    }
    csv
}

/// Appends `rows` to the CSV at `path`, with the header first if the file is new or empty.
fn append_csv(path: &std::path::Path, rows: &str) -> Result<(), String> {
    let fresh = std::fs::metadata(path).map_or(true, |m| m.len() == 0);
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    let text = if fresh {
        format!("{CSV_HEADER}{rows}")
    } else {
        rows.to_string()
    };
    file.write_all(text.as_bytes())
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// The `--host-time` mode: every shape's table (and CSV rows); `Ok(false)` if a shape failed.
pub fn run(device: &Device, options: &Options) -> Result<bool, String> {
    let module = options
        .ours_module
        .as_deref()
        .expect("--host-time needs a module (parse_args)");
    let module = module.to_str().ok_or("--ours-module: not a UTF-8 path")?;
    let gemm = gpu_gemm_host::Gemm::load(&device.ctx, module).map_err(|e| e.to_string())?;
    println!(
        "host time per call: {CALLS} calls back to back per batch (the stream not synchronised inside it), median over {} batches after one untimed; run-cold: one call at a time, the plan cache cleared before it; wall: enqueue and completion per call",
        options.reps
    );
    let mut ok = true;
    let mut csv = String::new();
    for &shape in &options.shapes {
        println!("\n== host time: {shape} (M x N x K), beta 0");
        match measure_shape(device, &gemm, shape, options.reps) {
            Ok(measures) => {
                print_shape(shape, &measures);
                csv += &csv_rows(shape, &measures);
            }
            Err(e) => {
                ok = false;
                println!("FAIL {shape}: {e}");
            }
        }
    }
    let stats = gemm.cache_stats();
    println!(
        "\nplan cache: {} plans ({} bytes) kept, {} hits, {} misses, {} evictions",
        stats.entries, stats.bytes, stats.hits, stats.misses, stats.evictions
    );
    if let Some(path) = &options.csv {
        append_csv(path, &csv)?;
        println!("CSV rows appended: {}", path.display());
    }
    Ok(ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_rows_have_the_benchmarks_columns() {
        let m = |name, host: &[f64]| Measure {
            name,
            host_us: host.to_vec(),
            wall_us: host.iter().map(|h| h * 3.0).collect(),
        };
        let rows = csv_rows(
            Shape::new(16, 4096, 4096),
            &[
                m("run-cold", &[30.0, 40.0, 35.0]),
                m("run-hit", &[2.0, 2.5, 3.0]),
            ],
        );
        let columns = CSV_HEADER.trim_end().split(',').count();
        let lines: Vec<&str> = rows.lines().collect();
        assert_eq!(lines.len(), 4, "host and wall rows of each: {rows}");
        assert!(
            lines.iter().all(|l| l.split(',').count() == columns),
            "{rows}"
        );
        assert!(
            lines[0].contains(",host:run-cold,0.035000,0.030000,0.040000,3,,14.0000,"),
            "{rows}"
        );
        assert!(lines[1].contains(",host:run-hit,0.002500,"), "{rows}");
        assert!(
            lines[3].starts_with("16x4096x4096,16,4096,4096,1,0,wall:run-hit,0.007500,"),
            "{rows}"
        );
    }

    #[test]
    fn the_default_shapes_are_decode_and_mid() {
        assert_eq!(
            SHAPES.iter().map(|s| s.m).collect::<Vec<_>>(),
            [1, 16, 64, 512]
        );
        assert!(SHAPES.iter().all(|s| (s.n, s.k) == (4096, 4096)));
    }

    #[test]
    fn append_writes_the_header_once() {
        let path = std::env::temp_dir().join(format!("gemm-bench-host-{}.csv", std::process::id()));
        let _ = std::fs::remove_file(&path);
        append_csv(&path, "a\n").unwrap();
        append_csv(&path, "b\n").unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let _ = std::fs::remove_file(&path);
        assert_eq!(text, format!("{CSV_HEADER}a\nb\n"));
    }
}
