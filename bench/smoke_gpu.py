import sys, math, torch
sys.path.insert(0, "python")
from tiled_attn import sdpa, KernelLibrary
lib = KernelLibrary.load("build/kernels")
torch.manual_seed(0)
dev = torch.cuda.get_device_name()
print(dev, torch.__version__)
def ref(q, k, v, causal):
    q, k, v = q.double(), k.double(), v.double()
    s = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    if causal:
        m = torch.ones(q.shape[2], k.shape[2], dtype=torch.bool, device=q.device).tril()
        s = s.masked_fill(~m, float("-inf"))
    return torch.softmax(s, -1) @ v
for dt in (torch.float16, torch.bfloat16):
  for D in (64, 128):
    for causal in (False, True):
      for (B, H, S) in ((1, 1, 1), (1, 2, 17), (2, 3, 128), (1, 3, 1000), (1, 2, 4096)):
        q, k, v = (torch.randn(B, H, S, D, device="cuda", dtype=dt) for _ in range(3))
        try:
            o = sdpa(q, k, v, causal=causal)
            torch.cuda.synchronize()
        except Exception as e:
            print(dt, D, causal, S, "ERROR", repr(e)[:300]); continue
        r = ref(q, k, v, causal)
        err = ((o.double() - r).norm() / r.norm()).item()
        t = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
        terr = ((t.double() - r).norm() / r.norm()).item()
        print(f"{str(dt)[6:]:8} D={D:3} causal={int(causal)} B={B} H={H} S={S:5}: err={err:.2e} torch={terr:.2e} {'OK' if err <= 2*terr + 1e-6 else 'BAD'}")
