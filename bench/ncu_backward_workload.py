#!/usr/bin/env python3
"""The workload the backward's Nsight Compute script profiles (issue 39):
bf16 backward at B*S = 16384, H*D = 2048, random normal inputs.

    python3 bench/ncu_backward_workload.py S D KERNELS|fa2|cudnn [--causal]

Four backward calls: of a folder of the compiler's backward kernels
(check_backward.py's launcher: preprocess, main, postprocess) or of one of
PyTorch's SDPA backends' backward (FlashAttention-2, "fa2", or cuDNN,
"cudnn"). bench/ncu_backward.sh profiles the 4th main kernel.
"""
import argparse
import json
import sys
from pathlib import Path

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

sys.path.insert(0, str(Path(__file__).resolve().parent))
import check_backward  # noqa: E402

BACKENDS = {"fa2": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("s", type=int)
    parser.add_argument("d", type=int)
    parser.add_argument("kernels")
    parser.add_argument("--causal", action="store_true")
    args = parser.parse_args()
    check_backward.import_torch()
    s, d = args.s, args.d
    b, h = max(1, 16384 // s), 2048 // d
    torch.manual_seed(0)
    q, k, v, do = (torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16)
                   for _ in range(4))
    scale = d ** -0.5
    if args.kernels in BACKENDS:
        qq, kk, vv = (t.clone().requires_grad_() for t in (q, k, v))
        with sdpa_kernel(BACKENDS[args.kernels]):
            out = F.scaled_dot_product_attention(qq, kk, vv, is_causal=args.causal)
        def call():
            torch.autograd.grad(out, (qq, kk, vv), do, retain_graph=True)
    else:
        folder = Path(args.kernels)
        manifest = json.loads((folder / "manifest.json").read_text())
        major, minor = torch.cuda.get_device_capability()
        arch = "sm_90a" if (major, minor) == (9, 0) else f"sm_{major}{minor}"
        bwd = check_backward.Backward(folder, manifest, "bf16", d, arch)
        o, lse = torch.ops.aten._scaled_dot_product_flash_attention(
            q, k, v, 0.0, args.causal, False, scale=scale)[:2]
        mode = "top_left" if args.causal else "none"
        def call():
            bwd(q, k, v, o, lse, do, mode, scale)
    for _ in range(4):
        call()
    torch.cuda.synchronize()


if __name__ == "__main__":
    main()
