#!/usr/bin/env python3
"""A Llama training step with its attention through tiled_attn: gradients and time.

    python3 bench/llama_train.py [--out bench/results/llama-train] [--quick] [--kv-heads N]

Model: Llama architecture, 8 layers, hidden 2048, 16 heads of D=128 (16 KV
heads unless --kv-heads), intermediate 5632, vocabulary 32000, bf16, random
weights from a fixed seed, built from a config (nothing is downloaded),
``model.train()``. A step: forward with labels (the model's cross-entropy
loss on random token ids), ``loss.backward()``; the gradients are set to
None before each step (no optimizer: the step is what attention's backward
changes).

Paths, on the same model switched in place (same weights):

- ``tiled_attn``: ``attn_implementation="tiled_attn"``
  (tiled_attn.integrations.transformers), forward and backward through the
  library's kernels;
- ``sdpa``: transformers' SDPA path, PyTorch's default backend choice
  (cuDNN on an H100 with PyTorch 2.11, where it takes the case);
- ``sdpa_flash``: the same under ``sdpa_kernel(SDPBackend.FLASH_ATTENTION)``
  (FlashAttention-2);
- ``sdpa_installed``: transformers' SDPA path with ``tiled_attn.install()``
  (PyTorch's flash ops replaced by the library's kernels:
  tiled_attn.dispatch), where a model needs no integration at all.

Gradients: each path's loss and every parameter's gradient against a
float32 reference, the same weights in float32 through SDPA's math backend
(TF32 off), on the first input: for each parameter the relative L2 error
of the path's gradient. ``ratio`` is tiled_attn's error over the larger of
sdpa's and sdpa_flash's on the same parameter (PyTorch's own spread: two
schedules of the same attention); the table gives its median and maximum
over the parameters, and the parameter where it is largest.

Timing (shared/DESIGN.md, "How it is measured"): ``common.time_fn`` (CUDA
events, a GPU sleep queued ahead) after a warm-up; the paths take turns
over --rounds rounds of --iters steps. median_ms is the median of a path's
round medians, p10_ms/p90_ms their 10th and 90th percentiles.

Writes ``<out>/llama_train_<device>_<date>.csv`` (timings) and
``llama_train_grads_<device>_<date>.csv`` (errors per path), a ``.md``
with the command, versions and both tables, and the timings' bars (a
``.png`` beside their CSV; ``--replot CSV`` draws them again); ``<out>`` is
``bench/results/llama-train`` unless --out says otherwise.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import csv
import datetime
import math
import shlex
import statistics
import sys
from pathlib import Path

import torch
import transformers
from torch.nn.attention import SDPBackend, sdpa_kernel

import tiled_attn
import tiled_attn.integrations.transformers as ta_tf

from common import (RESULTS, device_slug, interleaved, short_reason, sleep_cycles_per_ms,
                    time_fn, try_plot)
from llama_forward import build_model as build_eval_model
from plot_llama_forward import plot as plot_times

SEED = 0
SHAPES = ((2, 1024), (1, 4096))
PATHS = ("tiled_attn", "sdpa", "sdpa_flash", "sdpa_installed")
IMPLEMENTATION = {"tiled_attn": "tiled_attn", "sdpa": "sdpa", "sdpa_flash": "sdpa",
                  "sdpa_installed": "sdpa"}
INPUT_SETS = 2
TIME_FIELDS = ("device", "date", "torch", "transformers", "shape", "kv_heads", "path",
               "median_ms", "p10_ms", "p90_ms", "note")
GRAD_FIELDS = ("device", "date", "torch", "transformers", "shape", "kv_heads", "path",
               "loss", "loss_ref", "grad_err_median", "grad_err_max", "ratio_median",
               "ratio_max", "ratio_max_param", "params_over_2x", "note")


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, default=RESULTS / "llama-train",
                   help="results folder (default: bench/results/llama-train)")
    p.add_argument("--quick", action="store_true",
                   help="a short run: 3 rounds of 3 steps, 1 warm-up step")
    p.add_argument("--kv-heads", type=int, default=16, help="KV heads (16: no grouping)")
    p.add_argument("--shapes", default=",".join(f"{b}x{s}" for b, s in SHAPES),
                   help="batch x tokens, comma-separated (default: 2x1024,1x4096)")
    p.add_argument("--warmup", type=int, default=2, help="warm-up steps per round (>= 1)")
    p.add_argument("--iters", type=int, default=5, help="timed steps per round (>= 3)")
    p.add_argument("--rounds", type=int, default=7, help="rounds the paths take turns in (>= 2)")
    p.add_argument("--replot", type=Path, default=None,
                   help="only draw the bars of a timings CSV this script wrote")
    args = p.parse_args()
    if args.quick:
        args.warmup, args.iters, args.rounds = 1, 3, 3
    if args.warmup < 1 or args.iters < 3 or args.rounds < 2:
        p.error("--warmup must be >= 1, --iters >= 3 and --rounds >= 2")
    if 16 % args.kv_heads:
        p.error("--kv-heads must divide the 16 query heads")
    args.shapes = [tuple(int(x) for x in s.split("x")) for s in args.shapes.split(",")]
    return args


def build_model(kv_heads: int):
    """llama_forward.py's model (bf16 on the GPU, random weights from its seed), train mode."""
    return build_eval_model(kv_heads).train()


def path_context(path: str):
    if path == "sdpa_flash":
        return sdpa_kernel(SDPBackend.FLASH_ATTENTION)
    if path == "reference":
        return sdpa_kernel(SDPBackend.MATH)
    if path == "sdpa_installed":
        return tiled_attn.installed()
    return contextlib.nullcontext()


def train_step(model, ids, labels) -> torch.Tensor:
    """One forward with labels and its backward; the gradients set to None first."""
    model.zero_grad(set_to_none=True)
    loss = model(input_ids=ids, labels=labels).loss
    loss.backward()
    return loss


def gradients(model, path: str, ids, labels):
    """The loss and {name: float32 gradient} of one step on `path`."""
    ta_tf.set_attn_implementation(model, IMPLEMENTATION.get(path, "sdpa"))
    with path_context(path):
        loss = train_step(model, ids, labels).item()
    grads = {n: p.grad.float() for n, p in model.named_parameters() if p.grad is not None}
    model.zero_grad(set_to_none=True)
    return loss, grads


def rel_l2(a: torch.Tensor, ref: torch.Tensor) -> float:
    return ((a.double() - ref.double()).norm() / ref.double().norm().clamp_min(1e-30)).item()


def check_gradients(model, ids, labels, meta: dict, shape: str, kv_heads: int) -> list:
    """Rows of GRAD_FIELDS: each path's errors against the float32 reference."""
    ref_model = copy.deepcopy(model).float()
    tf32 = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False
    try:
        loss_ref, ref = gradients(ref_model, "reference", ids, labels)
    finally:
        torch.backends.cuda.matmul.allow_tf32 = tf32
    del ref_model
    torch.cuda.empty_cache()
    errors, rows = {}, {}
    for path in PATHS:
        row = dict(meta, shape=shape, kv_heads=kv_heads, path=path, loss_ref=loss_ref,
                   note="")
        try:
            loss, grads = gradients(model, path, ids, labels)
            errors[path] = {n: rel_l2(g, ref[n]) for n, g in grads.items()}
            missing = sorted(set(ref) - set(grads))
            row.update(loss=loss, grad_err_median=statistics.median(errors[path].values()),
                       grad_err_max=max(errors[path].values()),
                       note=f"no gradient for {missing[:3]}" if missing else "")
            del grads
        except Exception as exc:  # noqa: BLE001 (record whatever failed, go on)
            row["note"] = short_reason(exc)
            with contextlib.suppress(Exception):
                torch.cuda.synchronize()
        rows[path] = row
    if "tiled_attn" in errors and "sdpa" in errors and "sdpa_flash" in errors:
        ratios = {n: e / max(errors["sdpa"][n], errors["sdpa_flash"][n], 1e-12)
                  for n, e in errors["tiled_attn"].items()}
        worst = max(ratios, key=ratios.get)
        rows["tiled_attn"].update(ratio_median=statistics.median(ratios.values()),
                                  ratio_max=ratios[worst], ratio_max_param=worst,
                                  params_over_2x=sum(r > 2 for r in ratios.values()))
    del ref
    torch.cuda.empty_cache()
    return [rows[p] for p in PATHS]


def time_paths(model, sets, args, meta: dict, shape: str, cycles_per_ms) -> list:
    """Rows of TIME_FIELDS: each path's step time, the paths taking turns
    (common.interleaved)."""
    step = lambda ids, labels: train_step(model, ids, labels)  # noqa: E731

    def time_one(path: str) -> float:
        ta_tf.set_attn_implementation(model, IMPLEMENTATION[path])
        try:
            with path_context(path):
                return time_fn(step, sets, args.warmup, args.iters, cycles_per_ms)[0]
        except Exception:
            with contextlib.suppress(Exception):
                torch.cuda.synchronize()
            raise

    rounds, notes = interleaved({p: p for p in PATHS}, args.rounds, time_one)
    rows = []
    for path in PATHS:
        row = dict(meta, shape=shape, kv_heads=args.kv_heads, path=path, median_ms=math.nan,
                   p10_ms=math.nan, p90_ms=math.nan, note=notes.get(path, ""))
        medians = rounds[path]
        if not row["note"] and medians:
            deciles = statistics.quantiles(medians, n=10, method="inclusive")
            row.update(median_ms=statistics.median(medians), p10_ms=deciles[0],
                       p90_ms=deciles[-1])
        rows.append(row)
    model.zero_grad(set_to_none=True)
    return rows


def fmt(x, spec: str) -> str:
    return "-" if x is None or (isinstance(x, float) and not math.isfinite(x)) else f"{x:{spec}}"


def write_csv(path: Path, fields, rows: list) -> None:
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({k: r.get(k, "") for k in fields})


def replot(csv_path: Path) -> None:
    try_plot(lambda path: plot_times(path, PATHS, "training step"), csv_path)


def main() -> int:
    args = parse_args()
    if args.replot:
        replot(args.replot)
        return 0
    if not torch.cuda.is_available():
        print("needs a CUDA GPU", file=sys.stderr)
        return 2
    ta_tf.register()
    device = torch.cuda.get_device_name()
    date = datetime.date.today().isoformat()
    meta = dict(device=device, date=date, torch=torch.__version__,
                transformers=transformers.__version__)
    model = build_model(args.kv_heads)
    cycles_per_ms = sleep_cycles_per_ms()
    grad_rows, time_rows = [], []
    for batch, seq in args.shapes:
        shape = f"{batch}x{seq}"
        gen = torch.Generator(device="cuda").manual_seed(SEED + seq)
        sets = []
        for _ in range(INPUT_SETS):
            ids = torch.randint(1, model.config.vocab_size, (batch, seq), device="cuda",
                                generator=gen)
            sets.append((ids, ids.clone()))
        grad_rows += check_gradients(model, *sets[0], meta, shape, args.kv_heads)
        for r in grad_rows[-len(PATHS):]:
            print(f"{shape} {r['path']:>10}: loss {fmt(r.get('loss'), '.5f')} "
                  f"(fp32 {fmt(r.get('loss_ref'), '.5f')}), gradient error median "
                  f"{fmt(r.get('grad_err_median'), '.2e')} max {fmt(r.get('grad_err_max'), '.2e')}"
                  + (f", ratio median {fmt(r.get('ratio_median'), '.2f')} max "
                     f"{fmt(r.get('ratio_max'), '.2f')} ({r.get('ratio_max_param')}), "
                     f"{r.get('params_over_2x')} params over 2x" if "ratio_max" in r else "")
                  + (f"  [{r['note']}]" if r["note"] else ""), flush=True)
        time_rows += time_paths(model, sets, args, meta, shape, cycles_per_ms)
        sdpa_ms = next(r["median_ms"] for r in time_rows[-len(PATHS):] if r["path"] == "sdpa")
        for r in time_rows[-len(PATHS):]:
            print(f"{shape} {r['path']:>10}: step {fmt(r['median_ms'], '.2f')} ms "
                  f"(p10 {fmt(r['p10_ms'], '.2f')}, p90 {fmt(r['p90_ms'], '.2f')}), "
                  f"sdpa / this {fmt(sdpa_ms / r['median_ms'], '.3f')}"
                  + (f"  [{r['note']}]" if r["note"] else ""), flush=True)
        del sets
        torch.cuda.empty_cache()
    args.out.mkdir(parents=True, exist_ok=True)
    stem = f"{device_slug(device)}_{date}"
    write_csv(args.out / f"llama_train_{stem}.csv", TIME_FIELDS, time_rows)
    replot(args.out / f"llama_train_{stem}.csv")
    write_csv(args.out / f"llama_train_grads_{stem}.csv", GRAD_FIELDS, grad_rows)
    lines = [f"# Llama training step, {device}, {date}", "",
             f"`{shlex.join(['python3', 'bench/llama_train.py'] + sys.argv[1:])}`; torch "
             f"{torch.__version__}, transformers {transformers.__version__}", "",
             "| shape | path | step ms (median) | p10 | p90 | sdpa / this |",
             "| --- | --- | --- | --- | --- | --- |"]
    for r in time_rows:
        sdpa_ms = next(x["median_ms"] for x in time_rows
                       if x["shape"] == r["shape"] and x["path"] == "sdpa")
        lines.append(f"| {r['shape']} | {r['path']} | {fmt(r['median_ms'], '.2f')} | "
                     f"{fmt(r['p10_ms'], '.2f')} | {fmt(r['p90_ms'], '.2f')} | "
                     f"{fmt(sdpa_ms / r['median_ms'], '.3f')} |")
    lines += ["", "| shape | path | loss | fp32 loss | grad err median | grad err max | "
              "ratio median | ratio max | params > 2x |", "| --- " * 9 + "|"]
    for r in grad_rows:
        lines.append(f"| {r['shape']} | {r['path']} | {fmt(r.get('loss'), '.5f')} | "
                     f"{fmt(r.get('loss_ref'), '.5f')} | {fmt(r.get('grad_err_median'), '.2e')} | "
                     f"{fmt(r.get('grad_err_max'), '.2e')} | {fmt(r.get('ratio_median'), '.2f')} | "
                     f"{fmt(r.get('ratio_max'), '.2f')} | {r.get('params_over_2x', '-')} |")
    (args.out / f"llama_train_{stem}.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
