//! A warp-specialized bf16 GEMM for Hopper (sm_90a) on gpu-pipeline: a no_std kernel crate that
//! uses the library as any user's crate would (issue 13, first kernel: one CTA per tile).
//! D = alpha * A * B^T + beta * C; A: M x K row-major, B: N x K row-major, C, D: M x N row-major.
//! CTA tile 128 x 256 x 64; warpgroup 0 (one lane) loads A and B boxes with 2D tensor TMA
//! (128-byte swizzle) into a 4-stage ring; warpgroups 1 and 2 each multiply 64 rows with
//! `wgmma.m64n256k16`, keeping one stage in flight, then write D from registers.
#![no_std]
#![feature(
    abi_gpu_kernel,
    asm_experimental_arch,
    link_llvm_intrinsics,
    stdarch_nvptx
)]
#![feature(core_intrinsics, gpu_intrinsics, gpu_launch_sized_workgroup_mem)]
#![allow(internal_features, unsafe_op_in_unsafe_fn)]
#![allow(clippy::missing_safety_doc, clippy::undocumented_unsafe_blocks)]

#[rustfmt::skip]
mod wgmma;

use gpu_pipeline::{NvidiaMbarBackend, ProducerConsumerPipeline, TensorMap};

const BM: u32 = 128;
const BN: u32 = 256;
const BK: u32 = 64;
const STAGES: usize = 4;
const A_BYTES: u32 = BM * BK * 2; // 16 KiB
const B_BYTES: u32 = BN * BK * 2; // 32 KiB
const STAGE_BYTES: u32 = A_BYTES + B_BYTES;
/// Consumer arrivals: 2 warpgroups, every thread releases.
const CONSUMERS: u32 = 256;
type Backend = NvidiaMbarBackend<1, CONSUMERS>;
type Pipe = ProducerConsumerPipeline<STAGES, Backend>;

unsafe extern "llvm-intrinsic" {
    #[link_name = "llvm.nvvm.wgmma.fence.sync.aligned"]
    fn wgmma_fence();
    #[link_name = "llvm.nvvm.wgmma.commit_group.sync.aligned"]
    fn wgmma_commit_group();
    #[link_name = "llvm.nvvm.wgmma.wait_group.sync.aligned"]
    fn wgmma_wait_group(n: i64);
}

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    unsafe { core::arch::nvptx::trap() }
}

fn dynamic_smem() -> *mut u8 {
    #[repr(C, align(1024))]
    struct Align1024(u8);
    core::intrinsics::gpu::gpu_launch_sized_workgroup_mem::<Align1024>().cast()
}

fn shared_addr(p: *const u8) -> u32 {
    let generic = p as u64;
    let shared: u64;
    // SAFETY: converts a shared-memory generic address.
    unsafe {
        core::arch::asm!("cvta.to.shared.u64 {s}, {g};", s = out(reg64) shared, g = in(reg64) generic, options(pure, nomem, nostack));
    }
    shared as u32
}

/// A K-major shared-memory matrix descriptor with 128-byte swizzle: start >> 4 in bits 0-13,
/// leading offset 1 in bits 16-29, stride offset 1024 >> 4 in bits 32-45, swizzle mode 1 in
/// bits 62-63.
fn descriptor(smem: u32) -> u64 {
    u64::from((smem & 0x3_FFFF) >> 4) | (1 << 16) | ((1024u64 >> 4) << 32) | (1 << 62)
}

fn bf16_to_f32(x: u16) -> f32 {
    f32::from_bits(u32::from(x) << 16)
}

fn f32_to_bf16(x: f32) -> u16 {
    // Round to nearest even (no NaN inputs here).
    let bits = x.to_bits();
    let round = 0x7FFF + ((bits >> 16) & 1);
    ((bits + round) >> 16) as u16
}

/// Tiles in bands of this many tile rows: consecutive CTAs of a persistent grid work on a band of A
/// rows against the same columns of B, which keeps both in L2.
const GROUP: u32 = 8;

/// Which tiles a CTA computes, in order.
#[derive(Clone, Copy)]
struct Schedule {
    tiles_m: u32,
    tiles_n: u32,
    /// The CTA's first tile and the stride between its tiles (persistent: blockIdx.x, gridDim.x).
    first: u32,
    stride: u32,
}

impl Schedule {
    fn total(self) -> u32 {
        self.tiles_m * self.tiles_n
    }

    /// The (row, column) of tile `t` in the grouped order: bands of `GROUP` tile rows, each band
    /// walked column by column.
    fn tile(self, t: u32) -> (u32, u32) {
        let per_band = GROUP * self.tiles_n;
        let band = t / per_band;
        let first_m = band * GROUP;
        let rows = if self.tiles_m - first_m < GROUP {
            self.tiles_m - first_m
        } else {
            GROUP
        };
        let within = t % per_band;
        (first_m + within % rows, within / rows)
    }
}

/// The kernel body over `schedule`: warpgroup 0's first lane produces, warpgroups 1 and 2
/// consume; the ring runs on across the CTA's tiles, so the producer loads the next tile while the
/// consumers write the last one out.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn gemm(
    schedule: Schedule,
    maps: *const TensorMap,
    c: *const u16,
    d: *mut u16,
    m: u32,
    n: u32,
    k: u32,
    alpha: f32,
    beta: f32,
) {
    let tid = core::arch::nvptx::_thread_idx_x() as u32;
    let smem = dynamic_smem();
    // SAFETY: the barriers sit after the stages.
    let bars = unsafe { smem.add((STAGES as u32 * STAGE_BYTES) as usize) };
    // SAFETY: one thread initialises, then the block barrier.
    let pipe = unsafe { Pipe::new(bars.cast()) };
    if tid == 0 {
        unsafe { pipe.init() };
    }
    core::arch::nvptx::_syncthreads();
    let k_blocks = k.div_ceil(BK);
    let (first, stride, total) = (schedule.first, schedule.stride, schedule.total());

    if tid < 128 {
        if tid == 0 {
            let producer = pipe.into_producer();
            let (map_a, map_b) = (maps, unsafe { maps.add(1) });
            let mut t = first;
            while t < total {
                let (tm, tn) = schedule.tile(t);
                let (m0, n0) = ((tm * BM) as i32, (tn * BN) as i32);
                for kb in 0..k_blocks {
                    producer.with_stage_explicit(|stage| {
                        let bar = stage.barrier();
                        bar.arrive_expect_tx(STAGE_BYTES);
                        let base = unsafe { smem.add((stage.index() * STAGE_BYTES) as usize) };
                        let kc = (kb * BK) as i32;
                        // SAFETY: the stage is free; 1024-aligned boxes of the maps' sizes.
                        unsafe {
                            bar.tensor_load::<2>(base, map_a, [kc, m0]);
                            bar.tensor_load::<2>(base.add(A_BYTES as usize), map_b, [kc, n0]);
                        }
                    });
                }
                t += stride;
            }
        }
        return;
    }

    // Consumers: warpgroup g in {0, 1} multiplies rows 64 g .. 64 g + 63 of each tile.
    let th = tid - 128;
    let g = th / 128;
    let w = (th % 128) / 32;
    let l = th % 32;
    let consumer = pipe.into_consumer();
    let mut acc = [0f32; 128];
    let issue = |acc: &mut [f32; 128], index: u32, first: bool| {
        let base = shared_addr(unsafe { smem.add((index * STAGE_BYTES) as usize) });
        let a = base + g * 64 * 128; // 64 rows of 128 bytes
        let b = base + A_BYTES;
        unsafe { wgmma_fence() };
        for ks in 0..4u32 {
            // SAFETY: the stage is full; the whole warpgroup is here.
            unsafe {
                wgmma::wgmma_m64n256k16_bf16(
                    acc,
                    descriptor(a + ks * 32),
                    descriptor(b + ks * 32),
                    !(first && ks == 0),
                )
            };
        }
        unsafe { wgmma_commit_group() };
    };
    let mut t = first;
    while t < total {
        let (tm, tn) = schedule.tile(t);
        let (m0, n0) = (tm * BM, tn * BN);
        let mut previous = consumer.acquire();
        issue(&mut acc, previous.index(), true);
        for _ in 1..k_blocks {
            let stage = consumer.acquire();
            issue(&mut acc, stage.index(), false);
            // The previous stage's MMAs are done once at most this stage's group is pending.
            unsafe { wgmma_wait_group(1) };
            previous.release();
            previous = stage;
        }
        unsafe { wgmma_wait_group(0) };
        previous.release();

        // Epilogue: thread (warp w, lane l) holds rows 16 w + l / 4 (+ 8) and columns
        // 8 j + 2 (l % 4) (+ 1) of its warpgroup's 64 x 256 block.
        let row0 = m0 + g * 64 + 16 * w + l / 4;
        // Adjacent columns go out as one 4-byte bf16x2 store (and come in as one load of C) when
        // every row starts 4-byte aligned (N even); otherwise as two 2-byte stores.
        let even_n = n % 2 == 0;
        wgmma::each_pair(&acc, |i, v0, v1| {
            let row = row0 + 8 * ((i / 2) % 2);
            let col = n0 + 8 * (i / 4) + 2 * (l % 4);
            if row >= m || col >= n {
                return;
            }
            let at = row as usize * n as usize + col as usize;
            let (mut x0, mut x1) = (alpha * v0, alpha * v1);
            if even_n {
                // `col` is even and `col + 1 < n`: the pair is whole and 4-byte aligned.
                if beta != 0.0 {
                    let pair = unsafe { c.add(at).cast::<u32>().read() };
                    x0 += beta * bf16_to_f32(pair as u16);
                    x1 += beta * bf16_to_f32((pair >> 16) as u16);
                }
                let packed = u32::from(f32_to_bf16(x0)) | (u32::from(f32_to_bf16(x1)) << 16);
                unsafe { d.add(at).cast::<u32>().write(packed) };
            } else {
                if beta != 0.0 {
                    x0 += beta * bf16_to_f32(unsafe { c.add(at).read() });
                }
                unsafe { d.add(at).write(f32_to_bf16(x0)) };
                if col + 1 < n {
                    if beta != 0.0 {
                        x1 += beta * bf16_to_f32(unsafe { c.add(at + 1).read() });
                    }
                    unsafe { d.add(at + 1).write(f32_to_bf16(x1)) };
                }
            }
        });
        t += stride;
    }
}

/// One CTA per 128 x 256 tile of D (grid `(ceil(N/256), ceil(M/128))`).
///
/// # Safety
/// Launched with 384 threads, dynamic shared memory `STAGES * STAGE_BYTES + 1024` (barriers in
/// the last KiB); `maps[0]` = A (box 64 x 128), `maps[1]` = B (box 64 x 256), both bf16,
/// 128-byte swizzle, in global memory; C (if `beta != 0`) and D hold M x N bf16.
#[unsafe(no_mangle)]
pub unsafe extern "gpu-kernel" fn gemm_bf16_ws(
    maps: *const TensorMap,
    c: *const u16,
    d: *mut u16,
    m: u32,
    n: u32,
    k: u32,
    alpha: f32,
    beta: f32,
) {
    let (tiles_m, tiles_n) = (m.div_ceil(BM), n.div_ceil(BN));
    // One tile per CTA: its index in the grouped order, and a stride that ends the loop.
    let schedule = Schedule {
        tiles_m,
        tiles_n,
        first: core::arch::nvptx::_block_idx_y() as u32 * tiles_n
            + core::arch::nvptx::_block_idx_x() as u32,
        stride: tiles_m * tiles_n,
    };
    unsafe { gemm(schedule, maps, c, d, m, n, k, alpha, beta) }
}

/// A persistent grid (one CTA per SM): CTA `b` computes tiles `b, b + grid, ...` in the grouped
/// order of [`Schedule::tile`].
///
/// # Safety
/// As [`gemm_bf16_ws`], with any 1D grid.
#[unsafe(no_mangle)]
pub unsafe extern "gpu-kernel" fn gemm_bf16_persistent(
    maps: *const TensorMap,
    c: *const u16,
    d: *mut u16,
    m: u32,
    n: u32,
    k: u32,
    alpha: f32,
    beta: f32,
) {
    let schedule = Schedule {
        tiles_m: m.div_ceil(BM),
        tiles_n: n.div_ceil(BN),
        first: core::arch::nvptx::_block_idx_x() as u32,
        stride: core::arch::nvptx::_grid_dim_x() as u32,
    };
    unsafe { gemm(schedule, maps, c, d, m, n, k, alpha, beta) }
}
