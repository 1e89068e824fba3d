//! A program on `gpu-gemm-host`: `D = A * B^T` for bf16 matrices on an NVIDIA Hopper GPU, checked
//! against a host reference, on stable Rust (the kernels come embedded in the crate).
//!
//! The inputs are small integers (-1, 0 or 1) and K is [`K`], so every element of D is an
//! integer of magnitude at most 256: exact in f32, where the GPU adds the products up, and in
//! bf16, its output. The check is therefore equality, element by element.
//!
//! Prints one `PASS` or `FAIL` line, or one `error:` line when nothing could run; the exit
//! status says which ([`exit`]).

use std::process::ExitCode;

use gpu_gemm_host::{Gemm, GemmError, Shape, bf16, f32_of};

/// The exit statuses. They are the numbers of the repository's `pipeline_suite::exit` (which
/// its `cargo xtask` reads when it runs this program): only [`NO_DRIVER`](exit::NO_DRIVER) means
/// "nothing could be tested on this machine".
mod exit {
    /// D is right.
    pub const PASSED: u8 = 0;
    /// Some element of D is wrong, or the multiplication failed.
    pub const TEST_FAILED: u8 = 1;
    /// `libcuda.so` cannot be loaded: this machine has no NVIDIA driver.
    pub const NO_DRIVER: u8 = 4;
    /// The driver is there, but the GPU cannot run the GEMM (not a Hopper GPU, too old a driver)
    /// or a buffer could not be allocated.
    pub const SETUP: u8 = 5;
}

/// Rows of A and D.
const M: u32 = 1000;
/// Rows of B, columns of D.
const N: u32 = 768;
/// The inner dimension: with inputs in -1..=1, `|D| <= K = 256`, every integer of which bf16
/// holds exactly (its significand has 8 bits).
const K: u32 = 256;

/// A run that did not pass: its exit status and its one-line message.
struct Failure {
    status: u8,
    message: String,
}

/// The failure with `status` of a call that returned `error`.
fn failed(status: u8, what: &'static str) -> impl Fn(GemmError) -> Failure {
    move |error| Failure {
        // No driver is its own status wherever it shows.
        status: match error {
            GemmError::NoDriver(_) => exit::NO_DRIVER,
            _ => status,
        },
        message: format!("{what}: {error}"),
    }
}

/// A cudarc error (cudarc's buffers and streams, through `gpu_gemm_host`'s context).
fn cuda<E: std::fmt::Debug>(status: u8, what: &'static str) -> impl Fn(E) -> Failure {
    move |error| Failure {
        status,
        message: format!("{what}: {error:?}"),
    }
}

/// `rows x K` values in -1..=1 as bf16, from a xorshift generator: the same every run.
fn matrix(seed: u64, rows: u32) -> Vec<u16> {
    let mut state = seed;
    (0..rows as usize * K as usize)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            bf16((state % 3) as f32 - 1.0)
        })
        .collect()
}

/// The host's `D = A * B^T`, in integers.
fn reference(a: &[u16], b: &[u16]) -> Vec<i32> {
    let k = K as usize;
    let int = |x: u16| f32_of(x) as i32;
    let mut d = Vec::with_capacity(M as usize * N as usize);
    for row in a.chunks_exact(k) {
        for col in b.chunks_exact(k) {
            d.push(row.iter().zip(col).map(|(&x, &y)| int(x) * int(y)).sum());
        }
    }
    d
}

/// The first element of `d` (the GPU's, bf16) that differs from `want`: (row, column, got).
fn first_wrong(d: &[u16], want: &[i32]) -> Option<(usize, usize, f32)> {
    let at = d
        .iter()
        .zip(want)
        .position(|(&x, &w)| f32_of(x) != w as f32)?;
    Some((at / N as usize, at % N as usize, f32_of(d[at])))
}

fn run() -> Result<String, Failure> {
    // A one-line GemmError::NoDriver without a CUDA driver (cudarc's CudaContext::new panics).
    let ctx = gpu_gemm_host::context(0).map_err(failed(exit::SETUP, "opening GPU 0"))?;
    let stream = ctx.default_stream();
    // The embedded kernels, loaded and checked (launch ABI, entries, parameters, bounds).
    let gemm = Gemm::new(&ctx).map_err(failed(exit::SETUP, "loading the GEMM"))?;
    let shape = Shape { m: M, n: N, k: K };
    let (a, b) = (matrix(1, M), matrix(2, N));
    let upload = cuda(exit::SETUP, "uploading A and B");
    let (a_gpu, b_gpu) = (
        stream.clone_htod(&a).map_err(&upload)?,
        stream.clone_htod(&b).map_err(&upload)?,
    );
    let mut d_gpu = stream
        .alloc_zeros::<u16>(M as usize * N as usize)
        .map_err(cuda(exit::SETUP, "allocating D"))?;
    // D = 1 * A * B^T + 0 * C, without C.
    gemm.run(&stream, shape, 1.0, &a_gpu, &b_gpu, 0.0, None, &mut d_gpu)
        .map_err(failed(exit::TEST_FAILED, "the GEMM"))?;
    let d = stream
        .clone_dtoh(&d_gpu)
        .map_err(cuda(exit::TEST_FAILED, "downloading D"))?;
    let want = reference(&a, &b);
    let kernel = gemm.default_kernel(shape);
    if let Some((row, col, got)) = first_wrong(&d, &want) {
        return Err(Failure {
            status: exit::TEST_FAILED,
            message: format!(
                "D[{row}][{col}] is {got}, the host computes {} ({kernel:?} kernel)",
                want[row * N as usize + col]
            ),
        });
    }
    let corner: Vec<f32> = d[..4].iter().map(|&x| f32_of(x)).collect();
    Ok(format!(
        "PASS: D = A * B^T, {M} x {N} x {K} in bf16 ({kernel:?} kernel, {} SMs): every element equals the host's; D[0][0..4] = {corner:?}",
        gemm.sms()
    ))
}

fn main() -> ExitCode {
    match run() {
        Ok(line) => {
            println!("{line}");
            ExitCode::from(exit::PASSED)
        }
        Err(Failure { status, message }) => {
            let line = if status == exit::TEST_FAILED {
                format!("FAIL: {message}")
            } else {
                format!("error: {message}")
            };
            eprintln!("{line}");
            ExitCode::from(status)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reference_multiplies_rows_by_rows() {
        let a = matrix(1, M);
        let b = matrix(2, N);
        let d = reference(&a, &b);
        assert_eq!(d.len(), (M * N) as usize);
        let (k, n) = (K as usize, N as usize);
        let dot = |i: usize, j: usize| -> i32 {
            (0..k)
                .map(|x| f32_of(a[i * k + x]) as i32 * f32_of(b[j * k + x]) as i32)
                .sum()
        };
        for (i, j) in [(0, 0), (3, 7), (999, 767)] {
            assert_eq!(d[i * n + j], dot(i, j));
        }
        // Exact in bf16, and not all zero.
        assert!(
            d.iter()
                .all(|&x| x.unsigned_abs() <= K && f32_of(bf16(x as f32)) == x as f32)
        );
        assert!(d.iter().any(|&x| x != 0));
    }

    #[test]
    fn a_wrong_element_is_found_where_it_is() {
        let want = vec![1, 2, 3, -4];
        let mut d: Vec<u16> = want.iter().map(|&x| bf16(x as f32)).collect();
        assert_eq!(first_wrong(&d, &want), None);
        d[3] = bf16(4.0);
        assert_eq!(first_wrong(&d, &want), Some((0, 3, 4.0)));
    }
}
