//! A program on `gpu-attention-host`: causal grouped-query attention (8 query heads over 2 K/V
//! heads, head dimension 128, 2 sequences of 777 queries over 1000 keys: the mask aligned to the
//! bottom right) on an NVIDIA Hopper GPU, on stable Rust (the kernels come embedded in the
//! crate), checked against a host computation in f64 on every 37th query row.
//!
//! Prints one `PASS` or `FAIL` line, or one `error:` line when nothing could run; the exit status
//! says which ([`exit`]).

use std::process::ExitCode;

use gpu_attention_host::{Attention, Error, Mask, Problem, Tensor};

/// The exit statuses: the numbers of the repository's `pipeline_suite::exit` (which its
/// `cargo xtask` reads when it runs this program).
mod exit {
    /// O and LSE are right.
    pub const PASSED: u8 = 0;
    /// Some element is off, or the launch failed.
    pub const TEST_FAILED: u8 = 1;
    /// `libcuda.so` cannot be loaded: this machine has no NVIDIA driver.
    pub const NO_DRIVER: u8 = 4;
    /// The driver is there, but the GPU cannot run the kernels, or an allocation failed.
    pub const SETUP: u8 = 5;
}

/// bf16 bits of `x`, rounded to nearest even.
fn bf16(x: f32) -> u16 {
    let bits = x.to_bits();
    let round = 0x7FFF + ((bits >> 16) & 1);
    ((bits + round) >> 16) as u16
}

fn f32_of(bits: u16) -> f32 {
    f32::from_bits(u32::from(bits) << 16)
}

fn run() -> Result<String, (u8, String)> {
    let setup = |what: &'static str| {
        move |e: Error| {
            let status = if matches!(e, Error::NoDriver(_)) {
                exit::NO_DRIVER
            } else {
                exit::SETUP
            };
            (status, format!("{what}: {e}"))
        }
    };
    let cuda =
        |what: &'static str| move |e: cudarc_error::E| (exit::SETUP, format!("{what}: {e:?}"));
    let ctx = gpu_attention_host::context(0).map_err(setup("opening the GPU"))?;
    let stream = ctx.default_stream();
    let attention = Attention::new(&ctx).map_err(setup("loading the kernels"))?;
    let (batch, seq_q, seq_k, heads_q, heads_kv, d) = (2u32, 777u32, 1000u32, 8u32, 2u32, 128u32);
    let problem =
        Problem::contiguous(batch, (seq_q, seq_k), (heads_q, heads_kv), d).with_mask(Mask::Causal);
    let e = problem.extents();
    // Deterministic inputs in [-1, 1).
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        bf16(((state >> 40) as f32 / (1u64 << 23) as f32) - 1.0)
    };
    let q: Vec<u16> = (0..e.q).map(|_| next()).collect();
    let k: Vec<u16> = (0..e.k).map(|_| next()).collect();
    let v: Vec<u16> = (0..e.v).map(|_| next()).collect();
    let q_dev = stream.clone_htod(&q).map_err(cuda("uploading Q"))?;
    let k_dev = stream.clone_htod(&k).map_err(cuda("uploading K"))?;
    let v_dev = stream.clone_htod(&v).map_err(cuda("uploading V"))?;
    let mut o_dev = stream
        .alloc_zeros::<u16>(e.o as usize)
        .map_err(cuda("allocating O"))?;
    let mut lse_dev = stream
        .alloc_zeros::<f32>(e.lse as usize)
        .map_err(cuda("allocating LSE"))?;
    attention
        .run(
            &stream,
            &problem,
            &q_dev,
            &k_dev,
            &v_dev,
            &mut o_dev,
            &mut lse_dev,
        )
        .map_err(|e| (exit::TEST_FAILED, format!("attention: {e}")))?;
    let o = stream.clone_dtoh(&o_dev).map_err(cuda("reading O"))?;
    let lse = stream.clone_dtoh(&lse_dev).map_err(cuda("reading LSE"))?;
    // The host computation on every 37th row of every sequence and head.
    let scale = problem.scale() as f64;
    let group = heads_q / heads_kv;
    let mut worst = 0.0f64;
    let mut rows = 0;
    for b in 0..batch {
        for h in 0..heads_q {
            for i in (0..seq_q).step_by(37) {
                let keys = (i + 1 + seq_k - seq_q).min(seq_k);
                let at = |t: Tensor, row: u32, head: u32, x: u32| {
                    problem.index(t, b, row, head, x) as usize
                };
                let scores: Vec<f64> = (0..keys)
                    .map(|j| {
                        scale
                            * (0..d)
                                .map(|x| {
                                    f64::from(f32_of(q[at(Tensor::Q, i, h, x)]))
                                        * f64::from(f32_of(k[at(Tensor::K, j, h / group, x)]))
                                })
                                .sum::<f64>()
                    })
                    .collect();
                let m = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                let sum: f64 = scores.iter().map(|s| (s - m).exp()).sum();
                let want_lse = m + sum.ln();
                let got_lse = f64::from(lse[problem.lse_index(b, h, i) as usize]);
                worst = worst.max((got_lse - want_lse).abs() * 100.0);
                for x in 0..d {
                    let want: f64 = scores
                        .iter()
                        .enumerate()
                        .map(|(j, s)| {
                            (s - want_lse).exp()
                                * f64::from(f32_of(v[at(Tensor::V, j as u32, h / group, x)]))
                        })
                        .sum();
                    let got = f64::from(f32_of(o[at(Tensor::O, i, h, x)]));
                    worst = worst.max((got - want).abs());
                }
                rows += 1;
            }
        }
    }
    // bf16 output: half a unit in the last place of values below 1 is 2^-9; allow 4x.
    let bound = 4.0 / 512.0;
    if worst <= bound {
        Ok(format!(
            "PASS causal GQA attention {batch} x {seq_q} x {seq_k}, {heads_q}/{heads_kv} heads of {d}: {rows} rows checked, largest error {worst:.2e} (bound {bound:.2e}; LSE errors counted x100)"
        ))
    } else {
        Err((
            exit::TEST_FAILED,
            format!("FAIL largest error {worst:.2e} above {bound:.2e}"),
        ))
    }
}

/// cudarc's error type, named through the host crate's functions' results.
mod cudarc_error {
    pub type E = gpu_attention_host::DriverError;
}

fn main() -> ExitCode {
    match run() {
        Ok(line) => {
            println!("{line}");
            ExitCode::from(exit::PASSED)
        }
        Err((status, line)) => {
            if status == exit::TEST_FAILED {
                println!("{line}");
            } else {
                eprintln!("error: {line}");
            }
            ExitCode::from(status)
        }
    }
}
