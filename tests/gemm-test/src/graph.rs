//! `Gemm::run` captured into a CUDA graph (`cuStreamBeginCapture` through cudarc's
//! `begin_capture` / `end_capture`).
//!
//! - A call whose plan the `Gemm` does not hold yet (its first on that stream) must be a
//!   `GemmError::Capture` under capture, enqueue nothing (the capture ends cleanly, the graph is
//!   empty) and leave the stream usable.
//! - A call made once eagerly is captured from the plan cache; the graph is replayed several
//!   times on fresh inputs written into the same buffers (and D poisoned first), each replay
//!   checked exactly against the host reference (small integers, as the cases). Then eager
//!   calls of the same problem (which get a new workspace: the graph keeps its own) and graph
//!   replays alternate on the stream, each checked.
//!
//! Shapes: one that splits K (192 x 1000 x 2048 with C: the CTA that adds a tile's splits reads
//! C), a decode shape (16 x 4096 x 1024: narrow tiles, split), an odd one with C in place
//! (7 x 1000 x 136: D stored from registers), so that workspace, maps and C are all in a graph.
//!
//! cudarc's event tracking is turned off for these tests (as cudarc's own capture tests do): a
//! capture must not wait on events recorded outside it. Every access is on the one stream.

use std::sync::Arc;

use cudarc::driver::{CudaContext, CudaSlice, CudaStream, sys};
use gpu_gemm_host::{Addend, Gemm, GemmError, Shape};

use crate::boundary::Outcome;
use crate::{Case, fill, reference};

/// NaN, in every D before a run: an element not written fails the check.
const POISON: u16 = 0xFFC1;

/// The captured problems: (M, N, K, alpha, beta) and whether C is D. On the H200 the default
/// runs them with a global split-K (the first two), one CTA per tile of a cluster-K kernel (the
/// third), and a cluster-K kernel in clusters of 2 (the fourth: 48 weight tiles).
const PROBLEMS: &[(Case, bool)] = &[
    ((192, 1000, 2048, 1.0, 1.0), false),
    ((16, 4096, 1024, 1.0, 0.0), false),
    ((7, 1000, 136, 2.0, -1.0), true),
    ((5, 6144, 1024, 1.0, 0.5), false),
];

/// Replays of each graph on fresh inputs.
const REPLAYS: usize = 3;

/// Runs the graph tests (event tracking off for them, restored after).
pub fn run(ctx: &Arc<CudaContext>, gemm: &Gemm) -> Vec<Outcome> {
    let tracking = ctx.is_event_tracking();
    // SAFETY: every buffer of these tests is used on one stream only, in order; the flag is
    // restored before any other test runs.
    unsafe { ctx.disable_event_tracking() };
    let outcomes = vec![
        (
            "run_captured_before_its_first_call_is_a_capture_error",
            cold_capture_is_an_error(ctx, gemm),
        ),
        (
            "run_captured_warm_replays_exactly_on_fresh_inputs",
            warm_capture_replays(ctx, gemm),
        ),
        (
            "launch_of_a_prepared_problem_under_capture_is_refused",
            launch_under_capture_is_refused(ctx, gemm),
        ),
    ];
    if tracking {
        // SAFETY: as above.
        unsafe { ctx.enable_event_tracking() };
    }
    outcomes
}

fn cuda(what: &'static str) -> impl Fn(cudarc::driver::DriverError) -> String {
    move |e| format!("{what}: {e:?}")
}

/// One problem's buffers on one stream, and its host data.
struct Problem {
    case: Case,
    in_place: bool,
    a: CudaSlice<u16>,
    b: CudaSlice<u16>,
    c: CudaSlice<u16>,
    d: CudaSlice<u16>,
    host: (Vec<u16>, Vec<u16>, Vec<u16>),
}

impl Problem {
    fn new(stream: &Arc<CudaStream>, case: Case, in_place: bool) -> Result<Self, String> {
        let (m, n, k, _, _) = case;
        let (m, n, k) = (m as usize, n as usize, k as usize);
        let alloc = |len| stream.alloc_zeros::<u16>(len).map_err(cuda("allocating"));
        Ok(Self {
            case,
            in_place,
            a: alloc(m * k)?,
            b: alloc(n * k)?,
            c: alloc(m * n)?,
            d: alloc(m * n)?,
            host: (Vec::new(), Vec::new(), Vec::new()),
        })
    }

    fn shape(&self) -> Shape {
        let (m, n, k, _, _) = self.case;
        Shape { m, n, k }
    }

    /// Fresh inputs written into the same buffers (C into D when in place; D poisoned
    /// otherwise), in the stream's order.
    fn refill(&mut self, stream: &Arc<CudaStream>, seed: &mut u64) -> Result<(), String> {
        let (a, b, c) = (
            fill(seed, self.a.len()),
            fill(seed, self.b.len()),
            fill(seed, self.c.len()),
        );
        stream.memcpy_htod(&a, &mut self.a).map_err(cuda("A"))?;
        stream.memcpy_htod(&b, &mut self.b).map_err(cuda("B"))?;
        if self.in_place {
            stream.memcpy_htod(&c, &mut self.d).map_err(cuda("D"))?;
        } else {
            stream.memcpy_htod(&c, &mut self.c).map_err(cuda("C"))?;
            let poison = vec![POISON; self.d.len()];
            stream
                .memcpy_htod(&poison, &mut self.d)
                .map_err(cuda("D"))?;
        }
        self.host = (a, b, c);
        Ok(())
    }

    /// `gemm.run` of this problem on `stream`.
    fn run(&mut self, gemm: &Gemm, stream: &Arc<CudaStream>) -> Result<(), GemmError> {
        let (_, _, _, alpha, beta) = self.case;
        let c = if self.in_place {
            Addend::InPlace
        } else {
            Addend::Buffer(&self.c)
        };
        let shape = self.shape();
        gemm.run(stream, shape, alpha, &self.a, &self.b, beta, c, &mut self.d)
    }

    /// D, after the stream's work, exactly the reference of the current inputs.
    fn check(&self, stream: &Arc<CudaStream>, what: &str) -> Result<(), String> {
        stream
            .synchronize()
            .map_err(|e| format!("{what}: the GEMM failed: {e:?}"))?;
        let got = stream.clone_dtoh(&self.d).map_err(cuda("reading D"))?;
        let (a, b, c) = &self.host;
        let want = reference(self.case, a, b, c);
        let wrong = got.iter().zip(&want).filter(|(g, w)| g != w).count();
        if wrong == 0 {
            return Ok(());
        }
        let first = got.iter().zip(&want).position(|(g, w)| g != w).unwrap_or(0);
        let (m, n, k, alpha, beta) = self.case;
        Err(format!(
            "{what}: {m}x{n}x{k} alpha {alpha} beta {beta}{}: {wrong} of {} elements wrong; first at {first}: {} expected {}",
            if self.in_place { " in place" } else { "" },
            got.len(),
            gpu_gemm_host::f32_of(got[first]),
            gpu_gemm_host::f32_of(want[first])
        ))
    }
}

/// A first call under capture: a `GemmError::Capture`, nothing captured, the stream fine.
fn cold_capture_is_an_error(ctx: &Arc<CudaContext>, gemm: &Gemm) -> Result<(), String> {
    let stream = ctx.new_stream().map_err(cuda("a stream"))?;
    let mut seed = 0x243F_6A88_85A3_08D3;
    let (case, in_place) = PROBLEMS[0];
    let mut p = Problem::new(&stream, case, in_place)?;
    p.refill(&stream, &mut seed)?;
    stream.synchronize().map_err(cuda("filling"))?;
    let before = gemm.cache_stats();
    stream
        .begin_capture(sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
        .map_err(cuda("begin_capture"))?;
    let result = p.run(gemm, &stream);
    let graph = stream.end_capture(sys::CUgraphInstantiate_flags(0));
    match result {
        Err(GemmError::Capture(e)) if e.contains("before the capture") => {}
        Err(e) => return Err(format!("a first call under capture: another error: {e}")),
        Ok(()) => return Err("a first call under capture returned Ok".into()),
    }
    empty_capture(graph)?;
    let after = gemm.cache_stats();
    if after.entries != before.entries || after.bytes != before.bytes {
        return Err(format!(
            "the refused call changed the cache: {before:?} -> {after:?}"
        ));
    }
    // The stream is usable, and the same call now runs (and is kept).
    p.run(gemm, &stream).map_err(|e| e.to_string())?;
    p.check(&stream, "the call after the refused capture")
}

/// The end of a capture in which the only call was refused: unbroken, and its graph (if any)
/// without a node.
fn empty_capture(
    graph: Result<Option<cudarc::driver::CudaGraph>, cudarc::driver::DriverError>,
) -> Result<(), String> {
    let graph = graph.map_err(|e| format!("the refused call broke the capture: {e:?}"))?;
    if let Some(graph) = &graph {
        let mut nodes = 0usize;
        // SAFETY: a live graph; a null node array asks for the count only.
        let status =
            unsafe { sys::cuGraphGetNodes(graph.cu_graph(), std::ptr::null_mut(), &mut nodes) };
        if status != sys::CUresult::CUDA_SUCCESS || nodes != 0 {
            return Err(format!(
                "the refused call left {nodes} node(s) in the graph ({status:?})"
            ));
        }
    }
    Ok(())
}

/// `launch` of a prepared problem under capture: a `GemmError::Capture` (the graph would outlive
/// a `Prepared` the caller may drop: found by a review, 2026-12-05; it was captured before),
/// nothing captured, and the same launch runs after the capture, exact.
fn launch_under_capture_is_refused(ctx: &Arc<CudaContext>, gemm: &Gemm) -> Result<(), String> {
    let stream = ctx.new_stream().map_err(cuda("a stream"))?;
    let mut seed = 0x1319_8A2E_0370_7344;
    let (case, in_place) = PROBLEMS[0];
    let mut p = Problem::new(&stream, case, in_place)?;
    p.refill(&stream, &mut seed)?;
    let (_, _, _, alpha, beta) = case;
    let kernel = gemm.default_kernel(p.shape());
    let addend = if in_place {
        Addend::InPlace
    } else {
        Addend::Buffer(&p.c)
    };
    let prepared = gemm
        .prepare(&stream, kernel, p.shape(), &p.a, &p.b, addend, &p.d)
        .map_err(|e| e.to_string())?;
    stream.synchronize().map_err(cuda("preparing"))?;
    stream
        .begin_capture(sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
        .map_err(cuda("begin_capture"))?;
    // `gemm.launch` of the prepared problem over `p`'s buffers.
    let launch = |p: &mut Problem| {
        let Problem { a, b, c: cb, d, .. } = p;
        let addend = if in_place {
            Addend::InPlace
        } else {
            Addend::Buffer(cb)
        };
        gemm.launch(&stream, &prepared, alpha, beta, a, b, addend, d)
    };
    let result = launch(&mut p);
    let graph = stream.end_capture(sys::CUgraphInstantiate_flags(0));
    match result {
        Err(GemmError::Capture(e)) if e.contains("launch_raw") => {}
        Err(e) => return Err(format!("launch under capture: another error: {e}")),
        Ok(()) => return Err("launch under capture returned Ok".into()),
    }
    empty_capture(graph)?;
    // The same launch, eagerly: exact.
    launch(&mut p).map_err(|e| e.to_string())?;
    p.check(&stream, "the launch after the refused capture")
}

/// Each problem run once, captured, replayed on fresh inputs, then alternated with eager calls.
fn warm_capture_replays(ctx: &Arc<CudaContext>, gemm: &Gemm) -> Result<(), String> {
    let stream = ctx.new_stream().map_err(cuda("a stream"))?;
    let mut seed = 0x1319_8A2E_0370_7344;
    let mut problems = PROBLEMS
        .iter()
        .map(|&(case, in_place)| Problem::new(&stream, case, in_place))
        .collect::<Result<Vec<_>, _>>()?;
    // Warm: one eager call each, checked.
    for p in &mut problems {
        p.refill(&stream, &mut seed)?;
        p.run(gemm, &stream).map_err(|e| e.to_string())?;
        p.check(&stream, "the eager call before the capture")?;
    }
    let captured_before = gemm.cache_stats().captured;
    // One graph of all three calls.
    stream
        .begin_capture(sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
        .map_err(cuda("begin_capture"))?;
    let mut result = Ok(());
    for p in &mut problems {
        if let Err(e) = p.run(gemm, &stream) {
            result = Err(format!("a warm call under capture: {e}"));
            break;
        }
    }
    let graph = stream.end_capture(sys::CUgraphInstantiate_flags(0));
    result?;
    let graph = graph
        .map_err(cuda("end_capture"))?
        .ok_or("the capture made no graph")?;
    let captured = gemm.cache_stats().captured - captured_before;
    if captured != problems.len() {
        return Err(format!(
            "{captured} plans kept for the graph, not {}",
            problems.len()
        ));
    }
    // Replays on fresh inputs in the same buffers, every problem checked after each.
    for replay in 0..REPLAYS {
        for p in &mut problems {
            p.refill(&stream, &mut seed)?;
        }
        graph.launch().map_err(cuda("launching the graph"))?;
        for p in &problems {
            p.check(&stream, &format!("graph replay {replay}"))?;
        }
    }
    // Eager calls (a new plan: the graph keeps its workspace) and replays, alternating.
    for round in 0..2 {
        for p in &mut problems {
            p.refill(&stream, &mut seed)?;
            p.run(gemm, &stream).map_err(|e| e.to_string())?;
            p.check(&stream, &format!("eager call {round} after the capture"))?;
        }
        for p in &mut problems {
            p.refill(&stream, &mut seed)?;
        }
        graph.launch().map_err(cuda("launching the graph"))?;
        for p in &problems {
            p.check(&stream, &format!("graph replay after eager call {round}"))?;
        }
    }
    drop(graph);
    stream.synchronize().map_err(cuda("the last replay"))?;
    Ok(())
}
