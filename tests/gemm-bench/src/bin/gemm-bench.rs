//! `gemm-bench`: cuBLAS baselines and the Rust GEMM for `D = alpha * A * B^T + beta * C` in bf16,
//! alternating in one process, every result checked; or, with `--check`, the correctness pass
//! alone, nothing timed (`gemm_bench`). `gemm-bench --help` for the options. Exit status:
//! `pipeline_suite::exit` (0 passed, 1 a check or a run failed, 2 usage, 3 a kernel hung (only
//! `--check` watches for it), 4 no CUDA driver, 5 CUDA setup), errors as one line on stderr.

fn main() -> std::process::ExitCode {
    gemm_bench::main()
}
