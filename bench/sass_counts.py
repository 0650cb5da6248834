#!/usr/bin/env python3
"""SASS instruction counts of cubins, for reading what a lowering change did
to a kernel without a GPU.

    python3 bench/sass_counts.py --out FILE.csv LABEL=KERNEL.cubin [...]

(a KERNEL.sass instead: `cuobjdump -sass`'s saved output of a cubin)

Disassembles each cubin with cuobjdump (CUOBJDUMP, else on PATH, else
/usr/local/cuda/bin/cuobjdump; PyPI's nvidia-cuda-cuobjdump has one) and
writes, per cubin, its whole instruction count and the counts of the
opcodes that show where integer work runs: the uniform datapath (UIADD3,
ULOP3, USHF), vector registers (LOP3, IMAD, SHF, R2UR moves to uniform
registers), conversions (I2FP), the floating-point pipe (FADD, FMUL, FFMA,
FMNMX), MUFU and calls (CALL).
"""

import argparse
import collections
import csv
import os
import re
import shutil
import subprocess
from pathlib import Path

OPCODES = ["UIADD3", "ULOP3", "USHF", "R2UR", "LOP3", "IMAD", "SHF", "I2FP", "FADD", "FMUL",
           "FFMA", "FMNMX", "MUFU", "CALL"]
LINE = re.compile(r"^\s+/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P[0-9T]+\s+)?([A-Z0-9_]+)")


def cuobjdump() -> str:
    for tool in (os.environ.get("CUOBJDUMP"), shutil.which("cuobjdump"),
                 "/usr/local/cuda/bin/cuobjdump"):
        if tool and Path(tool).exists():
            return tool
    raise SystemExit("no cuobjdump: set CUOBJDUMP (pip download nvidia-cuda-cuobjdump)")


def counts(tool: str, cubin: Path) -> collections.Counter:
    # A .sass file is cuobjdump -sass's output, saved.
    sass = cubin.read_text() if cubin.suffix == ".sass" else subprocess.run(
        [tool, "-sass", str(cubin)], check=True, capture_output=True, text=True).stdout
    ops = collections.Counter()
    for line in sass.splitlines():
        m = LINE.match(line)
        if m:
            ops[m.group(1)] += 1
    return ops


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("cubins", nargs="+", metavar="LABEL=CUBIN")
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args()
    tool = cuobjdump()
    rows = []
    for item in args.cubins:
        label, _, path = item.partition("=")
        ops = counts(tool, Path(path))
        row = {"label": label, "kernel": Path(path).name.split(".")[0],
               "total": sum(ops.values())}
        row.update({op: ops.get(op, 0) for op in OPCODES})
        rows.append(row)
        print(", ".join(f"{k} {v}" for k, v in row.items()))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
