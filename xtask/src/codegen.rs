//! `cargo xtask codegen [--check]`: the generated source files of the repository, written from
//! here (or, with `--check`, compared with what is committed).
//!
//! Today these are the Hopper toolkit's `wgmma.mma_async` forms: `asm!` needs each of a form's up
//! to 128 accumulator operands by name, so every form is written out, from the tables below:
//!
//! - `crates/gpu-hopper/src/arch/wgmma/<a>[_<b>].rs`: one leaf per (input types, N, SS or RS);
//! - `crates/gpu-hopper/src/wgmma/generated.rs`: the typed layer on them (`Shape` per N with its
//!   unrolled accumulator visits, `MmaSs`/`MmaRs` per shape and input types).
//!
//! Adding an N is one entry of [`NS`]; adding input types, one row of [`INPUTS`] (and its
//! module line in the hand-written `arch/wgmma/mod.rs`). The test below fails when a committed
//! file differs from its generator, so `cargo xtask test`/`ci` (which run the workspace's tests)
//! check it too.
//!
//! The task also writes the GEMM's module that `gpu-gemm-host` embeds ([`GEMM_MODULE`]): the
//! final module of the kernel crate's build (`cargo xtask build`), so that a user of the host
//! crate needs neither the nightly toolchain nor the xtask. That needs the GEMM's build, so it is
//! not a plain test: `cargo xtask ci` compares it after its GPU builds ([`gemm_module`]).

use std::fmt::Write as _;

use xshell::Shell;

use crate::util::{Result, err, root};

/// The N of the generated `m64nNk*` forms. Every N is a multiple of 8 up to 256 (PTX ISA,
/// "wgmma.mma_async": `.m64n8k16` ..= `.m64n256k16`, `.m64n8k32` ..= `.m64n256k32`); the GEMM
/// uses 16 to 256 (8, 24, 40 and 48: the column halves of its 16-, 48-, 80- and 96-wide
/// transposing tiles on 64 weight rows, measurements); attention's key blocks 64, 128 and 192,
/// and 80 and 176 (measurement rows: FlashAttention-3's blocks at head dims 256 and 128).
const NS: &[u32] = &[8, 16, 24, 32, 40, 48, 64, 80, 96, 128, 176, 192, 256];

/// One pair of input types of `wgmma.mma_async` with f32 accumulators.
struct Inputs {
    /// The PTX type of A and of B.
    a: &'static str,
    b: &'static str,
    /// The toolkit's marker types for them.
    a_marker: &'static str,
    b_marker: &'static str,
    /// The K of one instruction: 16 for 16-bit inputs, 32 for 8-bit ones.
    k: u32,
    /// Whether the form has the transpose immediates (only `.f16`/`.bf16` have them).
    transposable: bool,
}

/// The generated input types (PTX ISA 8.0, sm_90a, "wgmma.mma_async": `.f16.f16`,
/// `.bf16.bf16`, and `.atype.btype` with each of `.e4m3`, `.e5m2`).
const INPUTS: &[Inputs] = &[
    Inputs {
        a: "bf16",
        b: "bf16",
        a_marker: "Bf16",
        b_marker: "Bf16",
        k: 16,
        transposable: true,
    },
    Inputs {
        a: "f16",
        b: "f16",
        a_marker: "F16",
        b_marker: "F16",
        k: 16,
        transposable: true,
    },
    Inputs {
        a: "e4m3",
        b: "e4m3",
        a_marker: "E4m3",
        b_marker: "E4m3",
        k: 32,
        transposable: false,
    },
    Inputs {
        a: "e5m2",
        b: "e5m2",
        a_marker: "E5m2",
        b_marker: "E5m2",
        k: 32,
        transposable: false,
    },
    Inputs {
        a: "e4m3",
        b: "e5m2",
        a_marker: "E4m3",
        b_marker: "E5m2",
        k: 32,
        transposable: false,
    },
    Inputs {
        a: "e5m2",
        b: "e4m3",
        a_marker: "E5m2",
        b_marker: "E4m3",
        k: 32,
        transposable: false,
    },
];

const HOPPER: &str = "crates/gpu-hopper/src";

/// Every generated file: (path from the repository root, contents).
pub fn files() -> Vec<(String, String)> {
    let mut files: Vec<(String, String)> = INPUTS
        .iter()
        .flat_map(|i| {
            ["ss", "rs"].map(|form| {
                (
                    format!("{HOPPER}/arch/wgmma/{}_{form}.rs", module(i)),
                    leaves(i, form),
                )
            })
        })
        .collect();
    files.push((format!("{HOPPER}/wgmma/generated.rs"), typed()));
    files
}

/// Writes every generated file, or with `check` reports those that differ from their generator.
pub fn run(check: bool) -> Result {
    let mut stale = Vec::new();
    for (path, want) in files() {
        let full = root().join(&path);
        let have = std::fs::read_to_string(&full).unwrap_or_default();
        if have == want {
            continue;
        }
        if check {
            stale.push(path);
        } else {
            std::fs::write(&full, want).map_err(err(&format!("writing {path}")))?;
            println!("wrote {path}");
        }
    }
    if stale.is_empty() {
        if check {
            println!("codegen: every generated file is current");
        }
        Ok(())
    } else {
        Err(format!(
            "generated files differ from their generator (xtask/src/codegen.rs); run `cargo xtask codegen`:\n  {}",
            stale.join("\n  ")
        ))
    }
}

const PREAMBLE: &str =
    "// generated by `cargo xtask codegen` (xtask/src/codegen.rs), do not edit\n";

/// The GEMM's module in `gpu-gemm-host`, which embeds it (`gpu_gemm_host::PTX`).
pub const GEMM_MODULE: &str = "crates/gpu-gemm-host/module/gpu_gemm.ptx";

/// The second line of [`GEMM_MODULE`], after [`PREAMBLE`] and before the build's PTX (both are
/// PTX comments).
const GEMM_ORIGIN: &str = "// from crates/gpu-gemm: the final module of `cargo xtask build` (target/gpu/sm_90a/gpu_gemm.ptx)\n";

/// `cargo xtask codegen [--check]`: the generated sources ([`run`]), then the GEMM's module,
/// built with the checks of `cargo xtask build` and written or compared ([`gemm_module`]).
/// Both are done before either fails.
pub fn task(sh: &Shell, check: bool) -> Result {
    let sources = run(check);
    let module = crate::gemm_kernel::build(sh).and_then(|_| gemm_module(check));
    let attention = crate::attention::build(sh).and_then(|_| attention_module(check));
    let errors: Vec<String> = [sources, module, attention]
        .into_iter()
        .filter_map(|r| r.err())
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors.join("\n"))
    }
}

/// The attention kernels' module in `gpu-attention-host`, which embeds it
/// (`gpu_attention_host::PTX`).
pub const ATTENTION_MODULE: &str = "crates/gpu-attention-host/module/gpu_attention.ptx";

/// The second line of [`ATTENTION_MODULE`].
const ATTENTION_ORIGIN: &str = "// from crates/gpu-attention: the final module of `cargo xtask build` (target/gpu/sm_90a/gpu_attention.ptx)\n";

/// Writes [`GEMM_MODULE`] from the GEMM's final module (`gemm_kernel::artifact`, which a build
/// in this process has just written), or with `check` fails when the committed one differs.
pub fn gemm_module(check: bool) -> Result {
    embedded_module(
        &crate::gemm_kernel::artifact(),
        GEMM_ORIGIN,
        GEMM_MODULE,
        "crates/gpu-gemm",
        check,
    )
}

/// [`gemm_module`] for the attention kernels' module ([`ATTENTION_MODULE`]).
pub fn attention_module(check: bool) -> Result {
    embedded_module(
        &crate::attention::artifact(),
        ATTENTION_ORIGIN,
        ATTENTION_MODULE,
        "crates/gpu-attention",
        check,
    )
}

/// Writes `module` (a host crate's embedded module) from the build at `built_path` behind
/// [`PREAMBLE`] and `origin`, or with `check` fails when the committed one differs.
fn embedded_module(
    built_path: &std::path::Path,
    origin: &str,
    module: &str,
    kernel_crate: &str,
    check: bool,
) -> Result {
    let built = std::fs::read_to_string(built_path)
        .map_err(err(&format!("reading {}", built_path.display())))?;
    only_sysroot_symbols(&built)?;
    let want = format!("{PREAMBLE}{origin}{built}");
    let full = root().join(module);
    let have = std::fs::read_to_string(&full).unwrap_or_default();
    match first_difference(&have, &want) {
        None => {
            if check {
                println!("codegen: {module} is the fresh build's");
            }
            Ok(())
        }
        Some(line) if check => Err(format!(
            "{module} differs from a fresh build of {kernel_crate} ({}) from line {line} on: run `cargo xtask codegen` and commit it",
            built_path.display()
        )),
        Some(_) => {
            std::fs::write(&full, &want).map_err(err(&format!("writing {module}")))?;
            println!("wrote {module} ({} bytes)", want.len());
            Ok(())
        }
    }
}

/// The crates whose functions may keep their own symbol in the embedded module: the sysroot's
/// (built by `-Zbuild-std` from the toolchain's sources, so their crate hashes depend only on
/// the toolchain).
const SYSROOT_CRATES: [&str; 2] = ["core", "compiler_builtins"];

/// Fails when a function of a crate outside [`SYSROOT_CRATES`] has a symbol of its own in
/// `ptx` (a `.func` the build did not inline). Its mangled name carries the crate's hash, and
/// cargo hashes a path dependency outside the workspace root (the kernel crate is its own root;
/// gpu-pipeline, gpu-hopper and gpu-gemm-plan are `../` of it) by its absolute path: the module
/// would then differ between two clones of the repository, and `codegen --check` would fail in
/// any clone but the one that wrote it.
fn only_sysroot_symbols(ptx: &str) -> Result {
    let mut crates: Vec<String> = v0_crate_names(ptx)
        .into_iter()
        .filter(|name| !SYSROOT_CRATES.contains(&name.as_str()))
        .collect();
    crates.sort();
    crates.dedup();
    // A legacy-mangled name (`_ZN...17h<hash>E`) hashes its crate's too.
    let legacy = ptx.contains("_ZN") && ptx.contains("17h");
    if crates.is_empty() && !legacy {
        return Ok(());
    }
    Err(format!(
        "the embedded module has symbols of {} (a function not inlined): their mangled names hash the checkout's absolute path (cargo hashes path dependencies outside the kernel crate's workspace by their full path), so the embedded module would differ between clones; inline the function (`#[inline(always)]`) or give it an unmangled name",
        if crates.is_empty() {
            "legacy-mangled functions".to_string()
        } else {
            crates.join(", ")
        }
    ))
}

/// The crate names of the v0-mangled symbols of `text` (`_R...`): each crate root
/// `Cs<disambiguator>_<length><name>`.
fn v0_crate_names(text: &str) -> Vec<String> {
    let symbol_char = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '$';
    let mut names = Vec::new();
    for symbol in text.split(|c: char| !symbol_char(c)) {
        let Some(mut rest) = symbol.strip_prefix("_R") else {
            continue;
        };
        while let Some(at) = rest.find("Cs") {
            rest = &rest[at + 2..];
            let Some(end) = rest.find('_') else { break };
            if !rest[..end].chars().all(|c| c.is_ascii_alphanumeric()) {
                continue;
            }
            let after = &rest[end + 1..];
            let digits = after.chars().take_while(char::is_ascii_digit).count();
            let Ok(len) = after[..digits].parse::<usize>() else {
                continue;
            };
            if let Some(name) = after.get(digits..digits + len) {
                names.push(name.to_string());
                rest = &after[digits + len..];
            }
        }
    }
    names
}

/// The first line (from 1) where `have` and `want` differ, `None` if they are equal.
fn first_difference(have: &str, want: &str) -> Option<usize> {
    if have == want {
        return None;
    }
    let same = have
        .split_inclusive('\n')
        .zip(want.split_inclusive('\n'))
        .take_while(|(a, b)| a == b)
        .count();
    Some(same + 1)
}

fn module(i: &Inputs) -> String {
    if i.a == i.b {
        i.a.to_string()
    } else {
        format!("{}_{}", i.a, i.b)
    }
}

/// The leaf's name: `wgmma_m64n{n}k{k}_f32_{a}_{b}_{ss|rs}`.
fn leaf_name(i: &Inputs, n: u32, form: &str) -> String {
    format!("wgmma_m64n{n}k{}_f32_{}_{}_{form}", i.k, i.a, i.b)
}

/// The instruction's name without operands.
fn instruction(i: &Inputs, n: u32) -> String {
    format!(
        "wgmma.mma_async.sync.aligned.m64n{n}k{}.f32.{}.{}",
        i.k, i.a, i.b
    )
}

/// `{{{d0}, {d1}, ..}}` as it stands in an `asm!` template (a literal brace pair around the
/// operands).
fn accumulator_list(len: u32) -> String {
    let regs: Vec<String> = (0..len).map(|r| format!("{{d{r}}}")).collect();
    format!("{{{{{}}}}}", regs.join(", "))
}

/// `d0 = inout(reg32) d[0], ..`, eight to a line.
fn accumulator_operands(s: &mut String, len: u32) {
    for chunk in (0..len).collect::<Vec<_>>().chunks(8) {
        let line: Vec<String> = chunk
            .iter()
            .map(|r| format!("d{r} = inout(reg32) d[{r}]"))
            .collect();
        let _ = writeln!(s, "                {},", line.join(", "));
    }
}

/// The leaf file of one pair of input types and one form (`ss`: A from shared memory, `rs`: A
/// from registers), for every N.
fn leaves(i: &Inputs, form: &str) -> String {
    let mut s = String::from(PREAMBLE);
    let _ = writeln!(
        s,
        "//! `wgmma.mma_async` with `.{}` A and `.{}` B and f32 accumulators, `m64nNk{}` for N in {NS:?}:\n\
         //! {}.",
        i.a,
        i.b,
        i.k,
        if form == "ss" {
            "A from shared memory (two matrix descriptors)"
        } else {
            "A from registers (four `u32` per thread) and B from shared memory"
        }
    );
    s.push_str("\n#[cfg(target_arch = \"nvptx64\")]\nuse core::arch::asm;\n\n");
    s.push_str("#[cfg(not(target_arch = \"nvptx64\"))]\nuse crate::arch::gpu_only;\n");
    let imm = if i.transposable {
        "{sa}, {sb}, {ta}, {tb}"
    } else {
        "{sa}, {sb}"
    };
    let imm_rs = if i.transposable {
        "{sa}, {sb}, {tb}"
    } else {
        "{sa}, {sb}"
    };
    for &n in NS {
        let len = n / 2;
        {
            let ss = form == "ss";
            let name = leaf_name(i, n, form);
            let generics = match (ss, i.transposable) {
                (true, true) => {
                    "<const SCALE_A: i32, const SCALE_B: i32, const TRANS_A: u32, const TRANS_B: u32>"
                }
                (false, true) => "<const SCALE_A: i32, const SCALE_B: i32, const TRANS_B: u32>",
                (_, false) => "<const SCALE_A: i32, const SCALE_B: i32>",
            };
            let (a_param, a_doc) = if ss {
                (
                    "desc_a: u64",
                    "A (64 x K) and B (K x N) both in shared memory, described by `desc_a` and `desc_b`",
                )
            } else {
                (
                    "a: [u32; 4]",
                    "A (64 x K) from the registers `a` (the thread's fragment, see `wgmma::fragment`) and B (K x N) in shared memory, described by `desc_b`",
                )
            };
            let operands = if ss {
                "{a}, {b}"
            } else {
                "{{{a0}, {a1}, {a2}, {a3}}}, {b}"
            };
            let imms = if ss { imm } else { imm_rs };
            s.push('\n');
            s.push_str("leaf! {\n");
            let _ = writeln!(
                s,
                "    /// `{} d, {}, b-desc, scale-d, {};`: the warpgroup multiplies {a_doc} into its",
                instruction(i, n),
                if ss { "a-desc" } else { "a" },
                if ss && i.transposable {
                    "imm-scale-a, imm-scale-b, imm-trans-a, imm-trans-b"
                } else if i.transposable {
                    "imm-scale-a, imm-scale-b, imm-trans-b"
                } else {
                    "imm-scale-a, imm-scale-b"
                }
            );
            let _ = writeln!(
                s,
                "    /// 64 x {n} f32 accumulators `d`, {len} per thread, with K = {}. `scale_d == false`",
                i.k
            );
            s.push_str("    /// overwrites `d` (D = A B) instead of adding (D = A B + D); `SCALE_A`, `SCALE_B` (1 or -1)\n");
            s.push_str("    /// negate A or B");
            if i.transposable {
                s.push_str(if ss {
                    "; `TRANS_A`, `TRANS_B` (0 or 1) read A or B as MN-major\n    /// instead of K-major.\n"
                } else {
                    "; `TRANS_B` (0 or 1) reads B as MN-major instead of K-major.\n"
                });
            } else {
                s.push_str(" (8-bit inputs have no transpose: both are K-major).\n");
            }
            s.push_str("    ///\n    /// PTX ISA 8.0, sm_90a. PTX ISA, \"Asynchronous Warpgroup Level Matrix Multiply-Accumulate\n    /// Instructions: wgmma.mma_async\".\n");
            s.push_str("    ///\n    /// # Safety\n    ///\n");
            s.push_str("    /// The whole warpgroup executes it converged (it is `.aligned`; inline assembly is not\n");
            s.push_str("    /// `convergent` to LLVM, so it must not sit under lane-dependent control flow), after\n");
            s.push_str("    /// `wgmma.fence`; the descriptors describe valid shared memory of the operands' layout;\n");
            s.push_str("    /// `d`");
            if !ss {
                s.push_str(" and `a` are");
            } else {
                s.push_str(" is");
            }
            s.push_str(" not used by other instructions before the `wgmma.wait_group` that covers\n    /// this instruction; the immediates are in range (the typed layer checks them).\n");
            let _ = writeln!(s, "    #[gpu_only(\"{}\")]", instruction(i, n));
            s.push_str("    #[inline(always)]\n");
            let _ = writeln!(
                s,
                "    pub unsafe fn {name}{generics}(d: &mut [f32; {len}], {a_param}, desc_b: u64, scale_d: bool) {{"
            );
            s.push_str("        // SAFETY: guaranteed by the caller.\n        unsafe {\n            asm!(\n");
            s.push_str("                \"{{\",\n                \".reg .pred p;\",\n                \"setp.ne.b32 p, {acc}, 0;\",\n");
            let _ = writeln!(
                s,
                "                \"{} {}, {operands}, p, {imms};\",",
                instruction(i, n),
                accumulator_list(len)
            );
            s.push_str("                \"}}\",\n");
            accumulator_operands(&mut s, len);
            if ss {
                s.push_str("                a = in(reg64) desc_a,\n");
            } else {
                s.push_str("                a0 = in(reg32) a[0], a1 = in(reg32) a[1], a2 = in(reg32) a[2], a3 = in(reg32) a[3],\n");
            }
            s.push_str("                b = in(reg64) desc_b,\n");
            s.push_str("                acc = in(reg32) u32::from(scale_d),\n");
            s.push_str(
                "                sa = const SCALE_A,\n                sb = const SCALE_B,\n",
            );
            if i.transposable {
                if ss {
                    s.push_str("                ta = const TRANS_A,\n");
                }
                s.push_str("                tb = const TRANS_B,\n");
            }
            s.push_str("                options(nostack, preserves_flags),\n            );\n        }\n    }\n}\n");
        }
    }
    s
}

/// The typed layer: `Shape` for every N, `MmaSs`/`MmaRs` for every N and input pair.
fn typed() -> String {
    let mut s = String::from(PREAMBLE);
    s.push_str(
        "//! The typed layer on the generated leaves: a [`Shape`] per N (accumulators and their\n",
    );
    s.push_str(
        "//! unrolled visits) and the [`MmaSs`]/[`MmaRs`] forms of every shape and input pair.\n\n",
    );
    s.push_str("use super::{Bf16, E4m3, E5m2, F16, M64, Shape};\n");
    for &n in NS {
        let len = n / 2;
        let _ = writeln!(s, "\nimpl Shape for M64<{n}> {{");
        let _ = writeln!(s, "    const N: u32 = {n};");
        let _ = writeln!(s, "    type Acc = [f32; {len}];");
        let _ = writeln!(s, "    const ZERO: [f32; {len}] = [0.0; {len}];");
        s.push_str("    #[inline(always)]\n");
        let _ = writeln!(
            s,
            "    fn each_pair(d: &[f32; {len}], mut f: impl FnMut(u32, f32, f32)) {{"
        );
        let pairs: Vec<String> = (0..len)
            .step_by(2)
            .map(|i| format!("f({i}, d[{i}], d[{}]);", i + 1))
            .collect();
        for chunk in pairs.chunks(4) {
            let _ = writeln!(s, "        {}", chunk.join(" "));
        }
        s.push_str("    }\n    #[inline(always)]\n");
        let _ = writeln!(
            s,
            "    fn each_quad(d: &[f32; {len}], mut f: impl FnMut(u32, [f32; 4])) {{"
        );
        let quads: Vec<String> = (0..len / 4)
            .map(|q| {
                format!(
                    "f({q}, [d[{}], d[{}], d[{}], d[{}]]);",
                    4 * q,
                    4 * q + 1,
                    4 * q + 2,
                    4 * q + 3
                )
            })
            .collect();
        for chunk in quads.chunks(2) {
            let _ = writeln!(s, "        {}", chunk.join(" "));
        }
        s.push_str("    }\n    #[inline(always)]\n");
        let _ = writeln!(
            s,
            "    fn map_quads(d: &mut [f32; {len}], mut f: impl FnMut(u32, [f32; 4]) -> [f32; 4]) {{"
        );
        for q in 0..len / 4 {
            let i = 4 * q;
            let quad = format!("d[{i}], d[{}], d[{}], d[{}]", i + 1, i + 2, i + 3);
            let _ = writeln!(s, "        [{quad}] = f({q}, [{quad}]);");
        }
        s.push_str("    }\n}\n");
    }
    s.push('\n');
    for i in INPUTS {
        let m = module(i);
        let kind = if i.transposable {
            "forms_16bit"
        } else {
            "forms_8bit"
        };
        for &n in NS {
            let _ = writeln!(
                s,
                "{kind}!({n}, {}, {}, {m}_ss::{}, {m}_rs::{});",
                i.a_marker,
                i.b_marker,
                leaf_name(i, n, "ss"),
                leaf_name(i, n, "rs")
            );
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_files_are_current() {
        if let Err(stale) = run(true) {
            panic!("{stale}");
        }
    }

    #[test]
    fn the_first_differing_line_is_found() {
        assert_eq!(first_difference("a\nb\n", "a\nb\n"), None);
        assert_eq!(first_difference("a\nb\n", "a\nc\n"), Some(2));
        assert_eq!(first_difference("", "a\n"), Some(1));
        assert_eq!(first_difference("a\nb", "a\nb\n"), Some(2));
        assert_eq!(first_difference("a\nb\n", "a\nb\nc\n"), Some(3));
    }

    #[test]
    fn symbols_of_path_crates_are_refused_by_crate() {
        let core = ".func _RNvNtCs7WeCYW24GLf_4core9panicking9panic_fmt\n";
        assert_eq!(v0_crate_names(core), ["core"]);
        assert!(only_sysroot_symbols(core).is_ok());
        let pipeline = "call.uni _RINvMs_NtCsdITdUX3FvVn_12gpu_pipeline5guardNtB5_5Guard10wrong_roleECsjBgXQGp5W90_16pipeline_kernels, (\n";
        assert_eq!(
            v0_crate_names(pipeline),
            ["gpu_pipeline", "pipeline_kernels"]
        );
        let e = only_sysroot_symbols(&format!("{core}{pipeline}")).unwrap_err();
        assert!(e.contains("gpu_pipeline, pipeline_kernels"), "{e}");
        assert!(only_sysroot_symbols(".func _ZN8gpu_gemm4tile17h0123456789abcdefE\n").is_err());
    }

    /// The module embedded in gpu-gemm-host starts with the preamble and is the build's PTX
    /// with its launch bounds: what `gemm_module` writes (whether it is the current build's is
    /// `cargo xtask codegen --check`'s question, which needs the build).
    #[test]
    fn the_embedded_module_is_a_generated_gemm_module() {
        let module = std::fs::read_to_string(root().join(GEMM_MODULE)).unwrap();
        let ptx = module
            .strip_prefix(PREAMBLE)
            .and_then(|rest| rest.strip_prefix(GEMM_ORIGIN))
            .expect("the preamble");
        assert!(ptx.contains(".target sm_90a"));
        crate::gemm_kernel::check_ptx(ptx).unwrap();
        only_sysroot_symbols(ptx).unwrap();
    }

    /// The same of the module embedded in gpu-attention-host; and its check refuses the module
    /// with one entry's `griddepcontrol.wait` taken out (a programmatic launch of it could read
    /// Q before the kernel before it wrote it).
    #[test]
    fn the_embedded_module_is_a_generated_attention_module() {
        let module = std::fs::read_to_string(root().join(ATTENTION_MODULE)).unwrap();
        let ptx = module
            .strip_prefix(PREAMBLE)
            .and_then(|rest| rest.strip_prefix(ATTENTION_ORIGIN))
            .expect("the preamble");
        crate::attention::check_ptx(ptx).unwrap();
        only_sysroot_symbols(ptx).unwrap();
        let unwaited = ptx.replacen("griddepcontrol.wait;", "", 1);
        assert_ne!(unwaited, ptx);
        let e = crate::attention::check_ptx(&unwaited).unwrap_err();
        assert!(e.contains("griddepcontrol.wait"), "{e}");
    }

    #[test]
    fn every_n_is_a_valid_wgmma_n() {
        for &n in NS {
            assert!(n % 8 == 0 && (8..=256).contains(&n), "N = {n}");
        }
    }
}
