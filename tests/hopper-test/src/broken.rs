//! The toolkit's broken kernels (`layout::BROKEN_CASES`, on the module of the checked build):
//! each in a child process of this executable (`--broken-one NAME`), with a fresh context, the
//! records in host memory mapped into the device; the harness's runner
//! (`pipeline_harness::broken`) spawns, bounds and reports them as it does the pipelines' own.

use std::process::ExitCode;

use pipeline_harness::broken::{Verdict, exit_with, launch_trapping, run_children};
use pipeline_harness::cuda::{Gpu, OpenError};
use pipeline_harness::report;
use pipeline_suite::exit;

use crate::layout::{BROKEN_CASES, BROKEN_SMEM_BYTES, BrokenCase};

/// Runs every case (or those whose name contains `filter`) on the checked module `ptx`.
pub fn run_all(ptx: &str, filter: Option<&str>) -> ExitCode {
    println!(
        "== gpu-hopper broken kernels (checked build): each must end within 1 s with the right diagnosis"
    );
    let tests: Vec<(&str, &str)> = BROKEN_CASES
        .iter()
        .filter(|c| filter.is_none_or(|f| c.name.contains(f)))
        .map(|c| (c.name, c.mistake))
        .collect();
    if tests.is_empty() {
        return report::error(exit::USAGE, "no broken case matches the filter");
    }
    run_children(ptx, &tests, &|name| {
        vec![ptx.into(), "--broken-one".into(), name.into()]
    })
}

/// The child: one case, then the process ends at once (a trapped context may block teardown).
pub fn run_one(ptx: &str, name: &str) -> ! {
    let Some(case) = BROKEN_CASES.iter().find(|c| c.name == name) else {
        eprintln!("error: no broken case named `{name}`");
        report::exit_now(exit::USAGE);
    };
    exit_with(run_case(ptx, case))
}

/// Launches the case's kernel: `Err` when it could not be set up, else the verdict on its
/// diagnosis (a trap within the limit, and one record with the case's label, budget, words and,
/// where the case says so, a line of `broken.rs`).
fn run_case(ptx: &str, case: &BrokenCase) -> Result<Verdict, OpenError> {
    let gpu = Gpu::open(ptx)?;
    let function = gpu.function(case.name)?;
    let trap = launch_trapping(
        &gpu,
        &function,
        (1, case.threads, 1, BROKEN_SMEM_BYTES),
        &mut [],
    )?;
    let mut why = trap.wrong_end();
    let budget_ns = u64::from(case.budget_us) * 1000;
    let matching = trap.records.iter().any(|r| {
        let text = r.to_string();
        r.label == case.label
            && r.budget_ns == budget_ns
            && case.says.iter().all(|s| text.contains(s))
            && (!case.at_call || r.line != 0 && r.file().ends_with("broken.rs"))
    });
    if !matching {
        why.push(format!(
            "no record with label {}, budget {} us{} says all of {:?}",
            case.label,
            case.budget_us,
            if case.at_call {
                ", at a line of broken.rs,"
            } else {
                ""
            },
            case.says
        ));
    }
    std::mem::forget(gpu);
    Ok(if why.is_empty() {
        println!("diagnosis as expected (label {})", case.label);
        Ok(())
    } else {
        Err(why.join("; "))
    })
}
