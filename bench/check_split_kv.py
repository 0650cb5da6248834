"""Split-KV kernels and their merge on a GPU (issue 38's first step).

The compiler's split-KV kernel (tiled-attn-compile --variant=none_lse_split,
sm_80 PTX as an sm_90 cubin) writes each chunk's partial output and
log-sum-exps; the merge kernel (tile-generate-split-merge) combines them.
Both run here, launched with cuda-bindings (the runtime refuses split
kernels until it launches the pair itself): their output against float64
and PyTorch's math backend (within 2x of its error), their log-sum-exps
against float64; then the decode step B=1, S_k=32k, 32 query heads on 8
KV heads, D=128, bf16, timed against PyTorch's SDPA (CUDA events, median of
interleaved rounds), as GB/s of K and V read.

    python3 bench/check_split_kv.py --kernels DIR --out DIR
    python3 bench/check_split_kv.py --replot CSV

The kernels, built on the build machine:

    tiled-attn-compile --head-dim=128 --dtype=bf16 --variant=none_lse_split \
      --block-m=64 --block-n=64 --schedule="exp2=1 mask-split=1 stages=2" \
      --lowering="chip=sm_80 warps=4" --cubin=sm_90 --out-dir=DIR
    tiled-attn-opt empty.mlir --tile-generate-split-merge="head-dim-v=128 dtype=bf16" \
      --tile-to-ptx="chip=sm_80 warps=1" | (the PTX) > DIR/merge.ptx
    ptxas -arch=sm_90 DIR/merge.ptx -o DIR/merge.sm_90.cubin
"""
from __future__ import annotations

import argparse
import datetime
import json
import statistics
import sys
from pathlib import Path

# torch, cuda-bindings and the bench helpers (which import torch) are
# imported by main(), so that --replot runs where only matplotlib is.
torch = F = cu = write_csv = Kernel = None


def import_gpu_modules() -> None:
    global torch, F, cu, write_csv
    import torch as torch_module
    import torch.nn.functional as functional
    from cuda.bindings import driver

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from common import write_csv as writer
    from cubin_launch import Kernel as kernel_class

    torch, F, cu, write_csv = torch_module, functional, driver, writer
    globals()["Kernel"] = kernel_class


def view_params(name: str, rank: int, static_last: bool):
    """The kernel ABI's parameters of a view: its base, the sizes of its
    dynamic dimensions (a static head dim is not passed), the strides of all
    but the last (unit) one."""
    sizes = rank - 1 if static_last else rank
    return ([{"name": name, "kind": "base"}]
            + [{"name": name, "kind": "size", "dim": d} for d in range(sizes)]
            + [{"name": name, "kind": "stride", "dim": d} for d in range(rank - 1)])


def split_attention(split, merge, q, k, v, splits: int, block_m: int):
    b, h, s_q, d = q.shape
    o_partial = torch.empty(b, h * splits, s_q, d, device="cuda", dtype=torch.float32)
    lse_partial = torch.empty(b, h * splits, s_q, device="cuda", dtype=torch.float32)
    split((-(-s_q // block_m), h * splits, b),
          {"q": q, "k": k, "v": v, "o": o_partial, "lse": lse_partial},
          {"scale": d ** -0.5, "num_splits": splits})
    o = torch.empty_like(q)
    lse = torch.empty(b, h, s_q, device="cuda", dtype=torch.float32)
    merge((-(-s_q // 16), h, b),
          {"o_partial": o_partial, "lse_partial": lse_partial, "o": o, "lse": lse},
          {"num_splits": splits})
    return o, lse


def reference(q, k, v):
    g = q.shape[1] // k.shape[1]
    k, v = k.repeat_interleave(g, 1).double(), v.repeat_interleave(g, 1).double()
    s = (q.double() @ k.transpose(-1, -2)) * q.shape[-1] ** -0.5
    return torch.softmax(s, -1) @ v, torch.logsumexp(s, -1)


def plot_decode(path: Path, rows, device: str, date: str) -> None:
    """Bars: GB/s of K and V read by each method in the decode step."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 3.5))
    ax.bar([r["method"] for r in rows], [float(r["gb_per_s"]) for r in rows],
           color=["tab:blue"] * (len(rows) - 1) + ["tab:gray"])
    ax.set_ylabel("GB/s of K and V")
    ax.set_title(f"Decode, B=1, S_k=32k, 32/8 heads, D=128, bf16: {device}, {date}",
                 fontsize=9)
    ax.tick_params(axis="x", labelsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"wrote {path}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kernels", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--replot", type=Path, default=None, metavar="CSV",
                        help="only redraw the decode plot of a CSV this script wrote")
    args = parser.parse_args()
    if args.replot:
        import csv
        with args.replot.open() as f:
            rows = list(csv.DictReader(f))
        device, date = args.replot.stem.split("_")[1:3]
        plot_decode(args.replot.with_suffix(".png"), rows, device, date)
        return 0
    import_gpu_modules()
    torch.zeros(1, device="cuda")
    entry = json.loads((args.kernels / "manifest.json").read_text())["kernels"][0]
    split = Kernel(args.kernels / entry["cubin"]["sm_90"], entry["symbol"], entry["params"],
                   entry["block"][0], entry["shared_bytes"])
    merge_params = (view_params("o_partial", 4, True) + view_params("lse_partial", 3, False)
                    + [{"name": "num_splits", "kind": "scalar", "type": "i64"}]
                    + view_params("o", 4, True) + view_params("lse", 3, False))
    # (Its staged stores take 16 x 64 bf16 padded rows: 2304 bytes, as
    # tilegpu-allocate-memory records; 16 KiB covers any head dim.)
    merge = Kernel(args.kernels / "merge.sm_90.cubin", "split_merge", merge_params, 32, 16384)
    block_m = entry["block_m"]
    device, date = torch.cuda.get_device_name(), datetime.date.today().isoformat()
    torch.manual_seed(38)
    rows, failures = [], 0
    for b, h, h_kv, s_q, s_k, splits in [(1, 8, 2, 1, 4096, 8), (2, 4, 4, 3, 1000, 3),
                                          (2, 8, 8, 17, 300, 5), (1, 4, 1, 1, 1, 3),
                                          (1, 32, 8, 1, 32768, 16), (3, 8, 2, 2, 777, 1)]:
        q = torch.randn(b, h, s_q, 128, device="cuda", dtype=torch.bfloat16)
        k = torch.randn(b, h_kv, s_k, 128, device="cuda", dtype=torch.bfloat16)
        v = torch.randn(b, h_kv, s_k, 128, device="cuda", dtype=torch.bfloat16)
        o, lse = split_attention(split, merge, q, k, v, splits, block_m)
        ref, ref_lse = reference(q, k, v)
        with torch.nn.attention.sdpa_kernel(torch.nn.attention.SDPBackend.MATH):
            theirs = F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
        err = ((o.double() - ref).norm() / ref.norm()).item()
        torch_err = ((theirs.double() - ref).norm() / ref.norm()).item()
        lse_err = (lse.double() - ref_lse).abs().max().item()
        ok = err <= 2 * torch_err and lse_err < 1e-3
        failures += not ok
        print(f"B={b} H={h}/{h_kv} S_q={s_q} S_k={s_k} splits={splits}: ours {err:.2e} "
              f"torch {torch_err:.2e} lse {lse_err:.1e} {'PASS' if ok else 'FAIL'}", flush=True)
        rows.append({"b": b, "h": h, "h_kv": h_kv, "s_q": s_q, "s_k": s_k, "splits": splits,
                     "rel_l2": f"{err:.3e}", "pytorch_math_rel_l2": f"{torch_err:.3e}",
                     "lse_max_abs_err": f"{lse_err:.2e}", "pass": ok})
    write_csv(args.out, "split-kv-check", device, date, rows)
    # Decode, B=1, S_k=32k, GQA 32/8: split-KV against PyTorch's SDPA.
    q = torch.randn(1, 32, 1, 128, device="cuda", dtype=torch.bfloat16)
    k = torch.randn(1, 8, 32768, 128, device="cuda", dtype=torch.bfloat16)
    v = torch.randn_like(k)
    gbytes = 2 * k.numel() * 2 / 1e9
    fns = {f"split-KV, {s} splits": (lambda s=s: split_attention(split, merge, q, k, v, s, block_m))
           for s in (1, 16, 64)}
    fns["PyTorch SDPA"] = lambda: F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
    times = {name: [] for name in fns}
    for fn in fns.values():
        fn()
    torch.cuda.synchronize()
    for _ in range(args.rounds):
        for name, fn in fns.items():
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(10):
                fn()
            end.record()
            end.synchronize()
            times[name].append(start.elapsed_time(end) / 10)
    timing = []
    for name, t in times.items():
        ms = statistics.median(t)
        print(f"decode B=1 S_k=32768 H=32/8: {name:22s} {ms:.3f} ms {gbytes / ms * 1e3:7.0f} GB/s")
        timing.append({"method": name, "ms": round(ms, 4), "gb_per_s": round(gbytes / ms * 1e3)})
    path = write_csv(args.out, "split-kv-decode-time", device, date, timing)
    plot_decode(path.with_suffix(".png"), timing, device, date)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
