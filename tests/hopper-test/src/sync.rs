//! The synchronisation cases: `griddepcontrol` under programmatic dependent launch (and without
//! it), named barriers as producer/consumer signals over many rounds, and the ordered-sequence
//! barrier's turn order on real mbarriers, and the named turns' order on named barriers.

use pipeline_harness::cuda::Gpu;

use crate::device::{address, arg, download, finish, launch_dependent, run, upload};
use crate::layout::{
    NAMED_BUFFER_WORDS, NAMED_OUT_WORDS, NAMED_SMEM_BYTES, PDL_THREADS, PDL_WORDS_PER_THREAD,
    SEQUENCE_DEPTH, SEQUENCE_SMEM_BYTES, TURNS_SMEM_BYTES, WARP, WARPGROUP, named_value, pdl_value,
    sequence_decode,
};
use crate::{Case, Seed};

/// Blocks of the griddepcontrol kernels (few: the secondary's blocks must find room on the GPU
/// beside the primary's to start early).
const PDL_BLOCKS: u32 = 8;
/// How long the primary waits after `launch_dependents` before it writes.
const PDL_DELAY_NS: u32 = 200_000;

/// The primary, then the secondary with programmatic stream serialization if `programmatic`;
/// the secondary's words after `griddepcontrol_wait` must all be the primary's.
fn griddepcontrol(gpu: &Gpu, seed: &mut Seed, programmatic: bool) -> Result<String, String> {
    let words = (PDL_BLOCKS * PDL_THREADS * PDL_WORDS_PER_THREAD) as usize;
    let threads = (PDL_BLOCKS * PDL_THREADS) as usize;
    let s = seed.word();
    let data = upload(gpu, &vec![0; words])?;
    let out = upload(gpu, &vec![0; words])?;
    let early = upload(gpu, &vec![u32::MAX; threads])?;
    let (mut pd, mut po, mut pe) = (
        address(gpu, &data),
        address(gpu, &out),
        address(gpu, &early),
    );
    let (mut s1, mut s2, mut delay) = (s, s, PDL_DELAY_NS);
    launch_dependent(
        gpu,
        "pdl_primary",
        PDL_BLOCKS,
        PDL_THREADS,
        false,
        &mut [arg(&mut pd), arg(&mut s1), arg(&mut delay)],
    )?;
    launch_dependent(
        gpu,
        "pdl_secondary",
        PDL_BLOCKS,
        PDL_THREADS,
        programmatic,
        &mut [arg(&mut pd), arg(&mut po), arg(&mut pe), arg(&mut s2)],
    )?;
    finish(gpu, "pdl_primary, pdl_secondary")?;
    let got = download(gpu, &out, words)?;
    let seen_early: u32 = download(gpu, &early, threads)?.iter().sum();
    let wrong: Vec<usize> = (0..words)
        .filter(|&i| got[i] != pdl_value(s, i as u32))
        .collect();
    let launch = if programmatic {
        "with programmatic stream serialization"
    } else {
        "in stream order (no attribute: the wait returns at once)"
    };
    let what = format!(
        "secondary {launch}: its {words} words after griddepcontrol_wait against the primary's; before the wait it saw {seen_early} of them written (information: {})",
        if seen_early == words as u32 {
            "no overlap observed"
        } else {
            "it started before the primary finished"
        }
    );
    match wrong.first() {
        None => Ok(format!("{what}; all exact")),
        Some(&i) => Err(format!(
            "{what}: {} words wrong; first {i}: {:#x} expected {:#x}",
            wrong.len(),
            got[i],
            pdl_value(s, i as u32)
        )),
    }
}

/// Blocks and rounds of the named-barrier cases.
const NAMED_BLOCKS: u32 = 8;
const NAMED_ROUNDS: u32 = 4000;

/// A named-barrier case: every consumer thread must have seen every word of every round.
fn named(
    gpu: &Gpu,
    seed: &mut Seed,
    entry: &str,
    producer_warps: u32,
    consumer_warps: u32,
) -> Result<String, String> {
    let consumers = consumer_warps * WARP;
    let threads = (NAMED_BLOCKS * consumers) as usize;
    let s = seed.word();
    let out = upload(gpu, &vec![u32::MAX; threads * NAMED_OUT_WORDS as usize])?;
    let (mut po, mut rounds, mut s1) = (address(gpu, &out), NAMED_ROUNDS, s);
    run(
        gpu,
        entry,
        NAMED_BLOCKS,
        (producer_warps + consumer_warps) * WARP,
        NAMED_SMEM_BYTES,
        &mut [arg(&mut po), arg(&mut rounds), arg(&mut s1)],
    )?;
    let got = download(gpu, &out, threads * NAMED_OUT_WORDS as usize)?;
    let mut wrong = Vec::new();
    for block in 0..NAMED_BLOCKS {
        for c in 0..consumers {
            let mut sum = 0u32;
            for round in 0..NAMED_ROUNDS {
                let mut w = c;
                while w < NAMED_BUFFER_WORDS {
                    sum = sum.wrapping_add(named_value(s, block, round, w));
                    w += consumers;
                }
            }
            let at = ((block * consumers + c) * NAMED_OUT_WORDS) as usize;
            if got[at] != 0 || got[at + 1] != sum {
                wrong.push(format!(
                    "block {block} consumer thread {c}: {} wrong words, sum {:#x} expected {sum:#x}",
                    got[at],
                    got[at + 1]
                ));
            }
        }
    }
    let what = format!(
        "{producer_warps} producer warp(s) arrive, {consumer_warps} consumer warps sync, {NAMED_ROUNDS} rounds of {NAMED_BUFFER_WORDS} words in {NAMED_BLOCKS} blocks: every word checked on the device, each consumer thread's sum against the host"
    );
    if wrong.is_empty() {
        Ok(format!("{what}; all exact"))
    } else {
        Err(format!(
            "{what}: {} consumer threads wrong; {}",
            wrong.len(),
            wrong[..wrong.len().min(3)].join("; ")
        ))
    }
}

/// Blocks and turns of the ordered-sequence cases.
const SEQUENCE_BLOCKS: u32 = 4;
const SEQUENCE_TURNS: u32 = 256;

/// Checks one block's log as the host-model tests of `gpu_hopper::sequence` do: on each ring,
/// the i-th entry is group `i % groups`'s turn `ring + DEPTH * (i / groups)`; and each group's
/// own turns come in order.
fn check_log(log: &[u32], groups: u32, turns: u32) -> Result<(), String> {
    let depth = SEQUENCE_DEPTH as u32;
    let entries: Vec<(u32, u32)> = log.iter().map(|&e| sequence_decode(e)).collect();
    if let Some(bad) = entries.iter().find(|&&(g, t)| g >= groups || t >= turns) {
        return Err(format!("an entry that no turn writes: {bad:?}"));
    }
    for ring in 0..depth {
        let order: Vec<(u32, u32)> = entries
            .iter()
            .copied()
            .filter(|&(_, t)| t % depth == ring)
            .collect();
        for (i, &(group, turn)) in order.iter().enumerate() {
            let i = i as u32;
            let want = (i % groups, ring + depth * (i / groups));
            if (group, turn) != want {
                return Err(format!(
                    "ring {ring}, entry {i}: (group {group}, turn {turn}), expected (group {}, turn {})",
                    want.0, want.1
                ));
            }
        }
        let expected = groups * (turns / depth + u32::from(ring < turns % depth));
        if order.len() as u32 != expected {
            return Err(format!(
                "ring {ring} has {} entries, expected {expected}",
                order.len()
            ));
        }
    }
    for group in 0..groups {
        let mine: Vec<u32> = entries
            .iter()
            .filter(|&&(g, _)| g == group)
            .map(|&(_, t)| t)
            .collect();
        if mine != (0..turns).collect::<Vec<_>>() {
            return Err(format!("group {group}'s turns are not 0..{turns} in order"));
        }
    }
    Ok(())
}

/// An ordered-sequence case.
fn sequence(gpu: &Gpu, entry: &str, groups: u32) -> Result<String, String> {
    let what = format!(
        "{groups} warpgroups, {SEQUENCE_DEPTH} rings, {SEQUENCE_TURNS} turns each, {SEQUENCE_BLOCKS} blocks: each block's log of (group, turn) in the per-ring order"
    );
    logged_turns(gpu, entry, groups, SEQUENCE_SMEM_BYTES, &what, check_log)
}

/// Runs a case whose blocks of `groups` warpgroups take `SEQUENCE_TURNS` turns each and log
/// them (`log, counters, turns`), and checks each block's count and its log with `check`.
fn logged_turns(
    gpu: &Gpu,
    entry: &str,
    groups: u32,
    smem: u32,
    what: &str,
    check: fn(&[u32], u32, u32) -> Result<(), String>,
) -> Result<String, String> {
    let per_block = (groups * SEQUENCE_TURNS) as usize;
    let log = upload(gpu, &vec![u32::MAX; SEQUENCE_BLOCKS as usize * per_block])?;
    let counters = upload(gpu, &vec![0; SEQUENCE_BLOCKS as usize])?;
    let (mut pl, mut pc, mut turns) = (address(gpu, &log), address(gpu, &counters), SEQUENCE_TURNS);
    run(
        gpu,
        entry,
        SEQUENCE_BLOCKS,
        groups * WARPGROUP,
        smem,
        &mut [arg(&mut pl), arg(&mut pc), arg(&mut turns)],
    )?;
    let log = download(gpu, &log, SEQUENCE_BLOCKS as usize * per_block)?;
    let counters = download(gpu, &counters, SEQUENCE_BLOCKS as usize)?;
    for block in 0..SEQUENCE_BLOCKS as usize {
        if counters[block] as usize != per_block {
            return Err(format!(
                "{what}: block {block} counted {} turns, expected {per_block}",
                counters[block]
            ));
        }
        check(
            &log[block * per_block..][..per_block],
            groups,
            SEQUENCE_TURNS,
        )
        .map_err(|e| format!("{what}: block {block}: {e}"))?;
    }
    Ok(format!("{what}; all exact"))
}

/// Checks one block's log of the named turns: the i-th entry is group `i % groups`'s turn
/// `i / groups`, and there are `groups * turns` of them.
fn check_turns(log: &[u32], groups: u32, turns: u32) -> Result<(), String> {
    if log.len() as u32 != groups * turns {
        return Err(format!(
            "{} entries, expected {}",
            log.len(),
            groups * turns
        ));
    }
    for (i, &e) in log.iter().enumerate() {
        let i = i as u32;
        let (got, want) = (sequence_decode(e), (i % groups, i / groups));
        if got != want {
            return Err(format!(
                "entry {i}: (group {}, turn {}), expected (group {}, turn {})",
                got.0, got.1, want.0, want.1
            ));
        }
    }
    Ok(())
}

/// A named-turns case.
fn named_turns(gpu: &Gpu, entry: &str, groups: u32) -> Result<String, String> {
    let what = format!(
        "{groups} warpgroups on named barriers, {SEQUENCE_TURNS} turns each, {SEQUENCE_BLOCKS} blocks: each block's log of (group, turn) in turn order"
    );
    logged_turns(gpu, entry, groups, TURNS_SMEM_BYTES, &what, check_turns)
}

/// The synchronisation cases.
pub fn cases() -> Vec<Case> {
    let mut cases = vec![
        Case {
            name: "griddepcontrol programmatic".into(),
            run: Box::new(|gpu, seed| griddepcontrol(gpu, seed, true)),
        },
        Case {
            name: "griddepcontrol stream order".into(),
            run: Box::new(|gpu, seed| griddepcontrol(gpu, seed, false)),
        },
    ];
    macro_rules! named_case {
        ($name:ident, $p:literal, $c:literal) => {
            cases.push(Case {
                name: stringify!($name).into(),
                run: Box::new(|gpu, seed| named(gpu, seed, stringify!($name), $p, $c)),
            });
        };
    }
    named_barrier_cases!(named_case);
    macro_rules! sequence_case {
        ($name:ident, $groups:literal) => {
            cases.push(Case {
                name: stringify!($name).into(),
                run: Box::new(|gpu, _| sequence(gpu, stringify!($name), $groups)),
            });
        };
    }
    sequence_cases!(sequence_case);
    macro_rules! named_turns_case {
        ($name:ident, $groups:literal) => {
            cases.push(Case {
                name: stringify!($name).into(),
                run: Box::new(|gpu, _| named_turns(gpu, stringify!($name), $groups)),
            });
        };
    }
    named_turns_cases!(named_turns_case);
    cases
}

#[cfg(test)]
mod tests {
    use super::{check_log, check_turns};
    use crate::layout::sequence_entry;

    /// A log whose rings are each in order, but ring 1 wholly before ring 0: impossible, since
    /// a group takes its turns one after the other (its turn 1 after its turn 0).
    fn rings_apart(groups: u32, turns: u32) -> Vec<u32> {
        let mut log = Vec::new();
        for ring in [1u32, 0] {
            let mut t = ring;
            while t < turns {
                for g in 0..groups {
                    log.push(sequence_entry(g, t));
                }
                t += 2;
            }
        }
        log
    }

    #[test]
    fn the_log_check_takes_a_correct_order_and_rejects_a_swap() {
        assert!(check_log(&rings_apart(3, 8), 3, 8).is_err());
        let mut in_order = Vec::new();
        for t in 0..8u32 {
            for g in 0..3 {
                in_order.push(sequence_entry(g, t));
            }
        }
        check_log(&in_order, 3, 8).unwrap();
        let mut swapped = in_order.clone();
        swapped.swap(0, 1);
        assert!(check_log(&swapped, 3, 8).is_err());
        let mut lost = in_order.clone();
        lost[5] = u32::MAX;
        assert!(check_log(&lost, 3, 8).is_err());
    }

    #[test]
    fn the_turns_check_takes_the_one_order_only() {
        let in_order: Vec<u32> = (0..8u32)
            .flat_map(|t| (0..3).map(move |g| sequence_entry(g, t)))
            .collect();
        check_turns(&in_order, 3, 8).unwrap();
        // Two rings' order (a valid ordered sequence of depth 2) is not the turns' order.
        assert!(check_turns(&rings_apart(3, 8), 3, 8).is_err());
        let mut swapped = in_order.clone();
        swapped.swap(3, 4);
        assert!(check_turns(&swapped, 3, 8).is_err());
        assert!(check_turns(&in_order[1..], 3, 8).is_err());
    }
}
