# cuBLAS's choice per shape, under ncu: torch's F.linear (x [M,K] times W [N,K]^T, bf16), three
# calls per shape, a spin kernel of a distinct length before each shape as its marker.
import sys, torch, torch.nn.functional as F
shapes = [tuple(int(v) for v in s.split("x")) for s in sys.argv[1].split(",")]
g = torch.Generator(device="cuda").manual_seed(1)
data = [(torch.randn(m, k, device="cuda", dtype=torch.bfloat16, generator=g),
         torch.randn(n, k, device="cuda", dtype=torch.bfloat16, generator=g)) for m, n, k in shapes]
torch.cuda.synchronize()
for i, ((m, n, k), (x, w)) in enumerate(zip(shapes, data)):
    torch.cuda._sleep(1000 * (i + 1))
    for _ in range(3):
        F.linear(x, w)
    torch.cuda.synchronize()
    print(f"shape {i} {m}x{n}x{k}", flush=True)
