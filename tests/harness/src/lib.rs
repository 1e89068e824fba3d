//! The host harness of the gpu-pipeline device suite, as a library with two thin binaries:
//! `pipeline-harness` (the suite, [`suite::main`]) and `pipeline-bench` (the benchmarks,
//! [`bench::main`]).
//!
//! - [`cuda`]: the CUDA driver through cudarc (context, module, launches with clusters, timed
//!   waits), shared by both binaries.
//! - [`tests`]: the suite's tests, expanded from the `pipeline-suite` lists, and their data checks.
//! - [`broken`]: the broken kernels of checked builds, each in a child process, checked against
//!   the one table of misuse scenarios (`pipeline_suite::MISUSES`).
//! - [`bench`]: the benchmark tables, expanded from the `pipeline-suite` benchmark lists.
//! - [`report`]: the date and commit of a run, one-line errors, the immediate exit after a hang.
//!
//! Exit statuses are `pipeline_suite::exit`, which the xtask reads too.

pub mod bench;
pub mod broken;
pub mod cuda;
pub mod report;
pub mod suite;
pub mod tests;
