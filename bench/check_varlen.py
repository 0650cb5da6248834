#!/usr/bin/env python3
"""Variable-length batches (sdpa_varlen) on the GPU against float64.

    python3 bench/check_varlen.py [--library DIR] [--out bench/results/varlen] [--seed N]

For every kernel of the library compiled for variable-length batches
("varlen": true) that runs on this GPU, asked for by name, the kernel is
launched through the C runtime (ta_sdpa with ta_sdpa_args.varlen) on packed
sequences of awkward lengths (one query, none, lengths that are not a
multiple of 64, sequences without keys, 64 random ones, long ones), with
rows past the last offset in q, k and v, under each mask it computes (none,
causal top-left and bottom-right per sequence, sliding and two-sided
windows of either alignment), softcap kernels with caps of 5 and 50, grouped
KV heads on one length set. O and, for "lse" kernels, the log-sum-exps are
NaN-poisoned; each sequence is compared with float64 attention over it
alone: O within twice the relative L2 error of PyTorch computing the same in
float32 (plus 1e-6; check_correctness.py's rule), exactly 0 on rows that see
no key, the rows past the last offset left unwritten (NaN); every LSE row
within 1e-4 of float64's (-inf exactly where a row sees no key). Then, per
dtype and head dim, tiled_attn.sdpa_varlen with the runtime's choice. Prints
a line per case and writes a CSV.
"""

from __future__ import annotations

import argparse
import datetime
import math
import random
import sys
from pathlib import Path

import torch

from tiled_attn import KernelLibrary, TiledAttnError, sdpa_varlen
from tiled_attn.runtime import (DTYPES, MASKS, TaSdpaArgs, TaVarlen, TaWindow,
                                set_packed_tensor)

from check_correctness import visible_mask
from check_lse import lse_error, reference
from check_softcap import rel_l2
from common import RESULTS, write_csv

TORCH = {"f16": torch.float16, "bf16": torch.bfloat16}
#: Rows past the last offset, in q and in k and v: finite, never attended.
PADDING = 5
MASK_CASES = [  # (causal, align, window)
    (False, "top_left", (-1, -1)),
    (True, "top_left", (-1, -1)),
    (True, "bottom_right", (-1, -1)),
    (True, "top_left", (63, 0)),
    (True, "bottom_right", (100, 100)),
    (False, "top_left", (20, 33)),
    (False, "bottom_right", (16, -1)),
]


def length_sets(seed: int) -> dict:
    """name -> (query lengths, key lengths)."""
    rng = random.Random(seed)
    many_q = [rng.randint(0, 200) for _ in range(64)]
    many_k = [rng.randint(0, 300) for _ in range(64)]
    return {
        "mixed": ([1, 0, 77, 300, 129], [1, 0, 77, 300, 129]),
        "cross": ([1, 0, 77, 300, 129, 5], [64, 3, 200, 250, 129, 0]),
        "many": (many_q, many_k),
        "long": ([1000, 2048, 17], [1000, 2048, 4000]),
    }


def fits(kernel, causal: bool, align: str, window) -> bool:
    """Whether the runtime runs this mask on `kernel` (asked for by name)."""
    if kernel.mask == "window":
        return causal or window != (-1, -1) or kernel.softcap or kernel.lse
    return window == (-1, -1) and kernel.mask == (align if causal else "none")


def packed(lengths_q, lengths_k, h, h_kv, d, dtype, dv=None):
    """Packed q [total_q, h, d], k [total_k, h_kv, d], v [total_k, h_kv, dv]
    (dv: d when None; PADDING rows past the sequences) and their int32 offsets."""
    q = torch.randn(sum(lengths_q) + PADDING, h, d, device="cuda").to(dtype)
    k = torch.randn(sum(lengths_k) + PADDING, h_kv, d, device="cuda").to(dtype)
    v = torch.randn(sum(lengths_k) + PADDING, h_kv, dv or d, device="cuda").to(dtype)
    cu_q, cu_k = (torch.tensor([0] + [sum(lengths[:i + 1]) for i in range(len(lengths))],
                               dtype=torch.int32, device="cuda")
                  for lengths in (lengths_q, lengths_k))
    return q, k, v, cu_q, cu_k


def per_sequence(q, k, v, cu_q, cu_k, scale, cap, causal, align, window, dtype):
    """float64 O [rows, H, D] and LSE [H, rows] of each sequence alone, and
    PyTorch's float32 O rounded to `dtype`, over the rows before the last offset."""
    groups = q.shape[1] // k.shape[1]
    cq, ck = cu_q.tolist(), cu_k.tolist()
    outs, lses, torch_outs = [], [], []
    for b in range(len(cq) - 1):
        qs = q[cq[b]:cq[b + 1]].transpose(0, 1)[None]
        ks, vs = (t[ck[b]:ck[b + 1]].transpose(0, 1)[None].repeat_interleave(groups, 1)
                  for t in (k, v))
        mask = visible_mask(qs.shape[2], ks.shape[2], causal, align == "bottom_right",
                            *window, "cuda")
        o, lse = reference(qs.double(), ks.double(), vs.double(), scale, cap, mask)
        o32 = reference(qs.float(), ks.float(), vs.float(), scale, cap, mask)[0]
        outs.append(o[0].transpose(0, 1))
        lses.append(lse[0])
        torch_outs.append(o32[0].transpose(0, 1).to(dtype))
    return torch.cat(outs), torch.cat(lses, dim=1), torch.cat(torch_outs)


def launch(library, kernel, q, k, v, out, lse, cu_q, cu_k, max_q, max_k, causal, align,
           window, cap):
    """ta_sdpa with ta_sdpa_args.varlen through the runtime's ctypes binding."""
    args = TaSdpaArgs()
    for slot, t in ((args.q, q), (args.k, k), (args.v, v), (args.o, out)):
        set_packed_tensor(slot, t)
    bottom_right = align == "bottom_right"
    mask = ("bottom_right" if bottom_right else "top_left") if causal else "none"
    args.dtype, args.mask = DTYPES[kernel.dtype], MASKS[mask]
    args.scale = 1.0 / math.sqrt(q.shape[-1])
    args.kernel = kernel.name.encode()
    if window != (-1, -1):
        args.window = TaWindow(1, int(bottom_right), *window)
    args.softcap = cap
    args.lse = 0 if lse is None else lse.data_ptr()
    args.varlen = TaVarlen(1, cu_q.numel() - 1, cu_q.data_ptr(), cu_k.data_ptr(), max_q, max_k)
    library.launch(args, q.device.index, torch.cuda.current_stream().cuda_stream)


def judge(out, lse, ref_o, ref_lse, torch_o, end):
    """(ok, O's relative L2, PyTorch's, LSE's largest error or None, why)."""
    why = []
    o_err, torch_err = rel_l2(out[:end], ref_o), rel_l2(torch_o, ref_o)
    if not torch.isnan(out[end:]).all():
        why.append("rows past the last offset written")
    if out[:end].isnan().any():
        why.append("NaN in O")
    blind = ref_o.abs().amax(dim=(1, 2)) == 0
    if blind.any() and out[:end][blind].abs().max().item() != 0:
        why.append("a row that sees no key is not 0")
    if o_err > 2 * torch_err + 1e-6:
        why.append("O error")
    err = None
    if lse is not None:
        err = lse_error(lse[:, :end], ref_lse)
        if err > 1e-4:
            why.append("LSE error")
    return not why, o_err, torch_err, err, ", ".join(why)


def check_kernel(library, kernel, sets, device, rows) -> int:
    dtype, d, failed = TORCH[kernel.dtype], kernel.head_dim, 0
    dv = kernel.head_dim_v
    for cap in (5.0, 50.0) if kernel.softcap else (0.0,):
        for set_name, (lengths_q, lengths_k) in sets.items():
            heads = [(3, 3)] + ([(4, 2)] if set_name == "cross" else [])
            for (h, h_kv) in heads:
                for causal, align, window in MASK_CASES:
                    if not fits(kernel, causal, align, window):
                        continue
                    q, k, v, cu_q, cu_k = packed(lengths_q, lengths_k, h, h_kv, d, dtype, dv)
                    out = torch.full((q.shape[0], h, dv), math.nan, device="cuda").to(dtype)
                    lse = (torch.full((h, q.shape[0]), math.nan, device="cuda")
                           if kernel.lse else None)
                    max_q, max_k = max(max(lengths_q), 1), max(max(lengths_k), 1)
                    case = (f"{kernel.name} {set_name} H={h}/{h_kv} causal={causal} {align} "
                            f"window={window} softcap={cap}")
                    try:
                        launch(library, kernel, q, k, v, out, lse, cu_q, cu_k, max_q, max_k,
                               causal, align, window, cap)
                    except TiledAttnError as exc:
                        if h != h_kv and "grouped KV heads" in str(exc):
                            print(f"SKIP {case}: no grouped KV heads", flush=True)
                            continue
                        raise
                    torch.cuda.synchronize()
                    ref_o, ref_lse, torch_o = per_sequence(
                        q, k, v, cu_q, cu_k, d ** -0.5, cap, causal, align, window, dtype)
                    end = int(cu_q[-1])
                    ok, o_err, torch_err, err, why = judge(out, lse, ref_o, ref_lse, torch_o,
                                                           end)
                    failed += not ok
                    print(f"{'PASS' if ok else 'FAIL'} {case} o_rel_l2={o_err:.2e} "
                          f"(torch {torch_err:.2e})"
                          + (f" lse_err={err:.2e}" if err is not None else "")
                          + (f": {why}" if why else ""), flush=True)
                    rows.append({"kernel": kernel.name, "device": device, "path": "ta_sdpa",
                                 "lengths": set_name, "num_seqs": len(lengths_q),
                                 "max_seqlen_q": max_q, "max_seqlen_k": max_k, "heads": h,
                                 "kv_heads": h_kv, "causal": causal, "align": align,
                                 "window_left": window[0], "window_right": window[1],
                                 "softcap": cap, "o_rel_l2": o_err, "torch_o_rel_l2": torch_err,
                                 "lse_max_abs_err": "" if err is None else err, "ok": ok,
                                 "why": why})
    return failed


def check_api(library, dtype_name, d, sets, device, rows, dv=None) -> int:
    """sdpa_varlen with the runtime's choice: causal bottom-right, grouped
    heads, the log-sum-exps where a varlen lse kernel exists."""
    dtype = TORCH[dtype_name]
    lengths_q, lengths_k = sets["cross"]
    with_lse = any(k.varlen and k.lse and k.dtype == dtype_name and k.head_dim == d
                   and k.head_dim_v == (dv or d) for k in library.kernels)
    q, k, v, cu_q, cu_k = packed(lengths_q, lengths_k, 4, 2, d, dtype, dv)
    out = torch.full((q.shape[0], 4, dv or d), math.nan, device="cuda").to(dtype)
    try:
        result = sdpa_varlen(q, k, v, cu_q, cu_k, max(lengths_q), max(lengths_k), causal=True,
                             enable_gqa=True, causal_align="bottom_right", return_lse=with_lse,
                             library=library, out=out)
    except TiledAttnError as exc:
        print(f"SKIP sdpa_varlen {dtype_name} D={d} D_v={dv or d}: {exc}", flush=True)
        return 0
    lse = result[1] if with_lse else None
    torch.cuda.synchronize()
    ref_o, ref_lse, torch_o = per_sequence(q, k, v, cu_q, cu_k, d ** -0.5, 0.0, True,
                                           "bottom_right", (-1, -1), dtype)
    ok, o_err, torch_err, err, why = judge(out, lse, ref_o, ref_lse, torch_o, int(cu_q[-1]))
    print(f"{'PASS' if ok else 'FAIL'} sdpa_varlen {dtype_name} D={d} D_v={dv or d} GQA bottom-right "
          f"lse={with_lse} o_rel_l2={o_err:.2e} (torch {torch_err:.2e})"
          + (f" lse_err={err:.2e}" if err is not None else "") + (f": {why}" if why else ""),
          flush=True)
    rows.append({"kernel": "sdpa_varlen", "device": device, "path": "sdpa_varlen",
                 "lengths": "cross", "num_seqs": len(lengths_q), "max_seqlen_q": max(lengths_q),
                 "max_seqlen_k": max(lengths_k), "heads": 4, "kv_heads": 2, "causal": True,
                 "align": "bottom_right", "window_left": -1, "window_right": -1,
                 "softcap": 0.0, "o_rel_l2": o_err, "torch_o_rel_l2": torch_err,
                 "lse_max_abs_err": "" if err is None else err, "ok": ok, "why": why})
    return not ok


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--library", type=Path, default=None,
                   help="kernel library folder (default: $TILED_ATTN_KERNELS or build/kernels)")
    p.add_argument("--out", type=Path, default=RESULTS / "varlen",
                   help="results folder (default: bench/results/varlen)")
    p.add_argument("--stem", default="varlen",
                   help="file name stem: <stem>_<device>_<date>.csv (default: varlen)")
    p.add_argument("--seed", type=int, default=0, help="seed of the inputs and the length sets")
    args = p.parse_args()
    torch.manual_seed(args.seed)
    device = torch.cuda.get_device_name()
    cc = torch.cuda.get_device_capability()
    library = KernelLibrary.load(args.library)
    sets = length_sets(args.seed)
    rows, failed = [], 0
    kernels = [k for k in library.kernels if k.varlen and library.runs_on(k, cc)]
    if not kernels:
        print(f"no varlen kernel of {library.path} runs on {device} (sm_{cc[0]}{cc[1]})")
    for kernel in kernels:
        failed += check_kernel(library, kernel, sets, device, rows)
    for dtype_name in ("f16", "bf16"):
        for d, dv in library.head_dim_pairs:
            failed += check_api(library, dtype_name, d, sets, device, rows, dv)
    if rows:
        write_csv(args.out, args.stem, device, datetime.date.today().isoformat(), rows)
    print(f"{len(rows) - failed} passed, {failed} failed")
    return 1 if failed or not rows else 0


if __name__ == "__main__":
    sys.exit(main())
