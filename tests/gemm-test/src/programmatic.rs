//! `Gemm::set_programmatic_launch`: GEMMs launched as programmatic dependents of the kernel before
//! them in the stream must give the results of plain stream order.
//!
//! Every GEMM kernel allows its dependents at its start (`griddepcontrol.launch_dependents`), so a
//! dependent GEMM's CTAs start on whatever SMs are free while the kernel before it still runs,
//! and only their `griddepcontrol.wait` keeps them from its memory. Each chain below puts a long,
//! narrow GEMM first: 3 x 104 x 131072 on the 16-wide cluster-K kernel, one weight tile whose K is
//! split over at most 8 CTAs, each streaming 3.25 MiB of B (tens of microseconds on 8 SMs), so that
//! the next GEMM's CTAs start at once on the idle SMs. Without the wait they would:
//!
//! - read the first GEMM's D before it is written (`reads_the_output_of_the_gemm_before`: GEMM 2
//!   takes GEMM 1's D, poisoned with NaN before GEMM 1, as its A);
//! - write over what the first GEMM still reads (`writes_over_what_the_gemm_before_reads`:
//!   GEMM 2's D is GEMM 1's A, whose later k-blocks GEMM 1 has not read yet);
//! - and a problem accumulated in place back to back (`accumulates_in_place_back_to_back`: D +=
//!   A Bᵀ eight times, C = D) would read D before the launch before wrote it, and two launches of
//!   one split-K plan would share its workspace at once.
//!
//! The chains run again captured into a CUDA graph, whose launches keep the programmatic edges
//! (`replays_a_captured_chain`).
//!
//! Each chain runs three times: the first call of each problem makes its plan (an upload between
//! two kernels orders them fully); the next two launch the kept plans back to back, kernel after
//! kernel. cudarc's event tracking is off (as for the graph tests), since an event wait between
//! two kernels would order them fully as well. The module of the kernel crate's `unwaited`
//! feature (the kernels without their wait) must fail here: the GEMM bundle's script runs
//! `gemm-test gpu_gemm_unwaited.ptx --programmatic` and asks for a failure of each chain, which
//! shows these tests can fail. `Gemm::set_programmatic_launch` refuses that module (its ABI
//! version says its entries do not wait), which `refused_where_the_entries_do_not_wait` checks;
//! the chains then run on it through `set_programmatic_launch_unchecked`.

use std::sync::Arc;

use cudarc::driver::{CudaContext, CudaSlice, CudaStream};
use gpu_gemm_host::{Addend, Gemm, Kernel, Shape, f32_of};

use crate::boundary::Outcome;
use crate::{fill, reference};

/// NaN: D before a run, so that a read of it before it is written reaches the next result.
const POISON: u16 = 0xFFC1;

/// The long first GEMM of each chain: M x N x K.
const LONG: (u32, u32, u32) = (3, 104, 131_072);
/// Its kernel: one tile of 128 rows of B, K split over a cluster of up to 8 CTAs.
const LONG_KERNEL: Kernel = Kernel::Skinny16ClusterK;
/// The second GEMM's N (its M is the first's, its K the first's N).
const WIDE: u32 = 4096;
/// Rounds of each chain: the first makes the plans, the others launch them back to back.
const ROUNDS: usize = 3;

/// Runs the tests with programmatic launches on and cudarc's tracking off (both restored).
pub fn run(ctx: &Arc<CudaContext>, gemm: &Gemm) -> Vec<Outcome> {
    let tracking = ctx.is_event_tracking();
    let programmatic = gemm.programmatic_launch();
    // SAFETY: every buffer of these tests is used on one stream only, in order; the flag is
    // restored before any other test runs.
    unsafe { ctx.disable_event_tracking() };
    let refused = refused_where_the_entries_do_not_wait(gemm);
    // SAFETY: a module whose entries wait is launched as `set_programmatic_launch` would; one that
    // does not (the negative control) races only this module's own buffers, which nothing else
    // reads, each chain waiting for its stream before it frees them.
    unsafe { gemm.set_programmatic_launch_unchecked(true) };
    let outcomes = vec![
        (
            "programmatic_refused_where_the_entries_do_not_wait",
            refused,
        ),
        (
            "programmatic_gemm_reads_the_output_of_the_gemm_before",
            reads_the_output_of_the_gemm_before(ctx, gemm),
        ),
        (
            "programmatic_gemm_writes_over_what_the_gemm_before_reads",
            writes_over_what_the_gemm_before_reads(ctx, gemm),
        ),
        (
            "programmatic_gemm_accumulates_in_place_back_to_back",
            accumulates_in_place_back_to_back(ctx, gemm),
        ),
        (
            "programmatic_chain_captured_replays_exactly",
            replays_a_captured_chain(ctx, gemm),
        ),
    ];
    // SAFETY: the setting before the tests, which the caller chose.
    unsafe { gemm.set_programmatic_launch_unchecked(programmatic) };
    if !gemm.entries_wait() {
        // The racing launches may have left a kept plan's split-K counters wrong (the unchecked
        // setter's contract): no later test may use them.
        gemm.clear_cache();
    }
    if tracking {
        // SAFETY: as above.
        unsafe { ctx.enable_event_tracking() };
    }
    outcomes
}

/// `set_programmatic_launch(true)` succeeds on a module whose entries wait and is refused,
/// leaving the setting off, on one whose entries do not (`Gemm::entries_wait`, from the ABI
/// version); off is always accepted.
fn refused_where_the_entries_do_not_wait(gemm: &Gemm) -> Result<(), String> {
    // SAFETY: off launches in stream order.
    unsafe { gemm.set_programmatic_launch_unchecked(false) };
    let on = gemm.set_programmatic_launch(true);
    match (gemm.entries_wait(), on) {
        (true, Ok(())) if gemm.programmatic_launch() => {}
        (false, Err(_)) if !gemm.programmatic_launch() => {}
        (waits, on) => {
            return Err(format!(
                "entries wait: {waits}; set_programmatic_launch(true) gave {on:?}, the setting now {}",
                gemm.programmatic_launch()
            ));
        }
    }
    gemm.set_programmatic_launch(false)
        .map_err(|e| format!("turning programmatic launches off: {e}"))
}

fn cuda(what: &'static str) -> impl Fn(cudarc::driver::DriverError) -> String {
    move |e| format!("{what}: {e:?}")
}

fn upload(stream: &Arc<CudaStream>, host: &[u16]) -> Result<CudaSlice<u16>, String> {
    stream.clone_htod(host).map_err(cuda("upload"))
}

/// `got` against `want`, element by element: the first difference, with `what`.
fn compare(what: &str, got: &[u16], want: &[u16]) -> Result<(), String> {
    let wrong = got.iter().zip(want).filter(|(g, w)| g != w).count();
    match got.iter().zip(want).position(|(g, w)| g != w) {
        None => Ok(()),
        Some(first) => Err(format!(
            "{what}: {wrong} of {} elements wrong; first at {first}: {} expected {}",
            want.len(),
            f32_of(got[first]),
            f32_of(want[first])
        )),
    }
}

/// The two-GEMM chain's buffers: GEMM 1 is `d1 = a1 b1ᵀ` ([`LONG`]), GEMM 2 `d2 = d1 b2ᵀ`.
struct Chain {
    a1: CudaSlice<u16>,
    b1: CudaSlice<u16>,
    d1: CudaSlice<u16>,
    b2: CudaSlice<u16>,
    d2: CudaSlice<u16>,
    /// The host's D1 and D2.
    want: (Vec<u16>, Vec<u16>),
}

impl Chain {
    fn new(stream: &Arc<CudaStream>, seed: &mut u64) -> Result<Self, String> {
        let (m, n, k) = LONG;
        let (mu, nu, ku, wu) = (m as usize, n as usize, k as usize, WIDE as usize);
        let (a1, b1, b2) = (
            fill(seed, mu * ku),
            fill(seed, nu * ku),
            fill(seed, wu * nu),
        );
        let d1 = reference((m, n, k, 1.0, 0.0), &a1, &b1, &vec![0; mu * nu]);
        let d2 = reference((m, WIDE, n, 1.0, 0.0), &d1, &b2, &vec![0; mu * wu]);
        Ok(Chain {
            a1: upload(stream, &a1)?,
            b1: upload(stream, &b1)?,
            d1: upload(stream, &vec![POISON; mu * nu])?,
            b2: upload(stream, &b2)?,
            d2: upload(stream, &vec![POISON; mu * wu])?,
            want: (d1, d2),
        })
    }

    /// Poisons both outputs, in the stream's order (before GEMM 1: a copy before it orders it
    /// fully, and GEMM 2 still follows GEMM 1 directly).
    fn poison(&mut self, stream: &Arc<CudaStream>) -> Result<(), String> {
        let (d1, d2) = (vec![POISON; self.d1.len()], vec![POISON; self.d2.len()]);
        stream.memcpy_htod(&d1, &mut self.d1).map_err(cuda("D1"))?;
        stream.memcpy_htod(&d2, &mut self.d2).map_err(cuda("D2"))
    }

    /// GEMM 1 then GEMM 2, enqueued back to back.
    fn enqueue(&mut self, gemm: &Gemm, stream: &Arc<CudaStream>) -> Result<(), String> {
        let (m, n, k) = LONG;
        gemm.run_with(
            LONG_KERNEL,
            stream,
            Shape { m, n, k },
            1.0,
            &self.a1,
            &self.b1,
            0.0,
            None,
            &mut self.d1,
        )
        .map_err(|e| format!("GEMM 1: {e}"))?;
        let shape = Shape { m, n: WIDE, k: n };
        gemm.run(
            stream,
            shape,
            1.0,
            &self.d1,
            &self.b2,
            0.0,
            None,
            &mut self.d2,
        )
        .map_err(|e| format!("GEMM 2: {e}"))
    }

    /// Both outputs against the host's.
    fn check(&self, stream: &Arc<CudaStream>, what: &str) -> Result<(), String> {
        stream
            .synchronize()
            .map_err(|e| format!("{what}: a GEMM failed: {e:?}"))?;
        let d1 = stream.clone_dtoh(&self.d1).map_err(cuda("reading D1"))?;
        let d2 = stream.clone_dtoh(&self.d2).map_err(cuda("reading D2"))?;
        compare(&format!("{what}: GEMM 1's D"), &d1, &self.want.0)?;
        compare(
            &format!("{what}: GEMM 2's D (its A is GEMM 1's D)"),
            &d2,
            &self.want.1,
        )
    }
}

/// GEMM 2 reads GEMM 1's D as its A.
fn reads_the_output_of_the_gemm_before(ctx: &Arc<CudaContext>, gemm: &Gemm) -> Result<(), String> {
    let stream = ctx.new_stream().map_err(cuda("a stream"))?;
    let mut seed = 0x4528_21E6_38D0_1377;
    let mut chain = Chain::new(&stream, &mut seed)?;
    for round in 0..ROUNDS {
        chain.poison(&stream)?;
        chain.enqueue(gemm, &stream)?;
        chain.check(&stream, &format!("round {round}"))?;
    }
    Ok(())
}

/// GEMM 2 writes its D over GEMM 1's A (the first 3 x 4096 elements of its 3 x 131072).
fn writes_over_what_the_gemm_before_reads(
    ctx: &Arc<CudaContext>,
    gemm: &Gemm,
) -> Result<(), String> {
    let stream = ctx.new_stream().map_err(cuda("a stream"))?;
    let mut seed = 0xBE54_66CF_34E9_0C6C;
    let (m, n, k) = LONG;
    let (mu, nu, ku) = (m as usize, n as usize, k as usize);
    // GEMM 2: 3 x 4096 x 64, its D written into GEMM 1's A.
    let k2 = 64u32;
    let (a2_len, b2_len, d2_len) = (
        mu * k2 as usize,
        WIDE as usize * k2 as usize,
        mu * WIDE as usize,
    );
    let b1 = fill(&mut seed, nu * ku);
    let db1 = upload(&stream, &b1)?;
    let mut da1 = upload(&stream, &vec![0; mu * ku])?;
    let mut d1 = upload(&stream, &vec![POISON; mu * nu])?;
    // Allocated once: a buffer at a new address would make GEMM 2's plan again, between the
    // two kernels, every round.
    let mut da2 = upload(&stream, &vec![0; a2_len])?;
    let mut db2 = upload(&stream, &vec![0; b2_len])?;
    for round in 0..ROUNDS {
        // Fresh inputs each round: GEMM 1's A (then overwritten in part by GEMM 2), GEMM 2's.
        let (a1, a2, b2) = (
            fill(&mut seed, mu * ku),
            fill(&mut seed, a2_len),
            fill(&mut seed, b2_len),
        );
        stream.memcpy_htod(&a1, &mut da1).map_err(cuda("A1"))?;
        stream.memcpy_htod(&a2, &mut da2).map_err(cuda("A2"))?;
        stream.memcpy_htod(&b2, &mut db2).map_err(cuda("B2"))?;
        stream
            .memcpy_htod(&vec![POISON; mu * nu], &mut d1)
            .map_err(cuda("D1"))?;
        gemm.run_with(
            LONG_KERNEL,
            &stream,
            Shape { m, n, k },
            1.0,
            &da1,
            &db1,
            0.0,
            None,
            &mut d1,
        )
        .map_err(|e| format!("GEMM 1: {e}"))?;
        gemm.run(
            &stream,
            Shape { m, n: WIDE, k: k2 },
            1.0,
            &da2,
            &db2,
            0.0,
            None,
            &mut da1,
        )
        .map_err(|e| format!("GEMM 2: {e}"))?;
        stream
            .synchronize()
            .map_err(|e| format!("round {round}: a GEMM failed: {e:?}"))?;
        let got1 = stream.clone_dtoh(&d1).map_err(cuda("reading D1"))?;
        let got2 = stream.clone_dtoh(&da1).map_err(cuda("reading D2"))?;
        compare(
            &format!("round {round}: GEMM 1's D (its A overwritten after it by GEMM 2)"),
            &got1,
            &reference((m, n, k, 1.0, 0.0), &a1, &b1, &vec![0; mu * nu]),
        )?;
        compare(
            &format!("round {round}: GEMM 2's D (in GEMM 1's A)"),
            &got2[..d2_len],
            &reference((m, WIDE, k2, 1.0, 0.0), &a2, &b2, &vec![0; d2_len]),
        )?;
        compare(
            &format!("round {round}: the rest of GEMM 1's A (GEMM 2 writes only its D)"),
            &got2[d2_len..],
            &a1[d2_len..],
        )?;
    }
    Ok(())
}

/// `D += A Bᵀ`, C = D, eight launches back to back on each of three problems: the first
/// two split K (a cluster-K kernel, a global split-K through the plan's workspace) and the third
/// runs on 128-row tiles with split-K.
fn accumulates_in_place_back_to_back(ctx: &Arc<CudaContext>, gemm: &Gemm) -> Result<(), String> {
    const LAUNCHES: usize = 8;
    let stream = ctx.new_stream().map_err(cuda("a stream"))?;
    let mut seed = 0x3F84_D5B5_B547_0917;
    let problems: [(Shape, Option<Kernel>); 3] = [
        (
            Shape {
                m: 1,
                n: 4096,
                k: 4096,
            },
            None,
        ),
        (
            Shape {
                m: 16,
                n: 4096,
                k: 4096,
            },
            Some(Kernel::Skinny16),
        ),
        (
            Shape {
                m: 192,
                n: 1000,
                k: 2048,
            },
            None,
        ),
    ];
    for (shape, kernel) in problems {
        let Shape { m, n, k } = shape;
        let (mu, nu, ku) = (m as usize, n as usize, k as usize);
        let kernel = kernel.unwrap_or_else(|| gemm.default_kernel(shape));
        let (a, b, d0) = (
            fill(&mut seed, mu * ku),
            fill(&mut seed, nu * ku),
            fill(&mut seed, mu * nu),
        );
        let (da, db) = (upload(&stream, &a)?, upload(&stream, &b)?);
        let mut dd = upload(&stream, &d0)?;
        let mut want = d0;
        for round in 0..ROUNDS {
            for _ in 0..LAUNCHES {
                gemm.run_with(
                    kernel,
                    &stream,
                    shape,
                    1.0,
                    &da,
                    &db,
                    1.0,
                    Addend::InPlace,
                    &mut dd,
                )
                .map_err(|e| format!("{} {m}x{n}x{k}: {e}", kernel.entry()))?;
                want = reference((m, n, k, 1.0, 1.0), &a, &b, &want);
            }
            stream
                .synchronize()
                .map_err(|e| format!("round {round}: the GEMM failed: {e:?}"))?;
            let got = stream.clone_dtoh(&dd).map_err(cuda("reading D"))?;
            compare(
                &format!(
                    "{} {m}x{n}x{k} in place, splits {}, round {round} of {LAUNCHES} launches",
                    kernel.entry(),
                    gemm.splits(kernel, shape)
                ),
                &got,
                &want,
            )?;
        }
    }
    Ok(())
}

/// The two-GEMM chain captured (after its eager rounds made the plans) and replayed.
fn replays_a_captured_chain(ctx: &Arc<CudaContext>, gemm: &Gemm) -> Result<(), String> {
    use cudarc::driver::sys;
    let stream = ctx.new_stream().map_err(cuda("a stream"))?;
    let mut seed = 0x9216_D5D9_8979_FB1B;
    let mut chain = Chain::new(&stream, &mut seed)?;
    chain.enqueue(gemm, &stream)?;
    chain.check(&stream, "the eager chain before the capture")?;
    stream
        .begin_capture(sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
        .map_err(cuda("begin_capture"))?;
    let result = chain.enqueue(gemm, &stream);
    let graph = stream.end_capture(sys::CUgraphInstantiate_flags(0));
    result.map_err(|e| format!("the chain under capture: {e}"))?;
    let graph = graph
        .map_err(cuda("end_capture"))?
        .ok_or("the capture made no graph")?;
    for replay in 0..ROUNDS {
        chain.poison(&stream)?;
        graph.launch().map_err(cuda("launching the graph"))?;
        chain.check(&stream, &format!("graph replay {replay}"))?;
    }
    drop(graph);
    stream.synchronize().map_err(cuda("the last replay"))?;
    // SAFETY: the graph is gone and no capture is open.
    unsafe { gemm.release_captured() };
    Ok(())
}
