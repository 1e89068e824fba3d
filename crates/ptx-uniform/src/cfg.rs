//! The control-flow graph of an entry: basic blocks, their successors, post-dominators.

use std::collections::HashMap;

use crate::parse::{Block, Function, Parser, Result};
use crate::report::ParseError;

impl Parser<'_> {
    pub(crate) fn finish(mut self) -> Result<Function> {
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
                // A dead end has no successor: not even the exit (see `ipdoms`).
                Some(inst) if inst.dead_end => {
                    if inst.guard.is_some() {
                        succs.push(next);
                    }
                }
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
                            return Err(ParseError(format!(
                                "PTX entry `{}` line {}: indirect branches are not analysed",
                                self.name, inst.line
                            )));
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
pub(crate) struct Bits(Vec<u64>);

impl Bits {
    pub(crate) fn full(n: usize) -> Bits {
        Bits(vec![u64::MAX; n.div_ceil(64)])
    }
    pub(crate) fn empty(n: usize) -> Bits {
        Bits(vec![0; n.div_ceil(64)])
    }
    pub(crate) fn set(&mut self, i: usize) {
        self.0[i / 64] |= 1 << (i % 64);
    }
    pub(crate) fn has(&self, i: usize) -> bool {
        self.0[i / 64] & (1 << (i % 64)) != 0
    }
    pub(crate) fn and(&mut self, o: &Bits) {
        for (a, b) in self.0.iter_mut().zip(&o.0) {
            *a &= b;
        }
    }
    pub(crate) fn count(&self) -> u32 {
        self.0.iter().map(|w| w.count_ones()).sum()
    }
}

/// The immediate post-dominator of every block (`exit` = the virtual exit), on the CFG where a
/// block that can reach neither the exit nor a dead end (an endless loop) gets an edge to the exit
/// (more paths: fewer post-dominators, larger regions, a more conservative check).
///
/// A dead end (a block without successors: it ends in `trap`, or in a call of a function that
/// traps on every path) is post-dominated by every block. So a branch one side of which only
/// traps is post-dominated by its other side, and nothing after it is conditional on it. Sound
/// because `trap` ends the kernel, not the thread: "Abort execution and generate an interrupt to
/// the host CPU" (PTX ISA, "Miscellaneous Instructions: trap"). No thread waits at an `.aligned`
/// instruction for a lane that trapped; whatever the other lanes do next, they do in a grid that
/// is being torn down, with the error already raised. An `exit` (or `ret` from the entry) is not a
/// dead end: the kernel goes on without the thread, so code after a divergent `exit` stays
/// conditional on it.
pub(crate) fn ipdoms(succs: &[Vec<usize>]) -> Vec<usize> {
    let n = succs.len();
    let exit = n;
    let mut succs: Vec<Vec<usize>> = succs.to_vec();
    // Blocks reaching the exit or a dead end.
    let mut preds = vec![Vec::new(); n + 1];
    for (b, s) in succs.iter().enumerate() {
        for &t in s {
            preds[t].push(b);
        }
    }
    let mut reaches = vec![false; n + 1];
    let mut work: Vec<usize> = (0..n).filter(|&b| succs[b].is_empty()).collect();
    work.push(exit);
    for &b in &work {
        reaches[b] = true;
    }
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
