//! `cargo xtask test-amd`: AMD builds, disassembly checks and snapshots, the counter protocol's
//! host model, and the device suite where a ROCm runtime exists.

use std::path::Path;

use xshell::{Shell, cmd};

use crate::gpu::{AMD, GpuTarget};
use crate::snapshots;
use crate::util::Result;

/// Cache-maintenance instructions that must never appear in pipeline paths: LDS needs none, and
/// these act at agent or system scope (CDNA3 ISA / RDNA3 ISA, "Memory" chapters). The one
/// invalidation allowed is gfx11's `buffer_gl0_inv` right after an acquire read of a counter
/// ([`acquire_invalidation`]).
const FORBIDDEN: [&str; 5] = [
    "buffer_wbl2",
    "buffer_inv",
    "buffer_gl1_inv",
    "buffer_wbinvl1",
    "flat_",
];

/// Whether, walking back from `at` along straight-line code (through forward `s_cbranch_*`
/// skips, stopping at an unconditional branch, a function entry or 32 instructions), an
/// `s_waitcnt ... lgkmcnt(0)` is met before any LDS store: the data-before-signal fence.
fn fenced_before(lines: &[&str], at: usize) -> bool {
    for line in lines[..at].iter().rev().take(32) {
        if line.starts_with("s_waitcnt") && line.contains("lgkmcnt(0)") {
            return true;
        }
        let lds_store = line.starts_with("ds_write") || line.starts_with("ds_store");
        if lds_store
            || line.starts_with("s_branch")
            || line.starts_with("s_endpgm")
            || line.starts_with('<')
        {
            return false;
        }
    }
    false
}

/// Whether the `buffer_gl0_inv` at `at` completes the acquire of a counter read: LLVM's
/// work-group-scope acquire on gfx11 in WGP mode is the read, `s_waitcnt lgkmcnt(0)`, then
/// `buffer_gl0_inv` (*AMDGPUUsage*, "Memory Model GFX11", `load atomic acquire workgroup`), so
/// walking back over straight-line code must meet an LDS 64-bit read within a few instructions.
fn acquire_invalidation(lines: &[&str], at: usize) -> bool {
    for line in lines[..at].iter().rev().take(6) {
        if line.starts_with("ds_load_b64") || line.starts_with("ds_read_b64") {
            return true;
        }
        if line.starts_with("s_branch") || line.starts_with("s_cbranch") || line.starts_with('<') {
            return false;
        }
    }
    false
}

/// The checks on one target's disassembly; returns what was asserted.
fn check_disassembly(target: &GpuTarget, text: &str) -> Result<Vec<String>> {
    let lines: Vec<&str> = text
        .lines()
        .map(|l| l.split("//").next().unwrap_or_default().trim())
        .filter(|l| !l.is_empty())
        .collect();
    // `lines` keeps the `<function>:` headers, so that the walk-back of `fenced_before` stops at them.
    let mut asserted = Vec::new();

    for forbidden in FORBIDDEN {
        if let Some(line) = lines.iter().find(|l| l.starts_with(forbidden)) {
            return Err(format!(
                "{}: forbidden instruction in the kernels: `{line}`",
                target.cpu
            ));
        }
    }
    let invalidations: Vec<usize> = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l.starts_with("buffer_gl0_inv"))
        .map(|(i, _)| i)
        .collect();
    for &at in &invalidations {
        if !target.cpu.starts_with("gfx11") || !acquire_invalidation(&lines, at) {
            let context = lines[at.saturating_sub(6)..=at].join("\n    ");
            return Err(format!(
                "{}: buffer_gl0_inv that is not the gfx11 acquire of a counter read:\n    {context}",
                target.cpu
            ));
        }
    }
    asserted.push(if invalidations.is_empty() {
        "no flat_* access (every counter and slot access is ds_*), no buffer_wbl2/buffer_inv/gl0/gl1 cache maintenance".into()
    } else {
        format!("no flat_* access (every counter and slot access is ds_*), no buffer_wbl2/buffer_inv/gl1 cache maintenance; {} buffer_gl0_inv, each the WGP-mode acquire right after a counter read", invalidations.len())
    });

    let adds: Vec<usize> = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l.starts_with("ds_add_u64"))
        .map(|(i, _)| i)
        .collect();
    if adds.is_empty() {
        return Err(format!(
            "{}: no ds_add_u64 at all: the counter arrive is not an LDS atomic",
            target.cpu
        ));
    }
    for &at in &adds {
        if !fenced_before(&lines, at) {
            let context = lines[at.saturating_sub(6)..=at].join("\n    ");
            return Err(format!(
                "{}: a ds_add_u64 not preceded by s_waitcnt lgkmcnt(0) (with no LDS store in between):\n    {context}",
                target.cpu
            ));
        }
    }
    asserted.push(format!("all {} ds_add_u64 (counter arrivals) follow an s_waitcnt lgkmcnt(0) with no LDS store in between", adds.len()));

    let atomics: Vec<&&str> = lines
        .iter()
        .filter(|l| {
            l.starts_with("ds_")
                && (l.contains("_rtn") || l.contains("cmpst") || l.contains("wrxchg"))
        })
        .collect();
    if let Some(line) = atomics.first() {
        return Err(format!(
            "{}: unexpected returning LDS atomic `{line}`",
            target.cpu
        ));
    }
    asserted.push("no returning or compare-and-swap LDS atomics".into());
    Ok(asserted)
}

/// The checks on the probes: one wave-aggregated atomic per arrive, reads in the wait loop,
/// `s_sleep` only with a ticks hint.
fn check_probes(
    target: &GpuTarget,
    probes: &std::collections::BTreeMap<String, String>,
) -> Result<Vec<String>> {
    let get = |name: &str| {
        probes
            .get(name)
            .ok_or_else(|| format!("{}: probe {name} missing", target.cpu))
    };
    let arrive = get("probe_counter_arrive")?;
    if arrive.matches("ds_add_u64").count() != 1 || !arrive.contains("s_bcnt1_i32_b") {
        return Err(format!(
            "{}: the arrive must be one ds_add_u64 of the active-lane count (s_bcnt1):\n{arrive}",
            target.cpu
        ));
    }
    // Lanes on different counters: the arrive loops over the distinct counters (the first
    // remaining lane's address by `v_readfirstlane_b32`, its peers by a compare into a lane mask),
    // and each counter's lowest lane adds the count of its peers (`*_bcnt*`): one ds_add_u64
    // instruction, never one add of the whole wave's count on one lane's counter.
    let split = get("probe_counter_arrive_split")?;
    if split.matches("ds_add_u64").count() != 1
        || !split.contains("v_readfirstlane_b32")
        || !split.contains("_bcnt")
        || !split.contains("s_cbranch_execnz")
    {
        return Err(format!(
            "{}: the split arrive must loop over distinct counters (v_readfirstlane_b32 in a loop, the peers' count by *_bcnt*, one ds_add_u64):\n{split}",
            target.cpu
        ));
    }
    let wait = get("probe_counter_wait")?;
    if !(wait.contains("ds_read_b64") || wait.contains("ds_load_b64")) || wait.contains("s_sleep") {
        return Err(format!(
            "{}: the wait must poll with ds_read_b64 and no s_sleep:\n{wait}",
            target.cpu
        ));
    }
    let ticks = get("probe_counter_wait_ticks")?;
    if !ticks.contains("s_sleep 1") {
        return Err(format!(
            "{}: the wait with a ticks hint must back off with s_sleep 1:\n{ticks}",
            target.cpu
        ));
    }
    let init = get("probe_counter_init")?;
    if !init.contains("s_waitcnt lgkmcnt(0)") {
        return Err(format!(
            "{}: init must end with s_waitcnt lgkmcnt(0):\n{init}",
            target.cpu
        ));
    }
    Ok(vec![
        "arrive = s_bcnt1 of EXEC + one ds_add_u64 by the first active lane".into(),
        "split arrive (lanes on two counters) = a loop over distinct counters (v_readfirstlane_b32), the peers' count by *_bcnt*, one ds_add_u64".into(),
        "wait polls ds_read_b64 without s_sleep; with a ticks hint, s_sleep 1 between polls".into(),
        "init ends with s_waitcnt lgkmcnt(0)".into(),
    ])
}

/// Mangled-name parts of the checked build's slow paths, which run only after a wait's first
/// probe failed: the reporting functions (the record writer and a half's guard), the bounded
/// polling loop, and the probe closures of a guarded wait, which it calls out of line.
const SLOW_PATHS: [&str; 4] = [
    "7checked7runtime4fail",
    "5guard4fail",
    "9slow_wait",
    "5Guard4wait",
];

/// The checked build (hang diagnostics): the clock is the real-time counter, a hang ends in
/// `s_trap 2`, and `flat_*` accesses (generic pointers) appear only in the slow paths
/// ([`SLOW_PATHS`]), never in a kernel's own code.
fn check_checked_disassembly(target: &GpuTarget, text: &str) -> Result<Vec<String>> {
    let clock = if target.cpu.starts_with("gfx11") {
        "sendmsg(MSG_RTN_GET_REALTIME)"
    } else {
        "s_memrealtime"
    };
    if !text.contains(clock) {
        return Err(format!(
            "{}: checked build: no `{clock}` (the wait budget's clock)",
            target.cpu
        ));
    }
    if !text.contains("s_trap 2") {
        return Err(format!(
            "{}: checked build: no `s_trap 2` (how a hang ends)",
            target.cpu
        ));
    }
    let mut function = String::new();
    for line in text.lines() {
        if let Some(name) = line.strip_prefix('<').and_then(|l| l.strip_suffix(">:")) {
            function = name.to_string();
        } else if line.trim_start().starts_with("flat_")
            && !SLOW_PATHS.iter().any(|name| function.contains(name))
        {
            return Err(format!(
                "{}: checked build: `{}` outside the reporting paths, in {function}",
                target.cpu,
                line.trim()
            ));
        }
    }
    Ok(vec![format!(
        "checked build: `{clock}` clock, `s_trap 2`, flat_* only in the slow paths (after a failed probe)"
    )])
}

/// A ROCm runtime on this machine, if any.
fn rocm_runtime() -> Option<&'static str> {
    ["/dev/kfd", "/opt/rocm/lib/libamdhip64.so"]
        .into_iter()
        .find(|p| Path::new(p).exists())
}

/// The whole task.
pub fn test(sh: &Shell, bless: bool) -> Result {
    println!(
        "test-amd: builds for {}:",
        AMD.iter().map(|t| t.cpu).collect::<Vec<_>>().join(", ")
    );
    for target in &AMD {
        let elf = crate::gpu::build(sh, target)?;
        let text = snapshots::amd_disassembly(sh, target, &elf)?;
        let probes = snapshots::amd_probes(&text);
        let mut asserted = check_disassembly(target, &text)?;
        asserted.extend(check_probes(target, &probes)?);
        for line in asserted {
            println!("  ok   {:<8} {line}", target.cpu);
        }
        snapshots::compare(sh, target.cpu, "s", &probes, bless)?;
        let checked = crate::gpu::build_checked_for(sh, target)?;
        let checked_text = snapshots::amd_disassembly(sh, target, &checked)?;
        for line in check_checked_disassembly(target, &checked_text)? {
            println!("  ok   {:<8} {line}", target.cpu);
        }
    }

    println!(
        "test-amd: the counter protocol's host model (HostCounterBackend, same threshold arithmetic):"
    );
    cmd!(
        sh,
        "cargo test --release -p gpu-pipeline -p protocol-tests -- counter"
    )
    .run()
    .map_err(|_| "the counter protocol's host tests failed (above)".to_string())?;

    match rocm_runtime() {
        None => println!(
            "test-amd: SKIPPED: no AMD GPU runtime found (/dev/kfd, /opt/rocm): the AMD device suite did not run. \
             Ran: gfx90a/gfx942/gfx1100 builds, disassembly checks, snapshots, host model tests."
        ),
        Some(found) => {
            return Err(format!(
                "an AMD GPU runtime is present ({found}), but this repository has no AMD device harness yet: \
                 the AMD device suite cannot run (not a pass)"
            ));
        }
    }
    println!("test-amd: all checks that can run here passed");
    Ok(())
}
