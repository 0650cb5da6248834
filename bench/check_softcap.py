#!/usr/bin/env python3
"""Softcap kernels on the GPU against float64.

    python3 bench/check_softcap.py LIBRARY_DIR... [--out bench/results/softcap]

For each softcap kernel of each LIBRARY_DIR (the library's, or kernels
built by `tiled-attn-compile --variant=..._softcap`) that runs on this GPU, asked for
by name, on random inputs with
awkward lengths, caps of 5 and 50 and several masks (none, causal, a
sliding window, bottom-right causal), sdpa(..., softcap=c) on NaN-poisoned
outputs is compared with float64 attention whose scores are c * tanh(scale
* s / c) (rows that see no key: 0), and with PyTorch computing the same in
float32 from the capped scores (rounded to the inputs' dtype): ours must be
within twice PyTorch's relative L2 error (plus 1e-6), the rule of
check_correctness.py; the largest absolute errors are reported too. Prints
a line per case and writes a CSV.
"""

from __future__ import annotations

import argparse
import datetime
import sys
from pathlib import Path

import torch

from tiled_attn import KernelLibrary, sdpa

from check_correctness import visible_mask
from common import RESULTS, write_csv

CASES = [  # (S_q, S_k, causal, align, window)
    (1, 1, False, "top_left", (-1, -1)),
    (130, 130, False, "top_left", (-1, -1)),
    (257, 257, True, "top_left", (-1, -1)),
    (1000, 1000, True, "top_left", (63, 0)),
    (77, 300, True, "bottom_right", (-1, -1)),
    (300, 77, True, "bottom_right", (-1, -1)),
    (500, 500, False, "top_left", (20, 33)),
]


def attention(q, k, v, scale, cap, mask):
    """Attention of [B, H, S, D] tensors in their dtype's arithmetic (float32
    or float64) with capped scores; rows without a visible key give 0."""
    s = (q @ k.transpose(-1, -2)) * scale
    s = cap * torch.tanh(s / cap)
    s = s.masked_fill(~mask, float("-inf"))
    p = torch.softmax(s, dim=-1).nan_to_num(0.0)
    return p @ v


def rel_l2(out, ref) -> float:
    """||out - ref|| / ||ref|| (||out - ref|| when ref is all zero)."""
    norm = torch.linalg.vector_norm(ref).item()
    diff = torch.linalg.vector_norm(out.double() - ref).item()
    return diff / norm if norm else diff


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("libraries", nargs="+", type=Path, metavar="LIBRARY_DIR",
                   help="kernel library folders whose softcap kernels to check")
    p.add_argument("--out", type=Path, default=RESULTS / "softcap",
                   help="results folder (default: bench/results/softcap)")
    p.add_argument("--stem", default="softcap",
                   help="file name stem: <stem>_<device>_<date>.csv (default: softcap)")
    args = p.parse_args()
    torch.manual_seed(0)
    device = torch.cuda.get_device_name()
    rows, failed = [], 0
    for path in args.libraries:
        library = KernelLibrary.load(path)
        cc = torch.cuda.get_device_capability()
        for kernel in library.kernels:
            # (A varlen kernel runs only packed batches: check_varlen.py.)
            if not kernel.softcap or kernel.varlen or not library.runs_on(kernel, cc):
                continue
            dtype = {"f16": torch.float16, "bf16": torch.bfloat16}[kernel.dtype]
            d, dv = kernel.head_dim, kernel.head_dim_v
            for s_q, s_k, causal, align, window in CASES:
                for cap in (5.0, 50.0):
                    q = torch.randn(1, 2, s_q, d, device="cuda").to(dtype) * 2
                    k = torch.randn(1, 2, s_k, d, device="cuda").to(dtype) * 2
                    v = torch.randn(1, 2, s_k, dv, device="cuda").to(dtype)
                    scale = d ** -0.5
                    mask = visible_mask(s_q, s_k, causal, align == "bottom_right", *window,
                                        "cuda")
                    out = torch.full_like(q[..., :1], float("nan")).expand(
                        *q.shape[:-1], dv).contiguous()
                    sdpa(q, k, v, causal=causal, causal_align=align, window_size=window,
                         softcap=cap, library=library, kernel=kernel.name, out=out)
                    ref = attention(q.double(), k.double(), v.double(), scale, cap, mask)
                    theirs = attention(q.float(), k.float(), v.float(), scale, cap,
                                       mask).to(dtype).double()
                    ours, torch_err = rel_l2(out, ref), rel_l2(theirs, ref)
                    ours_max = (out.double() - ref).abs().max().item()
                    torch_max = (theirs - ref).abs().max().item()
                    ok = ours <= 2 * torch_err + 1e-6 and not out.isnan().any().item()
                    failed += not ok
                    print(f"{'PASS' if ok else 'FAIL'} {kernel.name} Sq={s_q} Sk={s_k} "
                          f"causal={causal} {align} window={window} softcap={cap} "
                          f"rel_l2={ours:.2e} torch={torch_err:.2e} (max abs {ours_max:.2e}, "
                          f"torch {torch_max:.2e})", flush=True)
                    rows.append({"kernel": kernel.name, "device": device, "s_q": s_q,
                                 "s_k": s_k, "causal": causal, "align": align,
                                 "window_left": window[0], "window_right": window[1],
                                 "softcap": cap, "rel_l2": ours, "torch_rel_l2": torch_err,
                                 "max_abs_err": ours_max, "torch_max_abs_err": torch_max,
                                 "ok": ok})
    write_csv(args.out, args.stem, device, datetime.date.today().isoformat(), rows)
    print(f"{len(rows) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
