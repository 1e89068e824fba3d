//! Snapshots of the machine code of each barrier operation (the `probe_*` kernels).
//!
//! `tests/snapshots/<target>/<probe>.<ext>` holds the normalised PTX (nvptx) or disassembly (amdgcn)
//! of one probe. `check` compares, `--bless` rewrites. Normalisation removes what changes without
//! meaning: comments, label and anonymous-symbol numbering, addresses and encodings.

use std::collections::BTreeMap;
use std::path::PathBuf;

use xshell::{Shell, cmd};

use crate::gpu::{GpuTarget, NVPTX};
use crate::util::Result;

fn snapshot_dir(target: &str) -> PathBuf {
    crate::util::root().join("tests/snapshots").join(target)
}

/// Replaces every run of decimal digits that follows `prefix` with `N`.
fn renumber(line: &str, prefix: &str) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(at) = rest.find(prefix) {
        out.push_str(&rest[..at + prefix.len()]);
        rest = &rest[at + prefix.len()..];
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if digits > 0 {
            out.push('N');
            rest = &rest[digits..];
        }
    }
    out.push_str(rest);
    out
}

/// Replaces the anonymous shared-memory symbols (`anon_$_<hex hash>_$_<n>`) with `DYNAMIC_SMEM`.
fn anonymous_symbols(line: &str) -> String {
    let Some(at) = line.find("anon_$_") else {
        return line.to_string();
    };
    let after_hash = line[at + 7..].trim_start_matches(|c: char| c.is_ascii_hexdigit());
    let Some(after_sep) = after_hash.strip_prefix("_$_") else {
        return line.to_string();
    };
    let tail = after_sep.trim_start_matches(|c: char| c.is_ascii_digit());
    format!("{}DYNAMIC_SMEM{}", &line[..at], anonymous_symbols(tail))
}

/// Splits a PTX module into its `probe_*` entries, normalised.
pub fn ptx_probes(ptx: &str) -> BTreeMap<String, String> {
    let mut probes = BTreeMap::new();
    let mut current: Option<(String, String)> = None;
    // Braces alone on a line open and close the function body and inline-assembly scopes.
    let mut depth = 0;
    for line in ptx.lines() {
        if let Some(rest) = line.strip_prefix(".visible .entry probe_") {
            let name = format!("probe_{}", rest.trim_end_matches('('));
            current = Some((name, String::new()));
            depth = 0;
        }
        let Some((_, body)) = current.as_mut() else {
            continue;
        };
        let code = line.split("//").next().unwrap_or_default().trim_end();
        if !code.trim().is_empty() {
            let code = anonymous_symbols(&renumber(code, "$L__BB"));
            body.push_str(&code);
            body.push('\n');
        }
        match line.trim() {
            "{" => depth += 1,
            "}" => {
                depth -= 1;
                if depth == 0 {
                    let (name, body) = current.take().expect("inside an entry");
                    probes.insert(name, body);
                }
            }
            _ => {}
        }
    }
    probes
}

/// Disassembles an AMD code object (`llvm-objdump`, no addresses or encodings).
pub fn amd_disassembly(sh: &Shell, target: &GpuTarget, elf: &std::path::Path) -> Result<String> {
    let objdump = crate::toolchain::llvm_bin(sh)?.join("llvm-objdump");
    let mcpu = format!("--mcpu={}", target.cpu);
    cmd!(
        sh,
        "{objdump} -d {mcpu} --no-show-raw-insn --no-leading-addr {elf}"
    )
    .quiet()
    .read()
    .map_err(crate::util::err("llvm-objdump failed"))
}

/// Splits an AMD disassembly (from [`amd_disassembly`]) into its `probe_*` functions, normalised.
pub fn amd_probes(text: &str) -> BTreeMap<String, String> {
    let mut probes = BTreeMap::new();
    let mut current: Option<(String, String)> = None;
    for line in text.lines() {
        if let Some(name) = line.strip_prefix('<').and_then(|l| l.strip_suffix(">:")) {
            if let Some((done, body)) = current.take() {
                probes.insert(done, body);
            }
            if name.starts_with("probe_") {
                current = Some((name.to_string(), String::new()));
            }
            continue;
        }
        let Some((_, body)) = current.as_mut() else {
            continue;
        };
        let code = line.split("//").next().unwrap_or_default().trim();
        if !code.is_empty() && code != "..." && !code.starts_with("s_code_end") {
            body.push_str(&renumber(code, "<probe_"));
            body.push('\n');
        }
    }
    if let Some((done, body)) = current.take() {
        probes.insert(done, body);
    }
    probes
}

/// Compares (or, with `bless`, writes) the snapshots of one target.
pub fn compare(
    sh: &Shell,
    target: &str,
    extension: &str,
    probes: &BTreeMap<String, String>,
    bless: bool,
) -> Result {
    let dir = snapshot_dir(target);
    if probes.is_empty() {
        return Err(format!("no probe_* functions found for {target}"));
    }
    if bless {
        let _ = sh.remove_path(&dir);
        sh.create_dir(&dir)
            .map_err(crate::util::err("create snapshot dir"))?;
        for (name, body) in probes {
            sh.write_file(dir.join(format!("{name}.{extension}")), body)
                .map_err(crate::util::err("write snapshot"))?;
        }
        println!("  blessed {} snapshots in {}", probes.len(), dir.display());
        return Ok(());
    }
    let mut problems = Vec::new();
    for (name, body) in probes {
        let path = dir.join(format!("{name}.{extension}"));
        match std::fs::read_to_string(&path) {
            Ok(committed) if committed == *body => {}
            Ok(committed) => problems.push(format!(
                "{name}: the {target} code changed\n--- committed\n{committed}--- now\n{body}"
            )),
            Err(_) => problems.push(format!("{name}: no snapshot at {}", path.display())),
        }
    }
    let known: Vec<_> = sh.read_dir(&dir).unwrap_or_default();
    for path in known {
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        if !probes.contains_key(&stem) {
            problems.push(format!("{stem}: a snapshot exists but the probe is gone"));
        }
    }
    if problems.is_empty() {
        println!(
            "  {target}: {} barrier-operation snapshots match",
            probes.len()
        );
        Ok(())
    } else {
        Err(format!(
            "{} snapshot(s) of {target} differ; review, then `cargo xtask {} --bless`:\n{}",
            problems.len(),
            if target == NVPTX.cpu {
                "test"
            } else {
                "test-amd"
            },
            problems.join("\n")
        ))
    }
}

/// Collective instructions whose `.aligned` form must not come from inline assembly: LLVM does not
/// treat inline assembly as `convergent` and may duplicate it into divergent paths, where an
/// `.aligned` collective is undefined (a hang was seen). Convergent LLVM intrinsics (`bar.sync` from
/// `_syncthreads`) are not affected.
const ALIGNED_COLLECTIVES_FROM_ASM: [&str; 1] = ["barrier.cluster"];

/// Fails if the module contains an `.aligned` form of a collective written as inline assembly.
fn check_no_aligned_asm_collectives(ptx: &str) -> Result {
    for line in ptx.lines() {
        let line = line.trim();
        if ALIGNED_COLLECTIVES_FROM_ASM
            .iter()
            .any(|c| line.starts_with(c))
            && line.contains(".aligned")
        {
            return Err(format!(
                "the PTX contains `{line}`: an .aligned collective from inline assembly (see xtask/src/snapshots.rs)"
            ));
        }
    }
    println!("  no .aligned collective from inline assembly");
    Ok(())
}

/// Checks the PTX snapshots of the nvptx build (which must exist).
pub fn check_nvptx(sh: &Shell, bless: bool) -> Result {
    println!("PTX snapshots of the barrier operations:");
    let ptx = sh
        .read_file(NVPTX.kernels_artifact())
        .map_err(crate::util::err(
            "read the kernels' PTX (run `cargo xtask build`)",
        ))?;
    check_no_aligned_asm_collectives(&ptx)?;
    compare(sh, NVPTX.cpu, "ptx", &ptx_probes(&ptx), bless)
}
