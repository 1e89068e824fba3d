//! The benchmarks (`pipeline-bench`): runs the benchmark kernels written with the library (Rust PTX) and their
//! hand-written CUDA C++ twins (a cubin built by nvcc) side by side in one process, alternating,
//! and prints tables: configuration, Rust, C++, ratio at equal loop shape. Cycle figures come from
//! `%clock64` in the kernels (median over repetitions, after a warm-up); bandwidth from CUDA events
//! around each launch, against `cuMemcpyDtoDAsync` in the same process. Streaming outputs are
//! verified. Every figure it prints is measured in the run that prints it.
//!
//! Usage: `pipeline-bench --rust-cubin FILE --cpp-cubin FILE [--cpp-extra FILE]...
//! [--checked-cubin FILE] --out DIR [--quick]` (the Rust PTX assembled by the same `ptxas
//! -arch=sm_90a` as the C++, so both run the same compiler's machine code; `--cpp-extra` cubins hold
//! C++ kernels looked up after the main one). `pipeline-bench --list-kernels [--cpp]` prints the
//! Rust (or C++) kernels the tables need, for the bundle's check.
//!
//! Four tables: the cycle benchmarks (Rust against C++, flat and 4x-unrolled loops, and the plain
//! Rust loop), the cost of the `checked` feature, the counter-ring variants (Rust and C++ against
//! the mbarrier ring of the same shape), and the streaming copies (against `cudaMemcpy`). Each row
//! is printed as soon as it is measured.

use std::collections::HashMap;
use std::ffi::c_void;
use std::fmt::Write as _;
use std::process::ExitCode;
use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaModule, sys};

use crate::cuda::Gpu;
use crate::report;

/// One row of the cycle table: the Rust kernel (without its loop-shape suffix), its C++ twin, what
/// it measures, threads per block, cluster size, dynamic shared memory.
///
/// Every cycle kernel exists in loop shapes (see `repeat` in the kernels and in bench.cu): `_flat`
/// (neither compiler unrolls the timed loop) and `_x4` (the body written four times) on both
/// sides, and on the Rust side `_llvm` (a plain `for` loop, unrolled as LLVM sees fit: what a
/// kernel written with the library gets). Rust against C++ is compared at equal shape.
struct Cycles {
    rust: &'static str,
    cpp: &'static str,
    what: String,
    threads: u32,
    cluster: u32,
    smem: u32,
}

impl Cycles {
    /// A row with 128 bytes of dynamic shared memory (the barriers).
    fn new(
        rust: &'static str,
        cpp: &'static str,
        what: String,
        threads: u32,
        cluster: u32,
    ) -> Self {
        Self {
            rust,
            cpp,
            what,
            threads,
            cluster,
            smem: 128,
        }
    }
}

/// One row of `pipeline_suite::bench_kernels!` as a row of the cycle table: its Rust and C++
/// names, its label, threads per block and CTAs per cluster.
macro_rules! cycle_row {
    (roundtrip, $b:ident, $wait:ident, $what:literal) => {
        cycle_row!(@names [roundtrip, $b, $wait], $what.into(), 64, 1)
    };
    (cluster_roundtrip, $what:literal) => {
        cycle_row!(@names [cluster_roundtrip], $what.into(), 32, 2)
    };
    (ring, $b:ident, $s:literal, $w:literal, $release:ident) => {
        cycle_row!(
            @names [ring, $b, $s, $w, $release],
            format!(
                "{} s{}, lane 0 only, {}, per-{}",
                if stringify!($b) == "mbar" { "ring" } else { "counter ring" },
                $s,
                consumer_warps($w),
                stringify!($release)
            ),
            32 * (1 + $w),
            1
        )
    };
    (elect, $s:literal, $w:literal, $release:ident, $api:ident) => {
        cycle_row!(
            @names [elect, $s, $w, $release, $api],
            format!(
                "elected s{}, {}, per-{}, {}",
                $s,
                consumer_warps($w),
                stringify!($release),
                stringify!($api)
            ),
            32 * (1 + $w),
            1
        )
    };
    (@names [$($row:tt)*], $what:expr, $threads:expr, $cluster:expr) => {
        Cycles::new(
            pipeline_suite::bench_kernel_name!($($row)*),
            pipeline_suite::bench_twin_name!($($row)*),
            $what,
            $threads,
            $cluster,
        )
    };
}

/// `1 consumer warp`, `4 consumer warps`.
fn consumer_warps(w: u32) -> String {
    format!("{w} consumer warp{}", if w > 1 { "s" } else { "" })
}

/// The cycle table's rows (`pipeline_suite::bench_kernels!`): round trips, the rings where only
/// lane 0 of each warp takes part, the counter rings, and the elected-lane rings (every lane
/// waits, lane 0 arrives) through each API, printed per release first (a stable sort of the
/// list's order).
fn cycle_rows() -> Vec<Cycles> {
    let mut rows = Vec::new();
    macro_rules! push_row {
        ($($row:tt)*) => {
            rows.push(cycle_row!($($row)*))
        };
    }
    pipeline_suite::bench_kernels!(push_row);
    rows.sort_by_key(|r| r.rust.starts_with("bench_elect_") && r.rust.contains("_thread_"));
    rows
}

/// The counter-ring variants (flags in `tests/bench/bench.cu` and
/// `tests/kernels/src/bench/variants.rs`): name and what differs. `base` is the library itself
/// (the `bench_*_counter*_flat` kernels); the others run the library's pipeline over a test
/// backend. All flat loops.
const VARIANTS: &[(&str, &str)] = &[
    (
        "base",
        "the library: a full warp on one counter (shfl + vote.all) adds 32 from lane 0; otherwise lanes grouped by counter with match.any.sync, the lowest of each group adds",
    ),
    (
        "prev",
        "the library's arrive before it grouped lanes by counter: lane 0 adds the whole warp on its own counter (wrong when lanes name different counters; measurement only)",
    ),
    (
        "match",
        "a full warp always groups with match.any.sync (the library's first per-counter arrive, before the one-counter check)",
    ),
];

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

/// The shapes (stages, consumer warps) of the wait-loop table.
const WAIT_SHAPES: [(u32, u32); 6] = [(1, 1), (2, 1), (4, 1), (8, 1), (2, 4), (4, 4)];

/// The kernel of a variant in a shape.
fn variant_kernel(variant: &str, shape: &str) -> String {
    match (variant, shape) {
        ("base", "rt") => "bench_roundtrip_counter_flat".into(),
        ("base", _) => format!("bench_ring_counter_s4_{shape}_flat"),
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

/// One row of `pipeline_suite::bench_stream_kernels!` as a streaming benchmark.
macro_rules! stream_row {
    ($name:ident, $s:literal, $kib:literal, $pending:literal, $mode:ident, $w:literal, $ctas_per_sm:literal) => {
        Stream {
            kernel: stringify!($name),
            stages: $s,
            kib: $kib,
            pending: $pending,
            mode: stream_row!(@mode $mode),
            storers: $w,
            ctas_per_sm: $ctas_per_sm,
        }
    };
    (@mode contig) => {
        Mode::Contig
    };
    (@mode interleaved) => {
        Mode::Interleaved
    };
    (@mode dynamic) => {
        Mode::Dynamic
    };
}

/// The streaming benchmarks (`pipeline_suite::bench_stream_kernels!`, which the kernels and
/// their C++ twins in bench.cu follow too).
fn streams() -> Vec<Stream> {
    let mut rows = Vec::new();
    macro_rules! push_row {
        ($($row:tt)*) => {
            rows.push(stream_row!($($row)*))
        };
    }
    pipeline_suite::bench_stream_kernels!(push_row);
    rows
}

/// Every kernel a table launches (`--list-kernels`): the Rust ones (the bundle's check against
/// the Rust PTX), and with `cpp` the C++ ones.
fn required_kernels(cpp: bool) -> Vec<String> {
    let mut names = Vec::new();
    for r in cycle_rows() {
        if cpp {
            names.push(format!("{}_flat", r.cpp));
            names.push(format!("{}_x4", r.cpp));
        } else {
            for shape in ["flat", "x4", "llvm"] {
                names.push(format!("{}_{shape}", r.rust));
            }
        }
    }
    for &(variant, _) in VARIANTS {
        for &(shape, ..) in SHAPES {
            names.push(variant_kernel(variant, shape));
        }
    }
    names.extend(streams().iter().map(|s| s.kernel.to_string()));
    if cpp {
        names.push("bench_roundtrip_mbar_spin_flat".into());
        for (s, w) in WAIT_SHAPES {
            names.push(format!("bench_elect_s{s}_c{w}_warp_spin_flat"));
        }
    } else {
        for shape in ["llvm", "flat"] {
            names.push(format!("var_spinwait_rt_{shape}"));
            for (s, w) in WAIT_SHAPES {
                names.push(format!("var_spinwait_s{s}_c{w}_{shape}"));
            }
        }
        names.push("bench_fill".into());
        names.push("bench_verify".into());
    }
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

    /// The medians of `reps` rounds of runs of `kernels` (one run of each per round, in order),
    /// after a warm-up of each; `None` for a kernel that is absent.
    fn measure(
        &self,
        kernels: &[Option<&CudaFunction>],
        shape: (u32, u32, u32),
        reps: usize,
        iters: u32,
        out: &mut cudarc::driver::CudaSlice<u64>,
    ) -> Result<Vec<Option<f64>>, String> {
        for f in kernels.iter().flatten() {
            self.run_cycles(f, shape, iters / 10, out)?;
        }
        let mut runs: Vec<Vec<f64>> = vec![Vec::new(); kernels.len()];
        for _ in 0..reps {
            for (f, sink) in kernels.iter().zip(runs.iter_mut()) {
                if let Some(f) = f {
                    sink.push(self.run_cycles(f, shape, iters, out)?);
                }
            }
        }
        Ok(runs
            .iter_mut()
            .map(|r| (!r.is_empty()).then(|| median(r)))
            .collect())
    }

    /// The buffer a cycle kernel writes its count to.
    fn cycles_buffer(&self) -> Result<cudarc::driver::CudaSlice<u64>, String> {
        self.gpu
            .stream
            .alloc_zeros::<u64>(4)
            .map_err(|e| format!("{e:?}"))
    }

    fn cycles(&mut self, reps: usize, iters: u32) -> Result<(), String> {
        let mut out = self.cycles_buffer()?;
        self.line(format!(
            "\ncycles per round trip or per stage (median of {reps}, {iters} iterations; flat: neither compiler unrolls the loop; x4: the body written 4 times; LLVM loop: a plain Rust loop)"
        ));
        self.line(format!(
            "{:<58} {:>9} {:>9} {:>7} {:>9} {:>9} {:>7} {:>10}",
            "", "Rust flat", "C++ flat", "ratio", "Rust x4", "C++ x4", "ratio", "LLVM loop"
        ));
        for b in cycle_rows() {
            let shape = (b.threads, b.cluster, b.smem);
            let rust = |suffix: &str| self.rust_function(&format!("{}_{suffix}", b.rust));
            let cpp = |suffix: &str| self.cpp_function(&format!("{}_{suffix}", b.cpp));
            let (rf, cf, rl) = (rust("flat"), cpp("flat"), rust("llvm"));
            let flat = self.measure(
                &[rf.as_ref(), cf.as_ref(), rl.as_ref()],
                shape,
                reps,
                iters,
                &mut out,
            )?;
            let (rx, cx) = (rust("x4"), cpp("x4"));
            let x4 = self.measure(&[rx.as_ref(), cx.as_ref()], shape, reps, iters, &mut out)?;
            self.line(format!(
                "{:<58} {} {} {} {} {} {} {}",
                b.what,
                figure(flat[0], 9, 1),
                figure(flat[1], 9, 1),
                figure(ratio(flat[0], flat[1]), 7, 3),
                figure(x4[0], 9, 1),
                figure(x4[1], 9, 1),
                figure(ratio(x4[0], x4[1]), 7, 3),
                figure(flat[2], 10, 1)
            ));
            let csv = |v: Option<f64>, p: usize| figure(v, 0, p).trim().to_string();
            writeln!(
                self.csv,
                "cycles,{},{},{},{},{},{},{},{}",
                b.rust,
                csv(flat[0], 2),
                csv(flat[1], 2),
                csv(ratio(flat[0], flat[1]), 4),
                csv(x4[0], 2),
                csv(x4[1], 2),
                csv(ratio(x4[0], x4[1]), 4),
                csv(flat[2], 2)
            )
            .unwrap();
            self.cycles
                .insert(format!("{}_flat", b.rust), (flat[0], flat[1]));
        }
        Ok(())
    }

    /// The cost of the `checked` feature: every Rust cycle kernel (flat loop) against the same
    /// kernel built with hang diagnostics, alternating, in the same process. The checked storage is
    /// larger (`gpu_pipeline::barrier_bytes_any_build`): both sides get 256 bytes of shared memory.
    fn checked_costs(&mut self, reps: usize, iters: u32) -> Result<(), String> {
        let Some(checked) = self.checked.clone() else {
            self.line("\nchecked build: not measured (no --checked-cubin)".into());
            return Ok(());
        };
        let mut out = self.cycles_buffer()?;
        self.line(format!(
            "\n{:<58} {:>10} {:>10} {:>7} {:>7}",
            format!("checked build vs unchecked (Rust flat loops, median of {reps})"),
            "unchecked",
            "checked",
            "+cycles",
            "ratio"
        ));
        for b in cycle_rows() {
            let kernel = format!("{}_flat", b.rust);
            let (Some(plain), Some(with)) = (
                self.rust_function(&kernel),
                checked.load_function(&kernel).ok(),
            ) else {
                continue;
            };
            let shape = (b.threads, b.cluster, b.smem.max(256));
            let m = self.measure(&[Some(&plain), Some(&with)], shape, reps, iters, &mut out)?;
            let (Some(u), Some(c)) = (m[0], m[1]) else {
                unreachable!("both sides are present and reps >= 1, so both have medians");
            };
            self.line(format!(
                "{:<58} {} {} {:>7.1} {}",
                b.what,
                figure(Some(u), 10, 1),
                figure(Some(c), 10, 1),
                c - u,
                figure(ratio(Some(c), Some(u)), 7, 3)
            ));
            writeln!(self.csv, "checked,{kernel},{u:.2},{c:.2},{:.4}", c / u).unwrap();
        }
        Ok(())
    }

    /// The counter-ring variants: each in every shape, Rust and C++, measured here (median of
    /// `reps` rounds of `iters` iterations), and each against the mbarrier kernel of the same
    /// shape (flat loop) from the cycle table, same side.
    fn variants(&mut self, reps: usize, iters: u32) -> Result<(), String> {
        let mut out = self.cycles_buffer()?;
        self.line(format!(
            "\ncounter-ring variants (cycles per round trip or per stage, flat loops, median of {reps}, {iters} iterations, measured in this table; x mbar: over the cycle table's flat mbarrier kernel of the same shape, same side)"
        ));
        for &(name, what) in VARIANTS {
            self.line(format!("  {name:<10} {what}"));
        }
        self.line(format!(
            "{:<10} {:<24} {:>9} {:>9} {:>7} {:>12} {:>11}",
            "variant", "shape", "Rust", "C++", "ratio", "Rust x mbar", "C++ x mbar"
        ));
        for &(name, _) in VARIANTS {
            for &(shape, threads, mbar, label) in SHAPES {
                let kernel = variant_kernel(name, shape);
                let (rust, cpp) = (self.rust_function(&kernel), self.cpp_function(&kernel));
                let m = self.measure(
                    &[rust.as_ref(), cpp.as_ref()],
                    (threads, 1, 2048),
                    reps,
                    iters,
                    &mut out,
                )?;
                let (r, c) = (m[0], m[1]);
                let (mr, mc) = self
                    .cycles
                    .get(&format!("{mbar}_flat"))
                    .copied()
                    .unwrap_or((None, None));
                self.line(format!(
                    "{name:<10} {label:<24} {} {} {} {} {}",
                    figure(r, 9, 1),
                    figure(c, 9, 1),
                    figure(ratio(r, c), 7, 3),
                    figure(ratio(r, mr), 12, 2),
                    figure(ratio(c, mc), 11, 2)
                ));
                writeln!(
                    self.csv,
                    "variant,{name}_{shape},{},{},{}",
                    figure(r, 0, 2).trim(),
                    figure(c, 0, 2).trim(),
                    figure(ratio(r, c), 0, 4).trim()
                )
                .unwrap();
            }
        }
        Ok(())
    }

    /// The wait-loop comparison: the round trip and the elected-lane ring (direct calls,
    /// per-warp release) with the library's wait (one `try_wait`, then a cold retry loop) and with
    /// the bare `try_wait` loop it had before (`var_spinwait_*`, a test backend), in LLVM's plain
    /// loop and in the flat loop; beside the C++ flat loop with the library's wait and with the
    /// bare loop (`*_spin_flat`, the form CUTLASS uses).
    fn wait_variants(&mut self, reps: usize, iters: u32) -> Result<(), String> {
        let mut out = self.cycles_buffer()?;
        self.line(format!(
            "\nwait loops (cycles per round trip or per stage, median of {reps}); lib: the library's wait (a try_wait, then a cold retry loop); spin: a bare try_wait loop (the library's wait before its cold retry loop; CUTLASS's form). LLVM: a plain Rust loop; flat: not unrolled"
        ));
        self.line(format!(
            "{:<22} {:>9} {:>10} {:>9} {:>10} {:>13} {:>14}",
            "", "lib LLVM", "spin LLVM", "lib flat", "spin flat", "C++ lib flat", "C++ spin flat"
        ));
        let mut shapes: Vec<(String, String, String, u32)> = vec![(
            "round trip".into(),
            "bench_roundtrip_mbar".into(),
            "rt".into(),
            64,
        )];
        for (s, w) in WAIT_SHAPES {
            shapes.push((
                format!("s{s}, {w} consumer warp{}", if w > 1 { "s" } else { "" }),
                format!("bench_elect_s{s}_c{w}_warp"),
                format!("s{s}_c{w}"),
                32 * (1 + w),
            ));
        }
        for (label, cpp, key, threads) in shapes {
            let lib = if key == "rt" {
                cpp.clone()
            } else {
                format!("{cpp}_direct")
            };
            let f = [
                self.rust_function(&format!("{lib}_llvm")),
                self.rust_function(&format!("var_spinwait_{key}_llvm")),
                self.rust_function(&format!("{lib}_flat")),
                self.rust_function(&format!("var_spinwait_{key}_flat")),
                self.cpp_function(&format!("{cpp}_flat")),
                self.cpp_function(&format!("{cpp}_spin_flat")),
            ];
            let refs: Vec<Option<&CudaFunction>> = f.iter().map(Option::as_ref).collect();
            let m = self.measure(&refs, (threads, 1, 128), reps, iters, &mut out)?;
            self.line(format!(
                "{label:<22} {} {} {} {} {} {}",
                figure(m[0], 9, 1),
                figure(m[1], 10, 1),
                figure(m[2], 9, 1),
                figure(m[3], 10, 1),
                figure(m[4], 13, 1),
                figure(m[5], 14, 1)
            ));
            let csv: Vec<String> = m
                .iter()
                .map(|v| figure(*v, 0, 2).trim().to_string())
                .collect();
            writeln!(self.csv, "waitloop,{key},{}", csv.join(",")).unwrap();
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
        for s in &streams() {
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
                "stream,{},{},{},{},,,,,{memcpy:.1}",
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
        for name in required_kernels(args.iter().any(|a| a == "--cpp")) {
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
        (exit::USAGE, "usage: pipeline-bench --rust-cubin FILE --cpp-cubin FILE [--cpp-extra FILE]... [--checked-cubin FILE] --out DIR [--quick]".to_string())
    };
    let setup = |message: String| (exit::SETUP, message);
    let rust_cubin = value("--rust-cubin").ok_or_else(usage)?;
    let cpp_cubin = value("--cpp-cubin").ok_or_else(usage)?;
    let out = value("--out").ok_or_else(usage)?;
    let quick = args.iter().any(|a| a == "--quick");
    // The context opens on the Rust cubin (no PTX for the driver to compile: the cubins come from
    // the same ptxas on both sides).
    let gpu = Gpu::open(&rust_cubin).map_err(|e| (e.exit_code(), e.to_string()))?;
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
        csv: String::from(
            "kind,kernel,rust,cpp,ratio,rust_x4,cpp_x4,ratio_x4,rust_llvm_loop,memcpy\n",
        ),
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
        report::commit()
    );
    let (reps, iters, total) = if quick {
        (5, 20_000, 1u64 << 30)
    } else {
        (11, 100_000, 4u64 << 30)
    };
    println!(
        "cycle kernels and variants: {iters} iterations, median of {reps} rounds of alternating runs after a warm-up; streaming: median of {} runs after a warm-up",
        reps.min(7)
    );
    let result = bench
        .cycles(reps, iters)
        .and_then(|()| bench.checked_costs(reps, iters))
        .and_then(|()| bench.variants(reps, iters))
        .and_then(|()| bench.wait_variants(reps, iters))
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

/// The benchmarks: parses the command line, runs the tables, and returns the exit status
/// (`pipeline_suite::exit`: 0 passed, 1 a wrong copy or a failed measurement, 2 usage, 4 no CUDA
/// driver, 5 CUDA setup), errors as one line on stderr.
pub fn main() -> ExitCode {
    match run() {
        Ok(true) => ExitCode::from(pipeline_suite::exit::PASSED),
        Ok(false) => ExitCode::from(pipeline_suite::exit::TEST_FAILED),
        Err((code, message)) => report::error(code, message),
    }
}
