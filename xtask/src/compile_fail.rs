//! Compile-fail tests: every misuse the types forbid, built for nvptx64 one example at a time.
//!
//! Each `tests/compile-fail/examples/*.rs` starts with `// expect: pass` or
//! `// expect: error<...>: <text>`. An `error` case passes only if the build fails *and* the
//! compiler's output contains the text; a `pass` case (which proves the set-up builds at all)
//! passes only if the build succeeds.

use xshell::Shell;

use crate::Result;
use crate::gpu::NVPTX;

const DIR: &str = "tests/compile-fail";

/// What an example expects.
enum Expect {
    Pass,
    Error(String),
}

fn expectation(source: &str, name: &str) -> Result<Expect> {
    let first = source.lines().next().unwrap_or_default();
    let rest = first
        .strip_prefix("// expect: ")
        .ok_or_else(|| format!("{DIR}/examples/{name}.rs must start with `// expect: pass` or `// expect: error...: <text>`"))?;
    Ok(if rest == "pass" {
        Expect::Pass
    } else {
        Expect::Error(rest.to_string())
    })
}

/// Builds every example and checks its expectation.
pub fn run(sh: &Shell) -> Result {
    println!("compile-fail tests (nvptx64-nvidia-cuda, panic = abort):");
    let mut names: Vec<String> = sh
        .read_dir(format!("{DIR}/examples"))
        .map_err(crate::err("cannot list the compile-fail examples"))?
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .filter_map(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .collect();
    names.sort();
    let mut failures = Vec::new();
    for name in &names {
        let source = sh
            .read_file(format!("{DIR}/examples/{name}.rs"))
            .map_err(crate::err("read"))?;
        let expect = expectation(&source, name)?;
        let output = NVPTX.cargo_build_output(sh, DIR, &["--example", name])?;
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
            Ok(what) => println!("  ok   {name:<30} {what}"),
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
