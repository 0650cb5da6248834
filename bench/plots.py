#!/usr/bin/env python3
"""TFLOP/s against S plots from bench_sdpa.py rows: one PNG per (dtype, D, mask).

    python3 bench/plots.py bench/results/throughput/bench_<device>_<date>.csv

re-draws the plots of a CSV (next to it, with the same prefix) without a GPU
or torch; bench_sdpa.py calls write_plots directly.
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
from pathlib import Path

PROVIDERS = ("tiled-attn", "torch-auto", "torch-flash", "torch-efficient",
             "torch-cudnn", "torch-math", "eager")


def write_plots(prefix: Path, rows, meta) -> list:
    """One PNG per (dtype, D, D_v, causal): `<prefix>_<dtype>_d<D>[v<D_v>]_<mask>.png`."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    paths = []
    def key(r):
        return r["dtype"], r["head_dim"], r.get("head_dim_v") or r["head_dim"], r["causal"]

    groups = sorted({key(r) for r in rows})
    for dt, d, dv, causal in groups:
        sel = [r for r in rows if key(r) == (dt, d, dv, causal)]
        seqs = sorted({r["seq"] for r in sel})
        fig, ax = plt.subplots(figsize=(8, 5))
        for name in PROVIDERS:
            y = [next((r["tflops"] for r in sel if r["seq"] == s and r["provider"] == name),
                      math.nan) for s in seqs]
            if any(math.isfinite(t) for t in y):
                ax.plot(seqs, y, marker="o", label=name,
                        linewidth=2.5 if name == "tiled-attn" else 1.5)
        ax.set_xscale("log", base=2)
        ax.set_xticks(seqs, [str(s) for s in seqs])
        ax.set_xlabel("sequence length S (B*S = 16384, H*D = 2048)")
        ax.set_ylabel("TFLOP/s")
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
        mask = "causal" if causal else "non-causal"
        dims = f"D={d}" if dv == d else f"D={d}, D_v={dv}"
        ax.set_title(f"{meta['device']}, {meta['date']}: {dt}, {dims}, {mask}")
        ax.legend(fontsize=8)
        path = Path(f"{prefix}_{dt}_d{d}{'' if dv == d else f'v{dv}'}_"
                    f"{'causal' if causal else 'noncausal'}.png")
        fig.tight_layout()
        fig.savefig(path, dpi=120)
        plt.close(fig)
        paths.append(path)
    return paths



def rows_from_csv(path: Path) -> list:
    rows = []
    for r in csv.DictReader(path.open()):
        rows.append(dict(r, head_dim=int(r["head_dim"]),
                         head_dim_v=int(r.get("head_dim_v") or r["head_dim"]), seq=int(r["seq"]),
                         causal=r["causal"] == "True", tflops=float(r["tflops"])))
    return rows


def main(path: Path) -> int:
    rows = rows_from_csv(path)
    if not rows:
        print(f"plots: {path} has no rows", file=sys.stderr)
        return 1
    meta = {"device": rows[0]["device"], "date": rows[0]["date"]}
    prefix = path.with_suffix("")
    for p in write_plots(prefix, rows, meta):
        print(p)
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("csv", type=Path, help="a CSV that bench_sdpa.py wrote")
    sys.exit(main(parser.parse_args().csv))
