#!/usr/bin/env python3
"""Interleaved A/B timing of kernel libraries (TFLOP/s).

    python3 bench/ab_libraries.py LIB_A LIB_B [...] [--seqs 1024,4096] [--causal 1,0]
        [--head-dims 64,128] [--dtypes f16,bf16] [--window 4095] [--softcap 50] [--rounds 5]

For each case (dtype as in --dtypes, f16 by default; D as in --head-dims
(64 and 128); causal as in --causal; S as in --seqs), every library is
timed in turn, --rounds rounds (5; the order alternates between rounds);
each timing is the median of 30 back-to-back CUDA-event runs after 5
warm-up runs (common.time_fn). Prints the median over rounds, the ratio to
the first library and the spread between rounds. B*S = 16384, H*D = 2048,
random normal inputs. The GPU first runs 200 8k x 8k matmuls to reach its
clocks. With --window w every call has window_size=(w, 0) (with causal: the
window kernels), and with --softcap c a softcap of c (the softcap kernels);
the TFLOP/s figure stays the unwindowed problem's FLOPs over the time, so
compare the ratios, not the rates. bench/ab_table.py turns the printed
lines into a CSV and a plot.
"""
import argparse
import statistics

import torch

from tiled_attn import KernelLibrary, sdpa

from common import grid_cases, median_ms

DTYPES = {"f16": torch.float16, "bf16": torch.bfloat16}


def int_list(text):
    try:
        return [int(x) for x in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated integers, got {text!r}") from None


def dtype_list(text):
    names = text.split(",")
    bad = [n for n in names if n not in DTYPES]
    if bad:
        raise argparse.ArgumentTypeError(f"expected f16 and/or bf16, got {','.join(bad)}")
    return [DTYPES[n] for n in names]


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("libraries", nargs="+", metavar="LIB", help="kernel library folders")
    p.add_argument("--seqs", type=int_list, default=[1024, 4096, 8192, 16384],
                   help="sequence lengths S (default: 1024,4096,8192,16384)")
    p.add_argument("--causal", type=int_list, default=[1, 0],
                   help="causal flags to run, 1 and/or 0 (default: 1,0)")
    p.add_argument("--head-dims", type=int_list, default=[64, 128],
                   help="head dims D (default: 64,128)")
    p.add_argument("--dtypes", type=dtype_list, default=[torch.float16],
                   help="f16 and/or bf16 (default: f16)")
    p.add_argument("--window", type=int, default=None, metavar="W",
                   help="window_size=(W, 0) on every call (the window kernels)")
    p.add_argument("--softcap", type=float, default=0.0, help="softcap of every call (default: 0)")
    p.add_argument("--rounds", type=int, default=5, help="interleaved rounds (default: 5)")
    args = p.parse_args(argv)
    if args.rounds < 1:
        p.error("--rounds must be >= 1")
    return args


def short_names(paths):
    """Each library's name: the fewest trailing path components that tell the
    libraries apart (.gpu/a/kernels and .gpu/b/kernels: a/kernels, b/kernels)."""
    parts = [p.rstrip("/").split("/") for p in paths]
    for n in range(1, max(len(x) for x in parts) + 1):
        names = ["/".join(x[-n:]) for x in parts]
        if len(set(names)) == len(names):
            return names
    raise SystemExit("ab_libraries: the same library is named twice")


def main(args):
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.float16)
    for _ in range(200):
        a @ a
    torch.cuda.synchronize()
    libs = {n: KernelLibrary.load(p) for n, p in zip(short_names(args.libraries), args.libraries)}
    window = (args.window, 0) if args.window is not None else (-1, -1)
    for dt, d, causal, s, q, k, v, flops in grid_cases(args.dtypes, args.head_dims, args.causal,
                                                       args.seqs):
        res = {n: [] for n in libs}
        for r in range(args.rounds):
            # Alternate the order (A B, B A, ...), so that drift between the
            # first and the last library of a round favours neither.
            order = list(libs.items()) if r % 2 == 0 else list(libs.items())[::-1]
            for n, lib in order:
                ms = median_ms(lambda: sdpa(q, k, v, causal=bool(causal), window_size=window,
                                            softcap=args.softcap, library=lib), 5, 30)
                res[n].append(flops / ms / 1e9)
        med = {n: statistics.median(x) for n, x in res.items()}
        base = next(iter(med.values()))
        print(f"{str(dt)[6:]} D={d} S={s} causal={causal}  " + "  ".join(
            f"{n}={m:.0f} ({m / base:.3f}, spread {max(res[n]) - min(res[n]):.0f})"
            for n, m in med.items()), flush=True)


if __name__ == "__main__":
    main(parse_args())
