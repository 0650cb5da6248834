#!/usr/bin/env python3
"""A one-minute correctness pass of the library on awkward shapes: our error
and PyTorch SDPA's against float64, side by side (check_correctness.py is the
full check).

    python3 bench/smoke_gpu.py [--library DIR]
"""
import argparse

import torch
import torch.nn.functional as F

from tiled_attn import KernelLibrary, sdpa

from common import reference, rel_l2


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--library", default=None,
                   help="kernel library folder (default: $TILED_ATTN_KERNELS or build/kernels)")
    args = p.parse_args(argv)
    library = KernelLibrary.load(args.library)
    torch.manual_seed(0)
    print(torch.cuda.get_device_name(), torch.__version__)
    for dt in (torch.float16, torch.bfloat16):
        for D in (64, 128):
            for causal in (False, True):
                for (B, H, S) in ((1, 1, 1), (1, 2, 17), (2, 3, 128), (1, 3, 1000), (1, 2, 4096)):
                    q, k, v = (torch.randn(B, H, S, D, device="cuda", dtype=dt) for _ in range(3))
                    try:
                        o = sdpa(q, k, v, causal=causal, library=library)
                        torch.cuda.synchronize()
                    except Exception as e:  # report and go on
                        print(dt, D, causal, S, "ERROR", repr(e)[:300])
                        continue
                    r = reference(q, k, v, causal)
                    err = rel_l2(o, r)
                    terr = rel_l2(F.scaled_dot_product_attention(q, k, v, is_causal=causal), r)
                    ok = err <= 2 * terr + 1e-6
                    print(f"{str(dt)[6:]:8} D={D:3} causal={int(causal)} B={B} H={H} S={S:5}: "
                          f"err={err:.2e} torch={terr:.2e} {'OK' if ok else 'BAD'}")


if __name__ == "__main__":
    main()
