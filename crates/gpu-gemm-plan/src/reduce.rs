//! Where the cluster-K kernels add up their parts: which rows of a tile each part's CTA adds up
//! (its slice), and, for the kernels that push each part's rows to the CTA that adds them up
//! (the kernel crate's `ck_push` measurement module), where a pushed pair lands in that CTA's
//! staging buffers and how many bytes it receives. Pure index arithmetic, shared by the kernel
//! and its host tests.

use crate::{BM, STAGING_BYTES};

/// Row quads (four rows each) of a tile: the unit the slices are cut in.
pub const QUADS: u32 = BM / 4;

/// The row quads `q0..q1` of the tile that part `part` of `parts` adds up: the quads cut as
/// evenly as whole quads allow, in part order.
pub const fn slice(part: u32, parts: u32) -> (u32, u32) {
    (QUADS * part / parts, QUADS * (part + 1) / parts)
}

/// The part of `parts` whose [`slice()`] holds row `row` (below `BM`).
pub const fn owner(row: u32, parts: u32) -> u32 {
    let q = row / 4;
    // The largest p with QUADS p / parts <= q: (q parts + parts - 1) / QUADS, one less where
    // the slice bounds' rounding down puts q before it.
    let p = (q * parts + parts - 1) / QUADS;
    if slice(p, parts).0 > q { p - 1 } else { p }
}

/// Rows of the largest slice of `parts`: the rows one push slot holds.
pub const fn slot_rows(parts: u32) -> u32 {
    4 * QUADS.div_ceil(parts)
}

/// The f32 a pushing CTA of part `owner` receives for a tile `bn` wide: its slice's rows of every
/// other part's partial.
pub const fn pushed_floats(owner: u32, parts: u32, bn: u32) -> u32 {
    let (q0, q1) = slice(owner, parts);
    (parts - 1) * 4 * (q1 - q0) * bn
}

/// The f32 index, in the staging buffers of part `owner`'s CTA, of row `row`, column `col` of
/// part `from`'s partial (`from != owner`, `row` in the owner's slice): slot `from` (or `from - 1`
/// past the owner), each slot [`slot_rows`] rows of `bn` f32, row-major from the slice's first.
pub const fn pushed_at(row: u32, col: u32, from: u32, owner: u32, parts: u32, bn: u32) -> u32 {
    let slot = if from < owner { from } else { from - 1 };
    let r0 = 4 * slice(owner, parts).0;
    (slot * slot_rows(parts) + (row - r0)) * bn + col
}

/// Whether a pushing kernel's slots fit the two staging buffers for tiles `bn` wide and every
/// part count 2 to 8.
pub const fn pushes_fit(bn: u32) -> bool {
    let mut parts = 2;
    while parts <= 8 {
        if (parts - 1) * slot_rows(parts) * bn * 4 > 2 * STAGING_BYTES {
            return false;
        }
        parts += 1;
    }
    true
}

const _: () = assert!(
    pushes_fit(64),
    "a pushing kernel's slots fit the staging buffers"
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_slices_cut_every_quad_once_in_part_order() {
        for parts in 2..=8 {
            let mut next = 0;
            for p in 0..parts {
                let (q0, q1) = slice(p, parts);
                assert_eq!(
                    q0, next,
                    "{parts} parts: part {p} starts where the last ended"
                );
                assert!(
                    q1 > q0 && 4 * (q1 - q0) <= slot_rows(parts),
                    "{parts} parts, part {p}"
                );
                next = q1;
            }
            assert_eq!(next, QUADS, "{parts} parts cover the tile's rows");
        }
    }

    #[test]
    fn the_owner_of_a_row_is_the_part_whose_slice_holds_it() {
        for parts in 2..=8 {
            for row in 0..BM {
                let p = owner(row, parts);
                let (q0, q1) = slice(p, parts);
                assert!(
                    p < parts && (q0..q1).contains(&(row / 4)),
                    "{parts} parts, row {row}: part {p}"
                );
            }
        }
    }

    #[test]
    fn pushed_pairs_land_in_distinct_aligned_places_inside_the_slots() {
        for bn in [16, 32, 64] {
            assert!(pushes_fit(bn));
            for parts in 2..=8 {
                for owner_part in 0..parts {
                    let floats = pushed_floats(owner_part, parts, bn) as usize;
                    let room = ((parts - 1) * slot_rows(parts) * bn) as usize;
                    let mut seen = [false; 2 * STAGING_BYTES as usize / 4];
                    let mut count = 0;
                    for from in (0..parts).filter(|&f| f != owner_part) {
                        for row in (0..BM).filter(|&r| owner(r, parts) == owner_part) {
                            for col in (0..bn).step_by(2) {
                                let at = pushed_at(row, col, from, owner_part, parts, bn) as usize;
                                assert!(at % 2 == 0, "8-byte aligned pairs");
                                assert!(
                                    at + 1 < room,
                                    "{bn} wide, {parts} parts: inside the slots"
                                );
                                for x in [at, at + 1] {
                                    assert!(
                                        !seen[x],
                                        "{bn} wide, {parts} parts: one value a place"
                                    );
                                    seen[x] = true;
                                }
                                count += 2;
                            }
                        }
                    }
                    assert_eq!(
                        count, floats,
                        "{bn} wide, {parts} parts, part {owner_part}: the bytes expected"
                    );
                }
            }
        }
    }
}
