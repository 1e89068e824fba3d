//! What every task uses: the error type of the tasks, the error-context helper, the repository
//! root. A leaf module: it imports nothing of the crate.

use std::path::{Path, PathBuf};

/// A task's result: `Err` is the one-line (or few-line) message the task stops with.
pub type Result<T = ()> = std::result::Result<T, String>;

/// Wraps an error into a message with `context` before it: `.map_err(err("reading X"))`.
pub fn err<E: std::fmt::Display>(context: &str) -> impl FnOnce(E) -> String + '_ {
    move |e| format!("{context}: {e}")
}

/// The repository root (the folder above `xtask/`).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives in the repository root")
        .to_path_buf()
}
