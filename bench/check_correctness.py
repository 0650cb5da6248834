#!/usr/bin/env python3
"""Every kernel of the library against a float64 reference, next to PyTorch's SDPA.

    python3 bench/check_correctness.py [--out bench/results/correctness] [--library build/kernels]
    compute-sanitizer --tool memcheck python3 bench/check_correctness.py --sanitize-one

For each manifest entry that runs on this GPU (forced with sdpa(..., kernel=name)):
fresh torch.randn inputs over a set of shapes, the output poisoned with NaN
before each run, the relative L2 error of ours and of
torch.nn.functional.scaled_dot_product_attention against float64 (grouped KV
heads included, with enable_gqa on both sides). A case
passes iff ours <= 2 * torch's + 1e-6 and the output is finite. Prints one
line per case and "N passed, M failed"; exits 1 on any failure.

Masks: an entry of mask none or top_left runs its own mask; a bottom_right
entry bottom-right causal problems; a window entry sliding causal windows,
two-sided windows, bottom-right causal with S_q != S_k both ways, windows
aligned bottom-right and windows wider than the sequences (FlashAttention's
window_size: query i sees keys i + shift - left <= j <= i + shift + right,
shift = S_k - S_q when aligned bottom-right, else 0; with causal also
j <= i + shift). For these the reference masks with that definition in
float64, rows that see no key give 0, and torch gets the same boolean mask
(efficient backend, else math); its error counts only the rows that see a
key (its other rows are NaN), while ours must be exactly 0 there. A window
problem whose band is the whole matrix cannot be asked of a window kernel by
name (the runtime runs it on a kernel without a mask); those, and a few
more, run with kernel=None per dtype and head dim that has a window kernel,
and the kernel the runtime chose must compute the band, and not be a window
kernel where a kernel of the band's own mask runs.
"""

from __future__ import annotations

import argparse
import csv
import datetime
import inspect
import math
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Tuple

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from tiled_attn import KernelLibrary, TiledAttnError, sdpa
from tiled_attn.runtime import DTYPES as TA_DTYPES, MASKS, TaSdpaArgs, TaWindow

from common import RESULTS, device_slug

DTYPES = {"f16": torch.float16, "bf16": torch.bfloat16}
SEQS = (1, 17, 128, 1000, 4096)
SMALL_SEQ = 1000                       # up to here, all four (B, H) combinations
BH_ALL, BH_LARGE = ((1, 1), (1, 3), (3, 1), (3, 3)), ((1, 1), (3, 3))
UNEQUAL = ((100, 37), (37, 100))       # S_q != S_k
#: Grouped KV heads (B, H, H_kv, S_q, S_k): GQA 4:1 and 3:1, MQA, awkward lengths.
GROUPED = ((2, 8, 2, 1000, 1000), (1, 6, 1, 100, 37), (3, 6, 2, 37, 100), (1, 4, 2, 4096, 4096))
#: (S_q, S_k) of bottom-right causal problems: S_q < S_k (queries after a KV
#: cache), S_q = S_k, and S_q > S_k (the first S_q - S_k rows see no key).
BOTTOM_RIGHT = ((1, 1000), (17, 257), (130, 1000), (257, 257), (257, 17), (1000, 130), (1000, 1))
WINDOW_SEQS = (1, 17, 130, 257, 1000)
SLIDING = (1, 63, 200)                 # window_size = (w, 0) with causal: w + 1 keys
TWO_SIDED = ((0, 0), (63, 17), (5, 200), (200, 63))
HUGE = 2**40                           # a bound past any sequence: no bound
MASK_KINDS = ("none", "top_left", "bottom_right", "window")
CSV_FIELDS = ("date", "device", "entry", "dtype", "D", "Dv", "causal", "B", "H", "Hkv", "Sq", "Sk",
              "rel_l2", "torch_rel_l2", "pass", "case_causal", "align", "window_left",
              "window_right", "empty_rows", "selected", "torch_backend")


@dataclass(frozen=True)
class Case:
    """One problem: shapes, and FlashAttention's causal flag, alignment and window_size."""

    b: int
    h: int
    hkv: int
    sq: int
    sk: int
    causal: bool = False
    align: str = "top_left"
    window: Tuple[int, int] = (-1, -1)

    @property
    def bottom_right(self) -> bool:
        return self.align == "bottom_right"

    @property
    def plain(self) -> bool:
        """No window and PyTorch's alignment: the problems sdpa took before windows."""
        return self.window == (-1, -1) and not self.bottom_right

    def band(self) -> Tuple[int, int]:
        return band(self.sq, self.sk, self.causal, self.bottom_right, *self.window)

    def describe(self) -> str:
        text = f"B={self.b} H={self.h} Hkv={self.hkv} Sq={self.sq} Sk={self.sk}"
        if not self.plain:
            text += f" causal={self.causal} align={self.align} window_size={self.window}"
        return text


def band(sq: int, sk: int, causal: bool, bottom_right: bool, left: int, right: int):
    """(lo, hi): the diagonals lo <= j - i <= hi that query i sees of key j,
    from FlashAttention's definition, clamped to [1 - S_q, S_k - 1] (the
    diagonals there are), so that a bound past the sequences is no bound."""
    shift = sk - sq if bottom_right else 0
    lo = shift - left if left >= 0 else 1 - sq
    hi = shift + right if right >= 0 else sk - 1
    if causal:
        hi = min(hi, shift)
    return max(lo, 1 - sq), min(hi, sk - 1)


def kernel_band(mask: str, sq: int, sk: int) -> Optional[Tuple[int, int]]:
    """The band a kernel of `mask` computes on S_q x S_k (None: a window kernel, any)."""
    return {"none": (1 - sq, sk - 1), "top_left": (1 - sq, 0),
            "bottom_right": (1 - sq, sk - sq)}.get(mask)


def masks_computing(case: Case) -> Tuple[str, ...]:
    """The kernel masks whose kernels compute the case's band (window's always do)."""
    want = case.band()
    return tuple(m for m in MASK_KINDS if m == "window" or kernel_band(m, case.sq, case.sk) == want)


def visible_pairs(sq: int, sk: int, causal: bool, bottom_right: bool, left: int, right: int) -> int:
    """How many (query, key) pairs the mask lets through: the sum over rows of
    the keys each sees (4 * D * this = the FLOPs of one head)."""
    lo, hi = band(sq, sk, causal, bottom_right, left, right)
    return sum(max(0, min(sk - 1, i + hi) - max(0, i + lo) + 1) for i in range(sq))


def visible_mask(sq: int, sk: int, causal: bool, bottom_right: bool, left: int, right: int,
                 device=None):
    """[S_q, S_k] bool, True where query i sees key j: FlashAttention's
    definition written out (not through band(), which it checks)."""
    i = torch.arange(sq, device=device)[:, None]
    j = torch.arange(sk, device=device)[None, :]
    shift = sk - sq if bottom_right else 0
    mask = torch.ones(sq, sk, dtype=torch.bool, device=device)
    if left >= 0:
        mask &= j >= i + shift - left
    if right >= 0:
        mask &= j <= i + shift + right
    if causal:
        mask &= j <= i + shift
    return mask


def case_mask(case: Case, device):
    """The case's mask, or None when it sees every key."""
    if not case.causal and case.window == (-1, -1):
        return None
    return visible_mask(case.sq, case.sk, case.causal, case.bottom_right, *case.window, device)


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, default=RESULTS / "correctness",
                   help="results folder (default: bench/results/correctness)")
    p.add_argument("--stem", default="correctness",
                   help="file name stem: <stem>_<device>_<date>.csv (default: correctness)")
    p.add_argument("--library", type=Path, default=None,
                   help="kernel library folder (default: $TILED_ATTN_KERNELS or build/kernels)")
    p.add_argument("--sanitize-one", action="store_true",
                   help="one small case (B=1, H=2, S=100) per entry, no CSV; for compute-sanitizer")
    p.add_argument("--seed", type=int, default=0, help="torch.manual_seed at start")
    return p.parse_args(argv)


def window_cases():
    """The cases of a window kernel (see the module comment)."""
    cases = [Case(2, 3, 3, s, s, True, "top_left", (w, 0)) for s in WINDOW_SEQS for w in SLIDING]
    cases += [Case(1, 2, 2, 1000, 1000, True, "top_left", (63, 63)),  # = (63, 0) with causal
              Case(3, 1, 1, 130, 1000, True, "top_left", (63, 0)),
              Case(3, 1, 1, 1000, 130, True, "top_left", (63, 0))]    # rows >= 194 see no key
    cases += [Case(1, 3, 3, s, s, False, "top_left", lr) for s in (17, 257, 1000)
              for lr in TWO_SIDED]
    cases += [Case(2, 2, 2, 130, 1000, False, "top_left", (63, 17)),
              Case(2, 2, 2, 1000, 257, False, "top_left", (200, 63))]  # rows >= 457 see none
    cases += [Case(2, 3, 3, sq, sk, True, "bottom_right") for sq, sk in BOTTOM_RIGHT]
    cases += [Case(1, 4, 4, 130, 1000, True, "bottom_right", (200, 0)),  # chunked prefill
              Case(1, 4, 4, 1000, 130, True, "bottom_right", (63, 0)),
              Case(1, 4, 4, 17, 1000, True, "bottom_right", (63, 63)),
              Case(2, 2, 2, 257, 1000, False, "bottom_right", (63, 17)),
              Case(2, 2, 2, 1000, 257, False, "bottom_right", (100, 100))]
    cases += [Case(2, 2, 2, 257, 257, True, "top_left", (5000, 0)),      # wider than S
              Case(2, 2, 2, 130, 257, False, "top_left", (5000, 3)),
              Case(2, 2, 2, 1000, 17, False, "top_left", (2, 5000)),
              Case(1, 3, 3, 130, 1000, True, "bottom_right", (HUGE, HUGE)),
              Case(1, 3, 3, 257, 257, False, "top_left", (5000, 5000))]  # the whole matrix
    return cases + [Case(2, 8, 2, 1000, 1000, True, "top_left", (200, 0)),  # grouped KV heads
                    Case(1, 6, 1, 257, 1000, True, "bottom_right", (63, 0)),
                    Case(3, 6, 2, 130, 130, False, "top_left", (17, 5)),
                    Case(1, 4, 2, 1000, 130, True, "bottom_right"),
                    Case(1, 4, 2, 4096, 4096, True, "top_left", (1000, 0))]


def by_name(case: Case) -> bool:
    """Whether a window kernel can be asked for the case by name: its band is
    not the whole matrix (that one the runtime gives a kernel without a mask)."""
    return case.band() != (1 - case.sq, case.sk - 1)


def cases_for(entry, sanitize_one: bool):
    """The cases to run on one entry, forced by name."""
    if entry.causal == "window":
        if sanitize_one:
            return [Case(1, 2, 2, 100, 100, True, "top_left", (17, 0)),
                    Case(1, 4, 2, 37, 100, False, "bottom_right", (20, 5))]
        return [c for c in window_cases() if by_name(c)]
    if entry.causal == "bottom_right":
        if sanitize_one:
            return [Case(1, 2, 2, 37, 100, True, "bottom_right")]
        shapes = BOTTOM_RIGHT + UNEQUAL + ((1000, 1000),)
        return [Case(2, 3, 3, sq, sk, True, "bottom_right") for sq, sk in shapes] + \
            [Case(b, h, hkv, sq, sk, True, "bottom_right") for b, h, hkv, sq, sk in GROUPED[1:3]]
    causal = entry.causal == "top_left"
    if sanitize_one:
        return [Case(1, 2, 2, 100, 100, causal), Case(1, 4, 2, 100, 100, causal)]
    cases = []
    for s in SEQS:
        for b, h in (BH_ALL if s <= SMALL_SEQ else BH_LARGE):
            cases.append(Case(b, h, h, s, s, causal))
    for sq, sk in UNEQUAL:
        cases += [Case(b, h, h, sq, sk, causal) for b, h in BH_ALL]
    return cases + [Case(*shape, causal) for shape in GROUPED]


def default_cases():
    """Cases run with kernel=None, per dtype and head dim with a window kernel."""
    cases = [Case(2, 3, 3, 1000, 1000, True, "top_left", (63, 0)),   # a window kernel
             Case(2, 3, 3, 130, 1000, True, "bottom_right"),         # bottom_right or window
             Case(2, 3, 3, 257, 257, True, "bottom_right"),          # top_left's band
             Case(2, 3, 3, 1000, 1000, True, "top_left", (5000, 0)),  # top_left's band
             Case(1, 6, 2, 1000, 130, False, "bottom_right", (100, 100))]
    return cases + [c for c in window_cases() if not by_name(c)]


def reference_f64(q, k, v, mask):
    """softmax(q k^T / sqrt(D), keys outside `mask` at -inf) v in float64; rows
    that see no key give 0."""
    groups = q.shape[1] // k.shape[1]  # grouped KV heads: K/V head h // groups
    q, k, v = q.double(), k.double().repeat_interleave(groups, 1), v.double().repeat_interleave(groups, 1)
    scores = (q @ k.transpose(-1, -2)) / math.sqrt(q.shape[-1])
    if mask is None:
        return torch.softmax(scores, dim=-1) @ v
    scores.masked_fill_(~mask, -math.inf)
    probs = torch.softmax(scores, dim=-1).masked_fill_(~mask.any(-1, keepdim=True), 0.0)
    return probs @ v


def torch_sdpa(q, k, v, case: Case, mask):
    """(out, backend): PyTorch's SDPA with the same mask. A plain causal case with
    S_q = S_k uses is_causal, else the mask is passed explicitly (for S_q != S_k
    so that no backend's reading of is_causal can differ from ours); a case
    with a window or bottom-right alignment runs on the efficient backend, else
    math, with K/V heads repeated (rows with no key are NaN there)."""
    gqa = {"enable_gqa": True} if k.shape[1] != q.shape[1] else {}
    if case.plain:
        if case.causal and case.sq != case.sk:
            return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, **gqa), "auto"
        return F.scaled_dot_product_attention(q, k, v, is_causal=case.causal, **gqa), "auto"
    groups = q.shape[1] // k.shape[1]
    k, v = k.repeat_interleave(groups, 1), v.repeat_interleave(groups, 1)
    for name, backend in (("efficient", SDPBackend.EFFICIENT_ATTENTION), ("math", SDPBackend.MATH)):
        try:
            with sdpa_kernel(backend):
                return F.scaled_dot_product_attention(q, k, v, attn_mask=mask), name
        except RuntimeError:
            if backend == SDPBackend.MATH:
                raise
    raise AssertionError("unreachable")


def rel_l2(out, ref) -> float:
    return (torch.linalg.vector_norm(out.double() - ref) / torch.linalg.vector_norm(ref)).item()


def sdpa_kwargs(case: Case, library, kernel: Optional[str]) -> dict:
    kwargs = {"causal": case.causal, "library": library, "kernel": kernel}
    if case.hkv != case.h:
        kwargs["enable_gqa"] = True
    if not case.plain:
        kwargs.update(causal_align=case.align, window_size=case.window)
    return kwargs


def run_ours(q, k, v, case: Case, library, kernel: Optional[str], takes_out: bool):
    """(out, poisoned): sdpa with its output poisoned with NaN first, through out= if
    sdpa takes it, else by freeing a NaN block of the output's size into the caching
    allocator just before the call (retried while sdpa's output lands elsewhere)."""
    shape = (*q.shape[:-1], v.shape[-1])
    kwargs = sdpa_kwargs(case, library, kernel)
    for _ in range(3):
        poison = torch.full(shape, math.nan, dtype=q.dtype, device=q.device)
        if takes_out:
            return sdpa(q, k, v, out=poison, **kwargs), True
        ptr = poison.data_ptr()
        del poison
        out = sdpa(q, k, v, **kwargs)
        if out.data_ptr() == ptr:
            return out, True
    return out, False


@dataclass
class Result:
    ours: float = math.nan
    theirs: float = math.nan
    passed: bool = False
    why: str = ""
    empty_rows: int = 0
    backend: str = ""


def compare(out, ref, visible_rows, theirs: float, why_theirs: str, poisoned: bool) -> Result:
    """Our output against the reference: finite, exactly 0 on rows that see no key,
    and an error within twice torch's."""
    result = Result(rel_l2(out, ref), theirs)
    bad = (~torch.isfinite(out)).sum().item()
    if bad:
        result.why = f"{bad} of {out.numel()} outputs NaN/inf (unwritten?)"
        return result
    if visible_rows is not None:
        nonzero = (out[..., ~visible_rows, :] != 0).sum().item()
        if nonzero:
            result.why = f"{nonzero} outputs of rows that see no key are not 0"
            return result
    if why_theirs:
        result.why = why_theirs
        return result
    result.passed = result.ours <= 2 * theirs + 1e-6
    result.why = "" if result.passed else "error above 2x torch's"
    if not poisoned:
        result.why = (result.why + " (poison missed)").strip()
    return result


def check_case(dtype: str, d: int, case: Case, library, kernel: Optional[str],
               takes_out: bool, dv: Optional[int] = None) -> Result:
    """One case on `kernel` (a name, or None for the runtime's choice); q and k
    of head dim d, v and the output of dv (d when None)."""
    dt, dv = DTYPES[dtype], dv or d
    q = torch.randn(case.b, case.h, case.sq, d, dtype=dt, device="cuda")
    k = torch.randn(case.b, case.hkv, case.sk, d, dtype=dt, device="cuda")
    v = torch.randn(case.b, case.hkv, case.sk, dv, dtype=dt, device="cuda")
    mask = case_mask(case, q.device)
    ref = reference_f64(q, k, v, mask)
    rows = None if mask is None else mask.any(-1)  # the rows that see a key
    empty = 0 if rows is None else int((~rows).sum().item())
    backend = ""
    try:
        theirs_out, backend = torch_sdpa(q, k, v, case, mask)
        theirs = rel_l2(theirs_out, ref) if not empty else \
            rel_l2(theirs_out[..., rows, :], ref[..., rows, :])
    except Exception as exc:  # noqa: BLE001 - recorded, the case then fails
        theirs, why_theirs = math.nan, f"torch SDPA raised {type(exc).__name__}: {exc}"
    else:
        why_theirs = "" if math.isfinite(theirs) else "torch SDPA's error is not finite"
    try:
        out, poisoned = run_ours(q, k, v, case, library, kernel, takes_out)
        torch.cuda.synchronize()
    except Exception as exc:  # noqa: BLE001 - a driver error or a bad entry fails the case
        return Result(theirs=theirs, why=f"sdpa raised {type(exc).__name__}: " +
                      " ".join(str(exc).split())[:300], empty_rows=empty, backend=backend)
    if tuple(out.shape) != (case.b, case.h, case.sq, dv):
        return Result(theirs=theirs, why=f"output shape {tuple(out.shape)}", empty_rows=empty,
                      backend=backend)
    result = compare(out, ref, rows if empty else None, theirs, why_theirs, poisoned)
    result.empty_rows, result.backend = empty, backend
    return result


def planned_kernel(library, dtype: str, d: int, case: Case, capability,
                   dv: Optional[int] = None) -> str:
    """The name of the kernel the runtime chooses for the case (kernel=None), from
    its plan of contiguous tensors of the case's shapes."""
    args, dv = TaSdpaArgs(), dv or d
    # Four views 2**36 bytes apart: the runtime refuses an output that
    # overlaps an input, so they may not share one made-up address.
    for index, (slot, (heads, seq, cols)) in enumerate((
            (args.q, (case.h, case.sq, d)), (args.k, (case.hkv, case.sk, d)),
            (args.v, (case.hkv, case.sk, dv)), (args.o, (case.h, case.sq, dv)))):
        slot.data = (index + 1) << 36
        slot.sizes[:] = (case.b, heads, seq, cols)
        slot.strides[:] = (heads * seq * cols, seq * cols, cols, 1)
    mask = ("bottom_right" if case.bottom_right else "top_left") if case.causal else "none"
    args.dtype, args.mask, args.scale = TA_DTYPES[dtype], MASKS[mask], 1.0 / math.sqrt(d)
    if case.window != (-1, -1):
        args.window = TaWindow(1, int(case.bottom_right), *case.window)
    return library.kernels[library.plan(args, capability).kernel].name


def choice_problem(library, dtype: str, d: int, case: Case, chosen: str, capability,
                   dv: Optional[int] = None) -> str:
    """Why the runtime's choice is wrong, or "": its kernel must compute the
    case's band, and be a window kernel only where no kernel of the band's own
    mask runs on this device."""
    kinds = {k.name: k.mask for k in library.kernels}
    masks = masks_computing(case)
    if kinds[chosen] not in masks:
        return f"the runtime chose {chosen} (mask {kinds[chosen]}), whose band is not {case.band()}"
    if kinds[chosen] == "window":
        own = [k.name for k in library.kernels if k.dtype == dtype and k.head_dim == d
               and k.head_dim_v == (dv or d) and k.mask in masks and k.mask != "window" and library.runs_on(k, capability)]
        if own:
            return f"the runtime chose the window kernel {chosen} where {own[0]} runs"
    return ""


def self_check(device) -> None:
    """band(), visible_pairs() and visible_mask() agree on awkward shapes (cheap)."""
    for sq, sk in ((1, 1), (1, 9), (9, 1), (7, 13), (13, 7), (64, 64)):
        for causal in (False, True):
            for br in (False, True):
                for left, right in ((-1, -1), (0, 0), (3, 0), (2, 5), (-1, 2), (4, -1), (HUGE, 1)):
                    mask = visible_mask(sq, sk, causal, br, left, right, device)
                    lo, hi = band(sq, sk, causal, br, left, right)
                    diag = (torch.arange(sk, device=device)[None, :]
                            - torch.arange(sq, device=device)[:, None])
                    shape = (sq, sk, causal, br, left, right)
                    assert torch.equal(mask, (diag >= lo) & (diag <= hi)), shape
                    assert int(mask.sum()) == visible_pairs(*shape), shape


def record(rows, meta, name: str, selected: str, dtype: str, d: int, mask: str, case: Case,
           result: Result, dv: Optional[int] = None) -> None:
    ok = result.passed
    print(f"{'PASS' if ok else 'FAIL'} {name} {case.describe()} "
          f"err={result.ours:.2e} torch={result.theirs:.2e}"
          + (f" empty_rows={result.empty_rows}" if result.empty_rows else "")
          + (" (runtime's choice)" if selected == "runtime" else "")
          + (f"  {result.why}" if result.why else ""), flush=True)
    rows.append(dict(meta, entry=name, dtype=dtype, D=d, Dv=dv or d, causal=mask, B=case.b, H=case.h,
                     Hkv=case.hkv, Sq=case.sq, Sk=case.sk, rel_l2=f"{result.ours:.3e}",
                     torch_rel_l2=f"{result.theirs:.3e}", **{"pass": ok},
                     case_causal=case.causal, align=case.align, window_left=case.window[0],
                     window_right=case.window[1], empty_rows=result.empty_rows,
                     selected=selected, torch_backend=result.backend))


def check_default_choice(rows, meta, library, cc, dtype: str, d: int, takes_out: bool,
                         dv: Optional[int] = None) -> None:
    """default_cases() with kernel=None on one dtype and pair of head dims."""
    for case in default_cases():
        try:
            chosen = planned_kernel(library, dtype, d, case, cc, dv)
        except (TiledAttnError, ValueError) as exc:
            name, mask = f"(runtime's choice, {dtype}, D={d}, D_v={dv or d})", ""
            result = Result(why=f"no plan: {' '.join(str(exc).split())[:300]}")
        else:
            name, mask = chosen, next(k.mask for k in library.kernels if k.name == chosen)
            result = check_case(dtype, d, case, library, None, takes_out, dv)
            wrong = choice_problem(library, dtype, d, case, chosen, cc, dv)
            if wrong:
                result.passed, result.why = False, (wrong + "; " + result.why).strip("; ")
        record(rows, meta, name, "runtime", dtype, d, mask, case, result, dv)


def write_csv(path: Path, rows) -> None:
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=CSV_FIELDS)
        w.writeheader()
        w.writerows(rows)


def main() -> int:
    args = parse_args()
    if not torch.cuda.is_available():
        print("check_correctness: no CUDA device", file=sys.stderr)
        return 2
    try:
        library = KernelLibrary.load(args.library)
    except TiledAttnError as exc:
        print(f"check_correctness: {exc}", file=sys.stderr)
        return 2
    self_check(torch.device("cuda"))
    torch.manual_seed(args.seed)
    cc = torch.cuda.get_device_capability()
    device = torch.cuda.get_device_name()
    meta = {"date": datetime.date.today().isoformat(), "device": device}
    takes_out = "out" in inspect.signature(sdpa).parameters
    print(f"# {device} (sm_{cc[0]}{cc[1]}), torch {torch.__version__}, library {library.path} "
          f"({len(library.kernels)} kernels), seed {args.seed}, poison via "
          f"{'out=' if takes_out else 'the caching allocator'}", flush=True)
    rows, skipped, windowed = [], 0, set()
    for entry in library.entries:
        if not library.runs_on(entry, cc):
            print(f"SKIP {entry.name}: {entry.arch} does not run on sm_{cc[0]}{cc[1]}")
            skipped += 1
            continue
        if entry.causal not in MASK_KINDS:
            print(f"SKIP {entry.name}: causal={entry.causal} cannot be asked of sdpa")
            skipped += 1
            continue
        if getattr(entry, "varlen", False):
            # A varlen kernel runs only packed batches: check_varlen.py.
            print(f"SKIP {entry.name}: a varlen kernel (bench/check_varlen.py checks it)")
            skipped += 1
            continue
        if getattr(entry, "softcap", False):
            # A softcap kernel runs only calls with a softcap: check_softcap.py.
            print(f"SKIP {entry.name}: a softcap kernel (bench/check_softcap.py checks it)")
            skipped += 1
            continue
        if entry.causal == "window":
            windowed.add((entry.dtype, entry.head_dim, entry.head_dim_v))
        for case in cases_for(entry, args.sanitize_one):
            result = check_case(entry.dtype, entry.head_dim, case, library, entry.name, takes_out,
                                entry.head_dim_v)
            record(rows, meta, entry.name, "name", entry.dtype, entry.head_dim, entry.causal,
                   case, result, entry.head_dim_v)
    if not args.sanitize_one:
        for dtype, d, dv in sorted(windowed):
            check_default_choice(rows, meta, library, cc, dtype, d, takes_out, dv)
        args.out.mkdir(parents=True, exist_ok=True)
        path = args.out / f"{args.stem}_{device_slug(device)}_{meta['date']}.csv"
        write_csv(path, rows)
        print(f"wrote {path}")
    passed = sum(r["pass"] for r in rows)
    failed = len(rows) - passed
    if passed + failed == 0:
        print("check_correctness: no entry of the library runs on this GPU", file=sys.stderr)
    print(f"{passed} passed, {failed} failed" + (f", {skipped} skipped" if skipped else ""))
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
