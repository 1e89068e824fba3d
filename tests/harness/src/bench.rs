//! `pipeline-bench`: runs the benchmark kernels written with the library (Rust PTX) and their
//! hand-written CUDA C++ twins (a cubin built by nvcc) side by side in one process, alternating,
//! and prints a table: configuration, Rust, C++, ratio, and the hardware reference where one
//! exists. Cycle figures come from `%clock64` in the kernels (median over repetitions, after a
//! warm-up); bandwidth from CUDA events around each launch. Streaming outputs are verified.
//!
//! Usage: `pipeline-bench --rust-ptx FILE --rust-cubin FILE --cpp-cubin FILE [--cpp-extra FILE]...
//! --out DIR [--quick]` (the Rust PTX assembled by the same `ptxas -arch=sm_90a` as the C++, so both
//! run the same compiler's machine code; the PTX itself opens the context; `--cpp-extra` cubins hold
//! C++ kernels that need a newer PTX ISA, looked up after the main one). `pipeline-bench
//! --list-kernels` prints the kernels the tables need, for the bundle's check.
//!
//! Three tables: the cycle benchmarks (Rust against C++), the counter-ring variants (Rust and C++
//! against the mbarrier ring of the same shape), and the streaming copies (against
//! `cudaMemcpy`). Each row is printed as soon as it is measured.

mod cuda;

use std::collections::HashMap;
use std::ffi::c_void;
use std::fmt::Write as _;
use std::process::ExitCode;
use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaModule, sys};

use cuda::Gpu;

/// One cycle benchmark: kernel name, threads per block, cluster size, dynamic shared memory,
/// and the reference figure measured with hand-written C++ on this machine (DESIGN.md), if any.
struct Cycles {
    kernel: &'static str,
    what: &'static str,
    threads: u32,
    cluster: u32,
    smem: u32,
    reference: Option<&'static str>,
}

const fn cycles(
    kernel: &'static str,
    what: &'static str,
    threads: u32,
    reference: Option<&'static str>,
) -> Cycles {
    Cycles {
        kernel,
        what,
        threads,
        cluster: 1,
        smem: 128,
        reference,
    }
}

/// The cycle benchmarks.
const CYCLES: &[Cycles] = &[
    cycles(
        "bench_roundtrip_mbar",
        "round trip, 1 stage (cycles)",
        64,
        Some("129"),
    ),
    cycles(
        "bench_roundtrip_mbar_ticks",
        "round trip, ticks hint 1000 ns",
        64,
        Some("129 + 21"),
    ),
    cycles(
        "bench_roundtrip_mbar_poll",
        "round trip, try-wait polling",
        64,
        None,
    ),
    cycles(
        "bench_roundtrip_counter",
        "round trip, counter backend",
        64,
        None,
    ),
    Cycles {
        kernel: "bench_cluster_roundtrip",
        what: "cluster of 2, remote-arrive round trip",
        threads: 32,
        cluster: 2,
        smem: 128,
        reference: Some("794"),
    },
    cycles(
        "bench_ring_mbar_s2_c1_warp",
        "ring s2, 1 consumer warp, per-warp (cycles/stage)",
        64,
        Some("76"),
    ),
    cycles(
        "bench_ring_mbar_s4_c1_warp",
        "ring s4, 1 consumer warp, per-warp",
        64,
        Some("76"),
    ),
    cycles(
        "bench_ring_mbar_s8_c1_warp",
        "ring s8, 1 consumer warp, per-warp",
        64,
        Some("76"),
    ),
    cycles(
        "bench_ring_mbar_s2_c4_warp",
        "ring s2, 4 consumer warps, per-warp",
        160,
        Some("76"),
    ),
    cycles(
        "bench_ring_mbar_s4_c4_warp",
        "ring s4, 4 consumer warps, per-warp",
        160,
        Some("76"),
    ),
    cycles(
        "bench_ring_mbar_s8_c4_warp",
        "ring s8, 4 consumer warps, per-warp",
        160,
        Some("76"),
    ),
    cycles(
        "bench_ring_mbar_s2_c1_thread",
        "ring s2, 1 consumer warp, per-thread",
        64,
        Some("76"),
    ),
    cycles(
        "bench_ring_mbar_s4_c1_thread",
        "ring s4, 1 consumer warp, per-thread",
        64,
        Some("76"),
    ),
    cycles(
        "bench_ring_mbar_s8_c1_thread",
        "ring s8, 1 consumer warp, per-thread",
        64,
        Some("76"),
    ),
    cycles(
        "bench_ring_mbar_s2_c4_thread",
        "ring s2, 4 consumer warps, per-thread",
        160,
        Some("76"),
    ),
    cycles(
        "bench_ring_mbar_s4_c4_thread",
        "ring s4, 4 consumer warps, per-thread",
        160,
        Some("76"),
    ),
    cycles(
        "bench_ring_mbar_s8_c4_thread",
        "ring s8, 4 consumer warps, per-thread",
        160,
        Some("76"),
    ),
    cycles(
        "bench_ring_counter_s4_c1_warp",
        "counter ring s4, 1 consumer warp, per-warp",
        64,
        Some("221-227"),
    ),
    cycles(
        "bench_ring_counter_s4_c4_warp",
        "counter ring s4, 4 consumer warps, per-warp",
        160,
        Some("221-227"),
    ),
    cycles(
        "bench_ring_counter_s4_c1_thread",
        "counter ring s4, 1 consumer warp, per-thread",
        64,
        Some("221-227"),
    ),
    cycles(
        "bench_ring_counter_s4_c4_thread",
        "counter ring s4, 4 consumer warps, per-thread",
        160,
        Some("221-227"),
    ),
];

/// The counter-ring variants (flags in `tests/bench/bench.cu` and
/// `tests/kernels/src/bench/variants.rs`): name and what differs. `base` is the library itself
/// (the `bench_*_counter*` kernels); the others run the library's pipeline over a test backend.
const VARIANTS: &[(&str, &str)] = &[
    ("base", "the library now (the cmask_sleep0 algorithm)"),
    (
        "old",
        "the library's first algorithm: run-time-mask warp sync, red.release.cta, spin on ld.acquire.cta",
    ),
    (
        "nofence",
        "old, red.relaxed.cta without fence (NOT a release: measurement only)",
    ),
    (
        "cmask",
        "old with constant-mask paths (full warp: bar.warp.sync 0xffffffff, lane 0 adds; one lane: no warp sync)",
    ),
    ("cmask_fence", "cmask, fence.acq_rel.cta + red.relaxed.cta"),
    ("cmask_sc", "cmask, fence.sc.cta + red.relaxed.cta"),
    ("cmask_atom", "cmask, atom.release.cta"),
    (
        "cmask_ldrelaxed",
        "cmask, poll ld.relaxed.cta then fence.acq_rel.cta",
    ),
    ("cmask_sleep0", "cmask, nanosleep 0 after each failed poll"),
    ("cmask_pad", "cmask, counters 128 bytes apart"),
    (
        "cmask_restrict",
        "cmask, fence.release.sync_restrict::shared::cta.cluster + red.relaxed.cta (PTX 8.6; C++ only)",
    ),
    (
        "cmask_frelease",
        "cmask, fence.release.cta + red.relaxed.cta (PTX 8.6; C++ only)",
    ),
    (
        "cmask_nofence",
        "cmask, red.relaxed.cta without fence (NOT a release: measurement only)",
    ),
    (
        "sleep0_ldrelaxed",
        "cmask_sleep0, poll ld.relaxed.cta then fence.acq_rel.cta",
    ),
    (
        "sleep0_nofence",
        "cmask_sleep0, red.relaxed.cta without fence (NOT a release: measurement only)",
    ),
    (
        "sleep0_store",
        "cmask_sleep0, ld + st.release.cta instead of the atomic (one arriving warp per counter only: measurement only)",
    ),
];

/// Variants that are only valid where one warp arrives on each counter (no 4-consumer-warp shapes).
const SINGLE_WRITER: &[&str] = &["sleep0_store"];

/// Whether `variant` has a kernel in `shape`.
fn variant_has_shape(variant: &str, shape: &str) -> bool {
    !(SINGLE_WRITER.contains(&variant) && shape.starts_with("c4"))
}

/// The shapes of the variant table: suffix, threads, the mbarrier kernel of the same shape, label.
const SHAPES: &[(&str, u32, &str, &str)] = &[
    ("rt", 64, "bench_roundtrip_mbar", "round trip"),
    (
        "c1_warp",
        64,
        "bench_ring_mbar_s4_c1_warp",
        "s4, 1 warp, per-warp",
    ),
    (
        "c4_warp",
        160,
        "bench_ring_mbar_s4_c4_warp",
        "s4, 4 warps, per-warp",
    ),
    (
        "c1_thread",
        64,
        "bench_ring_mbar_s4_c1_thread",
        "s4, 1 warp, per-thread",
    ),
    (
        "c4_thread",
        160,
        "bench_ring_mbar_s4_c4_thread",
        "s4, 4 warps, per-thread",
    ),
];

/// The kernel of a variant in a shape.
fn variant_kernel(variant: &str, shape: &str) -> String {
    match (variant, shape) {
        ("base", "rt") => "bench_roundtrip_counter".into(),
        ("base", _) => format!("bench_ring_counter_s4_{shape}"),
        _ => format!("var_{variant}_{shape}"),
    }
}

/// How a streaming kernel assigns chunks to CTAs (see `stream` in the kernels).
#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Contig,
    Interleaved,
    Dynamic,
}

/// One streaming benchmark: its kernel's ring (stages, KiB per stage), the stores each storer
/// keeps in flight past the one it releases, the chunk assignment, the storers, and CTAs per SM.
struct Stream {
    kernel: &'static str,
    stages: u32,
    kib: u32,
    pending: u32,
    mode: Mode,
    storers: u32,
    ctas_per_sm: u32,
}

const fn stream(
    kernel: &'static str,
    stages: u32,
    kib: u32,
    pending: u32,
    mode: Mode,
    storers: u32,
    ctas_per_sm: u32,
) -> Stream {
    Stream {
        kernel,
        stages,
        kib,
        pending,
        mode,
        storers,
        ctas_per_sm,
    }
}

impl Stream {
    /// Dynamic shared memory: the header (`stream_header` of the kernels) and the slots.
    fn smem(&self) -> u32 {
        let tags = if self.mode == Mode::Dynamic {
            4 * self.stages
        } else {
            0
        };
        (16 * self.stages + tags).div_ceil(128) * 128 + self.stages * self.kib * 1024
    }

    fn label(&self) -> String {
        let mode = match self.mode {
            Mode::Contig => "contiguous",
            Mode::Interleaved => "interleaved",
            Mode::Dynamic => "dynamic",
        };
        format!(
            "s{:<2} x {:>2} KiB, {} in flight, {mode:<11}, {} storer{}, {} CTA/SM",
            self.stages,
            self.kib,
            self.pending + 1,
            self.storers,
            if self.storers > 1 { "s" } else { " " },
            self.ctas_per_sm
        )
    }

    /// The CSV key: the kernel, and the CTAs per SM where more than one.
    fn key(&self) -> String {
        if self.ctas_per_sm > 1 {
            format!("{}@{}cta", self.kernel, self.ctas_per_sm)
        } else {
            self.kernel.to_string()
        }
    }
}

use Mode::{Contig, Dynamic, Interleaved};

/// The streaming benchmarks. The first nine are the original shape (one loader lane, one storer
/// lane, a stage released one store later, contiguous chunks, one CTA per SM); the others vary one
/// or more of those. The kernels' lists (`STREAM` in bench.cu, `stream_kernels!`) match this one.
const STREAMS: &[Stream] = &[
    stream("bench_stream_s2_k8", 2, 8, 1, Contig, 1, 1),
    stream("bench_stream_s2_k16", 2, 16, 1, Contig, 1, 1),
    stream("bench_stream_s2_k32", 2, 32, 1, Contig, 1, 1),
    stream("bench_stream_s2_k64", 2, 64, 1, Contig, 1, 1),
    stream("bench_stream_s4_k8", 4, 8, 1, Contig, 1, 1),
    stream("bench_stream_s4_k16", 4, 16, 1, Contig, 1, 1),
    stream("bench_stream_s4_k32", 4, 32, 1, Contig, 1, 1),
    stream("bench_stream_s8_k8", 8, 8, 1, Contig, 1, 1),
    stream("bench_stream_s8_k16", 8, 16, 1, Contig, 1, 1),
    stream("bench_stream_s4_k32_p2", 4, 32, 2, Contig, 1, 1),
    stream("bench_stream_s4_k32_p3", 4, 32, 3, Contig, 1, 1),
    stream("bench_stream_s8_k16_p3", 8, 16, 3, Contig, 1, 1),
    stream("bench_stream_s8_k16_p6", 8, 16, 6, Contig, 1, 1),
    stream("bench_stream_s3_k64_p1", 3, 64, 1, Contig, 1, 1),
    stream("bench_stream_s3_k64_p2", 3, 64, 2, Contig, 1, 1),
    stream("bench_stream_s6_k32_p2", 6, 32, 2, Contig, 1, 1),
    stream("bench_stream_s6_k32_p4", 6, 32, 4, Contig, 1, 1),
    stream("bench_stream_s7_k32_p3", 7, 32, 3, Contig, 1, 1),
    stream("bench_stream_s14_k16_p6", 14, 16, 6, Contig, 1, 1),
    stream("bench_stream_s4_k32_p1_i", 4, 32, 1, Interleaved, 1, 1),
    stream("bench_stream_s6_k32_p2_i", 6, 32, 2, Interleaved, 1, 1),
    stream("bench_stream_s8_k16_p3_i", 8, 16, 3, Interleaved, 1, 1),
    stream("bench_stream_s3_k64_p1_i", 3, 64, 1, Interleaved, 1, 1),
    stream("bench_stream_s4_k32_p1_d", 4, 32, 1, Dynamic, 1, 1),
    stream("bench_stream_s6_k32_p2_d", 6, 32, 2, Dynamic, 1, 1),
    stream("bench_stream_s8_k16_p3_d", 8, 16, 3, Dynamic, 1, 1),
    stream("bench_stream_s3_k64_p1_d", 3, 64, 1, Dynamic, 1, 1),
    stream("bench_stream_s7_k32_p3_d", 7, 32, 3, Dynamic, 1, 1),
    stream("bench_stream_s3_k32_p1", 3, 32, 1, Contig, 1, 2),
    stream("bench_stream_s3_k32_p1_i", 3, 32, 1, Interleaved, 1, 2),
    stream("bench_stream_s3_k32_p1_d", 3, 32, 1, Dynamic, 1, 2),
    stream("bench_stream_s6_k16_p2", 6, 16, 2, Contig, 1, 2),
    stream("bench_stream_s6_k16_p2_d", 6, 16, 2, Dynamic, 1, 2),
    stream("bench_stream_s7_k16_p3_d", 7, 16, 3, Dynamic, 1, 2),
    stream("bench_stream_s4_k16_p2_d", 4, 16, 2, Dynamic, 1, 3),
    stream("bench_stream_s3_k16_p1_d", 3, 16, 1, Dynamic, 1, 4),
    stream("bench_stream_s6_k32_p1_w2", 6, 32, 1, Contig, 2, 1),
    stream("bench_stream_s8_k16_p2_w2", 8, 16, 2, Contig, 2, 1),
    stream("bench_stream_s6_k32_p1_d_w2", 6, 32, 1, Dynamic, 2, 1),
    stream("bench_stream_s8_k16_p1_d_w4", 8, 16, 1, Dynamic, 4, 1),
    stream("bench_stream_s8_k16_p1_d_w2", 8, 16, 1, Dynamic, 2, 1),
    stream("bench_stream_s8_k8_p1_d_w4", 8, 8, 1, Dynamic, 4, 1),
    stream("bench_stream_s12_k16_p2_d_w4", 12, 16, 2, Dynamic, 4, 1),
    stream("bench_stream_s16_k8_p1_d_w4", 16, 8, 1, Dynamic, 4, 1),
    stream("bench_stream_s8_k16_p0_d_w4", 8, 16, 0, Dynamic, 4, 1),
    stream("bench_stream_s4_k16_p1_d_w2", 4, 16, 1, Dynamic, 2, 2),
];

/// Every kernel a table launches, Rust and C++ alike (`--list-kernels`), except the C++-only
/// variants, which may be missing where ptxas lacks their PTX ISA.
fn required_kernels() -> Vec<String> {
    let mut names: Vec<String> = CYCLES.iter().map(|b| b.kernel.to_string()).collect();
    for &(variant, _) in VARIANTS {
        if variant == "cmask_restrict" || variant == "cmask_frelease" {
            continue;
        }
        for &(shape, ..) in SHAPES {
            if variant_has_shape(variant, shape) {
                names.push(variant_kernel(variant, shape));
            }
        }
    }
    names.extend(STREAMS.iter().map(|s| s.kernel.to_string()));
    names.push("bench_fill".into());
    names.push("bench_verify".into());
    names.sort();
    names.dedup();
    names
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(|a, b| a.total_cmp(b));
    values[values.len() / 2]
}

/// A figure or `-` where the kernel is missing.
fn figure(value: Option<f64>, width: usize, precision: usize) -> String {
    value.map_or_else(
        || format!("{:>width$}", "-"),
        |v| format!("{v:>width$.precision$}"),
    )
}

/// `a / b` where both exist.
fn ratio(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    Some(a? / b?)
}

struct Bench {
    gpu: Gpu,
    rust: Arc<CudaModule>,
    /// The same Rust kernels built with the library's `checked` feature.
    checked: Option<Arc<CudaModule>>,
    /// The main C++ cubin, then the extra ones.
    cpp: Vec<Arc<CudaModule>>,
    csv: String,
    table: String,
    /// Medians of the cycle table, by kernel: (Rust, C++).
    cycles: HashMap<String, (Option<f64>, Option<f64>)>,
    /// Rows whose copy was wrong.
    wrong: Vec<String>,
}

impl Bench {
    /// Appends a line to the table and prints it at once (a later hang keeps what was measured).
    fn line(&mut self, text: String) {
        println!("{text}");
        self.table.push_str(&text);
        self.table.push('\n');
    }

    fn rust_function(&self, name: &str) -> Option<CudaFunction> {
        self.rust.load_function(name).ok()
    }

    fn cpp_function(&self, name: &str) -> Option<CudaFunction> {
        self.cpp.iter().find_map(|m| m.load_function(name).ok())
    }

    /// Runs a cycle kernel once and returns its cycles per iteration.
    fn run_cycles(
        &self,
        f: &CudaFunction,
        (threads, cluster, smem): (u32, u32, u32),
        iters: u32,
        out: &mut cudarc::driver::CudaSlice<u64>,
    ) -> Result<f64, String> {
        let mut iters_arg = iters;
        let (ptr, _sync) = cudarc::driver::DevicePtr::device_ptr(&*out, &self.gpu.stream);
        let mut out_arg = ptr;
        let mut args: Vec<*mut c_void> =
            vec![(&raw mut iters_arg).cast(), (&raw mut out_arg).cast()];
        drop(_sync);
        self.gpu
            .launch(f, cluster, threads, cluster, smem, &mut args)?;
        self.gpu
            .wait(std::time::Duration::from_secs(30))
            .map_err(|(_, m)| m)?;
        let cycles = self
            .gpu
            .stream
            .clone_dtoh(out)
            .map_err(|e| format!("{e:?}"))?;
        Ok(cycles[0] as f64 / f64::from(iters))
    }

    /// The medians of `reps` alternating Rust and C++ runs of `kernel` after a warm-up; `None` for
    /// a side that lacks it.
    fn measure_cycles(
        &self,
        kernel: &str,
        shape: (u32, u32, u32),
        reps: usize,
        iters: u32,
        out: &mut cudarc::driver::CudaSlice<u64>,
    ) -> Result<(Option<f64>, Option<f64>), String> {
        let rust = self.rust_function(kernel);
        let cpp = self.cpp_function(kernel);
        self.measure_pair(rust.as_ref(), cpp.as_ref(), shape, reps, iters, out)
    }

    /// The medians of `reps` alternating runs of `a` and `b` after a warm-up of each; `None` for
    /// a side that is absent.
    fn measure_pair(
        &self,
        a: Option<&CudaFunction>,
        b: Option<&CudaFunction>,
        shape: (u32, u32, u32),
        reps: usize,
        iters: u32,
        out: &mut cudarc::driver::CudaSlice<u64>,
    ) -> Result<(Option<f64>, Option<f64>), String> {
        for f in a.iter().chain(b.iter()) {
            self.run_cycles(f, shape, iters / 10, out)?;
        }
        let (mut ra, mut rb) = (Vec::new(), Vec::new());
        for _ in 0..reps {
            if let Some(f) = a {
                ra.push(self.run_cycles(f, shape, iters, out)?);
            }
            if let Some(f) = b {
                rb.push(self.run_cycles(f, shape, iters, out)?);
            }
        }
        let ra = (!ra.is_empty()).then(|| median(&mut ra));
        let rb = (!rb.is_empty()).then(|| median(&mut rb));
        Ok((ra, rb))
    }

    fn cycles(&mut self, reps: usize, iters: u32) -> Result<(), String> {
        let mut out = self
            .gpu
            .stream
            .alloc_zeros::<u64>(4)
            .map_err(|e| format!("{e:?}"))?;
        self.line(format!(
            "\n{:<52} {:>10} {:>10} {:>7}  hand-written C++ reference (DESIGN.md)",
            "cycles (median)", "Rust", "C++", "ratio"
        ));
        for b in CYCLES {
            let (r, c) = self.measure_cycles(
                b.kernel,
                (b.threads, b.cluster, b.smem),
                reps,
                iters,
                &mut out,
            )?;
            let reference = b.reference.unwrap_or("-");
            self.line(format!(
                "{:<52} {} {} {}  {}",
                b.what,
                figure(r, 10, 1),
                figure(c, 10, 1),
                figure(ratio(r, c), 7, 3),
                reference
            ));
            writeln!(
                self.csv,
                "cycles,{},{},{},{},{reference}",
                b.kernel,
                figure(r, 0, 2).trim(),
                figure(c, 0, 2).trim(),
                figure(ratio(r, c), 0, 4).trim()
            )
            .unwrap();
            self.cycles.insert(b.kernel.to_string(), (r, c));
        }
        Ok(())
    }

    /// The cost of the `checked` feature: every Rust cycle kernel against the same kernel built
    /// with hang diagnostics, alternating, in the same process. The checked storage is larger
    /// (`3 * STAGES + 1` elements on NVIDIA): both sides get 256 bytes of shared memory.
    fn checked_costs(&mut self, reps: usize, iters: u32) -> Result<(), String> {
        let Some(checked) = self.checked.clone() else {
            self.line("\nchecked build: not measured (no --checked-cubin)".into());
            return Ok(());
        };
        let mut out = self
            .gpu
            .stream
            .alloc_zeros::<u64>(4)
            .map_err(|e| format!("{e:?}"))?;
        self.line(format!(
            "\n{:<52} {:>10} {:>10} {:>7} {:>7}",
            "checked build vs unchecked (Rust, cycles, median)",
            "unchecked",
            "checked",
            "+cycles",
            "ratio"
        ));
        for b in CYCLES {
            let (Some(plain), Some(with)) = (
                self.rust_function(b.kernel),
                checked.load_function(b.kernel).ok(),
            ) else {
                continue;
            };
            let shape = (b.threads, b.cluster, b.smem.max(256));
            let (Some(u), Some(c)) =
                self.measure_pair(Some(&plain), Some(&with), shape, reps, iters, &mut out)?
            else {
                unreachable!("both sides are present and reps >= 1, so both have medians");
            };
            self.line(format!(
                "{:<52} {} {} {:>7.1} {}",
                b.what,
                figure(Some(u), 10, 1),
                figure(Some(c), 10, 1),
                c - u,
                figure(ratio(Some(c), Some(u)), 7, 3)
            ));
            writeln!(self.csv, "checked,{},{u:.2},{c:.2},{:.4},", b.kernel, c / u).unwrap();
        }
        Ok(())
    }

    /// The counter-ring variants: each in every shape, Rust and C++, and each against the mbarrier
    /// kernel of the same shape from the cycle table (same side).
    fn variants(&mut self, reps: usize, iters: u32) -> Result<(), String> {
        let mut out = self
            .gpu
            .stream
            .alloc_zeros::<u64>(4)
            .map_err(|e| format!("{e:?}"))?;
        self.line(format!(
            "\ncounter-ring variants (cycles per round trip or per stage, median of {reps}; x mbar: over the mbarrier kernel of the same shape, same side)"
        ));
        for &(name, what) in VARIANTS {
            self.line(format!("  {name:<16} {what}"));
        }
        self.line(format!(
            "{:<16} {:<24} {:>9} {:>9} {:>12} {:>11}",
            "variant", "shape", "Rust", "C++", "Rust x mbar", "C++ x mbar"
        ));
        for &(name, _) in VARIANTS {
            for &(shape, threads, mbar, label) in SHAPES {
                if !variant_has_shape(name, shape) {
                    continue;
                }
                let kernel = variant_kernel(name, shape);
                let (r, c) = match self.cycles.get(&kernel) {
                    Some(&done) => done,
                    None => {
                        self.measure_cycles(&kernel, (threads, 1, 2048), reps, iters, &mut out)?
                    }
                };
                let (mr, mc) = self.cycles.get(mbar).copied().unwrap_or((None, None));
                self.line(format!(
                    "{name:<16} {label:<24} {} {} {} {}",
                    figure(r, 9, 1),
                    figure(c, 9, 1),
                    figure(ratio(r, mr), 12, 2),
                    figure(ratio(c, mc), 11, 2)
                ));
                writeln!(
                    self.csv,
                    "variant,{name}_{shape},{},{},{},{mbar}",
                    figure(r, 0, 2).trim(),
                    figure(c, 0, 2).trim(),
                    figure(ratio(r, c), 0, 4).trim()
                )
                .unwrap();
            }
        }
        Ok(())
    }

    fn event(&self) -> Result<cudarc::driver::CudaEvent, String> {
        self.gpu
            .ctx
            .new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))
            .map_err(|e| format!("{e:?}"))
    }

    fn streams(&mut self, reps: usize, total: u64) -> Result<(), String> {
        let sms = self.gpu.sms;
        // The largest copy any row makes: rows round their share per CTA down to 64 KiB.
        let max_words = (total / 4) as usize;
        let src = self.gpu.alloc(max_words)?;
        let dst = self.gpu.alloc(max_words)?;
        let mut mismatches = self
            .gpu
            .stream
            .alloc_zeros::<u32>(1)
            .map_err(|e| format!("{e:?}"))?;
        let work = self.gpu.alloc(1)?;
        let (src_ptr, dst_ptr, work_ptr) = (
            self.gpu.address(&src),
            self.gpu.address(&dst),
            self.gpu.address(&work),
        );
        let fill = self
            .rust_function("bench_fill")
            .ok_or("Rust kernel `bench_fill` missing")?;
        let verify = self
            .rust_function("bench_verify")
            .ok_or("Rust kernel `bench_verify` missing")?;
        {
            let (mut p, mut n) = (src_ptr, max_words as u64);
            let mut args: Vec<*mut c_void> = vec![(&raw mut p).cast(), (&raw mut n).cast()];
            self.gpu.launch(&fill, sms * 4, 256, 1, 0, &mut args)?;
        }
        let (start, stop) = (self.event()?, self.event()?);
        let timed = |this: &Self,
                     bytes: u64,
                     launch: &mut dyn FnMut() -> Result<(), String>|
         -> Result<f64, String> {
            start
                .record(&this.gpu.stream)
                .map_err(|e| format!("{e:?}"))?;
            launch()?;
            stop.record(&this.gpu.stream)
                .map_err(|e| format!("{e:?}"))?;
            this.gpu
                .wait(std::time::Duration::from_secs(30))
                .map_err(|(_, m)| m)?;
            let ms = start.elapsed_ms(&stop).map_err(|e| format!("{e:?}"))?;
            Ok(bytes as f64 / (f64::from(ms) * 1e-3) / 1e9)
        };
        // cudaMemcpy device to device (cuMemcpyDtoDAsync) of the one-CTA-per-SM size, the baseline.
        let base_bytes = total / u64::from(sms) / (64 * 1024) * (64 * 1024) * u64::from(sms);
        let mut memcpy = Vec::new();
        for _ in 0..=reps {
            memcpy.push(timed(self, base_bytes, &mut || {
                // SAFETY: both buffers hold at least `base_bytes` bytes.
                let status = unsafe {
                    sys::cuMemcpyDtoDAsync_v2(
                        dst_ptr,
                        src_ptr,
                        base_bytes as usize,
                        self.gpu.stream.cu_stream(),
                    )
                };
                if status == sys::CUresult::CUDA_SUCCESS {
                    Ok(())
                } else {
                    Err(format!("cuMemcpyDtoDAsync: {status:?}"))
                }
            })?);
        }
        let memcpy = median(&mut memcpy[1..]);
        self.line(format!(
            "\nstreaming copy of {:.2} GiB (GB/s copied, median of {reps}; in flight: stores per storer)   {:>6} {:>6} {:>6} {:>9}  memcpy D2D",
            base_bytes as f64 / (1u64 << 30) as f64,
            "Rust",
            "C++",
            "R/C++",
            "R/memcpy"
        ));
        for s in STREAMS {
            let grid = sms * s.ctas_per_sm;
            let bytes_per_block = total / u64::from(grid) / (64 * 1024) * (64 * 1024);
            let bytes = bytes_per_block * u64::from(grid);
            let words = bytes / 4;
            let threads = 32 * (1 + s.storers);
            let smem = s.smem();
            let (rust, cpp) = (self.rust_function(s.kernel), self.cpp_function(s.kernel));
            // All of the SM's unified L1 as shared memory, so that rows of several CTAs per SM get
            // them (the driver could otherwise pick a carveout that fits one).
            // The dynamic shared memory limit is raised here (not only at launch) so that the
            // occupancy query below sees it.
            for f in rust.iter().chain(cpp.iter()) {
                f.set_attribute(
                    sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT,
                    100,
                )
                .map_err(|e| format!("{}: shared memory carveout: {e:?}", s.kernel))?;
                f.set_attribute(
                    sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                    smem as i32,
                )
                .map_err(|e| format!("{}: dynamic shared memory {smem}: {e:?}", s.kernel))?;
            }
            // CTAs per SM the driver can co-schedule for this launch (Rust kernel, else C++).
            let mut resident = 0;
            if let Some(f) = rust.as_ref().or(cpp.as_ref()) {
                // SAFETY: writes one int; the function belongs to this context.
                let status = unsafe {
                    sys::cuOccupancyMaxActiveBlocksPerMultiprocessor(
                        &mut resident,
                        f.cu_function(),
                        threads as i32,
                        smem as usize,
                    )
                };
                if status != sys::CUresult::CUDA_SUCCESS {
                    resident = -1;
                }
            }
            let (mut r, mut c) = (Vec::new(), Vec::new());
            let mut wrong = Vec::new();
            for rep in 0..=reps {
                for (side, f, sink) in [("Rust", &rust, &mut r), ("C++", &cpp, &mut c)] {
                    let Some(f) = f else { continue };
                    self.gpu.fill(&dst, 0xDEAD_BEEF, words as usize)?;
                    self.gpu.fill(&work, 0, 1)?;
                    let gbs = timed(self, bytes, &mut || {
                        let (mut a, mut d, mut n, mut w) =
                            (src_ptr, dst_ptr, bytes_per_block, work_ptr);
                        let mut args: Vec<*mut c_void> = vec![
                            (&raw mut a).cast(),
                            (&raw mut d).cast(),
                            (&raw mut n).cast(),
                            (&raw mut w).cast(),
                        ];
                        self.gpu.launch(f, grid, threads, 1, smem, &mut args)
                    })?;
                    self.gpu
                        .stream
                        .memset_zeros(&mut mismatches)
                        .map_err(|e| format!("{e:?}"))?;
                    let (mut d, mut n) = (dst_ptr, words);
                    let (m, _sync) = cudarc::driver::DevicePtrMut::device_ptr_mut(
                        &mut mismatches,
                        &self.gpu.stream,
                    );
                    let mut m = m;
                    drop(_sync);
                    let mut args: Vec<*mut c_void> = vec![
                        (&raw mut d).cast(),
                        (&raw mut n).cast(),
                        (&raw mut m).cast(),
                    ];
                    self.gpu.launch(&verify, sms * 4, 256, 1, 0, &mut args)?;
                    let bad = self
                        .gpu
                        .stream
                        .clone_dtoh(&mismatches)
                        .map_err(|e| format!("{e:?}"))?[0];
                    if bad != 0 {
                        wrong.push(format!("{side}: {bad} wrong words"));
                    }
                    if rep > 0 {
                        sink.push(gbs);
                    }
                }
            }
            let r = (!r.is_empty()).then(|| median(&mut r));
            let c = (!c.is_empty()).then(|| median(&mut c));
            let flag = if resident < s.ctas_per_sm as i32 {
                format!("  (only {resident} CTA/SM resident)")
            } else {
                String::new()
            };
            let flag = if wrong.is_empty() {
                flag
            } else {
                self.wrong
                    .push(format!("{} ({})", s.key(), wrong.join(", ")));
                format!("{flag}  WRONG: {}", wrong.join(", "))
            };
            self.line(format!(
                "{:<75} {} {} {} {}  {memcpy:.0}{flag}",
                s.label(),
                figure(r, 6, 0),
                figure(c, 6, 0),
                figure(ratio(r, c), 6, 3),
                figure(r.map(|r| r / memcpy), 9, 3),
            ));
            writeln!(
                self.csv,
                "stream,{},{},{},{},{memcpy:.1}",
                s.key(),
                figure(r, 0, 1).trim(),
                figure(c, 0, 1).trim(),
                figure(ratio(r, c), 0, 4).trim()
            )
            .unwrap();
        }
        Ok(())
    }
}

/// Runs the benchmarks: `Ok(false)` when a copy came out wrong; `Err` with the exit status
/// (`pipeline_suite::exit`: usage, no CUDA driver, or CUDA setup) and a one-line message.
fn run() -> Result<bool, (u8, String)> {
    use pipeline_suite::exit;

    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--list-kernels") {
        for name in required_kernels() {
            println!("{name}");
        }
        return Ok(true);
    }
    let value = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let usage = || {
        (exit::USAGE, "usage: pipeline-bench --rust-ptx FILE --rust-cubin FILE --cpp-cubin FILE [--cpp-extra FILE]... [--checked-cubin FILE] --out DIR [--quick]".to_string())
    };
    let setup = |message: String| (exit::SETUP, message);
    let rust_ptx = value("--rust-ptx").ok_or_else(usage)?;
    let rust_cubin = value("--rust-cubin").ok_or_else(usage)?;
    let cpp_cubin = value("--cpp-cubin").ok_or_else(usage)?;
    let out = value("--out").ok_or_else(usage)?;
    let quick = args.iter().any(|a| a == "--quick");
    let gpu = Gpu::open(&rust_ptx).map_err(|e| (e.exit_code(), e.to_string()))?;
    let rust = gpu.load_file(&rust_cubin).map_err(setup)?;
    let mut cpp = vec![gpu.load_file(&cpp_cubin).map_err(setup)?];
    for (i, a) in args.iter().enumerate() {
        if a == "--cpp-extra" {
            let path = args.get(i + 1).ok_or_else(usage)?;
            cpp.push(gpu.load_file(path).map_err(setup)?);
        }
    }
    let checked = match value("--checked-cubin") {
        Some(path) => Some(gpu.load_file(&path).map_err(setup)?),
        None => None,
    };
    let mut bench = Bench {
        gpu,
        rust,
        checked,
        cpp,
        csv: String::from("kind,kernel,rust,cpp,ratio,reference\n"),
        table: String::new(),
        cycles: HashMap::new(),
        wrong: Vec::new(),
    };
    println!(
        "gpu-pipeline benchmarks: {} (sm_{}{}, {} SMs), CUDA {}.{}, commit {}",
        bench.gpu.name,
        bench.gpu.cc.0,
        bench.gpu.cc.1,
        bench.gpu.sms,
        bench.gpu.driver_version / 1000,
        (bench.gpu.driver_version % 1000) / 10,
        option_env!("GPU_PIPELINE_COMMIT").unwrap_or("unknown")
    );
    let (reps, iters, total) = if quick {
        (5, 20_000, 1u64 << 30)
    } else {
        (21, 200_000, 4u64 << 30)
    };
    let (variant_reps, variant_iters) = (reps.min(11), iters / 2);
    println!(
        "cycle kernels: {iters} iterations, median of {reps} alternating runs after a warm-up; variants: {variant_iters} iterations, median of {variant_reps}; streaming: median of {} runs after a warm-up",
        reps.min(7)
    );
    let result = bench
        .cycles(reps, iters)
        .and_then(|()| bench.checked_costs(reps, iters))
        .and_then(|()| bench.variants(variant_reps, variant_iters))
        .and_then(|()| bench.streams(reps.min(7), total));
    std::fs::write(format!("{out}/bench.csv"), &bench.csv)
        .map_err(|e| setup(format!("write bench.csv: {e}")))?;
    std::fs::write(format!("{out}/bench_table.txt"), &bench.table)
        .map_err(|e| setup(format!("write bench_table.txt: {e}")))?;
    if let Err(message) = result {
        // Exit at once: after a hung kernel, freeing the buffers (dropping `bench`) would block
        // on it, and the message would never be printed (seen on the H200).
        eprintln!("error: {message}");
        std::process::exit(exit::TEST_FAILED.into());
    }
    if !bench.wrong.is_empty() {
        eprintln!("error: wrong copies: {}", bench.wrong.join("; "));
    }
    Ok(bench.wrong.is_empty())
}

/// Exit status: `pipeline_suite::exit` (0 passed, 1 a wrong copy or a failed measurement,
/// 2 usage, 4 no CUDA driver, 5 CUDA setup), errors as one line on stderr.
fn main() -> ExitCode {
    match run() {
        Ok(true) => ExitCode::from(pipeline_suite::exit::PASSED),
        Ok(false) => ExitCode::from(pipeline_suite::exit::TEST_FAILED),
        Err((code, message)) => {
            eprintln!("error: {message}");
            ExitCode::from(code)
        }
    }
}
