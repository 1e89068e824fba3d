//! Where cuBLAS is found: the CUDA toolkit's library folders, put in front of
//! `LD_LIBRARY_PATH` by the bundles' scripts and by the tasks that run here. A leaf module.

use std::path::Path;

use xshell::Shell;

/// The CUDA toolkit's usual library folders: where the bundles' scripts, and this task and
/// `test-nvidia` on this machine, look for cuBLAS (`libcublas.so.13`, `libcublasLt.so.13`)
/// besides the loader's own path.
pub const CUBLAS_DIRS: [&str; 2] = [
    "/usr/local/cuda/lib64",
    "/usr/local/cuda/targets/x86_64-linux/lib",
];

/// The shell lines that put each existing folder of [`CUBLAS_DIRS`] in front of
/// `LD_LIBRARY_PATH` (for `set -u` scripts).
pub fn cublas_path_sh() -> String {
    format!(
        "for dir in {}; do\n  [ -d \"$dir\" ] && export LD_LIBRARY_PATH=\"$dir${{LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}}\"\ndone",
        CUBLAS_DIRS.join(" ")
    )
}

/// `LD_LIBRARY_PATH` as [`cublas_path_sh`] leaves it, from its value `current` and which folders
/// exist: the existing folders of [`CUBLAS_DIRS`], the last first, then `current`.
pub fn cublas_library_path(current: Option<&str>, exists: impl Fn(&str) -> bool) -> String {
    let mut path = current.filter(|p| !p.is_empty()).map(String::from);
    for dir in CUBLAS_DIRS.iter().filter(|d| exists(d)) {
        path = Some(match path {
            Some(rest) => format!("{dir}:{rest}"),
            None => (*dir).to_string(),
        });
    }
    path.unwrap_or_default()
}

/// Sets `LD_LIBRARY_PATH` on `sh` for the commands run while the guard lives, as the scripts do,
/// so that a run here finds cuBLAS where a bundle's run would.
pub fn push_cublas_path(sh: &Shell) -> xshell::PushEnv<'_> {
    let current = std::env::var("LD_LIBRARY_PATH").ok();
    let path = cublas_library_path(current.as_deref(), |d| Path::new(d).is_dir());
    sh.push_env("LD_LIBRARY_PATH", path)
}

#[cfg(test)]
mod tests {
    use super::{CUBLAS_DIRS, cublas_library_path, cublas_path_sh};

    #[test]
    fn the_cublas_path_here_matches_the_script() {
        let sh = cublas_path_sh();
        assert!(sh.starts_with(&format!("for dir in {}; do\n", CUBLAS_DIRS.join(" "))));
        assert!(
            sh.contains(r#"export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}""#)
        );
        assert!(sh.ends_with("\ndone"));
        let (first, second) = (CUBLAS_DIRS[0], CUBLAS_DIRS[1]);
        // The loop prepends each existing folder in turn: the last one ends up first.
        assert_eq!(
            cublas_library_path(Some("/x:/y"), |_| true),
            format!("{second}:{first}:/x:/y")
        );
        assert_eq!(cublas_library_path(None, |d| d == first), first);
        assert_eq!(cublas_library_path(Some(""), |_| false), "");
        assert_eq!(cublas_library_path(Some("/x"), |_| false), "/x");
    }
}
