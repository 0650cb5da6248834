#!/usr/bin/env python3
"""Score and mask functions on the GPU (issue 37): ALiBi and document masking
compiled from kernels/functions/*.mlir, against a float64 reference, PyTorch's
math backend and FlexAttention.

    python3 bench/bench_functions.py [--out bench/results/functions] [--library DIR] [--rounds 5]
    python3 bench/bench_functions.py --replot bench/results/functions/functions-bench_<device>_<date>.csv

Correctness: on odd shapes (S not a multiple of the blocks, S_q != S_k for
ALiBi, grouped KV heads), bf16 and f16, D = 128, with and without the causal
mask: the relative L2 error of tiled-attn and of PyTorch's math backend (the
same inputs, the bias and mask as an additive float mask) against float64;
tiled-attn's must be within 2x of PyTorch's (functions-check CSV).

Speed: bf16, D = 128, H = 16, B*S = 16k tokens, S 4096 and 16384, causal and
not; ALiBi, document masking, and PyTorch's attn_mask as a float32 bias and as
a bool mask ([B, 1, S, S], broadcast over the heads; PyTorch's SDPA with the
same attn_mask is timed in place of its plain kernel, and function_gb counts
the bytes of the mask the programs read). Providers, timed in interleaved rounds (CUDA events after a warm-up, the
median of each round's median, random normal inputs): tiled-attn with the
function, tiled-attn without it (the same causal mask: what the function
costs), FlexAttention with the same function (ALiBi as its score_mod; the
document mask as its mask_mod with a block mask built from it, which skips
whole blocks), and PyTorch's SDPA without the function. TFLOP/s count the
pairs the causal mask leaves (4 * B * H * pairs * D), the same for every
provider of a case, so a document mask that skips work shows as more
TFLOP/s. Writes the CSVs and a plot.
"""

from __future__ import annotations

import argparse
import csv
import datetime
import statistics
from pathlib import Path

from common import RESULTS, median_ms, write_csv

DOC_LEN = 1024


def plot(csv_path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    rows = list(csv.DictReader(csv_path.open()))
    cases = list(dict.fromkeys((r["function"], r["mask"], int(r["s"])) for r in rows))
    providers = list(dict.fromkeys(r["provider"] for r in rows))
    fig, ax = plt.subplots(figsize=(max(8, len(cases) * 1.2), 5))
    width = 0.8 / len(providers)
    for i, name in enumerate(providers):
        ys = []
        for case in cases:
            match = [float(r["tflops"]) for r in rows if r["provider"] == name
                     and (r["function"], r["mask"], int(r["s"])) == case]
            ys.append(match[0] if match else 0.0)
        ax.bar([x + i * width for x in range(len(cases))], ys, width, label=name)
    ax.set_xticks([x + 0.4 - width / 2 for x in range(len(cases))])
    ax.set_xticklabels([f"{f}\n{m} {s // 1024}k" for f, m, s in cases], fontsize=7)
    ax.set_ylabel("TFLOP/s (pairs the causal mask leaves)")
    ax.set_title(f"score and mask functions, bf16 D128: {rows[0]['device']}, {rows[0]['date']}")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(csv_path.with_suffix(".png"), dpi=110)
    print(f"wrote {csv_path.with_suffix('.png')}")


def alibi_slopes(torch, h: int):
    return torch.tensor([2.0 ** (-8.0 * (i + 1) / h) for i in range(h)], device="cuda",
                        dtype=torch.float32)


def document_ids(torch, b: int, s: int, generator):
    """[B, S] int32 ids of documents of about DOC_LEN tokens (512 to 1536)."""
    rows = []
    for _ in range(b):
        ids, doc = [], 0
        while len(ids) < s:
            n = int(torch.randint(DOC_LEN // 2, DOC_LEN * 3 // 2, (1,), generator=generator))
            ids += [doc] * n
            doc += 1
        rows.append(ids[:s])
    return torch.tensor(rows, device="cuda", dtype=torch.int32)


def bias_and_mask(torch, b, h, s_q, s_k, causal, slopes, docs, prefix=None):
    """The additive float64 bias [B|1, H|1, S_q, S_k] (ALiBi) and bool mask
    (causal, document) the functions compute, as PyTorch's attn_mask sees them."""
    i = torch.arange(s_q, device="cuda").view(s_q, 1)
    j = torch.arange(s_k, device="cuda").view(1, s_k)
    bias = torch.zeros(1, 1, s_q, s_k, device="cuda", dtype=torch.float64)
    if slopes is not None:
        bias = slopes.double().view(1, h, 1, 1) * (j - i).double()
    keep = torch.ones(1, 1, s_q, s_k, device="cuda", dtype=torch.bool)
    if causal:
        keep = keep & (j <= i)
    if docs is not None:
        # The query's document: its own position's id (0 past S_k, as the
        # function's read outside the tensor gives).
        padded = torch.cat([docs, torch.zeros(b, max(0, s_q - s_k), dtype=docs.dtype,
                                              device="cuda")], 1)
        keep = keep & (padded[:, :s_q].view(b, 1, s_q, 1) == docs.view(b, 1, 1, s_k))
    if prefix is not None:
        keep = keep & ((j < prefix.view(b, 1, 1, 1)) | (j <= i))
    return bias, keep


def reference(torch, q, k, v, scale, bias, keep):
    g = q.shape[1] // k.shape[1]
    k, v = k.repeat_interleave(g, 1).double(), v.repeat_interleave(g, 1).double()
    s = (q.double() @ k.transpose(-1, -2)) * scale + bias
    s = s.masked_fill(~keep, float("-inf"))
    p = torch.softmax(s, -1).nan_to_num(0.0)
    return p @ v


def compare(torch, F, out, q, k, v, bias, keep, rows, case):
    """Appends to ``rows`` the relative L2 errors, against float64, of ``out``
    and of PyTorch's math backend on the same inputs with the same bias and
    mask (the causal one folded in: the math backend takes no attn_mask with
    is_causal), and whether ``out``'s is within 2x of PyTorch's."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    b, h, s_q, s_k = q.shape[0], q.shape[1], q.shape[2], k.shape[2]
    ref = reference(torch, q, k, v, q.shape[-1] ** -0.5, bias, keep)
    additive = bias.masked_fill(~keep, float("-inf")).to(q.dtype)
    with sdpa_kernel(SDPBackend.MATH):
        theirs = F.scaled_dot_product_attention(
            q, k, v, attn_mask=additive.expand(b, h, s_q, s_k), enable_gqa=True)
    theirs = theirs.double().nan_to_num(0.0)

    def err(x):
        return ((x.double() - ref).norm() / ref.norm()).item()
    ours, torch_err = err(out), err(theirs)
    ok = ours <= 2 * torch_err
    rows.append({**case, "dtype": str(q.dtype).replace("torch.", ""), "b": b, "h": h,
                 "h_kv": k.shape[1], "s_q": s_q, "s_k": s_k, "d": q.shape[-1],
                 "tiled_attn_rel_l2": f"{ours:.3e}", "pytorch_math_rel_l2": f"{torch_err:.3e}",
                 "ratio": f"{ours / torch_err:.2f}", "pass": ok})
    print(f"{rows[-1]['dtype']} {case['function']} causal={case['causal']} {b}x{h}/"
          f"{k.shape[1]} {s_q}x{s_k}: ours {ours:.2e} torch {torch_err:.2e} "
          f"{'PASS' if ok else 'FAIL'}")


def check(torch, F, sdpa, library, rows, device, date):
    """The score and mask functions against float64 and the math backend, at
    the head dims the library has ALiBi kernels of: at D = 128 every case, at
    the others one case of each function."""
    gen = torch.Generator().manual_seed(0)
    cases = [("alibi", 2, 8, 4, 333, 1000), ("alibi", 1, 8, 2, 1000, 1000),
             ("document", 2, 8, 4, 777, 777), ("document", 1, 8, 8, 1000, 1000),
             ("alibi+document", 2, 8, 4, 777, 777), ("prefix_lm", 3, 8, 4, 777, 777)]
    head_dims = sorted({k.head_dim for k in library.kernels if k.score_function == "alibi"})
    runs = [(d, case) for d in head_dims for case in cases
            if d == 128 or case in (cases[0], cases[2], cases[5])]
    for dtype in (torch.bfloat16, torch.float16):
        for d, (function, b, h, h_kv, s_q, s_k) in runs:
            for causal in ((False,) if function in ("alibi+document", "prefix_lm")
                           else (False, True)):
                q = torch.randn(b, h, s_q, d, device="cuda", dtype=dtype)
                k = torch.randn(b, h_kv, s_k, d, device="cuda", dtype=dtype)
                v = torch.randn(b, h_kv, s_k, d, device="cuda", dtype=dtype)
                slopes = alibi_slopes(torch, h) if "alibi" in function else None
                docs = document_ids(torch, b, s_k, gen) if "document" in function else None
                prefix = (torch.randint(0, s_k, (b,), generator=gen).to(torch.int32).cuda()
                          if function == "prefix_lm" else None)
                kwargs = {}
                if slopes is not None:
                    kwargs.update(score_mod="alibi", score_mod_args=(slopes,))
                if docs is not None:
                    kwargs.update(mask_mod="document", mask_mod_args=(docs,))
                if prefix is not None:
                    kwargs.update(mask_mod="prefix_lm", mask_mod_args=(prefix,))
                out = sdpa(q, k, v, is_causal=causal, enable_gqa=True, library=library,
                           **kwargs)
                bias, keep = bias_and_mask(torch, b, h, s_q, s_k, causal, slopes, docs, prefix)
                compare(torch, F, out, q, k, v, bias, keep, rows,
                        {"device": device, "date": date,
                         "function": function + ("" if d == 128 else f" D={d}"),
                         "causal": causal})


def check_attn_mask(torch, F, sdpa, library, rows, device, date):
    """PyTorch's attn_mask (the bias score function and the mask mask
    function): float and bool masks, broadcast over the batch or the heads,
    against float64 and the math backend, at every head dim the library has
    mask kernels of."""
    head_dims = sorted({k.head_dim for k in library.kernels if k.mask_function == "mask"})
    for d, dtype in ((d, t) for d in head_dims for t in (torch.bfloat16, torch.float16)):
        if d != 128:
            # Other head dims: one float and one bool mask, causal or not.
            shapes = (("float", (2, 1, 333, 1000)), ("bool", (2, 1, 1, 1000)))
        else:
            shapes = (("float", (2, 1, 333, 1000)), ("float", (1, 8, 333, 1000)),
                      ("bool", (333, 1000)), ("bool", (2, 1, 1, 1000)))
        for kind, shape in shapes:
            for causal in (False, True):
                b, h, h_kv, s_q, s_k = 2, 8, 4, 333, 1000
                q = torch.randn(b, h, s_q, d, device="cuda", dtype=dtype)
                k = torch.randn(b, h_kv, s_k, d, device="cuda", dtype=dtype)
                v = torch.randn(b, h_kv, s_k, d, device="cuda", dtype=dtype)
                if kind == "float":
                    mask = torch.randn(shape, device="cuda", dtype=dtype)
                    bias = mask.double().expand(b, h, s_q, s_k)
                    keep = torch.ones(1, 1, 1, 1, dtype=torch.bool, device="cuda")
                else:
                    mask = torch.rand(shape, device="cuda") > 0.3
                    mask[..., 0] = True  # every query sees a key
                    bias = torch.zeros(1, 1, 1, 1, dtype=torch.float64, device="cuda")
                    keep = mask.expand(b, h, s_q, s_k)
                if causal:
                    i = torch.arange(s_q, device="cuda").view(s_q, 1)
                    j = torch.arange(s_k, device="cuda").view(1, s_k)
                    keep = keep & (j <= i)
                out = sdpa(q, k, v, mask, is_causal=causal, enable_gqa=True, library=library)
                compare(torch, F, out, q, k, v, bias, keep, rows,
                        {"device": device, "date": date,
                         "function": f"attn_mask {kind} {list(shape)}"
                                     + ("" if d == 128 else f" D={d}"), "causal": causal})


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, default=RESULTS / "functions",
                   help="results folder (default: bench/results/functions)")
    p.add_argument("--library", type=Path, default=None,
                   help="kernel library folder (default: $TILED_ATTN_KERNELS or build/kernels)")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--functions", default="alibi,document,bias,mask",
                   help="the functions to time, of alibi, document, bias (a float32 "
                        "attn_mask), bias16 (a bf16 one, q's dtype) and mask (a bool "
                        "attn_mask)")
    p.add_argument("--check-only", action="store_true",
                   help="run the correctness checks only (functions-check CSV)")
    p.add_argument("--replot", type=Path, default=None, metavar="CSV",
                   help="re-draw the PNG of a CSV this script wrote (next to it), and stop")
    args = p.parse_args()
    if args.replot:
        plot(args.replot)
        return 0
    import torch
    import torch.nn.functional as F
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention
    from tiled_attn import KernelLibrary, sdpa

    torch.manual_seed(0)
    library = KernelLibrary.load(args.library)
    device = torch.cuda.get_device_name()
    date = datetime.date.today().isoformat()
    checks: list = []
    check(torch, F, sdpa, library, checks, device, date)
    check_attn_mask(torch, F, sdpa, library, checks, device, date)
    write_csv(args.out, "functions-check", device, date, checks)
    if args.check_only:
        return 0 if all(r["pass"] for r in checks) else 1

    rows = []
    gen = torch.Generator().manual_seed(1)
    h, d = 16, 128
    for function in args.functions.split(","):
        for causal in (False, True):
            for s in (4096, 16384):
                b = 16384 // s
                q = torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16)
                k = torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16)
                v = torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16)
                slopes = alibi_slopes(torch, h)
                docs = document_ids(torch, b, s, gen)
                torch._dynamo.reset()
                flex = torch.compile(flex_attention, dynamic=False)

                def alibi_mod(score, b_, h_, i, j):
                    return score + slopes[h_] * (j - i)

                def doc_mask(b_, h_, i, j):
                    same = docs[b_, i] == docs[b_, j]
                    return (same & (j <= i)) if causal else same

                def causal_mask(b_, h_, i, j):
                    return j <= i

                # PyTorch's attn_mask, one per batch entry broadcast over the
                # heads: a float32 bias (the bias kernels read it as it is)
                # and a bool mask hiding a tenth of the pairs at random (the
                # mask kernels read its bytes).
                tensor = None
                if function == "bias":
                    tensor = torch.randn(b, 1, s, s, device="cuda", dtype=torch.float32)
                elif function == "bias16":
                    # of q's dtype, as transformers builds its masks: the
                    # bias_bf16 kernels read it as it is
                    tensor = torch.randn(b, 1, s, s, device="cuda", dtype=torch.bfloat16)
                elif function == "mask":
                    tensor = torch.rand(b, 1, s, s, device="cuda") > 0.1
                    tensor[..., 0] = True

                def bias_mod(score, b_, h_, i, j):
                    return score + tensor[b_, 0, i, j]

                def tensor_mask(b_, h_, i, j):
                    keep = tensor[b_, 0, i, j]
                    return (keep & (j <= i)) if causal else keep

                if function == "alibi":
                    block = create_block_mask(causal_mask, None, None, s, s,
                                              device="cuda") if causal else None
                    ours = dict(score_mod="alibi", score_mod_args=(slopes,))
                    theirs = dict(score_mod=alibi_mod, block_mask=block)
                elif function == "document":
                    block = create_block_mask(doc_mask, b, None, s, s, device="cuda")
                    ours = dict(mask_mod="document", mask_mod_args=(docs,))
                    theirs = dict(block_mask=block)
                elif function in ("bias", "bias16"):
                    block = create_block_mask(causal_mask, None, None, s, s,
                                              device="cuda") if causal else None
                    ours = dict(attn_mask=tensor)
                    theirs = dict(score_mod=bias_mod, block_mask=block)
                else:
                    block = create_block_mask(tensor_mask, b, None, s, s, device="cuda")
                    ours = dict(attn_mask=tensor)
                    theirs = dict(block_mask=block)
                pairs = s * (s + 1) // 2 if causal else s * s
                flops = 4 * b * h * pairs * d
                providers = {
                    f"tiled-attn {function}": lambda: sdpa(q, k, v, is_causal=causal,
                                                           library=library, **ours),
                    "tiled-attn plain": lambda: sdpa(q, k, v, is_causal=causal,
                                                     library=library),
                    f"FlexAttention {function}": lambda: flex(q, k, v, **theirs),
                    "PyTorch SDPA plain": lambda: F.scaled_dot_product_attention(
                        q, k, v, is_causal=causal),
                }
                if tensor is not None:
                    # PyTorch's SDPA with the same attn_mask (causal folded
                    # into it: SDPA takes one or the other).
                    i_ = torch.arange(s, device="cuda").view(s, 1)
                    j_ = torch.arange(s, device="cuda").view(1, s)
                    theirs_mask = tensor
                    if causal:
                        theirs_mask = (tensor.masked_fill(j_ > i_, float("-inf"))
                                       if function != "mask" else tensor & (j_ <= i_))
                    providers["PyTorch SDPA attn_mask"] = (
                        lambda: F.scaled_dot_product_attention(
                            q, k, v, theirs_mask if function == "mask"
                            else theirs_mask.to(q.dtype)))
                    del providers["PyTorch SDPA plain"]
                # The bytes of the function's tensor each program reads:
                # every head reads its batch entry's mask (the pairs the
                # causal mask leaves, in whole blocks: about half).
                extra_bytes = 0 if tensor is None else (
                    b * h * pairs * tensor.element_size())
                mine = providers[f"tiled-attn {function}"]().double()
                flex_out = providers[f"FlexAttention {function}"]().double()
                diff = ((mine - flex_out).norm() / flex_out.norm()).item()
                assert diff < 2e-2, f"{function} differs from FlexAttention: {diff}"
                times = {n: [] for n in providers}
                for r in range(args.rounds):
                    for n in (list(providers) if r % 2 == 0 else list(providers)[::-1]):
                        times[n].append(median_ms(providers[n], 5, 20))
                for n, ts in times.items():
                    ms = statistics.median(ts)
                    rows.append({"device": device, "date": date, "dtype": "bfloat16", "d": d,
                                 "function": function, "mask": "causal" if causal else "none",
                                 "s": s, "b": b, "h": h, "provider": n,
                                 "median_ms": f"{ms:.4f}", "tflops": f"{flops / ms / 1e9:.1f}",
                                 "function_gb": f"{extra_bytes / 1e9:.3f}",
                                 "function_gbps": f"{extra_bytes / ms / 1e6:.0f}",
                                 "spread_ms": f"{max(ts) - min(ts):.4f}",
                                 "vs_flex_rel_l2": f"{diff:.2e}"})
                    print(f"{function} {'causal' if causal else 'none'} S={s}: {n}: "
                          f"{ms:.3f} ms, {flops / ms / 1e9:.1f} TFLOP/s")
    path = write_csv(args.out, "functions-bench", device, date, rows)
    plot(path)
    return 0 if all(r["pass"] for r in checks) else 1


if __name__ == "__main__":
    raise SystemExit(main())
