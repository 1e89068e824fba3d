//! `cargo xtask test-nvidia`: builds the kernels' PTX and the cudarc harness, then runs the device
//! suite here, or writes a bundle that runs on a GPU machine without Rust.

use std::path::Path;

use xshell::{Shell, cmd};

use crate::device::{self, Verdict};
use crate::example;
use crate::gpu::{self, NVPTX};
use crate::util::Result;

/// The bundle's run script: a deliberately invalid module (the harness must fail with the setup
/// status), the suite, the suite under synccheck (reduced item counts), the sm_90a assembly of
/// the module, the SASS of the barrier probes, and the examples: the kernel crate's launcher and
/// the GEMM example (`@EXAMPLE@`, [`example::RUN_SH_SECTION`]). Logs go to `$OUT` if set, else to `out/` beside
/// the script. `@SETUP@`, `@NO_DRIVER@`, `@EXAMPLE@`, `@GEMM@` (the GEMM's test and its check
/// against cuBLAS, [`crate::gemm_kernel::run_sh_section`]) and `@HOPPER@` (the toolkit's device
/// tests, [`crate::hopper::RUN_SH_SECTION`]) are filled in by [`run_sh`].
const RUN_SH: &str = r#"#!/usr/bin/env bash
# The gpu-pipeline device suite, self-contained: needs an NVIDIA driver, cuBLAS (CUDA 13:
# libcublas.so.13, libcublasLt.so.13) for the GEMM's check against it, and CUDA's
# compute-sanitizer, ptxas and cuobjdump for the extra checks (skipped, and said so, when absent).
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-$here/out}
mkdir -p "$out"
status=0
{
  echo "commit: $(cat "$here/COMMIT")"
  echo "date:   $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.sm --format=csv 2>&1 || echo "nvidia-smi: not available"
} | tee "$out/machine.txt"

echo "== a module the driver rejects fails the harness (exit @SETUP@, CUDA setup error; not @NO_DRIVER@, no driver; not 0)"
# CI machines without a GPU may skip the suite only when the harness says "no driver"; this proves
# on the GPU that a rejected module is a failure with its own status, never that skip.
printf '.version 99.0\n.target sm_90\n.address_size 64\nthis is not PTX\n' > "$out/invalid.ptx"
timeout -k 10 60 "$here/pipeline-harness" --ptx "$out/invalid.ptx" >"$out/invalid_ptx.log" 2>&1
rc=$?
if [ $rc -eq @SETUP@ ]; then
  echo "PASS invalid module: exit $rc: $(tail -n 1 "$out/invalid_ptx.log")"
else
  echo "FAIL invalid module: the harness exited $rc, expected @SETUP@ (CUDA setup error):"
  cat "$out/invalid_ptx.log"
  status=1
fi
rm -f "$out/invalid.ptx"

echo "== device suite"
# Every run is bounded: a hung kernel must never hold the machine.
timeout -k 10 180 "$here/pipeline-harness" --ptx "$here/pipeline_kernels.ptx" "$@" 2>&1 | tee "$out/suite.log"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1

@EXAMPLE@

@GEMM@

@HOPPER@

@ATTENTION@

echo "== device suite, checked build (hang diagnostics on: bounded waits, arrival shadows; quick)"
timeout -k 10 180 "$here/pipeline-harness" --ptx "$here/pipeline_kernels_checked.ptx" --quick 2>&1 | tee "$out/suite_checked.log"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1

echo "== broken kernels, checked build: each must end within 1 s with the right diagnosis"
timeout -k 10 300 "$here/pipeline-harness" --ptx "$here/pipeline_kernels_checked.ptx" --broken 2>&1 | tee "$out/broken.log"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1

echo "== device suite under compute-sanitizer --tool synccheck (quick: reduced item counts)"
if command -v compute-sanitizer >/dev/null; then
  timeout -k 10 240 compute-sanitizer --tool synccheck --error-exitcode 9 "$here/pipeline-harness" --ptx "$here/pipeline_kernels.ptx" --quick --timeout-s 60 >"$out/synccheck.log" 2>&1
  rc=$?
  tail -n 4 "$out/synccheck.log"
  [ $rc -eq 0 ] || { echo "synccheck run failed (exit $rc)"; status=1; }
else
  echo "SKIPPED: compute-sanitizer not found"
fi

echo "== ptxas -arch=sm_90a and the SASS of the barrier probes"
if command -v ptxas >/dev/null && command -v cuobjdump >/dev/null; then
  if timeout 120 ptxas -arch=sm_90a "$here/pipeline_kernels.ptx" -o "$out/kernels_sm90a.cubin" 2>"$out/ptxas.log"; then
    echo "ptxas: the module assembles for sm_90a"
    cuobjdump --dump-sass "$out/kernels_sm90a.cubin" > "$out/sass_all.txt"
    awk '/Function : probe_/{p=1} /Function : [^p]/{p=0} p' "$out/sass_all.txt" > "$out/sass_probes.txt"
    echo "SASS of the probes written ($(grep -c 'Function : probe_' "$out/sass_probes.txt") functions)"
    rm -f "$out/sass_all.txt" "$out/kernels_sm90a.cubin"
  else
    cat "$out/ptxas.log"; echo "ptxas rejected the module"; status=1
  fi
else
  echo "SKIPPED: ptxas/cuobjdump not found"
fi

echo "== ptxas -arch=sm_100a: commit_mma (tcgen05.commit) assembles for Blackwell (not runnable on this GPU)"
if command -v ptxas >/dev/null && command -v cuobjdump >/dev/null; then
  if timeout 120 ptxas -arch=sm_100a "$here/pipeline_kernels_sm100a.ptx" -o "$out/kernels_sm100a.cubin" 2>"$out/ptxas_sm100a.log"; then
    echo "ptxas: the sm_100a module assembles"
    cuobjdump --dump-sass "$out/kernels_sm100a.cubin" | awk '/Function : probe_commit_mma/{p=1} /Function : [^p]/{p=0} /Function : probe_[^c]/{p=0} p' > "$out/sass_sm100a_commit_mma.txt"
    grep -E "Function|UTCBAR|ELECT" "$out/sass_sm100a_commit_mma.txt" | sed 's@/\*[^*]*\*/@@g' | head -20
    rm -f "$out/kernels_sm100a.cubin"
  else
    cat "$out/ptxas_sm100a.log"; echo "ptxas rejected the sm_100a module"; status=1
  fi
else
  echo "SKIPPED: ptxas/cuobjdump not found"
fi
exit $status
"#;

/// The bundle's run script: [`assembled`] with each section named ([`SECTIONS`]), so that
/// `ONLY=NAME[,NAME...]` runs those alone (`ONLY=list` prints the names; a name not among them
/// is an error that lists them, exit 2), and each section ends with the seconds elapsed.
fn run_sh() -> String {
    sections(&assembled())
}

/// Each section's name, by the start of its title (the text after `echo "== `); the longest
/// matching start names a section, and every section has one ([`sections`] panics otherwise,
/// and a test builds the script).
const SECTIONS: [(&str, &str); 25] = [
    ("a module the driver rejects", "invalid-module"),
    ("device suite", "pipeline"),
    ("examples/kernel-crate", "example"),
    ("examples/gemm", "gemm-example"),
    ("examples/attention", "attention-example"),
    ("gpu-gemm: the bf16 GEMM", "gemm"),
    ("gpu-gemm: the programmatic chains", "gemm-unwaited"),
    ("gpu-gemm: the step kernels", "gemm-steps"),
    ("gpu-gemm: every kernel", "gemm-check"),
    ("gpu-gemm under compute-sanitizer", "gemm-sanitizers"),
    ("gpu-hopper: the toolkit's leaves", "hopper"),
    ("gpu-hopper: the named turns", "hopper-turns"),
    ("gpu-hopper: broken kernels", "hopper-broken"),
    ("gpu-hopper: ptxas", "hopper-ptxas"),
    ("gpu-attention: every case against", "attention"),
    (
        "gpu-attention: every case on the checked build",
        "attention-checked",
    ),
    ("gpu-attention: against torch's SDPA", "attention-sdpa"),
    (
        "gpu-attention: the programmatic chains",
        "attention-unwaited",
    ),
    ("gpu-attention: ptxas", "attention-ptxas"),
    (
        "gpu-attention under compute-sanitizer",
        "attention-sanitizers",
    ),
    ("device suite, checked build", "pipeline-checked"),
    ("broken kernels, checked build", "pipeline-broken"),
    ("device suite under compute-sanitizer", "pipeline-synccheck"),
    ("ptxas -arch=sm_90a and the SASS", "pipeline-ptxas"),
    ("ptxas -arch=sm_100a", "pipeline-sm100a"),
];

/// The name of the section titled `title` ([`SECTIONS`]: the longest matching start).
fn section_name(title: &str) -> Option<&'static str> {
    SECTIONS
        .iter()
        .filter(|(start, _)| title.starts_with(start))
        .max_by_key(|(start, _)| start.len())
        .map(|&(_, name)| name)
}

/// `script` with every section (from a line `echo "== TITLE"` at the start of a line to the
/// next, or to the closing `exit $status`) inside `if want NAME; then ... fi`, and the `ONLY`
/// selection after the preamble (the lines before the first section).
fn sections(script: &str) -> String {
    const MARK: &str = "echo \"== ";
    let names: Vec<&str> = SECTIONS.iter().map(|&(_, name)| name).collect();
    let mut out = String::new();
    let mut open: Option<&str> = None;
    let mut seen = Vec::new();
    for line in script.lines() {
        let title = line.strip_prefix(MARK);
        if (title.is_some() || line == "exit $status")
            && let Some(name) = open.take()
        {
            out += &format!("echo \"-- {name}: done at ${{SECONDS}} s\"\nfi\n\n");
        }
        if let Some(title) = title {
            let name = section_name(title)
                .unwrap_or_else(|| panic!("run.sh's section `{title}` has no name in SECTIONS"));
            assert!(!seen.contains(&name), "two sections named {name}");
            if seen.is_empty() {
                out += &format!(
                    r#"# ONLY=NAME[,NAME...] runs those sections alone; ONLY=list prints the names.
sections="{}"
only=",${{ONLY:-all}},"
if [ "$only" = ",list," ]; then echo "$sections" | tr ' ' '\n'; exit 0; fi
for name in $(echo "${{ONLY:-all}}" | tr ',' ' '); do
  case " all $sections " in *" $name "*) ;; *) echo "error: ONLY names no section \`$name\`; the sections: $sections" >&2; exit 2;; esac
done
want() {{ case "$only" in ,all,|*",$1,"*) return 0;; *) return 1;; esac; }}

"#,
                    names.join(" ")
                );
            }
            seen.push(name);
            out += &format!("if want {name}; then\n");
            open = Some(name);
        }
        // A section's blank lines are left out (its end is followed by one).
        if !(open.is_some() && line.is_empty()) {
            out += line;
            out += "\n";
        }
    }
    assert!(
        open.is_none(),
        "run.sh ends inside a section (no `exit $status`)"
    );
    assert_eq!(
        seen.len(),
        names.len(),
        "SECTIONS names a section run.sh does not have: {:?}",
        names
            .iter()
            .filter(|n| !seen.contains(n))
            .collect::<Vec<_>>()
    );
    out
}

/// [`RUN_SH`] with the harness's exit statuses filled in from `pipeline_suite::exit`, and the
/// example's section.
fn assembled() -> String {
    use pipeline_suite::exit;
    RUN_SH
        .replace("@SETUP@", &exit::SETUP.to_string())
        .replace("@NO_DRIVER@", &exit::NO_DRIVER.to_string())
        .replace("@EXAMPLE@", example::RUN_SH_SECTION)
        .replace("@GEMM@", &crate::gemm_kernel::run_sh_section())
        .replace("@HOPPER@", crate::hopper::RUN_SH_SECTION)
        .replace("@ATTENTION@", &crate::attention::run_sh_section())
}

/// Builds the PTX, the harness (release), the examples (the kernel crate with its launcher, the
/// GEMM example), the GEMM's test and benchmark (for its `--check` pass), and the toolkit's test
/// module and binary, and returns the harness path.
fn build(sh: &Shell) -> Result<std::path::PathBuf> {
    example::build(sh)?;
    gpu::build(sh, &NVPTX)?;
    gpu::build_checked(sh)?;
    gpu::build(sh, &gpu::NVPTX_SM100A)?;
    crate::gemm_kernel::build(sh)?;
    crate::gemm_kernel::build_unwaited(sh)?;
    crate::hopper::build(sh)?;
    crate::hopper::build_test(sh)?;
    crate::attention::build(sh)?;
    crate::attention::build_unwaited(sh)?;
    crate::attention::build_checked(sh)?;
    crate::attention::build_test(sh)?;
    let commit = device::commit(sh);
    cmd!(sh, "cargo build --release -p gemm-test")
        .run()
        .map_err(|_| "building the GEMM test failed (above)".to_string())?;
    cmd!(sh, "cargo build --release -p pipeline-harness")
        .env("GPU_PIPELINE_COMMIT", &commit)
        .run()
        .map_err(|_| "building the harness failed (above)".to_string())?;
    // The GEMM's correctness pass against cuBLAS (`gemm-bench --check`).
    crate::gemm_kernel::build_bench(sh)?;
    Ok(crate::util::root().join("target/release/pipeline-harness"))
}

/// Writes the self-contained suite bundle into `dir`.
fn bundle(sh: &Shell, harness: &Path, dir: &Path) -> Result {
    let files = [
        (harness.to_path_buf(), "pipeline-harness"),
        (NVPTX.kernels_artifact(), "pipeline_kernels.ptx"),
        (
            gpu::NVPTX_SM100A.kernels_artifact(),
            "pipeline_kernels_sm100a.ptx",
        ),
        (gpu::checked_artifact(), "pipeline_kernels_checked.ptx"),
    ];
    let files: Vec<_> = files
        .into_iter()
        .chain(example::bundle_files())
        .chain(crate::gemm_kernel::bundle_files())
        .chain(crate::hopper::bundle_files())
        .chain(crate::attention::bundle_files())
        .collect();
    device::write_bundle(sh, dir, &files, "run.sh", &run_sh())?;
    println!(
        "bundle written to {}: run `{}/run.sh` on a machine with an NVIDIA GPU and cuBLAS (no Rust needed)",
        dir.display(),
        dir.display()
    );
    Ok(())
}

/// The task. `ci`: a missing CUDA driver (and only that) is a SKIPPED line, not an error; see
/// [`device::verdict`].
pub fn test(
    sh: &Shell,
    bundle_dir: Option<&Path>,
    quick: bool,
    filter: Option<&str>,
    ci: bool,
) -> Result {
    let harness = build(sh)?;
    if let Some(dir) = bundle_dir {
        return bundle(sh, &harness, dir);
    }
    let unchecked = NVPTX.kernels_artifact().display().to_string();
    let checked = gpu::checked_artifact().display().to_string();
    // The suite; the suite on the checked build (no false alarms); the broken kernels.
    let runs: [(&str, &str, &[&str]); 3] = [
        ("device suite", &unchecked, &[]),
        ("device suite, checked build", &checked, &["--quick"]),
        ("broken kernels, checked build", &checked, &["--broken"]),
    ];
    for (what, ptx, extra) in runs {
        let mut args = vec!["--ptx".to_string(), ptx.to_string()];
        args.extend(extra.iter().map(|a| a.to_string()));
        if quick && !args.iter().any(|a| a == "--quick" || a == "--broken") {
            args.push("--quick".into());
        }
        if let Some(filter) = filter {
            args.extend(["--filter".to_string(), filter.to_string()]);
        }
        println!("== {what}");
        let output = cmd!(sh, "{harness} {args...}")
            .ignore_status()
            .quiet()
            .output()
            .map_err(crate::util::err("cannot run the harness"))?;
        print!("{}", String::from_utf8_lossy(&output.stdout));
        let stderr = String::from_utf8_lossy(&output.stderr);
        match device::verdict(what, output.status.code(), &stderr, ci) {
            Verdict::Passed => {}
            Verdict::Skipped(reason) => {
                // The other runs need the driver too.
                println!(
                    "test-nvidia: SKIPPED: {reason} (the harness and PTX were built; the checked-build suite and the broken kernels are skipped too)"
                );
                // The example's launcher, the GEMM test and the toolkit's test too: each must
                // reach the same verdict on its own.
                example::run(sh, ci)?;
                crate::gemm_kernel::run(sh, ci)?;
                crate::hopper::run(sh, ci)?;
                return crate::attention::run(sh, ci);
            }
            Verdict::Failed(message) => return Err(message),
        }
    }
    example::run(sh, ci)?;
    crate::gemm_kernel::run(sh, ci)?;
    crate::hopper::run(sh, ci)?;
    crate::attention::run(sh, ci)
}

#[cfg(test)]
mod tests {
    use super::{assembled, run_sh};
    use pipeline_suite::exit;

    /// Runs the bundle's script with `bash` and `ONLY=only` in an empty folder (no binary
    /// beside it): its exit status, stdout and stderr.
    fn run_only(only: &str) -> (Option<i32>, String, String) {
        let dir = std::env::temp_dir().join(format!("run-sh-{}-{only}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("run.sh"), run_sh()).unwrap();
        std::fs::write(dir.join("COMMIT"), "test").unwrap();
        let output = std::process::Command::new("bash")
            .arg(dir.join("run.sh"))
            .env("ONLY", only)
            .env("OUT", dir.join("out"))
            .output()
            .expect("bash runs");
        std::fs::remove_dir_all(&dir).unwrap();
        (
            output.status.code(),
            String::from_utf8_lossy(&output.stdout).into(),
            String::from_utf8_lossy(&output.stderr).into(),
        )
    }

    #[test]
    fn run_sh_parses_and_names_every_section_once() {
        let script = run_sh();
        let check = std::process::Command::new("bash")
            .args(["-n", "-c", &script])
            .output()
            .expect("bash runs");
        assert!(
            check.status.success(),
            "{}",
            String::from_utf8_lossy(&check.stderr)
        );
        let sections = assembled()
            .lines()
            .filter(|l| l.starts_with("echo \"== "))
            .count();
        assert_eq!(sections, super::SECTIONS.len());
        assert_eq!(script.matches("\nif want ").count(), sections);
        for (_, name) in super::SECTIONS {
            assert!(
                script.contains(&format!("\nif want {name}; then\n")),
                "{name}"
            );
        }
        // Every line of the assembled script is in the sectioned one, in order.
        let mut rest = script.as_str();
        for line in assembled().lines().filter(|l| !l.is_empty()) {
            let at = rest
                .find(line)
                .unwrap_or_else(|| panic!("`{line}` lost or moved"));
            rest = &rest[at + line.len()..];
        }
    }

    #[test]
    fn only_lists_the_sections_refuses_an_unknown_one_and_runs_the_named_alone() {
        let (code, stdout, _) = run_only("list");
        assert_eq!(code, Some(0));
        let listed: Vec<&str> = stdout
            .lines()
            .skip_while(|l| !l.starts_with("invalid-module"))
            .collect();
        let names: Vec<&str> = super::SECTIONS.iter().map(|&(_, n)| n).collect();
        assert_eq!(listed, names, "{stdout}");
        let (code, _, stderr) = run_only("gemm,gemmm");
        assert_eq!(code, Some(2), "{stderr}");
        assert!(stderr.contains("ONLY names no section `gemmm`"), "{stderr}");
        assert!(stderr.contains("pipeline-sm100a"), "{stderr}");
        // One section alone (no binary here: it fails, and nothing else runs).
        let (code, stdout, _) = run_only("example");
        assert_eq!(code, Some(1), "{stdout}");
        assert!(stdout.contains("== examples/kernel-crate"), "{stdout}");
        assert!(stdout.contains("-- example: done at "), "{stdout}");
        assert_eq!(
            stdout.matches("\n== ").count() + usize::from(stdout.starts_with("== ")),
            1,
            "{stdout}"
        );
    }

    #[test]
    fn run_sh_requires_the_setup_status_for_an_invalid_module() {
        let script = run_sh();
        for placeholder in [
            "@SETUP@",
            "@NO_DRIVER@",
            "@EXAMPLE@",
            "@GEMM@",
            "@HOPPER@",
            "@ATTENTION@",
        ] {
            assert!(super::RUN_SH.contains(placeholder), "{placeholder}");
            assert!(!script.contains(placeholder), "{placeholder} left unfilled");
        }
        assert!(script.contains(".version 99.0"));
        assert!(script.contains(&format!("if [ $rc -eq {} ]; then", exit::SETUP)));
        assert!(script.contains("status=1"));
        assert_ne!(exit::SETUP, exit::NO_DRIVER);
        assert_ne!(exit::SETUP, exit::PASSED);
    }

    #[test]
    fn run_sh_runs_the_example_and_fails_unless_it_passes() {
        let script = assembled();
        assert!(script.contains(crate::example::RUN_SH_SECTION));
        // Between the suite and the checked build, inside the run (before `exit $status`).
        let example = script.find("$here/example-launcher").unwrap();
        assert!(script.find("echo \"== device suite\"\n").unwrap() < example);
        assert!(example < script.find("exit $status").unwrap());
    }

    #[test]
    fn run_sh_runs_the_gemm_test_and_its_check_against_cublas() {
        let script = assembled();
        assert!(script.contains(&crate::gemm_kernel::run_sh_section()));
        let test = script.find("\"$here/gemm-test\"").unwrap();
        let check = script.find("\"$here/gemm-bench\" --check").unwrap();
        assert!(test < check);
        assert!(check < script.find("exit $status").unwrap());
    }

    #[test]
    fn run_sh_runs_the_toolkit_tests_after_the_gemm_and_fails_unless_they_pass() {
        let script = assembled();
        assert!(script.contains(crate::hopper::RUN_SH_SECTION));
        let test = script.find("\"$here/hopper-test\"").unwrap();
        assert!(script.find("\"$here/gemm-test\"").unwrap() < test);
        assert!(test < script.find("exit $status").unwrap());
    }
}
