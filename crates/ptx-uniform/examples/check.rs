//! Checks the PTX files named on the command line and prints each entry's report:
//! `cargo run -p ptx-uniform --example check -- FILE.ptx...`. Exits 1 when any entry has a
//! finding or a module cannot be analysed, 2 on a usage error.

use std::process::ExitCode;

fn main() -> ExitCode {
    let files: Vec<String> = std::env::args().skip(1).collect();
    if files.is_empty() {
        eprintln!("usage: check FILE.ptx...");
        return ExitCode::from(2);
    }
    let mut clean = true;
    for file in &files {
        let ptx = match std::fs::read_to_string(file) {
            Ok(ptx) => ptx,
            Err(e) => {
                eprintln!("{file}: {e}");
                return ExitCode::from(2);
            }
        };
        println!("== {file}");
        match ptx_uniform::analyse(&ptx) {
            Ok(reports) => {
                for r in reports {
                    clean &= r.findings.is_empty();
                    println!("{r}");
                }
            }
            Err(e) => {
                clean = false;
                println!("error: {e}");
            }
        }
    }
    if clean {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
