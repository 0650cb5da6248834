#!/usr/bin/env python3
"""Where a kernel's warps stall, per SASS instruction (from Nsight Compute's source page).

    python3 bench/sass_stalls.py REPORT.sass.csv [--top N] [--range LO HI]

REPORT.sass.csv is `ncu -i REPORT.ncu-rep --page source --csv --print-source sass`
of a report taken with the SourceCounters section (bench/ncu_sass_stalls.sh makes
both). Prints the share of warp-state samples of each stall reason, the same by
opcode, and the N instructions with the most samples (address from the kernel's
start, samples, executions, SASS, top stall reasons); --range limits the listing
to an address range (hex) such as one loop.
"""
import argparse
import collections
import csv


def load(path):
    rows = list(csv.reader(open(path)))
    head = next(i for i, r in enumerate(rows) if r and r[0] == "Address")
    names = rows[head]
    return names, [dict(zip(names, r)) for r in rows[head + 1:] if len(r) >= len(names)]


def num(text):
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return 0.0


def opcode(sass):
    words = sass.split()
    word = words[1] if words and words[0].startswith("@") and len(words) > 1 else words[0] if words else "?"
    return word.split(".")[0]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("csv")
    p.add_argument("--top", type=int, default=25)
    p.add_argument("--range", nargs=2, metavar=("LO", "HI"))
    args = p.parse_args()
    names, rows = load(args.csv)
    stalls = [n for n in names if n.startswith("stall_") and "Not Issued" not in n]
    samples_col = "Warp Stall Sampling (All Samples)"
    base = int(rows[0]["Address"], 16)
    total = sum(num(r[samples_col]) for r in rows) or 1.0
    by_reason = collections.Counter()
    by_op = collections.defaultdict(collections.Counter)
    for r in rows:
        op = opcode(r["Source"].strip())
        by_op[op]["samples"] += num(r[samples_col])
        by_op[op]["executed"] += num(r["Instructions Executed"])
        for s in stalls:
            by_reason[s] += num(r[s])
            by_op[op][s] += num(r[s])
    print(f"{int(total)} samples; share by stall reason:")
    for s, v in by_reason.most_common():
        if v:
            print(f"  {s[6:]:18s} {v / total:.3f}")
    print("by opcode (share of samples, warp-level executions, top reasons):")
    for op, c in sorted(by_op.items(), key=lambda kv: -kv[1]["samples"])[:15]:
        top = sorted(((s, c[s]) for s in stalls), key=lambda x: -x[1])[:3]
        print(f"  {op:8s} {c['samples'] / total:.3f}  {c['executed'] / 1e6:8.1f}M  "
              + " ".join(f"{s[6:]}:{v / total:.3f}" for s, v in top if v))
    lo, hi = (int(x, 16) for x in args.range) if args.range else (0, 1 << 62)
    listed = [r for r in rows if lo <= int(r["Address"], 16) - base <= hi]
    print(f"top {args.top} instructions by samples:")
    for r in sorted(listed, key=lambda r: -num(r[samples_col]))[:args.top]:
        top = sorted(((s, num(r[s])) for s in stalls), key=lambda x: -x[1])[:3]
        print(f"  {int(r['Address'], 16) - base:06x} {num(r[samples_col]) / total:.4f} "
              f"{num(r['Instructions Executed']) / 1e6:6.2f}M  {r['Source'].strip()[:60]:60s} "
              + " ".join(f"{s[6:]}:{v / total:.4f}" for s, v in top if v))


if __name__ == "__main__":
    main()
