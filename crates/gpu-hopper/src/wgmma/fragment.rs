//! Where each thread's registers sit in a warpgroup's tiles (PTX ISA, "Asynchronous Warpgroup
//! Level Matrix Multiply-Accumulate Instructions: Register Fragments": "Matrix D" and
//! "Matrix A" of the `m64nNk16` and `m64nNk32` shapes). Pure functions, host-tested.
//!
//! Thread `t` of the warpgroup (0..128) is lane `l = t % 32` of warp `w = t / 32`; warp `w`
//! owns rows `16 w .. 16 w + 16` of the 64-row tiles. Within them, lane `l` is in row group
//! `g = l / 4` and column pair `l % 4`:
//!
//! ```text
//! D (64 x N, f32), accumulator i in 0..N/2:
//!     row = 16 w + g + 8 ((i / 2) % 2)
//!     col = 8 (i / 4) + 2 (l % 4) + i % 2
//! A from registers, register r in 0..4, element e of the register:
//!     16-bit (K = 16, two per register):  row = 16 w + g + 8 (r % 2),  col = 8 (r / 2) + 2 (l % 4) + e
//!      8-bit (K = 32, four per register): row = 16 w + g + 8 (r % 2),  col = 16 (r / 2) + 4 (l % 4) + e
//! ```
//!
//! So accumulators `i` and `i + 1` (even `i`) are neighbours in a row, and the D of one
//! warpgroup, converted to 16 bits two at a time, is the A fragment of the next product (the
//! attention kernel's P V): accumulators `8 j .. 8 j + 8` of D hold the A registers of K-step
//! `j` (16 columns of D, one k16 step).

/// The (row, column) of accumulator `i` (in `0..N / 2`) of warpgroup thread `thread` (in
/// `0..128`) in the 64 x N tile of D.
#[must_use]
pub const fn accumulator(thread: u32, i: u32) -> (u32, u32) {
    let (w, l) = (thread / 32, thread % 32);
    let row = 16 * w + l / 4 + 8 * ((i / 2) % 2);
    let col = 8 * (i / 4) + 2 * (l % 4) + i % 2;
    (row, col)
}

/// The (row, column) in the 64 x 16 tile of A of element `e` (0 low half, 1 high half) of
/// register `r` (in `0..4`) of thread `thread`, for 16-bit inputs (bf16, f16) in [`MmaRs`](super::MmaRs).
#[must_use]
pub const fn a_16bit(thread: u32, r: u32, e: u32) -> (u32, u32) {
    let (w, l) = (thread / 32, thread % 32);
    (16 * w + l / 4 + 8 * (r % 2), 8 * (r / 2) + 2 * (l % 4) + e)
}

/// The (row, column) in the 64 x 32 tile of A of byte `e` (0 lowest) of register `r` (in
/// `0..4`) of thread `thread`, for 8-bit inputs (e4m3, e5m2) in [`MmaRs`](super::MmaRs).
#[must_use]
pub const fn a_8bit(thread: u32, r: u32, e: u32) -> (u32, u32) {
    let (w, l) = (thread / 32, thread % 32);
    (16 * w + l / 4 + 8 * (r % 2), 16 * (r / 2) + 4 * (l % 4) + e)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// Every element of a `rows x cols` tile is held exactly once by the 128 threads.
    fn covers(rows: u32, cols: u32, per_thread: u32, at: impl Fn(u32, u32) -> (u32, u32)) {
        let mut seen = BTreeSet::new();
        for t in 0..128 {
            for k in 0..per_thread {
                let (r, c) = at(t, k);
                assert!(r < rows && c < cols, "thread {t}, element {k}: ({r}, {c})");
                assert!(seen.insert((r, c)), "({r}, {c}) held twice");
            }
        }
        assert_eq!(seen.len() as u32, rows * cols);
    }

    #[test]
    fn accumulators_cover_the_tile_for_every_n() {
        for n in [8, 16, 24, 32, 40, 48, 64, 80, 96, 128, 176, 192, 256] {
            covers(64, n, n / 2, accumulator);
        }
    }

    #[test]
    fn accumulators_of_known_threads() {
        // Thread 0: rows 0 and 8, columns 0, 1, then 8, 9, ...
        assert_eq!(accumulator(0, 0), (0, 0));
        assert_eq!(accumulator(0, 1), (0, 1));
        assert_eq!(accumulator(0, 2), (8, 0));
        assert_eq!(accumulator(0, 3), (8, 1));
        assert_eq!(accumulator(0, 4), (0, 8));
        // Lane 5 of warp 2: row group 1, column pair 1.
        assert_eq!(accumulator(69, 0), (33, 2));
        assert_eq!(accumulator(69, 127), (41, 251));
    }

    #[test]
    fn a_fragments_cover_their_tiles() {
        covers(64, 16, 8, |t, k| a_16bit(t, k / 2, k % 2));
        covers(64, 32, 16, |t, k| a_8bit(t, k / 4, k % 4));
    }

    /// D of one product, two accumulators per register, is A of the next: accumulators
    /// `8 j + 2 r`, `8 j + 2 r + 1` sit where register `r` of K-step `j` does.
    #[test]
    fn d_converts_to_the_next_a() {
        for t in 0..128 {
            for j in 0..4 {
                for r in 0..4 {
                    for e in 0..2 {
                        let (row, col) = accumulator(t, 8 * j + 2 * r + e);
                        let (a_row, a_col) = a_16bit(t, r, e);
                        assert_eq!(
                            (row, col),
                            (a_row, a_col + 16 * j),
                            "thread {t}, step {j}, register {r}"
                        );
                    }
                }
            }
        }
    }
}
