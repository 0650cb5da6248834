#!/usr/bin/env python3
"""Bar chart of bench/launch_overhead.py's CSV: host time per call of each path.

    python3 bench/plot_launch_overhead.py CSV

CSV: bench/results/launch-overhead/launch_overhead_<device>_<date>.csv;
writes the PNG next to the CSV, with the same name. Needs matplotlib, not
torch nor a GPU.
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("csv", type=Path, help="a CSV that launch_overhead.py wrote")
    path = p.parse_args().csv
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    rows = list(csv.DictReader(path.open()))
    names = [r["path"] for r in rows]
    med = [float(r["median_us"]) for r in rows]
    lo = [m - float(r["min_us"]) for m, r in zip(med, rows)]
    hi = [float(r["max_us"]) - m for m, r in zip(med, rows)]
    fig, ax = plt.subplots(figsize=(7, 3.5))
    ax.bar(names, med, yerr=[lo, hi], capsize=4, color=["#888", "#1f77b4", "#4a90d9", "#9ecae1"])
    for i, m in enumerate(med):
        ax.text(i, m, f"{m:.1f}", ha="center", va="bottom")
    r0 = rows[0]
    ax.set_ylabel("host µs per call (median of rounds; whiskers min-max)")
    ax.set_title(f"{r0['device']}, shape {r0['shape']}, {r0['date']}", fontsize=9)
    ax.tick_params(axis="x", labelsize=8)
    fig.tight_layout()
    out = path.with_suffix(".png")
    fig.savefig(out, dpi=120)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
