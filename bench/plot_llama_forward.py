#!/usr/bin/env python3
"""Grouped bars from a llama_forward.py (or llama_train.py) CSV: time per shape and path.

    python3 bench/plot_llama_forward.py CSV

CSV: bench/results/llama-forward/llama_forward_<device>_<date>.csv;
writes the PNG next to the CSV, with the same name. Each bar is a path's
median forward time, its whisker the 10th-90th percentile of the round
medians, its label the speed relative to the sdpa path. Needs matplotlib,
not torch nor a GPU.
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
from pathlib import Path

PATHS = ("tiled_attn", "sdpa", "sdpa_flash", "eager")


def read_rows(path: Path) -> list:
    rows = []
    with path.open(newline="") as f:
        for r in csv.DictReader(f):
            rows.append(dict(r, **{k: float(r[k]) for k in ("median_ms", "p10_ms", "p90_ms")}))
    return rows


def plot(csv_path: Path, paths=None, what: str = "forward") -> Path:
    """The PNG beside `csv_path`: its `paths`' bars (default: those it holds,
    in PATHS' order) of `what` ("forward", "training step") time."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = read_rows(csv_path)
    present = {r["path"] for r in rows}
    paths = [p for p in (paths or PATHS) if p in present]
    shapes = list(dict.fromkeys(r["shape"] for r in rows))
    cell = {(r["shape"], r["path"]): r for r in rows}
    width = 0.8 / len(paths)
    fig, ax = plt.subplots(figsize=(8, 5))
    for i, path in enumerate(paths):
        xs, ys, lo, hi, labels = [], [], [], [], []
        for j, shape in enumerate(shapes):
            r, sdpa = cell.get((shape, path)), cell.get((shape, "sdpa"))
            if r is None or not math.isfinite(r["median_ms"]):
                continue
            xs.append(j + (i - (len(paths) - 1) / 2) * width)
            ys.append(r["median_ms"])
            lo.append(r["median_ms"] - r["p10_ms"])
            hi.append(r["p90_ms"] - r["median_ms"])
            ratio = sdpa["median_ms"] / r["median_ms"] if sdpa else math.nan
            labels.append(f"{ratio:.2f}x" if math.isfinite(ratio) else "")
        bars = ax.bar(xs, ys, width, yerr=[lo, hi], capsize=3, label=path)
        ax.bar_label(bars, labels, fontsize=7, padding=2)
    first = rows[0]
    ax.set_xticks(range(len(shapes)), [f"batch x tokens = {s}" for s in shapes])
    ax.set_ylabel(f"{what} time, ms (median; whiskers p10-p90 of rounds)")
    ax.set_ylim(0, 1.25 * max(r["p90_ms"] for r in rows if math.isfinite(r["p90_ms"])))
    ax.grid(True, axis="y", alpha=0.3)
    ax.set_title(f"Llama 8x2048, D=128, bf16: {first['device']}, {first['date']}\n"
                 f"torch {first['torch']}, transformers {first['transformers']}; "
                 "labels: speed vs sdpa", fontsize=9)
    ax.legend(fontsize=8, ncol=len(paths), loc="upper center")
    out = csv_path.with_suffix(".png")
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("csv", type=Path, help="a CSV that llama_forward.py wrote")
    print(f"wrote {plot(p.parse_args(argv).csv)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
