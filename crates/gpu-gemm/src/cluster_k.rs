//! Split-K inside a cluster (`Config::cluster_k`, the grid `Grid::ClusterK`): the CTAs of a
//! cluster compute the parts of K of one tile, each leaves its partial tile in its own shared
//! memory, and after a cluster barrier each adds up one slice of the tile's rows from every
//! CTA's partial (distributed shared memory: `ld.shared::cluster`) and writes that slice of D.
//!
//! Against the split-K of `split_k` (partials to a global workspace, a counter, and the CTA that
//! counts a tile's last split adding up every partial alone): no workspace and no counter, the
//! partials never leave the SMs, and the cluster's CTAs add up their slices side by side, where
//! the global reduction had one CTA read every other part's partial from L2 while the rest of the
//! grid had already exited.
//!
//! The sums run over the parts in rank order, `((p0 + p1) + p2) + ...`, the order of the global
//! split-K's reduction: a problem split in the same parts gives the same bits either way.
//!
//! The partial tile, 128 rows by `W::BN` columns of f32, lies in the staging buffers (the
//! transposing kernels stage nothing: their D leaves from registers) up to 64 columns, and in
//! the ring's first stages beyond (the 192-wide kernel: 96 KiB; the steps module's 128-wide
//! one: 64 KiB; the CTA's one unit has consumed every stage by then), column by column, a
//! column's 128 rows with their octets permuted by the column ([`at`]), so that a warp's stores
//! from the `wgmma` fragments hit 32 distinct banks, while four consecutive rows stay
//! contiguous and 16-byte aligned for the slices' vector loads.

use gpu_gemm_plan::{BM, Layout};
use gpu_hopper::arch::nvptx::{
    cluster_nctarank, cvt_rn_bf16x2_f32 as bf16x2, ld_shared_cluster_v4_f32,
};
use gpu_pipeline::arch::nvptx::{cvta_to_shared, mapa_shared_cluster};

use crate::epilogue::Out;
use crate::tile::Width;

/// The f32 index of (row `r`, column `c`) of the partial tile: column-major, each column's row
/// octets permuted by bits 1-2 of the column. A warp's store of one accumulator of every lane
/// covers 8 consecutive rows (lanes `l / 4`) of 4 columns `2 (l % 4)` apart, whose permutations
/// are the 4 distinct octet offsets: 32 distinct banks. The permutation moves whole octets, so
/// rows `4 q .. 4 q + 4` stay contiguous.
#[inline(always)]
fn at(r: u32, c: u32) -> u32 {
    c * BM + (r ^ (((c >> 1) & 3) << 3))
}

/// Where the partial tile lies: the start of the staging buffers (`2 * STAGING_BYTES`, 32 KiB,
/// the 128 x 64 f32 of a tile up to 64 wide), or for a wider tile ([`in_ring`]) the start of
/// the ring (the entries check that it fits).
#[inline(always)]
fn partials(smem: *mut u8, layout: Layout) -> *mut f32 {
    if in_ring(layout) {
        return smem.cast();
    }
    // SAFETY: pointer arithmetic inside the layout.
    unsafe { smem.add(layout.staging_at(0)).cast() }
}

const _: () = assert!(
    BM * 64 * 4 <= 2 * gpu_gemm_plan::STAGING_BYTES,
    "the widest transposing tile's partial fills the two staging buffers"
);

/// Whether the partial tile of `layout` lies in the ring (a tile wider than 64: the 192-wide
/// cluster-K kernel and the steps module's 128-wide one): its writers must wait until both
/// consumer warpgroups' MMAs have read their last stage.
pub(crate) const fn in_ring(layout: Layout) -> bool {
    layout.bn > 64
}

/// The parts of K of this cluster's tile: its CTAs, or in a pair kernel (`cluster` 2) half of
/// them.
#[inline(always)]
pub(crate) fn parts(cluster: u32) -> u32 {
    cluster_nctarank() / cluster
}

/// This CTA's place in its cluster of `parts` parts (alone, or in pairs: `paired`), `(part, pair
/// rank, peer)`: the cluster's rank `r` is `pair * parts + part`, so that the parts of one tile
/// are consecutive ranks (those [`reduce_slice`] adds up) and the CTAs of a pair, which take the
/// two tile rows of the cluster tile in the same part of K, `parts` apart; `peer` is the other
/// CTA of the pair's rank (0 alone).
#[inline(always)]
pub(crate) fn place(paired: bool, parts: u32) -> (u32, u32, u32) {
    if !paired {
        // Alone the ranks are the parts; one part is a launch without clusters (rank 0).
        let part = if parts > 1 {
            gpu_pipeline::cluster_cta_rank()
        } else {
            0
        };
        return (part, 0, 0);
    }
    let r = gpu_pipeline::cluster_cta_rank();
    let (part, pair) = (r % parts, r / parts);
    (part, pair, (pair ^ 1) * parts + part)
}

/// Consumer thread `th` (of 256) writes its accumulators, warpgroup `th / 128`'s rows of the
/// tile, into the CTA's partial tile.
///
/// # Safety
///
/// `smem` is the kernel's dynamic shared memory, laid out as `layout`, whose partial tile fits
/// the staging buffers (at most 64 columns) or the ring (the entries check it of every
/// cluster-K row); no thread reads the partial tile until a barrier orders these writes before
/// it; where it lies in the ring (`in_ring`), every MMA of both consumer warpgroups has
/// completed and a barrier of the 256 consumer threads orders that before these writes, and no
/// tensor load is in flight.
#[inline(always)]
pub(crate) unsafe fn write_partial<W: Width>(acc: &W::Acc, smem: *mut u8, layout: Layout, th: u32) {
    let (g, w, l) = (th / 128, (th % 128) / 32, th % 32);
    let buffer = partials(smem, layout);
    W::each_pair(acc, |i, v0, v1| {
        // Accumulators i and i + 1 (i even): row 16 w + l / 4 (+ 8 for (i / 2) odd) of the
        // warpgroup's 64, columns 8 (i / 4) + 2 (l % 4) and the next.
        let r = 64 * g + 16 * w + l / 4 + 8 * ((i / 2) % 2);
        let c = 8 * (i / 4) + 2 * (l % 4);
        // SAFETY: (r, c) and (r, c + 1) lie inside the 128 x BN tile, inside the buffer.
        unsafe {
            buffer.add(at(r, c) as usize).write(v0);
            buffer.add(at(r, c + 1) as usize).write(v1);
        }
    });
}

/// Consumer thread `th` (of 256) of the CTA of part `rank` of `ranks` parts of a tile adds up
/// its share of the tile's slice, row quads `32 rank / ranks .. 32 (rank + 1) / ranks` (four
/// rows each) of every column inside D, over the partial tiles of the tile's CTAs (cluster ranks
/// `first .. first + ranks`: the cluster alone, `first` 0; in pairs, this CTA's half) in rank
/// order, and writes them to D (`alpha * sum + beta * C`, rounded to bf16) at the tile's origin
/// `(m0, n0)` of the kernel's problem (`m x n`, the transpose of D).
///
/// # Safety
///
/// Every CTA of the tile (`ranks`, 2 to 8: the portable cluster sizes) wrote its partial tile
/// with [`write_partial`] for the same tile, ordered before this call by a cluster barrier
/// (release, acquire), and none overwrites it or exits before every CTA's reads are done (a
/// second cluster barrier); `out` is the launch's, for a kernel that computes the transpose.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn reduce_slice<W: Width>(
    smem: *mut u8,
    layout: Layout,
    th: u32,
    (rank, ranks, first): (u32, u32, u32),
    (m0, n0): (u32, u32),
    out: Out,
    m: u32,
    n: u32,
) {
    let (q0, q1) = gpu_gemm_plan::reduce::slice(rank, ranks);
    let quads = q1 - q0;
    // The tile's columns inside the kernel's problem (D's rows).
    let cols = W::BN.min(n - n0);
    // SAFETY: the partial tile is in this CTA's shared memory.
    let base = unsafe { cvta_to_shared(partials(smem, layout).cast()) };
    let mut item = th;
    while item < quads * cols {
        let (c, r) = (item / quads, 4 * (q0 + item % quads));
        let local = base + 4 * at(r, c);
        // SAFETY: every CTA of the cluster holds its partial tile at the same offset (the
        // contract), written and ordered before; 16 aligned bytes (r is a multiple of 4, the
        // buffer 1024-aligned).
        let sum = unsafe { sum_over(local, first, ranks) };
        write_quad(out, (m0 + r, n0 + c), sum, m);
        item += 256;
    }
}

/// The four f32 at `local` in the partial tiles of CTAs `first..first + ranks` of the cluster
/// (`ranks` 2 to 8), added in rank order; every load issued before the first add. Unrolled over the 8 ranks a
/// cluster may have, each load and add guarded by `p < ranks` (a `match` on the count compiles
/// to a jump table, an indirect branch the convergence check does not follow; a loop over
/// `ranks` would wait for each load before issuing the next).
///
/// # Safety
///
/// As [`reduce_slice`]: `local` is 16 aligned bytes of the partial tile, which the cluster's
/// `ranks` CTAs wrote.
#[inline(always)]
unsafe fn sum_over(local: u32, first: u32, ranks: u32) -> [f32; 4] {
    let parts: [[f32; 4]; 8] = core::array::from_fn(|p| {
        if (p as u32) < ranks {
            // SAFETY: by the contract; `p < ranks`: `first + p` is a rank of the cluster.
            unsafe { ld_shared_cluster_v4_f32(mapa_shared_cluster(local, first + p as u32)) }
        } else {
            [0.0; 4]
        }
    });
    let mut sum = parts[0];
    for (p, v) in parts.iter().enumerate().skip(1) {
        if (p as u32) < ranks {
            sum = [sum[0] + v[0], sum[1] + v[1], sum[2] + v[2], sum[3] + v[3]];
        }
    }
    sum
}

/// Writes rows `row .. row + 4` of column `col` of the kernel's problem (`m` rows), those below
/// `m`: D's `(col, row + j)`, four consecutive elements of a row of D, `alpha * v + beta * C`.
/// One 8-byte store (and load of C) where the four are inside D and 8-byte aligned, else one
/// element at a time.
#[inline(always)]
fn write_quad(out: Out, (row, col): (u32, u32), v: [f32; 4], m: u32) {
    let at = col as usize * m as usize + row as usize;
    // SAFETY (for every access below): D's (col, row + j) with `row + j < m` lies inside D
    // (`col` is a column of the kernel's problem, a row of D, by the caller), and so does C's
    // when beta != 0 (C is M x N as D, or D itself: each element is read before it is written,
    // by this thread alone). Rows past `m` are neither read nor written.
    let d = out.d.wrapping_add(at);
    let c = out.c.wrapping_add(at);
    let whole = row + 4 <= m && (d as usize).is_multiple_of(8) && (c as usize).is_multiple_of(8);
    if whole {
        let cs = if out.beta != 0.0 {
            // SAFETY: see above; 8 aligned bytes.
            let pair = unsafe { c.cast::<[u32; 2]>().read() };
            [
                pair[0] as u16,
                (pair[0] >> 16) as u16,
                pair[1] as u16,
                (pair[1] >> 16) as u16,
            ]
        } else {
            [0; 4]
        };
        let x = core::array::from_fn::<f32, 4, _>(|j| scaled(out, v[j], cs[j]));
        // SAFETY: see above; 8 aligned bytes.
        unsafe {
            d.cast::<[u32; 2]>()
                .write([bf16x2(x[0], x[1]), bf16x2(x[2], x[3])])
        };
        return;
    }
    // One element at a time, each with a constant index into `v` (a loop over a variable one
    // would put `v` in local memory).
    let one = |j: usize, vj: f32| {
        if row + j as u32 >= m {
            return;
        }
        let cj = if out.beta != 0.0 {
            // SAFETY: see above.
            unsafe { c.add(j).read() }
        } else {
            0
        };
        let x = scaled(out, vj, cj);
        // SAFETY: see above.
        unsafe { d.add(j).write(bf16x2(x, 0.0) as u16) };
    };
    one(0, v[0]);
    one(1, v[1]);
    one(2, v[2]);
    one(3, v[3]);
}

/// `alpha * v + beta * c`, C's bf16 `c` not looked at when beta == 0 (it may hold anything).
#[inline(always)]
fn scaled(out: Out, v: f32, c: u16) -> f32 {
    let x = out.alpha * v;
    if out.beta != 0.0 {
        x + out.beta * f32::from_bits(u32::from(c) << 16)
    } else {
        x
    }
}

/// The `ck_push` feature's reduction (a measurement): each part pushes the rows of its partial
/// that another part adds up into that part's staging buffers.
#[cfg(feature = "ck_push")]
pub(crate) mod push {
    use super::*;
    use crate::epilogue;
    use gpu_gemm_plan::reduce::{self, owner, pushed_at};
    use gpu_hopper::arch::nvptx::st_async_v2_f32;
    use gpu_pipeline::{Cta, MbarrierRef};

    /// Whether a cluster-K kernel of `layout` adds up its parts by [`push_partial`] (the `ck_push`
    /// feature's variant module, a measurement): tiles up to 64 wide, whose pushed rows land in the
    /// staging buffers (nothing else uses them in a transposing kernel), not in the ring a peer may
    /// still be reading.
    pub(crate) const fn pushes(layout: Layout) -> bool {
        !in_ring(layout)
    }

    /// The reduction's mbarrier of a pushing kernel: the 8 bytes below the split flag's word in the
    /// barriers' KiB (a cluster-K kernel has no split-K flag; `gemm` checks that the ring's barriers
    /// end before it).
    #[inline(always)]
    pub(crate) fn reduce_barrier(smem: *mut u8, layout: Layout) -> MbarrierRef<'static, Cta> {
        // SAFETY: 8-byte aligned shared memory inside the layout's barriers (`reduce_barrier_at`),
        // used for nothing else.
        unsafe { MbarrierRef::from_ptr(smem.add(reduce_barrier_at(layout)).cast()) }
    }

    /// Where [`reduce_barrier`] lies: 8-byte aligned, below the split flag's word.
    pub(crate) const fn reduce_barrier_at(layout: Layout) -> usize {
        (layout.split_flag_at() - 8) & !7
    }

    /// The bytes part `rank` of `ranks` receives by [`push_partial`] for a tile `bn` wide: its slice
    /// of every other part's partial ([`reduce::pushed_floats`]).
    #[inline(always)]
    pub(crate) fn pushed_bytes(rank: u32, ranks: u32, bn: u32) -> u32 {
        4 * reduce::pushed_floats(rank, ranks, bn)
    }

    /// Where consumer thread `th`'s (of 256) accumulators `i` and `i + 1` (`i` even) lie in the
    /// 128-row tile, `(row, column)` of the first: row `16 w + l / 4` (+ 8 for `(i / 2)` odd) of
    /// warpgroup `th / 128`'s 64, columns `8 (i / 4) + 2 (l % 4)` and the next ([`write_partial`]
    /// computes the same in place: written through this function, the production module's register
    /// numbering moved).
    #[inline(always)]
    fn pair_at(th: u32, i: u32) -> (u32, u32) {
        let (g, w, l) = (th / 128, (th % 128) / 32, th % 32);
        (
            64 * g + 16 * w + l / 4 + 8 * ((i / 2) % 2),
            8 * (i / 4) + 2 * (l % 4),
        )
    }

    /// Consumer thread `th` (of 256) of part `rank` of `ranks` (the cluster's CTAs `first ..`)
    /// pushes each pair of its accumulators whose row another part adds up ([`owner`]) into that
    /// part's staging buffers by `st.async`, completing 8 bytes on that part's [`reduce_barrier`].
    /// Its own rows stay in its registers ([`add_pushed`]).
    ///
    /// # Safety
    ///
    /// Every CTA of the tile initialised its reduce barrier and a cluster barrier made that visible
    /// before this call (`fence.mbarrier_init.release.cluster`, then an arrival and a wait); each
    /// expects [`pushed_bytes`] on its barrier's first phase; no CTA exits before its barrier's
    /// phase completes; the staging buffers of every CTA are not used otherwise; `W::BN <= 64`.
    #[inline(always)]
    pub(crate) unsafe fn push_partial<W: Width>(
        acc: &W::Acc,
        smem: *mut u8,
        layout: Layout,
        th: u32,
        (rank, ranks, first): (u32, u32, u32),
    ) {
        // SAFETY: the staging buffers and the barrier are this CTA's shared memory.
        let base = unsafe { cvta_to_shared(smem.add(layout.staging_at(0))) };
        let bar = reduce_barrier(smem, layout).shared_addr();
        W::each_pair(acc, |i, v0, v1| {
            let (r, c) = pair_at(th, i);
            let to = owner(r, ranks);
            if to != rank {
                let at = base + 4 * pushed_at(r, c, rank, to, ranks, W::BN);
                // SAFETY: the contract: `to`'s slot for this part holds (r, c) and (r, c + 1), 8
                // aligned bytes (c even, the buffer 1024-aligned), and its barrier expects them.
                unsafe {
                    st_async_v2_f32(
                        mapa_shared_cluster(at, first + to),
                        [v0, v1],
                        mapa_shared_cluster(bar, first + to),
                    )
                };
            }
        });
    }

    /// Once this CTA's [`reduce_barrier`] completed its phase (every other part's rows of its slice
    /// arrived), consumer thread `th` adds up, in part order, each pair of its accumulators in this
    /// part's slice with the other parts' pushed values, and writes it to D at the tile's origin
    /// `(m0, n0)` of the kernel's problem (`m x n`, the transpose of D); its other pairs were pushed.
    /// The same sums, in the same order, as [`reduce_slice`].
    ///
    /// # Safety
    ///
    /// As [`push_partial`], after it, and after this thread saw the barrier's phase complete;
    /// `out` is the launch's, for a kernel that computes the transpose.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub(crate) unsafe fn add_pushed<W: Width>(
        acc: &W::Acc,
        smem: *mut u8,
        layout: Layout,
        th: u32,
        (rank, ranks): (u32, u32),
        (m0, n0): (u32, u32),
        out: Out,
        (m, n): (u32, u32),
    ) {
        // SAFETY: pointer arithmetic inside the layout.
        let base: *const f32 = unsafe { smem.add(layout.staging_at(0)).cast() };
        W::each_pair(acc, |i, v0, v1| {
            let (r, c) = pair_at(th, i);
            if owner(r, ranks) != rank {
                return;
            }
            let mut s = [0.0f32; 2];
            for p in 0..ranks {
                let v = if p == rank {
                    [v0, v1]
                } else {
                    // SAFETY: part p's pushed pair of (r, c), inside the slots, arrived (the
                    // barrier's phase completed).
                    unsafe {
                        let at = base.add(pushed_at(r, c, p, rank, ranks, W::BN) as usize);
                        [at.read(), at.add(1).read()]
                    }
                };
                s = if p == 0 {
                    v
                } else {
                    [s[0] + v[0], s[1] + v[1]]
                };
            }
            // The epilogue's pair writers, as every transposing kernel's D leaves them.
            let (row, col) = (m0 + r, n0 + c);
            let c_pair = if out.beta != 0.0 {
                epilogue::c_pair(out, row, col, m, n)
            } else {
                0
            };
            epilogue::d_pair(
                out,
                row,
                col,
                epilogue::scaled(out, s[0], s[1], c_pair),
                m,
                n,
            );
        });
    }
}
