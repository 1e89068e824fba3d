//! The GEMM kernel crate (`crates/gpu-gemm`): its sm_90a builds (the production module and the
//! steps module), the PTX post-processing
//! that rustc cannot express, and the PTX checks.

use std::path::{Path, PathBuf};
use std::time::Instant;

use xshell::{Shell, cmd};

use crate::gpu::GpuTarget;
use crate::util::Result;

/// The GEMM crate.
pub const CRATE: &str = "crates/gpu-gemm";

/// NVIDIA sm_90a (wgmma and setmaxnreg exist only with the `a` features) with PTX ISA 8.0.
pub const NVPTX_SM90A: GpuTarget = GpuTarget {
    cpu: "sm_90a",
    triple: "nvptx64-nvidia-cuda",
    features: "+ptx80",
    extension: "ptx",
};

/// [`NVPTX_SM90A`] with PTX ISA 8.1: for the variant module whose instructions need it
/// ([`Module::CkPush`]: `st.async`, PTX ISA 8.1).
pub const NVPTX_SM90A_PTX81: GpuTarget = GpuTarget {
    features: "+ptx81",
    ..NVPTX_SM90A
};

/// The production module's entry points and their threads per block, from the plan's kernel
/// table (the table the kernel crate builds its entries from).
pub const ENTRIES: [(&str, u32); gpu_gemm_plan::KERNELS.len()] = entries(gpu_gemm_plan::KERNELS);

/// The steps module's entry points: the production ones, then the step rows' (the last one is
/// the single-warpgroup kernel, of 128 threads).
pub const STEP_ENTRIES: [(&str, u32); gpu_gemm_plan::KERNELS.len() + gpu_gemm_plan::STEPS.len()] = {
    let mut all = [("", 0); gpu_gemm_plan::KERNELS.len() + gpu_gemm_plan::STEPS.len()];
    let (production, steps) = (ENTRIES, entries(gpu_gemm_plan::STEPS));
    let mut i = 0;
    while i < all.len() {
        all[i] = if i < production.len() {
            production[i]
        } else {
            steps[i - production.len()]
        };
        i += 1;
    }
    all
};

/// `(entry, threads)` of each row of `rows`.
const fn entries<const N: usize>(rows: [gpu_gemm_plan::KernelSpec; N]) -> [(&'static str, u32); N] {
    let mut entries = [("", 0); N];
    let mut i = 0;
    while i < N {
        entries[i] = (rows[i].entry, rows[i].threads);
        i += 1;
    }
    entries
}

/// Which module a build makes: the production kernels (embedded in gpu-gemm-host), or with the
/// kernel crate's `steps` feature the step kernels too (for the benchmark's step table).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Module {
    Production,
    Steps,
    /// The production kernels without their `griddepcontrol.wait` (the kernel crate's
    /// `unwaited` feature): a broken module on which gemm-test's programmatic chains must fail,
    /// built only into the GEMM bundle ([`build_module`]; not by `cargo xtask build`).
    Unwaited,
    /// The production kernels with the kernel crate's `shift_edge` feature (a last tile row's A
    /// box shifted inside M in every kernel, not only the 128 x 64 and 128 x 128 ones): a
    /// measurement module of the benchmark's bundle
    /// (`cargo xtask bench-gemm --bundle`).
    ShiftEdge,
    /// The production kernels with the kernel crate's `l2_hints` feature (the transposing
    /// kernels' weights loaded evict-first, their activations evict-last): a measurement module
    /// of the benchmark's bundle.
    L2Hints,
    /// The production kernels with the kernel crate's `ck_push` feature (the cluster-K kernels up
    /// to 64 wide add up their parts by `st.async` pushes, without the cluster barriers'
    /// `.release` at the end): a measurement module of the benchmark's bundle.
    CkPush,
    /// The production kernels with the kernel crate's `store_read` feature (the TMA-store
    /// kernels wait at the end for their last stores' reads of shared memory only): a
    /// measurement module of the benchmark's bundle.
    StoreRead,
}

impl Module {
    /// The module's entries.
    pub fn entries(self) -> &'static [(&'static str, u32)] {
        match self {
            Module::Production
            | Module::Unwaited
            | Module::ShiftEdge
            | Module::L2Hints
            | Module::CkPush
            | Module::StoreRead => &ENTRIES,
            Module::Steps => &STEP_ENTRIES,
        }
    }

    /// The kernel crate's feature the module is built with (none for the production module):
    /// its build's label, target folder and file name follow from it.
    pub fn feature(self) -> Option<&'static str> {
        match self {
            Module::Production => None,
            Module::Steps => Some("steps"),
            Module::Unwaited => Some("unwaited"),
            Module::ShiftEdge => Some("shift_edge"),
            Module::L2Hints => Some("l2_hints"),
            Module::CkPush => Some("ck_push"),
            Module::StoreRead => Some("store_read"),
        }
    }

    /// The target the module is built for: PTX ISA 8.0, or 8.1 for [`Module::CkPush`]
    /// (`st.async`).
    pub fn target(self) -> &'static GpuTarget {
        match self {
            Module::CkPush => &NVPTX_SM90A_PTX81,
            _ => &NVPTX_SM90A,
        }
    }

    /// The final module's file name under `target/gpu/sm_90a/`: `gpu_gemm.ptx`, or
    /// `gpu_gemm_FEATURE.ptx`.
    pub fn file(self) -> String {
        match self.feature() {
            None => "gpu_gemm.ptx".to_string(),
            Some(feature) => format!("gpu_gemm_{feature}.ptx"),
        }
    }
}

/// The cluster-scope forms of mbarrier arrivals and waits, which the GEMM must not contain.
const CLUSTER_SCOPED_MBARRIER: [&str; 3] = [
    "mbarrier.arrive.release.cluster",
    "mbarrier.try_wait.parity.acquire.cluster",
    "mbarrier.try_wait.acquire.cluster",
];
/// `wgmma.mma_async` instructions per kernel, from the table (the same in every row: the checks
/// below count them per entry and in all).
pub const WGMMAS: usize = {
    let wgmmas = gpu_gemm_plan::KERNELS[0].wgmmas;
    let mut i = 0;
    while i < gpu_gemm_plan::KERNELS.len() {
        assert!(
            gpu_gemm_plan::KERNELS[i].wgmmas == wgmmas,
            "the GEMM PTX check counts one wgmma count for every kernel"
        );
        i += 1;
    }
    wgmmas as usize
};

/// gemm-test's programmatic chains (`tests/gemm-test/src/programmatic.rs`) that must fail on the
/// unwaited module, each by name: a chain that passes there cannot show a missing wait. These
/// two read a D the kernel before has not written yet (NaN-poisoned): every element wrong in run
/// 96. The other two chains (`programmatic_gemm_writes_over_what_the_gemm_before_reads`,
/// `programmatic_gemm_accumulates_in_place_back_to_back`) need a race to show and are not
/// required: in run 96 (an H100) the in-place chain passed on the unwaited module.
pub const PROGRAMMATIC_CHAINS: [&str; 2] = [
    "programmatic_gemm_reads_the_output_of_the_gemm_before",
    "programmatic_chain_captured_replays_exactly",
];

/// The suite bundle's GEMM section: the exact-check device test of the GEMM (`gemm-test`, its
/// boundary tests included), then the correctness pass against cuBLAS (`gemm-bench --check`,
/// every kernel of the module, random and integer data, beta 0 and not 0), in a subshell that
/// finds cuBLAS as `run_gemm.sh` does (`@CUBLAS_PATH@`, filled in by [`run_sh_section`]), then
/// `gemm-test --sanitize` under compute-sanitizer's memcheck, synccheck and racecheck. Each step
/// is bounded and fails the run.
const RUN_SH_SECTION: &str = r#"echo "== gpu-gemm: the bf16 GEMM, checked exactly against a host reference on small integers"
timeout -k 10 300 "$here/gemm-test" "$here/gpu_gemm.ptx" 2>&1 | tee "$out/gemm.log"
[ "${PIPESTATUS[0]}" -eq 0 ] || { echo "FAIL: the GEMM test did not pass"; status=1; }

echo "== gpu-gemm: the programmatic chains on the kernels without their griddepcontrol.wait (gpu_gemm_unwaited.ptx) must fail"
timeout -k 10 120 "$here/gemm-test" "$here/gpu_gemm_unwaited.ptx" --programmatic >"$out/gemm-unwaited.log" 2>&1
rc=$?
grep -E "^(PASS|FAIL)" "$out/gemm-unwaited.log"
if [ $rc -eq @TEST_FAILED@ ]; then
  echo "PASS: the chains failed without the wait, as they must"
else
  echo "FAIL: gemm-test --programmatic on the unwaited module exited $rc, not @TEST_FAILED@ (a failed test): the chains cannot show a missing wait"; status=1
fi
@EACH_CHAIN@

echo "== gpu-gemm: the step kernels (stream-K and the other measurements) checked exactly"
timeout -k 10 300 "$here/gemm-test" "$here/gpu_gemm_steps.ptx" --steps --quick 2>&1 | tee "$out/gemm-steps.log"
[ "${PIPESTATUS[0]}" -eq 0 ] || { echo "FAIL: the step kernels' test did not pass"; status=1; }

echo "== gpu-gemm: every kernel (the steps module's) against cublasGemmEx (random data, K-scaled bound) and a host reference (integers), beta 0 and not 0"
(
@CUBLAS_PATH@
timeout -k 10 300 "$here/gemm-bench" --check --ours-module "$here/gpu_gemm_steps.ptx"
) 2>&1 | tee "$out/gemm-check.log"
[ "${PIPESTATUS[0]}" -eq 0 ] || { echo "FAIL: the GEMM check against cuBLAS did not pass"; status=1; }

echo "== gpu-gemm under compute-sanitizer: memcheck, synccheck, racecheck (every kernel, three small shapes)"
if command -v compute-sanitizer >/dev/null; then
  for tool in memcheck synccheck racecheck; do
    timeout -k 10 600 compute-sanitizer --tool "$tool" --error-exitcode 9 "$here/gemm-test" "$here/gpu_gemm.ptx" --sanitize >"$out/gemm-$tool.log" 2>&1
    rc=$?
    grep -E "passed|ERROR SUMMARY|RACECHECK SUMMARY" "$out/gemm-$tool.log" | tail -n 3
    [ $rc -eq 0 ] || { echo "FAIL: the GEMM under $tool (exit $rc)"; status=1; }
  done
else
  echo "SKIPPED: compute-sanitizer not found"
fi"#;

/// The suite bundle's GEMM section ([`RUN_SH_SECTION`] with the cuBLAS folders and the failed
/// test's exit status filled in).
pub fn run_sh_section() -> String {
    RUN_SH_SECTION
        .replace("@CUBLAS_PATH@", &crate::cublas::cublas_path_sh())
        .replace(
            "@TEST_FAILED@",
            &pipeline_suite::exit::TEST_FAILED.to_string(),
        )
        .replace(
            "@EACH_CHAIN@",
            &crate::device::each_chain_sh("gemm-unwaited.log", &PROGRAMMATIC_CHAINS),
        )
}

/// The GEMM's files in the suite bundle: (built file, name in the bundle).
pub fn bundle_files() -> [(PathBuf, &'static str); 5] {
    [
        (artifact(), "gpu_gemm.ptx"),
        (steps_artifact(), "gpu_gemm_steps.ptx"),
        (unwaited_artifact(), "gpu_gemm_unwaited.ptx"),
        (
            crate::util::root().join("target/release/gemm-test"),
            "gemm-test",
        ),
        (bench_path(), "gemm-bench"),
    ]
}

/// Builds `gemm-bench` (release, with the commit baked in) and returns its path; `test-nvidia`
/// builds it too, for its correctness pass (`gemm-bench --check`).
pub fn build_bench(sh: &Shell) -> Result<std::path::PathBuf> {
    let commit = crate::device::commit(sh);
    cmd!(sh, "cargo build --release -p gemm-bench")
        .env("GPU_PIPELINE_COMMIT", &commit)
        .run()
        .map_err(|_| "building gemm-bench failed (above)".to_string())?;
    Ok(bench_path())
}

/// Where [`build_bench`] leaves the binary.
pub fn bench_path() -> std::path::PathBuf {
    crate::util::root().join("target/release/gemm-bench")
}

/// Builds the GEMM kernels for sm_90a, adds the launch bound, checks the PTX, and returns the
/// path of the final module (`target/gpu/sm_90a/gpu_gemm.ptx`); then the steps module beside it
/// ([`build_module`]).
pub fn build(sh: &Shell) -> Result<PathBuf> {
    let out = build_module(sh, Module::Production)?;
    build_module(sh, Module::Steps)?;
    Ok(out)
}

/// Builds one module: the kernel crate for sm_90a (with `--features steps` for the steps module,
/// in a target folder of its own so that the two builds do not undo each other's), the launch
/// bounds, the checks; returns the final module's path.
pub fn build_module(sh: &Shell, module: Module) -> Result<PathBuf> {
    let start = Instant::now();
    let target = module.target();
    // The production module in the target folder; each variant with its feature, in its own.
    let (label, features, target_dir) = match module.feature() {
        None => ("gemm (sm_90a)".to_string(), vec![], target.target_dir()),
        Some(feature) => (
            format!("gemm {feature} (sm_90a)"),
            vec!["--features", feature],
            target.target_dir().with_extension(feature),
        ),
    };
    crate::gpu::starting(&label, target);
    let output = target.cargo_build_output_in(sh, CRATE, &features, &target_dir)?;
    if !output.status.success() {
        eprintln!("{}", String::from_utf8_lossy(&output.stderr));
        return Err(format!("building {CRATE} ({label}) failed"));
    }
    let built = target_dir
        .join(target.triple)
        .join("release")
        .join("gpu_gemm.ptx");
    let ptx =
        std::fs::read_to_string(&built).map_err(|e| format!("reading {}: {e}", built.display()))?;
    let mut ptx = ptx;
    for &(entry, threads) in module.entries() {
        ptx = with_maxntid(&ptx, entry, threads)?;
    }
    let reports = check_module_ptx(&ptx, module)?;
    let out = target.target_dir().join(module.file());
    std::fs::write(&out, &ptx).map_err(|e| format!("writing {}: {e}", out.display()))?;
    println!(
        "  {:<8} {:<22} {:>6.1} s  {} (.maxntid per kernel; {WGMMAS} wgmma per kernel, no local memory)",
        module.feature().unwrap_or("gemm"),
        target.triple,
        start.elapsed().as_secs_f64(),
        out.display()
    );
    for r in reports {
        println!(
            "           {}: {} .aligned (wgmma: {}) on warpgroup-uniform paths; {} conditional branches, {} lane-divergent, {} only warp-uniform",
            r.entry, r.aligned, r.wgmmas, r.branches, r.lane_divergent, r.warp_divergent
        );
    }
    Ok(out)
}

/// Runs the GEMM's device test, then its correctness pass against cuBLAS (`gemm-bench --check`,
/// with the cuBLAS folders the bundle adds), on this machine (`cargo xtask test-nvidia`), each
/// with the harness's verdict: in `ci`, only a missing driver may be SKIPPED. The pass runs even
/// when the test failed; the task then fails with both messages.
pub fn run(sh: &Shell, ci: bool) -> Result {
    println!("== gpu-gemm: the bf16 GEMM, checked exactly against a host reference");
    let test = crate::util::root().join("target/release/gemm-test");
    let module = artifact();
    let tested = crate::device::run_device_program(sh, "gpu-gemm", &test, &[&module], ci);
    println!(
        "== gpu-gemm: the programmatic chains on the kernels without their griddepcontrol.wait must fail"
    );
    let unwaited = unwaited_artifact();
    let negative = crate::device::run_device_program_to_fail(
        sh,
        "gpu-gemm programmatic chains on the unwaited module",
        &test,
        &[&unwaited, Path::new("--programmatic")],
        &PROGRAMMATIC_CHAINS,
        ci,
    );
    let tested = match (tested, negative) {
        (Ok(()), negative) => negative,
        (Err(e), Ok(())) => Err(e),
        (Err(a), Err(b)) => Err(format!("{a}\n{b}")),
    };
    println!(
        "== gpu-gemm: every kernel against cublasGemmEx (random data, K-scaled bound) and a host reference (integers), beta 0 and not 0"
    );
    let checked = {
        let _cublas = crate::cublas::push_cublas_path(sh);
        let steps = steps_artifact();
        let args: [&Path; 3] = [Path::new("--check"), Path::new("--ours-module"), &steps];
        crate::device::run_device_program(
            sh,
            "gpu-gemm check against cuBLAS",
            &bench_path(),
            &args,
            ci,
        )
    };
    match (tested, checked) {
        (Ok(()), Ok(())) => Ok(()),
        (Err(e), Ok(())) | (Ok(()), Err(e)) => Err(e),
        (Err(a), Err(b)) => Err(format!("{a}\n{b}")),
    }
}

/// The final production module of [`build`].
pub fn artifact() -> PathBuf {
    NVPTX_SM90A.target_dir().join(Module::Production.file())
}

/// The final steps module of [`build`]: the production kernels and the step kernels, for
/// `gemm-bench` (built with gpu-gemm-host's `steps` feature).
pub fn steps_artifact() -> PathBuf {
    NVPTX_SM90A.target_dir().join(Module::Steps.file())
}

/// Builds the broken module [`Module::Unwaited`] (for the device test's negative control).
pub fn build_unwaited(sh: &Shell) -> Result<PathBuf> {
    build_module(sh, Module::Unwaited)
}

/// The broken module of [`build_unwaited`].
pub fn unwaited_artifact() -> PathBuf {
    NVPTX_SM90A.target_dir().join(Module::Unwaited.file())
}

/// Adds `.maxntid threads, 1, 1` to `entry`: rustc has no launch-bounds attribute, and without
/// one ptxas may give a thread more registers than 384 threads can have (and ignores
/// `setmaxnreg`: C7508). The directive goes between the parameter list and the body (PTX ISA,
/// "Performance-Tuning Directives: .maxntid").
pub fn with_maxntid(ptx: &str, entry: &str, threads: u32) -> Result<String> {
    let head = format!(".entry {entry}(");
    let at = ptx
        .find(&head)
        .ok_or_else(|| format!("the GEMM PTX has no entry `{entry}`"))?;
    let close = ptx[at..]
        .find("\n)")
        .map(|i| at + i + 2)
        .ok_or_else(|| format!("the parameter list of `{entry}` does not end"))?;
    if ptx[close..].trim_start().starts_with(".maxntid") {
        return Ok(ptx.to_string());
    }
    Ok(format!(
        "{}\n.maxntid {threads}, 1, 1{}",
        &ptx[..close],
        &ptx[close..]
    ))
}

/// The text of `entry`, from its `.entry` line to the next entry's (or the end).
pub(crate) fn entry_text<'a>(ptx: &'a str, entry: &str) -> Option<&'a str> {
    let at = ptx.find(&format!(".entry {entry}("))?;
    let rest = &ptx[at + 1..];
    Some(&ptx[at..at + 1 + rest.find(".entry ").unwrap_or(rest.len())])
}

/// The first instruction in `entry_text` (one entry's PTX) before its `griddepcontrol.wait`, in
/// the text's order, that may touch global memory: a load or store other than of the parameter,
/// shared or local space, whatever qualifiers precede the space (a generic address may be global), an atomic or reduction, a bulk or
/// asynchronous copy (TMA included), a tensor-map replacement, a texture or surface access.
/// `None` when there is none, or no wait. Tensor-map prefetches and mbarrier operations (shared
/// memory) are allowed. A check of the entry's text, not of every path: a branch from before the
/// wait to after it is not followed, nor a call into a `.func` (the kernels' setup has none but to
/// their panic and trap blocks).
pub(crate) fn memory_before_wait(entry_text: &str) -> Option<&str> {
    let wait = entry_text.find("griddepcontrol.wait")?;
    entry_text[..wait].lines().map(str::trim).find(|line| {
        let op = line
            .trim_start_matches(['@', '!'])
            .split_whitespace()
            .find(|word| !word.starts_with('%') && !word.starts_with('@'))
            .unwrap_or("");
        // The state space is any of the dot-separated parts (`st.volatile.shared.b64`,
        // `ld.relaxed.cta.shared::cta.u32`); none is the generic space, which may be global.
        let in_cta_space = op.split('.').any(|part| {
            part == "param" || part == "local" || part == "shared" || part.starts_with("shared::")
        });
        let load_store = (op.starts_with("ld.") || op.starts_with("st.")) && !in_cta_space;
        load_store
            || [
                "ldu.",
                "atom.",
                "red.",
                "cp.",
                "tensormap.",
                "multimem.",
                "tex.",
                "tld4.",
                "suld.",
                "sust.",
                "sured.",
                "discard.",
            ]
            .iter()
            .any(|prefix| op.starts_with(prefix))
    })
}

/// The launch-bound directive right after `entry`'s parameter list, if any.
fn maxntid_of(ptx: &str, entry: &str) -> Option<String> {
    let at = ptx.find(&format!(".entry {entry}("))?;
    let close = at + ptx[at..].find("\n)")? + 2;
    let line = ptx[close..].trim_start().lines().next()?;
    // The directive goes in before the parameter list's trailing comment, if any.
    let directive = line.split("//").next()?.trim();
    directive
        .starts_with(".maxntid")
        .then(|| directive.to_string())
}

/// The checks the issue asks of the GEMM's PTX, on a machine without ptxas: no local memory (an
/// accumulator indexed with a variable spills the whole array, and ptxas then serialises the
/// wgmmas), the expected number of `wgmma.mma_async` in each entry, the launch bound, no
/// cluster-scope mbarrier arrival or wait, and that no
/// `wgmma` (nor other `.aligned` instruction) sits on a path only part of its warpgroup (warp)
/// takes ([`ptx_uniform`]). Returns what the last check found in each entry. The production
/// module's entries ([`ENTRIES`]); [`check_module_ptx`] for either module.
#[cfg(test)]
pub fn check_ptx(ptx: &str) -> Result<Vec<ptx_uniform::EntryReport>> {
    check_module_ptx(ptx, Module::Production)
}

/// [`check_ptx`] of `module`'s text: its entries, each with its bound and wgmma count.
pub fn check_module_ptx(ptx: &str, module: Module) -> Result<Vec<ptx_uniform::EntryReport>> {
    let entries = module.entries();
    crate::gpu::ptx_isa_covers(ptx)?;
    if ptx.contains("__local_depot") || ptx.contains(".local") {
        return Err(
            "the GEMM PTX uses local memory (an accumulator array indexed with a variable?)".into(),
        );
    }
    let wgmmas = ptx.matches("wgmma.mma_async").count();
    let want = WGMMAS * entries.len();
    if wgmmas != want {
        return Err(format!(
            "the GEMM PTX has {wgmmas} wgmma.mma_async, expected {want} ({WGMMAS} per kernel)"
        ));
    }
    for &(entry, threads) in entries {
        let want = format!(".maxntid {threads}, 1, 1");
        if maxntid_of(ptx, entry).as_deref() != Some(want.as_str()) {
            return Err(format!(
                "the GEMM entry `{entry}` lacks its launch bound `{want}`"
            ));
        }
    }
    // Every entry waits for its prerequisite grid before it touches global memory (ABI
    // version 3 and later: the host may launch it as a programmatic dependent); the broken module
    // (its ABI version says so) has no
    // wait at all.
    for &(entry, _) in entries {
        let text =
            entry_text(ptx, entry).ok_or_else(|| format!("the GEMM PTX has no entry `{entry}`"))?;
        if let Some(line) = memory_before_wait(text) {
            return Err(format!(
                "the GEMM entry `{entry}` may touch global memory before its griddepcontrol.wait (`{line}`): a programmatic dependent launch of it could race the kernel before it"
            ));
        }
        let waits = text.matches("griddepcontrol.wait").count();
        let want = usize::from(module != Module::Unwaited);
        if waits != want {
            return Err(format!(
                "the GEMM entry `{entry}` has {waits} griddepcontrol.wait, expected {want}: {}",
                if want == 1 {
                    "a programmatic dependent launch of it could touch memory before the kernel before it is done (gpu-gemm's kernel.rs waits after its barrier setup)"
                } else {
                    "the unwaited module must not wait"
                }
            ));
        }
    }
    // Cluster-scope mbarrier ordering in a GEMM kernel is a GPU-wide fence per arrival or wait
    // on sm_90 (`MEMBAR.ALL.GPU`, `CCTL.IVALL`): the CTA pairs ran at 0.71x with it on the H200
    // (tests/results/2026-12-01-issue13.md). Their releases free slots and publish nothing, so
    // they are CTA-scoped.
    for form in CLUSTER_SCOPED_MBARRIER {
        if ptx.contains(form) {
            return Err(format!(
                "the GEMM PTX has `{form}`: a GPU-wide fence per call on sm_90; release a multicast slot with `MbarrierRef::arrive_remote_cta` and wait at CTA scope"
            ));
        }
    }
    let reports = ptx_uniform::check(ptx)
        .map_err(|e| format!("the GEMM PTX fails its convergence check:\n{e}"))?;
    for &(entry, _) in entries {
        let report = reports
            .iter()
            .find(|r| r.entry == entry)
            .ok_or_else(|| format!("the GEMM PTX has no entry `{entry}`"))?;
        if report.wgmmas != WGMMAS {
            return Err(format!(
                "the GEMM entry `{entry}` has {} wgmma.mma_async, expected {WGMMAS}",
                report.wgmmas
            ));
        }
    }
    // An entry this list does not know would escape the checks above.
    if let Some(other) = reports
        .iter()
        .find(|r| !entries.iter().any(|&(e, _)| e == r.entry))
    {
        return Err(format!(
            "the GEMM PTX has an entry `{}` that xtask/src/gemm_kernel.rs does not list",
            other.entry
        ));
    }
    Ok(reports)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    /// The negative control judges gemm-test's real output: each required chain must be a
    /// `FAIL NAME` line; one that passed is named.
    #[test]
    fn the_negative_control_finds_each_chain_in_the_tests_output() {
        use crate::device::{Verdict, each_failed};
        let out = "PASS programmatic_refused_where_the_entries_do_not_wait\nFAIL programmatic_gemm_reads_the_output_of_the_gemm_before: D[0] is NaN\nFAIL programmatic_gemm_writes_over_what_the_gemm_before_reads: x\nFAIL programmatic_gemm_accumulates_in_place_back_to_back: x\nFAIL programmatic_chain_captured_replays_exactly: x\n";
        assert_eq!(
            each_failed("control", out, &PROGRAMMATIC_CHAINS),
            Verdict::Passed
        );
        let one_passed = out.replace(
            "FAIL programmatic_chain_captured_replays_exactly: x",
            "PASS programmatic_chain_captured_replays_exactly",
        );
        match each_failed("control", &one_passed, &PROGRAMMATIC_CHAINS) {
            Verdict::Failed(e) => assert!(
                e.contains("programmatic_chain_captured_replays_exactly did not fail"),
                "{e}"
            ),
            other => panic!("{other:?}"),
        }
    }

    /// The wait check's view of an entry: setup (parameters, shared memory, barriers, a
    /// tensor-map prefetch) may precede the wait; a global load, a TMA copy or an atomic may not.
    #[test]
    fn memory_before_the_wait_is_found() {
        let entry = |before: &str| {
            format!(
                ".entry k(\n)\n{{\n\tld.param.b64 \t%rd1, [k_param_0];\n\tprefetch.tensormap [%rd1];\n\tmbarrier.init.shared::cta.b64 [%r1], 1;\n\tbar.sync \t0;\n{before}\tgriddepcontrol.wait;\n\tld.global.b32 \t%r2, [%rd1];\n}}\n"
            )
        };
        assert_eq!(memory_before_wait(&entry("")), None);
        // Shared and local memory, whatever qualifiers come before the state space (a checked
        // build's diagnostics store their budget in a shared static with `st.volatile`).
        for fine in [
            "st.shared.b32 \t[%r1], %r3;",
            "st.volatile.shared.b64 \t[anon_$_0+8], 200000;",
            "ld.relaxed.cta.shared::cta.u32 \t%r2, [%r1];",
            "ld.shared::cluster.u32 \t%r2, [%r1];",
            "st.local.v2.b32 \t[%rd6], {2, 20};",
        ] {
            assert_eq!(
                memory_before_wait(&entry(&format!("\t{fine}\n"))),
                None,
                "{fine}"
            );
        }
        for bad in [
            "st.volatile.global.b64 \t[%rd1], 1;",
            "ld.relaxed.gpu.u32 \t%r2, [%rd1];",
            "ld.global.b32 \t%r2, [%rd1];",
            "ld.b32 \t%r2, [%rd1];",
            "@%p1 st.global.b32 \t[%rd1], %r2;",
            "atom.global.add.u32 \t%r2, [%rd1], 1;",
            "ldu.global.u32 \t%r2, [%rd1];",
            "discard.global.L2 \t[%rd1], 128;",
            "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r2, %r3}], [%r4];",
        ] {
            let text = entry(&format!("\t{bad}\n"));
            assert_eq!(memory_before_wait(&text), Some(bad), "{bad}");
        }
        // No wait: nothing to check against (the wait count check refuses it).
        assert_eq!(
            memory_before_wait(".entry k(\n)\n{\n\tld.global.b32 %r1, [%rd1];\n}\n"),
            None
        );
    }

    #[test]
    fn maxntid_goes_after_the_parameters_once() {
        let ptx = ".visible .entry gemm_bf16_ws(\n\t.param .u64 p0\n)\n{\n\tret;\n}\n";
        let once = with_maxntid(ptx, "gemm_bf16_ws", 384).unwrap();
        assert_eq!(
            once,
            ".visible .entry gemm_bf16_ws(\n\t.param .u64 p0\n)\n.maxntid 384, 1, 1\n{\n\tret;\n}\n"
        );
        assert_eq!(with_maxntid(&once, "gemm_bf16_ws", 384).unwrap(), once);
        assert!(with_maxntid(ptx, "other", 384).is_err());
        // rustc's PTX ends the parameter list with a comment, which stays after the directive.
        let commented = ptx.replace("\n)\n", "\n)     // @gemm_bf16_ws\n");
        let bound = with_maxntid(&commented, "gemm_bf16_ws", 384).unwrap();
        assert_eq!(
            maxntid_of(&bound, "gemm_bf16_ws").as_deref(),
            Some(".maxntid 384, 1, 1")
        );
        assert_eq!(maxntid_of(&commented, "gemm_bf16_ws"), None);
    }

    /// An entry with `wgmmas` wgmma.mma_async for the consumer warpgroups (`%tid.x >= 128`, or
    /// with `divergent` for thread 0 only), with or without its launch bound.
    fn entry(name: &str, wgmmas: usize, bound: Option<u32>, divergent: bool) -> String {
        let bound = bound.map_or(String::new(), |t| format!(".maxntid {t}, 1, 1\n"));
        let test = if divergent {
            "setp.ne.s32 \t%p1, %r1, 0"
        } else {
            "setp.lt.u32 \t%p1, %r1, 128"
        };
        let wgmma = "\twgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%f0, %f1, %f2, %f3}, %rd1, %rd2, 1, 1, 1, 0, 0;\n";
        format!(
            ".visible .entry {name}(\n\t.param .u32 {name}_param_0\n)\n{bound}{{\n\t.reg .pred \t%p<2>;\n\t.reg .b32 \t%r<2>;\n\t.reg .b64 \t%rd<3>;\n\t.reg .f32 \t%f<4>;\n\tmov.u32 \t%r1, %tid.x;\n\tgriddepcontrol.wait;\n\t{test};\n\t@%p1 bra \t$L__BB0_2;\n{}$L__BB0_2:\n\tret;\n}}\n",
            wgmma.repeat(wgmmas)
        )
    }

    #[test]
    fn ptx_checks_catch_local_memory_missing_wgmmas_and_divergent_ones() {
        const N: usize = STEP_ENTRIES.len();
        let check_steps = |ptx: &str| check_module_ptx(ptx, Module::Steps);
        // Every entry with its wgmma count and bound; the second one divergent if asked.
        let module = |wgmmas: [usize; N], bounds: [bool; N], divergent: bool| {
            let mut ptx = String::from(".version 8.0\n.target sm_90a\n.address_size 64\n");
            for (i, (name, threads)) in STEP_ENTRIES.iter().enumerate() {
                let bound = bounds[i].then_some(*threads);
                ptx.push_str(&entry(name, wgmmas[i], bound, divergent && i == 1));
            }
            ptx
        };
        let with = |i: usize, x: usize| {
            let mut w = [WGMMAS; N];
            w[i] = x;
            w
        };
        let good = module([WGMMAS; N], [true; N], false);
        let reports = check_steps(&good).unwrap();
        assert_eq!(reports.len(), STEP_ENTRIES.len());
        // The production module's check refuses the step kernels.
        assert!(check_ptx(&good).is_err());
        // An entry the list does not know, and a listed entry missing, are errors.
        let unknown = format!("{good}{}", entry("gemm_bf16_other", 0, None, false));
        assert!(
            check_steps(&unknown)
                .unwrap_err()
                .contains("gemm_bf16_other")
        );
        let without = good.replace(STEP_ENTRIES[0].0, "gemm_bf16_renamed");
        assert!(check_steps(&without).is_err());
        // The pair kernel as it was first written: a cluster-scope remote release in the main
        // loop.
        let fenced = good.replacen(
            "\tret;",
            "\tmbarrier.arrive.release.cluster.shared::cluster.b64 _, [%r1];\n\tret;",
            1,
        );
        assert!(
            check_steps(&fenced)
                .unwrap_err()
                .contains("arrive_remote_cta")
        );
        let cta = good.replacen(
            "\tret;",
            "\tmbarrier.arrive.release.cta.shared::cluster.b64 _, [%r1];\n\tret;",
            1,
        );
        assert!(check_steps(&cta).is_ok());
        assert!(check_steps(&format!("{good}.local .align 4 .b8 __local_depot0[512];")).is_err());
        // An entry without its wait: a programmatic dependent launch of it could race.
        let unwaited = good.replacen("\tgriddepcontrol.wait;\n", "", 1);
        assert_ne!(unwaited, good);
        let e = check_steps(&unwaited).unwrap_err();
        assert!(
            e.contains(STEP_ENTRIES[0].0) && e.contains("griddepcontrol.wait"),
            "{e}"
        );
        // The broken module's check asks for no wait in any production entry.
        let production = |wait: bool| {
            let mut ptx = String::from(".version 8.0\n.target sm_90a\n.address_size 64\n");
            for (name, threads) in ENTRIES {
                ptx.push_str(&entry(name, WGMMAS, Some(threads), false));
            }
            if wait {
                ptx
            } else {
                ptx.replace("\tgriddepcontrol.wait;\n", "")
            }
        };
        check_ptx(&production(true)).unwrap();
        assert!(check_ptx(&production(false)).is_err());
        check_module_ptx(&production(false), Module::Unwaited).unwrap();
        assert!(check_module_ptx(&production(true), Module::Unwaited).is_err());
        assert!(check_steps(&module(with(0, 1), [true; N], false)).is_err());
        let mut moved = with(0, WGMMAS - 1);
        moved[1] = WGMMAS + 1;
        assert!(check_steps(&module(moved, [true; N], false)).is_err());
        assert!(check_steps(&module([WGMMAS; N], [false; N], false)).is_err());
        let mut one_unbound = [true; N];
        one_unbound[1] = false;
        assert!(check_steps(&module([WGMMAS; N], one_unbound, false)).is_err());
        // The single-warpgroup entry with the others' bound of 384 threads.
        let (single, threads) = *STEP_ENTRIES
            .iter()
            .find(|(_, threads)| *threads == 128)
            .expect("the single-warpgroup entry is a step");
        assert_eq!(threads, 128);
        let wrong_bound = good.replacen(
            &format!(".entry {single}(\n\t.param .u32 {single}_param_0\n)\n.maxntid 128"),
            &format!(".entry {single}(\n\t.param .u32 {single}_param_0\n)\n.maxntid 384"),
            1,
        );
        assert_ne!(wrong_bound, good);
        assert!(check_steps(&wrong_bound).unwrap_err().contains(single));
        let e = check_steps(&module([WGMMAS; N], [true; N], true)).unwrap_err();
        assert!(
            e.contains(STEP_ENTRIES[1].0) && e.contains("the whole warpgroup"),
            "{e}"
        );
    }

    #[test]
    fn the_run_sh_section_runs_every_bundled_file_bounded() {
        let section = run_sh_section();
        assert!(!section.contains('@'), "a placeholder left unfilled");
        for (_, name) in bundle_files() {
            assert!(section.contains(&format!("$here/{name}")), "{name}");
        }
        // Five steps (the sanitizers in one loop), each bounded, each logged, each failing the
        // run; the negative control's two more checks (each chain by name, the refusal).
        assert_eq!(section.matches("timeout -k 10 ").count(), 5);
        assert_eq!(section.matches("status=1").count(), 7);
        for chain in PROGRAMMATIC_CHAINS {
            assert!(section.contains(chain), "{chain}");
        }
        assert!(section.contains(r#""$here/gpu_gemm_steps.ptx" --steps --quick"#));
        // The negative control passes only by a failed test.
        assert!(section.contains(&format!(
            "if [ $rc -eq {} ]; then",
            pipeline_suite::exit::TEST_FAILED
        )));
        assert!(
            section.contains(r#""$here/gemm-test" "$here/gpu_gemm_unwaited.ptx" --programmatic"#)
        );
        assert_eq!(section.matches("[ \"${PIPESTATUS[0]}\" -eq 0 ]").count(), 3);
        assert!(section.contains(r#"tee "$out/gemm.log""#));
        assert!(section.contains(r#"tee "$out/gemm-check.log""#));
        for tool in ["memcheck", "synccheck", "racecheck"] {
            assert!(section.contains(tool), "{tool}");
        }
        assert!(
            section.contains(
                r#"--error-exitcode 9 "$here/gemm-test" "$here/gpu_gemm.ptx" --sanitize"#
            )
        );
    }

    #[test]
    fn the_check_runs_against_cublas_with_the_module_in_a_subshell() {
        let section = run_sh_section();
        let check = section
            .find(r#""$here/gemm-bench" --check --ours-module "$here/gpu_gemm_steps.ptx""#)
            .expect("the correctness pass, of every kernel: the steps module's");
        assert!(
            section.find(r#""$here/gemm-test""#).unwrap() < check,
            "after gemm-test"
        );
        // cuBLAS found as run_gemm.sh finds it, without changing LD_LIBRARY_PATH for the rest of
        // run.sh: the export is inside the parentheses.
        let path = section.find(&crate::cublas::cublas_path_sh()).unwrap();
        let (open, close) = (
            section.find("(\n").unwrap(),
            section.find("\n) 2>&1").unwrap(),
        );
        assert!(open < path && path < check && check < close);
    }

    #[test]
    fn the_module_path_is_under_the_sm90a_target() {
        assert!(artifact().ends_with(Path::new("target/gpu/sm_90a/gpu_gemm.ptx")));
    }

    /// The built GEMM passes the convergence check, where it exists (`cargo xtask build`; `build` runs this check
    /// on every build, this test shows the numbers).
    #[test]
    fn the_built_gemm_passes() {
        let Ok(ptx) = std::fs::read_to_string(super::artifact()) else {
            return;
        };
        let reports = ptx_uniform::check(&ptx).unwrap();
        for r in &reports {
            println!("{r:?}");
        }
        // The kernels, each an entry.
        assert_eq!(reports.len(), super::ENTRIES.len());
        // The consumers' test of the thread, moved inside the first warpgroup: every wgmma is
        // then only warp-uniform.
        let moved: Vec<String> = ptx
            .lines()
            .map(|l| {
                if l.contains("setp.lt.u32") && l.trim_end().ends_with(", 128;") {
                    l.replace(", 128;", ", 64;")
                } else {
                    l.to_string()
                }
            })
            .collect();
        let moved = moved.join("\n");
        if moved != ptx {
            let e = ptx_uniform::check(&moved).unwrap_err().to_string();
            assert!(e.contains("wgmma.mma_async"), "{e}");
        }
    }
}

#[cfg(test)]
mod version_tests {
    use super::*;

    /// Run 146 (an H100): the `ck_push` module, built with PTX ISA 8.0, was refused by the
    /// driver's JIT ("Feature 'st.async' requires PTX ISA .version 8.1 or later"); the check
    /// finds that here, before a device call.
    #[test]
    fn a_module_is_refused_when_its_instructions_need_a_later_ptx_isa() {
        let header = |v: &str| format!("//\n.version {v}\n.target sm_90a\n.address_size 64\n");
        let st_async = "\tst.async.shared::cluster.mbarrier::complete_tx::bytes.v2.f32 [%r1], {%r2, %r3}, [%r4];\n";
        let e = crate::gpu::ptx_isa_covers(&(header("8.0") + st_async)).unwrap_err();
        assert!(
            e.contains("st.async") && e.contains("8.1") && e.contains("8.0"),
            "{e}"
        );
        crate::gpu::ptx_isa_covers(&(header("8.1") + st_async)).unwrap();
        crate::gpu::ptx_isa_covers(&(header("8.6") + st_async)).unwrap();
        crate::gpu::ptx_isa_covers(&(header("8.0") + "\twgmma.fence.sync.aligned;\n")).unwrap();
        assert!(crate::gpu::ptx_isa_covers("no header").is_err());
        // The sm_100a module's tcgen05 needs 8.6 (its target's `+ptx86`).
        let commit = "\ttcgen05.commit.cta_group::1.mbarrier::arrive::one.b64 [%rd1];\n";
        assert!(crate::gpu::ptx_isa_covers(&(header("8.0") + commit)).is_err());
        crate::gpu::ptx_isa_covers(&(header("8.6") + commit)).unwrap();
        // The variant module that uses it is built for PTX ISA 8.1, the others for 8.0.
        assert_eq!(Module::CkPush.target().features, "+ptx81");
        assert_eq!(Module::Production.target().features, "+ptx80");
    }
}
