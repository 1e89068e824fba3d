//! A convergence check of PTX: no `.aligned` instruction of an `.entry` sits on a path that only
//! part of its warp (for `wgmma.*` and `setmaxnreg`: of its warpgroup) takes.
//!
//! ```
//! let ptx = "
//! .version 8.0
//! .target sm_90
//! .address_size 64
//! .visible .entry k()
//! {
//!     .reg .pred %p<2>;
//!     .reg .b32 %r<2>;
//!     mov.u32 %r1, %tid.x;
//!     setp.eq.s32 %p1, %r1, 0;
//!     @%p1 bra $L__BB0_2;
//!     bar.sync 0;
//! $L__BB0_2:
//!     ret;
//! }
//! ";
//! // Thread 0 skips the barrier, the rest of its warp does not: an error naming the branch.
//! let error = ptx_uniform::check(ptx).unwrap_err();
//! assert!(error.to_string().contains("`bar.sync` must be executed by the whole warp together"));
//! // The same module without the branch passes, with the counts of what was checked.
//! let fixed = ptx.replace("@%p1 bra", "// ");
//! let reports = ptx_uniform::check(&fixed).unwrap();
//! assert_eq!((reports[0].entry.as_str(), reports[0].aligned), ("k", 1));
//! ```
//!
//! # Why
//! Inline assembly is not `convergent` in LLVM's IR, so LLVM may move a `wgmma.mma_async` written
//! as `asm!` under lane-dependent control flow; and PTX makes every `.aligned` instruction
//! undefined "in conditionally executed code" unless "all threads in the warp [warpgroup, for
//! `wgmma`] evaluate the condition identically" (PTX ISA, "Parallel Synchronization and
//! Communication Instructions" (`bar`, `barrier`) and "Asynchronous Warpgroup Level Matrix
//! Multiply-Accumulate Instructions": `wgmma.mma_async`, `wgmma.fence`, `wgmma.commit_group`,
//! `wgmma.wait_group` are all `.sync.aligned`; `setmaxnreg.sync.aligned`, "Miscellaneous
//! Instructions"). Nothing in the toolchain reports such a slip: ptxas accepts it and the kernel
//! hangs or computes garbage.
//!
//! # What it proves
//! For every `.entry` of the module, under the assumptions below: every `.aligned` instruction
//! (and `bar.sync`/`bar.arrive`/`bar.red`, which are `barrier.*.aligned`) is reached only under
//! conditions that every thread of its warp evaluates identically, and `wgmma.*` and `setmaxnreg`
//! only under conditions that every thread of its warpgroup evaluates identically. That covers
//! branches, guards (`@%p wgmma...`), loops whose trip count differs between threads, values
//! chosen by a divergent branch (phis), and early `exit`/`ret` of part of a warp.
//!
//! A path that ends in `trap`, or in a call of a `.func` of the module every path of which ends in
//! `trap` (a checked build's failure report), is a dead end: it makes nothing after it
//! conditional, because `trap` aborts the kernel, not the thread ("Abort execution and generate
//! an interrupt to the host CPU", PTX ISA, "Miscellaneous Instructions: trap"). An `exit` is not:
//! the kernel goes on without the lane, and code after a divergent `exit` stays conditional.
//!
//! # What it does not prove
//! - Nothing about `.func` bodies: only `.entry` bodies are judged; a `.func` is read only to
//!   learn whether every path of it traps. Otherwise a `call` is opaque (its results are
//!   lane-varying) and an `.aligned` instruction inside a called `.func` is not checked. The
//!   `.noreturn` directive is not trusted (a function that exits or loops forever does not
//!   return either): only the body counts.
//! - Nothing about indirect branches: an entry with `brx.idx` is refused with an [`Error::Parse`]
//!   rather than analysed.
//! - Nothing about the non-`.aligned` `.sync` forms (`bar.warp.sync`, `shfl.sync`, `vote.sync`,
//!   `elect.sync`, ...): their member mask is the program's promise, not checked here.
//! - Nothing about barrier counts, mbarrier protocols, memory ordering, races or deadlock: the
//!   whole warp arriving together at a `bar.sync` does not mean every warp arrives.
//! - Nothing about the launch: the block shape is an assumption (below), not read from anywhere.
//! - Nothing about machine code: it reads PTX, before ptxas.
//! - It is conservative, so a finding may be a false alarm: an instruction it does not know makes
//!   its result lane-varying, and a value it cannot follow (`%tid.y`, a load of local memory,
//!   an atomic) is taken to differ between lanes.
//!
//! # The analysis, per `.entry`
//! 1. The body is parsed into instructions and labels (inline-assembly `{ }` scopes get their own
//!    registers), and cut into basic blocks: a label starts one, `bra`/`ret`/`exit`/`trap` and a
//!    call of a trapping function end one; a guarded `bra` has two successors. `ret` and `exit` go
//!    to a virtual exit; a trap has no successor (a dead end, post-dominated by every block).
//! 2. Every register gets an abstract value at the start of every block (a forward data flow
//!    over the CFG to a fixed point, joining the values of the incoming edges, so loops and
//!    LLVM's phi copies are covered): the *granularity* `k` of the value, meaning
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
//!    warpgroup (`k < 7`), is a [`Finding`] naming the instruction and the branch or guard.
//!
//! Sources of non-uniformity (seeds): `%tid.*`, `%laneid`, `%warpid`, `%lanemask_*`, `%clock*`,
//! `%globaltimer*`, `%smid` and every special register not known to be uniform; atomics; `shfl`,
//! `vote`, `match`, `redux`, `activemask`, `elect`; `ld.local` and generic `ld`; call results;
//! registers read before any write (on some path from the entry); and every instruction not known
//! to be pure arithmetic (conservative: an unknown instruction's results are lane-varying whatever
//! its inputs).
//!
//! Rules that make a value of `%tid.x` coarser (each is sound for `x = %tid.x + c mod 2^32` with a
//! known constant `c`, because an aligned block of `2^j` values, `j <= tz(c)`, stays an aligned
//! block after adding `c` and wrapping, and the operations below are constant on aligned blocks
//! of `2^j` values for the `j` given): `shr.{u,s,b}32 x, k` (`j = k`), `div.u32 x, n`
//! (`j = tz(n)`), `and.b32 x, m` (`j = tz(m)`), `bfe.{u,s}32 x, pos, len` (`j = pos`), and
//! `setp.{lt,ge,lo,hs}.{u,s}32 x, n` (`j = tz(n)`; `le,gt,ls,hi`: `j = tz(n + 1)`; a signed order
//! is contiguous on an aligned block too). `add`/`sub` of an immediate keep `%tid.x + c` exact.
//!
//! # Assumptions
//! - `%ntid.x` is a multiple of 128 (or a power of two dividing it), so that a warp (a
//!   warpgroup: four consecutive warps, the first a multiple of four) is a set of threads with
//!   one `%tid.y`/`%tid.z` whose `%tid.x` fill an aligned block of 32 (128).
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
//!
//! # Modules
//! `lex` (comments, labels, operands, literals), `parse` (entries into instructions and scoped
//! registers), `cfg` (basic blocks and post-dominators), `value` (the abstract values and what
//! each instruction writes), `analysis` (the fixed point and the judgement), `report` (what is
//! returned, and its text).

mod abs;
mod analysis;
mod cfg;
mod lex;
mod parse;
mod report;
mod value;

#[cfg(test)]
mod tests;

pub use abs::{WARP, WARPGROUP};
pub use report::{EntryReport, Error, Finding, Group, ParseError, Why, render};

/// Analyses every `.entry` of `ptx` and returns one report per entry, in the module's order, each
/// with its [`Finding`]s (empty where the entry is clean). Fails only where the module cannot be
/// analysed (an entry that does not parse, a branch to an unknown label, an indirect branch).
pub fn analyse(ptx: &str) -> Result<Vec<EntryReport>, ParseError> {
    Ok(parse::parse(ptx)?.iter().map(analysis::analyse).collect())
}

/// Checks every `.entry` of `ptx`: the reports of [`analyse`] where no entry has a finding, and
/// otherwise [`Error::Divergent`] with all the reports (its text has one line per finding).
pub fn check(ptx: &str) -> Result<Vec<EntryReport>, Error> {
    let reports = analyse(ptx)?;
    if reports.iter().any(|r| !r.findings.is_empty()) {
        return Err(Error::Divergent(reports));
    }
    Ok(reports)
}
