#!/usr/bin/env python3
"""Builds a kernel library of naive attention kernels for the C++ runtime.

The kernels (naive_sdpa.cu: one thread per query row) take the parameter
list of ABI tiled-attn-v2 written below, a TMA descriptor of k included, so
that the runtime can be checked on a GPU whatever state the compiler is in.

    python3 make_naive_library.py <out-dir>      # needs nvcc

writes <out-dir>/manifest.json, naive.ptx (compute_80) and
naive.sm_90.cubin: f16 D=64 without mask (the cubin on an sm_90 device),
f16 D=64 causal top-left (PTX only: the driver JIT-compiles it) and an
empty kernel of D=128 for launch_overhead.
"""

import json
import os
import subprocess
import sys

NVCC = os.environ.get("NVCC", "/usr/local/cuda/bin/nvcc")
SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "naive_sdpa.cu")


def params():
    """The kernels' parameters, in their order."""
    result = [{"name": t, "kind": "base", "type": "ptr"} for t in "qkvo"]
    for t in "qkvo":
        result += [{"name": t, "kind": "stride", "dim": d, "type": "i64"} for d in range(3)]
    return result + [
        {"name": "q", "kind": "size", "dim": 2, "type": "i32"},
        {"name": "k", "kind": "size", "dim": 2, "type": "i32"},
        {"name": "scale", "kind": "scalar", "type": "f32"},
        {"name": "k", "kind": "tensor_map", "type": "tensor_map", "box": [64, 64],
         "swizzle": 128},
    ]


def entry(name, causal, symbol, head_dim=64, cubin=True):
    e = {"name": name, "arch": "sm_80", "dtype": "f16", "head_dim": head_dim,
         "causal": causal, "symbol": symbol, "ptx": "naive.ptx", "block": [128, 1, 1],
         "block_m": 64, "shared_bytes": 0, "abi": "tiled-attn-v2", "index_bits": 64,
         "params": params(), "schedule": {"block_n": 1, "options": "naive"}}
    if cubin:
        e["cubin"] = {"sm_90": "naive.sm_90.cubin"}
    return e


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    subprocess.check_call([NVCC, "-ptx", "-arch=compute_80", SOURCE, "-o",
                           os.path.join(out, "naive.ptx")])
    subprocess.check_call([NVCC, "-cubin", "-arch=sm_90", SOURCE, "-o",
                           os.path.join(out, "naive.sm_90.cubin")])
    manifest = {"version": 2, "generator": "bench/runtime/make_naive_library.py",
                "kernels": [entry("naive_f16_d64_none", "none", "sdpa_fwd_none"),
                            entry("naive_f16_d64_top_left", "top_left", "sdpa_fwd_causal",
                                  cubin=False),
                            entry("null_f16_d128_none", "none", "sdpa_null", head_dim=128)]}
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)


if __name__ == "__main__":
    main()
