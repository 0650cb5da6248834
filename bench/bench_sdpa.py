#!/usr/bin/env python3
"""Throughput of tiled-attn's sdpa next to PyTorch's SDPA backends and eager attention.

    python3 bench/bench_sdpa.py [--out bench/results/throughput] [--quick] [--library build/kernels]
    python3 bench/bench_sdpa.py --head-dims 192,192:128,256 --stem head-dims \
        --out bench/results/head-dims

Grid (DESIGN.md, "How it is measured"): B*S = 16384 tokens, H*D = 2048,
S in 512..16384, D in {64, 128} (--head-dims: others, and D:D_v pairs such as
DeepSeek's MLA's 192:128, where V and O have D_v columns), causal and not,
fp16 and bf16. Every provider
runs in this process on the same fresh torch.randn inputs; times are the
median of CUDA-event timings after a warm-up, rotating input sets when they
would fit in L2. The providers take turns over --rounds rounds per
configuration (so that clock and thermal drift hit all alike), and each
reports the median of its round medians. Prints a table, writes a CSV, one PNG per (dtype, D, causal)
and a markdown summary under --out (bench/results/throughput). See bench/README.md.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import datetime
import math
import re
import shlex
import statistics
import sys
from pathlib import Path

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from tiled_attn import KernelLibrary, TiledAttnError, sdpa

from common import RESULTS, device_slug, short_reason, sleep_cycles_per_ms, time_fn
from plots import PROVIDERS, write_plots

TOKENS, HIDDEN = 16384, 2048
SEQS_FULL = (512, 1024, 2048, 4096, 8192, 16384)
SEQS_QUICK = (1024, 4096, 16384)
DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16}
SHORT = {"tiled-attn": "ours", "torch-auto": "auto", "torch-flash": "flash",
         "torch-efficient": "effic", "torch-cudnn": "cudnn", "torch-math": "math",
         "eager": "eager"}
FORCED = {"torch-flash": SDPBackend.FLASH_ATTENTION,
          "torch-efficient": SDPBackend.EFFICIENT_ATTENTION,
          "torch-cudnn": SDPBackend.CUDNN_ATTENTION, "torch-math": SDPBackend.MATH}
MEMORY_HUNGRY, MAX_SEQ_MEMORY_HUNGRY = ("torch-math", "eager"), 4096
ERROR_PROVIDERS = ("tiled-attn", "torch-auto")  # rel L2 error recorded for these
ROTATE_BELOW_BYTES, ROTATING_SETS = 256 << 20, 4
CSV_FIELDS = ("date", "device", "torch_version", "cuda_version", "dtype", "head_dim",
              "head_dim_v", "causal",
              "batch", "heads", "seq", "provider", "median_ms", "tflops", "rel_l2", "note")


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, default=RESULTS / "throughput",
                   help="results folder (default: bench/results/throughput; head-dims runs: "
                        "bench/results/head-dims)")
    p.add_argument("--quick", action="store_true", help="S in {1024, 4096, 16384} only")
    p.add_argument("--library", type=Path, default=None,
                   help="kernel library folder (default: $TILED_ATTN_KERNELS or build/kernels)")
    p.add_argument("--warmup", type=int, default=10, help="warm-up runs (>= 5)")
    p.add_argument("--iters", type=int, default=30, help="timed runs per round (>= 20)")
    p.add_argument("--rounds", type=int, default=3,
                   help="rounds in which the providers take turns (>= 1)")
    p.add_argument("--head-dims", default="64,128",
                   help="comma-separated head dims D, or D:D_v pairs (V's and O's head dim "
                        "D_v), default 64,128")
    p.add_argument("--stem", default="bench", help="file name stem of the results")
    args = p.parse_args()
    try:
        args.head_dims = [tuple(int(x) for x in item.split(":")) * (2 if ":" not in item else 1)
                          for item in args.head_dims.split(",")]
    except ValueError:
        p.error(f"--head-dims: expected D or D:D_v items, got {args.head_dims!r}")
    if any(len(pair) != 2 or min(pair) < 1 for pair in args.head_dims):
        p.error(f"--head-dims: expected D or D:D_v items, got {args.head_dims!r}")
    if args.warmup < 5 or args.iters < 20 or args.rounds < 1:
        p.error("--warmup must be >= 5, --iters >= 20 and --rounds >= 1")
    return args




def reference_f64(q, k, v, causal: bool, chunk: int = 4096):
    """softmax(q k^T / sqrt(D), top-left causal mask) v in float64 on q's device."""
    q, k, v = q.double(), k.double(), v.double()
    scale, s_k, outs = 1.0 / math.sqrt(q.shape[-1]), k.shape[-2], []
    for r0 in range(0, q.shape[-2], chunk):
        scores = (q[..., r0:r0 + chunk, :] @ k.transpose(-1, -2)) * scale
        if causal:
            rows = torch.arange(r0, r0 + scores.shape[-2], device=q.device)[:, None]
            scores.masked_fill_(torch.arange(s_k, device=q.device)[None, :] > rows, -math.inf)
        outs.append(torch.softmax(scores, dim=-1) @ v)
    return torch.cat(outs, dim=-2)


def rel_l2(out, ref) -> float:
    return (torch.linalg.vector_norm(out.double() - ref) / torch.linalg.vector_norm(ref)).item()


def make_provider(name: str, causal: bool, library, seq: int, dtype, device):
    """(fn(q, k, v) -> out, factory of the context manager to run it in) for one provider."""
    if name == "tiled-attn":
        return (lambda q, k, v: sdpa(q, k, v, causal=causal, library=library)), \
            contextlib.nullcontext
    if name == "eager":
        mask = None
        if causal:
            mask = torch.full((seq, seq), -math.inf, dtype=dtype, device=device).triu_(1)

        def eager(q, k, v):
            scores = (q @ k.transpose(-1, -2)) * (q.shape[-1] ** -0.5)
            if mask is not None:
                scores = scores + mask
            return torch.softmax(scores, dim=-1) @ v
        return eager, contextlib.nullcontext
    backend = FORCED.get(name)
    ctx = (lambda: sdpa_kernel(backend)) if backend is not None else contextlib.nullcontext
    return (lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=causal)), ctx


def record_failure(row, exc: BaseException) -> None:
    """Note why a provider could not run (no kernel, unsupported backend, OOM,
    CUDA error) and leave the GPU usable for the next one."""
    row["note"] = short_reason(exc)
    with contextlib.suppress(Exception):
        torch.cuda.synchronize()
    torch.cuda.empty_cache()


def bench_config(dtype_name, dims, causal, seq, library, library_error, args, meta,
                 cycles_per_ms):
    """One CSV row (a dict) per provider for one configuration; dims is (D, D_v)."""
    d, dv = dims
    dtype, batch, heads = DTYPES[dtype_name], TOKENS // seq, HIDDEN // d
    shapes = ((batch, heads, seq, d),) * 2 + ((batch, heads, seq, dv),)
    input_bytes = sum(math.prod(s) for s in shapes) * torch.finfo(dtype).bits // 8
    n_sets = ROTATING_SETS if input_bytes < ROTATE_BELOW_BYTES else 1
    sets = [tuple(torch.randn(s, dtype=dtype, device="cuda") for s in shapes)
            for _ in range(n_sets)]
    ref = reference_f64(*(t[:1, :2] for t in sets[0]), causal)
    # Q K^T over D and P V over D_v: 2 * B * H * S^2 * (D + D_v), half when causal.
    flops = 2 * batch * heads * seq * seq * (d + dv) / (2 if causal else 1)
    rows, runnable = [], []
    for name in PROVIDERS:
        row = dict(meta, dtype=dtype_name, head_dim=d, head_dim_v=dv, causal=causal,
                   batch=batch, heads=heads,
                   seq=seq, provider=name, median_ms=math.nan, tflops=math.nan,
                   rel_l2=None, note="")
        rows.append(row)
        if name in MEMORY_HUNGRY and seq > MAX_SEQ_MEMORY_HUNGRY:
            row["note"] = f"skipped: S > {MAX_SEQ_MEMORY_HUNGRY} (memory)"
            continue
        if name == "tiled-attn" and library is None:
            row["note"] = f"no kernel library: {library_error}"
            continue
        try:  # build it, run it once, record its error against float64
            fn, ctx = make_provider(name, causal, library, seq, dtype, sets[0][0].device)
            with ctx():
                out = fn(*sets[0])
                if name in ERROR_PROVIDERS:
                    row["rel_l2"] = rel_l2(out[:1, :2], ref)
                del out
            runnable.append((row, fn, ctx, []))
        except Exception as exc:  # noqa: BLE001 (record whatever failed, go on)
            record_failure(row, exc)
    for _ in range(args.rounds):  # providers take turns: drift hits all alike
        for row, fn, ctx, rounds in runnable:
            if row["note"]:
                continue  # failed in an earlier round
            try:
                with ctx():
                    rounds.append(time_fn(fn, sets, args.warmup, args.iters, cycles_per_ms))
            except Exception as exc:  # noqa: BLE001
                record_failure(row, exc)
    for row, _, _, rounds in runnable:
        if row["note"] or not rounds:
            continue
        med = statistics.median(r[0] for r in rounds)
        lo, hi = min(r[1] for r in rounds), max(r[2] for r in rounds)
        per_round = ", ".join(f"{r[0]:.4f}" for r in rounds)
        row.update(median_ms=med, tflops=flops / (med * 1e-3) / 1e12,
                   note=f"round medians {per_round} ms; min {lo:.4f}, max {hi:.4f} ms; "
                        f"{n_sets} input set(s)")
    del sets, ref
    torch.cuda.empty_cache()
    return rows


def fmt(x: float, spec: str, width: int) -> str:
    return f"{x:{width}{spec}}" if x is not None and math.isfinite(x) else f"{'-':>{width}}"


def by_config(rows) -> dict:
    """{(dtype, D, causal, S): {provider: row}} in the order measured; D is
    "192:128" where V's head dim differs."""
    groups = {}
    for r in rows:
        d = r["head_dim"]
        if r.get("head_dim_v", d) != d:
            d = f"{d}:{r['head_dim_v']}"
        groups.setdefault((r["dtype"], d, r["causal"], r["seq"]), {})[r["provider"]] = r
    return groups


def table_lines(rows, header: bool):
    lines = []
    if header:
        cols = " ".join(f"{SHORT[p]:>7}" for p in PROVIDERS)
        lines.append(f"{'dtype':5} {'D':>7} {'causal':>6} {'S':>6} {cols} {'err_ours':>9} "
                     f"{'err_auto':>9}   (TFLOP/s; err = rel L2 vs float64)")
    for (dt, d, causal, seq), provs in by_config(rows).items():
        cells = " ".join(fmt(provs[p]["tflops"], ".1f", 7) for p in PROVIDERS)
        errs = " ".join(fmt(provs[p]["rel_l2"], ".2e", 9) for p in ERROR_PROVIDERS)
        lines.append(f"{dt:5} {d:>7} {str(causal):>6} {seq:>6} {cells} {errs}")
    return lines


def write_csv(path: Path, rows) -> None:
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=CSV_FIELDS)
        w.writeheader()
        for r in rows:
            w.writerow(dict(r, median_ms=f"{r['median_ms']:.4f}", tflops=f"{r['tflops']:.2f}",
                            rel_l2="" if r["rel_l2"] is None else f"{r['rel_l2']:.3e}"))


def write_markdown(path: Path, rows, meta, library_desc: str, rounds: int) -> None:
    cmd = "python3 " + " ".join(shlex.quote(a) for a in sys.argv)
    lines = [f"# tiled-attn vs PyTorch SDPA: {meta['device']}, {meta['date']}", "",
             f"- torch {meta['torch_version']}, CUDA {meta['cuda_version']}",
             f"- kernel library: {library_desc}", f"- command: `{cmd}`",
             "- B*S = 16384, H*D = 2048; TFLOP/s = 2*B*H*S^2*(D + D_v) / t (half when "
             "causal; D:D_v where V's head dim D_v differs from D); "
             f"median of {rounds} rounds' median CUDA-event timings; err = rel L2 vs float64 on batch 0, heads 0-1", "",
             "| dtype | D | causal | S | tiled-attn TFLOP/s | best torch | TFLOP/s | ours/best "
             "| err ours | err torch-auto |",
             "| --- | ---: | --- | ---: | ---: | --- | ---: | ---: | ---: | ---: |"]
    for (dt, d, causal, seq), provs in by_config(rows).items():
        ours = provs["tiled-attn"]
        torch_rows = [r for p, r in provs.items() if p.startswith("torch-")
                      and math.isfinite(r["tflops"])]
        best = max(torch_rows, key=lambda r: r["tflops"], default=None)
        best_t = best["tflops"] if best else math.nan
        ratio = ours["tflops"] / best_t if best else math.nan
        lines.append(
            f"| {dt} | {d} | {causal} | {seq} | {fmt(ours['tflops'], '.1f', 0)} | "
            f"{best['provider'] if best else '-'} | {fmt(best_t, '.1f', 0)} | "
            f"{fmt(ratio, '.2f', 0)} | {fmt(ours['rel_l2'], '.2e', 0)} | "
            f"{fmt(provs['torch-auto']['rel_l2'], '.2e', 0)} |")
    notes = sorted({(r["provider"], re.sub(r" \(library .*", "", r["note"])) for r in rows
                    if not math.isfinite(r["tflops"]) and r["note"]})
    if notes:
        lines += ["", "Not measured:", ""] + [f"- {p}: {n}" for p, n in notes]
    path.write_text("\n".join(lines) + "\n")


def main() -> int:
    args = parse_args()
    if not torch.cuda.is_available():
        print("bench_sdpa: no CUDA device", file=sys.stderr)
        return 2
    library, library_error = None, ""
    try:
        library = KernelLibrary.load(args.library)
        library_desc = f"{library.path} ({len(library.kernels)} kernels)"
    except TiledAttnError as exc:
        library_error = short_reason(exc)
        library_desc = f"not loaded: {library_error}"
    device = torch.cuda.get_device_name()
    meta = {"date": datetime.date.today().isoformat(), "device": device,
            "torch_version": torch.__version__, "cuda_version": torch.version.cuda}
    args.out.mkdir(parents=True, exist_ok=True)
    prefix = args.out / f"{args.stem}_{device_slug(device)}_{meta['date']}"
    print(f"# {device}, torch {torch.__version__}, CUDA {torch.version.cuda}, "
          f"library {library_desc}", flush=True)
    cycles_per_ms = sleep_cycles_per_ms()
    seqs = SEQS_QUICK if args.quick else SEQS_FULL
    rows = []
    for dtype_name in DTYPES:
        for dims in args.head_dims:
            for causal in (False, True):
                for seq in seqs:
                    new = bench_config(dtype_name, dims, causal, seq, library, library_error,
                                       args, meta, cycles_per_ms)
                    print("\n".join(table_lines(new, header=not rows)), flush=True)
                    rows += new
                    write_csv(Path(f"{prefix}.csv"), rows)  # partial results survive a kill
    write_markdown(Path(f"{prefix}.md"), rows, meta, library_desc, args.rounds)
    plots = write_plots(prefix, rows, meta)
    print(f"\nwrote {prefix}.csv, {prefix}.md and {len(plots)} plots\n")
    print("\n".join(table_lines(rows, header=True)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
