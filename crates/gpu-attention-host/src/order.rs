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

use gpu_attention_plan::Problem;
use gpu_attention_plan::abi::KernelSpec;
use gpu_attention_plan::mask::key_blocks;
use gpu_attention_plan::schedule::{Unit, Units};

/// The units of `problem` (a variable-length batch) for `spec`, in its table's order.
pub(crate) fn table_order(problem: &Problem<'_>, spec: KernelSpec) -> Vec<Unit> {
    let units = Units::new(problem, spec.unit_rows());
    let mut order: Vec<(u32, Unit)> = (0..units.count())
        .map(|u| {
            let unit = units.get(u);
            let (_, len_q) = problem.batches.queries(unit.sequence);
            let (_, len_k) = problem.batches.keys(unit.sequence);
            let (blocks, _) = key_blocks(
                problem.mask,
                (len_q, len_k),
                unit.m_block,
                (spec.unit_rows(), spec.block_n),
            );
            (blocks, unit)
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

    fn blocks(problem: &Problem<'_>, spec: KernelSpec, unit: Unit) -> u32 {
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

    /// Every unit once, the most key blocks first, equal ones in the plan's order; causal or
    /// not, on every row's tile (128 and 192 query rows).
    #[test]
    fn the_longest_units_come_first_and_none_is_lost() {
        let offsets_q = [0, 700, 1212, 4300, 4301, 6000];
        let offsets_k = [0, 700, 1500, 4588, 4590, 6289];
        for mask in [Mask::None, Mask::Causal] {
            let problem = Problem::varlen(&offsets_q, &offsets_k, (8, 2), 64).with_mask(mask);
            for spec in KERNELS.iter().filter(|k| k.head_dim == 64) {
                let order = table_order(&problem, *spec);
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
                        blocks(&problem, *spec, pair[0]),
                        blocks(&problem, *spec, pair[1]),
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
}
