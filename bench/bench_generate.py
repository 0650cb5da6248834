#!/usr/bin/env python3
"""transformers' generate() through tiled_attn against its SDPA path: decode
time per token (issue 38's target: at least as good as SDPA's).

    python3 bench/bench_generate.py [--out bench/results/decode] [--quick]
    python3 bench/bench_generate.py --replot bench/results/decode/generate_<device>_<date>.csv

A Llama of random weights built from a config (nothing is downloaded): 8
layers, hidden 2048, 16 query heads on 4 KV heads, head dim 128, vocabulary
32000, bf16. A 2048-token prompt at batch 1, 8 and 32, greedy, with the
dynamic and the static KV cache. Decode time per token is the difference of
generate() with 72 and 8 new tokens (so the prefill cancels), divided by 64;
each implementation's median of --rounds interleaved rounds (CUDA-synchronized
wall time: generate() is host-driven). Writes generate_<device>_<date>.csv and
a plot.
"""

from __future__ import annotations

import argparse
import datetime
import statistics
import sys
import time
from pathlib import Path

IMPLEMENTATIONS = ("sdpa", "tiled_attn")


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "results" / "decode")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--caches", nargs="+", default=["dynamic", "static"])
    p.add_argument("--replot", type=Path, default=None)
    return p.parse_args()


def plot(csv_path: Path) -> None:
    import csv
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = list(csv.DictReader(csv_path.open()))
    cells = sorted({(r["cache"], int(r["batch"])) for r in rows})
    fig, ax = plt.subplots(figsize=(8, 4))
    width = 0.38
    for i, impl in enumerate(IMPLEMENTATIONS):
        values = [next((float(r["ms_per_token"]) for r in rows
                        if (r["cache"], int(r["batch"])) == c and r["implementation"] == impl
                        and r["ms_per_token"] != "nan"), 0.0) for c in cells]
        ax.bar([x + i * width for x in range(len(cells))], values, width, label=impl)
    ax.set_xticks([x + width / 2 for x in range(len(cells))])
    ax.set_xticklabels([f"{cache}\nB={b}" for cache, b in cells])
    ax.set_ylabel("ms per decode step (lower is better)")
    ax.set_title(f"generate(), Llama 8x2048, 16/4 heads, D=128, 2k prompt ({csv_path.stem.split('_', 1)[1]})",
                 fontsize=9)
    ax.legend()
    fig.tight_layout()
    fig.savefig(csv_path.with_suffix(".png"), dpi=120)
    print(f"wrote {csv_path.with_suffix('.png')}")


def main() -> int:
    args = parse_args()
    if args.replot:
        plot(args.replot)
        return 0
    import torch
    import transformers
    from packaging.version import Version
    from transformers import AutoModelForCausalLM, LlamaConfig

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from common import short_reason, try_plot, write_csv
    import tiled_attn.integrations.transformers as ta_tf

    ta_tf.register()
    dtype_key = "dtype" if Version(transformers.__version__) >= Version("4.56") else "torch_dtype"
    config = LlamaConfig(vocab_size=32000, hidden_size=2048, intermediate_size=5632,
                         num_hidden_layers=8, num_attention_heads=16, num_key_value_heads=4,
                         head_dim=128, max_position_embeddings=4096, pad_token_id=0,
                         bos_token_id=1, eos_token_id=2)
    torch.manual_seed(0)
    with torch.device("cuda"):
        model = AutoModelForCausalLM.from_config(config, attn_implementation="sdpa",
                                                 **{dtype_key: torch.bfloat16}).eval()
    batches = (1, 8) if args.quick else (1, 8, 32)
    rows = []
    for cache in args.caches:
        for batch in batches:
            gen = torch.Generator(device="cuda").manual_seed(batch)
            prompt = torch.randint(3, 32000, (batch, 2048), device="cuda", generator=gen)

            def generate(impl: str, new: int):
                ta_tf.set_attn_implementation(model, impl)
                kwargs = dict(attention_mask=torch.ones_like(prompt), max_new_tokens=new,
                              min_new_tokens=new, do_sample=False, pad_token_id=0)
                if cache == "static":
                    kwargs["cache_implementation"] = "static"
                torch.cuda.synchronize()
                start = time.perf_counter()
                with torch.no_grad():
                    out = model.generate(prompt, **kwargs)
                torch.cuda.synchronize()
                return time.perf_counter() - start, out

            times = {impl: [] for impl in IMPLEMENTATIONS}
            notes = {}
            tokens_agree = ""
            for round_ in range(args.rounds + 1):  # the first round warms up
                outs = {}
                for impl in IMPLEMENTATIONS:
                    if impl in notes:
                        continue
                    try:
                        short, _ = generate(impl, 8)
                        long_, outs[impl] = generate(impl, 72)
                        if round_:
                            times[impl].append((long_ - short) / 64 * 1e3)
                    except Exception as exc:  # an implementation that refuses
                        notes[impl] = short_reason(exc)
                if len(outs) == 2:
                    tokens_agree = f"{(outs['sdpa'] == outs['tiled_attn']).float().mean().item():.3f}"
            for impl in IMPLEMENTATIONS:
                ms = statistics.median(times[impl]) if times[impl] else float("nan")
                rows.append(dict(cache=cache, batch=batch, prompt=2048, implementation=impl,
                                 ms_per_token=f"{ms:.3f}", tokens_agree=tokens_agree,
                                 note=notes.get(impl, "")))
                print(rows[-1], flush=True)
    device = torch.cuda.get_device_name()
    path = write_csv(args.out, "generate", device, datetime.date.today().isoformat(), rows)
    try_plot(plot, path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
