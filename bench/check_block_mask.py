"""Block masks from the library's mask functions on a GPU (issue 37).

``tiled_attn.create_block_mask("document", B, H, Q_LEN, KV_LEN,
mask_mod_args=(ids,))`` runs the library's block mask kernel of the
function (``ta_block_mask``). For the document, causal document, prefix-LM
and boolean-tensor mask functions, its lists must equal, tensor for tensor,
those create_block_mask builds from the same mask evaluated densely by
PyTorch (odd lengths, S_q != S_k, several batch entries and heads). Then
the time to build a block mask at S = 4k and 16k with documents of about
1k: the compiled kernel (with its lists, PyTorch's sort), against
create_block_mask from a Python mask function and FlexAttention's
create_block_mask, in one run (CUDA events, median of interleaved rounds).

    python3 bench/check_block_mask.py --library DIR [--out DIR] [--check-only | --small]
"""
from __future__ import annotations

import argparse
import datetime
import statistics
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import RESULTS, write_csv  # noqa: E402

import tiled_attn  # noqa: E402
from tiled_attn import block_mask as bm  # noqa: E402


def document_ids(batch: int, seq: int, mean: int, gen: torch.Generator) -> torch.Tensor:
    lengths = torch.randint(1, 2 * mean + 1, (batch, seq), generator=gen)
    ids = torch.zeros(batch, seq, dtype=torch.int32)
    for row in range(batch):
        ids[row] = torch.bucketize(torch.arange(seq), torch.cumsum(lengths[row], 0),
                                   right=True).to(torch.int32)
    return ids.cuda()


def cases(gen: torch.Generator, small: bool):
    """(function, B, H, S_q, S_k, captures, the same mask as a function of
    index tensors)."""
    out = []
    documents = [(2, 3, 300, 100), (3, 1, 777, 40), (1, 2, 1, 1)]
    if not small:
        documents += [(2, 1, 4096, 1000), (1, 1, 16384, 1000)]
    for batch, heads, seq, mean in documents:
        ids = document_ids(batch, seq, mean, gen)
        out.append(("document", batch, heads, seq, seq, (ids,),
                    lambda b, h, q, k, ids=ids: ids[b, q] == ids[b, k]))
        out.append(("document_causal", batch, heads, seq, seq, (ids,),
                    lambda b, h, q, k, ids=ids: (ids[b, q] == ids[b, k]) & (k <= q)))
    prefix = torch.tensor([0, 200, 129], dtype=torch.int32, device="cuda")
    for batch, heads, seq_q, seq_k in [(3, 2, 400, 400), (3, 1, 130, 700), (3, 1, 700, 130)]:
        out.append(("prefix_lm", batch, heads, seq_q, seq_k, (prefix,),
                    lambda b, h, q, k: (k < prefix[b].view(-1, 1, 1, 1)) | (k <= q)))
    for batch, heads, seq_q, seq_k, density in [(2, 3, 300, 517, 0.5), (1, 2, 1000, 1000, 0.001)]:
        mask = torch.rand(batch, heads, seq_q, seq_k, generator=gen) < density
        mask[..., : seq_q // 3, : seq_k // 3] = True  # some full blocks
        mask = mask.cuda()
        out.append(("mask", batch, heads, seq_q, seq_k, (mask.to(torch.int8),),
                    lambda b, h, q, k, mask=mask: mask[b, h, q, k]))
    return out


def run_checks(library, gen, small: bool):
    rows, failures = [], 0
    for name, batch, heads, seq_q, seq_k, captures, fn in cases(gen, small):
        got = tiled_attn.create_block_mask(name, batch, heads, seq_q, seq_k,
                                           mask_mod_args=captures, library=library)
        want = tiled_attn.create_block_mask(fn, batch, heads, seq_q, seq_k)
        same = all(torch.equal(g, w) for g, w in zip(got.as_tuple(), want.as_tuple()))
        failures += not same
        print(f"{name:16s} B={batch} H={heads} S_q={seq_q:5d} S_k={seq_k:5d}: "
              f"{'ok' if same else 'DIFFERENT'} (visited {want.sparsity():.3f})", flush=True)
        rows.append({"function": name, "batch": batch, "heads": heads, "seq_q": seq_q,
                     "seq_k": seq_k, "visited": round(want.sparsity(), 4), "equal": same})
    return rows, failures


def median_interleaved(fns: dict, rounds: int, reps: int):
    times = {name: [] for name in fns}
    for fn in fns.values():
        fn()
    torch.cuda.synchronize()
    for _ in range(rounds):
        for name, fn in fns.items():
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(reps):
                fn()
            end.record()
            end.synchronize()
            times[name].append(start.elapsed_time(end) / reps)
    return {name: statistics.median(t) for name, t in times.items()}


def run_timings(library, gen, rounds: int):
    from torch.nn.attention.flex_attention import create_block_mask as flex_create_block_mask
    rows = []
    for seq in (4096, 16384):
        ids = document_ids(1, seq, 1000, gen)
        fns = {
            "compiled (create_block_mask('document'))": lambda: tiled_attn.create_block_mask(
                "document", 1, 1, seq, seq, mask_mod_args=(ids,), library=library),
            "create_block_mask(Python function)": lambda: tiled_attn.create_block_mask(
                lambda b, h, q, k: ids[b, q] == ids[b, k], 1, None, seq, seq),
            "FlexAttention create_block_mask": lambda: flex_create_block_mask(
                lambda b, h, q, k: ids[b, q] == ids[b, k], 1, None, seq, seq, device="cuda"),
        }
        for name, ms in median_interleaved(fns, rounds, 3).items():
            print(f"S={seq:5d} {name:42s} {ms:8.3f} ms", flush=True)
            rows.append({"seq": seq, "documents_of": 1000, "method": name, "ms": round(ms, 4)})
    return rows


def plot_timings(path: Path, rows, device: str, date: str):
    """Grouped bars: milliseconds to build the block mask, per method and S."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    seqs = sorted({r["seq"] for r in rows})
    methods = list(dict.fromkeys(r["method"] for r in rows))
    fig, ax = plt.subplots(figsize=(8, 4))
    width = 0.8 / len(methods)
    for i, method in enumerate(methods):
        ms = [next(r["ms"] for r in rows if r["seq"] == s and r["method"] == method) for s in seqs]
        ax.bar([j + i * width for j in range(len(seqs))], ms, width, label=method)
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(seqs))], [f"S = {s}" for s in seqs])
    ax.set_ylabel("ms to build the block mask")
    ax.set_title(f"Document block masks (documents of ~1k), {device}, {date}", fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"wrote {path}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--library", type=Path, required=True)
    parser.add_argument("--out", type=Path, default=RESULTS / "block-mask-kernel")
    parser.add_argument("--check-only", action="store_true")
    parser.add_argument("--small", action="store_true",
                        help="only the small checks (for compute-sanitizer), no timings")
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    library = tiled_attn.KernelLibrary(args.library)
    gen = torch.Generator().manual_seed(37)
    device = torch.cuda.get_device_name()
    date = datetime.date.today().isoformat()
    rows, failures = run_checks(library, gen, args.small)
    print(f"{len(rows) - failures} of {len(rows)} checks passed", flush=True)
    write_csv(args.out, "block-mask-library-check", device, date, rows)
    if not (args.check_only or args.small):
        timings = run_timings(library, gen, args.rounds)
        path = write_csv(args.out, "block-mask-library-time", device, date, timings)
        plot_timings(path.with_suffix(".png"), timings, device, date)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
