//! Tidy checks: the invariants of ARCHITECTURE.md that the library's source text shows, as plain
//! tests (`cargo test -p xtask`, part of `cargo xtask test` and `ci` through `cargo test
//! --workspace`).
//!
//! - every `asm!` of the library is under `src/arch/`;
//! - the pure modules ([`PURE_MODULES`]) contain no `unsafe` and no `cfg` (their `#[cfg(test)]`
//!   test modules aside);
//! - no `asm!` is `nomem`, `readonly` or `pure`, except the pure register reads of
//!   [`NOMEM_ALLOWED`];
//! - no two modules of the library import each other (no cycle in the file-level graph of
//!   `crate::` and `super::` paths);
//! - no tracked path (`git ls-files`) is in a `target` folder, no tracked file is over 256 KiB
//!   (but the generated files of [`LARGE_FILES_ALLOWED`]), and `tests/results` holds at most 60
//!   files and 1.5 MB;
//! - every relative link of the project's markdown ([`LINKED_DOCUMENTS`], `tests/results/*.md`)
//!   points to a tracked file or folder;
//! - the library's own README ([`CRATE_README`], packaged with it) has the repository README's
//!   example, unchanged.
//!
//! The text is read simply: comments, string and character literals are blanked first
//! ([`strip`], which keeps every line where it was, for the messages), then the checks look at
//! identifiers and punctuation. The checker's own pieces are tested on small inline sources below.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The library's source folder, from the repository root.
const LIBRARY: &str = "crates/gpu-pipeline/src";

/// The pure modules (relative to [`LIBRARY`]): plain arithmetic, no `unsafe`, no `cfg`.
const PURE_MODULES: [&str; 2] = ["cursor.rs", "threshold.rs"];

/// The only functions (or, for leaves a macro defines, the macro), by crate, whose `asm!` may be
/// `nomem`, `readonly` or `pure`: register-only computations that neither read nor order memory
/// (reads of special registers, `s_sleep`, address and number conversions).
const NOMEM_ALLOWED: [(&str, &str); 16] = [
    ("gpu-pipeline", "cvta_to_shared"),           // cvta.to.shared.u64
    ("gpu-pipeline", "laneid"),                   // mov.u32 %laneid
    ("gpu-pipeline", "lanemask_lt"),              // mov.u32 %lanemask_lt
    ("gpu-pipeline", "cluster_ctarank"),          // mov.u32 %cluster_ctarank
    ("gpu-pipeline", "special_xyz"),              // mov.u32 %tid / %ntid / %ctaid
    ("gpu-pipeline", "s_sleep_1"),                // s_sleep 1
    ("gpu-pipeline", "createpolicy_evict_first"), // createpolicy (a register value)
    ("gpu-pipeline", "createpolicy_evict_last"),  // createpolicy (a register value)
    ("gpu-hopper", "cvt_rn_bf16x2_f32"),          // cvt.rn.bf16x2.f32
    ("gpu-hopper", "cluster_nctarank"),           // mov.u32 %cluster_nctarank
    ("gpu-hopper", "cvt_rn_f16x2_f32"),           // cvt.rn.f16x2.f32
    ("gpu-hopper", "ex2_approx_ftz_f32"),         // ex2.approx.ftz.f32
    ("gpu-hopper", "lg2_approx_ftz_f32"),         // lg2.approx.ftz.f32
    ("gpu-hopper", "fma_rn_f32"),                 // fma.rn.f32
    ("gpu-hopper", "register_fence_f32"), // no instruction: a register in and out (volatile)
    // Reads memory no thread writes during the launch (its contract): it may move across any
    // barrier.
    ("gpu-hopper", "ld_global_nc_v4_u32"), // ld.global.nc.v4.u32
];

/// The `asm!` options that let the compiler move memory accesses across the block.
const MEMORY_FREE_OPTIONS: [&str; 3] = ["nomem", "readonly", "pure"];

// ---------------------------------------------------------------- reading source text

/// `source` with the contents of comments (line, block, doc; nested block comments included),
/// string literals (plain, byte, C, raw) and character literals replaced by spaces. Line breaks
/// stay, so a byte offset keeps its line number; the quotes stay, so `"..."` still separates.
fn strip(source: &str) -> String {
    let chars: Vec<char> = source.chars().collect();
    let mut out = String::with_capacity(source.len());
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(blank(chars[i]));
                    i += 1;
                }
            }
        } else if let Some(hashes) = raw_string_start(&chars, i) {
            // r"..", r#".."#, br".., cr"..: up to the quote followed by as many hashes.
            while chars[i] != '"' {
                out.push(chars[i]);
                i += 1;
            }
            out.push('"');
            i += 1;
            while i < chars.len() {
                if chars[i] == '"' && (1..=hashes).all(|k| chars.get(i + k) == Some(&'#')) {
                    out.push('"');
                    out.extend(std::iter::repeat_n('#', hashes));
                    i += 1 + hashes;
                    break;
                }
                out.push(blank(chars[i]));
                i += 1;
            }
        } else if c == '"' {
            out.push('"');
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    out.push(' ');
                    i += 1;
                }
                if i < chars.len() {
                    out.push(blank(chars[i]));
                    i += 1;
                }
            }
            out.push('"');
            i += 1;
        } else if c == '\'' && !is_ident_char(out.chars().last()) {
            // A character literal ('x', '\n', '\'', '\u{..}'), or a lifetime/label ('a), which
            // stays.
            let end = if next == Some('\\') {
                (i + 2..chars.len()).find(|&j| chars[j] == '\'' && j > i + 2)
            } else if chars.get(i + 2) == Some(&'\'') {
                Some(i + 2)
            } else {
                None
            };
            match end {
                Some(end) => {
                    out.push('\'');
                    out.extend(std::iter::repeat_n(' ', end - i - 1));
                    out.push('\'');
                    i = end + 1;
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// If a raw string literal starts at `i` (`r"`, `r#"`, `br"`, `cr#"`, ... not inside an
/// identifier), the number of its hashes.
fn raw_string_start(chars: &[char], i: usize) -> Option<usize> {
    if i > 0 && is_ident_char(Some(chars[i - 1])) {
        return None;
    }
    let mut j = i;
    if matches!(chars.get(j), Some('b' | 'c')) {
        j += 1;
    }
    if chars.get(j) != Some(&'r') {
        return None;
    }
    j += 1;
    let hashes = chars[j..].iter().take_while(|&&c| c == '#').count();
    (chars.get(j + hashes) == Some(&'"')).then_some(hashes)
}

fn is_ident_char(c: Option<char>) -> bool {
    c.is_some_and(|c| c.is_alphanumeric() || c == '_')
}

/// One token of stripped source: an identifier (keywords included, `$name` kept whole) or one
/// punctuation character, with its byte offset.
#[derive(Debug, Clone, PartialEq)]
struct Token<'a> {
    text: &'a str,
    at: usize,
}

fn tokens(stripped: &str) -> Vec<Token<'_>> {
    let mut out = Vec::new();
    let mut iter = stripped.char_indices().peekable();
    while let Some((at, c)) = iter.next() {
        if c.is_alphanumeric() || c == '_' || c == '$' {
            let mut end = at + c.len_utf8();
            while let Some(&(j, d)) = iter.peek() {
                if d.is_alphanumeric() || d == '_' {
                    end = j + d.len_utf8();
                    iter.next();
                } else {
                    break;
                }
            }
            out.push(Token {
                text: &stripped[at..end],
                at,
            });
        } else if !c.is_whitespace() {
            out.push(Token {
                text: &stripped[at..at + c.len_utf8()],
                at,
            });
        }
    }
    out
}

/// The 1-based line of byte offset `at`.
fn line_of(text: &str, at: usize) -> usize {
    text[..at].matches('\n').count() + 1
}

/// The index of the token that closes the bracket opened at `open`.
fn closing(tokens: &[Token], open: usize) -> usize {
    let (left, right) = match tokens[open].text {
        "(" => ("(", ")"),
        "[" => ("[", "]"),
        _ => ("{", "}"),
    };
    let mut depth = 0;
    for (i, t) in tokens.iter().enumerate().skip(open) {
        if t.text == left {
            depth += 1;
        } else if t.text == right {
            depth -= 1;
            if depth == 0 {
                return i;
            }
        }
    }
    tokens.len() - 1
}

/// Every `.rs` file under `dir`, sorted.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// The Rust files under `dir` (relative to the repository root) as (path relative to `dir`,
/// stripped text).
fn stripped_files(dir: &str) -> Vec<(String, String)> {
    let dir = crate::util::root().join(dir);
    rust_files(&dir)
        .into_iter()
        .map(|path| {
            let text = fs::read_to_string(&path).expect("a readable source file");
            let name = path
                .strip_prefix(&dir)
                .expect("under the folder listed")
                .to_string_lossy()
                .replace('\\', "/");
            (name, strip(&text))
        })
        .collect()
}

/// The library's files as (path relative to [`LIBRARY`], stripped text).
fn library() -> Vec<(String, String)> {
    stripped_files(LIBRARY)
}

// ---------------------------------------------------------------- (a) asm! only in arch/

/// The lines of `stripped` with an `asm!`-family macro (`asm!`, `global_asm!`, `naked_asm!`).
fn asm_lines(stripped: &str) -> Vec<usize> {
    let toks = tokens(stripped);
    toks.windows(2)
        .filter(|w| w[0].text.ends_with("asm") && w[1].text == "!")
        .filter(|w| matches!(w[0].text, "asm" | "global_asm" | "naked_asm"))
        .map(|w| line_of(stripped, w[0].at))
        .collect()
}

// ---------------------------------------------------------------- (b) pure modules

/// The `unsafe` and `cfg` uses of `stripped`, as `line: what`; `#[cfg(test)]` is allowed (the
/// module's tests).
fn impurities(stripped: &str) -> Vec<String> {
    let toks = tokens(stripped);
    let mut found = Vec::new();
    for (i, t) in toks.iter().enumerate() {
        let what = match t.text {
            "unsafe" => "`unsafe`",
            "cfg" => {
                let is_cfg_test = toks.get(i + 1).is_some_and(|t| t.text == "(")
                    && toks.get(i + 2).is_some_and(|t| t.text == "test")
                    && toks.get(i + 3).is_some_and(|t| t.text == ")")
                    && i >= 2
                    && toks[i - 1].text == "["
                    && toks[i - 2].text == "#";
                if is_cfg_test {
                    continue;
                }
                "`cfg`"
            }
            "cfg_attr" => "`cfg_attr`",
            _ => continue,
        };
        found.push(format!("{}: {what}", line_of(stripped, t.at)));
    }
    found
}

// ---------------------------------------------------------------- (c) memory-free asm

/// Each `asm!` of `stripped` with a memory-free option: (the function it is in, or for a
/// function a macro defines, the macro; the option; the line).
fn memory_free_asm(stripped: &str) -> Vec<(String, String, usize)> {
    let toks = tokens(stripped);
    let mut found = Vec::new();
    for i in 0..toks.len().saturating_sub(2) {
        if toks[i].text != "asm" || toks[i + 1].text != "!" || toks[i + 2].text != "(" {
            continue;
        }
        let end = closing(&toks, i + 2);
        let Some(options) = (i + 2..end)
            .find(|&j| toks[j].text == "options" && toks.get(j + 1).is_some_and(|t| t.text == "("))
        else {
            continue;
        };
        let options_end = closing(&toks, options + 1);
        for t in &toks[options + 2..options_end] {
            if MEMORY_FREE_OPTIONS.contains(&t.text) {
                found.push((
                    enclosing_function(&toks[..i]),
                    t.text.to_string(),
                    line_of(stripped, toks[i].at),
                ));
            }
        }
    }
    found
}

/// The name after the last `fn` of `before`; for `fn $name` (a macro's), the name after the last
/// `macro_rules!`.
fn enclosing_function(before: &[Token]) -> String {
    let last = |keyword: &str, skip: usize| {
        before
            .windows(skip + 1)
            .rev()
            .find(|w| w[0].text == keyword && (skip == 1 || w[1].text == "!"))
            .map(|w| w[skip].text.to_string())
    };
    match last("fn", 1) {
        Some(name) if !name.starts_with('$') => name,
        _ => last("macro_rules", 2).unwrap_or_else(|| "?".to_string()),
    }
}

// ---------------------------------------------------------------- (d) the module graph

/// The module path of a library file: `lib.rs` is `crate`, `a/mod.rs` is `a`, `a/b.rs` is `a::b`.
fn module_of(file: &str) -> String {
    let path = file.trim_end_matches(".rs");
    let path = path.strip_suffix("/mod").unwrap_or(path);
    if path == "lib" {
        "crate".to_string()
    } else {
        path.replace('/', "::")
    }
}

/// The paths of `stripped` (a file of module `module`) that start with `crate::` or `super::`,
/// resolved to absolute paths (segments after `crate`), each with its line. Use-trees with
/// braces are expanded; `super` inside an inline `mod m { .. }` refers to the file's module when
/// it does not leave the file, and is then not a reference to another file.
fn crate_paths(stripped: &str, module: &str) -> Vec<(Vec<String>, usize)> {
    let toks = tokens(stripped);
    let file_module: Vec<String> = if module == "crate" {
        Vec::new()
    } else {
        module.split("::").map(str::to_string).collect()
    };
    // The inline modules enclosing each token: `mod name {` opens one.
    let mut inline_depth = vec![0usize; toks.len()];
    let mut braces: Vec<bool> = Vec::new();
    let mut depth = 0;
    for (i, t) in toks.iter().enumerate() {
        match t.text {
            "{" => {
                let is_mod = i >= 2 && toks[i - 2].text == "mod";
                braces.push(is_mod);
                depth += usize::from(is_mod);
            }
            "}" => {
                if braces.pop() == Some(true) {
                    depth -= 1;
                }
            }
            _ => {}
        }
        inline_depth[i] = depth;
    }
    let mut found = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        let starts_path = matches!(toks[i].text, "crate" | "super")
            && toks.get(i + 1).is_some_and(|t| t.text == ":")
            && toks.get(i + 2).is_some_and(|t| t.text == ":")
            && (i < 2 || !(toks[i - 1].text == ":" && toks[i - 2].text == ":"));
        if !starts_path {
            i += 1;
            continue;
        }
        let line = line_of(stripped, toks[i].at);
        // The absolute base of the path, or None when `super` stays inside this file.
        let mut j = i;
        let base: Option<Vec<String>> = if toks[i].text == "crate" {
            j += 3;
            Some(Vec::new())
        } else {
            let mut supers = 0;
            while toks.get(j).is_some_and(|t| t.text == "super")
                && toks.get(j + 1).is_some_and(|t| t.text == ":")
            {
                supers += 1;
                j += 3;
            }
            let inline = inline_depth[i];
            if supers <= inline {
                None
            } else {
                let up = supers - inline;
                Some(file_module[..file_module.len().saturating_sub(up)].to_vec())
            }
        };
        let mut paths = Vec::new();
        let end = use_tree(&toks, j, Vec::new(), &mut paths);
        if let Some(base) = base {
            for path in paths {
                let mut full = base.clone();
                full.extend(path);
                found.push((full, line));
            }
        }
        i = end.max(i + 1);
    }
    found
}

/// Reads the use-tree (or plain path) starting at token `at` with `prefix`, pushes each full
/// path (without `self`, `*` or `as` renames) to `out`, and returns the index after it.
fn use_tree(
    toks: &[Token],
    mut at: usize,
    mut prefix: Vec<String>,
    out: &mut Vec<Vec<String>>,
) -> usize {
    loop {
        match toks.get(at).map(|t| t.text) {
            Some("{") => {
                let end = closing(toks, at);
                let mut k = at + 1;
                while k < end {
                    k = use_tree(toks, k, prefix.clone(), out);
                    while k < end && toks[k].text != "," {
                        k += 1;
                    }
                    k += 1;
                }
                return end + 1;
            }
            Some(name) if is_ident_char(name.chars().next()) && name != "as" => {
                if name != "self" {
                    prefix.push(name.to_string());
                }
                at += 1;
                if toks.get(at).is_some_and(|t| t.text == ":")
                    && toks.get(at + 1).is_some_and(|t| t.text == ":")
                {
                    at += 2;
                } else {
                    out.push(prefix);
                    return at;
                }
            }
            _ => {
                out.push(prefix);
                return at;
            }
        }
    }
}

/// The names the root module re-exports (`pub use a::b::Name;` in `lib.rs`), and the module each
/// comes from.
fn root_reexports(lib_stripped: &str) -> BTreeMap<String, Vec<String>> {
    let toks = tokens(lib_stripped);
    let mut map = BTreeMap::new();
    for i in 0..toks.len().saturating_sub(2) {
        if toks[i].text == "pub" && toks[i + 1].text == "use" {
            let mut paths = Vec::new();
            use_tree(&toks, i + 2, Vec::new(), &mut paths);
            for mut path in paths {
                if let Some(name) = path.pop() {
                    map.insert(name, path);
                }
            }
        }
    }
    map
}

/// The file-level import graph: module -> (module it refers to -> the first line that does).
fn module_graph(files: &[(String, String)]) -> BTreeMap<String, BTreeMap<String, usize>> {
    let modules: BTreeSet<String> = files.iter().map(|(f, _)| module_of(f)).collect();
    let reexports = files
        .iter()
        .find(|(f, _)| f == "lib.rs")
        .map(|(_, text)| root_reexports(text))
        .unwrap_or_default();
    let mut graph: BTreeMap<String, BTreeMap<String, usize>> = BTreeMap::new();
    for (file, text) in files {
        let from = module_of(file);
        let edges = graph.entry(from.clone()).or_default();
        for (path, line) in crate_paths(text, &from) {
            let target = resolve(&path, &modules, &reexports);
            if target != from {
                edges.entry(target).or_insert(line);
            }
        }
    }
    graph
}

/// The library module a path refers to: its longest prefix that is a module file; a name the
/// root re-exports goes to the module it comes from.
fn resolve(
    path: &[String],
    modules: &BTreeSet<String>,
    reexports: &BTreeMap<String, Vec<String>>,
) -> String {
    for len in (1..=path.len()).rev() {
        let candidate = path[..len].join("::");
        if modules.contains(&candidate) {
            return candidate;
        }
    }
    if let Some(source) = path.first().and_then(|name| reexports.get(name))
        && !source.is_empty()
    {
        return resolve(source, modules, &BTreeMap::new());
    }
    "crate".to_string()
}

/// Every cycle of `graph`, one per strongly connected component of two or more modules, as the
/// modules in order (the first repeated at the end).
fn cycles(graph: &BTreeMap<String, BTreeMap<String, usize>>) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    let mut seen: BTreeSet<String> = BTreeSet::new();
    for start in graph.keys() {
        if seen.contains(start) {
            continue;
        }
        // A shortest path from `start` back to itself, breadth first.
        let mut parent: BTreeMap<String, String> = BTreeMap::new();
        let mut queue = std::collections::VecDeque::from([start.clone()]);
        let mut closing_node = None;
        'search: while let Some(node) = queue.pop_front() {
            for next in graph.get(&node).into_iter().flat_map(|e| e.keys()) {
                if next == start {
                    closing_node = Some(node.clone());
                    break 'search;
                }
                if !parent.contains_key(next) {
                    parent.insert(next.clone(), node.clone());
                    queue.push_back(next.clone());
                }
            }
        }
        if let Some(mut node) = closing_node {
            let mut cycle = vec![start.clone()];
            let mut back = Vec::new();
            while node != *start {
                back.push(node.clone());
                node = parent[&node].clone();
            }
            cycle.extend(back.into_iter().rev());
            cycle.push(start.clone());
            seen.extend(cycle.iter().cloned());
            found.push(cycle);
        }
    }
    found
}

/// A cycle in words, with the line of each import: `pipeline.rs:6 -> stage.rs:32 -> pipeline`.
fn describe(cycle: &[String], graph: &BTreeMap<String, BTreeMap<String, usize>>) -> String {
    let mut text = String::new();
    for pair in cycle.windows(2) {
        let line = graph[&pair[0]][&pair[1]];
        text.push_str(&format!("{} (line {line}) -> ", pair[0]));
    }
    text.push_str(&cycle[cycle.len() - 1]);
    text
}

// ---------------------------------------------------------------- (e) the tracked files

/// The most a tracked file may weigh, unless [`LARGE_FILES_ALLOWED`] names it.
const MAX_TRACKED_FILE_BYTES: u64 = 256 * 1024;

/// Generated files that may be over [`MAX_TRACKED_FILE_BYTES`], by path from the repository
/// root: the GEMM's module that gpu-gemm-host embeds (so that its users need no nightly build;
/// `cargo xtask codegen` writes it, `ci` checks it). Other build outputs are not tracked, and raw
/// device logs stay in git history (tests/results/README.md).
const LARGE_FILES_ALLOWED: [&str; 2] = [
    "crates/gpu-gemm-host/module/gpu_gemm.ptx",
    "crates/gpu-attention-host/module/gpu_attention.ptx",
];

/// The device results folder: one summary, its CSV and its plot per milestone.
const RESULTS: &str = "tests/results";

/// The most files and bytes [`RESULTS`] may hold in all.
const RESULTS_MAX_FILES: usize = 60;
const RESULTS_MAX_BYTES: u64 = 1_500_000;

/// Every path git tracks (`git ls-files`), from the repository root, with `/` separators.
fn tracked_files() -> Vec<String> {
    let output = std::process::Command::new("git")
        .args(["ls-files", "-z"])
        .current_dir(crate::util::root())
        .output()
        .unwrap_or_else(|e| panic!("cannot run `git ls-files` (the tidy checks need git): {e}"));
    assert!(
        output.status.success(),
        "`git ls-files` failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout)
        .expect("tracked paths are UTF-8")
        .split('\0')
        .filter(|path| !path.is_empty())
        .map(str::to_string)
        .collect()
}

/// The paths of `paths` with a `target` component (a Cargo build folder at any depth).
fn under_a_target_folder(paths: &[String]) -> Vec<&str> {
    paths
        .iter()
        .filter(|path| path.split('/').any(|part| part == "target"))
        .map(String::as_str)
        .collect()
}

/// The size of a tracked file in the work tree (0 if it was deleted there).
fn size_of(path: &str) -> u64 {
    fs::metadata(crate::util::root().join(path)).map_or(0, |m| m.len())
}

// ---------------------------------------------------------------- (f) markdown links

/// The documents whose relative links must point to tracked files, besides every tracked
/// `tests/results/*.md`.
const LINKED_DOCUMENTS: [&str; 17] = [
    "README.md",
    "ARCHITECTURE.md",
    "CHANGELOG.md",
    "crates/gpu-pipeline/README.md",
    "crates/gpu-pipeline/HANGS.md",
    "crates/gpu-hopper/README.md",
    "crates/gpu-hopper-host/README.md",
    "crates/gpu-gemm-plan/README.md",
    "crates/gpu-attention-plan/README.md",
    "crates/gpu-gemm/README.md",
    "crates/gpu-gemm-host/README.md",
    "crates/gpu-attention-host/README.md",
    "crates/ptx-uniform/README.md",
    "examples/kernel-crate/README.md",
    "examples/gemm/README.md",
    "examples/attention/README.md",
    "tests/README.md",
];

/// The library's own README: the package carries it, its doc tests compile its example, and
/// that example is the repository README's, character for character.
const CRATE_README: &str = "crates/gpu-pipeline/README.md";

/// The first fenced block of `text` whose info string starts with `rust`, without its fences.
fn first_rust_block(text: &str) -> Option<String> {
    let mut lines = text.lines();
    lines.find(|line| line.starts_with("```rust"))?;
    let block: Vec<&str> = lines.take_while(|line| !line.starts_with("```")).collect();
    Some(block.join("\n"))
}

/// The link targets of a markdown text, each with its line: inline links and images
/// (`[text](target "title")`, `![alt](<target>)`) and reference definitions (`[name]: target`).
/// Fenced code blocks and inline code spans are skipped.
fn markdown_links(text: &str) -> Vec<(String, usize)> {
    let mut found = Vec::new();
    let mut fence: Option<&str> = None;
    for (index, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        if let Some(open) = fence {
            if trimmed.starts_with(open) {
                fence = None;
            }
            continue;
        }
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            fence = Some(&trimmed[..3]);
            continue;
        }
        // Inline code spans (one or more backticks, closed by as many) become blanks.
        let mut plain = String::with_capacity(line.len());
        let mut rest = line;
        while let Some(start) = rest.find('`') {
            plain.push_str(&rest[..start]);
            let ticks = rest[start..].chars().take_while(|&c| c == '`').count();
            let after = &rest[start + ticks..];
            match after.find(&"`".repeat(ticks)) {
                Some(end) => rest = &after[end + ticks..],
                None => {
                    rest = after;
                    plain.push(' ');
                }
            }
            plain.push(' ');
        }
        plain.push_str(rest);
        let line_number = index + 1;
        // `[name]: target` at the start of a line.
        if let Some(definition) = plain.trim_start().strip_prefix('[')
            && let Some((_, after)) = definition.split_once("]:")
            && let Some(target) = after.split_whitespace().next()
        {
            found.push((target.trim_matches(['<', '>']).to_string(), line_number));
            continue;
        }
        // `](target ...)`, parentheses inside the target balanced.
        let mut from = 0;
        while let Some(at) = plain[from..].find("](") {
            let start = from + at + 2;
            let mut depth = 1;
            let mut end = plain.len();
            for (offset, c) in plain[start..].char_indices() {
                match c {
                    '(' => depth += 1,
                    ')' => {
                        depth -= 1;
                        if depth == 0 {
                            end = start + offset;
                            break;
                        }
                    }
                    _ => {}
                }
            }
            let inside = plain[start..end].trim();
            let target = if let Some(angled) = inside.strip_prefix('<') {
                angled.split('>').next().unwrap_or_default()
            } else {
                inside.split_whitespace().next().unwrap_or_default()
            };
            found.push((target.to_string(), line_number));
            from = end.min(plain.len());
        }
    }
    found
}

/// The repository path a link of document `document` names, or None for a link that leaves the
/// repository's files (a URL, `mailto:`, an anchor in the same document). The `#fragment` is
/// dropped, `.` and `..` are resolved; a path that climbs above the root stays with its `..`.
fn link_path(document: &str, target: &str) -> Option<String> {
    if target.is_empty() || target.starts_with('#') || target.contains("://") {
        return None;
    }
    if target.starts_with("mailto:") {
        return None;
    }
    let target = target.split('#').next().unwrap_or_default();
    let mut parts: Vec<&str> = if target.starts_with('/') {
        Vec::new()
    } else {
        document.split('/').collect()
    };
    parts.pop(); // the document's own name (or nothing, for a path from the root)
    for part in target.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.last().is_none_or(|&p| p == "..") {
                    parts.push("..");
                } else {
                    parts.pop();
                }
            }
            name => parts.push(name),
        }
    }
    Some(parts.join("/"))
}

/// Whether `path` is a tracked file, or a folder that holds one.
fn is_tracked(path: &str, tracked: &BTreeSet<&str>) -> bool {
    if tracked.contains(path) {
        return true;
    }
    let folder = format!("{}/", path.trim_end_matches('/'));
    tracked
        .range(folder.as_str()..)
        .next()
        .is_some_and(|p| p.starts_with(&folder))
}

// ---------------------------------------------------------------- the checks

#[test]
fn no_tracked_path_is_in_a_target_folder() {
    let tracked = tracked_files();
    let found = under_a_target_folder(&tracked);
    assert!(
        found.is_empty(),
        "{} tracked paths are in a `target` folder (build outputs: `git rm -r --cached` them; \
         .gitignore ignores `target/` at any depth): {:?}",
        found.len(),
        &found[..found.len().min(10)]
    );
}

#[test]
fn no_tracked_file_is_over_256_kib() {
    let large: Vec<String> = tracked_files()
        .into_iter()
        .filter(|path| !LARGE_FILES_ALLOWED.contains(&path.as_str()))
        .filter_map(|path| {
            let size = size_of(&path);
            (size > MAX_TRACKED_FILE_BYTES).then(|| format!("{path} ({} KiB)", size / 1024))
        })
        .collect();
    assert!(
        large.is_empty(),
        "tracked files over {} KiB (raw logs and dumps stay in git history; a generated file that \
         must be tracked goes into LARGE_FILES_ALLOWED by name): {large:?}",
        MAX_TRACKED_FILE_BYTES / 1024
    );
}

#[test]
fn results_folder_stays_small() {
    let prefix = format!("{RESULTS}/");
    let files: Vec<String> = tracked_files()
        .into_iter()
        .filter(|path| path.starts_with(&prefix))
        .collect();
    let bytes: u64 = files.iter().map(|path| size_of(path)).sum();
    assert!(
        files.len() <= RESULTS_MAX_FILES && bytes <= RESULTS_MAX_BYTES,
        "{RESULTS} holds {} tracked files, {bytes} bytes; at most {RESULTS_MAX_FILES} files and \
         {RESULTS_MAX_BYTES} bytes: per milestone one summary, its CSV and its plot (raw logs \
         stay in git history, named by each summary with `git show`)",
        files.len()
    );
}

#[test]
fn crate_readme_example_is_the_repository_readmes() {
    let read = |path: &str| {
        fs::read_to_string(crate::util::root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
    };
    let root = first_rust_block(&read("README.md")).expect("README.md has a ```rust example");
    let own = first_rust_block(&read(CRATE_README))
        .unwrap_or_else(|| panic!("{CRATE_README} has no ```rust example"));
    assert!(
        root == own,
        "the first ```rust block of {CRATE_README} (the packaged crate's README and doc test) \
         must be README.md's example, unchanged: copy it over"
    );
}

#[test]
fn markdown_links_point_to_tracked_files() {
    let tracked_list = tracked_files();
    let tracked: BTreeSet<&str> = tracked_list.iter().map(String::as_str).collect();
    let results = format!("{RESULTS}/");
    let mut documents: Vec<&str> = LINKED_DOCUMENTS.to_vec();
    documents.extend(tracked_list.iter().map(String::as_str).filter(|path| {
        path.strip_prefix(results.as_str())
            .is_some_and(|name| name.ends_with(".md") && !name.contains('/'))
    }));
    let mut problems = Vec::new();
    for document in documents {
        if !tracked.contains(document) {
            problems.push(format!("{document}: not a tracked file"));
            continue;
        }
        let text = fs::read_to_string(crate::util::root().join(document))
            .unwrap_or_else(|e| panic!("{document}: {e}"));
        for (target, line) in markdown_links(&text) {
            if let Some(path) = link_path(document, &target)
                && !is_tracked(&path, &tracked)
            {
                problems.push(format!("{document}:{line}: `{target}`"));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "{} relative markdown links point to no tracked file (a raw log that left the tree is \
         named as `git show <commit>:<path>`):\n  {}",
        problems.len(),
        problems.join("\n  ")
    );
}

// ---------------------------------------------------------------- one name per thing

/// The public functions of `stripped` (`pub fn` / `pub unsafe fn`, not `pub(crate)`), with their
/// bodies: `(name, body)`, the body without its outer braces.
fn public_functions(stripped: &str) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for head in [
        "pub fn ",
        "pub unsafe fn ",
        "pub const fn ",
        "pub const unsafe fn ",
    ] {
        let mut from = 0;
        while let Some(at) = stripped[from..].find(head) {
            let start = from + at + head.len();
            from = start;
            let name: String = stripped[start..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            let Some(open) = stripped[start..].find(['{', ';']).map(|i| start + i) else {
                continue;
            };
            if stripped.as_bytes()[open] == b';' {
                continue;
            }
            let mut depth = 0usize;
            let mut close = open;
            for (i, c) in stripped[open..].char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => {
                        depth -= 1;
                        if depth == 0 {
                            close = open + i;
                            break;
                        }
                    }
                    _ => {}
                }
            }
            found.push((name, stripped[open + 1..close].to_string()));
        }
    }
    found
}

/// The arch leaf a free function's body only forwards to: `ptx::leaf(..)` (optionally with const
/// generics, in an `unsafe` block, with or without a `;`), or `None` for a body that does
/// anything else. A method forwarding its handle's address (`ptx::leaf(self.addr, ..)`) is not a
/// second name: the leaf takes a raw address, the method a barrier.
fn forwarded_leaf(body: &str) -> Option<String> {
    if body.contains("self") {
        return None;
    }
    let compact: String = body.chars().filter(|c| !c.is_whitespace()).collect();
    let mut call = compact.as_str();
    if let Some(inner) = call
        .strip_prefix("unsafe{")
        .and_then(|c| c.strip_suffix('}'))
    {
        call = inner;
    }
    let call = call.strip_suffix(';').unwrap_or(call);
    let rest = call.strip_prefix("ptx::")?;
    let name: String = rest
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    let args = rest[name.len()..].trim_start_matches(|c| c != '(');
    // One call: the argument list opens at once (after any `::<..>`) and closes at the end.
    let mut depth = 0i32;
    for (i, c) in args.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 && i != args.len() - 1 {
                    return None;
                }
            }
            _ => {}
        }
    }
    (!name.is_empty() && args.starts_with('(') && args.ends_with(')')).then_some(name)
}

#[test]
fn one_public_name_per_barrier_helper() {
    let files = library();
    let leaves: BTreeSet<String> = files
        .iter()
        .filter(|(file, _)| file == "arch/nvptx.rs")
        .flat_map(|(_, text)| public_functions(text))
        .map(|(name, _)| name)
        .collect();
    assert!(
        leaves.contains("mbarrier_arrive"),
        "the leaves were not found: {leaves:?}"
    );
    let leaves = &leaves;
    let problems: Vec<String> = files
        .iter()
        .filter(|(file, _)| !file.starts_with("arch/"))
        .flat_map(|(file, text)| {
            public_functions(text).into_iter().filter_map(move |(name, body)| {
                let leaf = forwarded_leaf(&body)?;
                leaves
                    .contains(&leaf)
                    .then(|| format!("{file}: `{name}` only forwards to the public leaf `arch::nvptx::{leaf}`"))
            })
        })
        .collect();
    assert!(
        problems.is_empty(),
        "two public names for one instruction (make the leaf `pub(crate)`, or drop the wrapper):\n  {}",
        problems.join("\n  ")
    );
}

#[test]
fn a_forwarding_body_is_told_from_one_that_does_more() {
    assert_eq!(
        forwarded_leaf("\n    ptx::fence_proxy_async_shared_cta();\n"),
        Some("fence_proxy_async_shared_cta".into())
    );
    assert_eq!(
        forwarded_leaf(" unsafe { ptx::prefetch_tensormap(map.cast()) } "),
        Some("prefetch_tensormap".into())
    );
    assert_eq!(
        forwarded_leaf("ptx::cp_async_bulk_wait_group_read::<PENDING>();"),
        Some("cp_async_bulk_wait_group_read".into())
    );
    assert_eq!(forwarded_leaf("let a = 1; ptx::x(a)"), None);
    assert_eq!(
        forwarded_leaf("unsafe { ptx::mbarrier_init(self.addr, count) }"),
        None
    );
    assert_eq!(forwarded_leaf("ptx::x(a); ptx::y(b)"), None);
    let funcs = public_functions(
        "pub fn a() { ptx::b() }\npub(crate) fn c() { ptx::d() }\npub unsafe fn e(x: u32) -> u32 { if x { 1 } else { 2 } }\n",
    );
    assert_eq!(
        funcs,
        vec![
            ("a".to_string(), " ptx::b() ".to_string()),
            ("e".to_string(), " if x { 1 } else { 2 } ".to_string())
        ]
    );
}

#[test]
fn pure_modules_have_no_unsafe_and_no_cfg() {
    let dir = crate::util::root().join(LIBRARY);
    let mut problems = Vec::new();
    for file in PURE_MODULES {
        match fs::read_to_string(dir.join(file)) {
            Err(e) => problems.push(format!(
                "{file}: cannot be read ({e}); PURE_MODULES names it"
            )),
            Ok(text) => problems.extend(
                impurities(&strip(&text))
                    .into_iter()
                    .map(|what| format!("{file}:{what}")),
            ),
        }
    }
    assert!(
        problems.is_empty(),
        "the pure modules must contain no `unsafe` and no `cfg` (only their `#[cfg(test)]` tests): {problems:?}"
    );
}

#[test]
fn no_import_cycles_between_xtask_modules() {
    let graph = module_graph(&stripped_files("xtask/src"));
    assert!(graph.len() > 10, "the xtask's modules were not found");
    let found: Vec<String> = cycles(&graph)
        .iter()
        .map(|cycle| describe(cycle, &graph))
        .collect();
    assert!(
        found.is_empty(),
        "modules of the xtask import each other (a cycle of `crate::`/`super::` paths):\n  {}",
        found.join("\n  ")
    );
}

// ---------------------------------------------------------------- every crate

/// Every crate under `crates/` (its `src` folder), the library included: inline assembly only in
/// an arch module, no `nomem` asm outside [`NOMEM_ALLOWED`], no import cycles between modules. Every `unsafe`
/// block's SAFETY comment is clippy's `undocumented_unsafe_blocks` (`cargo xtask ci` runs clippy
/// on the workspace and on the GEMM kernel crate for its GPU target).
fn crate_sources() -> Vec<(String, Vec<(String, String)>)> {
    let root = crate::util::root().join("crates");
    let mut crates: Vec<String> = fs::read_dir(&root)
        .expect("the crates folder")
        .map(|e| {
            e.expect("an entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .filter(|name| root.join(name).join("src").is_dir())
        .collect();
    crates.sort();
    crates
        .into_iter()
        .map(|name| {
            let files = stripped_files(&format!("crates/{name}/src"));
            (name, files)
        })
        .collect()
}

/// Whether `file` (relative to a crate's `src`) is an arch module: `arch.rs` or under `arch/`.
fn is_arch(file: &str) -> bool {
    file == "arch.rs" || file.starts_with("arch/")
}

#[test]
fn every_crate_keeps_asm_in_its_arch_module() {
    let sources = crate_sources();
    assert!(
        sources.len() >= 7,
        "the crates were not found: {:?}",
        sources.iter().map(|(name, _)| name).collect::<Vec<_>>()
    );
    let outside: Vec<String> = sources
        .iter()
        .flat_map(|(name, files)| {
            files
                .iter()
                .filter(|(file, _)| !is_arch(file))
                .flat_map(move |(file, text)| {
                    asm_lines(text)
                        .into_iter()
                        .map(move |l| format!("crates/{name}/src/{file}:{l}"))
                })
        })
        .collect();
    assert!(
        outside.is_empty(),
        "inline assembly outside an arch module (`arch.rs` or `arch/`): {outside:?}"
    );
}

#[test]
fn no_memory_free_asm_in_any_crate_outside_the_allow_list() {
    let mut used = BTreeSet::new();
    let mut problems = Vec::new();
    for (name, files) in crate_sources() {
        for (file, text) in files {
            for (function, option, line) in memory_free_asm(&text) {
                if NOMEM_ALLOWED.contains(&(name.as_str(), function.as_str())) {
                    used.insert((name.clone(), function));
                } else {
                    problems.push(format!(
                        "crates/{name}/src/{file}:{line}: `{option}` in `{function}`"
                    ));
                }
            }
        }
    }
    assert!(
        problems.is_empty(),
        "barrier asm must not be nomem/readonly/pure (the compiler would move shared-memory \
         accesses across it); only the register-only computations of NOMEM_ALLOWED may: {problems:?}"
    );
    let stale: Vec<_> = NOMEM_ALLOWED
        .into_iter()
        .filter(|(c, f)| !used.contains(&(c.to_string(), f.to_string())))
        .collect();
    assert!(
        stale.is_empty(),
        "NOMEM_ALLOWED names functions with no memory-free asm (remove them): {stale:?}"
    );
}

#[test]
fn no_import_cycles_between_the_modules_of_any_crate() {
    let mut found = Vec::new();
    for (name, files) in crate_sources() {
        let graph = module_graph(&files);
        found.extend(
            cycles(&graph)
                .iter()
                .map(|cycle| format!("{name}: {}", describe(cycle, &graph))),
        );
    }
    assert!(
        found.is_empty(),
        "modules of a crate import each other (a cycle of `crate::`/`super::` paths):\n  {}",
        found.join("\n  ")
    );
}

#[test]
fn the_plans_forbid_unsafe() {
    for plan in ["gpu-gemm-plan", "gpu-attention-plan"] {
        let lib = fs::read_to_string(crate::util::root().join(format!("crates/{plan}/src/lib.rs")))
            .expect("the plan's lib.rs");
        assert!(
            lib.contains("#![forbid(unsafe_code)]"),
            "crates/{plan} is the pure plan both sides compile: it keeps #![forbid(unsafe_code)]"
        );
        let problems: Vec<String> = stripped_files(&format!("crates/{plan}/src"))
            .iter()
            .flat_map(|(file, text)| {
                impurities(text)
                    .into_iter()
                    .map(move |w| format!("{file}:{w}"))
            })
            .filter(|w| !w.contains("cfg"))
            .collect();
        assert!(problems.is_empty(), "unsafe in {plan}: {problems:?}");
    }
}

// ---------------------------------------------------------------- tests of the checker

#[test]
fn strip_blanks_comments_strings_and_chars_and_keeps_lines() {
    let source = "a // asm!(x)\n/* b /* nested */ asm! */ c\n\"asm!(\\\"q\\\")\" r#\"unsafe \"# '\"' 'x' '\\'' &'a str";
    let stripped = strip(source);
    assert_eq!(stripped.lines().count(), source.lines().count());
    assert!(!stripped.contains("asm"), "{stripped}");
    assert!(!stripped.contains("unsafe"), "{stripped}");
    assert!(stripped.contains("&'a str"), "a lifetime stays: {stripped}");
    assert!(stripped.starts_with("a "));
    assert!(stripped.contains(" c\n"));
    assert_eq!(stripped.len(), source.len());
}

#[test]
fn asm_lines_find_the_macros_not_other_words() {
    let text = strip(
        "fn f() {\n    unsafe { asm!(\"nop\") };\n    let asm = 1;\n    // asm!()\n    core::arch::global_asm!(\"\");\n}",
    );
    assert_eq!(asm_lines(&text), vec![2, 5]);
}

#[test]
fn impurities_allow_only_cfg_test() {
    let text = strip(
        "#[cfg(test)]\nmod tests {}\n#[cfg(feature = \"x\")]\nfn a() {}\nfn b() { if cfg!(test) {} }\n#[cfg_attr(test, inline)]\nunsafe fn c() {}\n// unsafe cfg\n",
    );
    assert_eq!(
        impurities(&text),
        vec!["3: `cfg`", "5: `cfg`", "6: `cfg_attr`", "7: `unsafe`"]
    );
}

#[test]
fn memory_free_asm_names_the_function_or_the_macro() {
    let text = strip(
        "pub fn fence() { unsafe { asm!(\"fence.sc.sys;\", options(nostack, preserves_flags)) } }\n\
         pub fn lane() -> u32 { unsafe { asm!(\"mov\", d = out(reg32) l, options(nostack, nomem)) } }\n\
         macro_rules! regs { ($n:ident) => { pub fn $n() { unsafe { asm!(\"mov\", options(pure, readonly)) } } } }\n\
         // fn commented() { asm!(\"x\", options(nomem)) }\n",
    );
    assert_eq!(
        memory_free_asm(&text),
        vec![
            ("lane".to_string(), "nomem".to_string(), 2),
            ("regs".to_string(), "pure".to_string(), 3),
            ("regs".to_string(), "readonly".to_string(), 3),
        ]
    );
}

#[test]
fn crate_paths_expand_use_trees_and_resolve_super() {
    let text = strip(
        "use crate::checked::{self, Call, record::{Fault, Verdict as V}};\n\
         use super::record::HangRecord;\n\
         fn f() { crate::arch::nvptx::trap(); }\n\
         mod target { use super::Place; use super::super::Diagnostics; }\n",
    );
    let paths = crate_paths(&text, "checked::runtime");
    let shown: Vec<(String, usize)> = paths.iter().map(|(p, l)| (p.join("::"), *l)).collect();
    assert_eq!(
        shown,
        vec![
            ("checked".to_string(), 1),
            ("checked::Call".to_string(), 1),
            ("checked::record::Fault".to_string(), 1),
            ("checked::record::Verdict".to_string(), 1),
            ("checked::record::HangRecord".to_string(), 2),
            ("arch::nvptx::trap".to_string(), 3),
            ("checked::Diagnostics".to_string(), 4),
        ]
    );
}

#[test]
fn module_graph_finds_a_cycle_and_names_it() {
    let file = |name: &str, text: &str| (name.to_string(), strip(text));
    let files = vec![
        file(
            "lib.rs",
            "pub mod a; pub mod b; mod c;\npub use c::Thing;\n",
        ),
        file("a.rs", "use crate::b::B;\n"),
        file("b.rs", "// use crate::a::A;\nuse crate::Thing;\n"),
        file("c.rs", "\nfn f() -> crate::a::A { todo!() }\n"),
        file("d/mod.rs", "mod e;\n"),
        file("d/e.rs", "use super::D;\n"),
    ];
    let graph = module_graph(&files);
    assert_eq!(graph["d::e"].keys().collect::<Vec<_>>(), vec!["d"]);
    let found = cycles(&graph);
    assert_eq!(found, vec![vec!["a", "b", "c", "a"]]);
    assert_eq!(
        describe(&found[0], &graph),
        "a (line 1) -> b (line 2) -> c (line 2) -> a"
    );
    let acyclic = module_graph(&files[..2]);
    assert!(cycles(&acyclic).is_empty());
}

#[test]
fn target_folders_are_found_at_any_depth() {
    let paths: Vec<String> = [
        "target/debug/x",
        "crates/gpu-gemm/target/CACHEDIR.TAG",
        "src/targets.rs",
        "docs/target.md",
        "a/target",
    ]
    .map(str::to_string)
    .to_vec();
    assert_eq!(
        under_a_target_folder(&paths),
        vec![
            "target/debug/x",
            "crates/gpu-gemm/target/CACHEDIR.TAG",
            "a/target"
        ]
    );
}

#[test]
fn markdown_links_skip_code_and_read_every_form() {
    let text = "See [a](a.md) and ![p](img/p.svg \"title\"), [b](<b c.md>), [w](https://x.y/z).\n\
                `[not](code.md)` and ``[nor](this.md)`` [c](f(1).md#part)\n\
                ```\n[fenced](no.md)\n```\n\
                [ref]: ../up.md\n\
                [anchor](#here)\n";
    let links: Vec<(String, usize)> = markdown_links(text);
    let shown: Vec<(&str, usize)> = links.iter().map(|(t, l)| (t.as_str(), *l)).collect();
    assert_eq!(
        shown,
        vec![
            ("a.md", 1),
            ("img/p.svg", 1),
            ("b c.md", 1),
            ("https://x.y/z", 1),
            ("f(1).md#part", 2),
            ("../up.md", 6),
            ("#here", 7),
        ]
    );
}

#[test]
fn link_paths_resolve_from_the_document() {
    assert_eq!(
        link_path("tests/results/README.md", "2026-12-01-issue13.md#final").as_deref(),
        Some("tests/results/2026-12-01-issue13.md")
    );
    assert_eq!(
        link_path("tests/results/a.md", "../../README.md").as_deref(),
        Some("README.md")
    );
    assert_eq!(
        link_path("README.md", "./tests/results/").as_deref(),
        Some("tests/results")
    );
    assert_eq!(link_path("README.md", "../x").as_deref(), Some("../x"));
    assert_eq!(link_path("README.md", "#section"), None);
    assert_eq!(link_path("README.md", "https://example.org/a.md"), None);
    let tracked: BTreeSet<&str> = ["README.md", "tests/results/a.md"].into_iter().collect();
    assert!(is_tracked("tests/results", &tracked));
    assert!(is_tracked("tests/results/a.md", &tracked));
    assert!(!is_tracked("tests/result", &tracked));
    assert!(!is_tracked("tests/results/b.md", &tracked));
}

#[test]
fn first_rust_block_skips_other_blocks() {
    let text =
        "# t\n```sh\nls\n```\n```rust,ignore\nlet a = 1;\n\nlet b = 2;\n```\n```rust\nx\n```\n";
    assert_eq!(
        first_rust_block(text).as_deref(),
        Some("let a = 1;\n\nlet b = 2;")
    );
    assert_eq!(first_rust_block("```text\nx\n```\n"), None);
}
