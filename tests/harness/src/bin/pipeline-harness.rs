//! The device suite's host harness: loads the kernels' PTX with cudarc, launches every test of
//! the `pipeline-suite` lists, checks the data on the host, and prints one line per test and a
//! final `N passed, M failed` line.
//!
//! Exit status (`pipeline_suite::exit`, which the xtask reads too): 0 all passed, 1 a test failed,
//! 2 a usage error, 3 a kernel hung (the process cannot recover a hung context, so it stops
//! there), 4 no CUDA driver (`libcuda.so` cannot be loaded), 5 a CUDA setup error (the PTX file
//! cannot be read, the driver rejected the module, no device, a GPU older than sm_90, a failed
//! allocation). Errors are one line on stderr. Only 4 may be reported as `SKIPPED`, by
//! `cargo xtask ci` on a machine without a GPU.
//!
//! Usage: `pipeline-harness --ptx FILE [--quick] [--filter TEXT] [--timeout-s N] [--list]`
//! and, with the PTX of a checked build, `pipeline-harness --ptx FILE --broken [--filter TEXT]`:
//! the broken-kernel tests (`pipeline_harness::broken`).

fn main() -> std::process::ExitCode {
    pipeline_harness::suite::main()
}
