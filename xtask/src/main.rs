//! `cargo xtask`: builds the GPU targets, runs the host and device suites, checks snapshots.
//!
//! This file holds the flags and the dispatch only; each task is a module.

mod amd;
mod artifacts;
mod attention;
mod bench;
mod bench_attention;
mod codegen;
mod compile_fail;
mod cublas;
mod device;
mod example;
mod gemm;
mod gemm_kernel;
mod gpu;
mod hopper;
mod host;
mod nvidia;
mod ptx_check;
mod snapshots;
#[cfg(test)]
mod tidy;
mod toolchain;
mod util;

use std::path::PathBuf;
use std::process::ExitCode;

use xshell::Shell;

use util::{Result, err, root};

const USAGE: &str = "\
usage: cargo xtask <task> [options]

tasks:
  build [--only NAME]        build the library and the device kernels for every GPU target
                             (nvptx64 sm_90, sm_100a, the checked and bench builds of sm_90, the
                             GEMM's sm_90a, the toolkit's device tests' sm_90a, the attention
                             kernels' sm_90a; amdgcn gfx90a, gfx942, gfx1100), a line as each
                             starts, and print the artifacts; --only builds one: sm_90, sm_100a,
                             sm_90-checked, sm_90-bench, gemm, hopper, attention,
                             attention-checked, gfx90a, gfx942 or gfx1100
  test [--bless]             host tests (the tidy checks included), loom models, GPU builds,
                             compile-fail tests, PTX snapshots
                             (--bless rewrites the snapshots and the convergence check's
                             expected reports instead of comparing)
  codegen [--check]          write the generated files from xtask/src/codegen.rs: the Hopper
                             toolkit's wgmma forms, and the GEMM's module that gpu-gemm-host
                             embeds (crates/gpu-gemm-host/module/gpu_gemm.ptx, from a build of
                             the GEMM); --check fails if a committed one differs (`test` checks
                             the sources too, through the xtask's tests; `ci` the module after
                             its GPU builds)
  compile-fail               only the compile-fail tests (part of `test`)
  package                    `cargo publish --dry-run` of every publishable crate, the packaged
                             gpu-pipeline's doc tests outside the workspace as a registry user's
                             would be, and the host crates' build on their rust-version (stable)
  snapshots [--bless]        only the PTX snapshots of the barrier operations (part of `test`);
                             --bless also rewrites crates/ptx-uniform/tests/fixtures/*.expected
  example                    check and build examples/kernel-crate and examples/gemm from their
                             own folders, as their users would (fmt, clippy, tests, the PTX, the
                             programs), then do what examples/gemm/README.md says from a fresh
                             directory outside the repository (copy, point at this checkout,
                             cargo run --release: it passes, or without a driver prints the
                             no-driver line and exits 4)
  test-nvidia [--bundle DIR] [--quick] [--filter TEXT]
                             build and run the device suite, the example's launcher, the GEMM's
                             tests (exact on integers; against cuBLAS: needs cuBLAS) and the
                             toolkit's device tests (hopper-test) on this machine's NVIDIA GPU;
                             with --bundle, write DIR (harness + PTX + the example + the GEMM's
                             and the toolkit's programs + run.sh) to run on a GPU machine without
                             Rust
  bench-nvidia [--bundle DIR] [--quick]
                             benchmarks: the library's kernels against hand-written CUDA C++ (nvcc) and
                             cudaMemcpy, side by side; with --bundle, write DIR to run on a GPU machine
  bench-gemm [--bundle DIR] [--quick]
                             the bf16 GEMM benchmark: cublasGemmEx, cuBLASLt's first heuristic choice
                             and its autotuned fastest, and the Rust GEMM, alternating,
                             every result checked; with --bundle, write DIR to run on a GPU machine
  bench-attention [--bundle DIR] [--quick]
                             the attention forward benchmark: ours beside FlashAttention-3 or -4,
                             cuDNN and torch's flash backend, in one Python process, interleaved,
                             every output checked; with --bundle, write DIR to run on a GPU machine
  test-amd [--bless]         build for gfx90a/gfx942/gfx1100, check the disassembly and its snapshots,
                             run the counter protocol's host model tests, and the AMD device suite if a
                             ROCm runtime is present (otherwise SKIPPED)
  ci                         what .ci/run runs: fmt, clippy, test, package, test-amd, example, test-nvidia (SKIPPED only
                             where no CUDA driver can be loaded; any other harness error fails)";

/// The task's flags, parsed.
struct Flags {
    bless: bool,
    check: bool,
    bundle: Option<PathBuf>,
    quick: bool,
    filter: Option<String>,
    only: Option<String>,
}

fn parse_flags(task: &str, args: &[String]) -> Result<Flags> {
    let mut flags = Flags {
        bless: false,
        check: false,
        bundle: None,
        quick: false,
        filter: None,
        only: None,
    };
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match (task, arg.as_str()) {
            ("test" | "test-amd" | "snapshots", "--bless") => flags.bless = true,
            ("codegen", "--check") => flags.check = true,
            ("test-nvidia", "--bundle") => {
                flags.bundle = Some(PathBuf::from(
                    args.next().ok_or("--bundle needs a directory")?,
                ));
            }
            ("test-nvidia" | "bench-nvidia" | "bench-gemm" | "bench-attention", "--quick") => {
                flags.quick = true
            }
            ("bench-nvidia" | "bench-gemm" | "bench-attention", "--bundle") => {
                flags.bundle = Some(PathBuf::from(
                    args.next().ok_or("--bundle needs a directory")?,
                ));
            }
            ("build", "--only") => {
                flags.only = Some(
                    args.next()
                        .ok_or_else(|| {
                            format!(
                                "--only needs a module: one of {}",
                                artifacts::MODULES.join(", ")
                            )
                        })?
                        .clone(),
                )
            }
            ("test-nvidia", "--filter") => {
                flags.filter = Some(args.next().ok_or("--filter needs a text")?.clone())
            }
            _ => {
                return Err(format!(
                    "`cargo xtask {task}` takes no argument `{arg}`\n\n{USAGE}"
                ));
            }
        }
    }
    Ok(flags)
}

fn run(args: &[String]) -> Result {
    let Some((task, rest)) = args.split_first() else {
        return Err(USAGE.to_string());
    };
    let flags = parse_flags(task, rest)?;
    let sh = Shell::new().map_err(err("cannot start a shell"))?;
    sh.change_dir(root());
    match task.as_str() {
        "build" => {
            toolchain::check(&sh)?;
            for artifact in artifacts::build_all(&sh, flags.only.as_deref())? {
                println!("built {artifact}");
            }
            Ok(())
        }
        "test" => {
            toolchain::check(&sh)?;
            if flags.bless {
                ptx_check::bless_fixtures()?;
            }
            host::test(&sh)?;
            host::asan(&sh)?;
            host::loom(&sh)?;
            artifacts::build_all(&sh, None)?;
            compile_fail::run(&sh)?;
            snapshots::check_nvptx(&sh, flags.bless)?;
            println!("xtask test: all passed");
            Ok(())
        }
        "example" => {
            toolchain::check(&sh)?;
            example::check(&sh)
        }
        "codegen" => {
            toolchain::check(&sh)?;
            codegen::task(&sh, flags.check)
        }
        "compile-fail" => {
            toolchain::check(&sh)?;
            compile_fail::run(&sh)
        }
        "package" => {
            toolchain::check(&sh)?;
            host::package(&sh)
        }
        "snapshots" => {
            toolchain::check(&sh)?;
            if flags.bless {
                ptx_check::bless_fixtures()?;
            }
            gpu::build(&sh, &gpu::NVPTX)?;
            snapshots::check_nvptx(&sh, flags.bless)
        }
        "test-nvidia" => {
            toolchain::check(&sh)?;
            nvidia::test(
                &sh,
                flags.bundle.as_deref(),
                flags.quick,
                flags.filter.as_deref(),
                false,
            )
        }
        "test-amd" => {
            toolchain::check(&sh)?;
            amd::test(&sh, flags.bless)
        }
        "bench-nvidia" => {
            toolchain::check(&sh)?;
            bench::run(&sh, flags.bundle.as_deref(), flags.quick)
        }
        "bench-attention" => {
            toolchain::check(&sh)?;
            bench_attention::run(&sh, flags.bundle.as_deref(), flags.quick)
        }
        "bench-gemm" => {
            toolchain::check(&sh)?;
            gemm::run(&sh, flags.bundle.as_deref(), flags.quick)
        }
        "ci" => {
            toolchain::check(&sh)?;
            host::lint(&sh)?;
            host::test(&sh)?;
            host::asan(&sh)?;
            host::loom(&sh)?;
            artifacts::build_all(&sh, None)?;
            // The module gpu-gemm-host embeds is the one just built.
            codegen::gemm_module(true)?;
            codegen::attention_module(true)?;
            compile_fail::run(&sh)?;
            snapshots::check_nvptx(&sh, false)?;
            host::package(&sh)?;
            amd::test(&sh, false)?;
            example::check(&sh)?;
            nvidia::test(&sh, None, false, None, true)?;
            println!("xtask ci: all passed");
            Ok(())
        }
        "-h" | "--help" | "help" => {
            println!("{USAGE}");
            Ok(())
        }
        other => Err(format!("unknown task `{other}`\n\n{USAGE}")),
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_takes_a_module_and_the_usage_names_each() {
        let args = ["--only".to_string(), "gemm".to_string()];
        assert_eq!(
            parse_flags("build", &args).unwrap().only.as_deref(),
            Some("gemm")
        );
        assert!(matches!(parse_flags("build", &args[..1]), Err(e) if e.contains("sm_90")));
        assert!(parse_flags("test", &args).is_err_and(|e| e.contains("--only")));
        for name in artifacts::MODULES {
            assert!(USAGE.contains(name), "{name}");
        }
    }
}
