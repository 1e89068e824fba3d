//! The GEMM's device test (`cargo xtask test-nvidia` runs it from the bundle): every shape is
//! checked **exactly** against a host reference on small-integer inputs (values in -2..=2, so every
//! product and partial sum is an integer below 2^24 and exact in f32, and the reference rounds to
//! bf16 as the kernel does), over square shapes, odd M and N (1, 7, 1000, 4097), skinny M (64,
//! 128), decode M (1, 3, 5, 9, 17, 33, 40, 63) split across 1 to 8 CTAs of a cluster by the
//! cluster-K kernels (each count checked to have run), long K (65536), beta 0 and non-zero
//! (non-zero also in place: C is D). One line per shape, PASS or FAIL; then one timing line at
//! 8192^3 (information only: the benchmark against cuBLAS is `cargo xtask bench-gemm`).
//!
//! Then the host API's boundaries (`boundary`): modules of another ABI, two streams, two contexts;
//! and `run` captured into CUDA graphs (`graph`): refused before its first call, replayed exactly
//! after it.
//!
//! Then programmatic dependent launches (`programmatic`, but under `--sanitize`): chains of GEMMs
//! launched as programmatic dependents, each reading or overwriting what the GEMM before it
//! writes or reads, exact (and captured into a graph).
//!
//! Usage: `gemm-test PTX [--quick | --sanitize] [--boundary | --programmatic]`. `--quick`: three
//! cases per kernel and no timing; `--sanitize`: the same three, the boundary tests without the
//! long two-stream problems (for compute-sanitizer, under which a 2048 x 2048 x 524288 GEMM takes
//! too long); `--boundary`: only the boundary tests; `--programmatic`: only the programmatic
//! chains (the GEMM bundle runs them on the `unwaited` module, where they must fail). Exit
//! statuses: `pipeline_suite::exit`.

mod boundary;
mod graph;
mod programmatic;

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use cudarc::driver::{CudaSlice, CudaStream};
use gpu_gemm_host::{Addend, Gemm, GemmError, Kernel, Prepared, Shape, bf16, f32_of};

/// Every kernel (with the `steps` feature, the step kernels too: `main` picks those the run
/// asks for).
const KERNELS: &[Kernel] = &Kernel::ALL;
use pipeline_suite::exit;

/// One case: shape, alpha, beta.
type Case = (u32, u32, u32, f32, f32);

const CASES: &[Case] = &[
    (128, 256, 64, 1.0, 0.0),
    (256, 512, 256, 1.0, 1.0),
    (1024, 1024, 1024, 1.0, 0.0),
    (1, 1, 8, 1.0, 0.0),
    (7, 1000, 136, 1.0, 0.5),
    (1000, 7, 64, 2.0, 0.0),
    // Beta 0 with a last tile row past M, which the 128 x 64 and 128 x 128 kernels load
    // shifted inside M: M % 128 = 64 (the shifted tile's first warpgroup writes nothing, its
    // second whole rows through the staged store) and 104 (its first straddles the row above,
    // its second is whole), N a multiple of 8.
    (320, 4104, 520, 1.0, 0.0),
    (1000, 1032, 1000, 1.0, 0.0),
    // Beta 0, several short tiles per CTA: a tile's D leaves its staging box while the next tile
    // is staged (a 128 x 64 kernel that staged every tile in one box failed here).
    (4097, 1000, 136, 1.0, 0.0),
    (4097, 300, 1024, 1.0, 1.0),
    (300, 4097, 512, 0.5, 2.0),
    (64, 4096, 4096, 1.0, 0.0),
    (128, 14336, 512, 1.0, 1.0),
    (64, 128, 65536, 1.0, 0.0),
    // More tiles than the GPU holds at once, the last partial wave split (in 2, for both the
    // single CTAs, 153 tiles, and the pairs, 85 cluster tiles, on 132 SMs).
    (1100, 4104, 456, 1.0, 1.0),
    // Split-K with C: 8 tiles of 128 x 256, 16 of 128 x 128 or 32 of 128 x 64, each split in
    // 8 or 4; the CTA that adds a tile's splits up reads C.
    (192, 1000, 2048, 1.0, 1.0),
    // Decode (M <= 64, where the default kernels compute the transpose): odd M; N and K not
    // multiples of the tile; split-K over K (32 tiles of 128 rows of B, each split in 4); C.
    (1, 4096, 4096, 1.0, 0.0),
    (3, 1000, 2056, 1.0, 0.5),
    (17, 4097, 1000, 1.0, 1.0),
    (63, 2050, 8200, 2.0, 0.0),
    (33, 7, 3000, 1.0, 1.0),
    // Split-K inside a cluster (the cluster-K kernels; the others split it through their
    // workspace), the part count from the clusters that fit on the H200 (15 of 8 or 7, 17 of 6,
    // 22 of 5, 30 of 4, 39 of 3, 66 of 2): 16 tiles in 6 parts; 64 in 2, with C; 20 in 5;
    // 24 in 4, with C.
    (1, 2048, 2048, 1.0, 0.0),
    (5, 8192, 1024, 1.0, 1.0),
    (9, 2560, 2048, 1.0, 0.0),
    (40, 3000, 1496, 1.0, 1.0),
    // One tile and 4 s + 1 k-blocks: s parts of at least `CLUSTER_K_MIN_BLOCKS` (4), on any GPU
    // (every part count 2 to 8 of the 192-wide kernel; 4 to 8 of the narrower ones, which split
    // only from `CLUSTER_K_SPLIT_FROM` (16) k-blocks: 2 parts above (64 tiles), 3 on 35 tiles
    // (more than 30 clusters of 4 fit on the H200, 32 on the H100; 39 and 40 of 3); `main`
    // checks that each count ran, a host test that the cases reach each).
    (3, 4480, 1032, 1.0, 1.0),
    (3, 100, 520, 1.0, 0.0),
    (3, 100, 776, 1.0, 1.0),
    (3, 100, 1032, 1.0, 0.0),
    (3, 100, 1288, 1.0, 1.0),
    (3, 100, 1544, 1.0, 0.0),
    (3, 100, 1800, 1.0, 1.0),
    (3, 100, 2056, 1.0, 0.0),
];

/// Cases of the quick and sanitizer modes: one tile, an odd shape with C, a split-K shape with C
/// (4097 x 300 x 1024 splits for the persistent kernels), a decode shape with C (split-K for
/// the transposing kernels), and beta 0 with a last tile row past M (300 rows; 1000 for the
/// transposing kernels), which the 128 x 64 and 128 x 128 kernels (and every kernel of the
/// `shift_edge` variant) load shifted inside M, and 192 rows split over K, beta 0: the shifted
/// tile's second warpgroup writes whole rows through the staged store, after the splits.
const QUICK: &[Case] = &[
    (128, 256, 64, 1.0, 0.0),
    (7, 1000, 136, 1.0, 0.5),
    (4097, 300, 1024, 1.0, 1.0),
    (3, 1000, 2056, 1.0, 0.5),
    (300, 1000, 136, 1.0, 0.0),
    (192, 1000, 2048, 1.0, 0.0),
];

/// Cases added for the step kernels (`--steps`), for the stream-K ones on the H200's 132 SMs:
/// 72 tiles of 128 x 256 (144 of 128 x 128) of 8 k-blocks, cut over 132 workers of 4 or 5, a
/// tile in up to three parts; 45 tiles of 9 k-blocks over 101 workers, N not a multiple of 8 (D
/// out from registers), with C. For the transposing kernels 128 and 192 rows of A wide: M in
/// their classes (96, 150, 192), N not a multiple of their 128-row weight tiles nor of 8, K not
/// of 64, C, and a split K (32 weight tiles of 64 k-blocks).
const STEP_CASES: &[Case] = &[
    (768, 3072, 512, 1.0, 0.0),
    (640, 2050, 520, 2.0, 1.0),
    (96, 4105, 1000, 1.0, 1.0),
    (150, 3000, 2056, 1.0, 0.5),
    (192, 4096, 4096, 2.0, 0.0),
];

fn fail(code: u8, message: &str) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::from(code)
}

/// xorshift64: small integers in -2..=2 as bf16.
fn fill(seed: &mut u64, n: usize) -> Vec<u16> {
    (0..n)
        .map(|_| {
            *seed ^= *seed << 13;
            *seed ^= *seed >> 7;
            *seed ^= *seed << 17;
            bf16((*seed % 5) as f32 - 2.0)
        })
        .collect()
}

/// The reference D, rounded to bf16 as the kernel rounds (f32 accumulation is exact here).
fn reference(case: Case, a: &[u16], b: &[u16], c: &[u16]) -> Vec<u16> {
    let (m, n, k, alpha, beta) = case;
    let (m, n, k) = (m as usize, n as usize, k as usize);
    let af: Vec<f32> = a.iter().map(|&x| f32_of(x)).collect();
    let bf: Vec<f32> = b.iter().map(|&x| f32_of(x)).collect();
    let mut d = vec![0u16; m * n];
    for i in 0..m {
        let row = &af[i * k..][..k];
        for j in 0..n {
            let col = &bf[j * k..][..k];
            let s: f32 = row.iter().zip(col).map(|(x, y)| x * y).sum();
            d[i * n + j] = bf16(alpha * s + beta * f32_of(c[i * n + j]));
        }
    }
    d
}

/// Launches a prepared problem with `(alpha, beta)` over its buffers (C as `c`), waits for it,
/// and reads D back.
#[allow(clippy::too_many_arguments)]
fn launch_and_read<'a>(
    gemm: &Gemm,
    stream: &Arc<CudaStream>,
    prepared: &Prepared,
    (alpha, beta): (f32, f32),
    a: &CudaSlice<u16>,
    b: &CudaSlice<u16>,
    c: impl Into<Addend<'a>>,
    d: &mut CudaSlice<u16>,
) -> Result<Vec<u16>, String> {
    gemm.launch(stream, prepared, alpha, beta, a, b, c, d)
        .map_err(|e| e.to_string())?;
    stream
        .synchronize()
        .map_err(|e| format!("the GEMM kernel failed: {e:?}"))?;
    stream.clone_dtoh(d).map_err(|e| format!("download: {e:?}"))
}

fn run_case(
    gemm: &Gemm,
    kernel: Kernel,
    stream: &Arc<CudaStream>,
    case: Case,
    seed: &mut u64,
) -> Result<bool, String> {
    let (m, n, k, alpha, beta) = case;
    let (mu, nu, ku) = (m as usize, n as usize, k as usize);
    let (a, b, c) = (
        fill(seed, mu * ku),
        fill(seed, nu * ku),
        fill(seed, mu * nu),
    );
    let up = |h: &[u16]| stream.clone_htod(h).map_err(|e| format!("upload: {e:?}"));
    let (da, db, dc) = (up(&a)?, up(&b)?, up(&c)?);
    // Poisoned output: a word the kernel skips cannot pass.
    let poison = vec![0xFFC1u16; mu * nu];
    let mut dd: CudaSlice<u16> = up(&poison)?;
    let shape = Shape { m, n, k };
    gemm.run_with(
        kernel,
        stream,
        shape,
        alpha,
        &da,
        &db,
        beta,
        Some(&dc),
        &mut dd,
    )
    .map_err(|e| e.to_string())?;
    stream
        .synchronize()
        .map_err(|e| format!("the GEMM kernel failed: {e:?}"))?;
    let got = stream
        .clone_dtoh(&dd)
        .map_err(|e| format!("download: {e:?}"))?;
    let want = reference(case, &a, &b, &c);
    let splits = gemm.splits(kernel, shape);
    let mut outputs = vec![got];
    if splits > 1 {
        // Split-K reuses its workspace (the partials, and the split counters each launch must
        // leave at zero): two more launches of one prepared problem, D poisoned before each, must
        // both be exact.
        let prepared = gemm
            .prepare(stream, kernel, shape, &da, &db, Some(&dc), &dd)
            .map_err(|e| e.to_string())?;
        for _ in 0..2 {
            stream
                .memcpy_htod(&poison, &mut dd)
                .map_err(|e| format!("poison: {e:?}"))?;
            outputs.push(launch_and_read(
                gemm,
                stream,
                &prepared,
                (alpha, beta),
                &da,
                &db,
                Some(&dc),
                &mut dd,
            )?);
        }
    }
    if beta != 0.0 {
        // In place (C is D): D starts as C, and every element of C must be read before its
        // element of D is written (by the CTA that adds a split tile's splits up, too).
        let prepared = gemm
            .prepare(stream, kernel, shape, &da, &db, Addend::InPlace, &dd)
            .map_err(|e| e.to_string())?;
        stream
            .memcpy_htod(&c, &mut dd)
            .map_err(|e| format!("upload: {e:?}"))?;
        outputs.push(launch_and_read(
            gemm,
            stream,
            &prepared,
            (alpha, beta),
            &da,
            &db,
            Addend::InPlace,
            &mut dd,
        )?);
    }
    let name = format!(
        "{} {m}x{n}x{k} alpha {alpha} beta {beta} splits {splits}",
        kernel.entry()
    );
    let wrong: Vec<usize> = outputs
        .iter()
        .flat_map(|got| (0..mu * nu).filter(|&i| got[i] != want[i]))
        .collect();
    let got = &outputs[outputs.len() - 1];
    if let Some(&first) = wrong.first() {
        println!(
            "FAIL {name:<52} {} wrong elements over {} launch(es) of {} elements; first at ({}, {}): {} expected {}",
            wrong.len(),
            outputs.len(),
            mu * nu,
            first / nu,
            first % nu,
            f32_of(got[first]),
            f32_of(want[first])
        );
        Ok(false)
    } else {
        println!(
            "PASS {name:<52} every element exact ({} launch{}{})",
            outputs.len(),
            if outputs.len() > 1 { "es" } else { "" },
            if beta != 0.0 {
                ", the last in place"
            } else {
                ""
            }
        );
        Ok(true)
    }
}

fn time_8192(gemm: &Gemm, kernel: Kernel, stream: &Arc<CudaStream>) -> Result<(), String> {
    let (m, n, k) = (8192u32, 8192u32, 8192u32);
    let elems = (m * n) as usize;
    // Random small integers, not zeros (zeros draw less power and time faster).
    let mut seed = 0x2545_F491_4F6C_DD1Du64;
    let up = |h: &[u16]| stream.clone_htod(h).map_err(|e| format!("{e:?}"));
    let (a, b) = (up(&fill(&mut seed, elems))?, up(&fill(&mut seed, elems))?);
    let mut d = stream
        .alloc_zeros::<u16>(elems)
        .map_err(|e| format!("{e:?}"))?;
    let shape = Shape { m, n, k };
    let mut run = || {
        gemm.run_with(kernel, stream, shape, 1.0, &a, &b, 0.0, None, &mut d)
            .map_err(|e| e.to_string())
    };
    for _ in 0..3 {
        run()?;
    }
    stream.synchronize().map_err(|e| format!("{e:?}"))?;
    let reps = 20;
    let start = Instant::now();
    for _ in 0..reps {
        run()?;
    }
    stream.synchronize().map_err(|e| format!("{e:?}"))?;
    let s = start.elapsed().as_secs_f64() / f64::from(reps);
    println!(
        "time {} 8192x8192x8192: {:.3} ms, {:.1} TFLOP/s (random data; information only)",
        kernel.entry(),
        s * 1e3,
        2.0 * 8192f64.powi(3) / s / 1e12
    );
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let sanitize = args.iter().any(|a| a == "--sanitize");
    let quick = sanitize || args.iter().any(|a| a == "--quick");
    let only_boundary = args.iter().any(|a| a == "--boundary");
    let only_programmatic = args.iter().any(|a| a == "--programmatic");
    // The step kernels the module holds (the steps module's measurements), on the cases and
    // `STEP_CASES`, instead of the production kernels.
    let steps = args.iter().any(|a| a == "--steps");
    // `--only=TEXT`: only the kernels whose entry contains TEXT (to run one kernel's cases under
    // a slow tool).
    let only = args.iter().find_map(|a| a.strip_prefix("--only="));
    let paths: Vec<&String> = args.iter().filter(|a| !a.starts_with("--")).collect();
    let [ptx] = paths.as_slice() else {
        return fail(
            exit::USAGE,
            "usage: gemm-test PTX [--quick | --sanitize] [--boundary | --programmatic | --steps] [--only=TEXT]",
        );
    };
    let ctx = match gpu_gemm_host::context(0) {
        Ok(ctx) => ctx,
        Err(e @ GemmError::NoDriver(_)) => return fail(exit::NO_DRIVER, &e.to_string()),
        Err(e) => return fail(exit::SETUP, &format!("no usable CUDA GPU: {e}")),
    };
    let stream = ctx.default_stream();
    let gemm = match Gemm::load(&ctx, ptx) {
        Ok(g) => g,
        Err(e) => return fail(exit::SETUP, &e.to_string()),
    };
    println!(
        "gemm: {} SMs; {} CTA pairs of the cluster kernel fit at once",
        gemm.sms(),
        gemm.pairs()
    );
    let mut seed = 0x9E37_79B9_7F4A_7C15u64 ^ u64::from(std::process::id());
    let (mut passed, mut failed) = (0, 0);
    let only_hosts = only_boundary || only_programmatic;
    let kernels: Vec<Kernel> = KERNELS
        .iter()
        .copied()
        .filter(|k| !only_hosts && k.spec().step == steps && gemm.has(*k))
        .filter(|k| only.is_none_or(|text| k.entry().contains(text)))
        .collect();
    if let Some(text) = only
        && kernels.is_empty()
    {
        return fail(
            exit::USAGE,
            &format!(
                "--only={text}: no kernel of the module's (steps: its step kernels) has an entry containing it"
            ),
        );
    }
    if steps && kernels.is_empty() {
        return fail(
            exit::USAGE,
            "--steps: the module holds no step kernel (give gpu_gemm_steps.ptx)",
        );
    }
    let cases: Vec<Case> = if quick { QUICK } else { CASES }
        .iter()
        .chain(if steps { STEP_CASES } else { &[] })
        .copied()
        .collect();
    for &kernel in &kernels {
        // The part counts a cluster-K kernel ran with (bit s for s parts).
        let mut parts = 0u32;
        for &case in &cases {
            let (m, n, k, ..) = case;
            if kernel.is_cluster_k() {
                // 1 to 8 parts (a stream-K kernel's `splits` are its workers, up to the SMs).
                parts |= 1 << gemm.splits(kernel, Shape { m, n, k });
            }
            match run_case(&gemm, kernel, &stream, case, &mut seed) {
                Ok(true) => passed += 1,
                Ok(false) => failed += 1,
                Err(e) => return fail(exit::TEST_FAILED, &e),
            }
        }
        // Every part count the kernel takes (1 to 8; in pairs, 1 to 4) must have run: a sum
        // over a part count that no case reaches is not tested.
        let most = kernel.spec().max_parts();
        let all = (1..=most).fold(0, |bits, s| bits | 1 << s);
        if kernel.is_cluster_k() && !quick {
            if parts & all == all {
                println!(
                    "PASS {} ran with every part count, 1 to {most}",
                    kernel.entry()
                );
                passed += 1;
            } else {
                let missing: Vec<u32> = (1..=most).filter(|s| parts & 1 << s == 0).collect();
                println!("FAIL {} never ran with {missing:?} parts", kernel.entry());
                failed += 1;
            }
        }
    }
    let outcomes = if only_programmatic {
        programmatic::run(&ctx, &gemm)
    } else if steps {
        Vec::new()
    } else {
        let mut outcomes = boundary::run(&ctx, &gemm, ptx, !sanitize);
        outcomes.extend(graph::run(&ctx, &gemm));
        // Not under compute-sanitizer: its long first GEMMs (131072 deep) would take minutes.
        if !sanitize {
            outcomes.extend(programmatic::run(&ctx, &gemm));
        }
        outcomes
    };
    for (name, outcome) in outcomes {
        match outcome {
            Ok(()) => {
                println!("PASS {name}");
                passed += 1;
            }
            Err(e) => {
                println!("FAIL {name}: {e}");
                failed += 1;
            }
        }
    }
    if !quick && !only_hosts {
        for &kernel in &kernels {
            if let Err(e) = time_8192(&gemm, kernel, &stream) {
                return fail(exit::TEST_FAILED, &e);
            }
        }
    }
    println!("gemm: {passed} passed, {failed} failed");
    ExitCode::from(if failed == 0 {
        exit::PASSED
    } else {
        exit::TEST_FAILED
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpu_gemm_host::{H100_CLUSTER_FIT, H200_CLUSTER_FIT};

    /// The every-part-count check's cases reach every part count of every cluster-K kernel (1 to
    /// 8; in pairs, 1 to 4) on the H100's and the H200's cluster fits, as the host computes the
    /// parts: a count no case reaches would fail the device run (`never ran with`), and only
    /// there. (Raising `CLUSTER_K_MIN_BLOCKS` to 4 left counts 5 to 8 unreached by the cases of
    /// parts of 2 k-blocks, and `CLUSTER_K_SPLIT_FROM` the narrow kernels' 3 parts; this test
    /// found both before a device call.)
    #[test]
    fn the_cases_reach_every_part_count_of_every_cluster_k_kernel() {
        for fit in [H100_CLUSTER_FIT, H200_CLUSTER_FIT] {
            for kernel in Kernel::ALL.into_iter().filter(|k| k.is_cluster_k()) {
                let spec = kernel.spec();
                let reached: Vec<u32> = CASES
                    .iter()
                    .map(|&(m, n, k, ..)| spec.cluster_k_splits(Shape { m, n, k }, &fit))
                    .collect();
                for s in 1..=spec.max_parts() {
                    assert!(
                        reached.contains(&s),
                        "{}: no case runs it in {s} parts (fit {fit:?}; the cases' counts {reached:?})",
                        spec.name
                    );
                }
            }
        }
    }
}
