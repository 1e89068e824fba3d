//! `gemm-bench`: the bf16 GEMM benchmark and correctness harness.
//!
//! `D = alpha * A * B^T + beta * C` (A: M x K, B: N x K, C and D: M x N, row-major bf16, f32
//! accumulation) by every implementation of [`gemm::Gemm`]: the cuBLAS baselines
//! (`cublasGemmEx`, cuBLASLt's first heuristic choice, the fastest of its heuristic candidates)
//! and the Rust GEMM under test ([`ours`]: every kernel of `gpu-gemm`). The benchmark runs them
//! in one process on one stream, alternating, timed with CUDA events (median after a warm-up),
//! and checks every result ([`check`]). `--check` ([`verify`]) is the correctness pass alone,
//! nothing timed: the GEMM under test against `cublasGemmEx` and a host reference, beta 0 and
//! not 0, over [`problem::CHECK`]; `cargo xtask test-nvidia` runs it. `--host-time`
//! ([`host_time`]) times the host's side of a call instead: `Gemm::run` cold and repeated, a
//! prepared launch, CUDA graph replays, and cuBLAS's own per-call host time.
//!
//! Modules: [`problem`] (shapes, the row-major to column-major mapping; pure), [`check`] (bf16,
//! data, the error bound, the exact reference, medians; pure), [`cuda`] (device, buffers, the
//! gated round-robin timer), [`gemm`] (the trait and the baselines), [`ours`] (where the GEMM under
//! test plugs in), [`runs`] (a problem's buffers, one run of every implementation), [`bench`](mod@bench)
//! (command line, flow, report, CSV), [`targets`] (the targets over a run's shapes; pure),
//! [`verify`] (`--check`).

pub mod bench;
pub mod check;
pub mod cuda;
pub mod gemm;
pub mod host_time;
pub mod ours;
pub mod problem;
pub mod runs;
pub mod targets;
pub mod verify;

pub use bench::main;
