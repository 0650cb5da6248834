"""Helpers shared by the GPU scripts: CUDA-event timing of back-to-back runs,
the float64 reference, the results folder and the CSV writer.

The scripts import it as a sibling module (Python puts a script's folder on
sys.path); `tiled_attn` comes from the installed wheel or PYTHONPATH=python
(see bench/README.md)."""
from __future__ import annotations

import csv
import math
import re
import statistics
import time
from pathlib import Path

import torch

#: bench/results: each script writes into its topic's folder below it.
RESULTS = Path(__file__).resolve().parent / "results"


def sleep_cycles_per_ms() -> float | None:
    """GPU clock cycles per ms of torch.cuda._sleep, to give the host a head start."""
    if not hasattr(torch.cuda, "_sleep"):
        return None
    torch.cuda._sleep(1000)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    torch.cuda._sleep(10_000_000)
    end.record()
    end.synchronize()
    return 10_000_000 / max(start.elapsed_time(end), 1e-3)


def time_fn(fn, sets, warmup: int, iters: int, cycles_per_ms: float | None):
    """(median, min, max) ms of fn over the rotating input sets, by CUDA events.

    The first call (module load, JIT) is outside the warm-up's host timing; the
    host cost per call measured there sizes a GPU sleep queued before the timed
    runs, so that they run back to back and each event pair brackets GPU work only.
    """
    fn(*sets[0])
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for i in range(warmup):
        fn(*sets[i % len(sets)])
    host_ms = (time.perf_counter() - t0) * 1e3 / warmup
    torch.cuda.synchronize()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
    if cycles_per_ms:
        torch.cuda._sleep(int(cycles_per_ms * min(200.0, 1.5 * host_ms * iters + 1.0)))
    for i in range(iters):
        args = sets[i % len(sets)]
        starts[i].record()
        fn(*args)
        ends[i].record()
    torch.cuda.synchronize()
    times = sorted(s.elapsed_time(e) for s, e in zip(starts, ends))
    return statistics.median(times), times[0], times[-1]


_CYCLES_PER_MS = []


def median_ms(fn, warmup=5, reps=30):
    """Median time of fn() in ms: time_fn on one input set, the GPU sleep
    calibrated once per process."""
    if not _CYCLES_PER_MS:
        _CYCLES_PER_MS.append(sleep_cycles_per_ms())
    return time_fn(lambda: fn(), [()], warmup, reps, _CYCLES_PER_MS[0])[0]


def grid_cases(dtypes, head_dims, causals, seqs):
    """The benchmark grid (B*S = 16384 tokens, H*D = 2048): yields
    (dtype, D, causal, S, q, k, v, flops) on fresh random normal inputs;
    causal counts half the FLOPs."""
    for dt in dtypes:
        for d in head_dims:
            for causal in causals:
                for s in seqs:
                    h, b = 2048 // d, max(1, 16384 // s)
                    q, k, v = (torch.randn(b, h, s, d, device="cuda", dtype=dt) for _ in range(3))
                    flops = 4 * b * h * s * s * d / (2 if causal else 1)
                    yield dt, d, causal, s, q, k, v, flops


def reference(q, k, v, causal):
    """softmax(q k^T / sqrt(D) [+ top-left causal mask]) v in float64."""
    s = q.double() @ k.double().transpose(-1, -2) / math.sqrt(q.shape[-1])
    if causal:
        mask = torch.ones(s.shape[-2:], dtype=torch.bool, device=s.device).tril()
        s = s.masked_fill(~mask, float("-inf"))
    return torch.softmax(s, -1) @ v.double()


def rel_l2(out, ref):
    return ((out.double() - ref).norm() / ref.norm()).item()


def device_slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def write_csv(out_dir, stem: str, device: str, date: str, rows: list[dict]):
    """Writes `rows` to <out_dir>/<stem>_<device slug>_<date>.csv, the header
    from the first row's keys, and returns the path."""
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{stem}_{device_slug(device)}_{date}.csv"
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    print(f"wrote {path}")
    return path


def grouped_bars(csv_path, series: str, ylabel: str, title: str, group: str = "case"):
    """A bar chart of a CSV this package wrote: TFLOP/s (the ``tflops``
    column) of each ``series`` value side by side within each ``group``
    value, saved next to the CSV as a PNG; returns its path."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    rows = list(csv.DictReader(Path(csv_path).open()))
    groups = list(dict.fromkeys(r[group] for r in rows))
    names = list(dict.fromkeys(r[series] for r in rows))
    fig, ax = plt.subplots(figsize=(9, 4.5))
    width = 0.8 / len(names)
    for i, name in enumerate(names):
        # (A series without a group, such as an A/B build of some head
        # dims only, has no bar there.)
        ys = [next((float(r["tflops"]) for r in rows
                    if r[group] == g and r[series] == name), float("nan"))
              for g in groups]
        ax.bar([x + i * width for x in range(len(groups))], ys, width, label=name)
    ax.set_xticks([x + 0.4 - width / 2 for x in range(len(groups))])
    ax.set_xticklabels(groups, fontsize=7)
    ax.set_ylabel(ylabel)
    ax.set_title(f"{title}: {rows[0]['device']}, {rows[0]['date']}", fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    out = Path(csv_path).with_suffix(".png")
    fig.savefig(out, dpi=120)
    print(f"wrote {out}")
    return out


def try_plot(plot, csv_path) -> None:
    """plot(csv_path), or a note when matplotlib is missing (the CSV stands;
    the script's --replot draws it later)."""
    try:
        plot(csv_path)
    except ImportError:
        print("matplotlib missing: no plot (--replot later)")


def interleaved(calls: dict, rounds: int, time_one, catch: bool = True):
    """Times each of ``calls`` (name -> what ``time_one`` times) once per round,
    the calls taking turns, so that drift hits them all alike: returns each
    name's list of times and, with ``catch``, the reason of each call that
    raised (a backend that refuses the shape), which is timed no more."""
    times = {name: [] for name in calls}
    notes = {}
    for _ in range(rounds):
        for name, call in calls.items():
            if name in notes:
                continue
            try:
                times[name].append(time_one(call))
            except Exception as exc:  # noqa: BLE001
                if not catch:
                    raise
                notes[name] = short_reason(exc)
    return times, notes


def short_reason(exc: BaseException, limit: int = 240) -> str:
    text = f"{type(exc).__name__}: {' '.join(str(exc).split())}"
    return text if len(text) <= limit else text[:limit - 3] + "..."
