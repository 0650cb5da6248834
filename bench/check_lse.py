#!/usr/bin/env python3
"""The rows' log-sum-exps on the GPU against float64.

    python3 bench/check_lse.py [--library DIR] [--out bench/results/lse] [--softcap LIBRARY_DIR...]

For every kernel of the library that writes them ("lse": true) and runs on
this GPU, on random inputs with awkward lengths and several masks (none,
causal, a sliding window, bottom-right causal both ways, a two-sided
window), the kernel is launched through the C runtime (ta_sdpa with
ta_sdpa_args.lse) into NaN-poisoned O and LSE, and compared with float64
attention: O within twice the relative L2 error of PyTorch computing the
same in float32 (plus 1e-6; check_correctness.py's rule), every LSE row within 1e-4 of float64's (-inf exactly where a
row sees no key); where PyTorch's flash backend computes the same (no
window, top-left causal, no softcap) its float32 LSE's error is reported
beside ours and ours must be within twice it (plus 1e-5). Then, per dtype
and head dim, `sdpa(..., return_lse=True)` with the runtime's choice, and a
split-KV merge: two calls over the two halves of the keys, merged with
their LSEs, against one call over all of them. Softcap lse kernels (the
library's, and those of the libraries `--softcap` adds) run with caps of 5
and 50. Prints a line per case and writes a CSV.
"""

from __future__ import annotations

import argparse
import datetime
import math
import sys
from pathlib import Path

import torch

from tiled_attn import KernelLibrary, sdpa
from tiled_attn.runtime import DTYPES, MASKS, TaSdpaArgs, TaWindow, set_tensor

from check_correctness import visible_mask
from check_softcap import CASES, rel_l2
from common import RESULTS, write_csv

TORCH = {"f16": torch.float16, "bf16": torch.bfloat16}


def reference(q, k, v, scale, cap, mask):
    """O and LSE of [B, H, S, D] tensors in their dtype's arithmetic; rows
    without a visible key give O = 0 and LSE = -inf."""
    s = (q @ k.transpose(-1, -2)) * scale
    if cap:
        s = cap * torch.tanh(s / cap)
    s = s.masked_fill(~mask, float("-inf"))
    lse = torch.logsumexp(s, dim=-1)
    p = torch.softmax(s, dim=-1).nan_to_num(0.0)
    return p @ v, lse


def lse_error(ours, ref) -> float:
    """The largest |ours - ref| over rows; inf where only one is -inf or ours is NaN."""
    empty = torch.isneginf(ref)
    if not torch.equal(torch.isneginf(ours), empty) or ours.isnan().any():
        return math.inf
    if empty.all():
        return 0.0
    return (ours.double() - ref)[~empty].abs().max().item()


def launch(library, kernel, q, k, v, out, lse, causal, align, window, cap):
    """ta_sdpa through the runtime's ctypes binding, with the lse address."""
    args = TaSdpaArgs()
    for slot, t in ((args.q, q), (args.k, k), (args.v, v), (args.o, out)):
        set_tensor(slot, t)
    bottom_right = align == "bottom_right"
    mask = ("bottom_right" if bottom_right else "top_left") if causal else "none"
    args.dtype, args.mask = DTYPES[kernel.dtype], MASKS[mask]
    args.scale = 1.0 / math.sqrt(q.shape[-1])
    args.kernel = kernel.name.encode()
    if window != (-1, -1):
        args.window = TaWindow(1, int(bottom_right), *window)
    args.softcap = cap
    args.lse = lse.data_ptr()
    library.launch(args, q.device.index, torch.cuda.current_stream().cuda_stream)


def flash_lse(q, k, v, causal):
    """PyTorch's flash backend's float32 LSE, or None where it cannot run."""
    try:
        return torch.ops.aten._scaled_dot_product_flash_attention(
            q, k, v, 0.0, causal)[1]
    except RuntimeError:
        return None


def check_kernel(library, kernel, cap, device, rows) -> int:
    dtype, d, failed = TORCH[kernel.dtype], kernel.head_dim, 0
    dv = kernel.head_dim_v
    for s_q, s_k, causal, align, window in CASES:
        if kernel.mask != "window" and (window != (-1, -1) or align == "bottom_right"):
            continue
        q = torch.randn(2, 3, s_q, d, device="cuda").to(dtype)
        k = torch.randn(2, 3, s_k, d, device="cuda").to(dtype)
        v = torch.randn(2, 3, s_k, dv, device="cuda").to(dtype)
        out = torch.full((2, 3, s_q, dv), float("nan"), device="cuda").to(dtype)
        lse = torch.full((2, 3, s_q), float("nan"), device="cuda")
        launch(library, kernel, q, k, v, out, lse, causal, align, window, cap)
        torch.cuda.synchronize()
        mask = visible_mask(s_q, s_k, causal, align == "bottom_right", *window, "cuda")
        scale = d ** -0.5
        ref_o, ref_lse = reference(q.double(), k.double(), v.double(), scale, cap, mask)
        torch_o = reference(q.float(), k.float(), v.float(), scale, cap, mask)[0]
        o_err, torch_o_err = rel_l2(out, ref_o), rel_l2(torch_o.to(dtype), ref_o)
        err = lse_error(lse, ref_lse)
        flash_err = None
        if not cap and window == (-1, -1) and align == "top_left" and s_q > 1 and dv == d:
            theirs = flash_lse(q, k, v, causal)
            if theirs is not None:
                flash_err = lse_error(theirs[..., :s_q], ref_lse)
        ok = (o_err <= 2 * torch_o_err + 1e-6 and not out.isnan().any().item()
              and err <= 1e-4 and (flash_err is None or err <= 2 * flash_err + 1e-5))
        failed += not ok
        print(f"{'PASS' if ok else 'FAIL'} {kernel.name} Sq={s_q} Sk={s_k} causal={causal} "
              f"{align} window={window} softcap={cap} o_rel_l2={o_err:.2e} "
              f"(torch {torch_o_err:.2e}) lse_err={err:.2e}"
              + (f" (flash {flash_err:.2e})" if flash_err is not None else ""), flush=True)
        rows.append({"kernel": kernel.name, "device": device, "path": "ta_sdpa", "s_q": s_q,
                     "s_k": s_k, "causal": causal, "align": align, "window_left": window[0],
                     "window_right": window[1], "softcap": cap, "o_rel_l2": o_err,
                     "torch_o_rel_l2": torch_o_err, "lse_max_abs_err": err,
                     "flash_lse_max_abs_err": "" if flash_err is None else flash_err,
                     "ok": ok})
    return failed


def check_api(library, dtype_name, d, device, rows, dv=None) -> int:
    """sdpa(return_lse=True) with the runtime's choice, and a split-KV merge."""
    dtype, failed = TORCH[dtype_name], 0
    q = torch.randn(2, 4, 333, d, device="cuda").to(dtype)
    k = torch.randn(2, 2, 1000, d, device="cuda").to(dtype)
    v = torch.randn(2, 2, 1000, dv or d, device="cuda").to(dtype)
    out, lse = sdpa(q, k, v, causal=True, enable_gqa=True, causal_align="bottom_right",
                    return_lse=True, library=library)
    assert lse.shape == (2, 4, 333) and lse.dtype == torch.float32 and lse.is_contiguous()
    kk, vv = (t.repeat_interleave(2, dim=1).double() for t in (k, v))
    mask = visible_mask(333, 1000, True, True, -1, -1, "cuda")
    ref_o, ref_lse = reference(q.double(), kk, vv, d ** -0.5, 0.0, mask)
    err, o_err = lse_error(lse, ref_lse), rel_l2(out, ref_o)
    # Split-KV: the two halves of the keys, merged with their LSEs.
    o1, l1 = sdpa(q, k[:, :, :400], v[:, :, :400], enable_gqa=True, return_lse=True,
                  library=library)
    o2, l2 = sdpa(q, k[:, :, 400:], v[:, :, 400:], enable_gqa=True, return_lse=True,
                  library=library)
    whole, l_whole = sdpa(q, k, v, enable_gqa=True, return_lse=True, library=library)
    merged_l = torch.logaddexp(l1, l2)
    merged = (torch.exp(l1 - merged_l)[..., None] * o1.double()
              + torch.exp(l2 - merged_l)[..., None] * o2.double())
    merge_err = (merged - whole.double()).abs().max().item()
    lse_merge_err = (merged_l - l_whole).abs().max().item()
    ok = err <= 1e-4 and o_err <= 1e-2 and merge_err <= 1e-2 and lse_merge_err <= 1e-4
    failed += not ok
    print(f"{'PASS' if ok else 'FAIL'} sdpa(return_lse=True) {dtype_name} D={d} GQA "
          f"bottom-right o_rel_l2={o_err:.2e} lse_err={err:.2e}; split-KV merge "
          f"o_err={merge_err:.2e} lse_err={lse_merge_err:.2e}", flush=True)
    rows.append({"kernel": "sdpa(return_lse=True)", "device": device, "path": "sdpa",
                 "s_q": 333, "s_k": 1000, "causal": True, "align": "bottom_right",
                 "window_left": -1, "window_right": -1, "softcap": 0.0,
                 "o_rel_l2": o_err, "torch_o_rel_l2": "", "lse_max_abs_err": err,
                 "flash_lse_max_abs_err": "", "ok": ok,
                 "split_kv_merge_o_err": merge_err, "split_kv_merge_lse_err": lse_merge_err})
    return failed


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--library", type=Path, default=None,
                   help="kernel library folder (default: $TILED_ATTN_KERNELS or build/kernels)")
    p.add_argument("--softcap", nargs="*", type=Path, default=[], metavar="LIBRARY_DIR",
                   help="more libraries whose softcap lse kernels to check")
    p.add_argument("--out", type=Path, default=RESULTS / "lse",
                   help="results folder (default: bench/results/lse)")
    p.add_argument("--stem", default="lse",
                   help="file name stem: <stem>_<device>_<date>.csv (default: lse)")
    args = p.parse_args()
    torch.manual_seed(0)
    device = torch.cuda.get_device_name()
    cc = torch.cuda.get_device_capability()
    rows, failed = [], 0
    library = KernelLibrary.load(args.library)
    for kernel in library.kernels:
        # (A varlen kernel runs only packed batches: check_varlen.py.)
        if kernel.lse and not kernel.varlen and library.runs_on(kernel, cc):
            for cap in (5.0, 50.0) if kernel.softcap else (0.0,):
                failed += check_kernel(library, kernel, cap, device, rows)
    for dtype_name in ("f16", "bf16"):
        for d, dv in library.head_dim_pairs:
            failed += check_api(library, dtype_name, d, device, rows, dv)
    for path in args.softcap:
        capped = KernelLibrary.load(path)
        for kernel in capped.kernels:
            if kernel.lse and not kernel.varlen and capped.runs_on(kernel, cc):
                for cap in (5.0, 50.0):
                    failed += check_kernel(capped, kernel, cap, device, rows)
    keys = list(dict.fromkeys(key for row in rows for key in row))
    rows = [{key: row.get(key, "") for key in keys} for row in rows]
    write_csv(args.out, args.stem, device, datetime.date.today().isoformat(), rows)
    print(f"{len(rows) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
