//! `pipeline-bench`: runs the benchmark kernels written with the library (Rust PTX) and their
//! hand-written CUDA C++ twins (a cubin built by nvcc) side by side in one process, alternating,
//! and prints a table: configuration, Rust, C++, ratio, and the hardware reference where one
//! exists. Cycle figures come from `%clock64` in the kernels (median over repetitions, after a
//! warm-up); bandwidth from CUDA events around each launch. Streaming outputs are verified.
//!
//! Usage: `pipeline-bench --rust-ptx FILE --rust-cubin FILE --cpp-cubin FILE --out DIR [--quick]`
//! (the Rust PTX assembled by the same `ptxas -arch=sm_90a` as the C++, so both run the same
//! compiler's machine code; the PTX itself opens the context).

mod cuda;

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

/// The streaming benchmarks: (kernel, stages, KiB per stage).
const STREAMS: &[(&str, u32, u32)] = &[
    ("bench_stream_s2_k8", 2, 8),
    ("bench_stream_s2_k16", 2, 16),
    ("bench_stream_s2_k32", 2, 32),
    ("bench_stream_s2_k64", 2, 64),
    ("bench_stream_s4_k8", 4, 8),
    ("bench_stream_s4_k16", 4, 16),
    ("bench_stream_s4_k32", 4, 32),
    ("bench_stream_s8_k8", 8, 8),
    ("bench_stream_s8_k16", 8, 16),
];

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(|a, b| a.total_cmp(b));
    values[values.len() / 2]
}

struct Bench {
    gpu: Gpu,
    rust: Arc<CudaModule>,
    cpp: Arc<CudaModule>,
    csv: String,
    table: String,
}

impl Bench {
    fn function(module: &Arc<CudaModule>, name: &str, side: &str) -> Result<CudaFunction, String> {
        module
            .load_function(name)
            .map_err(|e| format!("{side} kernel `{name}` missing: {e:?}"))
    }

    /// Runs a cycle kernel once and returns its cycles per iteration.
    fn run_cycles(
        &self,
        f: &CudaFunction,
        b: &Cycles,
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
            .launch(f, b.cluster, b.threads, b.cluster, b.smem, &mut args)?;
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

    fn cycles(&mut self, reps: usize, iters: u32) -> Result<(), String> {
        let mut out = self
            .gpu
            .stream
            .alloc_zeros::<u64>(4)
            .map_err(|e| format!("{e:?}"))?;
        writeln!(
            self.table,
            "\n{:<52} {:>10} {:>10} {:>7}  hand-written C++ reference (DESIGN.md)",
            "cycles (median)", "Rust", "C++", "ratio"
        )
        .unwrap();
        for b in CYCLES {
            let rust = Self::function(&self.rust, b.kernel, "Rust")?;
            let cpp = Self::function(&self.cpp, b.kernel, "C++")?;
            self.run_cycles(&rust, b, iters / 10, &mut out)?;
            self.run_cycles(&cpp, b, iters / 10, &mut out)?;
            let (mut r, mut c) = (Vec::new(), Vec::new());
            for _ in 0..reps {
                r.push(self.run_cycles(&rust, b, iters, &mut out)?);
                c.push(self.run_cycles(&cpp, b, iters, &mut out)?);
            }
            let (r, c) = (median(&mut r), median(&mut c));
            let reference = b.reference.unwrap_or("-");
            writeln!(
                self.table,
                "{:<52} {:>10.1} {:>10.1} {:>7.3}  {}",
                b.what,
                r,
                c,
                r / c,
                reference
            )
            .unwrap();
            writeln!(
                self.csv,
                "cycles,{},{r:.2},{c:.2},{:.4},{reference}",
                b.kernel,
                r / c
            )
            .unwrap();
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
        let grid = self.gpu.sms;
        let bytes_per_block = total / u64::from(grid) / (64 * 1024) * (64 * 1024);
        let bytes = bytes_per_block * u64::from(grid);
        let words = bytes / 4;
        let src = self.gpu.alloc(words as usize)?;
        let dst = self.gpu.alloc(words as usize)?;
        let mut mismatches = self
            .gpu
            .stream
            .alloc_zeros::<u32>(1)
            .map_err(|e| format!("{e:?}"))?;
        let (src_ptr, dst_ptr) = (self.gpu.address(&src), self.gpu.address(&dst));
        let fill = Self::function(&self.rust, "bench_fill", "Rust")?;
        let verify = Self::function(&self.rust, "bench_verify", "Rust")?;
        {
            let (mut p, mut n) = (src_ptr, words);
            let mut args: Vec<*mut c_void> = vec![(&raw mut p).cast(), (&raw mut n).cast()];
            self.gpu.launch(&fill, grid * 4, 256, 1, 0, &mut args)?;
        }
        let (start, stop) = (self.event()?, self.event()?);
        let timed =
            |this: &Self, launch: &mut dyn FnMut() -> Result<(), String>| -> Result<f64, String> {
                start
                    .record(&this.gpu.stream)
                    .map_err(|e| format!("{e:?}"))?;
                launch()?;
                stop.record(&this.gpu.stream)
                    .map_err(|e| format!("{e:?}"))?;
                this.gpu
                    .wait(std::time::Duration::from_secs(60))
                    .map_err(|(_, m)| m)?;
                let ms = start.elapsed_ms(&stop).map_err(|e| format!("{e:?}"))?;
                Ok(bytes as f64 / (f64::from(ms) * 1e-3) / 1e9)
            };
        // cudaMemcpy device to device (cuMemcpyDtoDAsync), the baseline.
        let mut memcpy = Vec::new();
        for _ in 0..=reps {
            memcpy.push(timed(self, &mut || {
                // SAFETY: both buffers hold `bytes` bytes.
                let status = unsafe {
                    sys::cuMemcpyDtoDAsync_v2(
                        dst_ptr,
                        src_ptr,
                        bytes as usize,
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
        writeln!(self.table, "\nstreaming copy of {:.2} GiB, {grid} CTAs (GB/s copied, median of {reps}) {:>6} {:>9} {:>7}  {:>9}  memcpy D2D", bytes as f64 / (1u64 << 30) as f64, "Rust", "C++", "R/C++", "R/memcpy").unwrap();
        for &(kernel, stages, kib) in STREAMS {
            let smem = 128 + stages * kib * 1024;
            let rust = Self::function(&self.rust, kernel, "Rust")?;
            let cpp = Self::function(&self.cpp, kernel, "C++")?;
            let (mut r, mut c) = (Vec::new(), Vec::new());
            for rep in 0..=reps {
                for (side, f, sink) in [("Rust", &rust, &mut r), ("C++", &cpp, &mut c)] {
                    self.gpu.fill(&dst, 0xDEAD_BEEF, words as usize)?;
                    let gbs = timed(self, &mut || {
                        let (mut s, mut d, mut n) = (src_ptr, dst_ptr, bytes_per_block);
                        let mut args: Vec<*mut c_void> = vec![
                            (&raw mut s).cast(),
                            (&raw mut d).cast(),
                            (&raw mut n).cast(),
                        ];
                        self.gpu.launch(f, grid, 64, 1, smem, &mut args)
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
                    self.gpu.launch(&verify, grid * 4, 256, 1, 0, &mut args)?;
                    let wrong = self
                        .gpu
                        .stream
                        .clone_dtoh(&mismatches)
                        .map_err(|e| format!("{e:?}"))?[0];
                    if wrong != 0 {
                        return Err(format!(
                            "{side} {kernel}: {wrong} words of the copy are wrong"
                        ));
                    }
                    if rep > 0 {
                        sink.push(gbs);
                    }
                }
            }
            let (r, c) = (median(&mut r), median(&mut c));
            writeln!(self.table, "stages {stages}, {kib:>2} KiB per stage {:>38.0} {:>9.0} {:>7.3}  {:>9.3}  {memcpy:.0}", r, c, r / c, r / memcpy).unwrap();
            writeln!(
                self.csv,
                "stream,{kernel},{r:.1},{c:.1},{:.4},{memcpy:.1}",
                r / c
            )
            .unwrap();
        }
        Ok(())
    }
}

fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let value = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let usage = "usage: pipeline-bench --rust-ptx FILE --rust-cubin FILE --cpp-cubin FILE --out DIR [--quick]";
    let rust_ptx = value("--rust-ptx").ok_or(usage)?;
    let rust_cubin = value("--rust-cubin").ok_or(usage)?;
    let cpp_cubin = value("--cpp-cubin").ok_or(usage)?;
    let out = value("--out").ok_or(usage)?;
    let quick = args.iter().any(|a| a == "--quick");
    let gpu = Gpu::open(&rust_ptx)?;
    let rust = gpu.load_file(&rust_cubin)?;
    let cpp = gpu.load_file(&cpp_cubin)?;
    let mut bench = Bench {
        gpu,
        rust,
        cpp,
        csv: String::from("kind,kernel,rust,cpp,ratio,reference\n"),
        table: String::new(),
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
    println!(
        "cycle kernels: {iters} iterations, median of {reps} alternating runs after a warm-up; streaming: median of {} runs after a warm-up",
        reps.min(7)
    );
    bench.cycles(reps, iters)?;
    bench.streams(reps.min(7), total)?;
    print!("{}", bench.table);
    std::fs::write(format!("{out}/bench.csv"), &bench.csv)
        .map_err(|e| format!("write bench.csv: {e}"))?;
    std::fs::write(format!("{out}/bench_table.txt"), &bench.table)
        .map_err(|e| format!("write bench_table.txt: {e}"))?;
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}
