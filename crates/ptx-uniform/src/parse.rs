//! PTX `.entry` bodies into instructions, with every register resolved in its `{ }` scope.

use std::collections::{HashMap, HashSet};

use crate::abs::{Abs, special};
use crate::lex::{int_literal, label_len, split_operands, strip_comments};
use crate::report::ParseError;

/// Results of parsing.
pub(crate) type Result<T = (), E = ParseError> = std::result::Result<T, E>;

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Atom {
    Reg(usize),
    Special(Abs),
    Imm(i64),
}

#[derive(Clone, Debug)]
pub(crate) struct Operand {
    pub(crate) atoms: Vec<Atom>,
    /// The operand is one integer literal.
    pub(crate) imm: Option<i64>,
    /// The operand is one register or special register.
    pub(crate) single: Option<Atom>,
    pub(crate) text: String,
}

#[derive(Clone, Debug)]
pub(crate) struct Inst {
    pub(crate) line: usize,
    pub(crate) text: String,
    pub(crate) guard: Option<usize>,
    pub(crate) op: String,
    pub(crate) operands: Vec<Operand>,
    pub(crate) dests: Vec<usize>,
    pub(crate) block: usize,
    /// A `trap`, or a call of a function every path of which traps: the path ends here.
    pub(crate) dead_end: bool,
}

impl Inst {
    pub(crate) fn base(&self) -> &str {
        self.op.split('.').next().unwrap_or("")
    }

    pub(crate) fn parts(&self) -> Vec<&str> {
        self.op.split('.').collect()
    }

    pub(crate) fn is_terminator(&self) -> bool {
        self.dead_end || matches!(self.base(), "bra" | "ret" | "exit" | "trap" | "brx")
    }

    /// The operands read (all but a register destination; a wgmma's accumulators are both).
    pub(crate) fn sources(&self) -> impl Iterator<Item = &Atom> {
        let skip = usize::from(!self.dests.is_empty() && self.base() != "wgmma");
        self.operands.iter().skip(skip).flat_map(|o| o.atoms.iter())
    }
}

#[derive(Debug)]
pub(crate) struct Block {
    pub(crate) label: Option<String>,
    pub(crate) insts: Vec<usize>,
    pub(crate) succs: Vec<usize>,
}

/// One parsed `.entry`.
pub(crate) struct Function {
    pub(crate) name: String,
    pub(crate) params: Vec<String>,
    pub(crate) regs: Vec<String>,
    pub(crate) insts: Vec<Inst>,
    pub(crate) blocks: Vec<Block>,
}

impl Function {
    /// No path from the start reaches the exit (`ret`, `exit`, the end of the body), and every
    /// block reached can reach a dead end: every path ends in a trap.
    pub(crate) fn never_returns(&self) -> bool {
        let n = self.blocks.len();
        let mut reached = vec![false; n];
        let mut work = vec![0];
        while let Some(b) = work.pop() {
            if b >= n {
                return false;
            }
            if !std::mem::replace(&mut reached[b], true) {
                work.extend(self.blocks[b].succs.iter().copied());
            }
        }
        // Backwards from the dead ends (the blocks without successors).
        let mut preds = vec![Vec::new(); n];
        for (b, block) in self.blocks.iter().enumerate() {
            for &s in block.succs.iter().filter(|&&s| s < n) {
                preds[s].push(b);
            }
        }
        let mut ends = vec![false; n];
        let mut work: Vec<usize> = (0..n)
            .filter(|&b| self.blocks[b].succs.is_empty())
            .collect();
        while let Some(b) = work.pop() {
            if !std::mem::replace(&mut ends[b], true) {
                work.extend(preds[b].iter().copied());
            }
        }
        (0..n).all(|b| !reached[b] || ends[b])
    }
}

/// Whether a function is a kernel or a device function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Entry,
    Func,
}

/// A function definition: its kind, name, parameters and where its body starts (just after the
/// `{`).
struct Header {
    kind: Kind,
    name: String,
    params: Vec<String>,
    body_line: usize,
    body_col: usize,
}

/// The `.entry` functions of a module, their calls of trapping `.func`s resolved (see
/// [`trapping_funcs`]).
pub(crate) fn parse(ptx: &str) -> Result<Vec<Function>> {
    let lines: Vec<String> = strip_comments(ptx);
    let headers = headers(&lines)?;
    let trapping = trapping_funcs(&lines, &headers);
    headers
        .iter()
        .filter(|h| h.kind == Kind::Entry)
        .map(|h| parse_body(h, &lines, &trapping))
        .collect()
}

/// The `.func`s of the module from which every path ends in `trap` (or in a call of such a
/// function), with no `ret` or `exit` reachable and no cycle that cannot reach a trap: a call of
/// one ends the thread's path like a `trap`. A fixed point from the empty set (each round can
/// only add functions: a dead end more makes fewer paths return). A `.func` that does not parse
/// is taken to return: its calls stay ordinary calls.
fn trapping_funcs(lines: &[String], headers: &[Header]) -> HashSet<String> {
    let mut trapping = HashSet::new();
    loop {
        let next: HashSet<String> = headers
            .iter()
            .filter(|h| h.kind == Kind::Func)
            .filter_map(|h| parse_body(h, lines, &trapping).ok())
            .filter(Function::never_returns)
            .map(|f| f.name)
            .collect();
        if next.len() == trapping.len() {
            return trapping;
        }
        trapping = next;
    }
}

/// Every `.entry` and `.func` definition of the module (declarations without a body skipped).
fn headers(lines: &[String]) -> Result<Vec<Header>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let Some((kind, at)) = find_function(&lines[i]) else {
            i += 1;
            continue;
        };
        let what = match kind {
            Kind::Entry => "entry",
            Kind::Func => "function",
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
                return Err(ParseError(format!(
                    "PTX {what} `{name}`: the parameter list does not end"
                )));
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
                return Err(ParseError(format!("PTX {what} `{name}` has no body")));
            }
            rest.clone_from(&lines[j]);
        };
        if body_line == usize::MAX {
            i = j + 1;
            continue;
        }
        let end = body_end(lines, body_line, body_col)
            .ok_or_else(|| format!("PTX {what} `{name}`: the body does not end"))?;
        out.push(Header {
            kind,
            name,
            params,
            body_line,
            body_col,
        });
        i = end + 1;
    }
    Ok(out)
}

/// The line of the `}` that closes a body opened just before `col` of line `first`.
fn body_end(lines: &[String], first: usize, col: usize) -> Option<usize> {
    let mut depth = 1usize;
    for (n, line) in lines.iter().enumerate().skip(first) {
        let text = if n == first { &line[col..] } else { line };
        for b in text.bytes() {
            match b {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        return Some(n);
                    }
                }
                _ => {}
            }
        }
    }
    None
}

/// The kind of the function defined or declared on this line, and where its name starts (after
/// a `.func`'s return parameters, if any).
fn find_function(line: &str) -> Option<(Kind, usize)> {
    let (kind, at, len) = match (line.find(".entry"), line.find(".func")) {
        (Some(at), _) => (Kind::Entry, at, ".entry".len()),
        (None, Some(at)) => (Kind::Func, at, ".func".len()),
        (None, None) => return None,
    };
    let before = &line[..at];
    if !before.trim().is_empty() && !before.split_whitespace().all(|w| w.starts_with('.')) {
        return None;
    }
    let after = &line[at + len..];
    let mut name_at = after.len() - after.trim_start().len();
    if name_at == 0 {
        return None;
    }
    if kind == Kind::Func && after[name_at..].starts_with('(') {
        // The return parameters: `.func (.param .b32 func_retval0) name(`.
        let close = name_at + after[name_at..].find(')')?;
        let rest = &after[close + 1..];
        name_at = close + 1 + (rest.len() - rest.trim_start().len());
    }
    Some((kind, at + len + name_at))
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

pub(crate) struct Parser<'a> {
    pub(crate) name: &'a str,
    /// The `.func`s a call of which ends the path (see [`trapping_funcs`]).
    trapping: &'a HashSet<String>,
    pub(crate) params: &'a [String],
    scopes: Vec<Scope>,
    next_scope: usize,
    pub(crate) regs: Vec<String>,
    reg_ids: HashMap<(usize, String), usize>,
    pub(crate) insts: Vec<Inst>,
    /// Labels, by the index of the instruction they precede.
    pub(crate) labels: Vec<(usize, String)>,
}

/// The function of `h`, with calls of the `trapping` functions as dead ends.
fn parse_body(h: &Header, lines: &[String], trapping: &HashSet<String>) -> Result<Function> {
    let (name, first, col) = (h.name.as_str(), h.body_line, h.body_col);
    let mut p = Parser {
        name,
        params: &h.params,
        trapping,
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
                    return p.finish();
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
    Err(ParseError(format!(
        "PTX entry `{name}`: the body does not end"
    )))
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
        // A direct call names its callee in the first operand that is not a parenthesised list.
        let dead_end = base == "trap"
            || (base == "call"
                && texts
                    .iter()
                    .find(|t| !t.starts_with('('))
                    .is_some_and(|callee| self.trapping.contains(callee.as_str())));
        self.insts.push(Inst {
            line,
            text: stmt.split_whitespace().collect::<Vec<_>>().join(" "),
            guard,
            op,
            operands,
            dests,
            block: 0,
            dead_end,
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
}
