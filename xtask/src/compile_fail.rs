//! Compile-fail tests: every misuse the types forbid, built for nvptx64 one example at a time.
//!
//! Each `tests/compile-fail/examples/*.rs` starts with `// expect: pass` or
//! `// expect: error<...>: <text>`. An `error` case passes only if the build fails *and* the
//! compiler's output contains the text; a `pass` case (which proves the set-up builds at all)
//! passes only if the build succeeds.
//!
//! A case is built with the flags of [`NVPTX`] (`-Ctarget-cpu=sm_90 -Ctarget-feature=+ptx80`)
//! unless its second line is `// rustflags: <flags>`: then with exactly those flags, separated by
//! spaces (none at all: `// rustflags:` alone builds for the target's default processor, sm_70).
//! Such cases check what a wrong build configuration does; each set of flags builds in its own
//! target directory (`target/gpu/compile-fail-<flags>`), so that the normal cases' cache stays.

use std::path::PathBuf;

use xshell::Shell;

use crate::gpu::NVPTX;
use crate::util::Result;

const DIR: &str = "tests/compile-fail";

/// What an example expects.
enum Expect {
    Pass,
    Error(String),
}

/// An example's header: its expectation and, if it states them, its own target flags.
struct Header {
    expect: Expect,
    rustflags: Option<Vec<String>>,
}

fn header(source: &str, name: &str) -> Result<Header> {
    let mut lines = source.lines();
    let first = lines.next().unwrap_or_default();
    let rest = first
        .strip_prefix("// expect: ")
        .ok_or_else(|| format!("{DIR}/examples/{name}.rs must start with `// expect: pass` or `// expect: error...: <text>`"))?;
    let expect = if rest == "pass" {
        Expect::Pass
    } else {
        Expect::Error(rest.to_string())
    };
    let rustflags = lines
        .next()
        .and_then(|second| second.strip_prefix("// rustflags:"))
        .map(|flags| flags.split_whitespace().map(str::to_string).collect());
    Ok(Header { expect, rustflags })
}

/// The target directory of the cases built with `flags`: one per distinct set of flags.
fn flags_target_dir(flags: &[String]) -> PathBuf {
    let name = if flags.is_empty() {
        "none".to_string()
    } else {
        flags
            .iter()
            .map(|f| {
                f.trim_start_matches('-')
                    .chars()
                    .map(|c| {
                        if c.is_ascii_alphanumeric() || c == '_' {
                            c
                        } else {
                            '-'
                        }
                    })
                    .collect::<String>()
            })
            .collect::<Vec<_>>()
            .join("_")
    };
    crate::util::root()
        .join("target/gpu")
        .join(format!("compile-fail-{name}"))
}

/// Builds every example and checks its expectation.
pub fn run(sh: &Shell) -> Result {
    println!("compile-fail tests (nvptx64-nvidia-cuda, panic = abort):");
    let mut names: Vec<String> = sh
        .read_dir(format!("{DIR}/examples"))
        .map_err(crate::util::err("cannot list the compile-fail examples"))?
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .filter_map(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .collect();
    names.sort();
    let mut failures = Vec::new();
    for name in &names {
        let source = sh
            .read_file(format!("{DIR}/examples/{name}.rs"))
            .map_err(crate::util::err("read"))?;
        let Header { expect, rustflags } = header(&source, name)?;
        let output = match &rustflags {
            None => NVPTX.cargo_build_output(sh, DIR, &["--example", name])?,
            Some(flags) => NVPTX.cargo_build_output_with_flags(
                sh,
                DIR,
                &["--example", name],
                &flags_target_dir(flags),
                &flags.join("\x1f"),
            )?,
        };
        let stderr = String::from_utf8_lossy(&output.stderr);
        let verdict = match (&expect, output.status.success()) {
            (Expect::Pass, true) => Ok("builds".to_string()),
            (Expect::Pass, false) => Err(format!("should build but failed:\n{stderr}")),
            (Expect::Error(text), false) if stderr.contains(text.as_str()) => {
                Ok(format!("rejected: {text}"))
            }
            (Expect::Error(text), false) => Err(format!("failed, but without `{text}`:\n{stderr}")),
            (Expect::Error(text), true) => Err(format!("built, but should fail with `{text}`")),
        };
        match verdict {
            Ok(what) => match &rustflags {
                None => println!("  ok   {name:<30} {what}"),
                Some(flags) if flags.is_empty() => {
                    println!("  ok   {name:<30} {what} (no rustflags)")
                }
                Some(flags) => {
                    println!("  ok   {name:<30} {what} (rustflags: {})", flags.join(" "))
                }
            },
            Err(why) => {
                println!(
                    "  FAIL {name:<30} {}",
                    why.lines().next().unwrap_or_default()
                );
                failures.push(format!("{name}: {why}"));
            }
        }
    }
    if failures.is_empty() {
        println!("  {} compile-fail cases as expected", names.len());
        Ok(())
    } else {
        Err(format!(
            "{} compile-fail case(s) did not behave as expected:\n{}",
            failures.len(),
            failures.join("\n")
        ))
    }
}
