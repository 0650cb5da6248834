"""Compile times of a kernel library, from its manifest.json.

    python3 bench/compile_times.py [LIBRARY] [--machine NAME] [--date YYYY-MM-DD] [--out DIR]

tiled-attn-compile records in each manifest entry the wall-clock seconds
from the kernel's tile IR to PTX (the schedule, the GPU lowering and the PTX
pipeline) and of each ptxas run (``compile_seconds``: ``{"to_ptx": s,
"to_cubin": {"sm_80": s, ...}}``). This writes them as a CSV, one row per
kernel, ``DIR/compile_times_<machine>_<date>.csv``, and prints the median
and the max of each step. Standard library only: it runs where the library
is built, with no GPU.

LIBRARY defaults to ``$TILED_ATTN_KERNELS``, else ``build/kernels``;
``--machine`` to the host name, ``--date`` to today, ``--out`` to
``bench/results/compile-times``.
"""
from __future__ import annotations

import argparse
import csv
import datetime
import json
import os
import re
import socket
import statistics
import sys
from pathlib import Path
from typing import Any, Dict, List, Sequence, Tuple

REPO_ROOT = Path(__file__).resolve().parents[1]


def slug(text: str) -> str:
    """Lower case, every run of other characters turned into ``-``."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "build-machine"


def arch_key(arch: str) -> Tuple[int, str]:
    """sm_80 < sm_86 < sm_90 < sm_90a < sm_120a."""
    match = re.match(r"^sm_(\d+)([a-z]?)$", arch)
    return (int(match.group(1)), match.group(2)) if match else (1 << 30, arch)


def read_kernels(library: Path) -> List[Dict[str, Any]]:
    """The manifest's kernels; exits with a message when it cannot."""
    manifest = library / "manifest.json"
    try:
        kernels = json.loads(manifest.read_text(encoding="utf-8"))["kernels"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        sys.exit(f"compile_times.py: cannot read the kernels of {manifest}: {exc}")
    missing = [k.get("name", "?") for k in kernels if "compile_seconds" not in k]
    if missing:
        sys.exit(f"compile_times.py: {manifest}: no compile_seconds for "
                 f"{', '.join(missing)} (built by an older tiled-attn-compile?)")
    return kernels


def write_csv(path: Path, kernels: Sequence[Dict[str, Any]], archs: Sequence[str],
              date: str, machine: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["date", "machine", "name", "chip", "dtype", "head_dim", "causal",
                         "to_ptx_s"] + [f"to_cubin_{arch}_s" for arch in archs])
        for k in kernels:
            seconds = k["compile_seconds"]
            cubins = seconds.get("to_cubin", {})
            writer.writerow([date, machine, k["name"], k["arch"], k["dtype"], k["head_dim"],
                             k["causal"], f"{seconds['to_ptx']:.3f}"]
                            + [f"{cubins[arch]:.3f}" if arch in cubins else ""
                               for arch in archs])


def summary(kernels: Sequence[Dict[str, Any]], archs: Sequence[str]) -> List[List[str]]:
    """Rows of step, runs, median, max, slowest kernel."""
    steps = [("to PTX", [(k["compile_seconds"]["to_ptx"], k["name"]) for k in kernels])]
    every_cubin = []
    for arch in archs:
        runs = [(k["compile_seconds"]["to_cubin"][arch], k["name"]) for k in kernels
                if arch in k["compile_seconds"].get("to_cubin", {})]
        steps.append((f"to cubin, {arch}", runs))
        every_cubin += runs
    if len(archs) > 1:
        steps.append(("to cubin, any chip", every_cubin))
    rows = []
    for step, runs in steps:
        if runs:
            slowest = max(runs)
            rows.append([step, str(len(runs)), f"{statistics.median(s for s, _ in runs):.2f}",
                         f"{slowest[0]:.2f}", slowest[1]])
    return rows


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("library", nargs="?",
                        default=os.environ.get("TILED_ATTN_KERNELS") or REPO_ROOT / "build" / "kernels",
                        help="library folder holding manifest.json")
    parser.add_argument("--machine", default=slug(socket.gethostname()),
                        help="machine name for the file name (default: the host name)")
    parser.add_argument("--date", default=datetime.date.today().isoformat(),
                        help="date for the file name, YYYY-MM-DD (default: today)")
    parser.add_argument("--out", default=REPO_ROOT / "bench" / "results" / "compile-times",
                        type=Path, help="folder of the CSV (default: bench/results/compile-times)")
    args = parser.parse_args(argv)
    if not re.match(r"^\d{4}-\d{2}-\d{2}$", args.date):
        parser.error(f"--date must be YYYY-MM-DD, got {args.date!r}")

    library = Path(args.library)
    kernels = read_kernels(library)
    archs = sorted({arch for k in kernels for arch in k["compile_seconds"].get("to_cubin", {})},
                   key=arch_key)
    machine = slug(args.machine)
    path = args.out / f"compile_times_{machine}_{args.date}.csv"
    write_csv(path, kernels, archs, args.date, machine)

    rows = [["step", "runs", "median s", "max s", "slowest kernel"]] + summary(kernels, archs)
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    print(f"compile times of {len(kernels)} kernels ({library / 'manifest.json'}, "
          f"machine {machine}, {args.date})")
    for i, row in enumerate(rows):
        cells = [cell.ljust(w) if j in (0, 4) else cell.rjust(w)
                 for j, (cell, w) in enumerate(zip(row, widths))]
        print("  ".join(cells).rstrip())
        if i == 0:
            print("  ".join("-" * w for w in widths))
    total = sum(k["compile_seconds"]["to_ptx"] + sum(k["compile_seconds"].get("to_cubin", {}).values())
                for k in kernels)
    print(f"total {total:.1f} s; CSV: {path}")


if __name__ == "__main__":
    main()
