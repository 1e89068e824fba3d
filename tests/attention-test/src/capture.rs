//! The host API under CUDA graph capture (`cuStreamBeginCapture` through cudarc's
//! `begin_capture` / `end_capture`):
//!
//! - `run` on a capturing stream must be an `Error::Capture`, enqueue nothing (the capture ends
//!   cleanly, its graph empty) and leave the stream usable: the same call right after is exact.
//! - A problem prepared before the capture, its `launch_raw` captured: the graph replayed on
//!   fresh Q written into the same buffer, each result within its bound.
//! - `run` captured after the same call ran eagerly (its plan kept): the graph launches the kept
//!   plan; replayed twice on fresh Q, each result within its bound, and an eager `run` between
//!   the replays within its bound too.
//! - With event tracking on, `run` under capture, its plan kept or not, is refused before it
//!   touches the buffers: the capture ends empty and unbroken.
//!
//! cudarc's event tracking is off for these tests (as for the GEMM's graph tests): a capture must
//! not wait on events recorded outside it. Every access is on the one stream.

use std::sync::Arc;

use cudarc::driver::{CudaContext, CudaSlice, CudaStream, DevicePtr, sys};
use gpu_attention_host::{Attention, Element, Error, Problem, Tensors};
use gpu_attention_plan::reference::{Inputs, forward, tolerance};

use crate::programmatic::within;
use crate::{Rng, encode};

/// Runs the capture tests (event tracking off, restored after).
pub fn run(ctx: &Arc<CudaContext>, attention: &Attention) -> Vec<(String, Result<(), String>)> {
    let tracking = ctx.is_event_tracking();
    // SAFETY: every buffer of these tests is used on one stream only, in order; the flag is
    // restored before any other test runs.
    unsafe { ctx.disable_event_tracking() };
    let out = vec![
        (
            "capture: run on a capturing stream is a capture error".to_string(),
            refused(ctx, attention),
        ),
        (
            "capture: a prepared launch captured replays within its bound".to_string(),
            replayed(ctx, attention),
        ),
        (
            "capture: run captured on its kept plan replays within its bound".to_string(),
            run_captured(ctx, attention),
        ),
        (
            "capture: run under capture with event tracking on is refused untouched".to_string(),
            refused_when_tracking(ctx, attention),
        ),
    ];
    if tracking {
        // SAFETY: as above.
        unsafe { ctx.enable_event_tracking() };
    }
    out
}

fn cuda(what: &'static str) -> impl Fn(cudarc::driver::DriverError) -> String {
    move |e| format!("{what}: {e:?}")
}

/// One problem's host data and device buffers.
pub(crate) struct Buffers {
    q: (Vec<u16>, Vec<f32>),
    k: Vec<f32>,
    v: Vec<f32>,
    dq: CudaSlice<u16>,
    dk: CudaSlice<u16>,
    dv: CudaSlice<u16>,
    o: CudaSlice<u16>,
    lse: CudaSlice<f32>,
}

impl Buffers {
    /// The device addresses of Q, K, V, O and LSE, for `prepare` (taken through cudarc's
    /// `device_ptr` on `stream`).
    pub(crate) fn tensors(&self, stream: &Arc<CudaStream>) -> Tensors {
        let at = |s: &CudaSlice<u16>| s.device_ptr(stream).0;
        Tensors {
            q: at(&self.dq),
            k: at(&self.dk),
            v: at(&self.dv),
            o: at(&self.o),
            lse: self.lse.device_ptr(stream).0,
        }
    }
}

pub(crate) fn buffers(
    stream: &Arc<CudaStream>,
    p: &Problem<'_>,
    rng: &mut Rng,
) -> Result<Buffers, String> {
    let e = p.extents();
    let draw = |n: u64, rng: &mut Rng| -> (Vec<u16>, Vec<f32>) {
        (0..n).map(|_| encode(Element::Bf16, rng.unit())).unzip()
    };
    let up = |h: &[u16]| stream.clone_htod(h).map_err(cuda("upload"));
    let (q, k, v) = (draw(e.q, rng), draw(e.k, rng), draw(e.v, rng));
    Ok(Buffers {
        dq: up(&q.0)?,
        dk: up(&k.0)?,
        dv: up(&v.0)?,
        o: up(&vec![0x7FFF; e.o as usize])?,
        lse: stream
            .alloc_zeros::<f32>(e.lse as usize)
            .map_err(cuda("LSE"))?,
        q,
        k: k.1,
        v: v.1,
    })
}

/// O and `LSE` after the stream's work, against the reference of the buffers' current inputs.
pub(crate) fn check(
    stream: &Arc<CudaStream>,
    p: &Problem<'_>,
    b: &Buffers,
    what: &str,
) -> Result<(), String> {
    stream
        .synchronize()
        .map_err(|e| format!("{what}: the kernel failed: {e:?}"))?;
    let o = stream.clone_dtoh(&b.o).map_err(cuda("reading O"))?;
    let lse = stream.clone_dtoh(&b.lse).map_err(cuda("reading LSE"))?;
    let inputs = Inputs {
        q: &b.q.1,
        k: &b.k,
        v: &b.v,
    };
    let reference = forward(p, &inputs).map_err(|e| format!("reference: {e}"))?;
    let tol = tolerance(p, &inputs).map_err(|e| format!("tolerance: {e}"))?;
    within(what, Element::Bf16, &o, &reference.o, tol.o)?;
    // Every row of these problems sees keys: a finite LSE each.
    for (r, (&got, &want)) in lse.iter().zip(&reference.lse).enumerate() {
        if (f64::from(got) - want).abs() > tol.lse {
            return Err(format!(
                "{what}: LSE row {r} is {got}, the reference {want}"
            ));
        }
    }
    Ok(())
}

/// `run` under capture: refused, nothing captured, the stream fine.
fn refused(ctx: &Arc<CudaContext>, attention: &Attention) -> Result<(), String> {
    let stream = ctx.new_stream().map_err(cuda("a stream"))?;
    let mut rng = Rng(0x85A3_08D3_1319_8A2E);
    let p = Problem::contiguous(2, (300, 300), (4, 2), 128);
    let mut b = buffers(&stream, &p, &mut rng)?;
    stream.synchronize().map_err(cuda("filling"))?;
    stream
        .begin_capture(sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
        .map_err(cuda("begin_capture"))?;
    let result = attention.run(&stream, &p, &b.dq, &b.dk, &b.dv, &mut b.o, &mut b.lse);
    let graph = stream.end_capture(sys::CUgraphInstantiate_flags(0));
    match result {
        Err(Error::Capture(e)) if e.contains("launch_raw") => {}
        Err(e) => return Err(format!("run under capture: another error: {e}")),
        Ok(()) => return Err("run under capture returned Ok".into()),
    }
    empty_capture(graph)?;
    // The stream is usable, and the same call now runs.
    attention
        .run(&stream, &p, &b.dq, &b.dk, &b.dv, &mut b.o, &mut b.lse)
        .map_err(|e| format!("run after the refused capture: {e}"))?;
    check(&stream, &p, &b, "run after the refused capture")
}

/// A prepared problem's `launch_raw` captured, replayed on fresh Q.
fn replayed(ctx: &Arc<CudaContext>, attention: &Attention) -> Result<(), String> {
    let stream = ctx.new_stream().map_err(cuda("a stream"))?;
    let mut rng = Rng(0x0370_7344_A409_3822);
    let p =
        Problem::contiguous(1, (200, 777), (8, 2), 64).with_mask(gpu_attention_host::Mask::Causal);
    let mut b = buffers(&stream, &p, &mut rng)?;
    let tensors = b.tensors(&stream);
    let prepared = attention
        .prepare(&stream, &p, tensors)
        .map_err(|e| format!("prepare: {e}"))?;
    stream.synchronize().map_err(cuda("the preparation"))?;
    stream
        .begin_capture(sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
        .map_err(cuda("begin_capture"))?;
    // SAFETY: the tensors are alive until the graph's replays are done (below), hold the
    // problem's extents, and only this stream touches them; the upload was synchronized.
    let result = unsafe { attention.launch_raw(&prepared, stream.cu_stream()) };
    let graph = stream.end_capture(sys::CUgraphInstantiate_flags(0));
    result.map_err(|e| format!("launch_raw under capture: {e}"))?;
    let graph = graph
        .map_err(cuda("end_capture"))?
        .ok_or("the capture made no graph")?;
    for replay in 0..2 {
        // Fresh Q in the same buffer, O poisoned, outside the capture.
        let q: (Vec<u16>, Vec<f32>) = (0..b.q.0.len())
            .map(|_| encode(Element::Bf16, rng.unit()))
            .unzip();
        stream.memcpy_htod(&q.0, &mut b.dq).map_err(cuda("Q"))?;
        stream
            .memcpy_htod(&vec![0x7FFF; b.o.len()], &mut b.o)
            .map_err(cuda("O"))?;
        b.q = q;
        graph.launch().map_err(cuda("launching the graph"))?;
        check(&stream, &p, &b, &format!("graph replay {replay}"))?;
    }
    drop(graph);
    stream.synchronize().map_err(cuda("the last replay"))?;
    Ok(())
}

/// `run` once eagerly (its plan kept), then captured: the capture launches the kept plan; the
/// graph replayed on fresh Q written into the same buffer, an eager `run` between the replays.
fn run_captured(ctx: &Arc<CudaContext>, attention: &Attention) -> Result<(), String> {
    let stream = ctx.new_stream().map_err(cuda("a stream"))?;
    let mut rng = Rng(0x1BD1_1BDA_A9FC_1A22);
    let p =
        Problem::contiguous(2, (257, 400), (4, 4), 128).with_mask(gpu_attention_host::Mask::Causal);
    let mut b = buffers(&stream, &p, &mut rng)?;
    attention
        .run(&stream, &p, &b.dq, &b.dk, &b.dv, &mut b.o, &mut b.lse)
        .map_err(|e| format!("the eager run: {e}"))?;
    check(&stream, &p, &b, "the eager run")?;
    let misses = attention.cache_stats().misses;
    stream
        .begin_capture(sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
        .map_err(cuda("begin_capture"))?;
    let captured = attention.run(&stream, &p, &b.dq, &b.dk, &b.dv, &mut b.o, &mut b.lse);
    let graph = stream.end_capture(sys::CUgraphInstantiate_flags(0));
    captured.map_err(|e| format!("run under capture, its plan kept: {e}"))?;
    let graph = graph
        .map_err(|e| format!("end_capture: {e:?}"))?
        .ok_or("the capture made no graph")?;
    if attention.cache_stats().misses != misses {
        return Err("the captured run missed its kept plan".into());
    }
    if attention.cache_stats().captured != 1 {
        return Err(format!(
            "{} plans kept for captures, not the one the graph uses",
            attention.cache_stats().captured
        ));
    }
    for replay in 0..2 {
        // Fresh Q into the same buffer, O poisoned: the graph's result must follow them.
        let e = p.extents();
        b.q = (0..e.q).map(|_| encode(Element::Bf16, rng.unit())).unzip();
        stream
            .memcpy_htod(&b.q.0, &mut b.dq)
            .map_err(cuda("fresh Q"))?;
        stream
            .memcpy_htod(&vec![0x7FFF; e.o as usize], &mut b.o)
            .map_err(cuda("poisoning O"))?;
        graph
            .launch()
            .map_err(|e| format!("replay {replay}: {e:?}"))?;
        check(&stream, &p, &b, &format!("replay {replay}"))?;
        // An eager run between the replays, on the same plan.
        attention
            .run(&stream, &p, &b.dq, &b.dk, &b.dv, &mut b.o, &mut b.lse)
            .map_err(|e| format!("an eager run after replay {replay}: {e}"))?;
        check(
            &stream,
            &p,
            &b,
            &format!("the eager run after replay {replay}"),
        )?;
    }
    drop(graph);
    stream.synchronize().map_err(cuda("the graph"))?;
    // SAFETY: the graph that captured the run is dropped and no capture is open.
    unsafe { attention.release_captured() };
    Ok(())
}

/// With cudarc's event tracking on (this test turns it on, in a context of several streams),
/// `run` under capture is an `Error::Capture` that names the tracking, even with its plan kept,
/// and the capture ends empty and unbroken.
fn refused_when_tracking(ctx: &Arc<CudaContext>, attention: &Attention) -> Result<(), String> {
    let stream = ctx.new_stream().map_err(cuda("a stream"))?;
    let mut rng = Rng(0x2FFD_72DB_D01A_DFB7);
    let p = Problem::contiguous(1, (130, 200), (2, 2), 64);
    let mut b = buffers(&stream, &p, &mut rng)?;
    // The plan kept (tracking off: the other capture tests' setting).
    attention
        .run(&stream, &p, &b.dq, &b.dk, &b.dv, &mut b.o, &mut b.lse)
        .map_err(|e| format!("the eager run: {e}"))?;
    check(&stream, &p, &b, "the eager run")?;
    // SAFETY: every buffer here is used on this one stream, in order; off again below.
    unsafe { ctx.enable_event_tracking() };
    let tracking = ctx.is_managing_stream_synchronization();
    let begun = stream
        .begin_capture(sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
        .map_err(cuda("begin_capture"));
    let result =
        begun.map(|()| attention.run(&stream, &p, &b.dq, &b.dk, &b.dv, &mut b.o, &mut b.lse));
    let graph = stream.end_capture(sys::CUgraphInstantiate_flags(0));
    // SAFETY: as above.
    unsafe { ctx.disable_event_tracking() };
    if !tracking {
        return Err("the context does not manage stream synchronization with tracking on".into());
    }
    match result? {
        Err(Error::Capture(e)) if e.contains("tracking") => {}
        Err(e) => {
            return Err(format!(
                "run under capture with tracking: another error: {e}"
            ));
        }
        Ok(()) => return Err("run under capture with tracking returned Ok".into()),
    }
    empty_capture(graph)?;
    Ok(())
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
