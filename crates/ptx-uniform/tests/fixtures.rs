//! Every `tests/fixtures/*.ptx` against its expected report, `*.expected` next to it: the text of
//! [`ptx_uniform::render`] (each entry's counts and findings, or the error). A difference fails
//! with both texts; after reviewing it, `cargo xtask snapshots --bless` (or `cargo xtask test
//! --bless`) rewrites the expected reports, as it rewrites the PTX snapshots.

use std::path::{Path, PathBuf};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// The fixture files with one extension, sorted.
fn files(extension: &str) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(fixtures())
        .expect("the fixtures folder")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == extension))
        .collect();
    out.sort();
    out
}

#[test]
fn every_fixture_gives_its_expected_report() {
    let ptx_files = files("ptx");
    assert!(ptx_files.len() >= 8, "the fixtures are missing");
    let mut failures = Vec::new();
    for ptx in &ptx_files {
        let text = std::fs::read_to_string(ptx).expect("a fixture");
        let actual = ptx_uniform::render(&text);
        let expected_path = ptx.with_extension("expected");
        match std::fs::read_to_string(&expected_path) {
            Ok(expected) if expected == actual => {}
            Ok(expected) => failures.push(format!(
                "{}:\n--- expected\n{expected}--- actual\n{actual}",
                ptx.display()
            )),
            Err(_) => failures.push(format!(
                "{} has no expected report {}; actual:\n{actual}",
                ptx.display(),
                expected_path.display()
            )),
        }
    }
    for expected in files("expected") {
        if !expected.with_extension("ptx").exists() {
            failures.push(format!("{} has no fixture", expected.display()));
        }
    }
    assert!(
        failures.is_empty(),
        "{} fixture(s) differ from their expected reports; review, then `cargo xtask snapshots --bless`:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The fixtures cover every kind of result: a clean entry, each reason of a finding, each group,
/// and an error.
#[test]
fn the_fixtures_cover_every_kind_of_result() {
    let mut all = String::new();
    for ptx in files("ptx") {
        all.push_str(&ptx_uniform::render(&std::fs::read_to_string(ptx).unwrap()));
    }
    for needle in [
        " 0 findings",
        "whole warp together, but it is control-dependent",
        "whole warpgroup together, but it is control-dependent",
        "but its guard",
        "error: ",
        "indirect branches are not analysed",
    ] {
        assert!(all.contains(needle), "no fixture gives `{needle}`");
    }
}
