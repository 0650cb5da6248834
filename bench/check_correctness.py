#!/usr/bin/env python3
"""Every kernel of the library against a float64 reference, next to PyTorch's SDPA.

    python3 bench/check_correctness.py --out bench/results [--library build/kernels]
    compute-sanitizer --tool memcheck python3 bench/check_correctness.py --sanitize-one

For each manifest entry that runs on this GPU (forced with sdpa(..., kernel=name)):
fresh torch.randn inputs over a set of shapes, the output poisoned with NaN
before each run, the relative L2 error of ours and of
torch.nn.functional.scaled_dot_product_attention against float64 (grouped KV
heads included, with enable_gqa on both sides). A case
passes iff ours <= 2 * torch's + 1e-6 and the output is finite. Prints one
line per case and "N passed, M failed"; exits 1 on any failure.
"""

from __future__ import annotations

import argparse
import csv
import datetime
import inspect
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import device_slug  # noqa: E402  (puts python/ on sys.path)

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from tiled_attn import KernelLibrary, TiledAttnError, sdpa  # noqa: E402

DTYPES = {"f16": torch.float16, "bf16": torch.bfloat16}
SEQS = (1, 17, 128, 1000, 4096)
SMALL_SEQ = 1000                       # up to here, all four (B, H) combinations
BH_ALL, BH_LARGE = ((1, 1), (1, 3), (3, 1), (3, 3)), ((1, 1), (3, 3))
UNEQUAL = ((100, 37), (37, 100))       # S_q != S_k
#: Grouped KV heads (B, H, H_kv, S_q, S_k): GQA 4:1 and 3:1, MQA, awkward lengths.
GROUPED = ((2, 8, 2, 1000, 1000), (1, 6, 1, 100, 37), (3, 6, 2, 37, 100), (1, 4, 2, 4096, 4096))
CSV_FIELDS = ("date", "device", "entry", "dtype", "D", "causal", "B", "H", "Hkv", "Sq", "Sk",
              "rel_l2", "torch_rel_l2", "pass")


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, default=Path("bench/results"), help="results folder")
    p.add_argument("--library", type=Path, default=None,
                   help="kernel library folder (default: $TILED_ATTN_KERNELS or build/kernels)")
    p.add_argument("--sanitize-one", action="store_true",
                   help="one small case (B=1, H=2, S=100) per entry, no CSV; for compute-sanitizer")
    p.add_argument("--seed", type=int, default=0, help="torch.manual_seed at start")
    return p.parse_args()



def cases_for(entry, sanitize_one: bool):
    """(B, H, H_kv, S_q, S_k) shapes to run for one entry."""
    if sanitize_one:
        return [(1, 2, 2, 100, 100), (1, 4, 2, 100, 100)]
    cases = []
    for s in SEQS:
        for b, h in (BH_ALL if s <= SMALL_SEQ else BH_LARGE):
            cases.append((b, h, h, s, s))
    for sq, sk in UNEQUAL:
        cases += [(b, h, h, sq, sk) for b, h in BH_ALL]
    return cases + list(GROUPED)


def causal_mask(sq: int, sk: int, device):
    """PyTorch's is_causal (top-left): query i sees keys j <= i."""
    return torch.ones(sq, sk, dtype=torch.bool, device=device).tril()


def reference_f64(q, k, v, causal: bool):
    groups = q.shape[1] // k.shape[1]  # grouped KV heads: K/V head h // groups
    q, k, v = q.double(), k.double().repeat_interleave(groups, 1), v.double().repeat_interleave(groups, 1)
    scores = (q @ k.transpose(-1, -2)) / math.sqrt(q.shape[-1])
    if causal:
        scores.masked_fill_(~causal_mask(q.shape[-2], k.shape[-2], q.device), -math.inf)
    return torch.softmax(scores, dim=-1) @ v


def torch_sdpa(q, k, v, causal: bool):
    """PyTorch's SDPA with the same mask. For S_q != S_k the top-left mask is passed
    explicitly, so that no backend's reading of is_causal can differ from ours."""
    gqa = {"enable_gqa": True} if k.shape[1] != q.shape[1] else {}
    if causal and q.shape[-2] != k.shape[-2]:
        return F.scaled_dot_product_attention(
            q, k, v, attn_mask=causal_mask(q.shape[-2], k.shape[-2], q.device), **gqa)
    return F.scaled_dot_product_attention(q, k, v, is_causal=causal, **gqa)


def rel_l2(out, ref) -> float:
    return (torch.linalg.vector_norm(out.double() - ref) / torch.linalg.vector_norm(ref)).item()


def run_ours(q, k, v, causal: bool, library, entry_name: str, takes_out: bool):
    """(out, poisoned): sdpa with its output poisoned with NaN first, through out= if
    sdpa takes it, else by freeing a NaN block of the output's size into the caching
    allocator just before the call (retried while sdpa's output lands elsewhere)."""
    shape = (*q.shape[:-1], v.shape[-1])
    gqa = {"enable_gqa": True} if k.shape[1] != q.shape[1] else {}
    for _ in range(3):
        poison = torch.full(shape, math.nan, dtype=q.dtype, device=q.device)
        if takes_out:
            return sdpa(q, k, v, causal=causal, library=library, kernel=entry_name,
                        out=poison, **gqa), True
        ptr = poison.data_ptr()
        del poison
        out = sdpa(q, k, v, causal=causal, library=library, kernel=entry_name, **gqa)
        if out.data_ptr() == ptr:
            return out, True
    return out, False


def check_case(entry, shape, library, takes_out: bool):
    """One case: (rel_l2 ours, rel_l2 torch, passed, reason)."""
    b, h, hkv, sq, sk = shape
    dtype, d, causal = DTYPES[entry.dtype], entry.head_dim, entry.causal == "top_left"
    q = torch.randn(b, h, sq, d, dtype=dtype, device="cuda")
    k = torch.randn(b, hkv, sk, d, dtype=dtype, device="cuda")
    v = torch.randn(b, hkv, sk, d, dtype=dtype, device="cuda")
    ref = reference_f64(q, k, v, causal)
    try:
        theirs = rel_l2(torch_sdpa(q, k, v, causal), ref)
    except Exception as exc:  # noqa: BLE001 - recorded, the case then fails
        theirs, why_theirs = math.nan, f"torch SDPA raised {type(exc).__name__}: {exc}"
    else:
        why_theirs = "" if math.isfinite(theirs) else "torch SDPA's error is not finite"
    try:
        out, poisoned = run_ours(q, k, v, causal, library, entry.name, takes_out)
        torch.cuda.synchronize()
    except Exception as exc:  # noqa: BLE001 - a driver error or a bad entry fails the case
        return math.nan, theirs, False, f"sdpa raised {type(exc).__name__}: " + \
            " ".join(str(exc).split())[:300]
    if tuple(out.shape) != (b, h, sq, d):
        return math.nan, theirs, False, f"output shape {tuple(out.shape)}"
    bad = (~torch.isfinite(out)).sum().item()
    ours = rel_l2(out, ref)
    if bad:
        return ours, theirs, False, f"{bad} of {out.numel()} outputs NaN/inf (unwritten?)"
    if why_theirs:
        return ours, theirs, False, why_theirs
    passed = ours <= 2 * theirs + 1e-6
    why = "" if passed else "error above 2x torch's"
    return ours, theirs, passed, why if poisoned else (why + " (poison missed)").strip()


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
    torch.manual_seed(args.seed)
    cc = torch.cuda.get_device_capability()
    device = torch.cuda.get_device_name()
    date = datetime.date.today().isoformat()
    takes_out = "out" in inspect.signature(sdpa).parameters
    print(f"# {device} (sm_{cc[0]}{cc[1]}), torch {torch.__version__}, library {library.path} "
          f"({len(library.kernels)} kernels), seed {args.seed}, poison via "
          f"{'out=' if takes_out else 'the caching allocator'}", flush=True)
    rows, passed, failed, skipped = [], 0, 0, 0
    for entry in library.entries:
        if not library.runs_on(entry, cc):
            print(f"SKIP {entry.name}: {entry.arch} does not run on sm_{cc[0]}{cc[1]}")
            skipped += 1
            continue
        if entry.causal not in ("none", "top_left"):
            print(f"SKIP {entry.name}: causal={entry.causal} cannot be asked of sdpa")
            skipped += 1
            continue
        for shape in cases_for(entry, args.sanitize_one):
            ours, theirs, ok, why = check_case(entry, shape, library, takes_out)
            b, h, hkv, sq, sk = shape
            passed, failed = passed + ok, failed + (not ok)
            print(f"{'PASS' if ok else 'FAIL'} {entry.name} B={b} H={h} Hkv={hkv} Sq={sq} Sk={sk} "
                  f"err={ours:.2e} torch={theirs:.2e}" + (f"  {why}" if why else ""), flush=True)
            rows.append({"date": date, "device": device, "entry": entry.name,
                         "dtype": entry.dtype, "D": entry.head_dim, "causal": entry.causal,
                         "B": b, "H": h, "Hkv": hkv, "Sq": sq, "Sk": sk, "rel_l2": f"{ours:.3e}",
                         "torch_rel_l2": f"{theirs:.3e}", "pass": ok})
    if not args.sanitize_one:
        args.out.mkdir(parents=True, exist_ok=True)
        path = args.out / f"correctness_{device_slug(device)}_{date}.csv"
        write_csv(path, rows)
        print(f"wrote {path}")
    if passed + failed == 0:
        print("check_correctness: no entry of the library runs on this GPU", file=sys.stderr)
    print(f"{passed} passed, {failed} failed" + (f", {skipped} skipped" if skipped else ""))
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
