//! The epilogues: a tile's accumulators out to D, from registers or through shared memory and
//! TMA tensor stores, with C (when `beta != 0`) read from global memory or brought in through an
//! `EpiLoadPipeline` per consumer warpgroup.

use gpu_gemm_plan::abi::Params;
use gpu_gemm_plan::{BOX_BYTES, Layout, Schedule, Shape};
use gpu_pipeline::{Cta, EpiLoadPipeline, MbarrierRef, NvidiaMbarBackend, TensorMap};

use crate::tile::Width;
use gpu_hopper::arch::nvptx::{barrier_sync_aligned, cvt_rn_bf16x2_f32 as bf16x2};
use gpu_hopper::barrier::NamedBarrier;

/// C's way in when `beta != 0` (one per consumer warpgroup): the two boxes of its staging buffer
/// are the two stages. An epilogue-load thread of the producer warpgroup fills a stage with a
/// quarter of the warpgroup's 64 x 256 block of C (one 64 x 64 tensor load, one
/// `arrive_expect_tx`: producer arrival count 1); the warpgroup combines it with its
/// accumulators in place and stores it as D, and its store thread releases the stage once the
/// tensor store has read it (consumer arrival count 1).
pub(crate) type Epi = EpiLoadPipeline<2, NvidiaMbarBackend<1, 1>>;

/// Consumer warpgroup `g`'s epilogue-load pipeline, over its barriers at the start of
/// `layout`'s barriers.
///
/// # Safety
///
/// `smem` is the kernel's dynamic shared memory, laid out as `layout`; as
/// [`EpiLoadPipeline::new`].
#[inline(always)]
pub(crate) unsafe fn c_stages(smem: *mut u8, layout: Layout, g: u32) -> Epi {
    // SAFETY: two pipelines' barriers fit before the ring's, inside the last KiB.
    unsafe {
        Epi::new(
            smem.add(layout.barriers_at() + g as usize * Epi::SMEM_BYTES)
                .cast(),
        )
    }
}

/// The TMA-store epilogue of one consumer warpgroup: its 64 x `W::BN` block of D (rows `at.0..`,
/// columns `at.1..`) leaves a quarter (64 columns; a [`Narrow`] block has two, a [`Slim`] one) at
/// a time, each staged in one box of `staging` (the CTA's quarter `i` in box `i % 2`) in the
/// 128-byte-swizzled layout and stored by the warpgroup's
/// first thread with a tensor store, which it does not wait for: the next quarter is staged in
/// the other box meanwhile, and the next tile's main loop runs while the last ones drain.
///
/// Without C, the CTA's quarters alternate between the boxes across tiles too (`staged` counts
/// the quarters staged before this call: a [`Slim`] tile has only one), and before a box is
/// written again, that thread waits until the store issued from it two quarters before has read
/// it (`cp.async.bulk.wait_group.read 1`: all but the newest group). With C
/// (`c_stages` is `Some`: beta != 0), each quarter of C arrives in the box through `c_stages` (see
/// [`Epi`]), in the layout D leaves in, so each thread combines and overwrites the same four
/// bytes; the store thread gives a stage back once its store has read it: a quarter's stage
/// after the next quarter's store is issued, the last one through `pending`, which the caller
/// arrives on once the next tile's MMAs are under way.
///
/// Swizzle (PTX ISA, "Tensor Copy: Swizzling Modes", 128B): the 16-byte chunk `j` of row `r`
/// of a box sits at chunk `j ^ (r % 8)`. A warp's 4-byte access covers rows `r .. r + 8` (lanes
/// `l / 4`) and one chunk of each: 8 distinct chunks of a 128-byte row stride, so 32 distinct
/// banks, without conflicts.
///
/// # Safety
///
/// All 128 threads of warpgroup `g` call it converged; `staging` is the warpgroup's two boxes,
/// 1024-byte aligned, used by nothing else (and `c_stages`' two stages); `map_d` is D's tensor
/// map (bf16, 2D, box 64 x 64, 128-byte swizzle) in global memory; `pending` is `None`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn store_through_smem<'e, W: Width>(
    acc: &W::Acc,
    staging: *mut u8,
    map_d: *const TensorMap,
    g: u32,
    w: u32,
    l: u32,
    at: (u32, u32),
    out: Out,
    c_stages: Option<&'e Epi>,
    pending: &mut Option<MbarrierRef<'e, Cta>>,
    staged: &mut u32,
) {
    let (row0, col0) = at;
    let first_box = *staged;
    *staged += W::BN / 64;
    let leader = w == 0 && l == 0;
    // The stage of the quarter before, to give back once its store has read it.
    let mut previous: Option<MbarrierRef<'e, Cta>> = None;
    // Called four times over rather than looped: LLVM does not unroll a loop this long, and its
    // jump table over the quarters (`brx.idx`) is a branch the PTX check does not follow.
    let mut quarter_out = |quarter: u32| {
        // With C: this quarter of C has landed in its stage (so the box's earlier store has read
        // it). The store thread keeps the stage's empty barrier to arrive on later.
        let stage = c_stages.map(|c| {
            let stage = c.acquire_consumer();
            let view = (stage.index(), stage.barrier());
            stage.release_without_signal();
            view
        });
        let box_index = match stage {
            Some((index, _)) => index,
            None => {
                if leader {
                    // The store issued from this box two quarters ago has read it.
                    gpu_pipeline::bulk_wait_group_read::<1>();
                }
                // SAFETY: the whole warpgroup is here, each warp converged.
                unsafe { warpgroup_sync(g) };
                (first_box + quarter) % 2
            }
        };
        // SAFETY: one of the warpgroup's two boxes.
        let buffer = unsafe { staging.add((box_index * BOX_BYTES) as usize) };
        W::each_pair(acc, |i, v0, v1| {
            // Accumulator pair i holds columns 8 (i / 4) + 2 (l % 4) (+1): this quarter's are
            // i / 4 in 8 quarter .. 8 quarter + 8.
            if i / 32 != quarter {
                return;
            }
            let r = 16 * w + l / 4 + 8 * ((i / 2) % 2);
            let byte = (8 * (i / 4) + 2 * (l % 4) - 64 * quarter) * 2;
            let offset = r * 128 + (((byte / 16) ^ (r % 8)) * 16) + byte % 16;
            // SAFETY: inside the box.
            let pair = unsafe { buffer.add(offset as usize).cast::<u32>() };
            // C's pair at this place (zeros outside C, as TMA fills them; their D is clipped).
            let c_pair = if stage.is_some() {
                // SAFETY: inside the box, which C's stage filled.
                unsafe { pair.read() }
            } else {
                0
            };
            // SAFETY: inside the box, this thread's four bytes.
            unsafe { pair.write(scaled(out, v0, v1, c_pair)) };
        });
        // The staged values are visible to the tensor copy (async proxy) once every thread has
        // fenced and met the others.
        gpu_pipeline::fence_proxy_async();
        // SAFETY: the whole warpgroup is here, each warp converged.
        unsafe { warpgroup_sync(g) };
        if leader {
            // SAFETY: the box is staged; its coordinates are tile offsets, >= 0; TMA clips rows
            // and columns past D's end.
            unsafe {
                gpu_pipeline::tensor_store::<2>(
                    map_d,
                    [(col0 + 64 * quarter) as i32, row0 as i32],
                    buffer,
                )
            };
            gpu_pipeline::bulk_commit_group();
            if let Some((_, empty)) = stage
                && let Some(before) = previous.replace(empty)
            {
                // The quarter before's store has read its stage.
                gpu_pipeline::bulk_wait_group_read::<1>();
                before.arrive();
            }
        }
    };
    // Every quarter of the tile (`epilogue_quarters`, which the plan's tests check against the
    // table's widths).
    let quarters = gpu_gemm_plan::epilogue_quarters(W::BN);
    quarter_out(0);
    if quarters > 1 {
        quarter_out(1);
    }
    if quarters > 2 {
        quarter_out(2);
    }
    if quarters > 3 {
        quarter_out(3);
    }
    *pending = previous;
}

/// The epilogue-load thread of consumer warpgroup `g`: for each tile of the CTA's schedule (one
/// split each; of `k_blocks` k-blocks, the schedule's), the warpgroup's 64 x `W::BN` block of C (rows `cluster_rows * tm + rows..`), a
/// quarter (one 64 x 64 box) at a time, into the stages of `c_stages` (the boxes of `staging`).
///
/// # Safety
///
/// Called by one thread; `staging` is the warpgroup's two boxes, 1024-byte aligned; `map_c` is
/// C's tensor map (bf16, 2D, box 64 x 64, 128-byte swizzle) in global memory.
#[inline(always)]
pub(crate) unsafe fn load_c<W: Width>(
    c_stages: &Epi,
    schedule: Schedule,
    staging: *mut u8,
    map_c: *const TensorMap,
    cluster_rows: u32,
    rows: u32,
    k_blocks: u32,
) {
    let mut u = schedule.first;
    while u < schedule.total() {
        let (tile, parts) = if schedule.workers != 0 {
            let w = schedule.work(u, k_blocks);
            (w.tile, w.parts)
        } else {
            let (tile, _, parts) = schedule.unit(u);
            (tile, parts)
        };
        u += schedule.stride;
        if parts > 1 {
            // A split tile's D comes from the CTA that finishes it, which reads C from global
            // memory (`finish_split`, then `epilogue`).
            continue;
        }
        if schedule.workers != 0 && parts == 0 {
            // A stream-K schedule's empty unit: no tile.
            continue;
        }
        let (tm, tn) = schedule.tile(tile);
        let (row0, col0) = (tm * cluster_rows + rows, tn * W::BN);
        for quarter in 0..W::BN / 64 {
            c_stages.produce_tma(BOX_BYTES, |stage| {
                // SAFETY: the stage (its box) is free; 1024-aligned, the map's box size; TMA
                // fills what lies outside C with zeros.
                unsafe {
                    stage.barrier().tensor_load::<2>(
                        staging.add((stage.index() * BOX_BYTES) as usize),
                        map_c,
                        [(col0 + 64 * quarter) as i32, row0 as i32],
                    )
                };
            });
        }
    }
}

/// The epilogue's named barriers: one per consumer warpgroup (ids consecutive: warpgroup `g`'s is
/// the first's id + `g`), registered with the kernel's others in `kernel::BARRIERS`.
pub(crate) const EPILOGUE_BARRIERS: &[NamedBarrier] = &[
    NamedBarrier::new("the epilogue of consumer warpgroup 0", 1, 128),
    NamedBarrier::new("the epilogue of consumer warpgroup 1", 2, 128),
];
const _: () = assert!(EPILOGUE_BARRIERS[1].id() == EPILOGUE_BARRIERS[0].id() + 1);

/// The 128 threads of consumer warpgroup `g` meet at named barrier `1 + g` (`barrier.sync.aligned
/// id, 128`; PTX ISA, "Parallel Synchronization and Communication Instructions: bar, barrier").
///
/// # Safety
///
/// Called by all 128 threads of the warpgroup, each warp converged.
#[inline(always)]
pub(crate) unsafe fn warpgroup_sync(g: u32) {
    let first = EPILOGUE_BARRIERS[0];
    // SAFETY: by the contract; the registered barriers of the two warpgroups, 128 threads each.
    unsafe { barrier_sync_aligned(first.id() + g, first.threads()) };
}

/// Where a kernel writes: D, C (read when `beta != 0`), alpha and beta, and the split-K
/// workspace.
#[derive(Clone, Copy)]
pub(crate) struct Out {
    /// The tensor maps (A, B, and D for the TMA-store epilogue).
    pub(crate) maps: *const TensorMap,
    pub(crate) c: *const u16,
    pub(crate) d: *mut u16,
    pub(crate) alpha: f32,
    pub(crate) beta: f32,
    pub(crate) work: *mut u32,
    /// The kernel computes the transpose (`Config::swap_ab`): element (row, col) of its
    /// problem is D's (col, row), and C's.
    pub(crate) transposed: bool,
}

impl Out {
    /// Where the launch's [`Params`] say the kernel writes, the problem's shape, and its split
    /// count: the addresses become pointers (the host passes device addresses as integers).
    #[inline(always)]
    pub(crate) fn of(params: Params, transposed: bool) -> (Self, Shape, u32) {
        let pointer = |address: u64| core::ptr::with_exposed_provenance_mut::<u8>(address as usize);
        let out = Out {
            maps: pointer(params.maps).cast::<TensorMap>().cast_const(),
            c: pointer(params.c).cast::<u16>().cast_const(),
            d: pointer(params.d).cast(),
            alpha: params.alpha,
            beta: params.beta,
            work: pointer(params.work).cast(),
            transposed,
        };
        let shape = Shape {
            m: params.m,
            n: params.n,
            k: params.k,
        };
        (out, shape, params.splits)
    }
}

/// Writes a thread's accumulators: thread (warp w, lane l) of a warpgroup holds rows
/// `16 w + l / 4` (+ 8) and columns `8 j + 2 (l % 4)` (+ 1) of its 64 x `W::BN` block, so `row0`
/// and `col0` are its first row and column in D.
///
/// A quarter of the block (64 columns, 16 pairs of a thread) at a time: first every pair of C the
/// quarter needs (when `beta != 0`), then the quarter's pairs of D. C may be D, so the compiler
/// keeps each load of C after every store of D before it; loaded a quarter ahead, the loads are
/// in flight together rather than one round trip per pair.
#[inline(always)]
pub(crate) fn epilogue<W: Width>(acc: &W::Acc, row0: u32, col0: u32, out: Out, m: u32, n: u32) {
    // Called once per quarter rather than looped, as in `store_through_smem`: the pairs' indices
    // into the quarter's C are then constants, and it stays in registers.
    // Every quarter of the tile, as `store_through_smem`.
    let quarters = gpu_gemm_plan::epilogue_quarters(W::BN);
    epilogue_quarter::<W>(acc, 0, (row0, col0), out, m, n);
    if quarters > 1 {
        epilogue_quarter::<W>(acc, 1, (row0, col0), out, m, n);
    }
    if quarters > 2 {
        epilogue_quarter::<W>(acc, 2, (row0, col0), out, m, n);
    }
    if quarters > 3 {
        epilogue_quarter::<W>(acc, 3, (row0, col0), out, m, n);
    }
}

/// [`epilogue`] with beta 0, of the rows `lo..m` only (`rows = (lo, m)`): a tile whose A box was
/// shifted inside M (`mainloop::shifts_edge`) recomputed rows the tile row above wrote.
#[inline(always)]
pub(crate) fn epilogue_from<W: Width>(
    acc: &W::Acc,
    (row0, col0): (u32, u32),
    out: Out,
    (lo, m): (u32, u32),
    n: u32,
) {
    W::each_pair(acc, |i, v0, v1| {
        let (row, col) = (row0 + 8 * ((i / 2) % 2), col0 + 8 * (i / 4));
        if row >= lo {
            d_pair(out, row, col, scaled(out, v0, v1, 0), m, n);
        }
    });
}

/// Quarter `quarter` of [`epilogue`]: accumulator pair `i` of a thread is row
/// `row0 + 8 ((i / 2) % 2)`, columns `col0 + 8 (i / 4)` (+ 1); pairs `32 q .. 32 q + 32` are
/// quarter q's.
#[inline(always)]
fn epilogue_quarter<W: Width>(
    acc: &W::Acc,
    quarter: u32,
    (row0, col0): (u32, u32),
    out: Out,
    m: u32,
    n: u32,
) {
    let at = |i: u32| (row0 + 8 * ((i / 2) % 2), col0 + 8 * (i / 4));
    let mut c = [0u32; 16];
    if out.beta != 0.0 {
        W::each_pair(acc, |i, _, _| {
            if i / 32 == quarter {
                let (row, col) = at(i);
                c[((i / 2) % 16) as usize] = c_pair(out, row, col, m, n);
            }
        });
    }
    W::each_pair(acc, |i, v0, v1| {
        if i / 32 == quarter {
            let (row, col) = at(i);
            let packed = scaled(out, v0, v1, c[((i / 2) % 16) as usize]);
            d_pair(out, row, col, packed, m, n);
        }
    });
}

/// `alpha * (v0, v1) + beta * (c0, c1)` rounded to bf16 and packed, first element low, where
/// `c_pair` holds bf16 `c0` (low) and `c1` (high); C is not looked at when `beta == 0` (it may
/// hold anything, NaN included).
#[inline(always)]
pub(crate) fn scaled(out: Out, v0: f32, v1: f32, c_pair: u32) -> u32 {
    let (mut x0, mut x1) = (out.alpha * v0, out.alpha * v1);
    if out.beta != 0.0 {
        x0 += out.beta * bf16_to_f32(c_pair as u16);
        x1 += out.beta * bf16_to_f32((c_pair >> 16) as u16);
    }
    bf16x2(x0, x1)
}

/// C's elements at (`row`, `col`) and (`row`, `col + 1`), packed (the first low), those inside
/// M x N (0 outside). One 4-byte load when every row starts 4-byte aligned (N even; `col` is
/// always even), otherwise two 2-byte loads.
#[inline(always)]
pub(crate) fn c_pair(out: Out, row: u32, col: u32, m: u32, n: u32) -> u32 {
    if row >= m || col >= n {
        return 0;
    }
    if out.transposed {
        return c_pair_transposed(out, row, col, m, n);
    }
    let at = row as usize * n as usize + col as usize;
    // (row, col) and, when `col + 1 < n`, (row, col + 1) lie inside the M x N matrix C, by the
    // check above and the kernels' contract.
    if n % 2 == 0 {
        // SAFETY: `col` is even and `col + 1 < n`: the pair is whole and 4-byte aligned.
        unsafe { out.c.add(at).cast::<u32>().read() }
    } else {
        // SAFETY: (row, col) is inside C.
        let c0 = u32::from(unsafe { out.c.add(at).read() });
        let c1 = if col + 1 < n {
            // SAFETY: (row, col + 1) is inside C.
            u32::from(unsafe { out.c.add(at + 1).read() })
        } else {
            0
        };
        c0 | (c1 << 16)
    }
}

/// Writes the packed pair of bf16 to D at (`row`, `col`) and (`row`, `col + 1`), the parts inside
/// M x N: one 4-byte store when N is even, otherwise two 2-byte stores.
#[inline(always)]
pub(crate) fn d_pair(out: Out, row: u32, col: u32, packed: u32, m: u32, n: u32) {
    if row >= m || col >= n {
        return;
    }
    if out.transposed {
        d_pair_transposed(out, row, col, packed, m, n);
        return;
    }
    let at = row as usize * n as usize + col as usize;
    // Inside the M x N matrix D, as in `c_pair`.
    if n % 2 == 0 {
        // SAFETY: the whole pair is inside D, 4-byte aligned.
        unsafe { out.d.add(at).cast::<u32>().write(packed) };
    } else {
        // SAFETY: (row, col) is inside D.
        unsafe { out.d.add(at).write(packed as u16) };
        if col + 1 < n {
            // SAFETY: (row, col + 1) is inside D.
            unsafe { out.d.add(at + 1).write((packed >> 16) as u16) };
        }
    }
}

/// [`c_pair`] of a kernel that computes the transpose: its (`row`, `col`) and (`row`, `col + 1`)
/// are C's (`col`, `row`) and (`col + 1`, `row`), C being N x M for the kernel's M x N, so two
/// 2-byte loads, a column of C apart. (`row`, `col`) is inside the kernel's M x N.
#[inline(always)]
fn c_pair_transposed(out: Out, row: u32, col: u32, m: u32, n: u32) -> u32 {
    let at = col as usize * m as usize + row as usize;
    // SAFETY: C's (col, row) is inside C: `col < n` rows of `m` elements, `row < m`.
    let c0 = u32::from(unsafe { out.c.add(at).read() });
    let c1 = if col + 1 < n {
        // SAFETY: (col + 1, row) is inside C.
        u32::from(unsafe { out.c.add(at + m as usize).read() })
    } else {
        0
    };
    c0 | (c1 << 16)
}

/// [`d_pair`] of a kernel that computes the transpose, as [`c_pair_transposed`]: two 2-byte
/// stores. A warp's stores of one pair's element cover 8 consecutive rows of the kernel's tile,
/// so 16 contiguous bytes of a row of D.
#[inline(always)]
fn d_pair_transposed(out: Out, row: u32, col: u32, packed: u32, m: u32, n: u32) {
    let at = col as usize * m as usize + row as usize;
    // SAFETY: D's (col, row) is inside D, as in `c_pair_transposed`.
    unsafe { out.d.add(at).write(packed as u16) };
    if col + 1 < n {
        // SAFETY: (col + 1, row) is inside D.
        unsafe { out.d.add(at + m as usize).write((packed >> 16) as u16) };
    }
}

fn bf16_to_f32(x: u16) -> f32 {
    f32::from_bits(u32::from(x) << 16)
}
