#!/usr/bin/env python3
"""Sliding windows and bottom-right causal: tiled-attn's window kernels next to its causal kernel and PyTorch.

    python3 bench/bench_window.py [--out bench/results/window] [--library build/kernels]
                                  [--quick] [--flex]
    python3 bench/bench_window.py --replot bench/results/window/window_<device>_<date>.csv

B = 1, H = 16, D in {64, 128}, f16 and bf16, on fresh torch.randn inputs
(--quick: f16, S = 16384 only). Groups, each on one input set, its providers
taking turns over --rounds rounds:

- ``sliding`` (S in {4096, 8192, 16384}): Mistral's sliding window,
  sdpa(causal=True, window_size=(W - 1, 0)) with W = --window keys (4096), next
  to full causal of the same shape on our top_left kernel (the issue's
  yardstick: the window at least 3x faster at S = 16k), full causal forced
  onto the window kernel, PyTorch's SDPA: is_causal (auto, flash, cuDNN) and
  the window as an additive mask (efficient and cuDNN backends: they compute
  every block), FlexAttention's block-sparse sliding window (--flex: it
  compiles), and FlashAttention (flash_attn / flash_attn_interface, when
  importable) with both masks;
- ``two_sided`` (S = 16384): window_size = (W/2, W/2) without causal, next to
  our non-causal kernel, PyTorch with the mask, FlexAttention, FlashAttention;
- ``chunked`` (S_q = 1024, S_k = 16384, chunked prefill): bottom-right causal
  next to our top-left causal kernel on Q padded in front to S_k rows (the
  workaround without bottom-right: 16x the queries, the last S_q rows kept),
  PyTorch's causal_lower_right and the dense mask, FlashAttention.

Before timing, each provider's first output is checked against float64
attention with the same boolean mask (batch 0, heads 0-1); the max abs and
relative L2 errors are recorded, and a rel L2 above --max-rel-l2 marks the row
WRONG. Times are medians of CUDA-event timings after a warm-up
(bench/common.py), each provider's median of its round medians. TFLOP/s
counts the pairs each problem's mask lets through, exactly (the sum over rows
of the keys a row sees), times 4 B H D: so full causal counts S(S+1)/2
pairs, not S^2/2. Writes window_<device>_<date>.csv, a PNG per (dtype, D) and
a markdown summary under --out.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import math
import statistics
import sys
from dataclasses import replace
from pathlib import Path

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from tiled_attn import KernelLibrary, sdpa

from check_correctness import (Case, case_mask, planned_kernel, reference_f64, sdpa_kwargs,
                               visible_pairs)
from common import RESULTS, rel_l2, short_reason, sleep_cycles_per_ms, time_fn, write_csv

DTYPES = {"f16": torch.float16, "bf16": torch.bfloat16}
BATCH, HEADS, CHUNK_Q = 1, 16, 1024
SEQS, LONG = (4096, 8192, 16384), 16384
TARGET = 3.0        # the issue's: the sliding window >= 3x full causal at S = 16k
PLOT_PROVIDERS = ("tiled-attn-window", "tiled-attn-causal", "tiled-attn-causal-on-window-kernel",
                  "torch-causal-best", "torch-window-mask-efficient", "torch-window-mask-cudnn",
                  "torch-window-flex", "flash-attn-window", "flash-attn-causal")
CSV_FIELDS = ("date", "device", "torch_version", "group", "dtype", "head_dim", "batch", "heads",
              "seq_q", "seq_k", "causal", "align", "window_left", "window_right",
              "visible_pairs", "provider", "kernel", "median_ms", "tflops", "rel_l2",
              "max_abs_err", "note")


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, default=RESULTS / "window",
                   help="results folder (default: bench/results/window)")
    p.add_argument("--library", type=Path, default=None,
                   help="kernel library folder (default: $TILED_ATTN_KERNELS or build/kernels)")
    p.add_argument("--quick", action="store_true", help="f16, S = 16384 only")
    p.add_argument("--window", type=int, default=4096,
                   help="keys a query sees in the sliding window (window_size = (W - 1, 0))")
    p.add_argument("--flex", action="store_true",
                   help="also FlexAttention's sliding window (torch.compile: minutes)")
    p.add_argument("--max-rel-l2", type=float, default=2e-2,
                   help="rel L2 error against float64 above which a row is marked WRONG")
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--iters", type=int, default=30)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--replot", type=Path, metavar="CSV",
                   help="re-draw the PNGs of a CSV this script wrote (next to it), and stop")
    args = p.parse_args(argv)
    if args.window < 2 or args.warmup < 1 or args.iters < 5 or args.rounds < 1:
        p.error("--window must be >= 2, --warmup >= 1, --iters >= 5 and --rounds >= 1")
    return args


def groups(args):
    """(group, dtype, D, [problems]): the problems of a group share its inputs;
    the first is the one the group is about."""
    w = args.window
    for dtype in (("f16",) if args.quick else tuple(DTYPES)):
        for d in (64, 128):
            for s in ((LONG,) if args.quick else SEQS):
                yield "sliding", dtype, d, [
                    Case(BATCH, HEADS, HEADS, s, s, True, "top_left", (w - 1, 0)),
                    Case(BATCH, HEADS, HEADS, s, s, True)]
            yield "two_sided", dtype, d, [
                Case(BATCH, HEADS, HEADS, LONG, LONG, False, "top_left", (w // 2, w // 2)),
                Case(BATCH, HEADS, HEADS, LONG, LONG, False)]
            yield "chunked", dtype, d, [
                Case(BATCH, HEADS, HEADS, CHUNK_Q, LONG, True, "bottom_right"),
                Case(BATCH, HEADS, HEADS, LONG, LONG, True)]


def problem_name(case: Case) -> str:
    if case.window != (-1, -1):
        return "window"
    if case.causal:
        return "br-causal" if case.bottom_right and case.sq != case.sk else "causal"
    return "full"


def flash_attn_function():
    """(name, flash_attn_func taking [B, S, H, D]) of FlashAttention 3 or 2, or (None, why)."""
    reasons = []
    for module, name in (("flash_attn_interface", "FlashAttention-3"), ("flash_attn", "FlashAttention-2")):
        try:
            return name, getattr(__import__(module), "flash_attn_func")
        except Exception as exc:  # noqa: BLE001 - not installed, or built for another torch
            reasons.append(f"{module}: {short_reason(exc, 80)}")
    return None, "; ".join(reasons)


def our_provider(case: Case, library, kernel, tensors):
    q, k, v = tensors["q"], tensors["k"], tensors["v"]
    kwargs = sdpa_kwargs(case, library, kernel)
    return lambda: sdpa(q, k, v, **kwargs)


def padded_provider(case: Case, library, tensors):
    """Our top-left causal kernel on Q padded in front to S_k rows: the last S_q
    rows are the bottom-right causal answer."""
    qp, k, v, sq = tensors["q_padded"], tensors["k"], tensors["v"], case.sq
    return lambda: sdpa(qp, k, v, causal=True, library=library)[:, :, -sq:]


def torch_provider(case: Case, tensors, backend, how: str):
    """PyTorch's SDPA: how = "is_causal", "mask" (additive, dense) or "lower_right"."""
    q, k, v = tensors["q"], tensors["k"], tensors["v"]
    if how == "is_causal":
        call = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True)  # noqa: E731
    elif how == "lower_right":
        from torch.nn.attention.bias import causal_lower_right
        bias = causal_lower_right(case.sq, case.sk)
        call = lambda: F.scaled_dot_product_attention(q, k, v, attn_mask=bias)  # noqa: E731
    else:
        additive = mask_of(tensors, case, additive=True)
        call = lambda: F.scaled_dot_product_attention(q, k, v, attn_mask=additive)  # noqa: E731
    if backend is None:
        return call

    def forced():
        with sdpa_kernel(backend):
            return call()
    return forced


_FLEX = []


def flex_provider(case: Case, tensors):
    """FlexAttention with a block mask of the case's band (compiled once)."""
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention
    if not _FLEX:
        _FLEX.append(torch.compile(flex_attention, dynamic=False))
    lo, hi = case.band()

    def band(b, h, i, j):
        return (j - i >= lo) & (j - i <= hi)
    block_mask = create_block_mask(band, None, None, case.sq, case.sk, device="cuda")
    q, k, v = tensors["q"], tensors["k"], tensors["v"]
    return lambda: _FLEX[0](q, k, v, block_mask=block_mask)


def flash_provider(case: Case, tensors, name, function):
    """FlashAttention on [B, S, H, D] copies (causal is bottom-right there);
    `function` is the reason when it is not importable."""
    if name is None:
        raise ImportError(function)
    q, k, v = tensors["q_bshd"], tensors["k_bshd"], tensors["v_bshd"]
    kwargs = {"causal": case.causal, "window_size": case.window}

    def call():
        out = function(q, k, v, **kwargs)
        out = out[0] if isinstance(out, tuple) else out
        return out.transpose(1, 2)
    return call


def providers(group: str, problems, library, tensors, args, flash):
    """[(name, problem, kernel, fn or an exception's reason)] of one group."""
    main, other = problems
    cc = torch.cuda.get_device_capability()
    dtype = "f16" if tensors["q"].dtype == torch.float16 else "bf16"
    d = tensors["q"].shape[-1]
    rows = []

    def add(name, case, kernel, make):
        try:
            rows.append((name, case, kernel, make()))
        except Exception as exc:  # noqa: BLE001 - a provider that cannot run: noted
            rows.append((name, case, kernel, short_reason(exc)))

    def plan(case, kernel=None):
        try:
            return kernel or planned_kernel(library, dtype, d, case, cc)
        except Exception as exc:  # noqa: BLE001 - sdpa will say it again
            return f"no plan: {short_reason(exc, 120)}"

    ours = {"sliding": "tiled-attn-window", "two_sided": "tiled-attn-window",
            "chunked": "tiled-attn-bottom-right"}[group]
    add(ours, main, plan(main), lambda: our_provider(main, library, None, tensors))
    if group == "chunked":
        add("tiled-attn-padded", main, plan(other), lambda: padded_provider(main, library, tensors))
    else:
        base = "tiled-attn-causal" if other.causal else "tiled-attn-full"
        add(base, other, plan(other), lambda: our_provider(other, library, None, tensors))
    if group == "sliding":
        small = replace(other, window=(1, 0))  # a band only a window kernel computes
        window_kernel = plan(small)
        add("tiled-attn-causal-on-window-kernel", other, window_kernel,
            lambda: our_provider(other, library, window_kernel, tensors))
        for name, backend in (("auto", None), ("flash", SDPBackend.FLASH_ATTENTION),
                              ("cudnn", SDPBackend.CUDNN_ATTENTION)):
            add(f"torch-causal-{name}", other, "",
                lambda backend=backend: torch_provider(other, tensors, backend, "is_causal"))
    if group == "chunked":
        add("torch-lower-right", main, "", lambda: torch_provider(main, tensors, None, "lower_right"))
    label = "window" if group != "chunked" else "br"
    for name, backend in (("efficient", SDPBackend.EFFICIENT_ATTENTION),
                          ("cudnn", SDPBackend.CUDNN_ATTENTION)):
        add(f"torch-{label}-mask-{name}", main, "",
            lambda backend=backend: torch_provider(main, tensors, backend, "mask"))
    if args.flex and group != "chunked":
        add(f"torch-{label}-flex", main, "", lambda: flex_provider(main, tensors))
    flash_name, flash_fn = flash
    cases = [(main, label)] + ([(other, "causal")] if group == "sliding" else [])
    for case, what in cases:
        add(f"flash-attn-{what}", case, flash_name or "",
            lambda case=case: flash_provider(case, tensors, flash_name, flash_fn))
    return rows


def make_tensors(problems, dtype, d, seed):
    """Inputs of one group: q of the first problem's S_q, k and v (and Q padded
    in front to S_k rows where S_q < S_k), FlashAttention's [B, S, H, D]
    copies; masks are made on first use (mask_of)."""
    g = torch.Generator(device="cuda").manual_seed(seed)
    main = problems[0]

    def rnd(s):
        return torch.randn(BATCH, HEADS, s, d, dtype=DTYPES[dtype], device="cuda", generator=g)
    t = {"q": rnd(main.sq), "k": rnd(main.sk), "v": rnd(main.sk), "masks": {}}
    if main.sq != main.sk:
        t["q_padded"] = torch.cat([rnd(main.sk - main.sq), t["q"]], dim=2)
    for name in ("q", "k", "v"):
        t[f"{name}_bshd"] = t[name].transpose(1, 2).contiguous()
    return t


def mask_of(tensors, case: Case, additive: bool = False):
    """The case's boolean mask (None: every key), checked against
    visible_pairs(), or its additive form in q's dtype (0 or -inf); cached."""
    key = (case, additive)
    if key not in tensors["masks"]:
        if additive:
            mask = mask_of(tensors, case)
            value = torch.zeros(mask.shape, dtype=tensors["q"].dtype, device="cuda") \
                .masked_fill_(~mask, -math.inf)
        else:
            value = case_mask(case, "cuda")
            pairs = visible_pairs(case.sq, case.sk, case.causal, case.bottom_right, *case.window)
            count = case.sq * case.sk if value is None else int(value.sum())
            assert count == pairs, (case, count, pairs)
        tensors["masks"][key] = value
    return tensors["masks"][key]


def check_output(out, ref) -> tuple:
    """(rel L2, max abs error) of batch 0, heads 0-1 against the float64 reference."""
    part = out[:1, :2].double()
    return rel_l2(part, ref), (part - ref).abs().max().item()


def bench_group(group, dtype, d, problems, library, args, meta, cycles, flash, seed):
    tensors, refs = make_tensors(problems, dtype, d, seed), {}

    def reference(case):
        if case not in refs:
            q, k, v = (tensors[n][:1, :2] for n in ("q", "k", "v"))
            refs[case] = reference_f64(q, k, v, mask_of(tensors, case))
        return refs[case]
    rows, runnable = [], []
    for name, case, kernel, fn in providers(group, problems, library, tensors, args, flash):
        pairs = visible_pairs(case.sq, case.sk, case.causal, case.bottom_right, *case.window)
        row = dict(meta, group=group, dtype=dtype, head_dim=d, batch=case.b, heads=case.h,
                   seq_q=case.sq, seq_k=case.sk, causal=case.causal, align=case.align,
                   window_left=case.window[0], window_right=case.window[1],
                   visible_pairs=pairs, provider=name, kernel=kernel, median_ms=math.nan,
                   tflops=math.nan, rel_l2="", max_abs_err="",
                   note="" if callable(fn) else fn)
        rows.append(row)
        if not callable(fn):
            continue
        try:
            err, worst = check_output(fn(), reference(case))
            torch.cuda.synchronize()
            row.update(rel_l2=f"{err:.3e}", max_abs_err=f"{worst:.3e}")
            if not err <= args.max_rel_l2:
                row["note"] = f"WRONG: rel L2 {err:.2e} > {args.max_rel_l2:g}; "
            runnable.append((row, fn, 4 * d * case.b * case.h * pairs, []))
        except Exception as exc:  # noqa: BLE001 - a provider that refuses: noted
            row["note"] = short_reason(exc)
            with contextlib.suppress(Exception):
                torch.cuda.synchronize()
    for _ in range(args.rounds):
        for row, fn, _, rounds in runnable:
            if row["note"] and not row["note"].startswith("WRONG"):
                continue
            try:
                rounds.append(time_fn(fn, [()], args.warmup, args.iters, cycles))
            except Exception as exc:  # noqa: BLE001
                row["note"] = short_reason(exc)
    for row, _, flops, rounds in runnable:
        if rounds and len(rounds) == args.rounds:
            med = statistics.median(r[0] for r in rounds)
            row.update(median_ms=f"{med:.4f}", tflops=f"{flops / (med * 1e-3) / 1e12:.1f}",
                       note=row["note"] + "round medians "
                       + ", ".join(f"{r[0]:.4f}" for r in rounds) + " ms")
    tensors.clear()
    refs.clear()
    torch.cuda.empty_cache()
    return rows


def number(row, key) -> float:
    try:
        return float(row[key])
    except (KeyError, TypeError, ValueError):
        return math.nan


def plot(prefix: Path, rows, meta) -> None:
    """One PNG per (dtype, D): the sliding group's ms and TFLOP/s against S."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    sliding = [r for r in rows if r["group"] == "sliding"]
    for dtype, d in sorted({(r["dtype"], int(r["head_dim"])) for r in sliding}):
        sel = [r for r in sliding if r["dtype"] == dtype and int(r["head_dim"]) == d]
        seqs = sorted({int(r["seq_q"]) for r in sel})
        fig, axes = plt.subplots(1, 2, figsize=(13, 5))
        for name in PLOT_PROVIDERS:
            for ax, key in zip(axes, ("median_ms", "tflops")):
                y = [number(best_row(sel, s, name) or {}, key) for s in seqs]
                if any(math.isfinite(t) for t in y):
                    ax.plot(seqs, y, marker="o", label=name,
                            linewidth=2.5 if name.startswith("tiled-attn-window") else 1.5)
        for ax, label in zip(axes, ("median ms", "TFLOP/s (visible pairs x 4 D)")):
            ax.set_xscale("log", base=2)
            ax.set_xticks(seqs, [str(s) for s in seqs])
            ax.set_xlabel(f"S (B={BATCH}, H={HEADS})")
            ax.set_ylabel(label)
            ax.grid(True, alpha=0.3)
        axes[0].set_yscale("log")
        axes[1].set_ylim(bottom=0)
        axes[1].legend(fontsize=7)
        window = next((r["window_left"] for r in sel if r["provider"] == "tiled-attn-window"), "?")
        fig.suptitle(f"{meta['device']}, {meta['date']}: {dtype}, D={d}, sliding window "
                     f"(window_size=({window}, 0), causal) vs full causal")
        fig.tight_layout()
        fig.savefig(f"{prefix}_{dtype}_d{d}.png", dpi=120)
        plt.close(fig)


def best_row(rows, seq, name):
    """The row of provider `name` at S = seq; "torch-causal-best": the fastest torch-causal-*."""
    if name == "torch-causal-best":
        cands = [r for r in rows if int(r["seq_q"]) == seq and r["provider"].startswith("torch-causal-")
                 and math.isfinite(number(r, "median_ms"))]
        return min(cands, key=lambda r: number(r, "median_ms"), default=None)
    return next((r for r in rows if int(r["seq_q"]) == seq and r["provider"] == name), None)


def ms_text(value: float) -> str:
    return f"{value:.3f}" if math.isfinite(value) else "-"


def summary(rows, meta, command: str) -> str:
    """The markdown: the speedup of the window over full causal, then every row."""
    lines = [f"# Sliding windows, {meta['device']}, {meta['date']}", "",
             f"`{command}`, torch {meta['torch_version']}.", "",
             f"Speedup = our full causal ms / our sliding window ms (the issue's target: "
             f">= {TARGET:g}x at S = {LONG}); ideal = the ratio of their visible pairs (the "
             "speedup at equal TFLOP/s).", "",
             "| dtype | D | S | window | window ms | causal ms | speedup | ideal | causal on "
             "window kernel ms | torch causal best ms | torch window mask ms (efficient) | "
             "flash-attn window ms |", "| --- " * 12 + "|"]
    sliding, short = [r for r in rows if r["group"] == "sliding"], set()
    for dtype, d, s in sorted({(r["dtype"], int(r["head_dim"]), int(r["seq_q"])) for r in sliding}):
        sel = [r for r in sliding if r["dtype"] == dtype and int(r["head_dim"]) == d]

        def ms(name):
            row = best_row(sel, s, name)
            return number(row, "median_ms") if row else math.nan
        win, causal = best_row(sel, s, "tiled-attn-window"), best_row(sel, s, "tiled-attn-causal")
        ratio = ms("tiled-attn-causal") / ms("tiled-attn-window")
        ideal = int(causal["visible_pairs"]) / int(win["visible_pairs"]) if win and causal else math.nan
        mark = " (below target)" if s == LONG and ratio < TARGET else ""
        if s == LONG and ideal < TARGET:
            short.add(f"{ideal:.2f}x")
        lines.append(f"| {dtype} | {d} | {s} | {win['window_left'] if win else '-'} | "
                     f"{ms_text(ms('tiled-attn-window'))} | {ms_text(ms('tiled-attn-causal'))} | "
                     f"{ratio:.2f}x{mark} | {ideal:.2f}x | "
                     f"{ms_text(ms('tiled-attn-causal-on-window-kernel'))} | "
                     f"{ms_text(ms('torch-causal-best'))} | "
                     f"{ms_text(ms('torch-window-mask-efficient'))} | "
                     f"{ms_text(ms('flash-attn-window'))} |")
    if short:
        lines += ["", f"At this window the target is above the ideal speedup at S = {LONG} "
                  f"({', '.join(sorted(short))}): full causal sees S(S+1)/2 pairs, the window "
                  "about W*S - W^2/2, so equal TFLOP/s gives (S+1)/(2W - W^2/S); 3x needs a "
                  "longer S or a narrower window."]
    lines += ["", "Two-sided window (non-causal) against our non-causal kernel; chunked "
              "prefill (bottom-right causal) against our top-left kernel on Q padded to S_k "
              "rows; torch's and FlashAttention's best on the same problem:", "",
              "| group | dtype | D | S_q x S_k | ours ms | baseline | baseline ms | speedup | "
              "ideal | torch best ms (provider) | flash-attn ms |", "| --- " * 11 + "|"]
    for group, ours, base in (("two_sided", "tiled-attn-window", "tiled-attn-full"),
                              ("chunked", "tiled-attn-bottom-right", "tiled-attn-padded")):
        sel = [r for r in rows if r["group"] == group]
        for dtype, d in sorted({(r["dtype"], int(r["head_dim"])) for r in sel}):
            mine = {r["provider"]: r for r in sel if r["dtype"] == dtype and int(r["head_dim"]) == d}
            if ours not in mine or base not in mine:
                continue
            a, b = number(mine[ours], "median_ms"), number(mine[base], "median_ms")
            pairs = int(mine[base]["visible_pairs"])
            padded = group == "chunked"  # the padded run computes S_k x S_k causal
            ideal = (visible_pairs(int(mine[base]["seq_k"]), int(mine[base]["seq_k"]), True,
                                   False, -1, -1) if padded else pairs) \
                / int(mine[ours]["visible_pairs"])
            torch_rows = [r for n, r in mine.items() if n.startswith("torch-")
                          and math.isfinite(number(r, "median_ms"))]
            best = min(torch_rows, key=lambda r: number(r, "median_ms"), default=None)
            flash = next((r for n, r in mine.items() if n.startswith("flash-attn")), None)
            lines.append(f"| {group} | {dtype} | {d} | {mine[ours]['seq_q']} x "
                         f"{mine[ours]['seq_k']} | {ms_text(a)} | {base} | {ms_text(b)} | "
                         f"{b / a:.2f}x | {ideal:.2f}x | "
                         + (f"{ms_text(number(best, 'median_ms'))} ({best['provider']})"
                            if best else "-")
                         + f" | {ms_text(number(flash, 'median_ms') if flash else math.nan)} |")
    lines += ["", "Every row (ms, TFLOP/s of the pairs the problem's mask lets through, error of "
              "batch 0, heads 0-1 against float64 with the same mask):", "",
              "| group | dtype | D | S_q | S_k | problem | provider | kernel | ms | TFLOP/s | "
              "rel L2 | max abs | note |", "| --- " * 13 + "|"]
    for r in rows:
        problem = f"causal={r['causal']} {r['align']} window=({r['window_left']}, {r['window_right']})"
        note = str(r["note"]).split("round medians")[0].strip() or "-"
        lines.append(f"| {r['group']} | {r['dtype']} | {r['head_dim']} | {r['seq_q']} | "
                     f"{r['seq_k']} | {problem} | {r['provider']} | {r['kernel'] or '-'} | "
                     f"{r['median_ms']} | {r['tflops']} | {r['rel_l2'] or '-'} | "
                     f"{r['max_abs_err'] or '-'} | {note[:120]} |")
    return "\n".join(lines) + "\n"


def replot(csv_path: Path) -> int:
    """Re-draw the PNGs of a CSV this script wrote (next to it)."""
    import csv
    with csv_path.open() as f:
        rows = list(csv.DictReader(f))
    if not rows:
        print(f"bench_window: {csv_path} has no rows", file=sys.stderr)
        return 1
    plot(csv_path.with_suffix(""), rows, rows[0])
    return 0


def main() -> int:
    args = parse_args()
    if args.replot:
        return replot(args.replot)
    library = KernelLibrary.load(args.library)
    device = torch.cuda.get_device_name()
    meta = {"date": datetime.date.today().isoformat(), "device": device,
            "torch_version": torch.__version__}
    flash = flash_attn_function()
    print(f"# {device}, torch {torch.__version__}, library {library.path}, "
          f"FlashAttention: {flash[0] or 'none (' + flash[1] + ')'}", flush=True)
    cycles, rows = sleep_cycles_per_ms(), []
    for seed, (group, dtype, d, problems) in enumerate(groups(args)):
        for row in bench_group(group, dtype, d, problems, library, args, meta, cycles, flash,
                               seed):
            rows.append({key: row[key] for key in CSV_FIELDS})
            print(f"{group:9s} {dtype:4s} D={d:3d} Sq={row['seq_q']:5d} Sk={row['seq_k']:5d} "
                  f"{row['provider']:36s} {row['median_ms']:>9} ms {row['tflops']:>7} TF/s "
                  f"err {row['rel_l2'] or '-':>9} max {row['max_abs_err'] or '-':>9} "
                  f"{row['kernel'] or ''} {row['note'][:90]}", flush=True)
    path = write_csv(args.out, "window", device, meta["date"], rows)
    plot(path.with_suffix(""), rows, meta)
    text = summary(rows, meta, "python3 bench/bench_window.py " + " ".join(sys.argv[1:]))
    path.with_suffix(".md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
