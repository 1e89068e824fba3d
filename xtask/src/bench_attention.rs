//! `cargo xtask bench-attention`: the attention forward benchmark (`tests/attention-bench`): ours
//! through the C-ABI bridge `libattention_bench.so`, in the benchmark's Python process beside
//! FlashAttention-3 or FlashAttention-4, cuDNN's SDPA and torch's flash backend, interleaved,
//! every output checked (`bench_attention.py`'s docs give the method).

use std::path::{Path, PathBuf};

use xshell::{Shell, cmd};

use crate::util::Result;

/// The benchmark script.
const SCRIPT: &str = "tests/attention-bench/bench_attention.py";

/// The bundle's run script. Arguments go to `bench_attention.py` (`--anchor fa3|fa4|none`,
/// `--shapes paper|grid|quick`, ...); `ATTENTION_MODULE` names another module of the bundle (the
/// variants of `attention::VARIANTS`, FlashAttention-3's overlaps on) to run instead of the
/// production one. The anchors come from `$ANCHORS` (default `anchors/` beside the
/// script): `fa3/*.whl` (FlashAttention-3's wheel) and `fa4.tar.xz` (FlashAttention-4 and CuTe
/// DSL, as `../shared/tools/anchor-bundles.sh` packs them), each installed when present.
const RUN_SH: &str = r#"#!/usr/bin/env bash
# The attention forward benchmark, self-contained: needs an NVIDIA driver, Python 3 with torch
# (CUDA build); the anchors' wheels travel in $ANCHORS. Results go to $OUT (or out/ beside this
# script).
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-$here/out}
anchors=${ANCHORS:-$here/anchors}
mkdir -p "$out" /tmp/attention-site
{
  echo "commit: $(cat "$here/COMMIT")"
  echo "date:   $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv 2>&1 || echo "nvidia-smi: not available"
  echo "command: bench_attention.py --lib libattention_bench.so --csv $out/attention.csv $*"
} | tee "$out/machine.txt"
if ls "$anchors"/fa3/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/attention-site "$anchors"/fa3/*.whl
fi
if [ -f "$anchors/fa4.tar.xz" ]; then
  mkdir -p /tmp/attention-fa4 && tar -xJf "$anchors/fa4.tar.xz" -C /tmp/attention-fa4
  export ATTENTION_FA4_SITE=/tmp/attention-fa4
fi
export PYTHONPATH=/tmp/attention-site${PYTHONPATH:+:$PYTHONPATH}
export GPU_ATTENTION_MODULE=$here/${ATTENTION_MODULE:-gpu_attention.ptx}
timeout -k 10 ${ATTENTION_TIMEOUT:-560} python3 "$here/bench_attention.py" --lib "$here/libattention_bench.so" --csv "$out/attention.csv" "$@" 2>&1 | tee "$out/attention.log"
exit "${PIPESTATUS[0]}"
"#;

/// Whether the bundle carries variant module `file`: every one, or with `$ATTENTION_VARIANTS`
/// set (files, comma-separated, `gpu_attention_seed_sums.ptx,...`), those it names (a bundle
/// for one A/B builds in a fraction of the time).
fn wanted(file: &str) -> bool {
    match std::env::var("ATTENTION_VARIANTS") {
        Ok(list) => list.split(',').any(|f| f.trim() == file),
        Err(_) => true,
    }
}

/// The bridge library.
fn library() -> PathBuf {
    crate::util::root().join("target/release/libattention_bench.so")
}

/// Builds the kernels (and, for a bundle, the variant modules) and the bridge.
fn build(sh: &Shell, variants: bool) -> Result {
    crate::attention::build(sh)?;
    if variants {
        for (features, file) in crate::attention::VARIANTS {
            if wanted(file) {
                crate::attention::build_variant(sh, features, file)?;
            }
        }
    }
    cmd!(sh, "cargo build --release -p attention-bench")
        .run()
        .map_err(|_| "building attention-bench failed (above)".to_string())
}

/// The task: with `bundle_dir`, write the bundle (the bridge, the module, the script,
/// `run_attention.sh`, `COMMIT`); otherwise run the benchmark here (an NVIDIA Hopper GPU, Python
/// with torch, and the anchors installed).
pub fn run(sh: &Shell, bundle_dir: Option<&Path>, quick: bool) -> Result {
    build(sh, bundle_dir.is_some())?;
    let root = crate::util::root();
    if let Some(dir) = bundle_dir {
        let mut files = vec![
            (library(), "libattention_bench.so"),
            (crate::attention::artifact(), "gpu_attention.ptx"),
            (root.join(SCRIPT), "bench_attention.py"),
        ];
        for (_, file) in crate::attention::VARIANTS {
            if wanted(file) {
                files.push((crate::attention::variant_artifact(file), file));
            }
        }
        crate::device::write_bundle(sh, dir, &files, "run_attention.sh", RUN_SH)?;
        println!(
            "attention bundle written to {}: put the anchors in {}/anchors (../shared/tools/anchor-bundles.sh packs them) and run `{}/run_attention.sh --anchor fa3` (or fa4) on a machine with an NVIDIA Hopper GPU and torch",
            dir.display(),
            dir.display(),
            dir.display()
        );
        return Ok(());
    }
    let shapes = if quick { "quick" } else { "paper" };
    let (lib, script, module) = (library(), root.join(SCRIPT), crate::attention::artifact());
    cmd!(
        sh,
        "python3 {script} --lib {lib} --anchor none --shapes {shapes}"
    )
    .env("GPU_ATTENTION_MODULE", module)
    .run()
    .map_err(|_| {
        "the attention benchmark failed (above); it needs an NVIDIA Hopper GPU and Python with torch; `cargo xtask bench-attention --bundle DIR` writes a bundle for a GPU machine".to_string()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_run_script_installs_each_anchor_it_finds_and_is_bounded() {
        assert!(RUN_SH.contains(r#""$anchors"/fa3/*.whl"#));
        assert!(RUN_SH.contains(r#""$anchors/fa4.tar.xz""#));
        assert!(RUN_SH.contains("timeout -k 10"));
        assert!(RUN_SH.contains(r#"--lib "$here/libattention_bench.so""#));
        assert!(RUN_SH.contains("${ATTENTION_MODULE:-gpu_attention.ptx}"));
    }

    #[test]
    fn the_script_exists() {
        assert!(crate::util::root().join(SCRIPT).exists());
    }
}
