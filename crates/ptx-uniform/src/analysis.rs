//! The uniformity analysis: register values and block granularities to a common fixed point,
//! then every `.aligned` instruction judged against the group that must execute it.

use crate::abs::{Abs, UNIFORM, WARP, WARPGROUP};
use crate::cfg::ipdoms;
use crate::parse::{Function, Inst};
use crate::report::{EntryReport, Finding, Group, Why};
use crate::value::eval;

/// A conditional branch and the blocks control-dependent on it.
pub(crate) struct Branch {
    block: usize,
    inst: usize,
    region: Vec<usize>,
}

/// One instruction's effect on the registers, in a block of granularity `block`.
pub(crate) fn step(f: &Function, inst: &Inst, state: &mut [Abs], block: u8) {
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
pub(crate) fn flow(f: &Function, gran: &[u8]) -> Vec<Option<Vec<Abs>>> {
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
pub(crate) fn guards(f: &Function, ins: &[Option<Vec<Abs>>], gran: &[u8]) -> Vec<Option<u8>> {
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

/// The report of one entry: its counts and every `.aligned` instruction on a path less uniform
/// than it needs.
pub(crate) fn analyse(f: &Function) -> EntryReport {
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
        findings: Vec::new(),
    };
    for br in &branches {
        match guard[br.inst] {
            Some(p) if p < WARP => report.lane_divergent += 1,
            Some(p) if p < WARPGROUP => report.warp_divergent += 1,
            _ => {}
        }
    }
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
            Group::Warpgroup
        } else {
            Group::Warp
        };
        let why = if guard < block.min(need) {
            Why::Guard {
                register: f.regs[inst.guard.expect("guarded")].clone(),
            }
        } else {
            match cause[inst.block].map(|c| &f.insts[c]) {
                Some(c) => Why::ControlDependent {
                    line: c.line,
                    branch: c.text.clone(),
                    predicate: c.guard.map_or("?", |g| f.regs[g].as_str()).to_string(),
                },
                None => Why::DivergentPath,
            }
        };
        report.findings.push(Finding {
            line: inst.line,
            op: inst.op.clone(),
            group,
            why,
        });
    }
    report
}

/// The granularity an instruction must be executed at, if it is `.aligned`.
pub(crate) fn aligned_need(op: &str) -> Option<u8> {
    let parts: Vec<&str> = op.split('.').collect();
    match parts[0] {
        "wgmma" | "setmaxnreg" => Some(WARPGROUP),
        // `bar{.cta}.sync`/`.arrive`/`.red` are `barrier{.cta}.*.aligned`; `bar.warp.sync` is not.
        "bar" if parts.get(1) != Some(&"warp") => Some(WARP),
        _ if parts.contains(&"aligned") => Some(WARP),
        _ => None,
    }
}
