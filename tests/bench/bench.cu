// The CUDA C++ twins of the Rust benchmark kernels (tests/kernels/src/bench.rs): the same names,
// launch shapes and algorithms, written by hand with raw inline PTX and no library, as a user of
// mbarrier would write them. Compiled on the GPU machine by `nvcc -arch=sm_90a -cubin -O3`
// (see the bench bundle's run script) and loaded by the bench harness next to the Rust PTX.
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

// The forms the counter-ring variants compare (see "counter-ring variants" below).
__device__ __forceinline__ void red_add_relaxed(uint32_t addr, uint32_t n) {
    asm volatile("red.relaxed.cta.shared.add.u32 [%0], %1;" ::"r"(addr), "r"(n) : "memory");
}

__device__ __forceinline__ void atom_add_release(uint32_t addr, uint32_t n) {
    uint32_t old;
    asm volatile("atom.release.cta.shared.add.u32 %0, [%1], %2;" : "=r"(old) : "r"(addr), "r"(n) : "memory");
}

__device__ __forceinline__ uint32_t ld_relaxed(uint32_t addr) {
    uint32_t v;
    asm volatile("ld.relaxed.cta.shared.u32 %0, [%1];" : "=r"(v) : "r"(addr) : "memory");
    return v;
}

__device__ __forceinline__ void st_release(uint32_t addr, uint32_t v) {
    asm volatile("st.release.cta.shared.u32 [%0], %1;" ::"r"(addr), "r"(v) : "memory");
}

__device__ __forceinline__ void fence_acq_rel_cta() { asm volatile("fence.acq_rel.cta;" ::: "memory"); }
__device__ __forceinline__ void fence_sc_cta() { asm volatile("fence.sc.cta;" ::: "memory"); }
#if defined(BENCH_ONLY_RESTRICT)
// PTX ISA 8.6, sm_90: a release fence whose effect is restricted to .shared::cta operations.
__device__ __forceinline__ void fence_release_shared_cta() {
    asm volatile("fence.release.sync_restrict::shared::cta.cluster;" ::: "memory");
}
#endif
#if defined(BENCH_ONLY_FENCE_RELEASE)
// PTX ISA 8.6, sm_90: the release-only fence.
__device__ __forceinline__ void fence_release_cta() { asm volatile("fence.release.cta;" ::: "memory"); }
#endif

__device__ __forceinline__ void bar_warp_sync_all() { asm volatile("bar.warp.sync 0xffffffff;" ::: "memory"); }

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

// Counter ring: 64-bit counters, counting in their low word, thresholds modulo 2^32. `V` selects the
// arrive and wait forms (V_* below). V = 0 is the library's first algorithm: the arriving lanes of a
// warp sync on their run-time mask and the lowest of them adds their count with `red.release.cta`;
// waits spin on `ld.acquire.cta`. The library now uses V_LIBRARY.
enum : uint32_t {
    V_CMASK = 0x1,             // constant-mask paths: a full warp syncs with 0xffffffff and lane 0 adds
                               // 32; a lone lane adds 1 without a warp sync; other masks as V = 0
    V_REL = 0xf0,              // how the add releases:
    V_REL_RED = 0x00,          //   red.release.cta
    V_REL_FENCE = 0x10,        //   fence.acq_rel.cta; red.relaxed.cta
    V_REL_ATOM = 0x20,         //   atom.release.cta (result unused)
    V_REL_NONE = 0x30,         //   red.relaxed.cta, no fence: NOT a release, measurement only
    V_REL_SC = 0x40,           //   fence.sc.cta; red.relaxed.cta
    V_REL_RESTRICT = 0x50,     //   fence.release.sync_restrict::shared::cta.cluster; red.relaxed.cta (PTX 8.6)
    V_REL_FENCE_RELEASE = 0x60,//   fence.release.cta; red.relaxed.cta (PTX 8.6)
    V_REL_STORE = 0x70,        //   ld.relaxed.cta; st.release.cta of the sum: ONE arriving warp per
                               //   counter only (not a counter backend: measures the atomic's cost)
                               // how a wait polls (default: ld.acquire.cta until reached):
    V_POLL_RELAXED = 0x100,    //   ld.relaxed.cta until reached, then fence.acq_rel.cta
    V_POLL_SLEEP0 = 0x200,     //   nanosleep 0 after each miss
    V_PAD = 0x1000,            // each counter in its own 128-byte line (default: 8 bytes apart)
};

// The library's counter backend on NVIDIA (crates/gpu-pipeline/src/backend/counter.rs).
constexpr uint32_t V_LIBRARY = V_CMASK | V_POLL_SLEEP0;

template <int S, uint32_t V = V_LIBRARY>
struct CounterRing {
    static constexpr uint32_t STRIDE = (V & V_PAD) ? 128 : 8;
    uint32_t full, empty;
    __device__ __forceinline__ CounterRing() : full(shared_addr(smem)), empty(shared_addr(smem) + STRIDE * S) {}
    __device__ __forceinline__ void init() const {
        for (int i = 0; i < 2 * S; ++i) *reinterpret_cast<uint64_t*>(smem + STRIDE * i) = 0;
    }
    __device__ __forceinline__ static void add(uint32_t addr, uint32_t n) {
        switch (V & V_REL) {
        case V_REL_FENCE: fence_acq_rel_cta(); red_add_relaxed(addr, n); break;
        case V_REL_ATOM: atom_add_release(addr, n); break;
        case V_REL_NONE: red_add_relaxed(addr, n); break;
        case V_REL_SC: fence_sc_cta(); red_add_relaxed(addr, n); break;
#if defined(BENCH_ONLY_RESTRICT)
        case V_REL_RESTRICT: fence_release_shared_cta(); red_add_relaxed(addr, n); break;
#endif
#if defined(BENCH_ONLY_FENCE_RELEASE)
        case V_REL_FENCE_RELEASE: fence_release_cta(); red_add_relaxed(addr, n); break;
#endif
        case V_REL_STORE: st_release(addr, ld_relaxed(addr) + n); break;
        default: red_add_release(addr, n); break;
        }
    }
    // The arriving lanes of the warp are counted in one atomic by the lowest of them.
    __device__ __forceinline__ static void arrive(uint32_t addr) {
        uint32_t mask = __activemask();
        if (V & V_CMASK) {
            if (mask == 0xffffffffu) {
                bar_warp_sync_all();
                if (laneid() == 0) add(addr, 32);
                return;
            }
            if ((mask & (mask - 1)) == 0) {
                add(addr, 1);
                return;
            }
        }
        __syncwarp(mask);
        if ((mask & lanemask_lt()) == 0) add(addr, __popc(mask));
    }
    __device__ __forceinline__ static bool reached(uint32_t addr, uint32_t threshold) {
        const uint32_t value = (V & V_POLL_RELAXED) ? ld_relaxed(addr) : ld_acquire(addr);
        return static_cast<int32_t>(value - threshold) >= 0;
    }
    __device__ __forceinline__ static void wait(uint32_t addr, uint32_t threshold) {
        while (!reached(addr, threshold)) {
            if (V & V_POLL_SLEEP0) nanosleep0();
        }
        if (V & V_POLL_RELAXED) fence_acq_rel_cta();
    }
};

// ---------------------------------------------------------------- round trips

// The main module holds every kernel below; `-DBENCH_ONLY_RESTRICT` or `-DBENCH_ONLY_FENCE_RELEASE`
// builds only the counter variants that need PTX ISA 8.6, each into its own cubin, so that a ptxas
// without those forms loses only them.
#if !defined(BENCH_ONLY_RESTRICT) && !defined(BENCH_ONLY_FENCE_RELEASE)
#define BENCH_MAIN 1
#endif

enum { PLAIN = 0, TICKS = 1, POLL = 2 };
constexpr uint32_t HINT_NS = 1000;

template <int MODE>
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t lap) {
    if (MODE == TICKS) { while (!mbar_try_wait_ticks(bar, lap & 1, HINT_NS)) {} }
    else { while (!mbar_try_wait(bar, lap & 1)) {} }
}

template <int MODE>
__device__ __forceinline__ void roundtrip_mbar(uint32_t iters, uint64_t* out) {
    MbarRing<1> ring;
    if (threadIdx.x == 0) ring.init(1, 1);
    __syncthreads();
    if (threadIdx.x == 0) {
        Cursor<1> c{0, 1};
        uint64_t start = clock64();
        for (uint32_t i = 0; i < iters; ++i) {
            mbar_wait<MODE>(ring.empty + 8 * c.stage, c.lap);
            mbar_arrive(ring.full + 8 * c.stage);
            c.step();
        }
        out[blockIdx.x] = clock64() - start;
    } else if (threadIdx.x == 32) {
        Cursor<1> c{0, 0};
        for (uint32_t i = 0; i < iters; ++i) {
            mbar_wait<MODE>(ring.full + 8 * c.stage, c.lap);
            mbar_arrive(ring.empty + 8 * c.stage);
            c.step();
        }
    }
}

template <uint32_t V>
__device__ __forceinline__ void roundtrip_counter(uint32_t iters, uint64_t* out) {
    using Ring = CounterRing<1, V>;
    Ring ring;
    if (threadIdx.x == 0) ring.init();
    __syncthreads();
    if (threadIdx.x == 0) {
        Cursor<1> c{0, 1};
        uint64_t start = clock64();
        for (uint32_t i = 0; i < iters; ++i) {
            Ring::wait(ring.empty + Ring::STRIDE * c.stage, (c.lap - 1) * 1u);
            Ring::arrive(ring.full + Ring::STRIDE * c.stage);
            c.step();
        }
        out[blockIdx.x] = clock64() - start;
    } else if (threadIdx.x == 32) {
        Cursor<1> c{0, 0};
        for (uint32_t i = 0; i < iters; ++i) {
            Ring::wait(ring.full + Ring::STRIDE * c.stage, (c.lap + 1) * 1u);
            Ring::arrive(ring.empty + Ring::STRIDE * c.stage);
            c.step();
        }
    }
}

#ifdef BENCH_MAIN
extern "C" __global__ void bench_roundtrip_mbar(uint32_t iters, uint64_t* out) { roundtrip_mbar<PLAIN>(iters, out); }
extern "C" __global__ void bench_roundtrip_mbar_ticks(uint32_t iters, uint64_t* out) { roundtrip_mbar<TICKS>(iters, out); }
extern "C" __global__ void bench_roundtrip_mbar_poll(uint32_t iters, uint64_t* out) { roundtrip_mbar<POLL>(iters, out); }
extern "C" __global__ void bench_roundtrip_counter(uint32_t iters, uint64_t* out) { roundtrip_counter<V_LIBRARY>(iters, out); }

extern "C" __global__ void bench_cluster_roundtrip(uint32_t iters, uint64_t* out) {
    MbarRing<1> ring;
    uint32_t rank = cluster_rank();
    if (threadIdx.x == 0) ring.init(1, 1);
    cluster_sync();
    if (threadIdx.x == 0 && rank == 0) {
        Cursor<1> c{0, 1};
        uint64_t start = clock64();
        for (uint32_t i = 0; i < iters; ++i) {
            while (!mbar_try_wait_cluster(ring.empty + 8 * c.stage, c.lap & 1)) {}
            mbar_arrive_remote(ring.full + 8 * c.stage, 1);
            c.step();
        }
        out[blockIdx.x / 2] = clock64() - start;
    } else if (threadIdx.x == 0 && rank == 1) {
        Cursor<1> c{0, 0};
        for (uint32_t i = 0; i < iters; ++i) {
            while (!mbar_try_wait_cluster(ring.full + 8 * c.stage, c.lap & 1)) {}
            mbar_arrive_remote(ring.empty + 8 * c.stage, 0);
            c.step();
        }
    }
    cluster_sync();
}
#endif

// ---------------------------------------------------------------- sync-only rings

template <int S, int W, bool PER_THREAD>
__device__ __forceinline__ void ring_mbar(uint32_t iters, uint64_t* out) {
    MbarRing<S> ring;
    if (threadIdx.x == 0) ring.init(PER_THREAD ? 32 : 1, PER_THREAD ? 32 * W : W);
    __syncthreads();
    if (!PER_THREAD && threadIdx.x % 32 != 0) return;
    if (threadIdx.x < 32) {
        Cursor<S> c{0, 1};
        uint64_t start = clock64();
        for (uint32_t i = 0; i < iters; ++i) {
            while (!mbar_try_wait(ring.empty + 8 * c.stage, c.lap & 1)) {}
            mbar_arrive(ring.full + 8 * c.stage);
            c.step();
        }
        uint64_t cycles = clock64() - start;
        if (threadIdx.x == 0) out[blockIdx.x] = cycles;
    } else {
        Cursor<S> c{0, 0};
        for (uint32_t i = 0; i < iters; ++i) {
            while (!mbar_try_wait(ring.full + 8 * c.stage, c.lap & 1)) {}
            mbar_arrive(ring.empty + 8 * c.stage);
            c.step();
        }
    }
}

template <int S, int W, bool PER_THREAD, uint32_t V = V_LIBRARY>
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
        for (uint32_t i = 0; i < iters; ++i) {
            Ring::wait(ring.empty + Ring::STRIDE * c.stage, (c.lap - 1) * cc);
            Ring::arrive(ring.full + Ring::STRIDE * c.stage);
            c.step();
        }
        uint64_t cycles = clock64() - start;
        if (threadIdx.x == 0) out[blockIdx.x] = cycles;
    } else {
        Cursor<S> c{0, 0};
        for (uint32_t i = 0; i < iters; ++i) {
            Ring::wait(ring.full + Ring::STRIDE * c.stage, (c.lap + 1) * p);
            Ring::arrive(ring.empty + Ring::STRIDE * c.stage);
            c.step();
        }
    }
}

#ifdef BENCH_MAIN
#define RING_MBAR(S, W, MODE, PT) \
    extern "C" __global__ void bench_ring_mbar_s##S##_c##W##_##MODE(uint32_t iters, uint64_t* out) { ring_mbar<S, W, PT>(iters, out); }
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

#define RING_COUNTER(S, W, MODE, PT) \
    extern "C" __global__ void bench_ring_counter_s##S##_c##W##_##MODE(uint32_t iters, uint64_t* out) { ring_counter<S, W, PT>(iters, out); }
RING_COUNTER(4, 1, warp, false)
RING_COUNTER(4, 4, warp, false)
RING_COUNTER(4, 1, thread, true)
RING_COUNTER(4, 4, thread, true)
#endif

// ---------------------------------------------------------------- counter-ring variants

// One variant of the counter ring (flags V_*) in the five shapes of the variant table: the round
// trip, and the 4-stage ring with 1 or 4 consumer warps, per-warp or per-thread arrivals. The Rust
// twins (tests/kernels/src/bench/variants.rs) have the same names.
#define COUNTER_VARIANT(NAME, V) \
    extern "C" __global__ void var_##NAME##_rt(uint32_t iters, uint64_t* out) { roundtrip_counter<V>(iters, out); } \
    extern "C" __global__ void var_##NAME##_c1_warp(uint32_t iters, uint64_t* out) { ring_counter<4, 1, false, V>(iters, out); } \
    extern "C" __global__ void var_##NAME##_c4_warp(uint32_t iters, uint64_t* out) { ring_counter<4, 4, false, V>(iters, out); } \
    extern "C" __global__ void var_##NAME##_c1_thread(uint32_t iters, uint64_t* out) { ring_counter<4, 1, true, V>(iters, out); } \
    extern "C" __global__ void var_##NAME##_c4_thread(uint32_t iters, uint64_t* out) { ring_counter<4, 4, true, V>(iters, out); }

#ifdef BENCH_MAIN
COUNTER_VARIANT(old, 0)
COUNTER_VARIANT(nofence, V_REL_NONE)
COUNTER_VARIANT(cmask, V_CMASK)
COUNTER_VARIANT(cmask_fence, V_CMASK | V_REL_FENCE)
COUNTER_VARIANT(cmask_sc, V_CMASK | V_REL_SC)
COUNTER_VARIANT(cmask_atom, V_CMASK | V_REL_ATOM)
COUNTER_VARIANT(cmask_ldrelaxed, V_CMASK | V_POLL_RELAXED)
COUNTER_VARIANT(cmask_sleep0, V_CMASK | V_POLL_SLEEP0)
COUNTER_VARIANT(cmask_pad, V_CMASK | V_PAD)
COUNTER_VARIANT(cmask_nofence, V_CMASK | V_REL_NONE)
COUNTER_VARIANT(sleep0_ldrelaxed, V_CMASK | V_POLL_SLEEP0 | V_POLL_RELAXED)
COUNTER_VARIANT(sleep0_nofence, V_CMASK | V_POLL_SLEEP0 | V_REL_NONE)
// One arriving warp per counter only: no 4-consumer-warp shapes.
extern "C" __global__ void var_sleep0_store_rt(uint32_t iters, uint64_t* out) {
    roundtrip_counter<V_CMASK | V_POLL_SLEEP0 | V_REL_STORE>(iters, out);
}
extern "C" __global__ void var_sleep0_store_c1_warp(uint32_t iters, uint64_t* out) {
    ring_counter<4, 1, false, V_CMASK | V_POLL_SLEEP0 | V_REL_STORE>(iters, out);
}
extern "C" __global__ void var_sleep0_store_c1_thread(uint32_t iters, uint64_t* out) {
    ring_counter<4, 1, true, V_CMASK | V_POLL_SLEEP0 | V_REL_STORE>(iters, out);
}
#endif
#if defined(BENCH_ONLY_RESTRICT)
COUNTER_VARIANT(cmask_restrict, V_CMASK | V_REL_RESTRICT)
#endif
#if defined(BENCH_ONLY_FENCE_RELEASE)
COUNTER_VARIANT(cmask_frelease, V_CMASK | V_REL_FENCE_RELEASE)
#endif

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
                while (!mbar_try_wait(ring.empty + 8 * c.stage, c.lap & 1)) {}
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
                while (!mbar_try_wait(ring.empty + 8 * c.stage, c.lap & 1)) {}
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
            while (!mbar_try_wait(ring.full + 8 * c.stage, c.lap & 1)) {}
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
#ifdef BENCH_MAIN
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
#endif
