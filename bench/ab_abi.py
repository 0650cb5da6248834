#!/usr/bin/env python3
"""A/B of the kernel ABI change: the ABI v1 library (memref descriptors, run
by the Python runtime of its own commit) against the ABI v2 library (run by
the C++ runtime), interleaved in one process on the same inputs.

    python3 bench/ab_abi.py OLD_PYTHON_DIR OLD_LIBRARY NEW_LIBRARY [--out DIR]

OLD_PYTHON_DIR is the `python/` folder of the older checkout; its package is
loaded under the name `tiled_attn_v1`. Grid: fp16, D in {64, 128}, causal
and not, S in {1024, 4096, 16384} with B x S = 16k and H x D = 2048. Each
cell: 5 rounds, each timing both (common.time_fn, CUDA events, alternating
order); the figure is the median of the round medians. Also checks both
against each other (relative L2).
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import statistics
import sys
from pathlib import Path

import torch

import tiled_attn

from common import RESULTS, sleep_cycles_per_ms, time_fn, write_csv


def load_old(python_dir: Path):
    init = python_dir / "tiled_attn" / "__init__.py"
    spec = importlib.util.spec_from_file_location(
        "tiled_attn_v1", init, submodule_search_locations=[str(init.parent)])
    module = importlib.util.module_from_spec(spec)
    sys.modules["tiled_attn_v1"] = module
    spec.loader.exec_module(module)
    return module


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("old_python", type=Path)
    p.add_argument("old_library", type=Path)
    p.add_argument("new_library", type=Path)
    p.add_argument("--out", type=Path, default=RESULTS / "runtime",
                   help="results folder (default: bench/results/runtime)")
    p.add_argument("--rounds", type=int, default=5)
    args = p.parse_args()
    old = load_old(args.old_python)
    old_lib = old.KernelLibrary.load(args.old_library)
    new_lib = tiled_attn.KernelLibrary(args.new_library)
    cpm = sleep_cycles_per_ms()
    device, date = torch.cuda.get_device_name(), datetime.date.today().isoformat()
    rows, ratios = [], []
    print(f"# {device}, {date}: ABI v1 ({args.old_library}) vs ABI v2 ({args.new_library})")
    for d in (64, 128):
        for causal in (False, True):
            for s in (1024, 4096, 16384):
                b, h = 16384 // s, 2048 // d
                sets = [tuple(torch.randn(b, h, s, d, dtype=torch.float16, device="cuda")
                              for _ in range(3)) for _ in range(2)]
                fns = {
                    "v1": lambda q, k, v: old.sdpa(q, k, v, causal=causal, library=old_lib),
                    "v2": lambda q, k, v: tiled_attn.sdpa(q, k, v, causal=causal,
                                                          library=new_lib),
                }
                diff = (fns["v1"](*sets[0]).float() - fns["v2"](*sets[0]).float()).norm()
                rel = (diff / fns["v1"](*sets[0]).float().norm()).item()
                meds = {"v1": [], "v2": []}
                for r in range(args.rounds):
                    for name in (("v1", "v2") if r % 2 == 0 else ("v2", "v1")):
                        meds[name].append(time_fn(fns[name], sets, 5, 20, cpm)[0])
                flops = 4 * b * h * s * s * d / (2 if causal else 1)
                m1, m2 = statistics.median(meds["v1"]), statistics.median(meds["v2"])
                ratios.append(m1 / m2)
                print(f"D={d} causal={causal!s:5} S={s:5}: v1 {flops / m1 / 1e9:6.1f} "
                      f"v2 {flops / m2 / 1e9:6.1f} TFLOP/s, v2/v1 {m1 / m2:.3f}, "
                      f"rel L2 v1-v2 {rel:.1e}")
                rows.append({"date": date, "device": device, "dtype": "f16", "head_dim": d,
                             "causal": causal, "batch": b, "heads": h, "seq": s,
                             "v1_ms": f"{m1:.4f}", "v2_ms": f"{m2:.4f}",
                             "v1_tflops": f"{flops / m1 / 1e9:.1f}",
                             "v2_tflops": f"{flops / m2 / 1e9:.1f}",
                             "speed_v2_over_v1": f"{m1 / m2:.3f}", "rel_l2_v1_v2": f"{rel:.2e}"})
    geo = statistics.geometric_mean(ratios)
    print(f"geometric mean of v2/v1 speed: {geo:.3f}")
    write_csv(args.out, "ab-abi-v1-v2", device, date, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
