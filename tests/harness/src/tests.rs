//! The suite: the tests (expanded from the `pipeline-suite` lists) and how each is checked.

use std::ffi::c_void;
use std::time::Duration;

use cudarc::driver::CudaSlice;
use pipeline_suite::{
    DONE, EPI_N, PAYLOAD_WORDS, R_CONSUMED, R_CONSUMER, R_DONE, R_ERRORS, R_PRODUCER, REPORT_WORDS,
    TENSOR_BOX_ROWS, TENSOR_ROW_WORDS, TMA_BYTES, barrier_region, epilogue_smem_bytes,
    ring_smem_bytes, role_smem_bytes, tma_smem_bytes,
};

use crate::cuda::Gpu;

/// How many items each kind of test moves.
pub struct Sizes {
    ring: u32,
    many_ctas_per_block: u32,
    tma: u32,
    cluster: u32,
    sync: u32,
}

impl Sizes {
    /// The full suite: 100,000 items per ring configuration.
    pub fn full() -> Self {
        Self {
            ring: 100_000,
            many_ctas_per_block: 2_000,
            tma: 32_768,
            cluster: 25_000,
            sync: 100_000,
        }
    }

    /// Reduced counts, for runs under compute-sanitizer.
    pub fn quick() -> Self {
        Self {
            ring: 2_000,
            many_ctas_per_block: 64,
            tma: 1_000,
            cluster: 1_000,
            sync: 2_000,
        }
    }
}

/// What a test launches and how its output is checked.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `output == input` per block, ring report.
    Ring,
    /// `output == input` per block, TMA items.
    Tma,
    /// `output == input` per block, TMA items as boxes of a 2D tensor: the kernel also takes a
    /// pointer to two tensor maps (input, output) in global memory.
    TmaTensor,
    /// Clusters of 2: each CTA's output equals its cluster's input.
    Cluster,
    /// No data: cursors and completion only.
    Sync,
    /// `D = accum + beta * C` over `EPI_N x EPI_N` f32; rows `block, block + grid, ...` per block.
    Epilogue,
}

/// One launch of one kernel.
pub struct Test {
    pub name: String,
    kernel: String,
    kind: Kind,
    stages: u32,
    threads: u32,
    pub grid: u32,
    cluster: u32,
    items: u32,
    smem: u32,
    /// A control: the kernel is broken on purpose, and the test passes only if the checks fail.
    control: bool,
}

impl Test {
    fn words_per_item(&self) -> usize {
        match self.kind {
            Kind::Tma | Kind::TmaTensor => TMA_BYTES / 4,
            _ => PAYLOAD_WORDS,
        }
    }

    /// Words of input the test reads (per block, or per cluster).
    fn input_words(&self) -> usize {
        if self.kind == Kind::Epilogue {
            return 2 * EPI_N * EPI_N; // accum, then C
        }
        let regions = if self.kind == Kind::Cluster {
            self.grid / 2
        } else {
            self.grid
        };
        regions as usize * self.items as usize * self.words_per_item()
    }

    /// Words of output the test writes.
    fn output_words(&self) -> usize {
        if self.kind == Kind::Epilogue {
            return EPI_N * EPI_N;
        }
        if self.kind == Kind::Sync {
            0
        } else {
            self.grid as usize * self.items as usize * self.words_per_item()
        }
    }
}

/// The tests, in order. `sms` sizes the many-CTA test (two blocks per SM).
pub fn all(sizes: &Sizes, sms: u32) -> Vec<Test> {
    let mut tests = Vec::new();
    macro_rules! ring_row {
        ($b:ident, $s:literal, $pt:literal, $pe:ident, $ct:literal, $ce:ident, $api:ident) => {
            let kernel = pipeline_suite::ring_kernel_name!($b, $s, $pt, $pe, $ct, $ce, $api);
            tests.push(Test {
                name: kernel.to_string(),
                kernel: kernel.to_string(),
                kind: Kind::Ring,
                stages: $s,
                threads: $pt + $ct,
                grid: 1,
                cluster: 1,
                items: sizes.ring,
                smem: ring_smem_bytes($s) as u32,
                control: false,
            });
        };
    }
    pipeline_suite::ring_kernels!(ring_row);
    macro_rules! control_row {
        ($b:ident, $s:literal, $pt:literal, $pe:ident, $ct:literal, $ce:ident, $api:ident) => {
            let kernel = pipeline_suite::ring_kernel_name!($b, $s, $pt, $pe, $ct, $ce, $api);
            tests.push(Test {
                name: format!("control_{kernel}"),
                kernel: kernel.to_string(),
                kind: Kind::Ring,
                stages: $s,
                threads: $pt + $ct,
                grid: 1,
                cluster: 1,
                items: sizes.ring,
                smem: ring_smem_bytes($s) as u32,
                control: true,
            });
        };
    }
    pipeline_suite::control_kernels!(control_row);
    macro_rules! split_row {
        ($b:ident, $s:literal, $pt:literal, $ct:literal, $api:ident) => {
            let kernel = pipeline_suite::split_kernel_name!($b, $s, $pt, $ct, $api);
            tests.push(Test {
                name: kernel.to_string(),
                kernel: kernel.to_string(),
                kind: Kind::Ring,
                stages: $s,
                // Whole warps: a side of 4 threads is the first 4 lanes of its warp.
                threads: $pt + ($ct as u32).div_ceil(32) * 32,
                grid: 1,
                cluster: 1,
                // A multiple of the stage count (each thread takes every `stages`-th item).
                items: sizes.ring / $s * $s,
                smem: ring_smem_bytes($s) as u32,
                control: false,
            });
        };
    }
    pipeline_suite::split_kernels!(split_row);

    // Zero-trip, one-trip and many-CTA launches of representative kernels, on both backends.
    for backend in ["mbar", "counter"] {
        let representatives = [
            (1, "s1_p32a_c128a_handles", 160),
            (3, "s3_p32a_c128a_scopes", 160),
            (4, "s4_p32e_c32e_handles", 64),
        ];
        for (stages, kernel, threads) in representatives {
            for (suffix, items) in [("zero_trip", 0), ("one_trip", 1)] {
                let kernel = format!("ring_{backend}_{kernel}");
                tests.push(Test {
                    name: format!("{kernel}_{suffix}"),
                    kernel,
                    kind: Kind::Ring,
                    stages,
                    threads,
                    grid: 1,
                    cluster: 1,
                    items,
                    smem: ring_smem_bytes(stages as usize) as u32,
                    control: false,
                });
            }
        }
        let kernel = format!("ring_{backend}_s4_p32a_c128a_handles");
        tests.push(Test {
            name: format!("{kernel}_{}_ctas", 2 * sms),
            kernel,
            kind: Kind::Ring,
            stages: 4,
            threads: 160,
            grid: 2 * sms,
            cluster: 1,
            items: sizes.many_ctas_per_block,
            smem: ring_smem_bytes(4) as u32,
            control: false,
        });
    }

    macro_rules! sync_row {
        ($b:ident, $s:literal) => {
            let kernel = concat!("sync_", stringify!($b), "_s", stringify!($s));
            tests.push(Test {
                name: kernel.to_string(),
                kernel: kernel.to_string(),
                kind: Kind::Sync,
                stages: $s,
                threads: 64,
                grid: 1,
                cluster: 1,
                items: sizes.sync,
                smem: barrier_region($s) as u32,
                control: false,
            });
        };
    }
    pipeline_suite::sync_kernels!(sync_row);

    macro_rules! tma_row {
        ($kind:ident, $s:literal, $after:literal) => {
            let kernel = concat!("tma_", stringify!($kind), "_s", stringify!($s));
            tests.push(Test {
                name: kernel.to_string(),
                kernel: kernel.to_string(),
                kind: Kind::Tma,
                stages: $s,
                threads: 160,
                grid: 1,
                cluster: 1,
                items: sizes.tma,
                smem: tma_smem_bytes($s) as u32,
                control: false,
            });
        };
    }
    pipeline_suite::tma_kernels!(tma_row);

    macro_rules! tma_tensor_row {
        ($s:literal) => {
            let kernel = concat!("tma_tensor_s", stringify!($s));
            tests.push(Test {
                name: kernel.to_string(),
                kernel: kernel.to_string(),
                kind: Kind::TmaTensor,
                stages: $s,
                threads: 160,
                grid: 2,
                cluster: 1,
                items: sizes.tma,
                smem: tma_smem_bytes($s) as u32,
                control: false,
            });
        };
    }
    pipeline_suite::tma_tensor_kernels!(tma_tensor_row);

    macro_rules! role_row {
        ($s:literal, $ps:literal, $cs:literal) => {
            let kernel = concat!(
                "role_s",
                stringify!($s),
                "_p",
                stringify!($ps),
                "_c",
                stringify!($cs)
            );
            tests.push(Test {
                name: kernel.to_string(),
                kernel: kernel.to_string(),
                kind: Kind::Ring,
                stages: $s,
                threads: 32 * (1 + $cs),
                grid: 1,
                cluster: 1,
                items: sizes.ring,
                smem: role_smem_bytes($s, $ps, $cs) as u32,
                control: false,
            });
        };
    }
    pipeline_suite::role_kernels!(role_row);

    macro_rules! role_pair_row {
        ($s:literal, $who:ident) => {
            let kernel = pipeline_suite::role_pair_kernel_name!($s, $who);
            tests.push(Test {
                name: format!("{kernel}_4_clusters"),
                kernel: kernel.to_string(),
                kind: Kind::Cluster,
                stages: $s,
                threads: 64,
                grid: 8,
                cluster: 2,
                items: sizes.cluster,
                smem: role_smem_bytes($s, 1, 1) as u32,
                control: false,
            });
        };
    }
    pipeline_suite::role_pair_kernels!(role_pair_row);

    macro_rules! role_pair_one_sided_row {
        ($s:literal, $who:ident, $ps:tt, $cs:tt) => {
            let kernel = pipeline_suite::role_pair_one_sided_kernel_name!($s, $who, $ps, $cs);
            tests.push(Test {
                name: format!("{kernel}_4_clusters"),
                kernel: kernel.to_string(),
                kind: Kind::Cluster,
                stages: $s,
                threads: 32 * (1 + $cs),
                grid: 8,
                cluster: 2,
                items: sizes.cluster,
                smem: role_smem_bytes($s, $ps, $cs) as u32,
                control: false,
            });
        };
    }
    pipeline_suite::role_pair_one_sided_kernels!(role_pair_one_sided_row);

    macro_rules! epilogue_row {
        ($s:literal) => {
            let kernel = concat!("epilogue_s", stringify!($s));
            tests.push(Test {
                name: format!("{kernel}_{EPI_N}x{EPI_N}_{}_ctas", 2 * sms),
                kernel: kernel.to_string(),
                kind: Kind::Epilogue,
                stages: $s,
                threads: 160,
                grid: 2 * sms,
                cluster: 1,
                items: EPI_N as u32,
                smem: epilogue_smem_bytes($s) as u32,
                control: false,
            });
        };
    }
    pipeline_suite::epilogue_kernels!(epilogue_row);

    macro_rules! cluster_row {
        ($s:literal) => {
            let kernel = concat!("cluster_mbar_s", stringify!($s));
            tests.push(Test {
                name: format!("{kernel}_4_clusters"),
                kernel: kernel.to_string(),
                kind: Kind::Cluster,
                stages: $s,
                threads: 64,
                grid: 8,
                cluster: 2,
                items: sizes.cluster,
                smem: ring_smem_bytes($s) as u32,
                control: false,
            });
        };
    }
    pipeline_suite::cluster_kernels!(cluster_row);
    tests
}

/// The result of one test.
pub enum Outcome {
    /// Every check held (or, for a control, a check caught the planted bug: `caught`).
    Pass {
        millis: f64,
        items: u64,
        caught: Option<String>,
    },
    /// A check failed; the context is still usable.
    Fail(String),
    /// The kernel did not finish; the context is unusable.
    Hung(String),
}

/// Buffers shared by all tests, sized for the largest.
pub struct Runner<'g> {
    gpu: &'g Gpu,
    input: CudaSlice<u32>,
    output: CudaSlice<u32>,
    report: CudaSlice<u32>,
    /// Two tensor maps (input, output) of the tensor-TMA tests, 32 words each.
    maps: CudaSlice<u32>,
    host_input: Vec<u32>,
    host_output: Vec<u32>,
    rng: u64,
    /// The epilogue's `beta`, fresh for every test.
    beta: f32,
}

/// Poison written to outputs before a run; no input word is ever compared against it alone.
const POISON: u32 = 0xDEAD_BEEF;
/// Report words start as this; every checked word must have been written by the kernel.
const REPORT_POISON: u32 = 0xEEEE_EEEE;

impl<'g> Runner<'g> {
    pub fn new(gpu: &'g Gpu, tests: &[&Test], seed: u64) -> Result<Self, String> {
        let input_words = tests.iter().map(|t| t.input_words()).max().unwrap_or(0);
        let output_words = tests.iter().map(|t| t.output_words()).max().unwrap_or(0);
        let blocks = tests.iter().map(|t| t.grid as usize).max().unwrap_or(1);
        Ok(Self {
            gpu,
            input: gpu.alloc(input_words)?,
            output: gpu.alloc(output_words)?,
            report: gpu.alloc(blocks * REPORT_WORDS)?,
            maps: gpu.alloc(64)?,
            host_input: vec![0; input_words],
            host_output: vec![0; output_words],
            rng: seed,
            beta: 1.0,
        })
    }

    /// xorshift64*: fresh random words for every test.
    fn next_word(&mut self) -> u32 {
        self.rng ^= self.rng >> 12;
        self.rng ^= self.rng << 25;
        self.rng ^= self.rng >> 27;
        (self.rng.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 32) as u32
    }

    pub fn run(&mut self, test: &Test, timeout: Duration) -> Outcome {
        match (self.run_checked(test, timeout), test.control) {
            (Ok(Outcome::Pass { .. }), true) => {
                Outcome::Fail("the checks did not catch this deliberately broken kernel".into())
            }
            (Err(caught), true) => Outcome::Pass {
                millis: 0.0,
                items: 0,
                caught: Some(caught),
            },
            (Ok(outcome), _) => outcome,
            (Err(message), false) => Outcome::Fail(message),
        }
    }

    fn run_checked(&mut self, test: &Test, timeout: Duration) -> Result<Outcome, String> {
        let gpu = self.gpu;
        let function = gpu.function(&test.kernel)?;
        let input_words = test.input_words();
        let output_words = test.output_words();
        if test.kind == Kind::Epilogue {
            // Values in [-1, 1) and beta in [0.5, 2): no NaN, no infinity.
            let unit = |w: u32| (w >> 8) as f32 / (1u32 << 23) as f32 - 1.0;
            self.beta = 0.5 + 0.75 * (unit(self.next_word()) + 1.0);
            for i in 0..input_words {
                let word = self.next_word();
                self.host_input[i] = unit(word).to_bits();
            }
        } else {
            for i in 0..input_words {
                let word = self.next_word();
                // Never let an input word equal the poison: a skipped copy must not compare equal.
                self.host_input[i] = if word == POISON { !word } else { word };
            }
        }
        gpu.upload(&self.host_input[..input_words], &mut self.input)?;
        gpu.fill(&self.output, POISON, output_words.max(1))?;
        // Every report word is poisoned except the error counter, which kernels add to.
        let mut initial_report = vec![REPORT_POISON; test.grid as usize * REPORT_WORDS];
        for record in initial_report.chunks_mut(REPORT_WORDS) {
            record[R_ERRORS] = 0;
        }
        gpu.upload(&initial_report, &mut self.report)?;

        let mut input = gpu.address(&self.input);
        let mut output = gpu.address(&self.output);
        let mut report = gpu.address(&self.report);
        let mut items = test.items;
        let mut c_matrix = input + (EPI_N * EPI_N * 4) as u64;
        let mut beta = self.beta;
        let mut maps = gpu.address(&self.maps);
        if test.kind == Kind::TmaTensor {
            let rows = u64::from(test.grid) * u64::from(test.items) * TENSOR_BOX_ROWS as u64;
            let words = TENSOR_ROW_WORDS as u64;
            let box_rows = TENSOR_BOX_ROWS as u32;
            let mut both = [0u32; 64];
            both[..32].copy_from_slice(&gpu.tensor_map_2d_u32(input, words, rows, box_rows)?);
            both[32..].copy_from_slice(&gpu.tensor_map_2d_u32(output, words, rows, box_rows)?);
            gpu.upload(&both, &mut self.maps)?;
        }
        let mut args: Vec<*mut c_void> = if test.kind == Kind::Sync {
            vec![(&raw mut items).cast(), (&raw mut report).cast()]
        } else if test.kind == Kind::Epilogue {
            vec![
                (&raw mut input).cast(),
                (&raw mut c_matrix).cast(),
                (&raw mut output).cast(),
                (&raw mut beta).cast(),
                (&raw mut report).cast(),
            ]
        } else if test.kind == Kind::TmaTensor {
            vec![
                (&raw mut input).cast(),
                (&raw mut output).cast(),
                (&raw mut items).cast(),
                (&raw mut report).cast(),
                (&raw mut maps).cast(),
            ]
        } else {
            vec![
                (&raw mut input).cast(),
                (&raw mut output).cast(),
                (&raw mut items).cast(),
                (&raw mut report).cast(),
            ]
        };
        gpu.launch(
            &function,
            test.grid,
            test.threads,
            test.cluster,
            test.smem,
            &mut args,
        )?;
        let elapsed = match gpu.wait(timeout) {
            Ok(elapsed) => elapsed,
            Err((true, message)) => return Ok(Outcome::Hung(message)),
            Err((false, message)) => return Err(message),
        };

        let mut reports = vec![0u32; test.grid as usize * REPORT_WORDS];
        gpu.download(&self.report, &mut reports)?;
        for block in 0..test.grid {
            self.check_report(
                test,
                block,
                &reports[block as usize * REPORT_WORDS..][..REPORT_WORDS],
            )?;
        }
        if output_words > 0 {
            let mut host_output = std::mem::take(&mut self.host_output);
            let result = gpu
                .download(&self.output, &mut host_output[..output_words])
                .and_then(|()| self.check_output(test, &host_output[..output_words]));
            self.host_output = host_output;
            result?;
        }
        let items = if test.kind == Kind::Epilogue {
            u64::from(test.items)
        } else {
            u64::from(test.items) * u64::from(test.grid)
        };
        Ok(Outcome::Pass {
            millis: elapsed.as_secs_f64() * 1e3,
            items,
            caught: None,
        })
    }

    fn check_report(&self, test: &Test, block: u32, report: &[u32]) -> Result<(), String> {
        let stages = test.stages;
        // An epilogue block handles rows block, block + grid, ...: its own item count.
        let items = if test.kind == Kind::Epilogue {
            (test.items.saturating_sub(block)).div_ceil(test.grid)
        } else {
            test.items
        };
        let expect_producer = [items % stages, 1 + items / stages];
        let expect_consumer = [items % stages, items / stages];
        if report[R_DONE] != DONE {
            return Err(format!(
                "block {block} did not reach its end (report {report:x?})"
            ));
        }
        if report[R_ERRORS] != 0 {
            return Err(format!(
                "block {block}: {} slot headers did not carry the expected sequence number",
                report[R_ERRORS]
            ));
        }
        // In a cluster one CTA produces (rank 0, or rank 1 in the odd one-sided pairs), or both.
        let produces = test.kind != Kind::Cluster
            || pipeline_suite::pair_cta_produces(&test.kernel, block % 2);
        if produces && report[R_PRODUCER..R_PRODUCER + 2] != expect_producer {
            return Err(format!(
                "block {block}: producer cursor (stage, lap) = {:?}, expected {expect_producer:?}",
                &report[R_PRODUCER..R_PRODUCER + 2]
            ));
        }
        if report[R_CONSUMER..R_CONSUMER + 2] != expect_consumer {
            return Err(format!(
                "block {block}: consumer cursor (stage, lap) = {:?}, expected {expect_consumer:?}",
                &report[R_CONSUMER..R_CONSUMER + 2]
            ));
        }
        if report[R_CONSUMED] != items {
            return Err(format!(
                "block {block}: consumed {} items, expected {}",
                report[R_CONSUMED], items
            ));
        }
        Ok(())
    }

    /// Every element of `D` must equal `accum + beta * C` evaluated in f32, unfused or fused (the
    /// NVPTX backend may contract the multiply-add): an exact comparison against the two IEEE results.
    fn check_epilogue(&self, output: &[u32]) -> Result<(), String> {
        let n = EPI_N * EPI_N;
        let beta = self.beta;
        let (accum, c) = self.host_input[..2 * n].split_at(n);
        let mut wrong = 0usize;
        let mut first = None;
        for i in 0..n {
            let (a, c) = (f32::from_bits(accum[i]), f32::from_bits(c[i]));
            let d = output[i];
            if d != (a + beta * c).to_bits() && d != beta.mul_add(c, a).to_bits() {
                wrong += 1;
                first.get_or_insert((i, d, a + beta * c));
            }
        }
        match first {
            None => Ok(()),
            Some((i, d, want)) => Err(format!(
                "{wrong} of {n} elements of D wrong; first at row {} column {}: {} (bits {d:#010x}), expected {want}{}",
                i / EPI_N,
                i % EPI_N,
                f32::from_bits(d),
                if d == POISON { " (never written)" } else { "" }
            )),
        }
    }

    fn check_output(&self, test: &Test, output: &[u32]) -> Result<(), String> {
        if test.kind == Kind::Epilogue {
            return self.check_epilogue(output);
        }
        let per_block = test.items as usize * test.words_per_item();
        for block in 0..test.grid as usize {
            let source = if test.kind == Kind::Cluster {
                block / 2
            } else {
                block
            };
            let want = &self.host_input[source * per_block..][..per_block];
            let got = &output[block * per_block..][..per_block];
            if let Some(i) = (0..per_block).find(|&i| want[i] != got[i]) {
                let wrong = (0..per_block).filter(|&i| want[i] != got[i]).count();
                return Err(format!(
                    "block {block}: {wrong} of {per_block} output words wrong; first at item {} word {}: {:#010x}, expected {:#010x}{}",
                    i / test.words_per_item(),
                    i % test.words_per_item(),
                    got[i],
                    want[i],
                    if got[i] == POISON {
                        " (never written)"
                    } else {
                        ""
                    }
                ));
            }
        }
        Ok(())
    }
}
