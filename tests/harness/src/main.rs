//! The device suite's host harness: loads the kernels' PTX with cudarc, launches every test of
//! the `pipeline-suite` lists, checks the data on the host, and prints one line per test and a
//! final `N passed, M failed` line.
//!
//! Exit status (`pipeline_suite::exit`, which the xtask reads too): 0 all passed, 1 a test failed,
//! 2 a usage error, 3 a kernel hung (the process cannot recover a hung context, so it stops
//! there), 4 no CUDA driver (`libcuda.so` cannot be loaded), 5 a CUDA setup error (the PTX file
//! cannot be read, the driver rejected the module, no device, a GPU older than sm_90, a failed
//! allocation). Errors are one line on stderr. Only 4 may be reported as `SKIPPED`, by
//! `cargo xtask ci` on a machine without a GPU.
//!
//! Usage: `pipeline-harness --ptx FILE [--quick] [--filter TEXT] [--timeout-s N] [--list]`
//! and, with the PTX of a checked build, `pipeline-harness --ptx FILE --broken [--filter TEXT]`:
//! the broken-kernel tests (see `broken.rs`).

mod broken;
mod cuda;
mod tests;

use std::process::ExitCode;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use pipeline_suite::exit;
use tests::{Outcome, Sizes};

/// Command-line options.
struct Options {
    ptx: String,
    quick: bool,
    filter: Option<String>,
    timeout: Duration,
    list: bool,
    broken: bool,
    broken_one: Option<String>,
    help: bool,
}

const USAGE: &str = "usage: pipeline-harness --ptx FILE [--quick] [--filter TEXT] [--timeout-s N] [--list] [--broken]";

fn parse_args() -> Result<Options, String> {
    let mut options = Options {
        ptx: String::new(),
        quick: false,
        filter: None,
        timeout: Duration::from_secs(30),
        list: false,
        broken: false,
        broken_one: None,
        help: false,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--ptx" => options.ptx = args.next().ok_or("--ptx needs a file")?,
            "--quick" => options.quick = true,
            "--list" => options.list = true,
            "--broken" => options.broken = true,
            "--broken-one" => {
                options.broken_one = Some(args.next().ok_or("--broken-one needs a test name")?);
            }
            "--filter" => options.filter = Some(args.next().ok_or("--filter needs a text")?),
            "--timeout-s" => {
                let value = args.next().ok_or("--timeout-s needs a number of seconds")?;
                let seconds: u64 = value
                    .parse()
                    .map_err(|_| format!("--timeout-s: not a number: {value}"))?;
                options.timeout = Duration::from_secs(seconds);
            }
            "-h" | "--help" => options.help = true,
            other => return Err(format!("unknown argument `{other}`\n{USAGE}")),
        }
    }
    if options.ptx.is_empty() && !options.list && !options.help {
        return Err(format!("--ptx FILE is required\n{USAGE}"));
    }
    Ok(options)
}

/// Today's UTC date as `YYYY-MM-DD` (civil-from-days, proleptic Gregorian).
fn utc_date() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let z = (secs / 86_400) as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

fn main() -> ExitCode {
    let options = match parse_args() {
        Ok(options) => options,
        Err(message) => {
            eprintln!("error: {message}");
            return ExitCode::from(exit::USAGE);
        }
    };
    if options.help {
        println!("{USAGE}");
        return ExitCode::SUCCESS;
    }
    if let Some(name) = &options.broken_one {
        return broken::run_one(&options.ptx, name);
    }
    if options.broken {
        return broken::run_all(&options.ptx, options.filter.as_deref());
    }
    let sizes = if options.quick {
        Sizes::quick()
    } else {
        Sizes::full()
    };
    if options.list {
        for test in tests::all(&sizes, 132) {
            println!("{}", test.name);
        }
        return ExitCode::SUCCESS;
    }

    let gpu = match cuda::Gpu::open(&options.ptx) {
        Ok(gpu) => gpu,
        Err(error) => {
            eprintln!("error: {error}");
            return ExitCode::from(error.exit_code());
        }
    };
    println!("gpu-pipeline device suite");
    println!("date:    {}", utc_date());
    println!(
        "commit:  {}",
        option_env!("GPU_PIPELINE_COMMIT").unwrap_or("unknown (built outside the xtask)")
    );
    println!(
        "gpu:     {} (sm_{}{}, {} SMs)",
        gpu.name, gpu.cc.0, gpu.cc.1, gpu.sms
    );
    println!(
        "driver:  CUDA {}.{}",
        gpu.driver_version / 1000,
        (gpu.driver_version % 1000) / 10
    );
    println!("ptx:     {}", options.ptx);
    println!(
        "mode:    {}",
        if options.quick {
            "quick (reduced item counts)"
        } else {
            "full"
        }
    );
    let seed = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(1)
        | 1;
    println!("seed:    {seed:#018x}");
    println!();

    let all = tests::all(&sizes, gpu.sms);
    let selected: Vec<_> = all
        .iter()
        .filter(|t| options.filter.as_deref().is_none_or(|f| t.name.contains(f)))
        .collect();
    let mut runner = match tests::Runner::new(&gpu, &selected, seed) {
        Ok(runner) => runner,
        Err(message) => {
            eprintln!("error: {message}");
            return ExitCode::from(exit::SETUP);
        }
    };
    let (mut passed, mut failed, mut items_moved) = (0u32, 0u32, 0u64);
    for test in &selected {
        match runner.run(test, options.timeout) {
            Outcome::Pass {
                millis,
                items,
                caught: None,
            } => {
                passed += 1;
                items_moved += items;
                println!(
                    "PASS {:<44} {:>9} items  {:>6} blocks  {:>9.3} ms",
                    test.name, items, test.grid, millis
                );
            }
            Outcome::Pass {
                caught: Some(caught),
                ..
            } => {
                passed += 1;
                println!(
                    "PASS {:<44} caught: {}",
                    test.name,
                    caught.lines().next().unwrap_or_default()
                );
            }
            Outcome::Fail(reason) => {
                failed += 1;
                println!("FAIL {:<44} {reason}", test.name);
            }
            Outcome::Hung(reason) => {
                failed += 1;
                println!("FAIL {:<44} {reason}", test.name);
                println!();
                println!(
                    "{passed} passed, {failed} failed (stopped: a hung kernel leaves the context unusable)"
                );
                // Leave at once: dropping the CUDA context would wait for the hung kernel forever.
                use std::io::Write;
                let _ = std::io::stdout().flush();
                // SAFETY: ends the process without running destructors or atexit handlers.
                unsafe { libc::_exit(exit::HUNG.into()) }
            }
        }
    }
    println!();
    println!("items moved through pipelines: {items_moved}");
    println!("{passed} passed, {failed} failed");
    if failed == 0 {
        ExitCode::from(exit::PASSED)
    } else {
        ExitCode::from(exit::TEST_FAILED)
    }
}
