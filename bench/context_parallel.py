"""Context parallelism on PyTorch's own engine with tiled-attn's kernels (issue 39).

Run with one process per GPU (NCCL)::

    torchrun --nproc-per-node 2 bench/context_parallel.py [--out DIR] [--quick]

PyTorch's ``context_parallel`` (torch.distributed.tensor.experimental)
shards q, k and v along the sequence across the GPUs and runs ring
attention: each GPU's queries against each GPU's keys in turn, through
``aten::_scaled_dot_product_flash_attention`` and its backward on the
shards, merged by their log-sum-exps. With ``tiled_attn.install()`` those
ops are tiled-attn's kernels, so the ring runs on them with no code of ours
(``dispatch.stats`` counts the calls they ran).

1. Check: attention over S = --check-seq tokens (bf16, B=1, --heads heads,
   D=128; causal with PyTorch's head-tail load balancing, and non-causal),
   forward and backward, sharded over the GPUs against the same call on one
   GPU: the output and dq, dk, dv unsharded and compared (relative L2), for
   tiled-attn's kernels (installed) and for PyTorch's flash backend (its
   own ring: the spread of its merge's rounding, the yardstick). Passes when
   tiled-attn's CP error is within 2x of PyTorch's (plus 1e-3) and every
   attention call of the CP run ran tiled-attn's kernels.
2. Scaling: forward + backward of causal attention at S = --seqs on one GPU
   and sharded over all, each path timed by CUDA events after a warm-up,
   the paths taking turns for --rounds rounds (median; the slowest rank's
   time); for tiled-attn's kernels and for PyTorch's default SDPA backend.

Writes ``context_parallel_{check,scaling}_<device>_<date>.csv`` and the
scaling's plot (rank 0) under --out (default
bench/results/context-parallel).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import os
import statistics
import sys
from pathlib import Path

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor.experimental import context_parallel
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.distributed.tensor.experimental._attention import (_cp_options,
                                                              context_parallel_unshard)

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python"))
from common import device_slug, try_plot  # noqa: E402

import tiled_attn  # noqa: E402
from tiled_attn import dispatch  # noqa: E402

IMPLS = ("tiled_attn", "pytorch")


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, default=Path("bench/results/context-parallel"))
    p.add_argument("--check-seq", type=int, default=8192)
    p.add_argument("--seqs", default="32768,65536,131072")
    p.add_argument("--heads", type=int, default=16)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--iters", type=int, default=2)
    p.add_argument("--quick", action="store_true", help="--seqs 32768 --rounds 2")
    p.add_argument("--impls", default=",".join(IMPLS),
                   help="the paths to run, in order (default: %(default)s; the check "
                        "compares tiled_attn with pytorch only when both run)")
    p.add_argument("--backend", default="nccl",
                   help="process group backend (gloo runs the check with every rank on one "
                        "GPU, where NCCL refuses two ranks of a device; its times are not "
                        "a scaling)")
    args = p.parse_args()
    if args.quick:
        args.seqs, args.rounds = "32768", 2
    args.seqs = [int(s) for s in args.seqs.split(",")]
    args.impls = tuple(args.impls.split(","))
    if not args.impls or any(i not in IMPLS for i in args.impls):
        p.error(f"--impls takes paths of {','.join(IMPLS)}, got {','.join(args.impls)}")
    return args


def impl_context(impl: str):
    return tiled_attn.installed() if impl == "tiled_attn" else contextlib.nullcontext()


def inputs(s: int, heads: int, seed: int):
    g = torch.Generator(device="cuda").manual_seed(seed)  # the same on every rank
    return [torch.randn(1, heads, s, 128, dtype=torch.bfloat16, device="cuda", generator=g)
            for _ in range(4)]  # q, k, v, grad_out


def one_gpu(q, k, v, grad_out, causal):
    leaves = [t.detach().clone().requires_grad_() for t in (q, k, v)]
    out = F.scaled_dot_product_attention(*leaves, is_causal=causal)
    return [out.detach(), *torch.autograd.grad(out, leaves, grad_out)]


def sharded(mesh, q, k, v, grad_out, causal, steps: int = 1, timer=None):
    """The CP call (``steps`` times, timed by ``timer`` if given); returns the
    unsharded output and gradients of the last."""
    _cp_options.enable_load_balance = causal  # (PyTorch's balancing needs causal)
    buffers = [t.detach().clone() for t in (q, k, v, grad_out)]
    # (no_restore_buffers: the shards, leaves that require grad, are not
    # resized back after the block; nothing reads them later.)
    # (The ring through the flash op: with every backend allowed, SDPA on
    # the shards picks cuDNN's op on an H100, whose ring PyTorch 2.11 also
    # has, and install() replaces the flash op only.)
    with sdpa_kernel([SDPBackend.FLASH_ATTENTION]), context_parallel(
            mesh, buffers=buffers, buffer_seq_dims=[2] * 4,
            no_restore_buffers=set(buffers)):
        leaves = buffers[:3]
        for t in leaves:
            t.requires_grad_()
        for _ in range(steps):
            if timer:
                timer.start()
            out = F.scaled_dot_product_attention(*leaves, is_causal=causal)
            grads = torch.autograd.grad(out, leaves, buffers[3])
            if timer:
                timer.stop()
        result = context_parallel_unshard(mesh, [out.detach(), *grads], [2] * 4)
    return result


class Timer:
    """CUDA events around steps; ``ms`` is each step's time, the slowest rank's."""

    def __init__(self) -> None:
        self.times = []

    def start(self) -> None:
        self.begin = torch.cuda.Event(enable_timing=True)
        self.end = torch.cuda.Event(enable_timing=True)
        self.begin.record()

    def stop(self) -> None:
        self.end.record()
        self.end.synchronize()
        t = torch.tensor([self.begin.elapsed_time(self.end)], device="cuda")
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        self.times.append(t.item())


def rel(a, b) -> float:
    return ((a.double() - b.double()).norm() / b.double().norm()).item()


def check(mesh, args, meta, rank) -> tuple[list, bool]:
    rows, ok = [], True
    q, k, v, grad_out = inputs(args.check_seq, args.heads, seed=1)
    for causal in (True, False):
        errors, ours_one = {}, None
        for impl in args.impls:
            dispatch.reset_stats()
            with impl_context(impl):
                one = one_gpu(q, k, v, grad_out, causal)
                ran_one = dispatch.stats()["ran"]
                dispatch.reset_stats()
                cp = sharded(mesh, q, k, v, grad_out, causal)
                stats = dispatch.stats()
            errors[impl] = [rel(c, o) for c, o in zip(cp, one)]
            row = dict(meta, seq=args.check_seq, heads=args.heads, causal=causal, impl=impl,
                       **{f"cp_vs_one_{n}": f"{e:.3e}" for n, e in zip(
                           ("out", "dq", "dk", "dv"), errors[impl])},
                       ran_one_gpu=sum(ran_one.values()), ran_cp=sum(stats["ran"].values()),
                       fell_back_cp=sum(stats["fell_back"].values()))
            if impl == "tiled_attn":
                ok &= row["ran_cp"] > 0 and row["fell_back_cp"] == 0 and row["ran_one_gpu"] == 2
                ours_one = one
            elif ours_one is not None:
                row["vs_tiled_attn_one_gpu_out"] = f"{rel(ours_one[0], one[0]):.3e}"
            rows.append(row)
        if len(errors) < len(IMPLS):  # (--impls of one path: its errors, no verdict)
            if rank == 0:
                print(f"check causal={causal}: CP vs one GPU (out, dq, dk, dv) "
                      + ", ".join(f"{i} {['%.2e' % e for e in errs]}"
                                  for i, errs in errors.items()) + ": not compared")
            continue
        within = all(e <= 2 * b + 1e-3 for e, b in zip(errors["tiled_attn"], errors["pytorch"]))
        ok &= within
        if rank == 0:
            print(f"check causal={causal}: CP vs one GPU (out, dq, dk, dv) tiled_attn "
                  f"{['%.2e' % e for e in errors['tiled_attn']]}, PyTorch "
                  f"{['%.2e' % e for e in errors['pytorch']]}: {'ok' if within else 'FAILED'}")
    return rows, ok


def scaling(mesh, args, meta, rank) -> list:
    rows = []
    world = dist.get_world_size()
    for s in args.seqs:
        q, k, v, grad_out = inputs(s, args.heads, seed=2)
        times = {(impl, n): [] for impl in args.impls for n in (1, world)}
        for _ in range(args.rounds):
            for impl in args.impls:
                with impl_context(impl):
                    timer = Timer()
                    for _ in range(args.iters + 1):  # the first is a warm-up
                        timer.start()
                        one_gpu(q, k, v, grad_out, True)
                        timer.stop()
                    times[(impl, 1)].append(statistics.median(timer.times[1:]))
                    timer = Timer()
                    sharded(mesh, q, k, v, grad_out, True, steps=args.iters + 1, timer=timer)
                    times[(impl, world)].append(statistics.median(timer.times[1:]))
        # Causal: half of 4 S^2 H D per pass; forward + backward = 3.5x the
        # forward's (the backward counted as 2.5x, as FlashAttention does).
        flops = 4 * s * s * args.heads * 128 / 2 * 3.5
        for impl in args.impls:
            one = statistics.median(times[(impl, 1)])
            for n in (1, world):
                ms = statistics.median(times[(impl, n)])
                rows.append(dict(meta, seq=s, heads=args.heads, impl=impl, gpus=n,
                                 median_ms=f"{ms:.2f}",
                                 tflops_per_gpu=f"{flops / (ms * 1e-3) / n / 1e12:.1f}",
                                 speedup_vs_one_gpu=f"{one / ms:.2f}"))
                if rank == 0:
                    print(f"S={s} {impl:>10} {n} GPU(s): {ms:8.2f} ms, x{one / ms:.2f}")
    return rows


def write(rows: list, path: Path) -> None:
    import csv
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as f:
        fields = list(dict.fromkeys(k for r in rows for k in r))
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)
    print(f"wrote {path}")


def plot(csv_path: Path) -> None:
    import csv

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    rows = list(csv.DictReader(csv_path.open()))
    fig, ax = plt.subplots(figsize=(7, 4))
    for impl in args.impls:
        for gpus in sorted({r["gpus"] for r in rows}):
            pts = [(int(r["seq"]), float(r["median_ms"])) for r in rows
                   if r["impl"] == impl and r["gpus"] == gpus]
            ax.plot(*zip(*pts), marker="o", label=f"{impl}, {gpus} GPU(s)")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("sequence length (causal, bf16, D=128)")
    ax.set_ylabel("forward + backward, ms")
    ax.set_title(f"context parallelism: {rows[0]['device']}, {rows[0]['date']}", fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    out = csv_path.with_suffix(".png")
    fig.savefig(out, dpi=120)
    print(f"wrote {out}")


def main() -> int:
    args = parse_args()
    torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", 0)) % torch.cuda.device_count())
    dist.init_process_group(args.backend)
    rank = dist.get_rank()
    mesh = init_device_mesh("cuda", (dist.get_world_size(),), mesh_dim_names=("cp",))
    device = torch.cuda.get_device_name()
    date = datetime.date.today().isoformat()
    meta = dict(device=device, date=date, torch=torch.__version__, gpus_total=mesh.size(),
                backend=args.backend, devices=torch.cuda.device_count())
    check_rows, ok = check(mesh, args, meta, rank)
    scaling_rows = scaling(mesh, args, meta, rank)
    if rank == 0:
        stem = f"{device_slug(device)}_{date}"
        write(check_rows, args.out / f"context_parallel_check_{stem}.csv")
        path = args.out / f"context_parallel_scaling_{stem}.csv"
        write(scaling_rows, path)
        try_plot(plot, path)
        print("check", "passed" if ok else "FAILED")
    dist.destroy_process_group()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
