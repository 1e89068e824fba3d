//! The device tests of the `gpu-hopper` toolkit leaves that the GEMM does not run: the kernels
//! of `tests/hopper-kernels` (its `layout.rs`, compiled here too, holds the case lists), each
//! checked against a host reference.
//!
//! ```text
//! hopper-test PTX [--filter TEXT]
//! hopper-test CHECKED_PTX --broken [--filter TEXT]
//! ```
//!
//! One `PASS` or `FAIL` line per case, saying what was compared; then a summary line. Without a
//! CUDA driver it prints `SKIPPED: <reason>` and exits with `pipeline_suite::exit::NO_DRIVER`
//! (which `cargo xtask ci` alone may take as a skip); a failed case exits `TEST_FAILED`, a hung
//! kernel `HUNG` at once (a hung context cannot be recovered), a module the driver rejects
//! `SETUP`. With `--broken` and the module of the checked build it runs the broken kernels
//! instead (`broken.rs`): each mistake with a named barrier or an ordered sequence must end
//! within a second with the record that says it.

// The kernels' case lists and layouts (first: the case-list macros are used by the modules below).
#[allow(dead_code)]
#[path = "../../hopper-kernels/src/layout.rs"]
#[macro_use]
mod layout;

mod broken;
mod device;
mod sync;
mod tma;
mod wgmma;

use std::process::ExitCode;

use pipeline_harness::cuda::{Gpu, OpenError};
use pipeline_harness::report;
use pipeline_suite::exit;

/// Runs a case: `Ok(what was compared)` or `Err(what was wrong)`.
pub type Run = Box<dyn Fn(&Gpu, &mut Seed) -> Result<String, String>>;

/// A case: its name (the kernel's, or the kernel's and a variant), and what it runs.
pub struct Case {
    /// The line's name.
    pub name: String,
    /// What it runs.
    pub run: Run,
}

/// xorshift64, seeded from the time and the process: fresh data every run.
pub struct Seed(u64);

impl Seed {
    /// The next 64 random bits.
    pub fn bits(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A random integer in `lo..=hi`.
    pub fn int(&mut self, lo: i32, hi: i32) -> i32 {
        lo + (self.bits() % (hi - lo + 1) as u64) as i32
    }

    /// 32 random bits.
    pub fn word(&mut self) -> u32 {
        (self.bits() >> 16) as u32
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    const USAGE: &str = "usage: hopper-test PTX [--filter TEXT], or hopper-test CHECKED_PTX --broken [--filter TEXT]";
    let mut ptx = None;
    let mut filter = None;
    let mut broken = false;
    let mut broken_one = None;
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--filter" => match it.next() {
                Some(text) => filter = Some(text.clone()),
                None => return report::error(exit::USAGE, "--filter needs a text"),
            },
            "--broken" => broken = true,
            "--broken-one" => match it.next() {
                Some(name) => broken_one = Some(name.clone()),
                None => return report::error(exit::USAGE, "--broken-one needs a case name"),
            },
            other if !other.starts_with("--") && ptx.is_none() => ptx = Some(other.to_string()),
            other => {
                return report::error(exit::USAGE, format!("unknown argument `{other}`; {USAGE}"));
            }
        }
    }
    let Some(ptx) = ptx else {
        return report::error(exit::USAGE, USAGE);
    };
    if let Some(name) = broken_one {
        broken::run_one(&ptx, &name);
    }
    if broken {
        return broken::run_all(&ptx, filter.as_deref());
    }
    let gpu = match Gpu::open(&ptx) {
        Ok(gpu) => gpu,
        Err(e @ OpenError::NoDriver) => {
            println!("SKIPPED: {e}");
            return report::error(e.exit_code(), e);
        }
        Err(e) => return report::error(e.exit_code(), e),
    };
    println!(
        "hopper-test: {} (sm_{}{}, {} SMs, driver {}), commit {}, {}",
        gpu.name,
        gpu.cc.0,
        gpu.cc.1,
        gpu.sms,
        gpu.driver_version,
        report::commit(),
        report::utc_date()
    );
    let mut seed = Seed(
        0x9E37_79B9_7F4A_7C15
            ^ u64::from(std::process::id())
            ^ std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64),
    );
    let cases: Vec<Case> = wgmma::cases()
        .into_iter()
        .chain(tma::cases())
        .chain(sync::cases())
        .filter(|case| {
            filter
                .as_ref()
                .is_none_or(|f| case.name.contains(f.as_str()))
        })
        .collect();
    if cases.is_empty() {
        return report::error(exit::USAGE, "no case matches the filter");
    }
    let (mut passed, mut failed) = (0, 0);
    for case in &cases {
        match (case.run)(&gpu, &mut seed) {
            Ok(what) => {
                println!("PASS {:<40} {what}", case.name);
                passed += 1;
            }
            Err(why) => {
                println!("FAIL {:<40} {why}", case.name);
                failed += 1;
            }
        }
    }
    println!("hopper-test: {passed} passed, {failed} failed");
    ExitCode::from(if failed == 0 {
        exit::PASSED
    } else {
        exit::TEST_FAILED
    })
}
