#!/usr/bin/env python3
"""Prints the README's performance table from a bench_sdpa.py CSV.

    python3 bench/readme_table.py bench/results/throughput/bench_<device>_<date>.csv
"""
import argparse
import csv
from collections import defaultdict

PROVIDERS = [("tiled-attn", "tiled-attn"), ("torch-flash", "SDPA flash (FA2)"),
             ("torch-cudnn", "SDPA cuDNN"), ("torch-auto", "SDPA auto")]


def main(path):
    rows = defaultdict(dict)
    for r in csv.DictReader(open(path)):
        key = (r["dtype"], int(r["head_dim"]), r["causal"], int(r["seq"]))
        rows[key][r["provider"]] = r["tflops"]
    print("| dtype | D | causal | S | " + " | ".join(n for _, n in PROVIDERS) + " |")
    print("| --- | ---: | --- | ---: |" + " ---: |" * len(PROVIDERS))
    for key in sorted(rows):
        if key[3] not in (1024, 4096, 16384):
            continue
        cells = []
        for p, _ in PROVIDERS:
            v = rows[key].get(p, "")
            cells.append(f"{float(v):.0f}" if v not in ("", "nan") else "-")
        print(f"| {key[0]} | {key[1]} | {key[2]} | {key[3]} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("csv", help="a CSV that bench_sdpa.py wrote")
    main(parser.parse_args().csv)
