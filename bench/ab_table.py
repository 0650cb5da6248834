#!/usr/bin/env python3
"""ab_libraries.py output -> CSV (and a plot of the ratios, with matplotlib).

    python3 bench/ab_table.py RESULT.txt [--plot]

RESULT.txt is kept as bench/results/<topic>/ab-<what>_<device>_<date>.txt.
Reads the lines `ab_libraries.py` prints (one per case: each library's
TFLOP/s, its ratio to the first library and the spread between rounds),
under optional `## <title>` headers that name the runs of one file, and
writes RESULT.csv next to it: run, dtype, D, S, causal, library, tflops,
ratio_to_first, spread. With --plot, RESULT.png shows each case's ratio of
the other libraries to the first (one bar per library), per run. Standard
library only, except matplotlib for the plot.
"""
import argparse
import csv
import re
import sys
from pathlib import Path

LINE = re.compile(r"^(\w+) D=(\d+) S=(\d+) causal=(\d)\s+(.*)$")
ENTRY = re.compile(r"(\S+)=(\d+) \(([\d.]+), spread (\d+)\)")


def parse(path):
    rows, run = [], "run"
    for line in Path(path).read_text().splitlines():
        if line.startswith("## "):
            run = line[3:].strip()
            continue
        m = LINE.match(line)
        if not m:
            continue
        dtype, d, s, causal, rest = m.groups()
        for lib, tflops, ratio, spread in ENTRY.findall(rest):
            rows.append({"run": run, "dtype": dtype, "D": int(d), "S": int(s),
                         "causal": int(causal), "library": lib,
                         "tflops": int(tflops), "ratio_to_first": float(ratio),
                         "spread": int(spread)})
    return rows


def plot(rows, out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    runs = list(dict.fromkeys(r["run"] for r in rows))
    fig, axes = plt.subplots(len(runs), 1, figsize=(12, 3.2 * len(runs)),
                             squeeze=False)
    for ax, run in zip(axes[:, 0], runs):
        firsts = {}
        for r in rows:
            if r["run"] == run:
                firsts.setdefault((r["dtype"], r["D"], r["S"], r["causal"]),
                                  r["library"])
        others = [r for r in rows if r["run"] == run and
                  r["library"] != firsts[(r["dtype"], r["D"], r["S"], r["causal"])]]
        cases = list(dict.fromkeys((r["dtype"], r["D"], r["S"], r["causal"]) for r in others))
        libs = list(dict.fromkeys(r["library"] for r in others))
        width = 0.8 / max(len(libs), 1)
        for k, lib in enumerate(libs):
            ratio = {(r["dtype"], r["D"], r["S"], r["causal"]): r["ratio_to_first"]
                     for r in others if r["library"] == lib}
            xs = [i + (k - (len(libs) - 1) / 2) * width for i, c in enumerate(cases) if c in ratio]
            ax.bar(xs, [ratio[c] for c in cases if c in ratio], width, label=lib)
        short = {"float16": "f16", "bfloat16": "bf16"}
        labels = [f"{short.get(dt, dt)} D{d} {'c' if causal else 'nc'} {s // 1024}k"
                  for dt, d, s, causal in cases]
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.axhline(0.98, color="red", linewidth=0.8, linestyle="--")
        values = [r["ratio_to_first"] for r in others] or [1.0]
        ax.set_ylim(min(0.9, min(values) - 0.02), max(1.1, max(values) + 0.02))
        ax.set_xticks(range(len(cases)))
        ax.set_xticklabels(labels, rotation=90, fontsize=7)
        first = next(iter(firsts.values()), "?")
        ax.set_title(f"{run}: TFLOP/s ratio to {first}")
        if len(libs) > 1:
            ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out, dpi=110)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("result", type=Path, metavar="RESULT.txt",
                   help="ab_libraries.py's output, optionally with '## title' lines")
    p.add_argument("--plot", action="store_true", help="also RESULT.png (needs matplotlib)")
    args = p.parse_args(argv)
    path = args.result
    rows = parse(path)
    if not rows:
        sys.exit(f"no ab_libraries.py lines in {path}")
    out = path.with_suffix(".csv")
    with out.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    print(f"wrote {out} ({len(rows)} rows)")
    if args.plot:
        plot(rows, path.with_suffix(".png"))
        print(f"wrote {path.with_suffix('.png')}")


if __name__ == "__main__":
    main()
