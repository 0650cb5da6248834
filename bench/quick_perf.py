"""Quick timing of tiled-attn against PyTorch SDPA on a few configurations
(the full grid is bench_sdpa.py). Median of CUDA-event timings after warm-up."""
import sys, torch
sys.path.insert(0, "python")
from tiled_attn import sdpa
import torch.nn.functional as F

def bench(fn, reps=30):
    for _ in range(5):
        fn()
    ts = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); fn(); b.record(); torch.cuda.synchronize()
        ts.append(a.elapsed_time(b))
    ts.sort()
    return ts[len(ts) // 2]

print(torch.cuda.get_device_name())
for dt in (torch.float16, torch.bfloat16):
    for D in (64, 128):
        for causal in (False, True):
            S = 4096; H = 2048 // D; B = 16384 // S
            q, k, v = (torch.randn(B, H, S, D, device="cuda", dtype=dt) for _ in range(3))
            flops = 4 * B * H * S * S * D / (2 if causal else 1)
            t1 = bench(lambda: sdpa(q, k, v, causal=causal))
            t2 = bench(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal))
            print(f"{str(dt)[6:]:8} D={D} causal={int(causal)} S={S}: tiled-attn {flops/t1/1e9:6.1f} TFLOP/s  torch {flops/t2/1e9:6.1f}")
