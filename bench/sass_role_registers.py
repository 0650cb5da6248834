#!/usr/bin/env python3
"""The registers each warp role's code uses, read from a kernel's SASS.

A warp-specialized kernel moves each role to its register budget with
setmaxnreg (USETMAXREG in the SASS); ptxas allocates each role's code
within that budget. This prints, for each span of the SASS between two
USETMAXREG, the highest register it names (R<n>) and its local-memory
accesses (LDL/STL: spills), next to the budget the span starts with.

The spans follow the SASS text: ptxas may place a role's cold blocks after
another role's code, so the last span can mix roles (its maximum is then
an upper bound, not that role's). Give cubins (run where cuobjdump can
disassemble them: CUDA 12.8 or newer for sm_100a) or .sass text that
`cuobjdump -sass` printed.

    python3 bench/sass_role_registers.py build/kernels/*.sm_100a.cubin
"""
import argparse
import re
import subprocess
import sys


def sass_of(path):
    if path.endswith(".cubin"):
        return subprocess.run(["cuobjdump", "-sass", path], check=True,
                              capture_output=True, text=True).stdout
    with open(path) as f:
        return f.read()


def spans(sass):
    lines = sass.splitlines()
    marks = [(i, re.search(r"USETMAXREG\S*\s+(?:\w+,\s*)?(0x[0-9a-f]+|\d+)", l))
             for i, l in enumerate(lines) if "USETMAXREG" in l]
    starts = [(0, None)] + [(i, int(m.group(1), 0) if m else None)
                            for i, m in marks]
    out = []
    for (a, budget), (b, _) in zip(starts, starts[1:] + [(len(lines), None)]):
        regs = [int(r) for l in lines[a:b] for r in re.findall(r"\bR(\d+)\b", l)]
        local = sum(1 for l in lines[a:b] if re.search(r"\b(LDL|STL)\b", l))
        out.append((budget, max(regs) + 1 if regs else 0, local))
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("inputs", nargs="+", help="cubins or cuobjdump -sass text")
    args = parser.parse_args()
    print("| kernel | span | budget (setmaxnreg) | registers named | LDL/STL |")
    print("| --- | --- | --- | --- | --- |")
    for path in args.inputs:
        name = path.rsplit("/", 1)[-1]
        for k, (budget, used, local) in enumerate(spans(sass_of(path))):
            print(f"| {name} | {k} | {budget if budget is not None else 'launch'} "
                  f"| {used} | {local} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
