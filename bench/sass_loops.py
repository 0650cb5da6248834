#!/usr/bin/env python3
"""The loops of a kernel's SASS and what their bodies execute.

    python3 bench/sass_loops.py KERNEL.ptx [--arch sm_90a] [--min-mma 8]
    python3 bench/sass_loops.py KERNEL.sass

Assembles the PTX with ptxas (on PATH or /usr/local/cuda/bin), disassembles
the cubin with nvdisasm (on PATH, or NVDISASM=...; CUDA 13's from PyPI:
`pip download --no-deps nvidia-cuda-nvdisasm`, unzipped), or reads a SASS
listing, and prints, for each backward branch whose body holds at least
--min-mma tensor-core instructions (HGMMA, HMMA, UTCHMMA...), the body's
instruction count and its opcodes by count: the hot loops of a kernel, as
docs/performance.md compares them between builds (the sm_90a backward's
unmasked loop at D = 64: 962 instructions a warp and step before exp2, 482 after).
Standard library only.
"""
import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path


def tool(name):
    found = os.environ.get(name.upper()) or shutil.which(name)
    if not found and Path(f"/usr/local/cuda/bin/{name}").exists():
        found = f"/usr/local/cuda/bin/{name}"
    if not found:
        sys.exit(f"sass_loops.py: no {name} (on PATH, /usr/local/cuda/bin, or ${name.upper()})")
    return found


def sass_of(path, arch):
    if path.suffix == ".sass":
        return path.read_text()
    with tempfile.TemporaryDirectory() as tmp:
        cubin = Path(tmp) / "k.cubin"
        subprocess.run([tool("ptxas"), f"-arch={arch}", str(path), "-o", str(cubin)], check=True)
        return subprocess.run([tool("nvdisasm"), "-c", str(cubin)], check=True,
                              capture_output=True, text=True).stdout


def loops(sass, min_mma):
    instructions, labels = [], {}
    for line in sass.splitlines():
        label = re.match(r"\s*(\.L_x_\d+):", line)
        if label:
            labels[label.group(1)] = len(instructions)
            continue
        ins = re.match(r"\s+/\*[0-9a-f]+\*/\s+(.*?);", line)
        if ins:
            instructions.append(ins.group(1).strip())
    for end, text in enumerate(instructions):
        branch = re.search(r"BRA.*?(\.L_x_\d+)", text)
        start = labels.get(branch.group(1)) if branch else None
        if start is None or start >= end:
            continue
        ops = collections.Counter()
        for ins in instructions[start:end + 1]:
            words = ins.split()
            op = words[1] if words[0].startswith("@") else words[0]
            ops[op.split(".")[0]] += 1
        mma = sum(n for op, n in ops.items() if "MMA" in op)
        if mma >= min_mma:
            yield start, end, ops, mma


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("kernel", type=Path, help="a .ptx or a .sass listing")
    p.add_argument("--arch", default="sm_90a")
    p.add_argument("--min-mma", type=int, default=8)
    args = p.parse_args()
    try:
        for start, end, ops, mma in loops(sass_of(args.kernel, args.arch), args.min_mma):
            print(f"loop {start}-{end}: {end - start + 1} instructions, {mma} tensor-core")
            print("   " + " ".join(f"{op}:{n}" for op, n in ops.most_common(30)))
    except BrokenPipeError:  # (piped into head)
        sys.stderr.close()


if __name__ == "__main__":
    main()
