//! The attention kernel crate (`crates/gpu-attention`): its sm_90a build (the module
//! gpu-attention-host embeds), the launch bounds rustc cannot express, and the PTX checks; its
//! device test (`tests/attention-test`) in the suite bundle and on this machine.

use std::path::PathBuf;
use std::time::Instant;

use xshell::{Shell, cmd};

use crate::gemm_kernel::{NVPTX_SM90A, with_maxntid};
use crate::util::Result;

/// The kernel crate.
pub const CRATE: &str = "crates/gpu-attention";

/// The final module's file name under `target/gpu/sm_90a/`.
pub const MODULE: &str = "gpu_attention.ptx";

/// The final module of [`build`].
pub fn artifact() -> PathBuf {
    NVPTX_SM90A.target_dir().join(MODULE)
}

/// The broken module (the kernel crate's `unwaited` feature: the kernels without their
/// `griddepcontrol.wait`), on which the device test's programmatic chains must fail.
pub const UNWAITED: &str = "gpu_attention_unwaited.ptx";

/// Builds [`UNWAITED`] (for the device test's negative control).
pub fn build_unwaited(sh: &Shell) -> Result<PathBuf> {
    build_module(sh, Some("unwaited"), UNWAITED)
}

/// The checked module (the kernel crate's `checked` feature: gpu-pipeline's hang diagnostics in
/// every pipeline, ordered sequence and named barrier), on which the device test runs every case:
/// no false alarm, no hang, the same results.
pub const CHECKED: &str = "gpu_attention_checked.ptx";

/// Builds [`CHECKED`].
pub fn build_checked(sh: &Shell) -> Result<PathBuf> {
    build_module(sh, Some("checked"), CHECKED)
}

/// The device test binary.
pub fn test_binary() -> PathBuf {
    crate::util::root().join("target/release/attention-test")
}

/// The benchmark's bridge (gpu-attention-host behind a C ABI), which the comparison against
/// torch's SDPA ([`SDPA_TEST`]) loads too.
pub fn bridge() -> PathBuf {
    crate::util::root().join("target/release/libattention_bench.so")
}

/// The comparison against torch's SDPA math backend (float64, on the GPU) at random larger
/// shapes, within the bound the plan's reference derives (its docstring).
pub const SDPA_TEST: &str = "tests/attention-bench/sdpa_test.py";

/// The benchmark script, whose bridge wrapper [`SDPA_TEST`] imports.
pub const BENCH_SCRIPT: &str = "tests/attention-bench/bench_attention.py";

/// The suite bundle's section: the device test (every case against the f64 reference), the same
/// on the checked build ([`CHECKED`]: a hang or a miscounted barrier would end a case with a
/// gpu-pipeline record), the module through `ptxas -v` (failing where ptxas serialises a kernel's `wgmma`s, its C7513, as
/// it did to the first overlapped loops), then the small cases under compute-sanitizer's
/// memcheck, synccheck and racecheck, and the comparison against torch's SDPA where Python has
/// torch (SKIPPED otherwise). Each bounded, each fails the run.
pub const RUN_SH_SECTION: &str = r#"echo "== gpu-attention: every case against the f64 host reference within its derived bound (O and LSE), and the host API's errors"
timeout -k 10 600 "$here/attention-test" "$here/gpu_attention.ptx" 2>&1 | tee "$out/attention.log"
[ "${PIPESTATUS[0]}" -eq 0 ] || { echo "FAIL: the attention tests did not pass: $(grep -c '^FAIL' "$out/attention.log") FAIL lines"; status=1; }

echo "== gpu-attention: every case on the checked build (gpu_attention_checked.ptx: every wait bounded, every arrival counted): no hang record, the same results"
timeout -k 10 900 "$here/attention-test" "$here/gpu_attention_checked.ptx" >"$out/attention-checked.log" 2>&1
rc=$?
echo "checked build: exit $rc, $(grep -c '^PASS' "$out/attention-checked.log") cases passed; $(tail -n 1 "$out/attention-checked.log")"
grep -E "^gpu-pipeline " "$out/attention-checked.log" | head -n 5
[ $rc -eq 0 ] || { grep -E "^FAIL" "$out/attention-checked.log" | head -n 10 | cut -c1-240; echo "FAIL: attention-test on the checked build exited $rc"; status=1; }

echo "== gpu-attention: against torch's SDPA math backend (float64 on the GPU) at random larger shapes, within the derived bound"
if python3 -c "import torch; assert torch.cuda.is_available()" >/dev/null 2>&1; then
  GPU_ATTENTION_MODULE="$here/gpu_attention.ptx" timeout -k 10 600 python3 "$here/sdpa_test.py" --lib "$here/libattention_bench.so" >"$out/attention-sdpa.log" 2>"$out/attention-sdpa.err"
  rc=$?
  grep -E "^FAIL|^SKIPPED|^sdpa-test" "$out/attention-sdpa.log" | cut -c1-240
  [ $rc -eq 0 ] || { tail -n 5 "$out/attention-sdpa.err"; echo "FAIL: sdpa_test.py exited $rc"; status=1; }
  # The comparison's negative control: one element of O moved by twice the bound, every case must fail.
  GPU_ATTENTION_MODULE="$here/gpu_attention.ptx" timeout -k 10 300 python3 "$here/sdpa_test.py" --lib "$here/libattention_bench.so" --cases 4 --perturb >"$out/attention-sdpa-perturb.log" 2>&1
  rc=$?
  grep -E "^sdpa-test" "$out/attention-sdpa-perturb.log"
  if [ $rc -eq 1 ] && grep -q "^sdpa-test: 0 passed, 4 failed" "$out/attention-sdpa-perturb.log"; then
    echo "PASS: every perturbed case failed, as it must"
  else
    echo "FAIL: sdpa_test.py --perturb exited $rc: the comparison cannot show a wrong O"; status=1
  fi
else
  echo "SKIPPED: python3 with torch (CUDA) not found; the comparison against torch's SDPA needs it"
fi

echo "== gpu-attention: the programmatic chains on the kernels without their griddepcontrol.wait (gpu_attention_unwaited.ptx) must fail"
timeout -k 10 300 "$here/attention-test" "$here/gpu_attention_unwaited.ptx" --programmatic >"$out/attention-unwaited.log" 2>&1
rc=$?
grep -E "^(PASS|FAIL)" "$out/attention-unwaited.log" | cut -c1-200
if [ $rc -eq @TEST_FAILED@ ]; then
  echo "PASS: the chains failed without the wait, as they must"
else
  echo "FAIL: attention-test --programmatic on the unwaited module exited $rc, not @TEST_FAILED@ (a failed test): the chains cannot show a missing wait"; status=1
fi
@EACH_CHAIN@

echo "== gpu-attention: ptxas -arch=sm_90a -v of the module: no wgmma serialised (ptxas's C7513)"
if command -v ptxas >/dev/null; then
  if timeout 300 ptxas -arch=sm_90a -v "$here/gpu_attention.ptx" -o "$out/attention_sm90a.cubin" 2>"$out/ptxas_attention.log"; then
    rm -f "$out/attention_sm90a.cubin"
    if grep -q C7513 "$out/ptxas_attention.log"; then
      grep C7513 "$out/ptxas_attention.log"; echo "FAIL: ptxas serialises the attention kernels' wgmmas"; status=1
    else
      echo "ptxas: no wgmma serialised; its frames (count, line): $(grep 'spill stores' "$out/ptxas_attention.log" | sort | uniq -c | tr -s ' ' | tr '\n' ';')"
    fi
  else
    cat "$out/ptxas_attention.log"; echo "FAIL: ptxas rejected the attention module"; status=1
  fi
else
  echo "SKIPPED: ptxas not found"
fi

echo "== gpu-attention under compute-sanitizer: memcheck, synccheck, racecheck (the small cases)"
if command -v compute-sanitizer >/dev/null; then
  for tool in memcheck synccheck racecheck; do
    timeout -k 10 900 compute-sanitizer --tool "$tool" --error-exitcode 9 "$here/attention-test" "$here/gpu_attention.ptx" --sanitize >"$out/attention-$tool.log" 2>&1
    rc=$?
    echo "$tool: exit $rc, $(grep -c '^PASS' "$out/attention-$tool.log") cases passed; $(tail -n 1 "$out/attention-$tool.log")"
    [ $rc -eq 0 ] || { tail -n 30 "$out/attention-$tool.log"; status=1; }
  done
else
  echo "SKIPPED: compute-sanitizer not found"
fi"#;

/// [`RUN_SH_SECTION`] with the failed test's exit status filled in.
pub fn run_sh_section() -> String {
    RUN_SH_SECTION
        .replace(
            "@TEST_FAILED@",
            &pipeline_suite::exit::TEST_FAILED.to_string(),
        )
        .replace(
            "@EACH_CHAIN@",
            &crate::device::each_chain_sh("attention-unwaited.log", &PROGRAMMATIC_CHAINS),
        )
}

/// attention-test's programmatic chain (`tests/attention-test/src/programmatic.rs`) that must
/// fail on the unwaited module, by name: it reads an O the kernel before has not written yet
/// (NaN). The other chain, `programmatic_writes_over_what_the_kernel_before_reads`, needs a race
/// to show and is not required: in run 96 (an H100) it passed on the unwaited module.
pub const PROGRAMMATIC_CHAINS: [&str; 1] = ["programmatic_reads_the_output_of_the_kernel_before"];

/// The files of the suite bundle: (built file, name in the bundle).
pub fn bundle_files() -> [(PathBuf, &'static str); 7] {
    let root = crate::util::root();
    [
        (artifact(), MODULE),
        (NVPTX_SM90A.target_dir().join(UNWAITED), UNWAITED),
        (NVPTX_SM90A.target_dir().join(CHECKED), CHECKED),
        (test_binary(), "attention-test"),
        (bridge(), "libattention_bench.so"),
        (root.join(SDPA_TEST), "sdpa_test.py"),
        (root.join(BENCH_SCRIPT), "bench_attention.py"),
    ]
}

/// Builds the test binary and the bridge the comparison against torch's SDPA loads (release).
pub fn build_test(sh: &Shell) -> Result {
    cmd!(
        sh,
        "cargo build --release -p attention-test -p attention-bench"
    )
    .run()
    .map_err(|_| "building attention-test and its bridge failed (above)".to_string())
}

/// The comparison against torch's SDPA on this machine ([`SDPA_TEST`]): SKIPPED where Python has
/// no torch with CUDA (an optional dependency here), or no GPU; otherwise every case must pass.
fn sdpa(sh: &Shell) -> Result {
    const WHAT: &str = "gpu-attention against torch's SDPA";
    println!(
        "== {WHAT}: the math backend in float64 at random larger shapes, within the derived bound"
    );
    let has_torch = cmd!(sh, "python3 -c 'import torch'")
        .quiet()
        .ignore_stdout()
        .ignore_stderr()
        .run()
        .is_ok();
    if !has_torch {
        println!("{WHAT}: SKIPPED: python3 with torch not found (it needs torch with CUDA)");
        return Ok(());
    }
    let (script, lib, module) = (crate::util::root().join(SDPA_TEST), bridge(), artifact());
    let output = cmd!(sh, "python3 {script} --lib {lib}")
        .env("GPU_ATTENTION_MODULE", &module)
        .ignore_status()
        .quiet()
        .output()
        .map_err(crate::util::err("cannot run python3"))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    match output.status.code() {
        Some(c) if c == i32::from(pipeline_suite::exit::NO_DRIVER) => {
            let reason = stdout.trim();
            println!(
                "{WHAT}: SKIPPED: {}",
                reason.strip_prefix("SKIPPED: ").unwrap_or(reason)
            );
            return Ok(());
        }
        _ => print!("{stdout}"),
    }
    match output.status.code() {
        Some(0) => Ok(()),
        code => Err(format!(
            "{WHAT}: failed (exit {code:?}; above){}",
            String::from_utf8_lossy(&output.stderr)
                .lines()
                .last()
                .map(|l| format!(": {l}"))
                .unwrap_or_default()
        )),
    }
}

/// Runs the test on this machine, with the harness's verdict: in `ci`, only a missing driver
/// may be SKIPPED.
pub fn run(sh: &Shell, ci: bool) -> Result {
    println!("== gpu-attention: every case against the f64 host reference");
    let tested = crate::device::run_device_program(
        sh,
        "gpu-attention device tests",
        &test_binary(),
        &[&artifact()],
        ci,
    );
    println!("== gpu-attention: every case on the checked build (bounded waits, counted arrivals)");
    let checked = crate::device::run_device_program(
        sh,
        "gpu-attention device tests, checked build",
        &test_binary(),
        &[&NVPTX_SM90A.target_dir().join(CHECKED)],
        ci,
    );
    println!(
        "== gpu-attention: the programmatic chains on the kernels without their griddepcontrol.wait must fail"
    );
    let unwaited = NVPTX_SM90A.target_dir().join(UNWAITED);
    let negative = crate::device::run_device_program_to_fail(
        sh,
        "gpu-attention programmatic chains on the unwaited module",
        &test_binary(),
        &[&unwaited, std::path::Path::new("--programmatic")],
        &PROGRAMMATIC_CHAINS,
        ci,
    );
    let compared = sdpa(sh);
    let errors: Vec<String> = [tested, checked, negative, compared]
        .into_iter()
        .filter_map(std::result::Result::err)
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors.join("\n"))
    }
}

/// The modules the benchmark's bundle carries beside the production one, each `(features,
/// file)`: the kernel crate with its `plain`, `overlap` and `pingpong` features (every kernel's
/// loop forced so), with `strided` (the persistent CTAs' units in the plain stride, not the
/// production module's alternating order), with `late_rescale` (the overlapped loop scales O
/// after it issues the next block's scores, FlashAttention-3's order), with `exp_fma_4` and
/// `exp_fma_3` (a quarter or a third of the exponentials on the FMA pipe), and with
/// `lazy_rescale` (a warp keeps its old maxima while they grow by at most 8: no O rescale), its
/// opposite `eager_rescale`, `longest_first` and `folded` (a causal fixed batch's units never
/// or always in the plan's folded order), and `folded_tail` (the folded order's last rounds
/// longest first), by the plan's rule or (with `folded`) everywhere, `ordered_wait` (the
/// overlapped loop's wait for the previous P V ordered after the softmax), `wait_quarter` and
/// `wait_half` (that wait after a quarter or half of each block's weights), `named_turns` (the
/// two consumer warpgroups' turns on named barriers), `wide_store` (O in 16-byte stores after
/// a transpose within each quad in every row; production in the rows of two consumer
/// warpgroups), `narrow_store` (in none: the earlier production stores), `kv_evict_last`
/// (single CTAs' K and V loads with the L2 policy evict-last), `seed_sums` (the row sums
/// seeded with the old ones rescaled), `late_k_release` (the K release, and ptxas's wait for the previous P V after it, a quarter
/// into the weights), `kv_ticks` (the K and V waits with a suspend-time hint), and their
/// combinations with each other and with `named_turns`.
pub const VARIANTS: [(&str, &str); 25] = [
    ("plain", "gpu_attention_plain.ptx"),
    ("overlap", "gpu_attention_overlap.ptx"),
    ("overlap,pingpong", "gpu_attention_overlap_pingpong.ptx"),
    ("strided", "gpu_attention_strided.ptx"),
    ("late_rescale", "gpu_attention_late_rescale.ptx"),
    ("exp_fma_4", "gpu_attention_exp_fma_4.ptx"),
    ("exp_fma_3", "gpu_attention_exp_fma_3.ptx"),
    ("lazy_rescale", "gpu_attention_lazy_rescale.ptx"),
    ("eager_rescale", "gpu_attention_eager_rescale.ptx"),
    ("longest_first", "gpu_attention_longest_first.ptx"),
    ("folded", "gpu_attention_folded.ptx"),
    ("folded_tail", "gpu_attention_folded_tail.ptx"),
    (
        "folded,folded_tail",
        "gpu_attention_folded_everywhere_tail.ptx",
    ),
    ("ordered_wait", "gpu_attention_ordered_wait.ptx"),
    ("wait_quarter", "gpu_attention_wait_quarter.ptx"),
    ("wait_half", "gpu_attention_wait_half.ptx"),
    ("named_turns", "gpu_attention_named_turns.ptx"),
    ("wide_store", "gpu_attention_wide_store.ptx"),
    ("narrow_store", "gpu_attention_narrow_store.ptx"),
    ("kv_evict_last", "gpu_attention_kv_evict_last.ptx"),
    ("seed_sums", "gpu_attention_seed_sums.ptx"),
    ("late_k_release,seed_sums", "gpu_attention_late_seed.ptx"),
    ("kv_ticks", "gpu_attention_kv_ticks.ptx"),
    (
        "named_turns,late_k_release,seed_sums",
        "gpu_attention_turns_late_seed.ptx",
    ),
    (
        "named_turns,late_k_release,seed_sums,kv_ticks",
        "gpu_attention_turns_late_seed_ticks.ptx",
    ),
];

/// A variant module of [`VARIANTS`] after [`build_variant`].
pub fn variant_artifact(file: &str) -> PathBuf {
    NVPTX_SM90A.target_dir().join(file)
}

/// Builds the kernel crate for sm_90a, adds each entry's launch bound, checks the PTX
/// ([`check_ptx`]) and writes `target/gpu/sm_90a/gpu_attention.ptx`.
pub fn build(sh: &Shell) -> Result<PathBuf> {
    build_module(sh, None, MODULE)
}

/// Builds the variant of [`VARIANTS`] with `features` into `target/gpu/sm_90a/{file}`.
pub fn build_variant(sh: &Shell, features: &str, file: &str) -> Result<PathBuf> {
    build_module(sh, Some(features), file)
}

/// One module: the kernel crate with `features` (in a target folder of its own), the launch
/// bounds, the label comments dropped, the checks.
fn build_module(sh: &Shell, features: Option<&str>, file: &str) -> Result<PathBuf> {
    let start = Instant::now();
    let target = &NVPTX_SM90A;
    let (label, extra, target_dir) = match features {
        None => (
            "attention (sm_90a)".to_string(),
            vec![],
            target.target_dir().with_extension("attention"),
        ),
        Some(f) => (
            format!("attention, features {f} (sm_90a)"),
            vec!["--features", f],
            target
                .target_dir()
                .with_extension(format!("attention-{}", f.replace(',', "-"))),
        ),
    };
    crate::gpu::starting(&label, target);
    let output = target.cargo_build_output_in(sh, CRATE, &extra, &target_dir)?;
    if !output.status.success() {
        eprintln!("{}", String::from_utf8_lossy(&output.stderr));
        return Err(format!("building {CRATE} ({label}) failed"));
    }
    let built = target_dir.join(target.triple).join("release").join(MODULE);
    let ptx =
        std::fs::read_to_string(&built).map_err(|e| format!("reading {}: {e}", built.display()))?;
    let has = |name: &str| features.is_some_and(|f| f.split(',').any(|f| f == name));
    let mut ptx = without_label_comments(&ptx);
    if has("checked") {
        ptx = without_noreturn(&ptx);
    }
    for k in gpu_attention_plan::abi::KERNELS {
        ptx = with_maxntid(&ptx, k.entry, k.threads())?;
    }
    // The loop the features force (`plain` first, as the kernel crate applies it), or the table's.
    let forced = if has("overlap") {
        Some(true)
    } else if has("plain") {
        Some(false)
    } else {
        None
    };
    let reports = check_ptx_of(&ptx, forced, !has("unwaited"), has("checked"))?;
    std::fs::create_dir_all(target.target_dir())
        .map_err(|e| format!("creating {}: {e}", target.target_dir().display()))?;
    let out = target.target_dir().join(file);
    std::fs::write(&out, &ptx).map_err(|e| format!("writing {}: {e}", out.display()))?;
    println!(
        "  {:<8} {:<22} {:>6.1} s  {} (.maxntid per kernel{})",
        "attn",
        target.triple,
        start.elapsed().as_secs_f64(),
        out.display(),
        if has("checked") {
            ""
        } else {
            ", no local memory"
        }
    );
    for r in reports {
        println!(
            "           {}: {} .aligned (wgmma: {}) on warpgroup-uniform paths",
            r.entry, r.aligned, r.wgmmas
        );
    }
    Ok(out)
}

/// `ptx` without the comments LLVM puts after block labels (`$L__BB0_7:  // %name.exit`): they
/// name the blocks after inlined functions, by their mangled symbols, whose crate hashes carry
/// the checkout's absolute path (cargo hashes a path dependency outside the kernel crate's
/// workspace by it), so the embedded module would differ between clones. Nothing else changes.
pub fn without_label_comments(ptx: &str) -> String {
    let mut out = String::with_capacity(ptx.len());
    for line in ptx.split_inclusive('\n') {
        match line.find("//") {
            Some(at) if line.starts_with("$L__") && line[..at].trim_end().ends_with(':') => {
                out.push_str(line[..at].trim_end());
                if line.ends_with('\n') {
                    out.push('\n');
                }
            }
            _ => out.push_str(line),
        }
    }
    out
}

/// `ptx` without its `.noreturn` directives (PTX ISA 9.0, "Performance-Tuning Directives:
/// .noreturn": a hint that a `.func` never returns to its caller, which LLVM adds to every
/// function it knows to diverge). ptxas 13.0.88, at -O1 and above, crashes with a segmentation
/// fault on the checked kernels: their bounded waits' record paths call such functions (with
/// parameters) inside the loops' `wgmma` regions. Found by reduction of the checked module: two
/// of those calls suffice, `wgmma.wait_group 0` before them does not help, and the same module
/// without the directive compiles. Dropping the hint changes no behaviour: every call to such a
/// function is followed by `exit`. Applied to the checked module only; the production module
/// keeps its PTX (its only diverging calls are to the parameterless panic functions, which
/// ptxas compiles).
pub fn without_noreturn(ptx: &str) -> String {
    let mut out = String::with_capacity(ptx.len());
    for line in ptx.split_inclusive('\n') {
        // The directive starts its line, after a parameter list: `.noreturn;` in a declaration
        // (leaving `;`), `.noreturn  // -- Begin function` before a body (leaving the comment).
        match line.strip_prefix(".noreturn") {
            Some(rest) if !rest.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_') => {
                out.push_str(rest.trim_start_matches([' ', '\t']));
            }
            _ => out.push_str(line),
        }
    }
    out
}

/// The `wgmma.mma_async` of one kernel: `head_dim / 16` for `S = Q Kᵀ` in two forms (scaled by 1
/// and, for a negative scale, by -1), `block_n / 16` for `O += P V`; overlapped (the row's
/// `overlap`, or `forced` where the variant's features force it), each unrolled twice (the first block's scores and the loop's;
/// the loop's P V and the last block's).
fn wgmmas(k: gpu_attention_plan::abi::KernelSpec, forced: Option<bool>) -> usize {
    let copies = if forced.unwrap_or(k.overlap) { 2 } else { 1 };
    (copies * (2 * k.head_dim / 16 + k.block_n / 16)) as usize
}

/// The checks of the module's PTX: no local memory (an accumulator indexed with a variable
/// would go there and ptxas would serialise the wgmmas), every entry of the table with its
/// launch bound, its one `griddepcontrol.wait` and its unrolled `wgmma`s, no entry the table
/// does not know, and the
/// convergence check ([`ptx_uniform`]: no `.aligned` instruction on a path only part of its
/// warpgroup takes).
#[cfg(test)]
pub fn check_ptx(ptx: &str) -> Result<Vec<ptx_uniform::EntryReport>> {
    check_ptx_of(ptx, None, true, false)
}

/// [`check_ptx`] of a module whose loops the features force (`forced`: overlapped or not) or
/// the table sets (`None`), whose entries each wait once for the previous kernel (`waits`) or,
/// the broken `unwaited` module, never. The `checked` module may use local memory: its bounded
/// waits pass their record's fields to the (not inlined) wait and failure paths through it.
fn check_ptx_of(
    ptx: &str,
    forced: Option<bool>,
    waits: bool,
    checked: bool,
) -> Result<Vec<ptx_uniform::EntryReport>> {
    crate::gpu::ptx_isa_covers(ptx).map_err(|e| format!("the attention module: {e}"))?;
    if !checked && (ptx.contains("__local_depot") || ptx.contains(".local")) {
        return Err(
            "the attention PTX uses local memory (an accumulator array indexed with a variable?)"
                .into(),
        );
    }
    let reports = ptx_uniform::check(ptx)
        .map_err(|e| format!("the attention PTX fails its convergence check:\n{e}"))?;
    for k in gpu_attention_plan::abi::KERNELS {
        let bound = format!(".maxntid {}, 1, 1", k.threads());
        let at = ptx
            .find(&format!(".entry {}(", k.entry))
            .ok_or_else(|| format!("the attention PTX has no entry `{}`", k.entry))?;
        let head_end = at + ptx[at..].find('{').unwrap_or(0);
        if !ptx[at..head_end].contains(&bound) {
            return Err(format!(
                "the attention entry `{}` lacks its launch bound `{bound}`",
                k.entry
            ));
        }
        // Every entry waits once for the stream's previous kernel before it touches global
        // memory (programmatic launches); the broken `unwaited` module not at all.
        let text = crate::gemm_kernel::entry_text(ptx, k.entry).unwrap_or("");
        if let Some(line) = crate::gemm_kernel::memory_before_wait(text) {
            return Err(format!(
                "the attention entry `{}` may touch global memory before its griddepcontrol.wait (`{line}`): a programmatic dependent launch of it could race the kernel before it",
                k.entry
            ));
        }
        let found = text.matches("griddepcontrol.wait").count();
        if found != usize::from(waits) {
            return Err(format!(
                "the attention entry `{}` has {found} griddepcontrol.wait, expected {}",
                k.entry,
                usize::from(waits)
            ));
        }
        let report = reports
            .iter()
            .find(|r| r.entry == k.entry)
            .ok_or_else(|| format!("the attention PTX has no entry `{}`", k.entry))?;
        let expected = wgmmas(k, forced);
        if report.wgmmas != expected {
            return Err(format!(
                "the attention entry `{}` has {} wgmma.mma_async, expected {expected}",
                k.entry, report.wgmmas
            ));
        }
    }
    if let Some(other) = reports.iter().find(|r| {
        !gpu_attention_plan::abi::KERNELS
            .iter()
            .any(|k| k.entry == r.entry)
    }) {
        return Err(format!(
            "the attention PTX has an entry `{}` that the plan's table does not list",
            other.entry
        ));
    }
    Ok(reports)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_comments_go_and_nothing_else_changes() {
        let ptx = "$L__BB0_119:                            // %_RNCINvNtCsa7UE_13gpu_attention.exit\n\t// in Loop\n\tadd.s32 %r1, %r2, 1; // keep\n$L__BB0_120:\n";
        assert_eq!(
            without_label_comments(ptx),
            "$L__BB0_119:\n\t// in Loop\n\tadd.s32 %r1, %r2, 1; // keep\n$L__BB0_120:\n"
        );
    }

    #[test]
    fn noreturn_goes_from_declarations_and_definitions_only() {
        let ptx = ".func panic\n()\n.noreturn;\n.func fail(\n\t.param .b32 p\n)\n.noreturn                               // -- Begin function fail\n{\n\t// .noreturn in a comment\n\texit;\n}\n.noreturns_x\n";
        assert_eq!(
            without_noreturn(ptx),
            ".func panic\n()\n;\n.func fail(\n\t.param .b32 p\n)\n// -- Begin function fail\n{\n\t// .noreturn in a comment\n\texit;\n}\n.noreturns_x\n"
        );
    }

    /// The negative control judges attention-test's real output: its chains print as `FAIL
    /// NAME: why` (not under the host API errors' `error: ` prefix, which no check would match).
    #[test]
    fn the_negative_control_finds_each_chain_in_the_tests_output() {
        use crate::device::{Verdict, each_failed};
        let out = "PASS programmatic_refused_where_the_entries_do_not_wait\nFAIL programmatic_reads_the_output_of_the_kernel_before: O row 3 off by 0.5\nFAIL programmatic_writes_over_what_the_kernel_before_reads: O row 0 off by 1\nattention-test: 1 passed, 2 failed\n";
        assert_eq!(
            each_failed("control", out, &PROGRAMMATIC_CHAINS),
            Verdict::Passed
        );
        let old = out.replace("FAIL ", "FAIL error: ");
        assert_ne!(
            each_failed("control", &old, &PROGRAMMATIC_CHAINS),
            Verdict::Passed
        );
    }

    #[test]
    fn the_run_sh_section_runs_every_bundled_file_bounded() {
        let section = run_sh_section();
        assert!(!section.contains('@'), "a placeholder left unfilled");
        for (_, name) in bundle_files() {
            // The benchmark script is the comparison's import, beside it, not run itself.
            if name != "bench_attention.py" {
                assert!(section.contains(&format!("$here/{name}")), "{name}");
            }
        }
        // Eight steps (the checked build's, the comparison and its negative control among
        // them), and the programmatic negative control's two more: each chain by name, the
        // refusal.
        assert_eq!(section.matches("status=1").count(), 10);
        assert!(section.contains(r#""$here/attention-test" "$here/gpu_attention_checked.ptx""#));
        assert!(
            section.contains(r#"python3 "$here/sdpa_test.py" --lib "$here/libattention_bench.so""#)
        );
        for chain in PROGRAMMATIC_CHAINS {
            assert!(section.contains(chain), "{chain}");
        }
        assert!(section.contains("grep -q C7513"));
        for tool in ["memcheck", "synccheck", "racecheck"] {
            assert!(section.contains(tool), "{tool}");
        }
        // The negative control passes only by a failed test.
        assert!(section.contains(&format!(
            "if [ $rc -eq {} ]; then",
            pipeline_suite::exit::TEST_FAILED
        )));
        assert!(section.contains(r#""$here/gpu_attention_unwaited.ptx" --programmatic"#));
    }

    /// The built module passes its checks, where it exists (`cargo xtask build`).
    #[test]
    fn the_built_module_passes() {
        let path = artifact();
        if path.exists() {
            let ptx = std::fs::read_to_string(&path).unwrap();
            check_ptx(&ptx).unwrap();
        }
    }
}
