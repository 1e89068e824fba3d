//! The abstract value of a register (how uniform it is across the CTA's threads) and the value
//! each instruction writes.

use crate::abs::{Abs, UNIFORM, WARP, bits};
use crate::parse::{Atom, Function, Inst};

/// Trailing zeros of a 32-bit value (32 for zero).
pub(crate) fn tz(v: u32) -> u32 {
    v.trailing_zeros()
}

/// The abstract value an instruction writes (before its guard and block are accounted for).
pub(crate) fn eval(f: &Function, inst: &Inst, vals: &[Abs]) -> Abs {
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
pub(crate) const PURE: [&str; 50] = [
    "add", "sub", "mul", "mad", "mul24", "mad24", "sad", "div", "rem", "abs", "neg", "min", "max",
    "popc", "clz", "bfind", "fns", "brev", "bfe", "bfi", "dp4a", "dp2a", "and", "or", "xor", "not",
    "cnot", "lop3", "shf", "shl", "shr", "prmt", "testp", "copysign", "rcp", "sqrt", "rsqrt",
    "sin", "cos", "lg2", "ex2", "tanh", "fma", "setp", "set", "selp", "slct", "mov", "cvt", "cvta",
];

/// `setp` of `%tid.x + c` against an immediate: constant on aligned blocks of `%tid.x`.
pub(crate) fn setp(
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
pub(crate) fn load(f: &Function, inst: &Inst, parts: &[&str], address: Abs) -> Abs {
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

pub(crate) fn f_params(f: &Function, text: &str) -> bool {
    let name = text
        .trim_matches(|c| c == '[' || c == ']')
        .split('+')
        .next()
        .unwrap_or("")
        .trim();
    f.params.iter().any(|p| p == name)
}
