//! `Attention::set_programmatic_launch`: an attention kernel launched as a programmatic dependent
//! of the kernel before it must give the result of plain stream order.
//!
//! The attention kernels allow their dependents at their start, so a dependent's CTAs start on
//! the free SMs while the kernel before it runs, and only their `griddepcontrol.wait` keeps them
//! from its memory. Each chain puts a long kernel on one CTA first (A: 128 queries over 32768
//! keys, head dim 64, one unit: 171 key blocks on one SM), then a short one (B: 128 by
//! 128) that, without the wait, would:
//!
//! - read A's O before A writes it (`reads_the_output_of_the_kernel_before`: B's Q is A's O,
//!   filled with NaN before A);
//! - write over what A has not read yet (`writes_over_what_the_kernel_before_reads`: B's O is
//!   the last 128 keys of A's K).
//!
//! Both are prepared first (`prepare`: the uploads), then launched back to back with
//! `launch_raw`, kernel after kernel, twice. A is checked against the f64 reference; B against
//! the reference of what it read once A was done. The module of the kernel crate's `unwaited`
//! feature (the kernels without their wait) must fail here: the suite runs `attention-test
//! gpu_attention_unwaited.ptx --programmatic` and asks for a failure.

use std::sync::Arc;

use cudarc::driver::{CudaSlice, CudaStream, DevicePtr};
use gpu_attention_host::{Attention, Element, Problem, Tensors};
use gpu_attention_plan::reference::{Inputs, forward, tolerance};

use crate::{Rng, encode, value};

/// Launches of each chain after its preparation.
const ROUNDS: usize = 2;

/// NaN in both element types.
const POISON: u16 = 0x7FFF;

/// Runs the chains with programmatic launches on (restored after).
pub fn run(attention: &Attention, stream: &Arc<CudaStream>) -> Vec<(String, Result<(), String>)> {
    let before = attention.programmatic_launch();
    let refused = refused_where_the_entries_do_not_wait(attention);
    // SAFETY: a module whose entries wait is launched as `set_programmatic_launch` would; one that
    // does not (the negative control) races only these chains' own buffers, which nothing else
    // reads, each chain waiting for its stream before it frees them.
    unsafe { attention.set_programmatic_launch_unchecked(true) };
    let out = vec![
        (
            "programmatic_refused_where_the_entries_do_not_wait".to_string(),
            refused,
        ),
        (
            "programmatic_reads_the_output_of_the_kernel_before".to_string(),
            chain(attention, stream, Chain::ReadsOutput),
        ),
        (
            "programmatic_writes_over_what_the_kernel_before_reads".to_string(),
            chain(attention, stream, Chain::WritesInput),
        ),
    ];
    // SAFETY: the setting before, which the caller chose.
    unsafe { attention.set_programmatic_launch_unchecked(before) };
    out
}

/// `set_programmatic_launch(true)` succeeds on a module whose entries wait and is refused,
/// leaving the setting off, on one whose entries do not (`Attention::entries_wait`, from the ABI
/// version); off is always accepted.
fn refused_where_the_entries_do_not_wait(attention: &Attention) -> Result<(), String> {
    // SAFETY: off launches in stream order.
    unsafe { attention.set_programmatic_launch_unchecked(false) };
    let on = attention.set_programmatic_launch(true);
    match (attention.entries_wait(), on) {
        (true, Ok(())) if attention.programmatic_launch() => {}
        (false, Err(_)) if !attention.programmatic_launch() => {}
        (waits, on) => {
            return Err(format!(
                "entries wait: {waits}; set_programmatic_launch(true) gave {on:?}, the setting now {}",
                attention.programmatic_launch()
            ));
        }
    }
    attention
        .set_programmatic_launch(false)
        .map_err(|e| format!("turning programmatic launches off: {e}"))
}

#[derive(Clone, Copy, PartialEq)]
enum Chain {
    /// B's Q is A's O.
    ReadsOutput,
    /// B's O is the last 128 keys of A's K.
    WritesInput,
}

fn cuda(what: &'static str) -> impl Fn(cudarc::driver::DriverError) -> String {
    move |e| format!("{what}: {e:?}")
}

/// O (16-bit) against `want` within `bound`: the first element off.
pub(crate) fn within(
    what: &str,
    element: Element,
    got: &[u16],
    want: &[f64],
    bound: f64,
) -> Result<(), String> {
    for (i, (&bits, &w)) in got.iter().zip(want).enumerate() {
        let g = f64::from(value(element, bits));
        let err = (g - w).abs();
        if err.is_nan() || err > bound {
            return Err(format!(
                "{what}: O[{i}] = {g}, reference {w}, error {err:.3e} above the bound {bound:.3e}"
            ));
        }
    }
    Ok(())
}

fn chain(attention: &Attention, stream: &Arc<CudaStream>, kind: Chain) -> Result<(), String> {
    let mut rng = Rng(0x3C6E_F372_FE94_F82B);
    let (keys, rows, d) = (32_768u32, 128u32, 64u32);
    let a = Problem::contiguous(1, (rows, keys), (1, 1), d);
    let b = Problem::contiguous(1, (rows, rows), (1, 1), d);
    let (ea, eb) = (a.extents(), b.extents());
    let draw = |n: u64, rng: &mut Rng| -> (Vec<u16>, Vec<f32>) {
        (0..n).map(|_| encode(Element::Bf16, rng.unit())).unzip()
    };
    let up = |h: &[u16]| stream.clone_htod(h).map_err(cuda("upload"));
    let (qa, qa_f) = draw(ea.q, &mut rng);
    let (ka, ka_f) = draw(ea.k, &mut rng);
    let (va, va_f) = draw(ea.v, &mut rng);
    let (qb, qb_f) = draw(eb.q, &mut rng);
    let (kb, kb_f) = draw(eb.k, &mut rng);
    let (vb, vb_f) = draw(eb.v, &mut rng);
    let (dqa, mut dka, dva) = (up(&qa)?, up(&ka)?, up(&va)?);
    let (dqb, dkb, dvb) = (up(&qb)?, up(&kb)?, up(&vb)?);
    let mut doa: CudaSlice<u16> = up(&vec![POISON; ea.o as usize])?;
    let mut dob: CudaSlice<u16> = up(&vec![POISON; eb.o as usize])?;
    let lse = |n: u64| stream.alloc_zeros::<f32>(n as usize).map_err(cuda("LSE"));
    let (dla, dlb) = (lse(ea.lse)?, lse(eb.lse)?);
    let at = |s: &CudaSlice<u16>| s.device_ptr(stream).0;
    let tail = u64::from(keys - rows) * u64::from(d) * 2;
    let tensors_a = Tensors {
        q: at(&dqa),
        k: at(&dka),
        v: at(&dva),
        o: at(&doa),
        lse: dla.device_ptr(stream).0,
    };
    let tensors_b = Tensors {
        q: if kind == Chain::ReadsOutput {
            at(&doa)
        } else {
            at(&dqb)
        },
        k: at(&dkb),
        v: at(&dvb),
        o: if kind == Chain::WritesInput {
            at(&dka) + tail
        } else {
            at(&dob)
        },
        lse: dlb.device_ptr(stream).0,
    };
    let pa = attention
        .prepare(stream, &a, tensors_a)
        .map_err(|e| format!("A: {e}"))?;
    let pb = attention
        .prepare(stream, &b, tensors_b)
        .map_err(|e| format!("B: {e}"))?;
    if pa.grid() != 1 {
        return Err(format!(
            "A runs on {} CTAs, not 1: it would not be long",
            pa.grid()
        ));
    }
    // A's reference (its inputs do not change: B writes only past what A's check needs in the
    // write-after-read chain, whose K is restored before each round).
    let inputs_a = Inputs {
        q: &qa_f,
        k: &ka_f,
        v: &va_f,
    };
    let ref_a = forward(&a, &inputs_a).map_err(|e| format!("reference A: {e}"))?;
    let tol_a = tolerance(&a, &inputs_a).map_err(|e| format!("tolerance A: {e}"))?;
    for round in 0..ROUNDS {
        // In stream order before A: a copy orders it fully, and B still follows A directly.
        stream
            .memcpy_htod(&vec![POISON; ea.o as usize], &mut doa)
            .map_err(cuda("O of A"))?;
        stream
            .memcpy_htod(&vec![POISON; eb.o as usize], &mut dob)
            .map_err(cuda("O of B"))?;
        stream.memcpy_htod(&ka, &mut dka).map_err(cuda("K of A"))?;
        // SAFETY: every tensor is alive until the synchronisation below, holds its problem's
        // extents (B's O in A's K: its last 128 rows), and only these launches touch them, in
        // this stream's order; the preparations' uploads were ordered before on this stream.
        unsafe {
            attention
                .launch_raw(&pa, stream.cu_stream())
                .map_err(|e| format!("A: {e}"))?;
            attention
                .launch_raw(&pb, stream.cu_stream())
                .map_err(|e| format!("B: {e}"))?;
        }
        stream
            .synchronize()
            .map_err(|e| format!("round {round}: a kernel failed: {e:?}"))?;
        let oa = stream.clone_dtoh(&doa).map_err(cuda("reading O of A"))?;
        within(
            &format!("round {round}: A"),
            Element::Bf16,
            &oa,
            &ref_a.o,
            tol_a.o,
        )?;
        // B's reference, from what it read once A was done.
        let q_of_b: Vec<f32> = match kind {
            Chain::ReadsOutput => oa.iter().map(|&x| value(Element::Bf16, x)).collect(),
            Chain::WritesInput => qb_f.clone(),
        };
        let inputs_b = Inputs {
            q: &q_of_b,
            k: &kb_f,
            v: &vb_f,
        };
        let ref_b = forward(&b, &inputs_b).map_err(|e| format!("reference B: {e}"))?;
        let tol_b = tolerance(&b, &inputs_b).map_err(|e| format!("tolerance B: {e}"))?;
        let ob = match kind {
            Chain::ReadsOutput => stream.clone_dtoh(&dob).map_err(cuda("reading O of B"))?,
            Chain::WritesInput => {
                let k_after = stream.clone_dtoh(&dka).map_err(cuda("reading K of A"))?;
                k_after[(tail / 2) as usize..].to_vec()
            }
        };
        within(
            &format!("round {round}: B"),
            Element::Bf16,
            &ob,
            &ref_b.o,
            tol_b.o,
        )?;
    }
    Ok(())
}
