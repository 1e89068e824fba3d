//! The order of a variable-length batch's unit table: the units with the most key blocks first,
//! across the batch's sequences.
//!
//! A fixed batch's units are arithmetic on the launch's parameters, in the plan's order
//! (`gpu_attention_plan::schedule`: causal, the longest query blocks first). A variable-length
//! batch's come from the table the host uploads, in the table's order; the plan's `Units` lists
//! them sequence by sequence, so a causal batch of sequences of 512 to 4096 tokens would start
//! each sequence's longest blocks only after the sequences before it, and leave long units for
//! the last wave. Sorted by their key blocks, most first (stably: units of equal length keep the
//! plan's order, the query heads of a block side by side), the persistent CTAs' alternating
//! rounds (`Assignment`) pair each round's longest units with the next round's shortest, as for
//! a fixed batch. The kernels read each record whole, so the order changes which CTA computes a
//! unit and when, never what it computes.

//!
//! A causal batch's table is [`folded`] instead where the fixed batches' rule would fold it
//! ([`folds`]): each sequence's query heads' longest query blocks paired with their shortest,
//! head by head as `Units::folded` lists a fixed batch's, so that the CTAs running at once read
//! a few heads' keys from L2 (run 104, an H100, the benchmark's causal varlen row against the
//! longest-first table in alternating processes: 443 and 446 TFLOP/s against 396 and 398,
//! +12 %). The `varlen_longest_first` feature (a measurement) keeps the longest-first table.

use gpu_attention_plan::abi::KernelSpec;
use gpu_attention_plan::mask::key_blocks;
use gpu_attention_plan::schedule::{Unit, Units, fold_rule, folded_place};
use gpu_attention_plan::{Mask, Problem};

/// The units of `problem` (a variable-length batch) for `spec`, in its table's order, for a grid
/// of `grid` CTAs.
pub(crate) fn table_order(problem: &Problem<'_>, spec: KernelSpec, grid: u64) -> Vec<Unit> {
    if !cfg!(feature = "varlen_longest_first") && folds(problem, spec, grid) {
        return folded(problem, spec, grid);
    }
    longest_first(problem, spec)
}

/// The key blocks `unit` of `problem` reads in `spec`'s blocks.
fn blocks_of(problem: &Problem<'_>, spec: KernelSpec, unit: Unit) -> u32 {
    let (_, len_q) = problem.batches.queries(unit.sequence);
    let (_, len_k) = problem.batches.keys(unit.sequence);
    key_blocks(
        problem.mask,
        (len_q, len_k),
        unit.m_block,
        (spec.unit_rows(), spec.block_n),
    )
    .0
}

/// Whether the folded table suits `problem` on `grid` CTAs, by the fixed batches' rule
/// (`Units::folds`): causal, units of at most 128 rows, fewer than eight units of each
/// sequence's head in a longest-first round, at least four rounds of units.
pub(crate) fn folds(problem: &Problem<'_>, spec: KernelSpec, grid: u64) -> bool {
    let heads = u64::from(problem.batches.count()) * u64::from(problem.heads_q);
    let count = Units::new(problem, spec.unit_rows()).count();
    fold_rule(
        problem.mask == Mask::Causal,
        spec.unit_rows(),
        heads,
        count,
        grid,
    )
}

/// The folded table for `grid` CTAs taking it in alternating rounds: per sequence and query
/// head, query blocks `n - 1` and 0, `n - 2` and 1, .. as pairs (an odd `n`'s middle blocks paired
/// across heads, one left over alone at the end where their count is odd), the sequences' pairs
/// in the order of the sequences' longest units, most key blocks first (a sequence's pairs
/// together, head by head, its middle blocks' last), laid out by `folded_place`: a CTA takes a
/// pair's two units in two consecutive rounds.
pub(crate) fn folded(problem: &Problem<'_>, spec: KernelSpec, grid: u64) -> Vec<Unit> {
    let mut pairs: Vec<[Unit; 2]> = Vec::new();
    let mut middles: Vec<Unit> = Vec::new();
    for sequence in 0..problem.batches.count() {
        let n = problem
            .batches
            .queries(sequence)
            .1
            .div_ceil(spec.unit_rows());
        for head in 0..problem.heads_q {
            let unit = |m_block| Unit {
                sequence,
                head,
                m_block,
            };
            for i in 0..n / 2 {
                pairs.push([unit(n - 1 - i), unit(i)]);
            }
            if n % 2 == 1 {
                middles.push(unit(n / 2));
            }
        }
    }
    let (two, rest) = middles.as_chunks::<2>();
    pairs.extend_from_slice(two);
    let single = rest.first().copied();
    // A sequence's longest unit: its last query block's key blocks.
    let longest = |sequence: u32| {
        let n = problem
            .batches
            .queries(sequence)
            .1
            .div_ceil(spec.unit_rows());
        let unit = Unit {
            sequence,
            head: 0,
            m_block: n.saturating_sub(1),
        };
        blocks_of(problem, spec, unit)
    };
    pairs.sort_by_cached_key(|p| (std::cmp::Reverse(longest(p[0].sequence)), p[0].sequence));
    let list: Vec<Unit> = pairs.into_iter().flatten().chain(single).collect();
    let count = list.len() as u64;
    (0..count)
        .map(|x| list[folded_place(x, count, grid) as usize])
        .collect()
}

/// The units with the most key blocks first (stably: equal lengths keep the plan's order).
fn longest_first(problem: &Problem<'_>, spec: KernelSpec) -> Vec<Unit> {
    let units = Units::new(problem, spec.unit_rows());
    let mut order: Vec<(u32, Unit)> = (0..units.count())
        .map(|u| {
            let unit = units.get(u);
            (blocks_of(problem, spec, unit), unit)
        })
        .collect();
    // Stable: equal lengths keep the plan's order.
    order.sort_by_key(|&(blocks, _)| std::cmp::Reverse(blocks));
    order.into_iter().map(|(_, unit)| unit).collect()
}

#[cfg(test)]
mod tests {
    use gpu_attention_plan::Mask;
    use gpu_attention_plan::abi::KERNELS;

    use super::*;

    /// Every unit once, the most key blocks first, equal ones in the plan's order; causal or
    /// not, on every row's tile (128 and 192 query rows).
    #[test]
    fn the_longest_units_come_first_and_none_is_lost() {
        let offsets_q = [0, 700, 1212, 4300, 4301, 6000];
        let offsets_k = [0, 700, 1500, 4588, 4590, 6289];
        for mask in [Mask::None, Mask::Causal] {
            let problem = Problem::varlen(&offsets_q, &offsets_k, (8, 2), 64).with_mask(mask);
            for spec in KERNELS.iter().filter(|k| k.head_dim == 64) {
                let order = longest_first(&problem, *spec);
                if cfg!(feature = "varlen_longest_first") || mask == Mask::None {
                    assert_eq!(table_order(&problem, *spec, 132), order);
                }
                let units = Units::new(&problem, spec.unit_rows());
                let plan: Vec<Unit> = (0..units.count()).map(|u| units.get(u)).collect();
                assert_eq!(order.len(), plan.len());
                let mut sorted_order = order.clone();
                let mut sorted_plan = plan.clone();
                let key = |u: &Unit| (u.sequence, u.head, u.m_block);
                sorted_order.sort_by_key(key);
                sorted_plan.sort_by_key(key);
                assert_eq!(
                    sorted_order, sorted_plan,
                    "a permutation of the plan's units"
                );
                for pair in order.windows(2) {
                    let (a, b) = (
                        blocks_of(&problem, *spec, pair[0]),
                        blocks_of(&problem, *spec, pair[1]),
                    );
                    assert!(a >= b, "{mask:?} {}: {pair:?}", spec.entry);
                    if a == b {
                        let at = |u: Unit| plan.iter().position(|&p| p == u).unwrap();
                        assert!(at(pair[0]) < at(pair[1]), "ties keep the plan's order");
                    }
                }
                // Causal: the first unit is the last query block of the longest sequence (3088
                // queries over 3088 keys, sequence 2).
                if mask == Mask::Causal {
                    assert_eq!(order[0].sequence, 2, "{}", spec.entry);
                }
            }
        }
    }

    /// attention-test's varlen case that the host folds (its last): it does fold on the grids
    /// of the GPUs it runs on (132 SMs; 114 for a smaller Hopper), on the plan's row for it, and
    /// the table is a permutation of the plan's units.
    #[test]
    fn the_attention_tests_folding_varlen_case_folds() {
        let lens = [(300u32, 300u32), (129, 129), (257, 200)];
        let (mut oq, mut ok) = (vec![0u32], vec![0u32]);
        for (q, k) in lens {
            oq.push(oq.last().unwrap() + q);
            ok.push(ok.last().unwrap() + k);
        }
        let problem = Problem::varlen(&oq, &ok, (177, 3), 64).with_mask(Mask::Causal);
        let spec = gpu_attention_plan::abi::kernel(
            gpu_attention_plan::Element::Bf16,
            64,
            300,
            true,
            false,
        )
        .expect("a row");
        assert_eq!(spec.unit_rows(), 128);
        for grid in [132u64, 114] {
            assert!(folds(&problem, spec, grid), "grid {grid}");
            let table = table_order(&problem, spec, grid);
            if !cfg!(feature = "varlen_longest_first") {
                assert_eq!(table, folded(&problem, spec, grid));
            }
            assert_eq!(table.len(), 177 * (3 + 2 + 3));
        }
    }

    /// The folded table: every unit once, and each CTA of the grid given a sequence's head's
    /// long and short blocks (or two middle blocks) in two consecutive rounds while whole rounds
    /// last; the sequences' pairs together, the sequences by their longest units.
    #[test]
    fn the_folded_table_gives_a_cta_both_units_of_a_pair() {
        // Sequences of 1838, 1129, 2129, 3178, 709, 808, 3875, 2706 and 12 tokens (the
        // benchmark's varlen row), 16 heads, 128 rows a unit.
        let lens = [1838u32, 1129, 2129, 3178, 709, 808, 3875, 2706, 12];
        let mut offsets = vec![0u32];
        for l in lens {
            offsets.push(offsets.last().unwrap() + l);
        }
        let problem = Problem::varlen(&offsets, &offsets, (16, 16), 128).with_mask(Mask::Causal);
        let spec = *KERNELS
            .iter()
            .find(|k| k.head_dim == 128 && k.block_n == 192 && k.cluster == 1 && k.planned)
            .unwrap();
        for grid in [132u64, 114, 7] {
            assert!(folds(&problem, spec, grid));
            let table = folded(&problem, spec, grid);
            let units = Units::new(&problem, spec.unit_rows());
            let mut seen: Vec<Unit> = table.clone();
            let key = |u: &Unit| (u.sequence, u.head, u.m_block);
            seen.sort_by_key(key);
            let mut plan: Vec<Unit> = (0..units.count()).map(|u| units.get(u)).collect();
            plan.sort_by_key(key);
            assert_eq!(seen, plan, "a permutation of the plan's units");
            let count = table.len() as u64;
            let whole = count / (2 * grid);
            let n = |u: Unit| lens[u.sequence as usize].div_ceil(128);
            for cta in 0..grid {
                let mine: Vec<Unit> =
                    gpu_attention_plan::schedule::Assignment::new(cta, grid, count, true)
                        .map(|x| table[x as usize])
                        .collect();
                for pair in mine[..2 * whole as usize].chunks(2) {
                    let (a, b) = (pair[0], pair[1]);
                    let same_head = (a.sequence, a.head) == (b.sequence, b.head);
                    assert!(
                        (same_head && a.m_block + b.m_block + 1 == n(a))
                            || (a.m_block == n(a) / 2 && b.m_block == n(b) / 2),
                        "grid {grid}, cta {cta}: {pair:?}"
                    );
                }
            }
            // The list the table lays out (`table[x]` is its unit `folded_place(x)`): a
            // sequence's pairs come together, the sequences by their longest units, most key
            // blocks first (the one unit left over, if any, last).
            let mut list = vec![table[0]; table.len()];
            for (x, &unit) in table.iter().enumerate() {
                list[folded_place(x as u64, count, grid) as usize] = unit;
            }
            let mut runs: Vec<u32> = Vec::new();
            for pair in list.as_chunks::<2>().0 {
                if runs.last() != Some(&pair[0].sequence) {
                    runs.push(pair[0].sequence);
                }
            }
            let mut distinct = runs.clone();
            distinct.sort_unstable();
            distinct.dedup();
            assert_eq!(runs.len(), distinct.len(), "grid {grid}: {runs:?}");
            let longest = |s: u32| {
                let n = lens[s as usize].div_ceil(128);
                blocks_of(
                    &problem,
                    spec,
                    Unit {
                        sequence: s,
                        head: 0,
                        m_block: n - 1,
                    },
                )
            };
            assert!(
                runs.windows(2).all(|w| longest(w[0]) >= longest(w[1])),
                "{runs:?}"
            );
        }
        // Not causal, or too few heads: not folded.
        let plain = Problem::varlen(&offsets, &offsets, (16, 16), 128);
        assert!(!folds(&plain, spec, 132));
        let few =
            Problem::varlen(&offsets[..2], &offsets[..2], (1, 1), 128).with_mask(Mask::Causal);
        assert!(!folds(&few, spec, 132));
    }
}
