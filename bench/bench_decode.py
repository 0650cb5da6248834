#!/usr/bin/env python3
"""Decode attention (issue 38): one new query token per sequence against a
long KV cache, tiled-attn next to PyTorch's SDPA backends, as GB/s of K and V.

    python3 bench/bench_decode.py [--out bench/results/decode] [--library DIR]
                                  [--check] [--quick]
    python3 bench/bench_decode.py --replot bench/results/decode/decode_<device>_<date>.csv

Grid (the issue's table): bf16, S_q = 1, 32 query heads on 8 KV heads,
D = 128, batch in {1, 16, 64}, S_k in {4096, 32768}; q [B, H_q, 1, D], K and
V [B, H_kv, S_k, D] (contiguous), fresh torch.randn inputs. Providers, each
taking turns over --rounds rounds on the same inputs:

- ``tiled-attn``: sdpa(q, k, v, enable_gqa=True): packed GQA (the group's
  query heads as the rows of one tile) and split-KV where the runtime's
  heuristic chooses it;
- ``tiled-attn-unsplit``: the same with num_splits=1 (packed GQA alone);
- ``torch-auto`` and each forced backend (flash, efficient, cuDNN), with
  enable_gqa=True.

Times are medians of CUDA-event timings after a warm-up (bench/common.py),
each provider's median of its round medians; enough input sets rotate
that K and V are read from HBM, not L2 (at least 256 MiB of them, at most 8
sets). GB/s counts K's and V's bytes once (2 B H_kv S_k D * 2 bytes).

--check first compares outputs (and log-sum-exps) with float64 on odd
shapes (GQA ratios 1, 4, 8; D 64/128/256; lengths 1 and not a multiple of a
block; forced and chosen splits; bottom-right causal), within 2x of PyTorch's
math backend's error, and writes decode-check_<device>_<date>.csv.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import math
import statistics
import sys
from pathlib import Path

# torch and the package are imported by main(), so that --replot runs where
# only matplotlib is.
torch = F = SDPBackend = sdpa_kernel = None

CASES = [(b, sk) for b in (1, 16, 64) for sk in (4096, 32768)]
H_Q, H_KV, D = 32, 8, 128
PROVIDERS = ("tiled-attn", "tiled-attn-unsplit", "tiled-attn-kvcache", "torch-auto",
             "torch-flash", "torch-efficient", "torch-cudnn")
SWEEP_SPLITS = (2, 4, 8, 12, 16, 24, 32, 48, 64)
#: (D, page size) pairs the library's paged kernels do not take: their
#: block_n at D = 256 is 32, and only D = 64 and 128 have kernels of 16.
UNPAGED = {(256, 16), (256, 32)}


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "results" / "decode")
    p.add_argument("--library", default=None)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--iters", type=int, default=50)
    p.add_argument("--check", action="store_true")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--replot", type=Path, default=None)
    p.add_argument("--sweep", action="store_true",
                   help="batch 1 only: tiled-attn with num_splits forced to each of "
                        "SWEEP_SPLITS, next to the heuristic's and PyTorch's")
    p.add_argument("--tag", default="", help="appended to the CSV's name")
    return p.parse_args()


def import_gpu_modules() -> None:
    global torch, F, SDPBackend, sdpa_kernel
    import torch as torch_module
    import torch.nn.functional as functional
    from torch.nn.attention import SDPBackend as backend, sdpa_kernel as forced

    torch, F, SDPBackend, sdpa_kernel = torch_module, functional, backend, forced


def provider(name: str, library):
    from tiled_attn.sdpa import sdpa_eager

    if name == "tiled-attn":
        return lambda q, k, v: sdpa_eager(q, k, v, library=library, enable_gqa=True)
    if name == "tiled-attn-unsplit":
        return lambda q, k, v: sdpa_eager(q, k, v, library=library, enable_gqa=True,
                                          num_splits=1)
    if name == "tiled-attn-kvcache":
        # sdpa_with_kvcache on [B, S_max, H_kv, D] caches (vLLM's and
        # FlashAttention's layout), every cache full: kvcache_sets' inputs.
        from tiled_attn import sdpa_with_kvcache

        return lambda q, k, v: sdpa_with_kvcache(q, k, v, library=library)
    if name.startswith("tiled-attn-s"):
        splits = int(name[len("tiled-attn-s"):])
        return lambda q, k, v: sdpa_eager(q, k, v, library=library, enable_gqa=True,
                                          num_splits=splits)
    backend = {"torch-auto": None, "torch-flash": SDPBackend.FLASH_ATTENTION,
               "torch-efficient": SDPBackend.EFFICIENT_ATTENTION,
               "torch-cudnn": SDPBackend.CUDNN_ATTENTION}[name]

    def run(q, k, v):
        with (sdpa_kernel(backend) if backend is not None else contextlib.nullcontext()):
            return F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
    return run


def reference(q, k, v, causal=False):
    """float64 attention with grouped KV heads, bottom-right causal if asked;
    returns (out, lse)."""
    g = q.shape[1] // k.shape[1]
    k64 = k.double().repeat_interleave(g, 1)
    v64 = v.double().repeat_interleave(g, 1)
    s = q.double() @ k64.transpose(-1, -2) / math.sqrt(q.shape[-1])
    if causal:
        sq, sk = q.shape[2], k.shape[2]
        i = torch.arange(sq, device=q.device)[:, None]
        j = torch.arange(sk, device=q.device)[None, :]
        s = s.masked_fill(j > i + sk - sq, float("-inf"))
    return torch.softmax(s, -1) @ v64, torch.logsumexp(s, -1)


def check(library, device: str, date: str, out: Path) -> bool:
    from common import rel_l2, write_csv
    from tiled_attn.sdpa import sdpa_eager

    torch.manual_seed(0)
    shapes = [  # b, h_q, h_kv, s_q, s_k, d, causal, num_splits
        (1, 32, 8, 1, 32768, 128, False, 0), (3, 8, 8, 1, 1000, 128, False, 0),
        (2, 16, 2, 1, 777, 64, False, 0), (2, 8, 1, 1, 5000, 256, False, 0),
        (1, 8, 1, 1, 1, 128, False, 0), (2, 12, 4, 1, 4097, 128, True, 0),
        (1, 32, 8, 1, 4096, 128, False, 3), (1, 32, 8, 1, 4096, 128, False, 1),
        (2, 8, 2, 3, 3000, 128, False, 0), (1, 4, 4, 5, 2049, 64, False, 0),
        (1, 32, 4, 1, 65536, 128, False, 0), (4, 16, 2, 1, 333, 256, False, 0),
    ]
    rows, ok = [], True
    for b, hq, hkv, sq, sk, d, causal, splits in shapes:
        for dtype in (torch.bfloat16, torch.float16):
            q = torch.randn(b, hq, sq, d, device="cuda", dtype=dtype)
            k = torch.randn(b, hkv, sk, d, device="cuda", dtype=dtype)
            v = torch.randn(b, hkv, sk, d, device="cuda", dtype=dtype)
            ref, ref_lse = reference(q, k, v, causal)
            o, lse = sdpa_eager(q, k, v, causal=causal, causal_align="bottom_right",
                                library=library, enable_gqa=True, return_lse=True,
                                num_splits=splits)
            with sdpa_kernel(SDPBackend.MATH):
                m = F.scaled_dot_product_attention(
                    q, k.repeat_interleave(hq // hkv, 1), v.repeat_interleave(hq // hkv, 1),
                    attn_mask=(torch.ones(sq, sk, dtype=torch.bool, device="cuda")
                               .tril(sk - sq) if causal else None))
            err, math_err = rel_l2(o, ref), rel_l2(m, ref)
            lse_err = (lse.double() - ref_lse).abs().max().item()
            passed = err <= 2 * max(math_err, 1e-3) and lse_err < 1e-3
            ok &= passed
            rows.append(dict(b=b, h_q=hq, h_kv=hkv, s_q=sq, s_k=sk, d=d, causal=causal,
                             num_splits=splits, dtype=str(dtype).split(".")[-1],
                             rel_l2=f"{err:.3e}", pytorch_math_rel_l2=f"{math_err:.3e}",
                             lse_max_abs_err=f"{lse_err:.2e}", passed=passed))
            print(rows[-1], flush=True)
    write_csv(out, "decode-check", device, date, rows)
    return check_kvcache(library, device, date, out) and ok


def paged(kc, vc, page: int):
    """The caches ``[B, S_max, H_kv, D]`` as pages of ``page`` keys in a
    random order, with three more that no entry uses, what no key fills
    holding random values: (k_pages, v_pages, block_table), the pages
    ``[num_pages, page, H_kv, D]`` and the table int32 ``[B, max_pages]``."""
    b, smax = kc.shape[:2]
    per = -(-smax // page)
    order = torch.randperm(b * per + 3, device=kc.device)
    table = order[:b * per].view(b, per).to(torch.int32)
    pages = []
    for cache in (kc, vc):
        out = torch.randn(b * per + 3, page, *cache.shape[2:], device=cache.device,
                          dtype=cache.dtype)
        padded = torch.nn.functional.pad(cache, (0, 0, 0, 0, 0, per * page - smax))
        out[order[:b * per]] = padded.reshape(b * per, page, *cache.shape[2:])
        pages.append(out)
    return pages[0], pages[1], table


def check_kvcache(library, device: str, date: str, out: Path, page_sizes=(0,),
                  stem: str = "kvcache-check") -> bool:
    """sdpa_with_kvcache on [B, S_max, H_kv, D] caches filled to random
    lengths (0, 1, not a multiple of any block, full), S_q 1 to 8,
    bottom-right causal by each length, against float64 per sequence; for
    each page size of ``page_sizes`` but 0, the same caches paged (paged())
    through a block table."""
    from common import write_csv
    from tiled_attn import sdpa_with_kvcache

    torch.manual_seed(1)
    shapes = [  # b, s_q, h_q, h_kv, s_max, d, causal, lse
        (4, 1, 32, 8, 4096, 128, True, False), (5, 1, 8, 1, 3000, 64, True, True),
        (3, 1, 4, 4, 777, 256, False, True), (2, 4, 16, 2, 1000, 128, True, False),
        (6, 8, 8, 8, 513, 64, True, True), (1, 1, 32, 8, 32768, 128, True, True),
        (3, 3, 12, 4, 2049, 256, True, False),
    ]
    rows, ok = [], True
    for (b, sq, hq, hkv, smax, d, causal, want_lse), page, dtype in (
            (s, p, t) for s in shapes for p in page_sizes
            for t in (torch.bfloat16, torch.float16)):
        if (page and (d, page) in UNPAGED) or d not in library.head_dims:
            continue  # (a library built for fewer head dims: the others')
        q = torch.randn(b, sq, hq, d, device="cuda", dtype=dtype)
        kc = torch.randn(b, smax, hkv, d, device="cuda", dtype=dtype)
        vc = torch.randn(b, smax, hkv, d, device="cuda", dtype=dtype)
        lens = [smax, 0, 1][:b] + [int(x) for x in torch.randint(1, smax + 1, (max(0, b - 3),))]
        lens = [max(length, sq) if causal and length else length for length in lens]
        seqlens = torch.tensor(lens, dtype=torch.int32, device="cuda")
        table = None
        kin, vin = kc, vc
        if page:
            kin, vin, table = paged(kc, vc, page)
        result = sdpa_with_kvcache(q, kin, vin, seqlens, causal=causal, return_lse=want_lse,
                                   library=library, block_table=table)
        o, lse = result if want_lse else (result, None)
        err = num = lse_err = 0.0
        math_err = 0.0
        for i, length in enumerate(lens):
            if length == 0:
                err += o[i].double().abs().sum().item()
                continue
            qi = q[i:i + 1].transpose(1, 2)
            ki, vi = (t[i:i + 1, :length].transpose(1, 2) for t in (kc, vc))
            ref, ref_lse = reference(qi, ki, vi, causal)
            diff = o[i:i + 1].transpose(1, 2).double() - ref
            err += diff.norm().item() ** 2
            num += ref.norm().item() ** 2
            group = hq // hkv
            with sdpa_kernel(SDPBackend.MATH):
                m = F.scaled_dot_product_attention(
                    qi, ki.repeat_interleave(group, 1), vi.repeat_interleave(group, 1),
                    attn_mask=(torch.ones(sq, length, dtype=torch.bool, device="cuda")
                               .tril(length - sq) if causal else None))
            math_err += (m.double() - ref).norm().item() ** 2
            if lse is not None:
                lse_err = max(lse_err, (lse[i].double() - ref_lse[0]).abs().max().item())
        rel, math_rel = math.sqrt(err / num), math.sqrt(math_err / num)
        passed = rel <= 2 * max(math_rel, 1e-3) and lse_err < 1e-3
        if lse is not None and 0 in lens:
            passed &= bool(torch.isinf(lse[lens.index(0)]).all())
        ok &= passed
        rows.append(dict(b=b, s_q=sq, h_q=hq, h_kv=hkv, s_max=smax, d=d, causal=causal,
                         page_size=page or "",
                         lengths=" ".join(map(str, lens)), dtype=str(dtype).split(".")[-1],
                         rel_l2=f"{rel:.3e}", pytorch_math_rel_l2=f"{math_rel:.3e}",
                         lse_max_abs_err=f"{lse_err:.2e}", passed=passed))
        print(rows[-1], flush=True)
    write_csv(out, stem, device, date, rows)
    return ok


def time_case(calls: dict, b: int, sk: int, args, cycles) -> list[dict]:
    """One cell of the grid: each of ``calls`` (name -> (fn, input sets))
    timed in interleaved rounds (common.interleaved: each provider's median
    of its CUDA-event medians), as rows with GB/s of K and V read."""
    from common import interleaved, time_fn

    times, notes = interleaved(
        calls, args.rounds, lambda call: time_fn(call[0], call[1], args.warmup, args.iters,
                                                 cycles)[0])
    kv_bytes = 2 * b * H_KV * sk * D * 2
    rows = []
    for name in calls:
        ms = statistics.median(times[name]) if times[name] else float("nan")
        rows.append(dict(batch=b, s_k=sk, h_q=H_Q, h_kv=H_KV, d=D, provider=name,
                         ms=f"{ms:.4f}", gb_per_s=f"{kv_bytes / ms / 1e6:.0f}",
                         note=notes.get(name, "")))
        print(rows[-1], flush=True)
    return rows


def bench(library, args, cycles) -> list[dict]:
    rows = []
    cases = CASES[:2] if args.quick or args.sweep else CASES
    providers = PROVIDERS
    if args.sweep:
        providers = ("tiled-attn", *(f"tiled-attn-s{s}" for s in SWEEP_SPLITS), "torch-cudnn")
    for b, sk in cases:
        kv_bytes = 2 * b * H_KV * sk * D * 2
        sets_n = max(1, min(8, math.ceil((256 << 20) / kv_bytes)))
        sets = [(torch.randn(b, H_Q, 1, D, device="cuda", dtype=torch.bfloat16),
                 torch.randn(b, H_KV, sk, D, device="cuda", dtype=torch.bfloat16),
                 torch.randn(b, H_KV, sk, D, device="cuda", dtype=torch.bfloat16))
                for _ in range(sets_n)]
        # The caches' layout for sdpa_with_kvcache: [B, S_k, H_kv, D] copies
        # (q [B, 1, H_q, D]), made once per case.
        kv_sets = ([(q.transpose(1, 2), k.transpose(1, 2).contiguous(),
                     v.transpose(1, 2).contiguous()) for q, k, v in sets]
                   if "tiled-attn-kvcache" in providers else None)
        calls = {name: (provider(name, library),
                        kv_sets if name == "tiled-attn-kvcache" else sets)
                 for name in providers}
        rows += time_case(calls, b, sk, args, cycles)
        del sets, kv_sets
        torch.cuda.empty_cache()
    return rows


def plot(csv_path: Path) -> None:
    import csv
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = list(csv.DictReader(csv_path.open()))
    cells = sorted({(int(r["batch"]), int(r["s_k"])) for r in rows})
    names = [p for p in PROVIDERS if any(r["provider"] == p for r in rows)]
    fig, ax = plt.subplots(figsize=(10, 4.5))
    width = 0.8 / len(names)
    for i, name in enumerate(names):
        values = []
        for cell in cells:
            match = [r for r in rows if (int(r["batch"]), int(r["s_k"])) == cell
                     and r["provider"] == name]
            values.append(float(match[0]["gb_per_s"]) if match and match[0]["gb_per_s"] != "nan"
                          else 0.0)
        ax.bar([c + i * width for c in range(len(cells))], values, width, label=name)
    ax.set_xticks([c + 0.4 - width / 2 for c in range(len(cells))])
    ax.set_xticklabels([f"B={b}\nS_k={sk // 1024}k" for b, sk in cells])
    ax.set_ylabel("GB/s of K and V read")
    stem = csv_path.stem
    ax.set_title(f"Decode, bf16, S_q=1, 32/8 heads, D=128 ({stem.split('_', 1)[1]})")
    ax.legend(fontsize=8, ncol=3)
    fig.tight_layout()
    fig.savefig(csv_path.with_suffix(".png"), dpi=120)
    print(f"wrote {csv_path.with_suffix('.png')}")


def main() -> int:
    args = parse_args()
    if args.replot:
        plot(args.replot)
        return 0
    import_gpu_modules()
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from common import sleep_cycles_per_ms, try_plot, write_csv
    from tiled_attn import KernelLibrary
    from tiled_attn.sdpa import library_of

    library = library_of(args.library) if args.library else KernelLibrary.load()
    device = torch.cuda.get_device_name()
    date = datetime.date.today().isoformat()
    ok = True
    if args.check:
        ok = check(library, device, date, args.out)
    rows = bench(library, args, sleep_cycles_per_ms())
    stem = ("decode-sweep" if args.sweep else "decode") + (f"-{args.tag}" if args.tag else "")
    path = write_csv(args.out, stem, device, date, rows)
    if args.sweep:
        return 0 if ok else 1
    try_plot(plot, path)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
