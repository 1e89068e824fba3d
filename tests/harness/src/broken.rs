//! The broken-kernel tests of checked builds (`pipeline_suite::BROKEN`): each kernel makes a
//! mistake that would hang (a `pipeline_suite::Misuse`, whose table the host tests check too); it
//! must end within a second, trapped by the library, with a hang record that carries the
//! misuse's diagnosis.
//!
//! A trapped kernel leaves its CUDA context unusable, so every test runs in a fresh process
//! (this executable with `--broken-one NAME`), with a fresh context. The records go to host
//! memory mapped into the device (`cuMemHostRegister`), which the process reads after the failed
//! launch: device memory cannot be read any more at that point.
//!
//! Exit status (`pipeline_suite::exit`), of a child and of the whole run: a child that cannot open
//! the driver exits `NO_DRIVER` and the run stops at once with the same status (every other child
//! would say the same); a child that cannot set its test up (module rejected, host memory not
//! registered, kernel not in the module, launch refused) exits `SETUP`, and the run ends with
//! `SETUP` after the other tests; a wrong or missing diagnosis is `TEST_FAILED`.

use std::alloc::{Layout, alloc_zeroed, dealloc};
use std::ffi::c_void;
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use cudarc::driver::{CudaFunction, sys};
use gpu_pipeline::checked::HangRecord;
use pipeline_suite::{BROKEN, BROKEN_SMEM_BYTES, Broken, exit};

use crate::cuda::{Gpu, OpenError, check};
use crate::report;

/// Records the sink holds.
const CAPACITY: usize = 16;
/// A broken kernel must end this fast (from the launch to the error seen by the host).
pub const LIMIT: Duration = Duration::from_secs(1);
/// Past this (plus twice the module's first load, see `run_all`), the child process is killed and
/// the test fails (it hung).
const CHILD_TIMEOUT: Duration = Duration::from_secs(20);

/// Runs every broken test (or those whose name contains `filter`), each in a child process.
pub fn run_all(ptx: &str, filter: Option<&str>) -> ExitCode {
    println!(
        "== broken kernels (checked build): each must end within 1 s with the right diagnosis"
    );
    let tests: Vec<(&str, &str)> = BROKEN
        .iter()
        .filter(|t| filter.is_none_or(|f| t.name.contains(f)))
        .map(|t| (t.name, t.misuse.mistake))
        .collect();
    run_children(ptx, &tests, &|name| {
        vec![
            "--broken-one".into(),
            name.into(),
            "--ptx".into(),
            ptx.into(),
        ]
    })
}

/// Runs each test of `tests` (name, mistake in words) in a child process of this executable,
/// started with the arguments `args(name)` (its one-test mode, which ends with a
/// `pipeline_suite::exit` status), after loading `ptx` once here; prints a PASS or FAIL line per
/// test with the child's output, and a summary; the exit status of the whole run, as the module's
/// docs say. Other test programs with broken kernels of their own (the toolkit's) use it too.
pub fn run_children(
    ptx: &str,
    tests: &[(&str, &str)],
    args: &dyn Fn(&str) -> Vec<String>,
) -> ExitCode {
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => {
            eprintln!("error: cannot find this executable: {e}");
            return ExitCode::from(exit::SETUP);
        }
    };
    // The driver JIT-compiles a PTX module at its first load and keeps the code in its cache
    // (`~/.nv/ComputeCache`, unless CUDA_CACHE_DISABLE is set), so that each child loads it at
    // once. Without this load, on a fresh machine every child compiled the whole checked module
    // itself and ran past its timeout before its kernel started (seen on the H200: all 16
    // children killed, tests/results/2026-12-02-issue22.md). A load that fails here fails again
    // in each child, which reports it.
    let load = Instant::now();
    let loaded = Gpu::open(ptx).is_ok();
    let jit = load.elapsed();
    if loaded {
        println!(
            "  the module loaded in this process first (its JIT goes to the driver's cache): {:.1} s",
            jit.as_secs_f64()
        );
    }
    // The children's timeout is for hangs: a cache that is disabled or full makes each child
    // compile again, which must not count as one.
    let child_timeout = CHILD_TIMEOUT + 2 * jit;
    let (mut passed, mut failed, mut not_set_up) = (0, 0, 0);
    for &(name, mistake) in tests {
        let child = Command::new(&exe)
            .args(args(name))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn();
        let mut child = match child {
            Ok(child) => child,
            Err(e) => {
                eprintln!("error: cannot start a test process: {e}");
                return ExitCode::from(exit::SETUP);
            }
        };
        let start = Instant::now();
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break Some(status),
                Ok(None) if start.elapsed() > child_timeout => {
                    let _ = child.kill();
                    let _ = child.wait();
                    break None;
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(5)),
                Err(_) => break None,
            }
        };
        let output = child.wait_with_output().ok();
        let stdout = output
            .as_ref()
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default();
        let stderr = output
            .as_ref()
            .map(|o| String::from_utf8_lossy(&o.stderr).into_owned())
            .unwrap_or_default();
        let code = status.and_then(|s| s.code());
        if code == Some(exit::NO_DRIVER.into()) {
            // No test can run here: say so once, in the child's words, and stop.
            eprint!("{stderr}");
            return ExitCode::from(exit::NO_DRIVER);
        }
        if code == Some(exit::SETUP.into()) {
            not_set_up += 1;
        }
        let ok = code == Some(exit::PASSED.into());
        println!("{} {name}  ({mistake})", if ok { "PASS" } else { "FAIL" });
        for line in stdout.lines() {
            println!("    {line}");
        }
        if !ok {
            for line in stderr.lines().take(20) {
                println!("    stderr: {line}");
            }
            if status.is_none() {
                println!(
                    "    the test process did not end within {:.0} s and was killed",
                    child_timeout.as_secs_f64()
                );
            }
        }
        if ok {
            passed += 1;
        } else {
            failed += 1;
        }
    }
    println!(
        "broken kernels: {passed} passed, {failed} failed{}",
        if not_set_up > 0 {
            format!(" ({not_set_up} could not be set up: CUDA errors above)")
        } else {
            String::new()
        }
    );
    if not_set_up > 0 {
        eprintln!(
            "error: {not_set_up} broken-kernel test(s) could not be set up (CUDA errors above)"
        );
        ExitCode::from(exit::SETUP)
    } else if failed > 0 {
        ExitCode::from(exit::TEST_FAILED)
    } else {
        ExitCode::from(exit::PASSED)
    }
}

/// Host memory mapped into the device: page-aligned, registered, unregistered on drop only if
/// the context still works (after a trap the process just ends).
struct MappedRecords {
    ptr: *mut HangRecord,
    layout: Layout,
}

impl MappedRecords {
    fn new() -> Result<(Self, u64), String> {
        let bytes = (CAPACITY * size_of::<HangRecord>()).next_multiple_of(4096);
        let layout = Layout::from_size_align(bytes, 4096).map_err(|e| e.to_string())?;
        // SAFETY: a non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) }.cast::<HangRecord>();
        if ptr.is_null() {
            return Err("out of host memory".into());
        }
        let flags = sys::CU_MEMHOSTREGISTER_DEVICEMAP | sys::CU_MEMHOSTREGISTER_PORTABLE;
        check(
            // SAFETY: `bytes` of page-aligned memory owned by this value.
            unsafe { sys::cuMemHostRegister_v2(ptr.cast(), bytes, flags) },
            "cuMemHostRegister",
        )?;
        let mut device = 0;
        check(
            // SAFETY: the memory was registered just above with DEVICEMAP.
            unsafe { sys::cuMemHostGetDevicePointer_v2(&mut device, ptr.cast(), 0) },
            "cuMemHostGetDevicePointer",
        )?;
        Ok((Self { ptr, layout }, device))
    }

    /// The complete records, read from host memory (valid after the context failed).
    fn complete(&self) -> Vec<HangRecord> {
        (0..CAPACITY)
            // SAFETY: inside the allocation; volatile because the device wrote it.
            .map(|i| unsafe { self.ptr.add(i).read_volatile() })
            .filter(HangRecord::is_complete)
            .collect()
    }
}

impl Drop for MappedRecords {
    fn drop(&mut self) {
        // SAFETY: registered in `new`; an error (a dead context) leaves nothing to undo.
        unsafe {
            let _ = sys::cuMemHostUnregister(self.ptr.cast());
            dealloc(self.ptr.cast(), self.layout);
        }
    }
}

/// The child process: one broken kernel, with a fresh context. Prints what happened and the
/// records in plain words; exit status `PASSED` when the diagnosis is the expected one,
/// `TEST_FAILED` when it is not, and the error's status (one line on stderr) when the test could
/// not be set up.
pub fn run_one(ptx: &str, name: &str) -> ! {
    let Some(test) = BROKEN.iter().find(|t| t.name == name) else {
        eprintln!("error: no broken test named `{name}`");
        report::exit_now(exit::USAGE);
    };
    exit_with(run_kernel(ptx, test))
}

/// A child's verdict: `Ok(())`, the diagnosis as expected, or what was wrong with it.
pub type Verdict = Result<(), String>;

/// Ends a child process with the status of `outcome` (`PASSED`, `TEST_FAILED` after a `wrong:`
/// line, or the error's status after its one line on stderr), at once: a trapped context may
/// block in teardown.
pub fn exit_with(outcome: Result<Verdict, OpenError>) -> ! {
    let code = match outcome {
        Ok(Ok(())) => exit::PASSED,
        Ok(Err(why)) => {
            println!("wrong: {why}");
            exit::TEST_FAILED
        }
        Err(error) => {
            eprintln!("error: {error}");
            error.exit_code()
        }
    };
    report::exit_now(code)
}

/// What a launch of a broken kernel came to: how it ended, after how long, and the complete
/// hang records it left.
pub struct Trap {
    /// The stream's end: `Err((true, _))` when the kernel did not end, `Err((false, _))` with the
    /// CUDA error (a trap's), `Ok` when it completed.
    pub outcome: Result<Duration, (bool, String)>,
    /// From the launch to the end seen by the host.
    pub elapsed: Duration,
    /// The complete records in the sink.
    pub records: Vec<HangRecord>,
}

impl Trap {
    /// Whether a trap (a CUDA error, not a hang and not a completion) ended the kernel.
    pub fn trapped(&self) -> bool {
        matches!(self.outcome, Err((false, _)))
    }

    /// The reasons it is not the end a broken kernel must have: stopped by a trap within
    /// [`LIMIT`] (empty: it is).
    pub fn wrong_end(&self) -> Vec<String> {
        let mut why = Vec::new();
        if !self.trapped() {
            why.push("the kernel was not stopped by a trap".to_string());
        }
        if self.elapsed > LIMIT {
            why.push(format!(
                "it took {:.0} ms, more than {} ms",
                self.elapsed.as_secs_f64() * 1e3,
                LIMIT.as_millis()
            ));
        }
        why
    }
}

/// Launches `function` (a kernel of a checked build loaded in `gpu`) with a diagnostics sink in
/// host memory mapped into the device, waits for its end (10 s at most), and prints how it ended
/// and every record in plain words. The sink is never freed (a trapped context cannot unregister
/// it); the caller forgets `gpu` too and leaves the process with `report::exit_now`.
pub fn launch_trapping(
    gpu: &Gpu,
    function: &CudaFunction,
    shape: (u32, u32, u32, u32),
    args: &mut [*mut c_void],
) -> Result<Trap, OpenError> {
    let (records, device) = MappedRecords::new()?;
    gpu.set_diagnostics_sink(device, CAPACITY as u32)?;
    let (grid, block, cluster, smem) = shape;
    let start = Instant::now();
    gpu.launch(function, grid, block, cluster, smem, args)?;
    let outcome = gpu.wait(Duration::from_secs(10));
    let elapsed = start.elapsed();
    let ended = match &outcome {
        Ok(_) => "the kernel completed (no trap)".to_string(),
        Err((true, m)) => format!("the kernel did not end: {m}"),
        Err((false, m)) => m.clone(),
    };
    println!(
        "kernel ended after {:.1} ms: {ended}",
        elapsed.as_secs_f64() * 1e3
    );
    let found = records.complete();
    println!("{} hang record(s):", found.len());
    for record in &found {
        for line in record.to_string().lines() {
            println!("  {line}");
        }
    }
    // A trapped context may fail or block in teardown: the memory stays registered.
    std::mem::forget(records);
    Ok(Trap {
        outcome,
        elapsed,
        records: found,
    })
}

/// Runs one broken kernel: `Err` when it could not be set up, else the verdict on its diagnosis.
fn run_kernel(ptx: &str, test: &Broken) -> Result<Verdict, OpenError> {
    let gpu = Gpu::open(ptx)?;
    let function = gpu.function(test.name)?;
    let trap = launch_trapping(
        &gpu,
        &function,
        (test.cluster, test.threads, test.cluster, BROKEN_SMEM_BYTES),
        &mut [],
    )?;
    let found = &trap.records;
    let mut why = trap.wrong_end();
    let misuse = test.misuse;
    let expected_budget_ns = if misuse.budget_us == 0 {
        u64::from(gpu_pipeline::checked::DEFAULT_WAIT_BUDGET_US) * 1000
    } else {
        u64::from(misuse.budget_us) * 1000
    };
    // The misuse's diagnosis: its fields, and its words in the record's plain words; and what
    // only the device run fixes: the budget, and a call in broken.rs.
    let matching = found.iter().any(|r| {
        r.verdict() == misuse.verdict
            && misuse.fault.is_none_or(|f| r.fault == f as u32)
            && r.label == misuse.label
            && r.budget_ns == expected_budget_ns
            && misuse
                .stage_lap
                .is_none_or(|(s, l)| r.stage == s && r.lap == l)
            && misuse.missing_from(&r.to_string()).is_empty()
            && (!misuse.at_call || r.line != 0 && r.file().ends_with("broken.rs"))
    });
    if !matching {
        why.push(format!(
            "no record says {:?} with {:?}, budget {} us, at a line of broken.rs",
            misuse.verdict,
            misuse.expected_texts(),
            expected_budget_ns / 1000
        ));
    }
    // A trapped context may fail or block in teardown: the process ends without it.
    std::mem::forget(gpu);
    Ok(if why.is_empty() {
        println!(
            "diagnosis as expected: {} {:?} (label {})",
            misuse.role, misuse.verdict, misuse.label
        );
        Ok(())
    } else {
        Err(why.join("; "))
    })
}
