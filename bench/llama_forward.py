#!/usr/bin/env python3
"""End-to-end forward time of a Llama model with its attention through tiled_attn.

    python3 bench/llama_forward.py [--out bench/results/llama-forward] [--quick] [--library DIR]

Model: Llama architecture, 8 layers, hidden 2048, 16 heads of D=128 (16 KV
heads unless --kv-heads), intermediate 5632, vocabulary 32000, bf16, random
weights from a fixed seed, built from a config (nothing is downloaded),
``model.eval()`` under ``torch.no_grad()``, ``use_cache`` at the config's
default. Shapes: batch 2 x 1024 tokens and batch 8 x 256 tokens of random
token ids in [1, vocab) (never 0).

Paths, on the same model switched in place (same weights):

- ``tiled_attn``: ``attn_implementation="tiled_attn"``
  (tiled_attn.integrations.transformers);
- ``sdpa``: transformers' SDPA path, PyTorch's default backend choice;
- ``sdpa_flash``: the same under ``sdpa_kernel(SDPBackend.FLASH_ATTENTION)``
  (FlashAttention-2);
- ``eager``: transformers' eager attention.

Timing (shared/DESIGN.md, "How it is measured"): ``common.time_fn`` (CUDA
events, a GPU sleep queued ahead so that the timed forwards run back to
back) after a warm-up; the paths take turns over --rounds rounds, each
timing --iters forwards, so that clock and thermal drift hit all alike.
median_ms is the median of a path's round medians, p10_ms/p90_ms their 10th
and 90th percentiles. rel_l2_vs_sdpa and max_abs_diff_vs_sdpa compare the
path's logits with the sdpa path's on the first input (float64).

Writes ``<out>/llama_forward_<device>_<date>.csv`` and ``.md`` (command,
versions, table), ``<out>`` being ``bench/results/llama-forward`` unless
--out says otherwise; ``bench/plot_llama_forward.py CSV`` draws the bars.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import datetime
import math
import os
import shlex
import statistics
import sys
from pathlib import Path

import torch
import transformers
from packaging.version import Version
from torch.nn.attention import SDPBackend, sdpa_kernel
from transformers import AutoModelForCausalLM, LlamaConfig

import tiled_attn.integrations.transformers as ta_tf

from common import RESULTS, device_slug, short_reason, sleep_cycles_per_ms, time_fn

SEED = 0
SHAPES = ((2, 1024), (8, 256))
PATHS = ("tiled_attn", "sdpa", "sdpa_flash", "eager")
IMPLEMENTATION = {"tiled_attn": "tiled_attn", "sdpa": "sdpa", "sdpa_flash": "sdpa",
                  "eager": "eager"}
INPUT_SETS = 2
CSV_FIELDS = ("device", "date", "torch", "transformers", "shape", "path", "median_ms", "p10_ms",
              "p90_ms", "rel_l2_vs_sdpa", "max_abs_diff_vs_sdpa", "note")


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, default=RESULTS / "llama-forward",
                   help="results folder (default: bench/results/llama-forward)")
    p.add_argument("--quick", action="store_true",
                   help="a short run: 3 rounds of 5 forwards, 2 warm-up forwards")
    p.add_argument("--library", type=Path, default=None,
                   help="kernel library folder (default: $TILED_ATTN_KERNELS or build/kernels)")
    p.add_argument("--kv-heads", type=int, default=16, help="KV heads (16: no grouping)")
    p.add_argument("--warmup", type=int, default=3, help="warm-up forwards per round (>= 1)")
    p.add_argument("--iters", type=int, default=10, help="timed forwards per round (>= 3)")
    p.add_argument("--rounds", type=int, default=15, help="rounds the paths take turns in (>= 2)")
    args = p.parse_args()
    if args.quick:
        args.warmup, args.iters, args.rounds = 2, 5, 3
    if args.warmup < 1 or args.iters < 3 or args.rounds < 2:
        p.error("--warmup must be >= 1, --iters >= 3 and --rounds >= 2")
    if 16 % args.kv_heads:
        p.error("--kv-heads must divide the 16 query heads")
    return args




def build_model(kv_heads: int):
    """The benchmark's Llama in bf16 on the GPU, random weights from SEED, eval mode."""
    config = LlamaConfig(
        vocab_size=32000, hidden_size=2048, intermediate_size=5632, num_hidden_layers=8,
        num_attention_heads=16, num_key_value_heads=kv_heads, head_dim=128,
        max_position_embeddings=4096, tie_word_embeddings=False)
    # transformers renamed from_config's torch_dtype to dtype in 4.56.
    dtype_key = "dtype" if Version(transformers.__version__) >= Version("4.56") else "torch_dtype"
    torch.manual_seed(SEED)
    with torch.device("cuda"):
        model = AutoModelForCausalLM.from_config(
            config, attn_implementation="sdpa", **{dtype_key: torch.bfloat16})
    return model.eval()


def path_context(path: str):
    """The context a path's forwards run in."""
    if path == "sdpa_flash":
        return sdpa_kernel(SDPBackend.FLASH_ATTENTION)
    return contextlib.nullcontext()


def logits_of(model, path: str, ids) -> torch.Tensor:
    ta_tf.set_attn_implementation(model, IMPLEMENTATION[path])
    with path_context(path):
        return model(ids).logits


def record_failure(row: dict, exc: BaseException) -> None:
    """Note why a path could not run, and leave the GPU usable for the next one."""
    row["note"] = short_reason(exc)
    with contextlib.suppress(Exception):
        torch.cuda.synchronize()
    torch.cuda.empty_cache()


def bench_shape(model, batch: int, seq: int, args, meta: dict, cycles_per_ms) -> list:
    """One CSV row (a dict) per path for one (batch, seq)."""
    gen = torch.Generator(device="cuda").manual_seed(SEED + seq)
    sets = [(torch.randint(1, model.config.vocab_size, (batch, seq), device="cuda",
                           generator=gen),) for _ in range(INPUT_SETS)]
    rows = {p: dict(meta, shape=f"{batch}x{seq}", path=p, median_ms=math.nan, p10_ms=math.nan,
                    p90_ms=math.nan, rel_l2_vs_sdpa=math.nan, max_abs_diff_vs_sdpa=math.nan,
                    note="") for p in PATHS}
    ref = logits_of(model, "sdpa", sets[0][0]).double()
    runnable = []
    for path in PATHS:  # one forward each: errors, and the first call's set-up
        try:
            out = logits_of(model, path, sets[0][0]).double()
            rows[path]["rel_l2_vs_sdpa"] = ((out - ref).norm() / ref.norm()).item()
            rows[path]["max_abs_diff_vs_sdpa"] = (out - ref).abs().max().item()
            del out
            runnable.append(path)
        except Exception as exc:  # noqa: BLE001 (record whatever failed, go on)
            record_failure(rows[path], exc)
    del ref
    rounds = {p: [] for p in runnable}
    for _ in range(args.rounds):  # paths take turns: drift hits all alike
        for path in runnable:
            if rows[path]["note"]:
                continue  # failed in an earlier round
            try:
                ta_tf.set_attn_implementation(model, IMPLEMENTATION[path])
                with path_context(path):
                    rounds[path].append(
                        time_fn(model, sets, args.warmup, args.iters, cycles_per_ms)[0])
            except Exception as exc:  # noqa: BLE001
                record_failure(rows[path], exc)
    for path, medians in rounds.items():
        if rows[path]["note"] or not medians:
            continue
        deciles = statistics.quantiles(medians, n=10, method="inclusive")
        rows[path].update(median_ms=statistics.median(medians), p10_ms=deciles[0],
                          p90_ms=deciles[-1])
    del sets
    torch.cuda.empty_cache()
    return [rows[p] for p in PATHS]


def fmt(x: float, spec: str, width: int) -> str:
    return f"{x:{width}{spec}}" if x is not None and math.isfinite(x) else f"{'-':>{width}}"


def table_lines(rows: list) -> list:
    lines = [f"{'shape':>8} {'path':>11} {'median':>9} {'p10':>9} {'p90':>9} {'vs sdpa':>8} "
             f"{'rel_l2':>9} {'max|diff|':>9}   (ms; vs sdpa = sdpa's median / this one's)"]
    for r in rows:
        sdpa_ms = next(x["median_ms"] for x in rows
                       if x["shape"] == r["shape"] and x["path"] == "sdpa")
        speedup = sdpa_ms / r["median_ms"] if r["median_ms"] else math.nan
        line = (f"{r['shape']:>8} {r['path']:>11} {fmt(r['median_ms'], '.3f', 9)} "
                f"{fmt(r['p10_ms'], '.3f', 9)} {fmt(r['p90_ms'], '.3f', 9)} "
                f"{fmt(speedup, '.3f', 8)} {fmt(r['rel_l2_vs_sdpa'], '.2e', 9)} "
                f"{fmt(r['max_abs_diff_vs_sdpa'], '.4f', 9)}")
        lines.append(line + (f"   {r['note']}" if r["note"] else ""))
    return lines


def write_csv(path: Path, rows: list) -> None:
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=CSV_FIELDS)
        w.writeheader()
        for r in rows:
            w.writerow(dict(
                r, median_ms=f"{r['median_ms']:.4f}", p10_ms=f"{r['p10_ms']:.4f}",
                p90_ms=f"{r['p90_ms']:.4f}", rel_l2_vs_sdpa=f"{r['rel_l2_vs_sdpa']:.3e}",
                max_abs_diff_vs_sdpa=f"{r['max_abs_diff_vs_sdpa']:.4e}"))


def write_markdown(path: Path, rows: list, meta: dict, args) -> None:
    cmd = "python3 " + " ".join(shlex.quote(a) for a in sys.argv)
    lines = [f"# Llama forward, attention through tiled_attn: {meta['device']}, {meta['date']}",
             "", f"- torch {meta['torch']}, transformers {meta['transformers']}",
             f"- command: `{cmd}`",
             f"- 8 layers, hidden 2048, 16 heads of D=128, {args.kv_heads} KV heads, "
             "intermediate 5632, vocabulary 32000, bf16, random weights; "
             f"{args.rounds} rounds of {args.iters} forwards per path, interleaved", "",
             "```", *table_lines(rows), "```"]
    path.write_text("\n".join(lines) + "\n")


def main() -> int:
    args = parse_args()
    if not torch.cuda.is_available():
        print("llama_forward: no CUDA device", file=sys.stderr)
        return 2
    if args.library is not None:
        os.environ["TILED_ATTN_KERNELS"] = str(args.library.resolve())
    ta_tf.register()
    device = torch.cuda.get_device_name()
    meta = {"device": device, "date": datetime.date.today().isoformat(),
            "torch": torch.__version__, "transformers": transformers.__version__}
    args.out.mkdir(parents=True, exist_ok=True)
    prefix = args.out / f"llama_forward_{device_slug(device)}_{meta['date']}"
    print(f"# {device}, torch {meta['torch']}, transformers {meta['transformers']}", flush=True)
    cycles_per_ms = sleep_cycles_per_ms()
    model = build_model(args.kv_heads)
    rows = []
    with torch.no_grad():
        for batch, seq in SHAPES:
            new = bench_shape(model, batch, seq, args, meta, cycles_per_ms)
            print("\n".join(table_lines(new)[0 if not rows else 1:]), flush=True)
            rows += new
            write_csv(Path(f"{prefix}.csv"), rows)  # partial results survive a kill
    write_markdown(Path(f"{prefix}.md"), rows, meta, args)
    print(f"\nwrote {prefix}.csv and {prefix}.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
