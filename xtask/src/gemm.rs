//! `cargo xtask bench-gemm`: the bf16 GEMM benchmark (`tests/gemm-bench`): the cuBLAS baselines,
//! and the Rust GEMM once it lands, alternating in one process, every result checked.

use std::path::Path;

use xshell::{Shell, cmd};

use crate::device::{Verdict, verdict};
use crate::util::Result;

/// The bundle's run script: `gemm-test` on the measurement modules (the step kernels, the
/// shift_edge, l2_hints, ck_push and store_read modules), then the benchmark (its arguments passed on), its log and
/// CSV under `$OUT` (or `out/` beside the script). cuBLAS is looked for in the usual CUDA folders
/// too.
const RUN_GEMM_SH: &str = r#"#!/usr/bin/env bash
# The gpu-pipeline GEMM benchmark, self-contained: needs an NVIDIA driver (CUDA 13) and cuBLAS
# (libcublas.so.13, libcublasLt.so.13). Arguments go to gemm-bench (for example --quick, or
# --shapes 8192x8192x8192). Results go to $OUT (or out/ beside this script).
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-$here/out}
mkdir -p "$out"
@CUBLAS_PATH@
{
  echo "commit: $(cat "$here/COMMIT")"
  echo "date:   $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  if command -v nvidia-smi >/dev/null; then
    nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.sm,clocks.mem,power.limit --format=csv 2>&1
  else
    echo "nvidia-smi: not available"
  fi
  echo "command: gemm-bench --ours-module gpu_gemm_steps.ptx --csv $out/gemm.csv $*"
} | tee "$out/machine.txt"
echo "== ptxas -v (sm_90a): every production GEMM kernel has a 0-byte stack frame, and no kernel a C75xx performance warning (the step kernels' frames are listed)"
ptxas=$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)
if [ -x "$ptxas" ]; then
  if ! timeout 300 "$ptxas" -arch=sm_90a -v "$here/gpu_gemm_steps.ptx" -o "$out/gpu_gemm_steps.cubin" > "$out/ptxas.log" 2>&1; then
    cat "$out/ptxas.log"; echo "FAIL: ptxas rejected gpu_gemm_steps.ptx"; exit 1
  fi
  grep -E "entry function|stack frame|registers|C75" "$out/ptxas.log"
  frames=0
  for entry in @PRODUCTION@; do
    f=$(grep -A1 "Function properties for $entry\$" "$out/ptxas.log" | grep "stack frame" | grep -vc "^ *0 bytes stack frame")
    frames=$((frames + f))
  done
  grep -A1 "Function properties for gemm_" "$out/ptxas.log" | grep -B1 "^ *[1-9][0-9]* bytes stack frame" | grep -o "gemm_[a-z0-9_]*\|[0-9]* bytes stack frame" | paste -d' ' - - | sed 's/^/frame: /'
  if grep -q "C75[0-9][0-9]" "$out/ptxas.log" || [ "$frames" -ne 0 ]; then
    echo "FAIL: a production GEMM kernel has a stack frame, or a kernel a C75xx warning (above)"; exit 1
  fi
  echo "ptxas: PASS"
else
  echo "ptxas: SKIPPED (no ptxas on PATH or in /usr/local/cuda/bin)"
fi
echo "== exact checks of the measurement modules (gemm-test, the quick cases): the steps module's step kernels (stream-K among them), the shift_edge, l2_hints, ck_push and store_read modules"
timeout -k 10 300 "$here/gemm-test" "$here/gpu_gemm_steps.ptx" --steps --quick 2>&1 | tee "$out/steps-test.log"
exact=${PIPESTATUS[0]}
timeout -k 10 300 "$here/gemm-test" "$here/gpu_gemm_shift_edge.ptx" --quick 2>&1 | tee "$out/shift-edge-test.log"
[ "${PIPESTATUS[0]}" -eq 0 ] || exact=1
timeout -k 10 300 "$here/gemm-test" "$here/gpu_gemm_l2_hints.ptx" --quick 2>&1 | tee "$out/l2-hints-test.log"
[ "${PIPESTATUS[0]}" -eq 0 ] || exact=1
timeout -k 10 300 "$here/gemm-test" "$here/gpu_gemm_ck_push.ptx" --quick 2>&1 | tee "$out/ck-push-test.log"
[ "${PIPESTATUS[0]}" -eq 0 ] || exact=1
timeout -k 10 300 "$here/gemm-test" "$here/gpu_gemm_store_read.ptx" --quick 2>&1 | tee "$out/store-read-test.log"
[ "${PIPESTATUS[0]}" -eq 0 ] || exact=1
echo "gemm-test exit status: $exact" | tee -a "$out/steps-test.log"
echo "== GEMM benchmark (cuBLAS baselines and the Rust GEMM's kernels)"
timeout -k 10 ${GEMM_TIMEOUT:-900} "$here/gemm-bench" --ours-module "$here/gpu_gemm_steps.ptx" --csv "$out/gemm.csv" "$@" 2>&1 | tee "$out/gemm.log"
status=${PIPESTATUS[0]}
echo "gemm-bench exit status: $status (@MEANINGS@)" | tee -a "$out/gemm.log"
echo "== host time per call: Gemm::run cold and repeated, prepared launches, cuBLAS's own calls, CUDA graph replays"
timeout -k 10 300 "$here/gemm-bench" --host-time --ours-module "$here/gpu_gemm_steps.ptx" --csv "$out/host-time.csv" 2>&1 | tee "$out/host-time.log"
host=${PIPESTATUS[0]}
echo "gemm-bench --host-time exit status: $host" | tee -a "$out/host-time.log"
[ "$status" -ne 0 ] || status=$host
[ "$status" -ne 0 ] || status=$exact
exit $status
"#;

/// [`RUN_GEMM_SH`] with the cuBLAS folders, and the exit statuses' meanings filled in from
/// `pipeline_suite::exit`.
fn run_gemm_sh() -> String {
    use pipeline_suite::exit;
    let meanings: Vec<String> = [
        exit::PASSED,
        exit::TEST_FAILED,
        exit::USAGE,
        exit::NO_DRIVER,
        exit::SETUP,
    ]
    .iter()
    .map(|&s| format!("{s} {}", exit::meaning(i32::from(s)).unwrap_or("?")))
    .collect();
    let production: Vec<&str> = gpu_gemm_plan::KERNELS.iter().map(|k| k.entry).collect();
    RUN_GEMM_SH
        .replace("@CUBLAS_PATH@", &crate::cublas::cublas_path_sh())
        .replace("@PRODUCTION@", &production.join(" "))
        .replace("@MEANINGS@", &meanings.join(", "))
}

/// Builds the GEMM kernels, `gemm-bench` and `gemm-test`, and returns the benchmark's path.
fn build(sh: &Shell) -> Result<std::path::PathBuf> {
    crate::gemm_kernel::build(sh)?;
    cmd!(sh, "cargo build --release -p gemm-test")
        .run()
        .map_err(|_| "building gemm-test failed (above)".to_string())?;
    crate::gemm_kernel::build_bench(sh)
}

/// The task: with `bundle_dir`, write the bundle (the binary, `run_gemm.sh`, `COMMIT`); otherwise
/// run the benchmark here, which needs an NVIDIA GPU and cuBLAS.
pub fn run(sh: &Shell, bundle_dir: Option<&Path>, quick: bool) -> Result {
    let bench = build(sh)?;
    if let Some(dir) = bundle_dir {
        let shift_edge =
            crate::gemm_kernel::build_module(sh, crate::gemm_kernel::Module::ShiftEdge)?;
        let l2_hints = crate::gemm_kernel::build_module(sh, crate::gemm_kernel::Module::L2Hints)?;
        let ck_push = crate::gemm_kernel::build_module(sh, crate::gemm_kernel::Module::CkPush)?;
        let store_read =
            crate::gemm_kernel::build_module(sh, crate::gemm_kernel::Module::StoreRead)?;
        crate::device::write_bundle(
            sh,
            dir,
            &[
                (bench, "gemm-bench"),
                // The measurement modules' exact check, before they are timed.
                (
                    crate::util::root().join("target/release/gemm-test"),
                    "gemm-test",
                ),
                // Every kernel, the step kernels too: the steps module.
                (crate::gemm_kernel::steps_artifact(), "gpu_gemm_steps.ptx"),
                // A measurement: the production kernels with the last tile row's A box shifted
                // inside M (the kernel crate's `shift_edge` feature).
                (shift_edge, "gpu_gemm_shift_edge.ptx"),
                // A measurement: the transposing kernels' loads with L2 policies (the kernel
                // crate's `l2_hints` feature).
                (l2_hints, "gpu_gemm_l2_hints.ptx"),
                // A measurement: the cluster-K kernels' parts added up by `st.async` pushes (the
                // kernel crate's `ck_push` feature; not taken: run 147 found it exact on every
                // case, every part count 1 to 8, and slower; checked on the quick cases since).
                (ck_push, "gpu_gemm_ck_push.ptx"),
                // A measurement: the TMA-store kernels' last wait for their stores' reads only
                // (the kernel crate's `store_read` feature).
                (store_read, "gpu_gemm_store_read.ptx"),
            ],
            "run_gemm.sh",
            &run_gemm_sh(),
        )?;
        println!(
            "GEMM bundle written to {}: run `{}/run_gemm.sh` on a machine with an NVIDIA GPU (sm_90), its driver and cuBLAS (no Rust needed)",
            dir.display(),
            dir.display()
        );
        return Ok(());
    }
    let quick = if quick { vec!["--quick"] } else { vec![] };
    let module = crate::gemm_kernel::steps_artifact();
    let _cublas = crate::cublas::push_cublas_path(sh);
    let output = cmd!(sh, "{bench} --ours-module {module} {quick...}")
        .ignore_status()
        .quiet()
        .output()
        .map_err(crate::util::err("cannot run gemm-bench"))?;
    print!("{}", String::from_utf8_lossy(&output.stdout));
    let stderr = String::from_utf8_lossy(&output.stderr);
    outcome(output.status.code(), &stderr)
}

/// What a run of `gemm-bench` here means for the task: the harness's verdict (`nvidia::verdict`),
/// except that no driver is an error pointing at this task's bundle (a benchmark has no CI skip).
fn outcome(code: Option<i32>, stderr: &str) -> Result {
    match verdict("GEMM benchmark", code, stderr, true) {
        Verdict::Passed => Ok(()),
        // The binary's line names this task's bundle already.
        Verdict::Skipped(reason) => Err(format!("GEMM benchmark: SKIPPED: {reason}")),
        Verdict::Failed(message) => Err(message),
    }
}

#[cfg(test)]
mod tests {
    use super::{outcome, run_gemm_sh};
    use crate::cublas::cublas_path_sh;
    use pipeline_suite::exit;

    #[test]
    fn no_driver_is_a_one_line_error_that_points_to_the_bundle() {
        let e = outcome(
            Some(i32::from(exit::NO_DRIVER)),
            "error: no CUDA driver found (libcuda.so could not be loaded); run on a machine with an NVIDIA GPU and its driver, or build a bundle for one with `cargo xtask bench-gemm --bundle DIR` and run DIR/run_gemm.sh there\n",
        )
        .unwrap_err();
        assert!(e.contains("SKIPPED: no CUDA driver found"), "{e}");
        assert!(e.contains("cargo xtask bench-gemm --bundle DIR"), "{e}");
        assert_eq!(e.lines().count(), 1, "{e}");
    }

    #[test]
    fn passed_failed_and_setup() {
        assert_eq!(outcome(Some(0), ""), Ok(()));
        let e = outcome(
            Some(i32::from(exit::TEST_FAILED)),
            "error: a check failed\n",
        )
        .unwrap_err();
        assert!(e.contains("failed"), "{e}");
        let e = outcome(
            Some(i32::from(exit::SETUP)),
            "error: cuBLAS not found: libcublas.so ...\n",
        )
        .unwrap_err();
        assert!(e.contains("CUDA setup error: cuBLAS not found"), "{e}");
        assert!(!e.contains("SKIPPED"), "{e}");
        assert!(outcome(None, "").unwrap_err().contains("signal"));
    }

    #[test]
    fn the_script_runs_the_binary_writes_the_csv_and_keeps_its_status() {
        let script = run_gemm_sh();
        assert!(
            !script.contains("@MEANINGS@"),
            "the placeholder left unfilled"
        );
        assert!(script.contains(
            r#""$here/gemm-bench" --ours-module "$here/gpu_gemm_steps.ptx" --csv "$out/gemm.csv" "$@""#
        ));
        assert!(script.contains("status=${PIPESTATUS[0]}"));
        // The host-time table follows; its failure fails the script when the benchmark passed.
        assert!(script.contains(
            r#""$here/gemm-bench" --host-time --ours-module "$here/gpu_gemm_steps.ptx" --csv "$out/host-time.csv""#
        ));
        assert!(script.contains(r#"[ "$status" -ne 0 ] || status=$host"#));
        // The measurement modules are checked exactly first; a failure fails the script.
        assert!(script.contains(r#""$here/gemm-test" "$here/gpu_gemm_steps.ptx" --steps --quick"#));
        assert!(script.contains(r#""$here/gemm-test" "$here/gpu_gemm_shift_edge.ptx" --quick"#));
        assert!(script.contains(r#""$here/gemm-test" "$here/gpu_gemm_l2_hints.ptx" --quick"#));
        assert!(script.contains(r#""$here/gemm-test" "$here/gpu_gemm_ck_push.ptx" --quick"#));
        assert!(script.contains(r#""$here/gemm-test" "$here/gpu_gemm_store_read.ptx" --quick"#));
        assert!(script.contains(r#"[ "$status" -ne 0 ] || status=$exact"#));
        assert!(script.trim_end().ends_with("exit $status"));
        assert!(script.contains("4 no CUDA driver") && script.contains("5 CUDA setup error"));
        assert!(script.contains("/usr/local/cuda/lib64"));
        assert!(script.contains(&cublas_path_sh()));
        assert!(!script.contains("@CUBLAS_PATH@"));
    }

    /// Runs the script's ptxas gate (the lines from its `frames=` to its `fi`) with bash on a
    /// ptxas log; whether it passed.
    fn gate_passes(log: &str) -> bool {
        let script = run_gemm_sh();
        let start = script.find("  frames=").expect("the gate");
        let end = start + script[start..].find("\n  fi\n").expect("the gate's end") + 6;
        let dir = std::env::temp_dir().join(format!("xtask-gate-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("ptxas.log"), log).unwrap();
        let status = std::process::Command::new("bash")
            .arg("-c")
            .arg(format!("out={}\n{}", dir.display(), &script[start..end]))
            .stdout(std::process::Stdio::null())
            .status()
            .expect("bash");
        std::fs::remove_dir_all(&dir).unwrap();
        status.success()
    }

    /// A ptxas `-v` log of one kernel.
    fn frame(entry: &str, bytes: u32) -> String {
        format!(
            "ptxas info    : Compiling entry function '{entry}' for 'sm_90a'\nptxas info    : Function properties for {entry}\n    {bytes} bytes stack frame, {bytes} bytes spill stores, {bytes} bytes spill loads\nptxas info    : Used 168 registers, used 16 barriers\n"
        )
    }

    #[test]
    fn the_gate_holds_the_production_kernels_and_reports_the_step_kernels() {
        let production = gpu_gemm_plan::KERNELS.map(|k| k.entry);
        let steps = gpu_gemm_plan::STEPS.map(|k| k.entry);
        let clean: String = production.iter().map(|e| frame(e, 0)).collect();
        assert!(gate_passes(&clean));
        // A measurement kernel's frame (the stream-K kernels' producers spill around their
        // 64-bit divisions) is reported, not a failure: the benchmark still runs.
        let step_frame = format!("{clean}{}", frame(steps[6], 32));
        assert!(gate_passes(&step_frame), "{}", steps[6]);
        // Any production kernel's frame fails it, as does any C75xx warning.
        for e in production {
            let log: String = production
                .iter()
                .map(|p| frame(p, if *p == e { 8 } else { 0 }))
                .collect();
            assert!(!gate_passes(&log), "{e}");
        }
        let warned = format!("{clean}ptxas warning : (C7510) something about gemm_bf16_ws\n");
        assert!(!gate_passes(&warned));
    }

    #[test]
    fn the_script_gates_on_ptxas_stack_frames_and_performance_warnings() {
        let script = run_gemm_sh();
        assert!(script.contains(r#""$ptxas" -arch=sm_90a -v "$here/gpu_gemm_steps.ptx""#));
        assert!(script.contains("C75[0-9][0-9]"));
        assert!(script.contains(r#"grep -vc "^ *0 bytes stack frame""#));
        assert!(script.contains("ptxas: SKIPPED"));
        assert!(!script.contains("@PRODUCTION@"));
    }
}
