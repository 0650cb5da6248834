"""The compiled block mask kernels (tile-generate-block-mask) on a GPU.

For the library's document and prefix-LM mask functions, each kernel
(wgmma-family and mma.sync-family layouts, bench/make_block_mask_kernels.sh)
classifies the 128x128 blocks of the function's mask; the kinds must equal,
block for block, those tiled_attn.create_block_mask computes from the same
mask evaluated densely by PyTorch (odd lengths, several batch entries and
heads). Then the time to build a block mask at S = 4k and 16k with
documents of about 1k: the compiled kernel plus the lists (PyTorch's sort),
against tiled_attn.create_block_mask from a Python mask function and
FlexAttention's create_block_mask, in one run (CUDA events, median of
interleaved rounds).

Until the runtime launches these kernels, this script loads them with
cuda-bindings and packs their parameters in the kernel ABI's order: per
view argument its base pointer, its sizes and its strides but the last; per
index argument an i64.

    python3 bench/check_block_mask.py --kernels DIR [--out DIR] [--check-only | --small]
"""
from __future__ import annotations

import argparse
import ctypes
import datetime
import statistics
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import RESULTS, device_slug, write_csv  # noqa: E402

from tiled_attn import block_mask as bm  # noqa: E402

from cuda.bindings import driver as cu  # noqa: E402

N = bm.BLOCK_SIZE
THREADS = 256  # the kernels' 8 warps
SHARED_BYTES = 1024  # at least the kernels' (two 1 x 8 f32 buffers)


def check(result):
    err = result[0]
    if err != cu.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"CUDA driver: {err}")
    return result[1] if len(result) == 2 else result[1:]


class Kernel:
    def __init__(self, path: Path):
        torch.cuda.init()
        torch.zeros(1, device="cuda")  # the primary context, current
        self.module = check(cu.cuModuleLoadData(path.read_bytes()))
        self.function = check(cu.cuModuleGetFunction(self.module, b"block_mask"))
        check(cu.cuFuncSetAttribute(
            self.function, cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            SHARED_BYTES))

    def __call__(self, captures, seq_q: int, seq_k: int, kinds: torch.Tensor):
        values, types = [], []

        def view(t: torch.Tensor):
            values.append(t.data_ptr()); types.append(ctypes.c_void_p)
            for s in t.shape:
                values.append(s); types.append(ctypes.c_int64)
            for s in t.stride()[:-1]:
                values.append(s); types.append(ctypes.c_int64)

        for c in captures:
            view(c)
        for s in (seq_q, seq_k):
            values.append(s); types.append(ctypes.c_int64)
        view(kinds)
        b, h, n_q, _ = kinds.shape
        stream = torch.cuda.current_stream().cuda_stream
        check(cu.cuLaunchKernel(self.function, n_q, h, b, THREADS, 1, 1, SHARED_BYTES,
                                stream, (tuple(values), tuple(types)), 0))


def kinds_from_kernel(kernel, captures, batch, heads, seq_q, seq_k):
    kinds = torch.full((batch, heads, -(-seq_q // N), -(-seq_k // N)), -1,
                       dtype=torch.int8, device="cuda")
    kernel(captures, seq_q, seq_k, kinds)
    return kinds


def kinds_from_python(mask_fn, batch, heads, seq_q, seq_k):
    """create_block_mask's classification of the dense mask: 2 full, 1
    partial, 0 empty."""
    b = torch.arange(batch, device="cuda").view(batch, 1, 1, 1)
    h = torch.arange(heads, device="cuda").view(1, heads, 1, 1)
    q = torch.arange(seq_q, device="cuda").view(1, 1, seq_q, 1)
    k = torch.arange(seq_k, device="cuda").view(1, 1, 1, seq_k)
    mask = mask_fn(b, h, q, k).expand(batch, heads, seq_q, seq_k)
    some, full = bm._classify(torch, mask, seq_q, seq_k, seq_q)
    return torch.where(full, 2, torch.where(some, 1, 0)).to(torch.int8)


def document_ids(batch: int, seq: int, mean: int, gen: torch.Generator) -> torch.Tensor:
    lengths = torch.randint(1, 2 * mean + 1, (batch, seq), generator=gen)
    ids = torch.zeros(batch, seq, dtype=torch.int32)
    for row in range(batch):
        starts = torch.cumsum(lengths[row], 0)
        ids[row] = torch.bucketize(torch.arange(seq), starts, right=True).to(torch.int32)
    return ids.cuda()


def document_fn(ids):
    return lambda b, h, q, k: ids[b, q] == ids[b, k]


def prefix_fn(prefix):
    return lambda b, h, q, k: (k < prefix[b].view(-1, 1, 1, 1)) | (k <= q)


def run_checks(kernels, gen, small: bool):
    rows, failures = [], 0
    cases = []
    documents = [(2, 3, 300, 100), (3, 1, 777, 40), (1, 2, 1, 1)]
    if not small:
        documents += [(2, 1, 4096, 1000), (1, 1, 16384, 1000)]
    for batch, heads, seq, mean in documents:
        ids = document_ids(batch, seq, mean, gen)
        cases.append(("document", batch, heads, seq, seq, [ids], document_fn(ids)))
    for batch, heads, seq_q, seq_k in [(3, 2, 400, 400), (3, 1, 130, 700), (3, 1, 700, 130)]:
        prefix = torch.tensor([0, 200, 129], dtype=torch.int32, device="cuda")[:batch]
        cases.append(("prefix_lm", batch, heads, seq_q, seq_k, [prefix], prefix_fn(prefix)))
    for fn, batch, heads, seq_q, seq_k, captures, mask_fn in cases:
        want = kinds_from_python(mask_fn, batch, heads, seq_q, seq_k)
        for family, kernel in kernels[fn].items():
            got = kinds_from_kernel(kernel, captures, batch, heads, seq_q, seq_k)
            torch.cuda.synchronize()
            bad = int((got != want).sum())
            failures += bad != 0
            print(f"{fn:10s} {family:8s} B={batch} H={heads} S_q={seq_q:5d} S_k={seq_k:5d}: "
                  f"{'ok' if bad == 0 else f'{bad} blocks differ'} "
                  f"(empty {int((want == 0).sum())}, partial {int((want == 1).sum())}, "
                  f"full {int((want == 2).sum())})", flush=True)
            rows.append({"function": fn, "layouts": family, "batch": batch, "heads": heads,
                         "seq_q": seq_q, "seq_k": seq_k, "blocks": want.numel(),
                         "differing": bad})
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


def run_timings(kernels, gen, rounds):
    from torch.nn.attention.flex_attention import create_block_mask as flex_create_block_mask
    rows = []
    for seq in (4096, 16384):
        ids = document_ids(1, seq, 1000, gen)
        mask_fn = document_fn(ids)
        kernel = kernels["document"]["sm_90a"]

        def compiled():
            kinds = kinds_from_kernel(kernel, [ids], 1, 1, seq, seq)
            bm._lists(torch, kinds == 1)
            bm._lists(torch, kinds == 2)

        def python_fn():
            bm.create_block_mask(mask_fn, 1, None, seq, seq)

        def flex():
            flex_create_block_mask(lambda b, h, q, k: ids[b, q] == ids[b, k], 1, None, seq, seq,
                                   device="cuda")

        def kernel_only():
            kinds_from_kernel(kernel, [ids], 1, 1, seq, seq)

        ms = median_interleaved({"compiled kernel + lists": compiled, "compiled kernel": kernel_only,
                                 "tiled_attn.create_block_mask(fn)": python_fn,
                                 "flex create_block_mask": flex}, rounds, 3)
        for name, t in ms.items():
            print(f"S={seq:5d} {name:36s} {t:8.3f} ms", flush=True)
            rows.append({"seq": seq, "documents_of": 1000, "method": name, "ms": round(t, 4)})
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
    ax.set_title(f"Document block masks (documents of ~1k), {device}, {date}")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"wrote {path}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kernels", type=Path, required=True)
    parser.add_argument("--out", type=Path, default=RESULTS / "block-mask-kernel")
    parser.add_argument("--check-only", action="store_true")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--small", action="store_true",
                        help="only the small checks (for compute-sanitizer), no timings")
    args = parser.parse_args()
    gen = torch.Generator().manual_seed(37)
    kernels = {fn: {chip: Kernel(args.kernels / f"{fn}.{chip}.cubin") for chip in ("sm_90a", "sm_80")}
               for fn in ("document", "prefix_lm")}
    device = torch.cuda.get_device_name()
    date = datetime.date.today().isoformat()
    rows, failures = run_checks(kernels, gen, args.small)
    print(f"{len(rows) - failures} of {len(rows)} checks passed", flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    write_csv(args.out, "block-mask-kernel-check", device, date, rows)
    if not (args.check_only or args.small):
        timings = run_timings(kernels, gen, args.rounds)
        path = write_csv(args.out, "block-mask-kernel-time", device, date, timings)
        plot_timings(path.with_suffix(".png"), timings, device, date)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
