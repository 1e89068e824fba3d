// The CUDA C++ twins of the Rust benchmark kernels (tests/kernels/src/bench.rs): the same names,
// launch shapes, algorithms and loop shapes, written by hand with raw inline PTX and no library,
// as a user of mbarrier would write them. The rows (which configurations exist) are those of the
// Rust lists in tests/suite/src/lib.rs (`bench_kernels!`, whose C++ names `bench_twin_name!` gives,
// and `bench_stream_kernels!`); the harness finds each twin by that name. Compiled by `nvcc -arch=sm_90a -cubin -O3` (see the bench
// bundle's run script) and loaded by the bench harness next to the Rust PTX.
//
// Every cycle kernel exists in two loop shapes, `_flat` (neither compiler unrolls the loop) and
// `_x4` (the body written four times, the loop not unrolled further), as on the Rust side: a
// ratio then compares the library with raw PTX, not LLVM's unrolling with nvcc's.
//
// PTX forms and their manual sections are the same as in crates/gpu-pipeline/src/arch/nvptx.rs.

#include <cstdint>

extern __shared__ __align__(128) uint8_t smem[];

// ---------------------------------------------------------------- leaves

__device__ __forceinline__ uint32_t shared_addr(const void* p) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}

__device__ __forceinline__ void fence_mbar_init() {
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

__device__ __forceinline__ void mbar_arrive(uint32_t bar) {
    asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}

__device__ __forceinline__ void mbar_arrive_expect_tx(uint32_t bar, uint32_t bytes) {
    asm volatile("mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
}

__device__ __forceinline__ bool mbar_try_wait(uint32_t bar, uint32_t parity) {
    uint32_t done;
    asm volatile(
        "{ .reg .pred p; mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
        : "=r"(done) : "r"(bar), "r"(parity) : "memory");
    return done != 0;
}

// The wait, as the library writes it (crates/gpu-pipeline/src/backend/nvidia.rs,
// MbarrierRef::wait_parity): one try_wait, then a retry loop marked unlikely. ptxas then gives the
// path that does not wait no YIELD in every loop shape; a bare `while (!try_wait) {}` loop gets a
// YIELD in front of the try_wait where several waits share an unrolled loop body (`mbar_wait_spin`,
// the form CUTLASS uses, kept for the wait-loop table).
__device__ __forceinline__ void mbar_wait_parity(uint32_t bar, uint32_t parity) {
    if (__builtin_expect(!mbar_try_wait(bar, parity), 0)) {
        while (!mbar_try_wait(bar, parity)) {}
    }
}

__device__ __forceinline__ void mbar_wait_spin(uint32_t bar, uint32_t parity) {
    while (!mbar_try_wait(bar, parity)) {}
}

__device__ __forceinline__ bool mbar_try_wait_ticks(uint32_t bar, uint32_t parity, uint32_t ticks) {
    uint32_t done;
    asm volatile(
        "{ .reg .pred p; mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 p, [%1], %2, %3; selp.u32 %0, 1, 0, p; }"
        : "=r"(done) : "r"(bar), "r"(parity), "r"(ticks) : "memory");
    return done != 0;
}

__device__ __forceinline__ bool mbar_try_wait_cluster(uint32_t bar, uint32_t parity) {
    uint32_t done;
    asm volatile(
        "{ .reg .pred p; mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
        : "=r"(done) : "r"(bar), "r"(parity) : "memory");
    return done != 0;
}

__device__ __forceinline__ void mbar_arrive_remote(uint32_t bar, uint32_t rank) {
    uint32_t remote;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(bar), "r"(rank));
    asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(remote) : "memory");
}

__device__ __forceinline__ uint32_t cluster_rank() {
    uint32_t r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
}

__device__ __forceinline__ void cluster_sync() {
    asm volatile("barrier.cluster.arrive.release;\n\tbarrier.cluster.wait.acquire;" ::: "memory");
}

__device__ __forceinline__ void red_add_release(uint32_t addr, uint32_t n) {
    asm volatile("red.release.cta.shared.add.u32 [%0], %1;" ::"r"(addr), "r"(n) : "memory");
}

__device__ __forceinline__ uint32_t ld_acquire(uint32_t addr) {
    uint32_t v;
    asm volatile("ld.acquire.cta.shared.u32 %0, [%1];" : "=r"(v) : "r"(addr) : "memory");
    return v;
}


__device__ __forceinline__ void bar_warp_sync_all() { asm volatile("bar.warp.sync 0xffffffff;" ::: "memory"); }
__device__ __forceinline__ void bar_warp_sync(uint32_t mask) { asm volatile("bar.warp.sync %0;" ::"r"(mask) : "memory"); }

__device__ __forceinline__ uint32_t lanemask_lt() {
    uint32_t lt;
    asm volatile("mov.u32 %0, %%lanemask_lt;" : "=r"(lt));
    return lt;
}

__device__ __forceinline__ uint32_t laneid() {
    uint32_t lane;
    asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
    return lane;
}

__device__ __forceinline__ void nanosleep0() { asm volatile("nanosleep.u32 0;" ::: "memory"); }

// `match.any.sync.b32`: the lanes of `mask` whose value equals this lane's (PTX ISA 6.0, sm_70).
__device__ __forceinline__ uint32_t match_any(uint32_t mask, uint32_t value) { return __match_any_sync(mask, value); }

// The loops' bound, through a move the compiler cannot see through (the Rust twin's `opaque`).
__device__ __forceinline__ uint32_t opaque(uint32_t n) {
    uint32_t r;
    asm volatile("mov.u32 %0, %1;" : "=r"(r) : "r"(n));
    return r;
}

// Runs `body` `iters` times (a multiple of 4) in loop shape U: 1 = flat (not unrolled: the bound is
// re-read through `opaque` in every iteration, so the trip count is unknown to the compiler), 4 = the
// body written four times. The Rust twin's `repeat` is the same loop.
enum : int { FLAT = 1, X4 = 4 };
template <int U, typename F>
__device__ __forceinline__ void repeat(uint32_t iters, F&& body) {
    for (uint32_t i = 0; i < opaque(iters); i += U) {
        body();
        if (U == X4) { body(); body(); body(); }
    }
}

__device__ __forceinline__ void bulk_g2s(uint32_t dst, const void* src, uint32_t bytes, uint32_t bar) {
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                 ::"r"(dst), "l"(src), "r"(bytes), "r"(bar) : "memory");
}

__device__ __forceinline__ void bulk_s2g(void* dst, uint32_t src, uint32_t bytes) {
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(dst), "r"(src), "r"(bytes) : "memory");
}

// The streaming kernels' work counter (a ticket, not a synchronisation: relaxed).
__device__ __forceinline__ uint32_t ticket(uint32_t* counter) {
    uint32_t old;
    asm volatile("atom.relaxed.gpu.global.add.u32 %0, [%1], 1;" : "=r"(old) : "l"(counter) : "memory");
    return old;
}

__device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }

template <int N>
__device__ __forceinline__ void bulk_wait_read() {
    asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
}

// ---------------------------------------------------------------- the ring state

// A side's cursor: stage and lap (producer starts on lap 1, consumer on lap 0).
template <int S>
struct Cursor {
    uint32_t stage, lap;
    __device__ __forceinline__ void step() {
        if (++stage == S) { stage = 0; ++lap; }
    }
};

// mbarrier ring: full[S] then empty[S] at the dynamic shared memory base.
template <int S>
struct MbarRing {
    uint32_t full, empty;
    __device__ __forceinline__ MbarRing() : full(shared_addr(smem)), empty(shared_addr(smem) + 8 * S) {}
    __device__ __forceinline__ void init(uint32_t p, uint32_t c) const {
        for (int s = 0; s < S; ++s) { mbar_init(full + 8 * s, p); mbar_init(empty + 8 * s, c); }
        fence_mbar_init();
    }
};

// Counter ring: 64-bit counters, counting in their low word, thresholds modulo 2^32, as the library's
// counter backend on NVIDIA (crates/gpu-pipeline/src/backend/counter.rs): an arrive syncs the arriving
// lanes of the warp; a full warp whose lanes all name lane 0's counter (shfl + vote.all) adds 32 from
// lane 0; otherwise the lanes that name the same counter (`match.any.sync`) are counted by their
// lowest with one `red.release.cta`; a lone lane adds 1 without a sync; a wait polls `ld.acquire.cta`
// with `nanosleep 0` between reads. `V` selects a variant arrive (see the variant table):
enum : uint32_t {
    V_PREV = 0x1,     // the library before each lane counted on its own counter: a full warp syncs and
                      // lane 0 adds 32, other masks add their count at the lowest lane (wrong when lanes
                      // name different counters: measurement only)
    V_MATCH = 0x2,    // a full warp always groups its lanes with match.any (no uniformity check first)
};

template <int S, uint32_t V = 0>
struct CounterRing {
    static constexpr uint32_t STRIDE = 8;
    uint32_t full, empty;
    __device__ __forceinline__ CounterRing() : full(shared_addr(smem)), empty(shared_addr(smem) + STRIDE * S) {}
    __device__ __forceinline__ void init() const {
        for (int i = 0; i < 2 * S; ++i) *reinterpret_cast<uint64_t*>(smem + STRIDE * i) = 0;
    }
    __device__ __forceinline__ static void add_grouped(uint32_t mask, uint32_t addr) {
        const uint32_t peers = match_any(mask, addr);
        const uint32_t share = (peers & lanemask_lt()) == 0 ? __popc(peers) : 0;
        if (share != 0) red_add_release(addr, share);
    }
    __device__ __forceinline__ static void arrive(uint32_t addr) {
        const uint32_t mask = __activemask();
        if ((mask & (mask - 1)) == 0) {
            red_add_release(addr, 1);
            return;
        }
        if (mask == 0xffffffffu) {
            bar_warp_sync_all();
            if (V & V_PREV) {
                if (laneid() == 0) red_add_release(addr, 32);
            } else if (V & V_MATCH) {
                add_grouped(0xffffffffu, addr);
            } else {
                const uint32_t first = __shfl_sync(0xffffffffu, addr, 0);
                if (__all_sync(0xffffffffu, addr == first)) {
                    if (laneid() == 0) red_add_release(addr, 32);
                } else {
                    add_grouped(0xffffffffu, addr);
                }
            }
            return;
        }
        bar_warp_sync(mask);
        if (V & V_PREV) {
            if ((mask & lanemask_lt()) == 0) red_add_release(addr, __popc(mask));
        } else {
            add_grouped(mask, addr);
        }
    }
    __device__ __forceinline__ static bool reached(uint32_t addr, uint32_t threshold) {
        return static_cast<int32_t>(ld_acquire(addr) - threshold) >= 0;
    }
    __device__ __forceinline__ static void wait(uint32_t addr, uint32_t threshold) {
        while (!reached(addr, threshold)) nanosleep0();
    }
};

// ---------------------------------------------------------------- round trips

enum { WAIT = 0, TICKS = 1, POLL = 2, SPIN = 3 };
constexpr uint32_t HINT_NS = 1000;

template <int MODE>
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t lap) {
    if (MODE == TICKS) { while (!mbar_try_wait_ticks(bar, lap & 1, HINT_NS)) {} }
    else if (MODE == POLL) { while (!mbar_try_wait(bar, lap & 1)) {} }
    else if (MODE == SPIN) { mbar_wait_spin(bar, lap & 1); }
    else { mbar_wait_parity(bar, lap & 1); }
}

template <int MODE, int U>
__device__ __forceinline__ void roundtrip_mbar(uint32_t iters, uint64_t* out) {
    MbarRing<1> ring;
    if (threadIdx.x == 0) ring.init(1, 1);
    __syncthreads();
    if (threadIdx.x == 0) {
        Cursor<1> c{0, 1};
        uint64_t start = clock64();
        repeat<U>(iters, [&] {
            mbar_wait<MODE>(ring.empty + 8 * c.stage, c.lap);
            mbar_arrive(ring.full + 8 * c.stage);
            c.step();
        });
        out[blockIdx.x] = clock64() - start;
    } else if (threadIdx.x == 32) {
        Cursor<1> c{0, 0};
        repeat<U>(iters, [&] {
            mbar_wait<MODE>(ring.full + 8 * c.stage, c.lap);
            mbar_arrive(ring.empty + 8 * c.stage);
            c.step();
        });
    }
}

template <uint32_t V, int U>
__device__ __forceinline__ void roundtrip_counter(uint32_t iters, uint64_t* out) {
    using Ring = CounterRing<1, V>;
    Ring ring;
    if (threadIdx.x == 0) ring.init();
    __syncthreads();
    if (threadIdx.x == 0) {
        Cursor<1> c{0, 1};
        uint64_t start = clock64();
        repeat<U>(iters, [&] {
            Ring::wait(ring.empty + Ring::STRIDE * c.stage, (c.lap - 1) * 1u);
            Ring::arrive(ring.full + Ring::STRIDE * c.stage);
            c.step();
        });
        out[blockIdx.x] = clock64() - start;
    } else if (threadIdx.x == 32) {
        Cursor<1> c{0, 0};
        repeat<U>(iters, [&] {
            Ring::wait(ring.full + Ring::STRIDE * c.stage, (c.lap + 1) * 1u);
            Ring::arrive(ring.empty + Ring::STRIDE * c.stage);
            c.step();
        });
    }
}

template <int U>
__device__ __forceinline__ void cluster_roundtrip(uint32_t iters, uint64_t* out) {
    MbarRing<1> ring;
    uint32_t rank = cluster_rank();
    if (threadIdx.x == 0) ring.init(1, 1);
    cluster_sync();
    if (threadIdx.x == 0 && rank == 0) {
        Cursor<1> c{0, 1};
        uint64_t start = clock64();
        repeat<U>(iters, [&] {
            while (!mbar_try_wait_cluster(ring.empty + 8 * c.stage, c.lap & 1)) {}
            mbar_arrive_remote(ring.full + 8 * c.stage, 1);
            c.step();
        });
        out[blockIdx.x / 2] = clock64() - start;
    } else if (threadIdx.x == 0 && rank == 1) {
        Cursor<1> c{0, 0};
        repeat<U>(iters, [&] {
            while (!mbar_try_wait_cluster(ring.full + 8 * c.stage, c.lap & 1)) {}
            mbar_arrive_remote(ring.empty + 8 * c.stage, 0);
            c.step();
        });
    }
    cluster_sync();
}

// Defines `NAME_flat` and `NAME_x4` from a kernel body template whose last parameter is the shape.
#define CYCLES(NAME, ...) \
    extern "C" __global__ void NAME##_flat(uint32_t iters, uint64_t* out) { __VA_ARGS__, FLAT>(iters, out); } \
    extern "C" __global__ void NAME##_x4(uint32_t iters, uint64_t* out) { __VA_ARGS__, X4>(iters, out); }

CYCLES(bench_roundtrip_mbar, roundtrip_mbar<WAIT)
CYCLES(bench_roundtrip_mbar_ticks, roundtrip_mbar<TICKS)
CYCLES(bench_roundtrip_mbar_poll, roundtrip_mbar<POLL)
CYCLES(bench_roundtrip_mbar_spin, roundtrip_mbar<SPIN)
CYCLES(bench_roundtrip_counter, roundtrip_counter<0)
extern "C" __global__ void bench_cluster_roundtrip_flat(uint32_t iters, uint64_t* out) { cluster_roundtrip<FLAT>(iters, out); }
extern "C" __global__ void bench_cluster_roundtrip_x4(uint32_t iters, uint64_t* out) { cluster_roundtrip<X4>(iters, out); }

// ---------------------------------------------------------------- sync-only rings

// Only lane 0 of each warp takes part (the other lanes return); per-thread: every lane arrives.
template <int S, int W, bool PER_THREAD, int U>
__device__ __forceinline__ void ring_mbar(uint32_t iters, uint64_t* out) {
    MbarRing<S> ring;
    if (threadIdx.x == 0) ring.init(PER_THREAD ? 32 : 1, PER_THREAD ? 32 * W : W);
    __syncthreads();
    if (!PER_THREAD && threadIdx.x % 32 != 0) return;
    if (threadIdx.x < 32) {
        Cursor<S> c{0, 1};
        uint64_t start = clock64();
        repeat<U>(iters, [&] {
            mbar_wait_parity(ring.empty + 8 * c.stage, c.lap & 1);
            mbar_arrive(ring.full + 8 * c.stage);
            c.step();
        });
        uint64_t cycles = clock64() - start;
        if (threadIdx.x == 0) out[blockIdx.x] = cycles;
    } else {
        Cursor<S> c{0, 0};
        repeat<U>(iters, [&] {
            mbar_wait_parity(ring.full + 8 * c.stage, c.lap & 1);
            mbar_arrive(ring.empty + 8 * c.stage);
            c.step();
        });
    }
}

template <int S, int W, bool PER_THREAD, uint32_t V, int U>
__device__ __forceinline__ void ring_counter(uint32_t iters, uint64_t* out) {
    using Ring = CounterRing<S, V>;
    Ring ring;
    const uint32_t p = PER_THREAD ? 32 : 1, cc = PER_THREAD ? 32 * W : W;
    if (threadIdx.x == 0) ring.init();
    __syncthreads();
    if (!PER_THREAD && threadIdx.x % 32 != 0) return;
    if (threadIdx.x < 32) {
        Cursor<S> c{0, 1};
        uint64_t start = clock64();
        repeat<U>(iters, [&] {
            Ring::wait(ring.empty + Ring::STRIDE * c.stage, (c.lap - 1) * cc);
            Ring::arrive(ring.full + Ring::STRIDE * c.stage);
            c.step();
        });
        uint64_t cycles = clock64() - start;
        if (threadIdx.x == 0) out[blockIdx.x] = cycles;
    } else {
        Cursor<S> c{0, 0};
        repeat<U>(iters, [&] {
            Ring::wait(ring.full + Ring::STRIDE * c.stage, (c.lap + 1) * p);
            Ring::arrive(ring.empty + Ring::STRIDE * c.stage);
            c.step();
        });
    }
}

#define RING_MBAR(S, W, MODE, PT) CYCLES(bench_ring_mbar_s##S##_c##W##_##MODE, ring_mbar<S, W, PT)
RING_MBAR(2, 1, warp, false)
RING_MBAR(4, 1, warp, false)
RING_MBAR(8, 1, warp, false)
RING_MBAR(2, 4, warp, false)
RING_MBAR(4, 4, warp, false)
RING_MBAR(8, 4, warp, false)
RING_MBAR(2, 1, thread, true)
RING_MBAR(4, 1, thread, true)
RING_MBAR(8, 1, thread, true)
RING_MBAR(2, 4, thread, true)
RING_MBAR(4, 4, thread, true)
RING_MBAR(8, 4, thread, true)

#define RING_COUNTER(S, W, MODE, PT) CYCLES(bench_ring_counter_s##S##_c##W##_##MODE, ring_counter<S, W, PT, 0)
RING_COUNTER(4, 1, warp, false)
RING_COUNTER(4, 4, warp, false)
RING_COUNTER(4, 1, thread, true)
RING_COUNTER(4, 4, thread, true)

// ---------------------------------------------------------------- elected-lane rings

// The most common arrival pattern of real kernels: every lane of a warp waits, one elected lane (lane
// 0) arrives. One producer warp (count 1), W consumer warps releasing per warp (lane 0, count W) or
// per thread (every lane, count 32 W). The Rust twins exist once per library API (handles, scopes,
// direct calls); raw PTX has one way to write it. `_warp_spin`: the same ring with the bare retry
// loop (mbar_wait_spin), for the wait-loop table.
template <int S, int W, bool PER_THREAD, bool SPIN_WAIT, int U>
__device__ __forceinline__ void elect_ring(uint32_t iters, uint64_t* out) {
    MbarRing<S> ring;
    if (threadIdx.x == 0) ring.init(1, PER_THREAD ? 32 * W : W);
    __syncthreads();
    const uint32_t lane = threadIdx.x % 32;
    if (threadIdx.x < 32) {
        Cursor<S> c{0, 1};
        uint64_t start = clock64();
        repeat<U>(iters, [&] {
            if (SPIN_WAIT) mbar_wait_spin(ring.empty + 8 * c.stage, c.lap & 1); else mbar_wait_parity(ring.empty + 8 * c.stage, c.lap & 1);
            if (lane == 0) mbar_arrive(ring.full + 8 * c.stage);
            c.step();
        });
        uint64_t cycles = clock64() - start;
        if (threadIdx.x == 0) out[blockIdx.x] = cycles;
    } else {
        Cursor<S> c{0, 0};
        repeat<U>(iters, [&] {
            if (SPIN_WAIT) mbar_wait_spin(ring.full + 8 * c.stage, c.lap & 1); else mbar_wait_parity(ring.full + 8 * c.stage, c.lap & 1);
            if (PER_THREAD || lane == 0) mbar_arrive(ring.empty + 8 * c.stage);
            c.step();
        });
    }
}

#define ELECT(S, W) \
    CYCLES(bench_elect_s##S##_c##W##_warp, elect_ring<S, W, false, false) \
    CYCLES(bench_elect_s##S##_c##W##_thread, elect_ring<S, W, true, false) \
    CYCLES(bench_elect_s##S##_c##W##_warp_spin, elect_ring<S, W, false, true)
ELECT(1, 1)
ELECT(2, 1)
ELECT(4, 1)
ELECT(8, 1)
ELECT(1, 4)
ELECT(2, 4)
ELECT(4, 4)
ELECT(8, 4)

// ---------------------------------------------------------------- counter-ring variants

// One variant of the counter ring (flags V_*) in the five shapes of the variant table: the round
// trip, and the 4-stage ring with 1 or 4 consumer warps, per-warp or per-thread arrivals; flat loops.
// The Rust twins (tests/kernels/src/bench/variants.rs) have the same names.
#define COUNTER_VARIANT(NAME, V) \
    extern "C" __global__ void var_##NAME##_rt(uint32_t iters, uint64_t* out) { roundtrip_counter<V, FLAT>(iters, out); } \
    extern "C" __global__ void var_##NAME##_c1_warp(uint32_t iters, uint64_t* out) { ring_counter<4, 1, false, V, FLAT>(iters, out); } \
    extern "C" __global__ void var_##NAME##_c4_warp(uint32_t iters, uint64_t* out) { ring_counter<4, 4, false, V, FLAT>(iters, out); } \
    extern "C" __global__ void var_##NAME##_c1_thread(uint32_t iters, uint64_t* out) { ring_counter<4, 1, true, V, FLAT>(iters, out); } \
    extern "C" __global__ void var_##NAME##_c4_thread(uint32_t iters, uint64_t* out) { ring_counter<4, 4, true, V, FLAT>(iters, out); }

COUNTER_VARIANT(prev, V_PREV)
COUNTER_VARIANT(match, V_MATCH)

// ---------------------------------------------------------------- streaming copy

// How the chunks of the copy are assigned to the CTAs: CTA b copies chunks [b n, (b + 1) n)
// (CONTIG), or chunks b, b + grid, b + 2 grid, ... (INTERLEAVED), or takes the next chunk from a
// global counter (DYNAMIC: the loader's `ticket(work)`, passed to the storers through a tag
// per stage; past the end, one sentinel stage per storer).
enum { CONTIG = 0, INTERLEAVED = 1, DYNAMIC = 2 };
constexpr uint32_t SENTINEL = 0xffffffffu;

// Shared memory: S full then S empty barriers, the DYNAMIC tags, rounded up to 128 bytes; the slots.
__host__ __device__ constexpr uint32_t stream_header(int S, int MODE) {
    return (16 * S + (MODE == DYNAMIC ? 4 * S : 0) + 127) / 128 * 128;
}

// Streaming copy through an S-stage ring of KIB KiB slots: thread 0 loads chunks with bulk copies
// (`arrive_expect_tx`, producer count 1); lane 0 of warps 1..W (the storers) take ring positions
// k, k + W, k + 2W, ..., store each with a bulk store, and release a stage once its store has read
// it, keeping PENDING further stores of their own in flight (`cp.async.bulk.wait_group.read
// PENDING`). Needs PENDING * W < S (a stage is released before the loader needs it again) and S a
// multiple of W: then the position a storer waits on one lap earlier in the same stage was its own,
// so the full barrier is never two phases behind its wait (mbarrier parity would alias: with S = 6
// and W = 4 a storer passed a wait early and the kernel hung on the H200).
template <int S, int KIB, int PENDING, int MODE, int W>
__device__ __forceinline__ void stream(const uint8_t* src, uint8_t* dst, uint64_t bytes_per_block, uint32_t* work) {
    static_assert(PENDING * W < S, "a storer must release a stage before the loader needs it again");
    static_assert(S % W == 0, "each stage must belong to one storer (mbarrier parity)");
    constexpr uint32_t CHUNK = KIB * 1024;
    MbarRing<S> ring;
    const uint32_t chunks = static_cast<uint32_t>(bytes_per_block / CHUNK);
    const uint32_t total = chunks * gridDim.x;
    const uint32_t slots = shared_addr(smem) + stream_header(S, MODE);
    uint32_t* tags = reinterpret_cast<uint32_t*>(smem + 16 * S);
    auto chunk_of = [&](uint32_t i) { return MODE == INTERLEAVED ? i * gridDim.x + blockIdx.x : blockIdx.x * chunks + i; };
    if (threadIdx.x == 0) ring.init(1, 1);
    __syncthreads();
    if (threadIdx.x == 0) {
        Cursor<S> c{0, 1};
        if (MODE == DYNAMIC) {
            uint32_t next = ticket(work), sentinels = 0;
            while (sentinels < uint32_t(W)) {
                const uint32_t idx = next;
                if (idx < total) next = ticket(work);
                mbar_wait_parity(ring.empty + 8 * c.stage, c.lap & 1);
                const uint32_t bar = ring.full + 8 * c.stage;
                if (idx < total) {
                    tags[c.stage] = idx;
                    mbar_arrive_expect_tx(bar, CHUNK);
                    bulk_g2s(slots + c.stage * CHUNK, src + uint64_t(idx) * CHUNK, CHUNK, bar);
                } else {
                    tags[c.stage] = SENTINEL;
                    mbar_arrive(bar);
                    ++sentinels;
                }
                c.step();
            }
        } else {
            for (uint32_t i = 0; i < chunks; ++i) {
                mbar_wait_parity(ring.empty + 8 * c.stage, c.lap & 1);
                const uint32_t bar = ring.full + 8 * c.stage;
                mbar_arrive_expect_tx(bar, CHUNK);
                bulk_g2s(slots + c.stage * CHUNK, src + uint64_t(chunk_of(i)) * CHUNK, CHUNK, bar);
                c.step();
            }
        }
    } else if (threadIdx.x % 32 == 0 && threadIdx.x / 32 <= W) {
        const uint32_t k = threadIdx.x / 32 - 1;
        Cursor<S> c{0, 0};
        for (uint32_t j = 0; j < k; ++j) c.step();
        uint32_t pos = k, stored = 0;
        for (;;) {
            if (MODE != DYNAMIC && pos >= chunks) break;
            mbar_wait_parity(ring.full + 8 * c.stage, c.lap & 1);
            uint32_t idx;
            if (MODE == DYNAMIC) {
                idx = tags[c.stage];
                if (idx == SENTINEL) break;
            } else {
                idx = chunk_of(pos);
            }
            bulk_s2g(dst + uint64_t(idx) * CHUNK, slots + c.stage * CHUNK, CHUNK);
            bulk_commit();
            if (++stored > uint32_t(PENDING)) {
                // The store PENDING positions back has read its stage: release it.
                bulk_wait_read<PENDING>();
                mbar_arrive(ring.empty + 8 * ((pos - PENDING * W) % S));
            }
            pos += W;
            for (int j = 0; j < W; ++j) c.step();
        }
        bulk_wait_read<0>();
        for (uint32_t j = 1; j <= (stored < uint32_t(PENDING) ? stored : uint32_t(PENDING)); ++j)
            mbar_arrive(ring.empty + 8 * ((pos - j * W) % S));
    }
}

// The streaming kernels: stages, KiB per stage, stores in flight past the one being released, chunk
// assignment (c, i, d), storers.
#define STREAM(NAME, S, K, P, MODE, W) \
    extern "C" __global__ void bench_stream_##NAME(const uint8_t* src, uint8_t* dst, uint64_t bytes, uint32_t* work) { \
        stream<S, K, P, MODE, W>(src, dst, bytes, work); \
    }
STREAM(s2_k8, 2, 8, 1, CONTIG, 1)
STREAM(s2_k16, 2, 16, 1, CONTIG, 1)
STREAM(s2_k32, 2, 32, 1, CONTIG, 1)
STREAM(s2_k64, 2, 64, 1, CONTIG, 1)
STREAM(s4_k8, 4, 8, 1, CONTIG, 1)
STREAM(s4_k16, 4, 16, 1, CONTIG, 1)
STREAM(s4_k32, 4, 32, 1, CONTIG, 1)
STREAM(s8_k8, 8, 8, 1, CONTIG, 1)
STREAM(s8_k16, 8, 16, 1, CONTIG, 1)
// Deeper store pipelining (more stores in flight per storer), larger rings.
STREAM(s4_k32_p2, 4, 32, 2, CONTIG, 1)
STREAM(s4_k32_p3, 4, 32, 3, CONTIG, 1)
STREAM(s8_k16_p3, 8, 16, 3, CONTIG, 1)
STREAM(s8_k16_p6, 8, 16, 6, CONTIG, 1)
STREAM(s3_k64_p1, 3, 64, 1, CONTIG, 1)
STREAM(s3_k64_p2, 3, 64, 2, CONTIG, 1)
STREAM(s6_k32_p2, 6, 32, 2, CONTIG, 1)
STREAM(s6_k32_p4, 6, 32, 4, CONTIG, 1)
STREAM(s7_k32_p3, 7, 32, 3, CONTIG, 1)
STREAM(s14_k16_p6, 14, 16, 6, CONTIG, 1)
// Interleaved chunks.
STREAM(s4_k32_p1_i, 4, 32, 1, INTERLEAVED, 1)
STREAM(s6_k32_p2_i, 6, 32, 2, INTERLEAVED, 1)
STREAM(s8_k16_p3_i, 8, 16, 3, INTERLEAVED, 1)
STREAM(s3_k64_p1_i, 3, 64, 1, INTERLEAVED, 1)
// Dynamic chunks.
STREAM(s4_k32_p1_d, 4, 32, 1, DYNAMIC, 1)
STREAM(s6_k32_p2_d, 6, 32, 2, DYNAMIC, 1)
STREAM(s8_k16_p3_d, 8, 16, 3, DYNAMIC, 1)
STREAM(s3_k64_p1_d, 3, 64, 1, DYNAMIC, 1)
STREAM(s7_k32_p3_d, 7, 32, 3, DYNAMIC, 1)
// Small enough for two CTAs per SM (the harness launches those rows with twice the grid).
STREAM(s3_k32_p1, 3, 32, 1, CONTIG, 1)
STREAM(s3_k32_p1_i, 3, 32, 1, INTERLEAVED, 1)
STREAM(s3_k32_p1_d, 3, 32, 1, DYNAMIC, 1)
STREAM(s6_k16_p2, 6, 16, 2, CONTIG, 1)
STREAM(s6_k16_p2_d, 6, 16, 2, DYNAMIC, 1)
STREAM(s7_k16_p3_d, 7, 16, 3, DYNAMIC, 1)
// Three and four CTAs per SM.
STREAM(s4_k16_p2_d, 4, 16, 2, DYNAMIC, 1)
STREAM(s3_k16_p1_d, 3, 16, 1, DYNAMIC, 1)
// Several storers.
STREAM(s6_k32_p1_w2, 6, 32, 1, CONTIG, 2)
STREAM(s8_k16_p2_w2, 8, 16, 2, CONTIG, 2)
STREAM(s6_k32_p1_d_w2, 6, 32, 1, DYNAMIC, 2)
STREAM(s8_k16_p1_d_w4, 8, 16, 1, DYNAMIC, 4)
// Dynamic chunks and several storers, around the best of the first run.
STREAM(s8_k16_p1_d_w2, 8, 16, 1, DYNAMIC, 2)
STREAM(s8_k8_p1_d_w4, 8, 8, 1, DYNAMIC, 4)
STREAM(s12_k16_p2_d_w4, 12, 16, 2, DYNAMIC, 4)
STREAM(s16_k8_p1_d_w4, 16, 8, 1, DYNAMIC, 4)
STREAM(s8_k16_p0_d_w4, 8, 16, 0, DYNAMIC, 4)
STREAM(s4_k16_p1_d_w2, 4, 16, 1, DYNAMIC, 2)
