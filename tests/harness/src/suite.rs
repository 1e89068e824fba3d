//! The suite's command line and its run: one line per test, then `N passed, M failed`, and the
//! exit status (`pipeline_suite::exit`). The binary `pipeline-harness` is this module's [`main`].

use std::process::ExitCode;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use pipeline_suite::exit;

use crate::tests::{self, Outcome, Sizes};
use crate::{broken, cuda, report};

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

/// The command line.
pub const USAGE: &str = "usage: pipeline-harness --ptx FILE [--quick] [--filter TEXT] [--timeout-s N] [--list] [--broken]";

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

/// The suite: parses the command line, runs the selected tests (or the broken kernels, or lists
/// the tests) and returns the exit status. Usage: [`USAGE`].
pub fn main() -> ExitCode {
    let options = match parse_args() {
        Ok(options) => options,
        Err(message) => {
            return report::error(exit::USAGE, message);
        }
    };
    if options.help {
        println!("{USAGE}");
        return ExitCode::SUCCESS;
    }
    if let Some(name) = &options.broken_one {
        broken::run_one(&options.ptx, name);
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
            return report::error(error.exit_code(), error);
        }
    };
    println!("gpu-pipeline device suite");
    println!("date:    {}", report::utc_date());
    println!("commit:  {}", report::commit());
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
            return report::error(exit::SETUP, message);
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
                report::exit_now(exit::HUNG)
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
