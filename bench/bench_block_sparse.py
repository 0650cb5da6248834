#!/usr/bin/env python3
"""Block-sparse attention on the GPU (issue 37): document masking with a block
mask (tiled_attn.create_block_mask), against float64, PyTorch's math backend
and FlexAttention.

    python3 bench/bench_block_sparse.py [--out bench/results/block-sparse] [--rounds 5]
    python3 bench/bench_block_sparse.py --replot bench/results/block-sparse/block-sparse-bench_<device>_<date>.csv

Correctness (block-sparse-check CSV): bf16 and f16, D = 128, odd shapes
(S not a multiple of 128, grouped KV heads), documents of random lengths:
the block-sparse kernels (none_sparse+document, none_sparse+document_causal)
and PyTorch's math backend
(the document mask as a boolean attn_mask) against float64; tiled-attn's
error must be within 2x of PyTorch's. The block-sparse kernel without a
mask function (none_sparse) under a random block mask, against float64 with
that block mask expanded to elements. create_block_mask against a per-block
loop.

Speed (block-sparse-bench CSV): bf16, D = 128, B = 1, H = 16, S = 16384,
documents of 1024 tokens. Providers in interleaved rounds (CUDA events after
a warm-up, the median of each round's median, random normal inputs):
tiled-attn's block-sparse document kernel, its document kernel without a
block mask (every block visited), its plain kernel (no mask: the issue's
bar is 5x faster than this), FlexAttention with the document mask_mod and
its block mask, and PyTorch's SDPA without a mask; and the causal case:
the block-sparse document_causal kernel, tiled-attn's and PyTorch's causal
kernels, FlexAttention with the causal document mask_mod. Reported in ms
and as the speed-up over tiled-attn's plain kernel of the case.
"""

from __future__ import annotations

import argparse
import datetime
import statistics
from pathlib import Path

import torch

import tiled_attn
from common import RESULTS, median_ms, write_csv


def documents(lengths, device):
    """Per-token document ids for documents of the given lengths."""
    return torch.cat([torch.full((n,), i, dtype=torch.int32, device=device)
                      for i, n in enumerate(lengths)])


def random_lengths(total, mean, gen):
    out = []
    while sum(out) < total:
        out.append(int(torch.randint(mean // 4, 2 * mean, (1,), generator=gen)))
    out[-1] -= sum(out) - total
    return [n for n in out if n > 0]


def error(out, ref):
    return ((out.double() - ref).norm() / ref.norm()).item()


def float64_reference(q, k, v, visible):
    group = q.shape[1] // k.shape[1]
    k, v = (t.double().repeat_interleave(group, dim=1) for t in (k, v))
    s = q.double() @ k.transpose(-1, -2) / q.shape[-1] ** 0.5
    s = s.masked_fill(~visible, float("-inf"))
    p = torch.softmax(s, dim=-1).nan_to_num(0.0)
    return p @ v


def check(rows, device, date):
    gen = torch.Generator().manual_seed(0)
    for dtype in (torch.bfloat16, torch.float16):
        for b, h, hkv, s in ((2, 4, 2, 1000), (1, 8, 8, 1500), (2, 4, 1, 777)):
            ids = torch.stack([documents(random_lengths(s, 300, gen), "cuda") for _ in range(b)])
            q = torch.randn(b, h, s, 128, device="cuda", dtype=dtype)
            k, v = (torch.randn(b, hkv, s, 128, device="cuda", dtype=dtype) for _ in range(2))
            visible = (ids[:, None, :, None] == ids[:, None, None, :])
            causal = torch.ones(s, s, dtype=torch.bool, device="cuda").tril()
            for function, seen in (("document", visible), ("document_causal", visible & causal)):
                block_mask = tiled_attn.create_block_mask(seen)
                out = tiled_attn.sdpa(q, k, v, enable_gqa=hkv != h, mask_mod=function,
                                      mask_mod_args=(ids,), block_mask=block_mask)
                ref = float64_reference(q, k, v, seen)
                with torch.nn.attention.sdpa_kernel(torch.nn.attention.SDPBackend.MATH):
                    torch_out = torch.nn.functional.scaled_dot_product_attention(
                        q, k, v, attn_mask=seen, enable_gqa=hkv != h)
                ours, theirs = error(out, ref), error(torch_out, ref)
                rows.append({"device": device, "date": date, "kernel": f"none_sparse+{function}",
                             "dtype": str(dtype).split(".")[-1], "b": b, "h": h, "hkv": hkv,
                             "s": s, "visited": round(block_mask.sparsity(), 3),
                             "rel_l2": f"{ours:.3e}", "torch_math_rel_l2": f"{theirs:.3e}",
                             "ok": ours <= 2 * theirs})
            # No mask function: a random block mask, partial blocks seen in
            # full but for S_k.
            n = tiled_attn.block_mask.BLOCK_SIZE
            nq, nk = -(-s // n), -(-s // n)
            kinds = torch.randint(0, 3, (b, h, nq, nk), generator=gen).cuda()
            kinds[..., -1] = kinds[..., -1].clamp(max=1)  # a block across S_k is never full
            from tiled_attn.block_mask import BlockMask, _lists
            counts, indices = _lists(torch, kinds == 1)
            full_counts, full_indices = _lists(torch, kinds == 2)
            random_mask = BlockMask(counts, indices, full_counts, full_indices, (s, s))
            out = tiled_attn.sdpa(q, k, v, enable_gqa=hkv != h, block_mask=random_mask)
            element = (kinds > 0).repeat_interleave(n, 2).repeat_interleave(n, 3)[..., :s, :s]
            ref = float64_reference(q, k, v, element)
            with torch.nn.attention.sdpa_kernel(torch.nn.attention.SDPBackend.MATH):
                torch_out = torch.nn.functional.scaled_dot_product_attention(
                    q, k, v, attn_mask=element, enable_gqa=hkv != h)
            ours, theirs = error(out, ref), error(torch_out, ref)
            rows.append({"device": device, "date": date, "kernel": "none_sparse (random block mask)",
                         "dtype": str(dtype).split(".")[-1], "b": b, "h": h, "hkv": hkv, "s": s,
                         "visited": round(random_mask.sparsity(), 3), "rel_l2": f"{ours:.3e}",
                         "torch_math_rel_l2": f"{theirs:.3e}", "ok": ours <= 2 * theirs})
    # create_block_mask against a loop over blocks.
    ids = documents(random_lengths(1000, 200, gen), "cuda")[None]
    visible = ids[:, None, :, None] == ids[:, None, None, :]
    bm = tiled_attn.create_block_mask(visible)
    n = 128
    for i in range(8):
        part, full = [], []
        for j in range(8):
            blk = visible[0, 0, i * n:(i + 1) * n, j * n:(j + 1) * n]
            if blk.all() and (j + 1) * n <= 1000:
                full.append(j)
            elif blk.any():
                part.append(j)
        assert bm.kv_num_blocks[0, 0, i] == len(part), (i, part)
        assert bm.full_kv_num_blocks[0, 0, i] == len(full), (i, full)
        assert bm.kv_indices[0, 0, i, :len(part)].tolist() == part
        assert bm.full_kv_indices[0, 0, i, :len(full)].tolist() == full
    print("create_block_mask matches a loop over blocks")


def bench(rows, device, date, rounds):
    from torch.nn.attention.flex_attention import create_block_mask as flex_block_mask
    from torch.nn.attention.flex_attention import flex_attention
    b, h, s, d = 1, 16, 16384, 128
    q, k, v = (torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    ids = documents([1024] * (s // 1024), "cuda")[None]
    visible = ids[:, None, :, None] == ids[:, None, None, :]

    def timed(fn):
        """fn() and its time in ms: the median of 5 calls after one."""
        result = fn()
        times = []
        for _ in range(5):
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            torch.cuda.synchronize()
            times.append(start.elapsed_time(end))
        return result, statistics.median(times)

    block_mask, build_ms = timed(lambda: tiled_attn.create_block_mask(visible))
    # FlexAttention's form: the mask as a function of index tensors, a
    # chunk of rows at a time (never the 16k x 16k mask).
    from_function, build_fn_ms = timed(lambda: tiled_attn.create_block_mask(
        lambda b_, h_, q_idx, kv_idx: ids[b_, q_idx] == ids[b_, kv_idx], b, None, s, s))
    assert all(torch.equal(x, y) for x, y in zip(block_mask.as_tuple(),
                                                 from_function.as_tuple()))

    def document(b_, h_, q_idx, kv_idx):
        return ids[b_, q_idx] == ids[b_, kv_idx]

    def document_causal(b_, h_, q_idx, kv_idx):
        return (ids[b_, q_idx] == ids[b_, kv_idx]) & (kv_idx <= q_idx)
    flex_mask, flex_build_ms = timed(
        lambda: flex_block_mask(document, b, None, s, s, device="cuda"))
    flex_causal_mask = flex_block_mask(document_causal, b, None, s, s, device="cuda")
    causal_mask = tiled_attn.create_block_mask(document_causal, b, None, s, s)
    flex = torch.compile(flex_attention)
    cases = {
        "document": {
            "tiled-attn block-sparse document": lambda: tiled_attn.sdpa(
                q, k, v, mask_mod="document", mask_mod_args=(ids,), block_mask=block_mask),
            "tiled-attn document (every block)": lambda: tiled_attn.sdpa(
                q, k, v, mask_mod="document", mask_mod_args=(ids,)),
            "tiled-attn plain (no mask)": lambda: tiled_attn.sdpa(q, k, v),
            "FlexAttention document (block mask)": lambda: flex(q, k, v, block_mask=flex_mask),
            "PyTorch SDPA (no mask)": lambda: torch.nn.functional.scaled_dot_product_attention(
                q, k, v),
        },
        "causal document": {
            "tiled-attn block-sparse causal document": lambda: tiled_attn.sdpa(
                q, k, v, mask_mod="document_causal", mask_mod_args=(ids,),
                block_mask=causal_mask),
            "tiled-attn plain causal": lambda: tiled_attn.sdpa(q, k, v, is_causal=True),
            "FlexAttention causal document (block mask)": lambda: flex(
                q, k, v, block_mask=flex_causal_mask),
            "PyTorch SDPA causal": lambda: torch.nn.functional.scaled_dot_product_attention(
                q, k, v, is_causal=True),
        },
    }
    ref = tiled_attn.sdpa(q, k, v, mask_mod="document", mask_mod_args=(ids,))
    sparse = cases["document"]["tiled-attn block-sparse document"]()
    flex_out = cases["document"]["FlexAttention document (block mask)"]()
    print("sparse vs dense document kernel rel diff",
          error(sparse.float(), ref.double()), "flex vs dense", error(flex_out.float(), ref.double()))
    causal_out = cases["causal document"]["tiled-attn block-sparse causal document"]()
    flex_causal = cases["causal document"]["FlexAttention causal document (block mask)"]()
    print("causal document: tiled-attn vs FlexAttention rel diff",
          error(causal_out.float(), flex_causal.double()))
    for case, providers in cases.items():
        visited = (block_mask if case == "document" else causal_mask).sparsity()
        times = {name: [] for name in providers}
        for _ in range(rounds):
            for name, fn in providers.items():
                times[name].append(median_ms(fn))
        plain_name = next(n for n in providers if n.startswith("tiled-attn plain"))
        plain = statistics.median(times[plain_name])
        for name, ts in times.items():
            ms = statistics.median(ts)
            rows.append({"device": device, "date": date, "case": case, "provider": name,
                         "b": b, "h": h, "s": s, "d": d, "doc_len": 1024, "ms": f"{ms:.4f}",
                         "speedup_over_plain": f"{plain / ms:.2f}",
                         "visited_blocks": round(visited, 4),
                         "create_block_mask_ms": f"{build_ms:.3f}",
                         "create_block_mask_from_function_ms": f"{build_fn_ms:.3f}",
                         "flex_create_block_mask_ms": f"{flex_build_ms:.3f}"})
            print(f"{name:45s} {ms:8.3f} ms  {plain / ms:6.2f}x {plain_name}")


def plot(csv_path: Path) -> None:
    """A bar chart of the benchmark CSV's providers, next to it (.png)."""
    import csv

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    rows = list(csv.DictReader(csv_path.open()))
    fig, ax = plt.subplots(figsize=(9, 4.5))
    names = [r["provider"] for r in rows]
    ms = [float(r["ms"]) for r in rows]
    bars = ax.barh(names, ms)
    for bar, r in zip(bars, rows):
        ax.text(bar.get_width(), bar.get_y() + bar.get_height() / 2,
                f" {float(r['ms']):.3f} ms ({r['speedup_over_plain']}x plain"
                f"{' causal' if r.get('case') == 'causal document' else ''})", va="center",
                fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("ms (lower is better)")
    r = rows[0]
    ax.set_title(f"document masking (block masks), bf16 D{r['d']} B{r['b']} H{r['h']} "
                 f"S{r['s']}, documents of "
                 f"{r['doc_len']}: {r['device']}, {r['date']}", fontsize=9)
    ax.set_xlim(0, max(ms) * 1.45)
    fig.tight_layout()
    out = csv_path.with_suffix(".png")
    fig.savefig(out, dpi=120)
    print(f"wrote {out}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, default=RESULTS / "block-sparse")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--check-only", action="store_true")
    ap.add_argument("--replot", type=Path, default=None, metavar="CSV",
                    help="only draw the plot of a benchmark CSV")
    args = ap.parse_args()
    if args.replot:
        plot(args.replot)
        return
    device = torch.cuda.get_device_name()
    date = datetime.date.today().isoformat()
    rows = []
    check(rows, device, date)
    for r in rows:
        print(r)
    write_csv(args.out, "block-sparse-check", device, date, rows)
    assert all(r["ok"] for r in rows), "a check failed"
    if args.check_only:
        return
    rows = []
    bench(rows, device, date, args.rounds)
    plot(write_csv(args.out, "block-sparse-bench", device, date, rows))


if __name__ == "__main__":
    main()
