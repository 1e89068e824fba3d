//! `pipeline-bench`: the benchmark kernels written with the library (Rust PTX) and their
//! hand-written CUDA C++ twins (a cubin built by nvcc), side by side in one process
//! (`pipeline_harness::bench`).
//!
//! Usage: `pipeline-bench --rust-cubin FILE --cpp-cubin FILE [--cpp-extra FILE]...
//! [--checked-cubin FILE] --out DIR [--quick]`, and `pipeline-bench --list-kernels [--cpp]`.
//! Exit status: `pipeline_suite::exit` (0 passed, 1 a wrong copy or a failed measurement,
//! 2 usage, 4 no CUDA driver, 5 CUDA setup), errors as one line on stderr.

fn main() -> std::process::ExitCode {
    pipeline_harness::bench::main()
}
