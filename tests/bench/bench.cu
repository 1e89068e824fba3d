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

__device__ __forceinline__ void bulk_g2s(uint32_t dst, const void* src, uint32_t bytes, uint32_t bar) {
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                 ::"r"(dst), "l"(src), "r"(bytes), "r"(bar) : "memory");
}

__device__ __forceinline__ void bulk_s2g(void* dst, uint32_t src, uint32_t bytes) {
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(dst), "r"(src), "r"(bytes) : "memory");
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

// Counter ring: 64-bit counters, counting in their low word, thresholds modulo 2^32.
template <int S>
struct CounterRing {
    uint32_t full, empty;
    __device__ __forceinline__ CounterRing() : full(shared_addr(smem)), empty(shared_addr(smem) + 8 * S) {}
    __device__ __forceinline__ void init() const {
        for (int i = 0; i < 2 * S; ++i) reinterpret_cast<uint64_t*>(smem)[i] = 0;
    }
    // The arriving lanes of the warp are counted in one atomic by the lowest of them.
    __device__ __forceinline__ static void arrive(uint32_t addr) {
        uint32_t mask = __activemask();
        __syncwarp(mask);
        uint32_t lt;
        asm volatile("mov.u32 %0, %%lanemask_lt;" : "=r"(lt));
        if ((mask & lt) == 0) red_add_release(addr, __popc(mask));
    }
    __device__ __forceinline__ static void wait(uint32_t addr, uint32_t threshold) {
        while (static_cast<int32_t>(ld_acquire(addr) - threshold) < 0) {}
    }
};

// ---------------------------------------------------------------- round trips

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

extern "C" __global__ void bench_roundtrip_mbar(uint32_t iters, uint64_t* out) { roundtrip_mbar<PLAIN>(iters, out); }
extern "C" __global__ void bench_roundtrip_mbar_ticks(uint32_t iters, uint64_t* out) { roundtrip_mbar<TICKS>(iters, out); }
extern "C" __global__ void bench_roundtrip_mbar_poll(uint32_t iters, uint64_t* out) { roundtrip_mbar<POLL>(iters, out); }

extern "C" __global__ void bench_roundtrip_counter(uint32_t iters, uint64_t* out) {
    CounterRing<1> ring;
    if (threadIdx.x == 0) ring.init();
    __syncthreads();
    if (threadIdx.x == 0) {
        Cursor<1> c{0, 1};
        uint64_t start = clock64();
        for (uint32_t i = 0; i < iters; ++i) {
            CounterRing<1>::wait(ring.empty + 8 * c.stage, (c.lap - 1) * 1u);
            CounterRing<1>::arrive(ring.full + 8 * c.stage);
            c.step();
        }
        out[blockIdx.x] = clock64() - start;
    } else if (threadIdx.x == 32) {
        Cursor<1> c{0, 0};
        for (uint32_t i = 0; i < iters; ++i) {
            CounterRing<1>::wait(ring.full + 8 * c.stage, (c.lap + 1) * 1u);
            CounterRing<1>::arrive(ring.empty + 8 * c.stage);
            c.step();
        }
    }
}

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

template <int S, int W, bool PER_THREAD>
__device__ __forceinline__ void ring_counter(uint32_t iters, uint64_t* out) {
    CounterRing<S> ring;
    const uint32_t p = PER_THREAD ? 32 : 1, cc = PER_THREAD ? 32 * W : W;
    if (threadIdx.x == 0) ring.init();
    __syncthreads();
    if (!PER_THREAD && threadIdx.x % 32 != 0) return;
    if (threadIdx.x < 32) {
        Cursor<S> c{0, 1};
        uint64_t start = clock64();
        for (uint32_t i = 0; i < iters; ++i) {
            CounterRing<S>::wait(ring.empty + 8 * c.stage, (c.lap - 1) * cc);
            CounterRing<S>::arrive(ring.full + 8 * c.stage);
            c.step();
        }
        uint64_t cycles = clock64() - start;
        if (threadIdx.x == 0) out[blockIdx.x] = cycles;
    } else {
        Cursor<S> c{0, 0};
        for (uint32_t i = 0; i < iters; ++i) {
            CounterRing<S>::wait(ring.full + 8 * c.stage, (c.lap + 1) * p);
            CounterRing<S>::arrive(ring.empty + 8 * c.stage);
            c.step();
        }
    }
}

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

// ---------------------------------------------------------------- streaming copy

template <int S, int KIB>
__device__ __forceinline__ void stream(const uint8_t* src, uint8_t* dst, uint64_t bytes_per_block) {
    constexpr uint32_t CHUNK = KIB * 1024;
    MbarRing<S> ring;
    const uint64_t base = blockIdx.x * bytes_per_block;
    const uint32_t chunks = static_cast<uint32_t>(bytes_per_block / CHUNK);
    const uint32_t slots = shared_addr(smem) + 128;
    if (threadIdx.x == 0) ring.init(1, 1);
    __syncthreads();
    if (threadIdx.x == 0) {
        Cursor<S> c{0, 1};
        for (uint32_t i = 0; i < chunks; ++i) {
            while (!mbar_try_wait(ring.empty + 8 * c.stage, c.lap & 1)) {}
            uint32_t bar = ring.full + 8 * c.stage;
            mbar_arrive_expect_tx(bar, CHUNK);
            bulk_g2s(slots + c.stage * CHUNK, src + base + uint64_t(i) * CHUNK, CHUNK, bar);
            c.step();
        }
    } else if (threadIdx.x == 32) {
        Cursor<S> c{0, 0};
        int previous = -1;
        for (uint32_t i = 0; i < chunks; ++i) {
            while (!mbar_try_wait(ring.full + 8 * c.stage, c.lap & 1)) {}
            bulk_s2g(dst + base + uint64_t(i) * CHUNK, slots + c.stage * CHUNK, CHUNK);
            bulk_commit();
            if (previous >= 0) {
                bulk_wait_read<1>();
                mbar_arrive(ring.empty + 8 * previous);
            }
            previous = c.stage;
            c.step();
        }
        bulk_wait_read<0>();
        if (previous >= 0) mbar_arrive(ring.empty + 8 * previous);
    }
}

#define STREAM(S, K) \
    extern "C" __global__ void bench_stream_s##S##_k##K(const uint8_t* src, uint8_t* dst, uint64_t bytes) { stream<S, K>(src, dst, bytes); }
STREAM(2, 8)
STREAM(2, 16)
STREAM(2, 32)
STREAM(2, 64)
STREAM(4, 8)
STREAM(4, 16)
STREAM(4, 32)
STREAM(8, 8)
STREAM(8, 16)
