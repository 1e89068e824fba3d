//! A convergence check of PTX (issue 13): no `.aligned` instruction of an `.entry` sits on a path
//! that only part of its warp (for `wgmma.*` and `setmaxnreg`: of its warpgroup) takes.
//!
//! Why: the GEMM's `wgmma.mma_async` is inline assembly, which LLVM does not know to be
//! `convergent`, so LLVM may move it under lane-dependent control flow; and PTX makes every
//! `.aligned` instruction undefined "in conditionally executed code" unless "all threads in the
//! warp [warpgroup, for `wgmma`] evaluate the condition identically" (PTX ISA, "Parallel
//! Synchronization and Communication Instructions" (`bar`, `barrier`) and "Asynchronous
//! Warpgroup Level Matrix Multiply-Accumulate Instructions": `wgmma.mma_async`,
//! `wgmma.fence`, `wgmma.commit_group`, `wgmma.wait_group` are all `.sync.aligned`;
//! `setmaxnreg.sync.aligned`, "Miscellaneous Instructions").
//!
//! The analysis, per `.entry`:
//! 1. The body is parsed into instructions and labels (inline-assembly `{ }` scopes get their own
//!    registers), and cut into basic blocks: a label starts one, `bra`/`ret`/`exit`/`trap` end one;
//!    a guarded `bra` has two successors. `ret`, `exit` and `trap` go to a virtual exit.
//! 2. Every register gets an abstract value at the start of every block (a forward data flow
//!    over the CFG to a fixed point, joining the values of the incoming edges, so loops and
//!    LLVM's phi copies are covered; see [`Abs`]): the *granularity* `k` of the value, meaning
//!    it is equal in all threads whose `%tid.x` lie in one aligned block of `2^k` (uniform: equal
//!    in the CTA; `k = 0`: lane-varying), or `%tid.x + c` exactly. Flow-sensitive because LLVM
//!    reuses one register for the producer's and the consumers' tile counters: the producer's
//!    (written on thread 0's path) must not make the consumers' lane-varying.
//! 3. A conditional branch is as uniform as its predicate; every block control-dependent on it
//!    (reachable from it without passing its immediate post-dominator) is executed by a set of
//!    threads no more uniform than that (transitively). A register written in such a block, or
//!    by an instruction guarded with a predicate, is no more uniform than the block or the guard
//!    (sync dependence: threads that left a loop at different iterations, or took different
//!    sides of a branch, hold different values after it). Values and blocks are iterated
//!    together to a fixed point.
//! 4. An `.aligned` instruction (and `bar.sync`, which is `barrier.sync.aligned`) in a block, or
//!    under a guard, less uniform than a warp (`k < 5`), or for `wgmma.*`/`setmaxnreg` than a
//!    warpgroup (`k < 7`), is an error naming the entry, the instruction and the branch.
//!
//! Sources of non-uniformity (seeds): `%tid.*`, `%laneid`, `%warpid`, `%lanemask_*`, `%clock*`,
//! `%globaltimer*`, `%smid` and every special register not known to be uniform; atomics; `shfl`,
//! `vote`, `match`, `redux`, `activemask`, `elect`; `ld.local` and generic `ld`; call results;
//! registers read before any write (on some path from the entry); and every instruction not known to be pure arithmetic
//! (conservative: an unknown instruction's results are lane-varying whatever its inputs).
//!
//! Rules that make a value of `%tid.x` coarser (each is sound for `x = %tid.x + c mod 2^32` with a
//! known constant `c`, because an aligned block of `2^j` values, `j <= tz(c)`, stays an aligned
//! block after adding `c` and wrapping, and the operations below are constant on aligned blocks
//! of `2^j` values for the `j` given): `shr.{u,s,b}32 x, k` (`j = k`), `div.u32 x, n`
//! (`j = tz(n)`), `and.b32 x, m` (`j = tz(m)`), `bfe.{u,s}32 x, pos, len` (`j = pos`), and
//! `setp.{lt,ge,lo,hs}.{u,s}32 x, n` (`j = tz(n)`; `le,gt,ls,hi`: `j = tz(n + 1)`; a signed order
//! is contiguous on an aligned block too). `add`/`sub` of an immediate keep `%tid.x + c` exact.
//!
//! Assumptions (the PTX checked here satisfies them; ARCHITECTURE.md repeats them):
//! - `%ntid.x` is a multiple of 128 (or a power of two dividing it), so that a warp (a
//!   warpgroup: four consecutive warps, the first a multiple of four) is a set of threads with
//!   one `%tid.y`/`%tid.z` whose `%tid.x` fill an aligned block of 32 (128). The GEMM is launched
//!   384 × 1 × 1.
//! - A load of mutable memory (`ld.global`, `ld.shared`) at a warp-uniform address, an
//!   `mbarrier.try_wait`/`test_wait`, and the state an `mbarrier.arrive` returns, are
//!   warp-uniform (`k = 5`, never more): the convergent lanes of a warp execute the instruction
//!   once and observe one memory state (one phase of the barrier). Different warps observe it at
//!   different times, so no such value is ever warpgroup-uniform. `ld.param` of the entry's
//!   parameters, `ld.const`, `ld.global.nc` and `ldu` read memory no thread writes: as uniform as
//!   their address.
//! - Threads are reconverged at a branch's immediate post-dominator before they reach an
//!   `.aligned` instruction there; that is what PTX leaves to ptxas when "all threads evaluate
//!   the condition identically" for every condition controlling the instruction, which is what
//!   this check proves (an instruction after a divergent loop exit is not conditional on it).

use std::collections::HashMap;
use std::fmt::Write as _;

use crate::util::Result;

/// Granularity of a value equal in the whole CTA.
const UNIFORM: u8 = u8::MAX;
/// Granularity an `.aligned` instruction needs: its warp (32 threads).
pub const WARP: u8 = 5;
/// Granularity `wgmma.*` and `setmaxnreg` need: their warpgroup (128 threads).
pub const WARPGROUP: u8 = 7;

/// The abstract value of a register.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Abs {
    /// Exactly `%tid.x + c (mod 2^32)` in every thread, whichever definition wrote it: a fixed
    /// function of the thread, so no branch or loop can make two threads of a block disagree
    /// about it beyond what `%tid.x` does (which is why sync dependence leaves it alone).
    TidPlus(u32),
    /// Equal in every set of threads whose `%tid.x` lie in one aligned block of `2^k`
    /// (`UNIFORM`: in the CTA; 0: lane-varying).
    Gran(u8),
}

impl Abs {
    fn gran(self) -> u8 {
        match self {
            Abs::TidPlus(_) => 0,
            Abs::Gran(g) => g,
        }
    }

    /// Either value (two definitions of one register).
    fn join(self, other: Abs) -> Abs {
        match (self, other) {
            (a, b) if a == b => a,
            (a, b) => Abs::Gran(a.gran().min(b.gran())),
        }
    }

    /// The value when it also depends on something of granularity `g` (a guard, or the block's
    /// threads). `%tid.x + c` is the same function of the thread whatever that is.
    fn depend(self, g: u8) -> Abs {
        match self {
            Abs::TidPlus(_) => self,
            Abs::Gran(k) => Abs::Gran(k.min(g)),
        }
    }
}

/// A granularity from a number of low bits: 32 or more is the whole CTA.
fn bits(j: u32) -> u8 {
    if j >= 32 { UNIFORM } else { j as u8 }
}

#[derive(Clone, Debug, PartialEq)]
enum Atom {
    Reg(usize),
    Special(Abs),
    Imm(i64),
}

#[derive(Clone, Debug)]
struct Operand {
    atoms: Vec<Atom>,
    /// The operand is one integer literal.
    imm: Option<i64>,
    /// The operand is one register or special register.
    single: Option<Atom>,
    text: String,
}

#[derive(Clone, Debug)]
struct Inst {
    line: usize,
    text: String,
    guard: Option<usize>,
    op: String,
    operands: Vec<Operand>,
    dests: Vec<usize>,
    block: usize,
}

impl Inst {
    fn base(&self) -> &str {
        self.op.split('.').next().unwrap_or("")
    }

    fn parts(&self) -> Vec<&str> {
        self.op.split('.').collect()
    }

    fn is_terminator(&self) -> bool {
        matches!(self.base(), "bra" | "ret" | "exit" | "trap" | "brx")
    }

    /// The operands read (all but a register destination; a wgmma's accumulators are both).
    fn sources(&self) -> impl Iterator<Item = &Atom> {
        let skip = usize::from(!self.dests.is_empty() && self.base() != "wgmma");
        self.operands.iter().skip(skip).flat_map(|o| o.atoms.iter())
    }
}

#[derive(Debug)]
struct Block {
    label: Option<String>,
    insts: Vec<usize>,
    succs: Vec<usize>,
}

/// One parsed `.entry`.
struct Function {
    name: String,
    params: Vec<String>,
    regs: Vec<String>,
    insts: Vec<Inst>,
    blocks: Vec<Block>,
}

/// What the check found in one entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryReport {
    pub entry: String,
    pub blocks: usize,
    /// Conditional branches (and guarded `ret`/`exit`).
    pub branches: usize,
    /// Those whose predicate may differ within a warp.
    pub lane_divergent: usize,
    /// Those warp-uniform but possibly different between the warps of a warpgroup.
    pub warp_divergent: usize,
    /// `.aligned` instructions checked (`wgmma.*` included).
    pub aligned: usize,
    /// `wgmma.mma_async` instructions.
    pub wgmmas: usize,
}

/// Checks every `.entry` of `ptx`; see the module documentation.
pub fn check(ptx: &str) -> Result<Vec<EntryReport>> {
    let mut reports = Vec::new();
    for f in parse(ptx)? {
        reports.push(analyse(&f)?);
    }
    Ok(reports)
}

/// The `.entry` functions of a module.
fn parse(ptx: &str) -> Result<Vec<Function>> {
    let lines: Vec<String> = strip_comments(ptx);
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let Some(at) = find_entry(&lines[i]) else {
            i += 1;
            continue;
        };
        let name: String = lines[i][at..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '$')
            .collect();
        // The parameter list, up to its `)`.
        let mut params = String::new();
        let mut j = i;
        let mut rest = lines[i][at + name.len()..].to_string();
        loop {
            if let Some(close) = rest.find(')') {
                params.push_str(&rest[..close]);
                rest = rest[close + 1..].to_string();
                break;
            }
            params.push_str(&rest);
            params.push(',');
            j += 1;
            if j >= lines.len() {
                return Err(format!(
                    "PTX entry `{name}`: the parameter list does not end"
                ));
            }
            rest.clone_from(&lines[j]);
        }
        let params: Vec<String> = params
            .split(',')
            .filter_map(|p| {
                let p = p.trim().trim_start_matches('(');
                let p = p.split('[').next().unwrap_or("");
                p.split_whitespace().last().map(str::to_string)
            })
            .filter(|p| !p.starts_with('.'))
            .collect();
        // The body: from the first `{` (a `;` first is a declaration without a body).
        let (body_line, body_col) = loop {
            if let Some(b) = rest.find(['{', ';']) {
                if rest.as_bytes()[b] == b';' {
                    break (usize::MAX, 0);
                }
                break (j, lines[j].len() - rest.len() + b + 1);
            }
            j += 1;
            if j >= lines.len() {
                return Err(format!("PTX entry `{name}` has no body"));
            }
            rest.clone_from(&lines[j]);
        };
        if body_line == usize::MAX {
            i = j + 1;
            continue;
        }
        let (f, end) = parse_body(&name, &params, &lines, body_line, body_col)?;
        out.push(f);
        i = end + 1;
    }
    Ok(out)
}

/// Where the name of an `.entry` on this line starts.
fn find_entry(line: &str) -> Option<usize> {
    let at = line.find(".entry")?;
    let before = &line[..at];
    if !before.trim().is_empty() && !before.split_whitespace().all(|w| w.starts_with('.')) {
        return None;
    }
    let after = &line[at + ".entry".len()..];
    let name_at = after.len() - after.trim_start().len();
    if name_at == 0 {
        return None;
    }
    Some(at + ".entry".len() + name_at)
}

/// The lines without `//` and `/* */` comments.
fn strip_comments(ptx: &str) -> Vec<String> {
    let mut in_block = false;
    ptx.lines()
        .map(|line| {
            let mut out = String::new();
            let mut rest = line;
            loop {
                if in_block {
                    match rest.find("*/") {
                        Some(e) => {
                            rest = &rest[e + 2..];
                            in_block = false;
                        }
                        None => break,
                    }
                } else {
                    let line_c = rest.find("//");
                    let block_c = rest.find("/*");
                    match (line_c, block_c) {
                        (Some(l), Some(b)) if b < l => {
                            out.push_str(&rest[..b]);
                            rest = &rest[b + 2..];
                            in_block = true;
                        }
                        (None, Some(b)) => {
                            out.push_str(&rest[..b]);
                            rest = &rest[b + 2..];
                            in_block = true;
                        }
                        (Some(l), _) => {
                            out.push_str(&rest[..l]);
                            break;
                        }
                        (None, None) => {
                            out.push_str(rest);
                            break;
                        }
                    }
                }
            }
            out
        })
        .collect()
}

/// Declared registers of one `{ }` scope: plain names and `%r<N>` ranges.
#[derive(Default)]
struct Scope {
    id: usize,
    names: Vec<String>,
    ranges: Vec<(String, u64)>,
}

impl Scope {
    fn has(&self, name: &str) -> bool {
        self.names.iter().any(|n| n == name)
            || self.ranges.iter().any(|(prefix, n)| {
                name.strip_prefix(prefix.as_str()).is_some_and(|d| {
                    !d.is_empty()
                        && d.bytes().all(|b| b.is_ascii_digit())
                        && d.parse::<u64>().is_ok_and(|v| v < *n)
                })
            })
    }
}

struct Parser<'a> {
    name: &'a str,
    params: &'a [String],
    scopes: Vec<Scope>,
    next_scope: usize,
    regs: Vec<String>,
    reg_ids: HashMap<(usize, String), usize>,
    insts: Vec<Inst>,
    /// Labels, by the index of the instruction they precede.
    labels: Vec<(usize, String)>,
}

fn parse_body(
    name: &str,
    params: &[String],
    lines: &[String],
    first: usize,
    col: usize,
) -> Result<(Function, usize)> {
    let mut p = Parser {
        name,
        params,
        scopes: vec![Scope::default()],
        next_scope: 1,
        regs: Vec::new(),
        reg_ids: HashMap::new(),
        insts: Vec::new(),
        labels: Vec::new(),
    };
    let mut pending = String::new();
    let mut pending_line = 0;
    for (n, full) in lines.iter().enumerate().skip(first) {
        let mut rest: &str = if n == first { &full[col..] } else { full };
        loop {
            if !pending.is_empty() {
                match rest.find(';') {
                    Some(e) => {
                        pending.push(' ');
                        pending.push_str(&rest[..e]);
                        let stmt = std::mem::take(&mut pending);
                        p.statement(&stmt, pending_line + 1)?;
                        rest = &rest[e + 1..];
                    }
                    None => {
                        pending.push(' ');
                        pending.push_str(rest);
                        break;
                    }
                }
            }
            rest = rest.trim_start();
            if rest.is_empty() {
                break;
            }
            if let Some(r) = rest.strip_prefix('{') {
                p.scopes.push(Scope {
                    id: p.next_scope,
                    ..Scope::default()
                });
                p.next_scope += 1;
                rest = r;
                continue;
            }
            if let Some(r) = rest.strip_prefix('}') {
                p.scopes.pop();
                if p.scopes.is_empty() {
                    return Ok((p.finish()?, n));
                }
                rest = r;
                continue;
            }
            if let Some(len) = label_len(rest) {
                p.labels
                    .push((p.insts.len(), rest[..len].trim().to_string()));
                rest = &rest[len + 1..];
                continue;
            }
            match rest.find(';') {
                Some(e) => {
                    p.statement(&rest[..e], n + 1)?;
                    rest = &rest[e + 1..];
                }
                None => {
                    pending.push_str(rest);
                    pending_line = n;
                    break;
                }
            }
        }
    }
    Err(format!("PTX entry `{name}`: the body does not end"))
}

/// The length of the label at the start of `s` (before its `:`).
fn label_len(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    let first = *b.first()?;
    if !(first.is_ascii_alphabetic() || matches!(first, b'_' | b'$' | b'%')) {
        return None;
    }
    let mut i = 1;
    while i < b.len() && (b[i].is_ascii_alphanumeric() || matches!(b[i], b'_' | b'$')) {
        i += 1;
    }
    let name_end = i;
    while i < b.len() && b[i].is_ascii_whitespace() {
        i += 1;
    }
    (i < b.len() && b[i] == b':' && b.get(i + 1) != Some(&b':'))
        .then_some(name_end + (i - name_end))
}

/// Splits operands at top-level commas.
fn split_operands(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut cur = String::new();
    for c in s.chars() {
        match c {
            '{' | '[' | '(' => depth += 1,
            '}' | ']' | ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(std::mem::take(&mut cur).trim().to_string());
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    if !cur.trim().is_empty() {
        out.push(cur.trim().to_string());
    }
    out
}

/// An integer literal of PTX (decimal, hex, octal, binary; an optional `-` and `U`).
fn int_literal(s: &str) -> Option<i64> {
    let s = s.trim();
    let (neg, s) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s),
    };
    let s = s.strip_suffix('U').unwrap_or(s);
    let v = if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        u64::from_str_radix(h, 16).ok()?
    } else if let Some(b) = s.strip_prefix("0b").or_else(|| s.strip_prefix("0B")) {
        u64::from_str_radix(b, 2).ok()?
    } else if s.len() > 1 && s.starts_with('0') {
        u64::from_str_radix(&s[1..], 8).ok()?
    } else if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
        s.parse::<u64>().ok()?
    } else {
        return None;
    };
    let v = v as i64;
    Some(if neg { v.wrapping_neg() } else { v })
}

/// The value of a special register (`%tid.x`, `%ctaid.y`, ...).
fn special(name: &str) -> Abs {
    let base = name.split('.').next().unwrap_or(name);
    if name == "%tid.x" {
        return Abs::TidPlus(0);
    }
    const UNIFORM_SPECIALS: [&str; 17] = [
        "%ntid",
        "%ctaid",
        "%nctaid",
        "%clusterid",
        "%nclusterid",
        "%cluster_ctaid",
        "%cluster_nctaid",
        "%cluster_ctarank",
        "%cluster_nctarank",
        "%is_explicit_cluster",
        "%gridid",
        "%nwarpid",
        "%nsmid",
        "%dynamic_smem_size",
        "%total_smem_size",
        "%aggr_smem_size",
        "%current_graph_exec",
    ];
    if UNIFORM_SPECIALS.contains(&base) || base.starts_with("%envreg") {
        Abs::Gran(UNIFORM)
    } else {
        Abs::Gran(0)
    }
}

/// Instructions whose first operand holds no register destination though it is not in brackets
/// (a bracketed first operand is a memory destination: `st`, `cp.async`, `mbarrier.init`, ...).
/// Taking a source for a destination would only make values more varying.
fn has_no_dest(base: &str, op: &str) -> bool {
    matches!(
        base,
        "bra"
            | "brx"
            | "ret"
            | "exit"
            | "trap"
            | "brkpt"
            | "bar"
            | "barrier"
            | "membar"
            | "fence"
            | "setmaxnreg"
            | "nanosleep"
            | "griddepcontrol"
            | "pmevent"
            | "st"
            | "red"
            | "prefetch"
            | "prefetchu"
            | "stmatrix"
    ) || (op.starts_with("wgmma.") && !op.starts_with("wgmma.mma_async"))
}

impl Parser<'_> {
    fn statement(&mut self, stmt: &str, line: usize) -> Result {
        let stmt = stmt.trim();
        if stmt.is_empty() {
            return Ok(());
        }
        if let Some(decl) = stmt.strip_prefix(".reg") {
            self.declare(decl);
            return Ok(());
        }
        if stmt.starts_with('.') {
            return Ok(());
        }
        let (guard, rest) = if let Some(g) = stmt.strip_prefix('@') {
            let end = g.find(char::is_whitespace).unwrap_or(g.len());
            let name = g[..end].trim_start_matches('!');
            let reg = self.lookup(name).ok_or_else(|| {
                format!(
                    "PTX entry `{}` line {line}: unknown guard `{name}`",
                    self.name
                )
            })?;
            (Some(reg), g[end..].trim_start())
        } else {
            (None, stmt)
        };
        let op_end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let op = rest[..op_end].to_string();
        let base = op.split('.').next().unwrap_or("").to_string();
        let texts = split_operands(&rest[op_end..]);
        let mut operands = Vec::new();
        for t in &texts {
            operands.push(self.operand(t));
        }
        let mut dests = Vec::new();
        if let Some(first) = operands.first() {
            let call_with_result = base == "call" && first.text.starts_with('(');
            if call_with_result
                || (base != "call" && !first.text.starts_with('[') && !has_no_dest(&base, &op))
            {
                for a in &first.atoms {
                    if let Atom::Reg(r) = a {
                        dests.push(*r);
                    }
                }
            }
        }
        self.insts.push(Inst {
            line,
            text: stmt.split_whitespace().collect::<Vec<_>>().join(" "),
            guard,
            op,
            operands,
            dests,
            block: 0,
        });
        Ok(())
    }

    fn declare(&mut self, decl: &str) {
        let scope = self.scopes.last_mut().expect("a scope");
        for name in decl.split([',', ' ', '\t']).map(str::trim) {
            if name.is_empty() || name.starts_with('.') {
                continue;
            }
            if let Some((prefix, n)) = name.split_once('<') {
                let n = n
                    .trim_end_matches('>')
                    .trim()
                    .parse::<u64>()
                    .unwrap_or(u64::MAX);
                scope.ranges.push((prefix.to_string(), n));
            } else {
                scope.names.push(name.to_string());
            }
        }
    }

    /// The register a name denotes in the current scopes.
    fn lookup(&mut self, name: &str) -> Option<usize> {
        let scope = self.scopes.iter().rev().find(|s| s.has(name))?.id;
        let key = (scope, name.to_string());
        if let Some(&r) = self.reg_ids.get(&key) {
            return Some(r);
        }
        let r = self.regs.len();
        self.regs.push(if scope == 0 {
            name.to_string()
        } else {
            format!("{name} (scope {scope})")
        });
        self.reg_ids.insert(key, r);
        Some(r)
    }

    fn operand(&mut self, text: &str) -> Operand {
        let mut atoms = Vec::new();
        let b = text.as_bytes();
        let mut i = 0;
        let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'$';
        while i < b.len() {
            let c = b[i];
            if c.is_ascii_digit() {
                while i < b.len() && ident(b[i]) {
                    i += 1;
                }
                continue;
            }
            if !(c.is_ascii_alphabetic() || matches!(c, b'_' | b'$' | b'%')) {
                i += 1;
                continue;
            }
            let start = i;
            i += 1;
            while i < b.len() && ident(b[i]) {
                i += 1;
            }
            let name = &text[start..i];
            if let Some(r) = self.lookup(name) {
                atoms.push(Atom::Reg(r));
            } else if name.starts_with('%') {
                // A special register, with its `.x`/`.y`/`.z`.
                let mut full = name.to_string();
                if i + 1 < b.len()
                    && b[i] == b'.'
                    && (b'x'..=b'z').contains(&b[i + 1])
                    && b.get(i + 2).is_none_or(|c| !ident(*c))
                {
                    full.push('.');
                    full.push(b[i + 1] as char);
                    i += 2;
                }
                atoms.push(Atom::Special(special(&full)));
            }
            // Anything else is a symbol (a parameter, a variable's address, a label): uniform.
        }
        let imm = int_literal(text);
        if let Some(v) = imm {
            atoms = vec![Atom::Imm(v)];
        }
        let single = (atoms.len() == 1 && !text.contains(['[', '{', '|']))
            .then(|| atoms[0].clone())
            .filter(|a| !matches!(a, Atom::Imm(_)));
        Operand {
            atoms,
            imm,
            single,
            text: text.to_string(),
        }
    }

    fn finish(mut self) -> Result<Function> {
        // Blocks: a label starts one, a terminator ends one.
        let mut blocks: Vec<Block> = vec![Block {
            label: None,
            insts: Vec::new(),
            succs: Vec::new(),
        }];
        let mut labels = self.labels.iter().peekable();
        for i in 0..=self.insts.len() {
            while let Some((_, name)) = labels.next_if(|(at, _)| *at == i) {
                blocks.push(Block {
                    label: Some(name.clone()),
                    insts: Vec::new(),
                    succs: Vec::new(),
                });
            }
            if i == self.insts.len() {
                break;
            }
            let b = blocks.len() - 1;
            self.insts[i].block = b;
            blocks[b].insts.push(i);
            if self.insts[i].is_terminator() {
                blocks.push(Block {
                    label: None,
                    insts: Vec::new(),
                    succs: Vec::new(),
                });
            }
        }
        let by_label: HashMap<String, usize> = blocks
            .iter()
            .enumerate()
            .filter_map(|(i, b)| b.label.clone().map(|l| (l, i)))
            .collect();
        let exit = blocks.len();
        for b in 0..blocks.len() {
            let next = if b + 1 < blocks.len() { b + 1 } else { exit };
            let mut succs = Vec::new();
            match blocks[b].insts.last().map(|&i| &self.insts[i]) {
                Some(inst) if inst.is_terminator() => {
                    match inst.base() {
                        "bra" => {
                            let target = inst.operands.first().map(|o| o.text.clone());
                            let target = target.unwrap_or_default();
                            let t = *by_label.get(&target).ok_or_else(|| {
                                format!(
                                    "PTX entry `{}` line {}: branch to an unknown label `{target}`",
                                    self.name, inst.line
                                )
                            })?;
                            succs.push(t);
                        }
                        "brx" => {
                            return Err(format!(
                                "PTX entry `{}` line {}: indirect branches are not analysed",
                                self.name, inst.line
                            ));
                        }
                        _ => succs.push(exit),
                    }
                    if inst.guard.is_some() {
                        succs.push(next);
                    }
                }
                _ => succs.push(next),
            }
            succs.dedup();
            blocks[b].succs = succs;
        }
        Ok(Function {
            name: self.name.to_string(),
            params: self.params.to_vec(),
            regs: self.regs,
            insts: self.insts,
            blocks,
        })
    }
}

/// A small bitset over blocks.
#[derive(Clone, PartialEq, Eq)]
struct Bits(Vec<u64>);

impl Bits {
    fn full(n: usize) -> Bits {
        Bits(vec![u64::MAX; n.div_ceil(64)])
    }
    fn empty(n: usize) -> Bits {
        Bits(vec![0; n.div_ceil(64)])
    }
    fn set(&mut self, i: usize) {
        self.0[i / 64] |= 1 << (i % 64);
    }
    fn has(&self, i: usize) -> bool {
        self.0[i / 64] & (1 << (i % 64)) != 0
    }
    fn and(&mut self, o: &Bits) {
        for (a, b) in self.0.iter_mut().zip(&o.0) {
            *a &= b;
        }
    }
    fn count(&self) -> u32 {
        self.0.iter().map(|w| w.count_ones()).sum()
    }
}

/// The immediate post-dominator of every block (`exit` = the virtual exit), on the CFG where a
/// block that cannot reach the exit (an endless loop) gets an edge to it (more paths: fewer
/// post-dominators, larger regions, a more conservative check).
fn ipdoms(succs: &[Vec<usize>]) -> Vec<usize> {
    let n = succs.len();
    let exit = n;
    let mut succs: Vec<Vec<usize>> = succs.to_vec();
    // Blocks reaching the exit.
    let mut preds = vec![Vec::new(); n + 1];
    for (b, s) in succs.iter().enumerate() {
        for &t in s {
            preds[t].push(b);
        }
    }
    let mut reaches = vec![false; n + 1];
    let mut work = vec![exit];
    reaches[exit] = true;
    while let Some(b) = work.pop() {
        for &p in &preds[b] {
            if !reaches[p] {
                reaches[p] = true;
                work.push(p);
            }
        }
    }
    for (b, s) in succs.iter_mut().enumerate() {
        if !reaches[b] {
            s.push(exit);
        }
    }
    let mut pdom = vec![Bits::full(n + 1); n + 1];
    pdom[exit] = Bits::empty(n + 1);
    pdom[exit].set(exit);
    let mut changed = true;
    while changed {
        changed = false;
        for b in (0..n).rev() {
            let mut new = Bits::full(n + 1);
            for &s in &succs[b] {
                new.and(&pdom[s]);
            }
            new.set(b);
            if new != pdom[b] {
                pdom[b] = new;
                changed = true;
            }
        }
    }
    // Post-dominators form a chain: the immediate one is the strict one with one fewer.
    let counts: Vec<u32> = pdom.iter().map(Bits::count).collect();
    (0..n)
        .map(|b| {
            (0..=n)
                .find(|&s| s != b && pdom[b].has(s) && counts[s] + 1 == counts[b])
                .unwrap_or(exit)
        })
        .collect()
}

/// A conditional branch and the blocks control-dependent on it.
struct Branch {
    block: usize,
    inst: usize,
    region: Vec<usize>,
}

/// One instruction's effect on the registers, in a block of granularity `block`.
fn step(f: &Function, inst: &Inst, state: &mut [Abs], block: u8) {
    if inst.dests.is_empty() {
        return;
    }
    let v = eval(f, inst, state);
    let guard = inst.guard.map(|g| state[g].gran());
    for &d in &inst.dests {
        state[d] = match guard {
            None => v.depend(block),
            // Some threads write, the others keep the old value.
            Some(g) => state[d].join(v).depend(block.min(g)),
        };
    }
}

/// The registers at the start of every block reached from the entry, for the granularities of
/// the blocks `gran`: a forward data flow over the CFG (a register is the join of its values on
/// the incoming edges). At the entry every register is lane-varying: one read before any write
/// holds whatever each thread had.
fn flow(f: &Function, gran: &[u8]) -> Vec<Option<Vec<Abs>>> {
    let n = f.blocks.len();
    let mut ins: Vec<Option<Vec<Abs>>> = vec![None; n];
    ins[0] = Some(vec![Abs::Gran(0); f.regs.len()]);
    let mut work = std::collections::BTreeSet::from([0]);
    while let Some(b) = work.pop_first() {
        let mut state = ins[b].clone().expect("a reached block");
        for &i in &f.blocks[b].insts {
            step(f, &f.insts[i], &mut state, gran[b]);
        }
        for &s in f.blocks[b].succs.iter().filter(|&&s| s < n) {
            match &mut ins[s] {
                None => {
                    ins[s] = Some(state.clone());
                    work.insert(s);
                }
                Some(old) => {
                    let mut changed = false;
                    for (o, v) in old.iter_mut().zip(&state) {
                        let j = o.join(*v);
                        if j != *o {
                            *o = j;
                            changed = true;
                        }
                    }
                    if changed {
                        work.insert(s);
                    }
                }
            }
        }
    }
    ins
}

/// The granularity of every guard, by instruction (`None`: unguarded, or never reached).
fn guards(f: &Function, ins: &[Option<Vec<Abs>>], gran: &[u8]) -> Vec<Option<u8>> {
    let mut out = vec![None; f.insts.len()];
    for (b, block) in f.blocks.iter().enumerate() {
        let Some(mut state) = ins[b].clone() else {
            continue;
        };
        for &i in &block.insts {
            let inst = &f.insts[i];
            out[i] = inst.guard.map(|g| state[g].gran());
            step(f, inst, &mut state, gran[b]);
        }
    }
    out
}

fn analyse(f: &Function) -> Result<EntryReport> {
    let n = f.blocks.len();
    let succs: Vec<Vec<usize>> = f.blocks.iter().map(|b| b.succs.clone()).collect();
    let ipdom = ipdoms(&succs);
    let mut branches = Vec::new();
    for (b, block) in f.blocks.iter().enumerate() {
        if block.succs.len() < 2 {
            continue;
        }
        let inst = *block
            .insts
            .last()
            .expect("a branching block has its branch");
        let mut seen = vec![false; n];
        let mut work: Vec<usize> = block.succs.iter().copied().filter(|&s| s < n).collect();
        let mut region = Vec::new();
        while let Some(x) = work.pop() {
            if x == ipdom[b] || seen[x] {
                continue;
            }
            seen[x] = true;
            region.push(x);
            work.extend(f.blocks[x].succs.iter().copied().filter(|&s| s < n));
        }
        branches.push(Branch {
            block: b,
            inst,
            region,
        });
    }

    // Register values and block granularities, to a common fixed point: values are computed
    // for the granularities, the granularities from the branches' predicates, until stable
    // (granularities only fall, values only rise).
    let mut gran = vec![UNIFORM; n];
    let (guard, cause) = loop {
        let ins = flow(f, &gran);
        let guard = guards(f, &ins, &gran);
        let mut new_gran = vec![UNIFORM; n];
        let mut cause: Vec<Option<usize>> = vec![None; n];
        let mut changed = true;
        while changed {
            changed = false;
            for br in &branches {
                let Some(p) = guard[br.inst] else {
                    continue;
                };
                let (g, c) = if p < new_gran[br.block] {
                    (p, Some(br.inst))
                } else {
                    (new_gran[br.block], cause[br.block])
                };
                for &x in &br.region {
                    if g < new_gran[x] {
                        new_gran[x] = g;
                        cause[x] = c;
                        changed = true;
                    }
                }
            }
        }
        if new_gran == gran {
            break (guard, cause);
        }
        gran = new_gran;
    };

    let mut report = EntryReport {
        entry: f.name.clone(),
        blocks: n,
        branches: branches.len(),
        lane_divergent: 0,
        warp_divergent: 0,
        aligned: 0,
        wgmmas: 0,
    };
    for br in &branches {
        match guard[br.inst] {
            Some(p) if p < WARP => report.lane_divergent += 1,
            Some(p) if p < WARPGROUP => report.warp_divergent += 1,
            _ => {}
        }
    }
    let mut errors = String::new();
    for (i, inst) in f.insts.iter().enumerate() {
        let Some(need) = aligned_need(&inst.op) else {
            continue;
        };
        report.aligned += 1;
        if inst.op.starts_with("wgmma.mma_async") {
            report.wgmmas += 1;
        }
        let block = gran[inst.block];
        let guard = guard[i].unwrap_or(UNIFORM);
        if block.min(guard) >= need {
            continue;
        }
        let group = if need == WARPGROUP {
            "warpgroup"
        } else {
            "warp"
        };
        let why = if guard < block.min(need) {
            format!(
                "its guard `{}` may differ within a {group}",
                f.regs[inst.guard.expect("guarded")]
            )
        } else {
            match cause[inst.block].map(|c| &f.insts[c]) {
                Some(c) => format!(
                    "it is control-dependent on line {}: `{}`, whose predicate `{}` may differ within a {group}",
                    c.line,
                    c.text,
                    c.guard.map_or("?", |g| f.regs[g].as_str())
                ),
                None => "it is on a divergent path".to_string(),
            }
        };
        let _ = writeln!(
            errors,
            "PTX entry `{}` line {}: `{}` must be executed by the whole {group} together, but {why}",
            f.name, inst.line, inst.op
        );
    }
    if errors.is_empty() {
        Ok(report)
    } else {
        Err(errors.trim_end().to_string())
    }
}

/// The granularity an instruction must be executed at, if it is `.aligned`.
fn aligned_need(op: &str) -> Option<u8> {
    let parts: Vec<&str> = op.split('.').collect();
    match parts[0] {
        "wgmma" | "setmaxnreg" => Some(WARPGROUP),
        // `bar{.cta}.sync`/`.arrive`/`.red` are `barrier{.cta}.*.aligned`; `bar.warp.sync` is not.
        "bar" if parts.get(1) != Some(&"warp") => Some(WARP),
        _ if parts.contains(&"aligned") => Some(WARP),
        _ => None,
    }
}

/// Trailing zeros of a 32-bit value (32 for zero).
fn tz(v: u32) -> u32 {
    v.trailing_zeros()
}

/// The abstract value an instruction writes (before its guard and block are accounted for).
fn eval(f: &Function, inst: &Inst, vals: &[Abs]) -> Abs {
    let atom = |a: &Atom| match a {
        Atom::Reg(r) => vals[*r],
        Atom::Special(s) => *s,
        Atom::Imm(_) => Abs::Gran(UNIFORM),
    };
    let joined = || {
        inst.sources()
            .map(|a| atom(a).gran())
            .fold(Abs::Gran(UNIFORM), |acc, g| acc.join(Abs::Gran(g)))
    };
    let parts = inst.parts();
    let base = parts[0];
    let ty = *parts.last().expect("an opcode");
    let src = |i: usize| inst.operands.get(i + 1);
    let tid_plus = |i: usize| match src(i).and_then(|o| o.single.as_ref()).map(atom) {
        Some(Abs::TidPlus(c)) => Some(c),
        _ => None,
    };
    let imm = |i: usize| src(i).and_then(|o| o.imm);
    let bits32 = matches!(ty, "u32" | "s32" | "b32");
    let n_src = inst.operands.len().saturating_sub(1);
    match base {
        "mov" if bits32 && n_src == 1 => {
            if let Some(c) = tid_plus(0) {
                return Abs::TidPlus(c);
            }
            joined()
        }
        "add" | "sub" if bits32 && parts.len() == 2 => {
            let (c, k) = match (tid_plus(0), imm(1), tid_plus(1), imm(0)) {
                (Some(c), Some(k), _, _) => (c, k),
                (_, _, Some(c), Some(k)) if base == "add" => (c, k),
                _ => return joined(),
            };
            let k = k as u32;
            Abs::TidPlus(if base == "add" {
                c.wrapping_add(k)
            } else {
                c.wrapping_sub(k)
            })
        }
        "shr" if bits32 => match (tid_plus(0), imm(1)) {
            (Some(c), Some(k)) if (1..32).contains(&k) => Abs::Gran(bits((k as u32).min(tz(c)))),
            _ => joined(),
        },
        "div" if ty == "u32" => match (tid_plus(0), imm(1)) {
            (Some(c), Some(d)) if d as u32 != 0 => Abs::Gran(bits(tz(d as u32).min(tz(c)))),
            _ => joined(),
        },
        "and" if ty == "b32" => match (tid_plus(0), imm(1), tid_plus(1), imm(0)) {
            (Some(c), Some(m), _, _) | (_, _, Some(c), Some(m)) => {
                Abs::Gran(bits(tz(m as u32).min(tz(c))))
            }
            _ => joined(),
        },
        "bfe" if matches!(ty, "u32" | "s32") => match (tid_plus(0), imm(1), imm(2)) {
            (Some(c), Some(pos), Some(_)) if (0..32).contains(&pos) => {
                Abs::Gran(bits((pos as u32).min(tz(c))))
            }
            _ => joined(),
        },
        "setp" => setp(inst, &parts, ty, &tid_plus, &imm, &atom).unwrap_or_else(joined),
        "ld" | "ldu" => load(f, inst, &parts, joined()),
        "mbarrier" => {
            // try_wait/test_wait, arrive's state, pending_count: one observation of the barrier
            // per warp (see the module documentation); never more than warp-uniform.
            Abs::Gran(joined().gran().min(WARP))
        }
        _ if PURE.contains(&base) && !matches!(base, "addc" | "subc" | "madc") => joined(),
        _ => Abs::Gran(0),
    }
}

/// Arithmetic whose results are functions of its register operands alone.
const PURE: [&str; 50] = [
    "add", "sub", "mul", "mad", "mul24", "mad24", "sad", "div", "rem", "abs", "neg", "min", "max",
    "popc", "clz", "bfind", "fns", "brev", "bfe", "bfi", "dp4a", "dp2a", "and", "or", "xor", "not",
    "cnot", "lop3", "shf", "shl", "shr", "prmt", "testp", "copysign", "rcp", "sqrt", "rsqrt",
    "sin", "cos", "lg2", "ex2", "tanh", "fma", "setp", "set", "selp", "slct", "mov", "cvt", "cvta",
];

/// `setp` of `%tid.x + c` against an immediate: constant on aligned blocks of `%tid.x`.
fn setp(
    inst: &Inst,
    parts: &[&str],
    ty: &str,
    tid_plus: &dyn Fn(usize) -> Option<u32>,
    imm: &dyn Fn(usize) -> Option<i64>,
    atom: &dyn Fn(&Atom) -> Abs,
) -> Option<Abs> {
    if !matches!(ty, "u32" | "s32") {
        return None;
    }
    let cmp = *parts.get(1)?;
    let (c, n, cmp) = match (tid_plus(0), imm(1), tid_plus(1), imm(0)) {
        (Some(c), Some(n), _, _) => (c, n, cmp),
        (_, _, Some(c), Some(n)) => {
            let swapped = match cmp {
                "lt" => "gt",
                "gt" => "lt",
                "le" => "ge",
                "ge" => "le",
                "lo" => "hi",
                "hi" => "lo",
                "ls" => "hs",
                "hs" => "ls",
                _ => return None,
            };
            (c, n, swapped)
        }
        _ => return None,
    };
    let boundary = match cmp {
        "lt" | "ge" | "lo" | "hs" => n as u32,
        "le" | "gt" | "ls" | "hi" => (n as u32).wrapping_add(1),
        _ => return None,
    };
    let mut v = Abs::Gran(bits(tz(boundary).min(tz(c))));
    // `setp.cmp.bop p, a, b, c` combines with a third, predicate operand.
    for o in inst.operands.iter().skip(3) {
        for a in &o.atoms {
            v = v.join(Abs::Gran(atom(a).gran()));
        }
    }
    Some(v)
}

/// A load: as uniform as its address if no thread writes the memory, warp-uniform at most if
/// some may, lane-varying for per-thread (local, or possibly local: generic) memory.
fn load(f: &Function, inst: &Inst, parts: &[&str], address: Abs) -> Abs {
    let space = |s: &str| {
        parts
            .iter()
            .any(|p| *p == s || p.starts_with(&format!("{s}::")))
    };
    if parts[0] == "ldu" || space("const") || parts.contains(&"nc") {
        return address;
    }
    if space("param") {
        // The entry's own parameters; a call's return values are not.
        let from_entry = inst
            .operands
            .get(1)
            .is_some_and(|o| o.atoms.is_empty() && f_params(f, &o.text));
        return if from_entry { address } else { Abs::Gran(0) };
    }
    if space("global") || space("shared") {
        return Abs::Gran(address.gran().min(WARP));
    }
    Abs::Gran(0)
}

fn f_params(f: &Function, text: &str) -> bool {
    let name = text
        .trim_matches(|c| c == '[' || c == ']')
        .split('+')
        .next()
        .unwrap_or("")
        .trim();
    f.params.iter().any(|p| p == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An entry `k` with one `.u32` parameter and `%tid.x` in `%r1`.
    fn kernel(body: &str) -> String {
        format!(
            ".version 8.0\n.target sm_90a\n.address_size 64\n\n.visible .entry k(\n\t.param .u32 k_param_0\n)\n.maxntid 384, 1, 1\n{{\n\t.reg .pred \t%p<8>;\n\t.reg .b32 \t%r<32>;\n\t.reg .b64 \t%rd<8>;\n\t.reg .f32 \t%f<8>;\n\n// %bb.0:\n\tmov.u32 \t%r1, %tid.x;\n\tld.param.b32 \t%r2, [k_param_0];\n{body}\n\tret;\n                                        // -- End function\n}}\n"
        )
    }

    const WGMMA: &str = "\twgmma.fence.sync.aligned;\n\t// begin inline asm\n\t{\n.reg .pred p;\nsetp.ne.b32 p, %r2, 0;\nwgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%f0, %f1, %f2, %f3}, %rd1, %rd2, p, 1, 1, 0, 0;\n}\n\t// end inline asm\n\twgmma.commit_group.sync.aligned;\n\twgmma.wait_group.sync.aligned 0;\n";

    fn under(setup: &str, branch: &str) -> String {
        kernel(&format!(
            "{setup}\n\t{branch} \t$L__BB0_2;\n// %bb.1:\n{WGMMA}$L__BB0_2:"
        ))
    }

    fn fails(ptx: &str, what: &str) {
        match check(ptx) {
            Ok(r) => panic!("{what}: passed, {r:?}\n{ptx}"),
            Err(e) => assert!(e.contains("wgmma") || e.contains("bar"), "{e}"),
        }
    }

    fn passes(ptx: &str, what: &str) -> EntryReport {
        match check(ptx) {
            Ok(mut r) => {
                assert_eq!(r.len(), 1, "{what}");
                r.pop().unwrap()
            }
            Err(e) => panic!("{what}: {e}\n{ptx}"),
        }
    }

    #[test]
    fn a_wgmma_under_one_lane_fails_naming_the_branch() {
        let ptx = under("\tsetp.eq.s32 \t%p1, %r1, 0;", "@!%p1 bra");
        let e = check(&ptx).unwrap_err();
        assert!(e.contains("entry `k`"), "{e}");
        assert!(e.contains("wgmma.mma_async"), "{e}");
        assert!(e.contains("@!%p1 bra $L__BB0_2"), "{e}");
        // The fence, commit and wait too.
        assert_eq!(e.lines().count(), 4, "{e}");
    }

    #[test]
    fn a_wgmma_under_a_warpgroup_test_of_the_thread_passes() {
        let r = passes(
            &under("\tsetp.lt.u32 \t%p1, %r1, 128;", "@!%p1 bra"),
            "tid < 128",
        );
        assert_eq!((r.branches, r.lane_divergent, r.warp_divergent), (1, 0, 0));
        assert_eq!((r.wgmmas, r.aligned), (1, 4));
        passes(
            &under("\tsetp.gt.u32 \t%p1, %r1, 255;", "@%p1 bra"),
            "tid > 255",
        );
        passes(
            &under("\tsetp.lt.u32 \t%p1, 255, %r1;", "@%p1 bra"),
            "255 < tid",
        );
        passes(
            &under(
                "\tshr.u32 \t%r3, %r1, 7;\n\tsetp.eq.s32 \t%p1, %r3, 1;",
                "@%p1 bra",
            ),
            "tid / 128 == 1",
        );
        passes(
            &under(
                "\tadd.s32 \t%r3, %r1, -128;\n\tshr.u32 \t%r4, %r3, 7;\n\tsetp.ne.s32 \t%p1, %r4, 0;",
                "@%p1 bra",
            ),
            "(tid - 128) / 128 != 0",
        );
        passes(
            &under(
                "\tdiv.u32 \t%r3, %r1, 384;\n\tsetp.eq.s32 \t%p1, %r3, 0;",
                "@%p1 bra",
            ),
            "tid / 384 (a multiple of 128)",
        );
        passes(
            &under(
                "\tand.b32 \t%r3, %r1, -128;\n\tsetp.eq.s32 \t%p1, %r3, 0;",
                "@%p1 bra",
            ),
            "tid & !127",
        );
        passes(
            &under(
                "\tbfe.u32 \t%r3, %r1, 7, 2;\n\tsetp.eq.s32 \t%p1, %r3, 0;",
                "@%p1 bra",
            ),
            "bits 7.. of tid",
        );
    }

    #[test]
    fn a_wgmma_under_a_test_finer_than_a_warpgroup_fails() {
        fails(
            &under("\tsetp.lt.u32 \t%p1, %r1, 64;", "@!%p1 bra"),
            "tid < 64",
        );
        fails(
            &under("\tsetp.le.u32 \t%p1, %r1, 128;", "@!%p1 bra"),
            "tid <= 128",
        );
        fails(
            &under("\tsetp.lt.u32 \t%p1, 256, %r1;", "@%p1 bra"),
            "256 < tid",
        );
        fails(
            &under("\tsetp.ne.s32 \t%p1, %r1, 128;", "@!%p1 bra"),
            "tid != 128",
        );
        fails(
            &under(
                "\tshr.u32 \t%r3, %r1, 5;\n\tsetp.eq.s32 \t%p1, %r3, 1;",
                "@%p1 bra",
            ),
            "tid / 32 == 1",
        );
        fails(
            &under(
                "\tadd.s32 \t%r3, %r1, -64;\n\tshr.u32 \t%r4, %r3, 7;\n\tsetp.ne.s32 \t%p1, %r4, 0;",
                "@%p1 bra",
            ),
            "(tid - 64) / 128",
        );
        fails(
            &under(
                "\tand.b32 \t%r3, %r1, 3;\n\tsetp.eq.s32 \t%p1, %r3, 0;",
                "@%p1 bra",
            ),
            "tid & 3",
        );
        fails(
            &under(
                "\tmov.u32 \t%r3, %laneid;\n\tsetp.lt.u32 \t%p1, %r3, 128;",
                "@%p1 bra",
            ),
            "laneid",
        );
        fails(
            &under(
                "\tmov.u32 \t%r3, %tid.y;\n\tsetp.lt.u32 \t%p1, %r3, 128;",
                "@%p1 bra",
            ),
            "tid.y",
        );
        // An instruction the analysis does not know makes its result lane-varying.
        fails(
            &under(
                "\tfrobnicate.u32 \t%r3, %r2;\n\tsetp.eq.s32 \t%p1, %r3, 0;",
                "@%p1 bra",
            ),
            "unknown instruction",
        );
        // A register never written.
        fails(
            &under("\tsetp.eq.s32 \t%p1, %r9, 0;", "@%p1 bra"),
            "undefined",
        );
    }

    #[test]
    fn a_warp_level_aligned_instruction_needs_only_its_warp() {
        let warp = |setup: &str| {
            kernel(&format!(
                "{setup}\n\t@%p1 bra \t$L__BB0_2;\n// %bb.1:\n\tbarrier.sync.aligned \t1, 32;\n$L__BB0_2:"
            ))
        };
        let r = passes(&warp("\tsetp.lt.u32 \t%p1, %r1, 32;"), "tid < 32");
        assert_eq!((r.warp_divergent, r.aligned, r.wgmmas), (1, 1, 0));
        assert!(check(&warp("\tsetp.lt.u32 \t%p1, %r1, 16;")).is_err());
        assert!(check(&warp("\tsetp.eq.s32 \t%p1, %r1, 0;")).is_err());
    }

    #[test]
    fn a_wgmma_under_a_uniform_parameter_passes() {
        let r = passes(
            &under("\tsetp.eq.s32 \t%p1, %r2, 0;", "@%p1 bra"),
            "param == 0",
        );
        assert_eq!((r.lane_divergent, r.warp_divergent), (0, 0));
        // The CTA's index is uniform; a load of mutable memory is at most warp-uniform.
        passes(
            &under(
                "\tmov.u32 \t%r3, %ctaid.x;\n\tsetp.eq.s32 \t%p1, %r3, 0;",
                "@%p1 bra",
            ),
            "ctaid",
        );
        fails(
            &under(
                "\tcvt.u64.u32 \t%rd3, %r2;\n\tld.global.u32 \t%r3, [%rd3];\n\tsetp.eq.s32 \t%p1, %r3, 0;",
                "@%p1 bra",
            ),
            "a global load",
        );
        passes(
            &under(
                "\tcvt.u64.u32 \t%rd3, %r2;\n\tld.global.nc.u32 \t%r3, [%rd3];\n\tsetp.eq.s32 \t%p1, %r3, 0;",
                "@%p1 bra",
            ),
            "a read-only load",
        );
        fails(
            &under(
                "\tcvt.u64.u32 \t%rd3, %r1;\n\tld.global.nc.u32 \t%r3, [%rd3];\n\tsetp.eq.s32 \t%p1, %r3, 0;",
                "@%p1 bra",
            ),
            "a load at a varying address",
        );
        fails(
            &under(
                "\tcvt.u64.u32 \t%rd3, %r2;\n\tatom.global.add.u32 \t%r3, [%rd3], 1;\n\tsetp.eq.s32 \t%p1, %r3, 0;",
                "@%p1 bra",
            ),
            "an atomic",
        );
    }

    #[test]
    fn a_wgmma_in_a_uniform_loop_passes() {
        let r = passes(
            &kernel(&format!(
                "\tmov.b32 \t%r3, 0;\n$L__BB0_1:\n{WGMMA}\tadd.s32 \t%r3, %r3, 1;\n\tsetp.lt.u32 \t%p1, %r3, %r2;\n\t@%p1 bra \t$L__BB0_1;\n// %bb.2:"
            )),
            "uniform loop",
        );
        assert_eq!((r.branches, r.lane_divergent), (1, 0));
    }

    #[test]
    fn a_wgmma_after_a_divergent_loop_passes_and_inside_it_fails() {
        // Each thread loops %tid.x times; the wgmma after the loop post-dominates its exit.
        let after = kernel(&format!(
            "\tmov.b32 \t%r3, 0;\n$L__BB0_1:\n\tadd.s32 \t%r3, %r3, 1;\n\tsetp.lt.u32 \t%p1, %r3, %r1;\n\t@%p1 bra \t$L__BB0_1;\n// %bb.2:\n{WGMMA}"
        ));
        let r = passes(&after, "after a divergent loop");
        assert_eq!((r.branches, r.lane_divergent), (1, 1));
        let inside = kernel(&format!(
            "\tmov.b32 \t%r3, 0;\n$L__BB0_1:\n{WGMMA}\tadd.s32 \t%r3, %r3, 1;\n\tsetp.lt.u32 \t%p1, %r3, %r1;\n\t@%p1 bra \t$L__BB0_1;\n// %bb.2:"
        ));
        fails(&inside, "inside a divergent loop");
        // The loop's counter differs between threads after it (sync dependence): a branch on
        // it is divergent, though the counter is computed from uniform values only.
        let counter = kernel(&format!(
            "\tmov.b32 \t%r3, 0;\n$L__BB0_1:\n\tadd.s32 \t%r3, %r3, 1;\n\tsetp.lt.u32 \t%p1, %r3, %r1;\n\t@%p1 bra \t$L__BB0_1;\n// %bb.2:\n\tsetp.eq.s32 \t%p2, %r3, 5;\n\t@%p2 bra \t$L__BB0_4;\n// %bb.3:\n{WGMMA}$L__BB0_4:"
        ));
        fails(&counter, "a branch on a divergent loop's counter");
    }

    #[test]
    fn a_value_chosen_by_a_divergent_branch_is_divergent() {
        // Phi-like: %r5 is 1 or 2 by a test of the thread finer than a warpgroup.
        let ptx = kernel(&format!(
            "\tsetp.lt.u32 \t%p1, %r1, 64;\n\tmov.b32 \t%r5, 1;\n\t@%p1 bra \t$L__BB0_2;\n// %bb.1:\n\tmov.b32 \t%r5, 2;\n$L__BB0_2:\n\tsetp.eq.s32 \t%p2, %r5, 1;\n\t@%p2 bra \t$L__BB0_4;\n// %bb.3:\n{WGMMA}$L__BB0_4:"
        ));
        fails(&ptx, "phi of a divergent branch");
        // A guarded write is as divergent as its guard.
        let guarded = kernel(&format!(
            "\tsetp.eq.s32 \t%p1, %r1, 0;\n\tmov.b32 \t%r5, 1;\n\t@%p1 mov.b32 \t%r5, 2;\n\tsetp.eq.s32 \t%p2, %r5, 1;\n\t@%p2 bra \t$L__BB0_4;\n// %bb.3:\n{WGMMA}$L__BB0_4:"
        ));
        fails(&guarded, "guarded write");
        // A guarded wgmma.
        fails(
            &kernel("\tsetp.eq.s32 \t%p1, %r1, 0;\n\t@%p1 wgmma.fence.sync.aligned;"),
            "guarded wgmma.fence",
        );
    }

    #[test]
    fn an_mbarrier_wait_loop_before_a_wgmma_passes() {
        // The shape of the GEMM's consumer: a try_wait in an inline-assembly scope, its
        // spin loop, then the wgmma (the scoped `p` is not the wgmma's `p`).
        let wait = "\t{\n.reg .pred p;\nmbarrier.try_wait.parity.acquire.cta.shared::cta.b64 p, [%r7], %r8;\nselp.u32 %r9, 1, 0, p;\n}\n";
        let ptx = kernel(&format!(
            "\tmov.b32 \t%r7, 0;\n\tmov.b32 \t%r8, 0;\n{wait}\tsetp.ne.s32 \t%p1, %r9, 0;\n\t@%p1 bra \t$L__BB0_2;\n$L__BB0_1:\n{wait}\tsetp.eq.s32 \t%p2, %r9, 0;\n\t@%p2 bra \t$L__BB0_1;\n\tbra.uni \t$L__BB0_2;\n$L__BB0_2:\n{WGMMA}"
        ));
        let r = passes(&ptx, "a wait loop");
        assert_eq!((r.branches, r.warp_divergent, r.wgmmas), (2, 2, 1));
        // But a wgmma under the wait's result is not warpgroup-uniform.
        fails(
            &kernel(&format!(
                "\tmov.b32 \t%r7, 0;\n\tmov.b32 \t%r8, 0;\n{wait}\tsetp.ne.s32 \t%p1, %r9, 0;\n\t@%p1 bra \t$L__BB0_2;\n{WGMMA}$L__BB0_2:"
            )),
            "under a wait's result",
        );
    }

    #[test]
    fn calls_exits_and_scopes_parse() {
        // A call's result is lane-varying; `exit` ends a block; `trap; exit;` on one line.
        let ptx = kernel(&format!(
            "\tsetp.eq.s32 \t%p1, %r2, 0;\n\t@%p1 bra \t$L__BB0_3;\n// %bb.1:\n\t{{ // callseq 0, 0\n\t.param .b32 retval0;\n\tcall.uni (retval0),\n\tf,\n\t(\n\t);\n\tld.param.b32 \t%r6, [retval0];\n\t}} // callseq 0\n\tsetp.eq.s32 \t%p3, %r6, 0;\n\t@%p3 bra \t$L__BB0_3;\n// %bb.2:\n{WGMMA}\texit;\n$L__BB0_3:\n\ttrap; exit;"
        ));
        fails(&ptx, "under a call's result");
        assert!(check(&ptx.replace("%p3, %r6", "%p3, %r2")).is_ok());
    }

    #[test]
    fn literals_and_labels() {
        assert_eq!(int_literal("-128"), Some(-128));
        assert_eq!(int_literal("0x7F"), Some(127));
        assert_eq!(int_literal("017"), Some(15));
        assert_eq!(int_literal("0"), Some(0));
        assert_eq!(int_literal("0f3F800000"), None);
        assert_eq!(label_len("$L__BB0_3:"), Some(9));
        assert_eq!(label_len("mbarrier.init.shared::cta.b64 [%r1], 1"), None);
        assert_eq!(label_len("a::b"), None);
    }
}
