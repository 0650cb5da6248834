#!/usr/bin/env python3
"""Deterministic mutation-and-option fuzzer of tiled-attn's three tools.

Issue 17, item 4. The fuzzer runs tiled-attn-opt, tiled-attn-run and
tiled-attn-compile on mutated inputs and random options and reports every
run that crashes, hangs or runs out of memory, each distinct cause once,
with a reduced reproducer. A bad input must end in a diagnostic and exit
status 1 (tiled-attn-run: 1 for a failed comparison, 2 for a bad input),
never in a signal, an abort, an LLVM ERROR, an assertion, a timeout or an
out-of-memory kill.

Usage (the tools of a build, the sources of this checkout):

  python3 test/Fuzz/fuzz.py --bin-dir=build/bin                 # CI mode
  python3 test/Fuzz/fuzz.py --bin-dir=build/bin --cases=20000 \\
      --time-budget=3600 --out=/tmp/fuzz-report                 # long mode
  python3 test/Fuzz/fuzz.py --bin-dir=build/bin --seed=7 --only=1234 -v

Modes:
  CI mode (the defaults; test/Fuzz/fuzz.test): --seed=1 --cases=800
    --jobs=2, about 2-3 minutes on a 2-core machine.
  Long mode: --cases=20000 (or more) with a --time-budget, any --seed; the
    seed and the count fully determine the cases, so a failure found at
    case I of seed S is replayed by `--seed=S --only=I -v`.

What a case is: one run of one tool in a fresh temporary folder, under
RLIMIT_AS (--mem-limit-mb) and a timeout (--timeout). Case I of seed S is
drawn from random.Random("S/I") alone, never from the clock. Its inputs:
  - seeds: the lit tests' .mlir files (RUN and CHECK lines removed, split
    on `// -----`), their RUN lines' options, the JSON specs that the .test
    files hold, examples/sdpa_fwd.mlir, kernels made at start-up by
    tiled-attn-opt --tile-generate-sdpa, and the .tile.mlir and .gpu.mlir
    that tiled-attn-compile --keep-ir writes for D=64 kernels of sm_80,
    sm_90a and sm_100a (no cubins);
  - text mutations that need no parser: integer literals and attribute
    parameters set to boundary values, tensor/view/memref shapes changed,
    element types and keywords swapped, lines deleted, duplicated, swapped
    or spliced from another seed, the text truncated, characters dropped or
    inserted;
  - options: the passes and pipelines that `tiled-attn-opt --help` lists
    with their options (parsed at start-up), random argument lists of
    tiled-attn-run and tiled-attn-compile, with boundary values, empty
    values, unknown keys, and braces, quotes and commas in values; spec
    files and manifest.json files mutated as JSON and as text.

Classification: OK is an exit status the tool uses for errors (0 or 1;
tiled-attn-run also 2) without a crash marker. CRASH is a signal, another
exit status, or output with "LLVM ERROR", "PLEASE submit a bug report",
"Stack dump", "Assertion `", "terminate called", "UNREACHABLE",
"Segmentation fault" or "AddressSanitizer". OOM is std::bad_alloc or "out
of memory" (RLIMIT_AS turns a blow-up into one). SILENT is an error exit
with no output at all. HANG is a run past --timeout; the fuzzer then sends
SIGQUIT, so that LLVM prints where it was, and runs it again alone with
twice the timeout: one that then finishes is reported as slow (the load of
the machine), not as a failure.

Causes: failures are grouped by a signature: the first LLVM ERROR,
assertion, UNREACHABLE or uncaught exception line, else the signal or exit
status, with the innermost frame of the tool's own code (else of upstream
code) and the innermost pass of the stack dump (llvm-symbolizer on PATH
names them); a hang by its tool and innermost pass. Each cause is reduced
(options dropped one at a time, then the items of option strings,
then, in each input file, comments, the tail past the shortest failing
prefix, line-level delta debugging, regions and lines from the bottom up,
and token-level delta debugging) while its signature stays the same, and
its reproducer, a command and its files, is printed and written under
--out (cause-NN/: repro.sh, the input files, output.txt).

Exit status: 0 when no case crashed, hung or ran out of memory, 1
otherwise; the last line reads
  fuzz: N cases (seed S), K failures in D distinct causes

stdlib only (Python 3.8+). test/Fuzz/README.md says how to read a report
and how to turn a cause into a regression test.
"""

import argparse
import json
import os
import random
import re
import resource
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from multiprocessing import Pool

TOOLS = {
    "opt": "tiled-attn-opt",
    "run": "tiled-attn-run",
    "compile": "tiled-attn-compile",
}
# Exit statuses each tool uses for a diagnosed error.
OK_STATUS = {"opt": (0, 1), "run": (0, 1, 2), "compile": (0, 1)}

INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)
BOUNDARY_INTS = [0, 1, -1, 3, 7, 15, 17, 255, 256, 257, 2**31 - 1, 2**32,
                 2**40, INT64_MAX, INT64_MIN]
MORE_INTS = [2, 4, 8, 16, 32, 48, 64, 80, 96, 128, 176, 192, 512, 1024,
             -2**31, 2**63, 2**64, 10**30]
CHIPS = ["sm_80", "sm_86", "sm_89", "sm_90", "sm_90a", "sm_100a", "sm_100f",
         "sm_120a", "sm_121a"]
BAD_CHIPS = ["sm_75", "SM_80", "gfx90a", "compute_80", "sm_100", "sm_120",
             "sm_103a", "sm_80a", "", "sm_", "sm_99999999999999999999",
             "sm_90a ", "sm_100f,sm_80", "sm_-1", "sm_1000a"]
PTX_FEATURES = ["+ptx80", "+ptx81", "+ptx83", "+ptx85", "+ptx86", "+ptx87",
                "+ptx88", "+ptx90"]
BAD_FEATURES = ["+ptx60", "+ptx99", "ptx80", "", "+ptx", "+ptx91",
                "+ptx1000000000000000000000", "+ptx80,+ptx85", "-ptx80",
                "+sm_80", "+ptx-1", "+ptx8"]
GARBAGE = ["}", "{", "{}", "{{", "}}", ",", "'", '"', '"x', "'x", "=", "==",
           " ", "a b", "\\", "\t", "\u00e9", "x" * 2000, "1e999", "0x10",
           "-0", "+1", "1.5", "nan", "inf", ";", "|", "#", "%s", "<", ">",
           "k=v", "{a=b}", "a,b", "[1]", "\"\"", "''"]
UNKNOWN_KEYS = ["wraps", "chip_", "Chip", "smem_lhs", "block_m", "tile-to-ptx",
                "-", "x" * 100, "help", "1", "chip.x", "{chip"]

# Sane values by option name (opt's pass options, compile's flags).
SANE = {
    "chip": CHIPS, "cubin-chip": CHIPS, "verified-as": CHIPS,
    "family": ["mma_sync", "wgmma", "tcgen05"],
    "features": PTX_FEATURES, "cubin-features": PTX_FEATURES,
    "dtype": ["f16", "bf16"],
    "variant": ["none", "top_left", "bottom_right", "window", "window_lse",
                "window_softcap_lse", "none_varlen", "top_left_softcap",
                "bottom_right_varlen", "window_softcap_lse_varlen"],
    "head-dim": [16, 32, 64, 64, 96, 128, 128, 192, 256],
    "head-dim-v": [0, 0, 64, 128],
    "block-m": [0, 16, 32, 48, 64, 64, 128, 128, 192, 256],
    "block-n": [0, 16, 32, 64, 64, 80, 128, 176, 256],
    "warps": [1, 2, 4, 4, 8, 12],
    "index-bitwidth": [32, 64], "opt-level": [0, 1, 2, 3],
    "stages": [1, 2, 3, 4], "streams": [0, 1, 2],
    "prefetch-streams": [0, 1, 2], "lazy-rescale": [0, 4, 8],
    "threshold": [1, 4, 8, 16], "heavy-first-heads": [0, 1, 2, 4, 16],
    "head-group": [0, 1, 2, 4, 8], "ring-slots": [0, 1, 2, 3, 4],
    "producer-registers": [0, 24, 40, 48],
    "consumer-registers": [0, 160, 176, 232, 240],
    "correction-registers": [0, 48, 56, 96],
    "exp2-poly-every": [0, 1, 4, 8], "simulate-roles": [0, 1, 2],
    "schedules": [1, 2, 4], "max-steps": [100, 10000], "seed": [0, 1, 7],
    "seq-q": [0, 1, 17, 64, 130], "seq-k": [0, 1, 17, 64, 130],
    "block": [0, 1, 2], "name": ["sdpa", "gen", "k"],
    "max-iterations": [1, 10], "max-num-rewrites": [1, 10],
    "region-simplify": ["disabled", "normal", "aggressive"],
    "jobs": [1, 1, 1, 2],
}
BAD_STRINGS = {
    "chip": BAD_CHIPS, "cubin-chip": BAD_CHIPS, "verified-as": BAD_CHIPS,
    "features": BAD_FEATURES, "cubin-features": BAD_FEATURES,
    "family": ["", "mma", "WGMMA", "tcgen06", "mma_sync "],
    "dtype": ["f32", "f8", "i8", "", "F16", "f16 "],
    "variant": ["", "causal", "top_left_top_left", "none_lse_softcap",
                "none+", "none++x", "window_sparse", "none_varlen_sparse",
                "TOP_LEFT", "none+1x", "none+missing_fn", "none_lse_"],
    "name": ["", "1abc", "@x", "a b", "%x", "x" * 300, "sdpa_fwd\"",
             "a.b"],
}

# Passes in the order the pipelines run them (those --help lists are kept).
TILE_ORDER = ["tile-generate-sdpa", "tile-retile", "tile-mask-split",
              "tile-exp2", "tile-lazy-rescale", "tile-heavy-first",
              "tile-hoist-invariants", "tile-prefetch", "tile-defer-pv",
              "tile-early-gathers", "tile-decompose-online-softmax"]
GPU_ORDER = ["tilegpu-attach-target", "tilegpu-assign-layouts",
             "convert-tile-to-tilegpu", "tilegpu-merge-barriers",
             "tilegpu-resolve-async-waits", "tilegpu-allocate-memory",
             "tilegpu-pingpong", "tilegpu-warp-specialize",
             "tilegpu-simulate-roles", "convert-tilegpu-to-nvvm",
             "tilegpu-tensor-map-params",
             "convert-nvgpu-to-nvvm-index-bitwidth",
             "tilegpu-retarget-family"]
PIPELINES = ["tile-schedule", "tile-to-ptx", "tilegpu-to-ptx"]
OPT_GENERIC_FLAGS = ["--split-input-file", "--verify-diagnostics",
                     "--mlir-print-op-generic", "--verify-roundtrip",
                     "--mlir-disable-threading", "--allow-unregistered-dialect",
                     "--canonicalize", "--cse", "--symbol-dce",
                     "--emit-bytecode", "--verify-each=0", "--no-implicit-module",
                     "--mlir-print-debuginfo", "--bogus-flag", "-", "--"]

KEYWORD_GROUPS = [
    ["none", "top_left", "bottom_right", "window"],
    ["x", "y", "z"],
    ["max", "min", "sum"],
    ["mma_sync", "wgmma", "tcgen05", "tmem_lanes"],
    ["true", "false"],
    CHIPS + ["sm_75", "gfx90a"],
    ["addf", "subf", "mulf", "divf", "maximumf", "minimumf"],
    ["addi", "subi", "muli", "divui", "divsi", "ceildivui", "remui", "maxui",
     "minui"],
    ["slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge", "eq", "ne"],
    ["exp", "exp2", "log", "tanh", "sqrt"],
    ["transpose", "in_bounds", "exp2", ""],
    ["base", "size", "stride"],
    ["scf.for", "scf.if", "scf.yield", "scf.while"],
    ["tile.load", "tile.store", "tile.mma", "tile.reduce", "tile.broadcast",
     "tile.iota", "tile.online_softmax", "tile.dim", "tile.block_id"],
]
ELEMENT_TYPES = ["f16", "bf16", "f32", "i1", "i32", "f64", "i8", "i64",
                 "index", "f8E4M3FN"]
ATTR_NAMES = ["block_m", "block_n", "head_dim", "head_dim_v", "warps",
              "stages", "rescale_threshold", "dim", "offset", "slots",
              "size", "bytes", "threads", "rows", "cols", "count", "axis",
              "stage", "group", "lanes", "columns", "swizzle", "index"]
CRASH_MARKERS = ["LLVM ERROR", "PLEASE submit a bug report", "Stack dump:",
                 "Assertion `", "terminate called", "UNREACHABLE",
                 "Segmentation fault", "AddressSanitizer"]
OOM_MARKERS = ["std::bad_alloc", "out of memory", "Cannot allocate memory",
               "Allocation failed"]

RUN_CHECK_LINE = re.compile(
    r"^\s*(//|#|;)\s*[A-Z][A-Z0-9_-]*(-NEXT|-SAME|-LABEL|-NOT|-DAG|-EMPTY|"
    r"-COUNT-\d+)?\s*:")
SPLIT_MARKER = re.compile(r"^// -----\s*$", re.M)

# --------------------------------------------------------------------------
# Tools and their options
# --------------------------------------------------------------------------


def tool_help(path):
    """The --help text of a tool (or an empty string)."""
    try:
        proc = subprocess.run([path, "--help"], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, timeout=60)
        return proc.stdout.decode("utf-8", "replace")
    except (OSError, subprocess.TimeoutExpired):
        return ""


# Options left out: upstream canonicalize's test-only `test-convergence`
# fails the pass without a diagnostic by design.
SKIPPED_OPTIONS = {("canonicalize", "test-convergence")}


def parse_opt_passes(help_text):
    """Passes and pipelines of `tiled-attn-opt --help`: name -> {option: type}.

    Passes sit at 6 spaces, their options at 8 (`--name=<type>`, none for a
    bool), in the "Compiler passes to run" section.
    """
    passes, current, inside = {}, None, False
    for line in help_text.splitlines():
        if "Compiler passes to run" in line:
            inside = True
            continue
        if not inside:
            continue
        if re.match(r"^  --", line):
            break
        m = re.match(r"^      --([\w-]+)\s", line)
        if m:
            current = m.group(1)
            passes[current] = {}
            continue
        m = re.match(r"^        --([\w-]+)(?:=<([\w ]+)>)?\s", line)
        if m and current and (current, m.group(1)) not in SKIPPED_OPTIONS:
            passes[current][m.group(1)] = m.group(2) or "bool"
    return passes


def parse_tool_flags(help_text):
    """Flags of a tool's own categories in --help: name -> type."""
    flags = {}
    for m in re.finditer(r"^  --([\w-]+)(?:=<([\w ]+)>)?\s", help_text, re.M):
        if m.group(1) in ("help", "help-list", "version"):
            continue
        flags[m.group(1)] = m.group(2) or "bool"
    return flags


# --------------------------------------------------------------------------
# Seeds
# --------------------------------------------------------------------------


class Seed:
    """An input file for the tools, with the options its test ran it with."""

    def __init__(self, name, text, opt_args=(), run_args=()):
        self.name = name
        self.text = text
        self.opt_args = list(opt_args)
        self.run_args = list(run_args)
        self.is_tile = "tile.sdpa = #tile.sdpa" in text and "func.func" in text
        self.is_gpu = "tilegpu." in text or "gpu.module" in text


def run_lines(text):
    """RUN lines of a lit test, continuations joined, DEFINEs substituted."""
    defines, lines, pending = {}, [], ""
    for line in text.splitlines():
        m = re.match(r"^\s*(?://|#)?\s*(?:RE)?DEFINE:\s*(%\{[\w-]+\})\s*=\s*(.*)$",
                     line)
        if m:
            defines[m.group(1)] = m.group(2).strip()
            continue
        m = re.match(r"^\s*(?://|#)?\s*RUN:\s?(.*)$", line)
        if not m:
            continue
        body = m.group(1)
        if body.rstrip().endswith("\\"):
            pending += body.rstrip()[:-1] + " "
            continue
        body = pending + body
        pending = ""
        for key, value in defines.items():
            body = body.replace(key, value)
        lines.append(body)
    return lines


def tool_invocations(line, tool):
    """The option lists of each `tool` in one RUN line (no %-paths)."""
    try:
        words = shlex.split(line)
    except ValueError:
        return []
    found, i = [], 0
    while i < len(words):
        if words[i] != tool:
            i += 1
            continue
        args, i = [], i + 1
        while i < len(words) and words[i] not in ("|", "&&", ";", "||"):
            word = words[i]
            i += 1
            if word == "-o":
                i += 1
                continue
            if not word.startswith("-") or "%" in word or word.startswith("2>"):
                continue
            if word in ("-split-input-file", "--split-input-file",
                        "-verify-diagnostics", "--verify-diagnostics"):
                continue
            args.append(word)
        found.append(args)
    return found


def strip_test_lines(text):
    """The test's text without RUN, DEFINE and FileCheck lines."""
    return "\n".join(line for line in text.splitlines()
                     if not RUN_CHECK_LINE.match(line)) + "\n"


def test_seeds(repo):
    """Seeds from test/**/*.mlir, examples/*.mlir and the .test files."""
    seeds, opt_args, run_args, compile_args, specs = [], [], [], [], []
    test_root = os.path.join(repo, "test")
    paths = []
    for root, dirs, files in os.walk(test_root):
        dirs.sort()
        for name in sorted(files):
            if name.endswith((".mlir", ".test")):
                paths.append(os.path.join(root, name))
    for path in paths:
        rel = os.path.relpath(path, repo)
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        file_opt, file_run = [], []
        for line in run_lines(text):
            file_opt += [a for a in tool_invocations(line, "tiled-attn-opt") if a]
            file_run += [a for a in tool_invocations(line, "tiled-attn-run") if a]
            compile_args += [a for a in tool_invocations(line, "tiled-attn-compile")
                             if a]
        opt_args += file_opt
        run_args += file_run
        if path.endswith(".test"):
            for m in re.finditer(r"^#--- ([\w.-]+\.json)\n(.*?)(?=^#--- |\Z)",
                                 text, re.M | re.S):
                specs.append((rel + ":" + m.group(1), m.group(2)))
            continue
        for i, chunk in enumerate(SPLIT_MARKER.split(strip_test_lines(text))):
            body = "\n".join(l for l in chunk.splitlines()
                             if not l.strip().startswith("//"))
            if body.strip():
                seeds.append(Seed("%s#%d" % (rel, i), chunk.strip() + "\n",
                                  file_opt, file_run))
    example = os.path.join(repo, "examples", "sdpa_fwd.mlir")
    if os.path.exists(example):
        with open(example, encoding="utf-8") as f:
            seeds.append(Seed("examples/sdpa_fwd.mlir", f.read()))
    return seeds, opt_args, run_args, compile_args, specs


GENERATED_TILE = [
    "head-dim=64 variant=top_left",
    "head-dim=64 dtype=bf16 block-m=32 block-n=16 variant=window_softcap_lse",
    "head-dim=32 block-m=32 block-n=16 variant=bottom_right_varlen",
    "head-dim=192 head-dim-v=128 block-m=64 block-n=32",
    "head-dim=128 block-m=128 block-n=64 variant=top_left",
]
GENERATED_SCHEDULE = "exp2=1 lazy-rescale=8 lazy-rescale-guard=0 mask-split=1 " \
                     "stages=2 refill-after-use=1"
GENERATED_COMPILE = [
    ["--head-dim=64", "--variant=top_left", "--block-m=64", "--block-n=64",
     "--schedule=exp2=1 mask-split=1 stages=2 refill-after-use=1",
     "--lowering=chip=sm_80 warps=4 skip-unit-row-scales=1"],
    ["--head-dim=64", "--variant=window_lse", "--block-m=64", "--block-n=64",
     "--schedule=exp2=1 mask-split=1 stages=2",
     "--lowering=chip=sm_90a warps=4"],
    ["--head-dim=64", "--block-m=256", "--block-n=128",
     "--schedule=exp2=1 lazy-rescale=8 lazy-rescale-guard=0 stages=2",
     "--lowering=chip=sm_100a warps=8 warp-specialize=1 ring-slots=2 "
     "mma-warp=1 p-over-s=1 correction=1 producer-registers=48 "
     "consumer-registers=160 correction-registers=56"],
]


def generated_seeds(tools, work):
    """Kernels made at start-up: generator output and compile --keep-ir."""
    seeds = []
    empty = os.path.join(work, "empty.mlir")
    with open(empty, "w") as f:
        f.write("module {\n}\n")
    for i, config in enumerate(GENERATED_TILE):
        for schedule in ("", GENERATED_SCHEDULE):
            argv = [tools["opt"], empty, "--tile-generate-sdpa=" + config]
            if schedule:
                argv.append("--tile-schedule=" + schedule)
            proc = subprocess.run(argv, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, timeout=120)
            lower = [["--tile-to-ptx=chip=" + chip] for chip in
                     ("sm_80", "sm_90a", "sm_120a")]
            if proc.returncode == 0:
                seeds.append(Seed("generated:%s%s" % (
                    config, " | " + schedule if schedule else ""),
                    proc.stdout.decode(), [["--tile-schedule=" +
                                            GENERATED_SCHEDULE]] + lower))
    for i, args in enumerate(GENERATED_COMPILE):
        out = os.path.join(work, "kernels%d" % i)
        subprocess.run([tools["compile"]] + args + ["--keep-ir", "--jobs=1",
                                                    "--out-dir=" + out],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       timeout=300)
        if not os.path.isdir(out):
            continue
        for name in sorted(os.listdir(out)):
            lowering = args[-1].split("=", 1)[1]
            chip = lowering.split()[0]
            how = ["--tile-to-ptx=" + lowering] if name.endswith(".tile.mlir") \
                else ["--tilegpu-to-ptx=" + chip]
            if name.endswith((".tile.mlir", ".gpu.mlir")):
                with open(os.path.join(out, name)) as f:
                    seeds.append(Seed("compile --keep-ir:" + name, f.read(),
                                      [how]))
            elif name == "manifest.json":
                with open(os.path.join(out, name)) as f:
                    seeds.append(Seed("manifest:" + str(i),
                                      without_timings(f.read())))
    return seeds


def without_timings(text):
    """A manifest with its compile times fixed, so that seeds stay the same."""
    try:
        doc = json.loads(text)
    except ValueError:
        return text

    def walk(value):
        if isinstance(value, dict):
            return {k: ({"to_ptx": 1.0, "to_cubin": {}} if k == "compile_seconds"
                        else walk(v)) for k, v in value.items()}
        if isinstance(value, list):
            return [walk(v) for v in value]
        return value
    return json.dumps(walk(doc), indent=2, sort_keys=True) + "\n"


class Corpus:
    """Everything the case generators draw from."""

    def __init__(self, repo, tools, work):
        (self.seeds, self.opt_args, self.run_args, self.compile_args,
         self.specs) = test_seeds(repo)
        generated = generated_seeds(tools, work)
        self.manifests = [s.text for s in generated if s.name.startswith("manifest:")]
        self.seeds += [s for s in generated if not s.name.startswith("manifest:")]
        self.tile = [s for s in self.seeds if s.is_tile and not s.is_gpu]
        self.gpu = [s for s in self.seeds if s.is_gpu]
        self.passes = parse_opt_passes(tool_help(tools["opt"]))
        self.run_flags = parse_tool_flags(tool_help(tools["run"]))
        self.compile_flags = parse_tool_flags(tool_help(tools["compile"]))
        with open(os.path.join(repo, "kernels", "library.json")) as f:
            self.library = {"kernels": library_entries(json.load(f))}
        # The library's score and mask functions, by name (block mask kernels
        # are built from them).
        functions_dir = os.path.join(repo, "kernels", "functions")
        self.functions = {}
        for name in sorted(os.listdir(functions_dir)):
            if name.endswith(".mlir"):
                with open(os.path.join(functions_dir, name)) as f:
                    self.functions[name[:-len(".mlir")]] = f.read()
        proc = subprocess.run([tools["compile"], "--spec=" +
                               os.path.join(repo, "kernels", "library.json"),
                               "--list"], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, timeout=120)
        self.library_names = proc.stdout.decode().split()
        self.ptxas = shutil.which("ptxas") or (
            "/usr/local/cuda/bin/ptxas"
            if os.access("/usr/local/cuda/bin/ptxas", os.X_OK) else None)

    def pick(self, rng, seeds):
        """A seed: a file first (each equally likely), then one of its chunks.

        Made kernels (generated, compiled, the example) are a quarter of
        the picks, so that the 190 chunks of one invalid.mlir do not crowd
        out whole kernels.
        """
        made = [s for s in seeds if not s.name.startswith("test/")]
        tests = [s for s in seeds if s.name.startswith("test/")]
        if made and (not tests or rng.random() < 0.25):
            return rng.choice(made)
        files = {}
        for s in tests:
            files.setdefault(s.name.split("#")[0], []).append(s)
        return rng.choice(files[rng.choice(sorted(files))])

    def describe(self):
        return ("%d seeds (%d tile kernels, %d GPU-level), %d RUN pipelines, "
                "%d passes, %d spec files" % (
                    len(self.seeds), len(self.tile), len(self.gpu),
                    len(self.opt_args), len(self.passes), len(self.specs)))


# --------------------------------------------------------------------------
# Text mutations (token level, no MLIR parser)
# --------------------------------------------------------------------------

INT_RE = re.compile(r"(?<![\w.%#^@$!])(-?\d+)(?![\w.])")
DIM_RE = re.compile(r"(?<=[<x])(\d+|\?)(?=x(?:\d|\?|[a-z!]))")
TYPE_RE = re.compile(r"(?:(?<=x)|(?<![\w.]))(bf16|f16|f32|f64|i1|i8|i32|i64|"
                     r"index|f8E4M3FN)(?![\w])")
ATTR_RE = re.compile(r"\b([a-z_]+)\s*=\s*(-?\d+)\b")
WORD_RE = re.compile(r"(?<![\w%#^@.])[a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*)?(?![\w])")


def boundary_int(rng):
    if rng.random() < 0.8:
        return rng.choice(BOUNDARY_INTS)
    return rng.choice(MORE_INTS)


def replace_match(rng, text, regex, make, group=0):
    """Replace one random match of `regex` (its `group`) by make(match)."""
    matches = list(regex.finditer(text))
    if not matches:
        return None
    m = rng.choice(matches)
    return text[:m.start(group)] + make(m) + text[m.end(group):]


def mut_int(rng, text, corpus):
    return replace_match(rng, text, INT_RE, lambda m: str(boundary_int(rng)), 1)


def mut_shape(rng, text, corpus):
    matches = list(DIM_RE.finditer(text))
    if not matches:
        return None
    m = rng.choice(matches)
    r = rng.random()
    if r < 0.1:  # drop the dimension and its 'x'
        return text[:m.start()] + text[m.end() + 1:]
    if r < 0.2:  # add one
        new = m.group(1) + "x" + str(rng.choice([1, 2, 17, 64]))
    elif r < 0.65:
        new = str(boundary_int(rng))
    elif r < 0.8:
        new = "?"
    else:
        new = rng.choice(["16", "32", "48", "64", "128", "192", "256", "512"])
    return text[:m.start()] + new + text[m.end():]


def mut_dims_all(rng, text, corpus):
    """Change one size in many shapes at once, so that they stay consistent:
    every occurrence, those of tensors only, or a random half."""
    matches = [m for m in DIM_RE.finditer(text) if m.group(1) != "?"]
    if not matches:
        return None
    old = rng.choice(matches).group(1)
    new = str(boundary_int(rng) if rng.random() < 0.7 else rng.choice(
        [16, 32, 48, 64, 96, 128, 192, 256, 512, 4096]))
    scope = rng.choice(["all", "tensor", "half"])
    out, last = [], 0
    for m in DIM_RE.finditer(text):
        if m.group(1) != old:
            continue
        opening = text.rfind("<", 0, m.start())
        if scope == "tensor" and not text[:opening].endswith("tensor"):
            continue
        if scope == "half" and rng.random() < 0.5:
            continue
        out.append(text[last:m.start()] + new)
        last = m.end()
    if not out:
        return None
    text = "".join(out) + text[last:]
    if rng.random() < 0.5:  # constants of the same value follow
        text = re.sub(r"(arith\.constant )%s( : index)" % old,
                      r"\g<1>%s\2" % new, text)
    return text


def mut_int_all(rng, text, corpus):
    """Change every occurrence of one integer literal."""
    matches = list(INT_RE.finditer(text))
    if not matches:
        return None
    old = rng.choice(matches).group(1)
    new = str(boundary_int(rng))
    return INT_RE.sub(lambda m: new if m.group(1) == old else m.group(1), text)


def mut_type(rng, text, corpus):
    return replace_match(rng, text, TYPE_RE,
                         lambda m: rng.choice(ELEMENT_TYPES), 1)


def mut_keyword(rng, text, corpus):
    group = rng.choice(KEYWORD_GROUPS)
    words = [w for w in group if w]
    regex = re.compile(r"(?<![\w.])(%s)(?![\w])" % "|".join(
        re.escape(w) for w in sorted(words, key=len, reverse=True)))
    return replace_match(rng, text, regex, lambda m: rng.choice(group), 1)


def mut_attr(rng, text, corpus):
    matches = list(ATTR_RE.finditer(text))
    known = [m for m in matches if m.group(1) in ATTR_NAMES]
    pool = known if known and rng.random() < 0.7 else matches
    if not pool:
        return None
    m = rng.choice(pool)
    value = boundary_int(rng) if rng.random() < 0.7 else rng.choice(
        [16, 32, 48, 64, 96, 128, 192, 256, 512, 0, 8, 12])
    return text[:m.start(2)] + str(value) + text[m.end(2):]


def mut_word(rng, text, corpus):
    """Replace one identifier by another of the same file."""
    words = WORD_RE.findall(text)
    if len(words) < 2:
        return None
    other = rng.choice(words)
    return replace_match(rng, text, WORD_RE, lambda m: other)


def mut_lines(rng, text, corpus):
    lines = text.split("\n")
    if len(lines) < 2:
        return None
    i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
    op = rng.choice(["delete", "delete", "duplicate", "swap", "move",
                     "splice"])
    if op == "delete":
        del lines[i:i + rng.choice([1, 1, 1, 2, 5])]
    elif op == "duplicate":
        lines.insert(j, lines[i])
    elif op == "swap":
        lines[i], lines[j] = lines[j], lines[i]
    elif op == "move":
        lines.insert(j, lines.pop(i))
    else:
        donor = rng.choice(corpus.seeds).text.split("\n")
        lines.insert(j, rng.choice(donor))
    return "\n".join(lines)


def mut_truncate(rng, text, corpus):
    if not text:
        return None
    cut = rng.randrange(len(text))
    if rng.random() < 0.5:
        newline = text.rfind("\n", 0, cut)
        cut = newline + 1 if newline >= 0 else cut
    return text[:cut]


def mut_chars(rng, text, corpus):
    if not text:
        return None
    i = rng.randrange(len(text))
    if rng.random() < 0.5:
        return text[:i] + text[i + rng.randint(1, 20):]
    return text[:i] + rng.choice(["{", "}", "<", ">", "(", ")", ",", "\"",
                                  ":", "=", "%", "x", "?", "-", "[", "]",
                                  "#", "!", "^", "\\", "\n", "0"]) + text[i:]


TEXT_MUTATORS = [(mut_int, 4), (mut_shape, 4), (mut_dims_all, 3),
                 (mut_int_all, 1), (mut_type, 2),
                 (mut_keyword, 3), (mut_attr, 4), (mut_word, 1),
                 (mut_lines, 3), (mut_truncate, 1), (mut_chars, 1)]


def weighted(rng, pairs):
    total = sum(w for _, w in pairs)
    r = rng.uniform(0, total)
    for item, w in pairs:
        r -= w
        if r <= 0:
            return item
    return pairs[-1][0]


def mutate_text(rng, text, corpus, count):
    """Apply `count` random text mutations; return the text and their names."""
    done = []
    for _ in range(count):
        for _attempt in range(5):
            mutator = weighted(rng, TEXT_MUTATORS)
            out = mutator(rng, text, corpus)
            if out is not None and out != text:
                text = out
                done.append(mutator.__name__[4:])
                break
    return text, done


def mutation_count(rng):
    return weighted(rng, [(0, 25), (1, 35), (2, 20), (3, 10), (5, 10)])


# --------------------------------------------------------------------------
# Option values and option strings
# --------------------------------------------------------------------------


def option_value(rng, name, kind, sane_bias=0.75):
    """A value for option `name` of type `kind`: mostly sane, else not."""
    r = rng.random()
    if r < sane_bias:
        if name in SANE:
            return str(rng.choice(SANE[name]))
        if kind == "bool":
            return rng.choice(["1", "0", "true", "false", "1"])
        if kind in ("long", "int", "uint", "ulong"):
            return str(rng.choice([0, 1, 2, 4, 8, 16, 64]))
        if kind == "number":
            return rng.choice(["0", "1", "0.5", "1e-3"])
        return rng.choice(["a", "x", "sdpa"])
    if r < 0.93:
        if kind == "bool":
            return rng.choice(["2", "-1", "yes", "", "TRUE", "on", "01"])
        if kind in ("long", "int", "uint", "ulong", "number"):
            return rng.choice([str(boundary_int(rng))] * 4 + [
                "", "1.5", "0x10", "1e3", "nan", "-0", " 1", "1 "])
        return rng.choice(BAD_STRINGS.get(name, ["", "x", "-1", "none"]))
    base = str(rng.choice(SANE.get(name, ["1"])))
    junk = rng.choice(GARBAGE)
    return rng.choice([junk, base + junk, junk + base])


def option_items(rng, options, sane_bias=0.75, count=None):
    """`k=v` items for a pass or pipeline with the given {name: type}."""
    names = sorted(options)
    if count is None:
        count = rng.choice([0, 1, 1, 2, 2, 3, 4, 6])
    items = []
    for _ in range(min(count, len(names) + 1)):
        if not names or rng.random() < 0.04:
            items.append("%s=%s" % (rng.choice(UNKNOWN_KEYS),
                                    option_value(rng, "", "string")))
            continue
        name = rng.choice(names)
        kind = options[name]
        if kind == "bool" and rng.random() < 0.15:
            items.append(name)
        elif rng.random() < 0.03:
            items.append(name + "=")
        else:
            items.append("%s=%s" % (name, option_value(rng, name, kind,
                                                       sane_bias)))
    return items


def join_items(rng, items):
    text = " ".join(items)
    r = rng.random()
    if r < 0.03:
        return "{" + text + "}"
    if r < 0.05:
        return text + rng.choice(["}", "{", " }", ","])
    if r < 0.07:
        return ",".join(items)
    return text


def pass_arg(rng, name, options, sane_bias=0.75, count=None):
    """One `--pass` or `--pass=options` argument of tiled-attn-opt."""
    items = option_items(rng, options, sane_bias, count)
    if not items:
        return "--" + name
    return "--%s=%s" % (name, join_items(rng, items))


def mutate_pass_arg(rng, arg, passes):
    """Change one option item of a `--pass=k=v ...` argument (from RUN lines)."""
    m = re.match(r"^--([\w-]+)(?:=(.*))?$", arg, re.S)
    if not m or m.group(1) not in passes:
        return arg
    name, options = m.group(1), passes[m.group(1)]
    items = (m.group(2) or "").split()
    r = rng.random()
    if items and r < 0.3:
        del items[rng.randrange(len(items))]
    elif items and r < 0.7:
        i = rng.randrange(len(items))
        key = items[i].split("=", 1)[0]
        items[i] = "%s=%s" % (key, option_value(rng, key, options.get(key, "string"),
                                               0.4))
    else:
        items += option_items(rng, options, 0.5, 1)
    return "--%s=%s" % (name, join_items(rng, items)) if items else "--" + name


def random_passes(rng, corpus, gpu, bias=0.75):
    """A short run of passes in pipeline order, or any passes at all."""
    passes = corpus.passes
    order = [p for p in (GPU_ORDER if gpu else TILE_ORDER[1:]) if p in passes]
    if order and rng.random() < 0.6:
        start = rng.randrange(len(order))
        length = rng.choice([1, 1, 2, 3, len(order)])
        chosen = order[start:start + length]
    else:
        names = sorted(passes)
        chosen = [rng.choice(names) for _ in range(rng.choice([1, 1, 2, 3]))]
    return [pass_arg(rng, p, passes[p], bias) for p in chosen]


def pipeline_arg(rng, corpus, name, sane_bias=0.8):
    """`--tile-schedule=...`, `--tile-to-ptx=...` or `--tilegpu-to-ptx=...`."""
    options = corpus.passes.get(name, {})
    count = rng.choice([1, 2, 3, 4, 6, 8])
    items = option_items(rng, options, sane_bias, count)
    if name in ("tile-to-ptx", "tilegpu-to-ptx") and not any(
            i.startswith("chip=") for i in items) and rng.random() < 0.8:
        items.insert(0, "chip=" + option_value(rng, "chip", "string", sane_bias))
    return "--%s=%s" % (name, join_items(rng, items)) if items else "--" + name


def textual_pipeline(rng, corpus):
    """A --pass-pipeline=builtin.module(...) argument."""
    parts = []
    for _ in range(rng.choice([1, 2, 3])):
        name = rng.choice(sorted(corpus.passes))
        items = option_items(rng, corpus.passes[name], 0.7)
        part = name + ("{" + " ".join(items) + "}" if items else "")
        if name.startswith("tile-") and name not in PIPELINES and rng.random() < 0.5:
            part = "func.func(" + part + ")"
        parts.append(part)
    text = "builtin.module(" + ",".join(parts) + ")"
    if rng.random() < 0.1:
        text = text[:rng.randrange(len(text))]
    return "--pass-pipeline=" + text


# --------------------------------------------------------------------------
# Cases
# --------------------------------------------------------------------------


class Case:
    """One run of one tool: its options and the files of its folder."""

    def __init__(self, index, tool, args, files=None, dirs=(), origin=""):
        self.index = index
        self.tool = tool
        self.args = list(args)
        self.files = dict(files or {})
        self.dirs = list(dirs)
        self.origin = origin

    def copy(self, args=None, files=None):
        return Case(self.index, self.tool, self.args if args is None else args,
                    self.files if files is None else files, self.dirs,
                    self.origin)


def case_opt_seed(rng, index, corpus):
    """A test's or a made kernel's IR, mutated, through some passes."""
    seed = corpus.pick(rng, corpus.seeds)
    text, muts = mutate_text(rng, seed.text, corpus, mutation_count(rng))
    bias = case_bias(rng)
    r = rng.random()
    if seed.opt_args and r < 0.3:
        args = list(rng.choice(seed.opt_args))
        if rng.random() < 0.7:
            candidates = [i for i, a in enumerate(args) if "=" in a]
            if candidates:
                i = rng.choice(candidates)
                args[i] = mutate_pass_arg(rng, args[i], corpus.passes)
        how = "its RUN options"
    elif seed.is_tile and not seed.is_gpu and r < 0.45:
        _, schedule, lowering = library_kernel(rng, corpus)
        args = ["--tile-schedule=" + " ".join(schedule)]
        if rng.random() < 0.6:
            args.append("--tile-to-ptx=" + " ".join(lowering))
        how = "a library schedule"
    elif r < 0.65:
        args = random_passes(rng, corpus, seed.is_gpu, bias)
        how = "passes"
    elif r < 0.92:
        name = "tilegpu-to-ptx" if seed.is_gpu and rng.random() < 0.7 else \
            rng.choice(["tile-schedule", "tile-to-ptx"])
        args = [pipeline_arg(rng, corpus, name, bias)]
        if name == "tile-schedule" and rng.random() < 0.4:
            args.append(pipeline_arg(rng, corpus, "tile-to-ptx", bias))
        how = "pipelines"
    else:
        args = [textual_pipeline(rng, corpus)]
        how = "--pass-pipeline"
    if rng.random() < 0.1:
        args.append(rng.choice(OPT_GENERIC_FLAGS))
    args = ["input.mlir"] + args + ["-o", "out.mlir"]
    return Case(index, "opt", args, {"input.mlir": text},
                origin="opt %s [%s] via %s" % (seed.name, ",".join(muts), how))


def case_bias(rng):
    """How sane a case's option values are: all, nearly all, or few."""
    return weighted(rng, [(1.0, 45), (0.92, 35), (0.6, 20)])


def library_entries(spec):
    """The kernels of a library spec as version-1 entries (one mask, one head
    dim pair each): what the case generators draw from."""
    if spec.get("version") == 1:
        return spec["kernels"]
    entries = []
    for config in spec["configurations"]:
        if config.get("program", "sdpa") != "sdpa":
            continue  # block mask kernels: no SDPA entry to draw from
        lists = spec.get("variant_lists", {})
        variants = [v for item in config["variants"]
                    for v in (lists[item[1:]] if item.startswith("@") else [item])]
        for variant in variants:
            # Decode kernels (split-KV, per-entry key lengths) take
            # arguments the version-1 entries cannot name: not drawn from.
            if "_split" in variant or "_seqused" in variant:
                continue
            mask = next(m for m in ("none", "top_left", "window")
                        if variant.startswith(m))
            flags = variant[len(mask):].split("_")
            for head_dim in config["head_dims"]:
                d, dv = (head_dim, 0) if isinstance(head_dim, int) else head_dim
                entry = {"dtypes": config.get("dtypes", spec["dtypes"]),
                         "head_dims": [d], "causal": mask == "top_left",
                         "window": mask == "window", "softcap": "softcap" in flags,
                         "lse": "lse" in flags, "varlen": "varlen" in flags,
                         "block_m": config["block_m"],
                         "block_n": config["block_n"],
                         "schedule": config["schedule"],
                         "lowering": config["lowering"],
                         "cubins": config["cubins"], "why": config["name"]}
                if dv:
                    entry["head_dim_v"] = dv
                entries.append(entry)
    return entries


def library_kernel(rng, corpus):
    """A library entry: generator, schedule and lowering option items."""
    entry = rng.choice(corpus.library["kernels"])
    gen = ["head-dim=%d" % rng.choice(entry["head_dims"]),
           "dtype=" + rng.choice(entry["dtypes"]),
           "block-m=%d" % entry["block_m"], "block-n=%d" % entry["block_n"]]
    variant = ("window" if entry.get("window") else
               "top_left" if entry.get("causal") else "none")
    for key in ("softcap", "lse", "varlen"):
        if entry.get(key):
            variant += "_" + key
    gen.append("variant=" + variant)
    if entry.get("head_dim_v"):
        gen.append("head-dim-v=%d" % entry["head_dim_v"])
    return gen, entry["schedule"].split(), entry["lowering"].split()


def perturb(rng, lists, options):
    """One change to one of the option-item lists: a value, a drop, an add."""
    i = rng.randrange(len(lists))
    items, opts = lists[i], options[i]
    r = rng.random()
    if items and r < 0.55:
        j = rng.randrange(len(items))
        key = items[j].split("=", 1)[0]
        items[j] = "%s=%s" % (key, option_value(rng, key, opts.get(key, "string"),
                                               rng.choice([0.0, 0.5, 0.8])))
    elif items and r < 0.7:
        del items[rng.randrange(len(items))]
    else:
        items += option_items(rng, opts, rng.choice([0.5, 1.0]), 1)


def generate_items(rng, corpus, bias):
    """Random tile-generate-sdpa items."""
    options = corpus.passes.get("tile-generate-sdpa", {})
    items = []
    for name in ("head-dim", "dtype", "block-m", "block-n"):
        if name in options and rng.random() < 0.85:
            items.append("%s=%s" % (name, option_value(rng, name, options[name],
                                                       bias)))
    for name in ("variant", "head-dim-v", "name"):
        if name in options and rng.random() < 0.25:
            items.append("%s=%s" % (name, option_value(rng, name, options[name],
                                                       bias)))
    return items


def case_opt_generate(rng, index, corpus):
    """The generator's kernel, scheduled and lowered: a library kernel with
    one or two changes, or random options."""
    passes = corpus.passes
    names = ["tile-generate-sdpa", "tile-schedule", "tile-to-ptx"]
    if rng.random() < 0.55:
        gen, schedule, lowering = library_kernel(rng, corpus)
        lists = [gen, schedule, lowering]
        for _ in range(weighted(rng, [(0, 5), (1, 70), (2, 25)])):
            perturb(rng, lists, [passes.get(n, {}) for n in names])
        stop = weighted(rng, [(1, 15), (2, 25), (3, 60)])
        args = ["input.mlir"] + ["--%s=%s" % (n, join_items(rng, l))
                                 for n, l in zip(names[:stop], lists[:stop])]
        origin = "opt library kernel"
    elif rng.random() < 0.15:
        return block_mask_case(rng, index, corpus)
    else:
        bias = case_bias(rng)
        args = ["input.mlir", "--tile-generate-sdpa=" + join_items(
            rng, generate_items(rng, corpus, bias))]
        if rng.random() < 0.6:
            args.append(pipeline_arg(rng, corpus, "tile-schedule", bias))
        elif rng.random() < 0.5:
            args += random_passes(rng, corpus, False, bias)
        if rng.random() < 0.45:
            args.append(pipeline_arg(rng, corpus, "tile-to-ptx", bias))
        origin = "opt tile-generate-sdpa"
    text = "module {\n}\n"
    if rng.random() < 0.1:
        text = corpus.pick(rng, corpus.seeds).text
    return Case(index, "opt", args + ["-o", "out.mlir"], {"input.mlir": text},
                origin=origin)


def block_mask_case(rng, index, corpus):
    """tile-generate-block-mask on a library function's file (a mask
    function, a score function, or a name the file lacks), then perhaps the
    GPU pipeline with random options (its reductions to a scalar take every
    family's layouts)."""
    name, text = rng.choice(sorted(corpus.functions.items()))
    function = name if rng.random() < 0.8 else rng.choice(
        sorted(corpus.functions) + ["", "missing", "seq_q", "1x"])
    items = ["mask-function=" + function]
    if rng.random() < 0.2:
        items.append("name=" + rng.choice(["block_mask", "k", name, "2k", "a-b"]))
    args = ["input.mlir", "--tile-generate-block-mask=" + join_items(rng, items)]
    if rng.random() < 0.7:
        args.append(pipeline_arg(rng, corpus, "tile-to-ptx", case_bias(rng)))
    return Case(index, "opt", args + ["-o", "out.mlir"], {"input.mlir": text},
                origin="opt tile-generate-block-mask")


SHAPE_VALUES = [0, 1, 1, 2, 3, 16, 17, 17, 31, 33, 37, 64, 65, 100, 127, 128,
                129, 257]
HUGE_VALUES = [2**31 - 1, 2**32, 2**40, 2**62, INT64_MAX, 2**63, 2**64,
               10**30, -1, -17, INT64_MIN]
MALFORMED_SHAPES = ["17", "17x", "x17", "17x17x17", ",,", "17X17", " 17 x 17",
                    "abc", "17x-1", "", "17x17,", ",17x17", "1e3x1", "0x10x1",
                    "17x17;1x1", "+1x+1", "17 x17", "١x١"]


def random_shapes(rng):
    pairs = []
    for _ in range(rng.choice([1, 1, 2, 3, 4])):
        r = rng.random()
        if r < 0.85:
            pairs.append("%dx%d" % (rng.choice(SHAPE_VALUES),
                                    rng.choice(SHAPE_VALUES)))
        elif r < 0.95:
            a, b = rng.choice(HUGE_VALUES), rng.choice(SHAPE_VALUES + HUGE_VALUES)
            pairs.append("%dx%d" % ((a, b) if rng.random() < 0.5 else (b, a)))
        else:
            pairs.append(rng.choice(MALFORMED_SHAPES))
    return ",".join(pairs)


def run_value(rng, name, kind):
    """A value for a tiled-attn-run flag."""
    sane = {"batch": ["1", "1", "2", "3"], "heads": ["1", "2", "3", "4", "6"],
            "kv-heads": ["0", "1", "2", "3"], "layout": ["bhsd", "bshd"],
            "window": ["-1,-1", "3,5", "20,0", "0,0", "-1,0", "1,-1"],
            "window-align": ["top-left", "bottom-right"],
            "scale": ["0.125", "1", "0.5"], "softcap": ["30", "2"],
            "tolerance": ["2e-3", "1e-2"], "seed": ["0", "1", "42"],
            "equivalence-tolerance": ["0", "2e-3"], "lse-tolerance": ["1e-3"],
            "kernel": ["sdpa_fwd", "gen", "sdpa"]}
    bad = {"layout": ["", "BHSD", "bsdh", "bhsd "],
           "window": ["", "-2,0", "1", "a,b", "1,2,3", ",", "%d,%d" % (
               INT64_MAX, INT64_MAX), "%d,0" % INT64_MIN, " 1 , 2 ",
               "99999999999999999999,1"],
           "window-align": ["", "top_left", "x"],
           "kernel": ["", "nope", "@sdpa", "x" * 300]}
    r = rng.random()
    if name == "shapes":
        return random_shapes(rng)
    if r < 0.75 and name in sane:
        return rng.choice(sane[name])
    if kind == "number" or name in ("scale", "softcap", "tolerance"):
        return rng.choice(["0", "-0", "nan", "inf", "-inf", "1e-300", "1e300",
                           "-1", "", "abc", "1e999", "0x1p3"])
    if name in bad and r < 0.9:
        return rng.choice(bad[name])
    if kind in ("long", "uint", "int"):
        # Counts of 18 to 2^31 are valid and only slow (the host executor
        # runs every program): small or too large, never in between.
        value = boundary_int(rng)
        if name in ("batch", "heads", "kv-heads") and 17 < value < 2**31 - 1:
            value = rng.choice([0, 17, 2**32])
        return rng.choice([str(value)] * 3 + ["", "1.5", "abc"])
    return option_value(rng, name, kind, 0.3)


def bounded_work(args):
    """Keep batch x heads small where both are valid counts: a valid problem
    must finish well within the timeout, or it would read as a hang."""
    counts = {}
    for i, a in enumerate(args):
        m = re.match(r"^--(batch|heads)=(\d+)$", a)
        if m and 0 < int(m.group(2)) < 2**31 - 1:
            counts[m.group(1)] = (i, int(m.group(2)))
    batch = counts.get("batch", (None, 2))[1]
    heads = counts.get("heads", (None, 3))[1]
    if batch * heads > 36:
        args = list(args)
        if "heads" in counts:
            args[counts["heads"][0]] = "--heads=1"
        if "batch" in counts:
            args[counts["batch"][0]] = "--batch=1"
    return args


def case_run(rng, index, corpus):
    """A tile kernel, perhaps mutated, run with random options."""
    seed = corpus.pick(rng, corpus.tile)
    text, muts = mutate_text(rng, seed.text, corpus,
                             weighted(rng, [(0, 40), (1, 35), (2, 15), (3, 10)]))
    files = {"kernel.mlir": text}
    args = ["kernel.mlir"]
    if seed.run_args and rng.random() < 0.25:
        args += rng.choice(seed.run_args)
    if rng.random() < 0.7:
        args.append("--shapes=" + random_shapes(rng))
    flags = sorted(f for f in corpus.run_flags if f not in ("shapes",))
    for _ in range(rng.choice([0, 1, 1, 2, 3, 4])):
        name = rng.choice(flags)
        if name == "compare-with":
            other, _ = mutate_text(rng, seed.text, corpus,
                                   rng.choice([0, 0, 1, 2]))
            files["other.mlir"] = other
            args.append("--compare-with=other.mlir")
        elif corpus.run_flags[name] == "bool":
            args.append("--" + name + rng.choice(["", "", "=0", "=1", "=2"]))
        else:
            args.append("--%s=%s" % (name, run_value(rng, name,
                                                     corpus.run_flags[name])))
    if rng.random() < 0.03:
        args.append(rng.choice(["--bogus", "extra.mlir", "-", "--shapes",
                                "--batch", "--help-hidden-x"]))
    return Case(index, "run", bounded_work(args), files,
                origin="run %s [%s]" % (seed.name, ",".join(muts)))


def compile_kernel_args(rng, corpus):
    """tiled-attn-compile's options for one kernel: a library kernel with a
    change or two, or random options."""
    flags = corpus.compile_flags
    schedule_opts = corpus.passes.get("tile-schedule", {})
    lowering_opts = corpus.passes.get("tile-to-ptx", {})
    if rng.random() < 0.5:
        gen, schedule, lowering = library_kernel(rng, corpus)
        gen_opts = {k: v for k, v in flags.items() if k in (
            "head-dim", "head-dim-v", "dtype", "block-m", "block-n", "causal",
            "window", "lse", "softcap", "varlen")}
        lists = [gen, schedule, lowering]
        for _ in range(weighted(rng, [(0, 5), (1, 70), (2, 25)])):
            perturb(rng, lists, [gen_opts, schedule_opts, lowering_opts])
        args = []
        for item in gen:
            key, _, value = item.partition("=")
            if flags.get(key) == "bool":
                args.append("--" + key + ("" if value in ("1", "") else "=" + value))
            else:
                args.append("--%s=%s" % (key, value))
        return args + ["--schedule=" + join_items(rng, schedule),
                       "--lowering=" + join_items(rng, lowering)]
    bias = case_bias(rng)
    args = []
    for name in ("head-dim", "head-dim-v", "dtype", "block-m", "block-n"):
        if name in flags and rng.random() < (0.6 if name != "head-dim-v" else 0.15):
            args.append("--%s=%s" % (name, option_value(rng, name, flags[name],
                                                         bias)))
    for name in ("causal", "window", "softcap", "lse", "varlen"):
        if name in flags and rng.random() < 0.2:
            args.append("--" + name + rng.choice(["", "", "", "=0", "=true"]))
    if rng.random() < 0.7:
        args.append("--schedule=" + join_items(rng, option_items(
            rng, schedule_opts, bias, rng.choice([0, 1, 2, 3, 5]))))
    if rng.random() < 0.85:
        items = option_items(rng, lowering_opts, bias, rng.choice([0, 1, 2, 3]))
        if rng.random() < 0.85:
            items.insert(0, "chip=" + option_value(rng, "chip", "string", bias))
        args.append("--lowering=" + join_items(rng, items))
    return args


def compile_output_args(rng, corpus, files, dirs):
    """--out-dir, --ptxas, --cubin, --jobs, --keep-ir, and what is already there."""
    args = []
    out = rng.choice(["out"] * 8 + ["out/a/b", "", ".", "outfile", "a b",
                                    "out/manifest.json"])
    if out == "outfile":
        files["outfile"] = "not a folder\n"
    args.append("--out-dir=" + out)
    r = rng.random()
    if r < 0.15 and corpus.manifests:
        files["out/manifest.json"], _ = mutate_json(
            rng, rng.choice(corpus.manifests), 1)
    elif r < 0.25:
        files["out/manifest.json"] = rng.choice([
            "[1, 2]\n", "{\"kernels\": 5}\n", "{\"kernels\": [{\"name\": 1}]}\n",
            "", "{", "{\"kernels\": [], \"generator\": []}\n", "null\n",
            "{\"kernels\": [[]]}\n", "\"x\"\n"])
    elif r < 0.28:
        dirs.append(rng.choice(["out/manifest.json", "out/manifest.json.lock"]))
    if rng.random() < 0.15:
        chips = rng.sample(CHIPS + BAD_CHIPS[:6], rng.choice([1, 1, 2]))
        args.append("--cubin=" + ",".join(chips))
        ptxas = [p for p in [corpus.ptxas, "/bin/false", "/bin/true",
                             "no-such-ptxas", ""] if p is not None]
        args.append("--ptxas=" + rng.choice(ptxas))
    if rng.random() < 0.3:
        args.append("--keep-ir")
    args.append("--jobs=" + option_value(rng, "jobs", "uint", 0.95))
    return args


def json_paths(value, path=()):
    yield path
    if isinstance(value, dict):
        for k in value:
            yield from json_paths(value[k], path + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from json_paths(v, path + (i,))


JSON_VALUES = [None, True, False, 0, -1, 1.5, 2**31 - 1, 2**32, INT64_MAX,
               2**63, 2**64, 10**30, -10**30, 1e308, -1e308, "", "x", "f16",
               "sm_80", [], {}, [1, 2], {"a": 1}, [64, 64], ["f16", "f16"],
               "chip=sm_80 }", "{", 16, 64, 256, 4096]


def mutate_json(rng, text, count):
    """Mutate a JSON document structurally (or, if it does not parse, as text)."""
    try:
        doc = json.loads(text)
    except ValueError:
        return mutate_text_json(rng, text), ["text"]
    done = []
    for _ in range(count):
        paths = list(json_paths(doc))
        path = rng.choice(paths)
        op = rng.choice(["set", "set", "set", "delete", "add", "wrap", "dup"])
        parent = doc
        for key in path[:-1]:
            parent = parent[key]
        if not path:
            doc = rng.choice([[doc], {}, [], "x", 5])
            done.append("root")
            continue
        key = path[-1]
        if op == "set":
            parent[key] = rng.choice(JSON_VALUES)
        elif op == "delete":
            del parent[key]
        elif op == "add" and isinstance(parent, dict):
            parent[rng.choice(["extra", "head_dim", "block-m", "kernels",
                               "name", ""])] = rng.choice(JSON_VALUES)
        elif op == "wrap":
            parent[key] = [parent[key]]
        elif op == "dup" and isinstance(parent, list):
            parent.insert(key, parent[key])
        done.append(op)
    out = json.dumps(doc, indent=1)
    if rng.random() < 0.15:
        out = mutate_text_json(rng, out)
        done.append("text")
    return out + "\n", done


def mutate_text_json(rng, text):
    r = rng.random()
    if r < 0.3 and text:
        return text[:rng.randrange(len(text))]
    if r < 0.6:
        out = replace_match(rng, text, re.compile(r"-?\d+(\.\d+)?"),
                            lambda m: rng.choice(["1e999", "-1e999", "NaN",
                                                  "123456789012345678901234567890",
                                                  "0x10", "-0", "01"]))
        return out if out is not None else text
    i = rng.randrange(len(text) + 1)
    return text[:i] + rng.choice([",", "}", "]", "{", "[", "\"", ":", "\\u0000",
                                  "\\ud800"]) + text[i:]


def spec_document(rng, corpus):
    """A small spec: test specs or one or two entries of the library."""
    if corpus.specs and rng.random() < 0.35:
        return rng.choice(corpus.specs)[1], "test spec"
    entries = []
    for _ in range(rng.choice([1, 1, 2])):
        entry = dict(rng.choice(corpus.library["kernels"]))
        entry["dtypes"] = entry["dtypes"][:1]
        entry["head_dims"] = entry["head_dims"][:1]
        if rng.random() < 0.85:
            entry["cubins"] = []
        entries.append(entry)
    return json.dumps({"version": 1, "kernels": entries}, indent=1) + "\n", \
        "library entries"


def case_compile(rng, index, corpus):
    """tiled-attn-compile: one kernel from options, or a spec file."""
    files, dirs = {}, []
    if rng.random() < 0.6:
        args = compile_kernel_args(rng, corpus)
        if corpus.compile_args and rng.random() < 0.15:
            args = [a for a in rng.choice(corpus.compile_args)
                    if not a.startswith("--out-dir")]
        origin = "compile options"
    else:
        text, what = spec_document(rng, corpus)
        text, muts = mutate_json(rng, text, rng.choice([0, 1, 1, 2, 3]))
        files["spec.json"] = text
        args = ["--spec=spec.json"]
        r = rng.random()
        if r < 0.4:
            args.append("--list")
        elif r < 0.6 and corpus.library_names:
            names = rng.sample(corpus.library_names, rng.choice([1, 1, 2]))
            args.append("--entry=" + ",".join(names))
        if rng.random() < 0.1:
            args.append("--spec=" + rng.choice(["", "missing.json", "spec.json",
                                                "."]))
        origin = "compile spec (%s) [%s]" % (what, ",".join(muts))
    if "--list" not in args:
        args += compile_output_args(rng, corpus, files, dirs)
    for _ in range(rng.choice([0, 0, 0, 1])):
        name = rng.choice(sorted(corpus.compile_flags))
        kind = corpus.compile_flags[name]
        args.append("--" + name if kind == "bool" else "--%s=%s" % (
            name, option_value(rng, name, kind, 0.2)))
    if rng.random() < 0.03:
        args.append(rng.choice(["--bogus", "positional", "--spec", "-",
                                "--out-dir"]))
    return Case(index, "compile", args, files, dirs, origin=origin)


GENERATORS = [(case_opt_seed, 36), (case_opt_generate, 18), (case_run, 22),
              (case_compile, 24)]


def make_case(seed, index, corpus):
    """Case `index` of `seed`: a function of the two alone."""
    rng = random.Random("%d/%d" % (seed, index))
    generator = weighted(rng, GENERATORS)
    return generator(rng, index, corpus)


# --------------------------------------------------------------------------
# Running a case
# --------------------------------------------------------------------------


def materialize(case, folder):
    for d in case.dirs:
        os.makedirs(os.path.join(folder, d), exist_ok=True)
    for name, text in case.files.items():
        path = os.path.join(folder, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8", errors="surrogateescape") as f:
            f.write(text)


def read_output(path, limit=200000):
    """A file's text, its head and tail when it is long."""
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        if size <= limit:
            data = f.read()
        else:
            head = f.read(limit // 4)
            f.seek(size - 3 * limit // 4)
            data = head + b"\n[...]\n" + f.read()
    return data.decode("utf-8", "replace")


def limit_resources(mem_bytes):
    def apply():
        resource.setrlimit(resource.RLIMIT_AS, (mem_bytes, mem_bytes))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        resource.setrlimit(resource.RLIMIT_FSIZE, (2 << 30, 2 << 30))
    return apply


def execute(job):
    """Run one case in a fresh folder; classify it. (A pool worker.)"""
    case, settings = job
    folder = tempfile.mkdtemp(prefix="case-%d-" % case.index,
                              dir=settings["work"])
    try:
        materialize(case, folder)
        argv = [settings["tools"][case.tool]] + case.args
        env = dict(os.environ, TMPDIR=folder)
        start = time.monotonic()
        hung = False
        with open(os.path.join(folder, ".out"), "wb") as out:
            proc = subprocess.Popen(argv, cwd=folder, stdin=subprocess.DEVNULL,
                                    stdout=out, stderr=subprocess.STDOUT,
                                    env=env, start_new_session=True,
                                    preexec_fn=limit_resources(
                                        settings["mem_mb"] << 20))
            try:
                rc = proc.wait(timeout=settings["timeout"])
            except subprocess.TimeoutExpired:
                hung = True
                rc = stop_hung(proc)
        seconds = time.monotonic() - start
        text = read_output(os.path.join(folder, ".out"))
        verdict = classify(case.tool, rc, hung, text, case.args)
        verdict.update(index=case.index, rc=rc, seconds=seconds)
        if verdict["kind"] != "ok" or settings.get("keep_output"):
            verdict["output"] = text[-20000:] if len(text) > 20000 else text
        return verdict
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def stop_hung(proc):
    """SIGQUIT (LLVM prints its stack), then SIGKILL; the exit status."""
    for sig, wait in ((signal.SIGQUIT, 15), (signal.SIGKILL, 30)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            pass
        try:
            return proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            continue
    return proc.wait()


# --------------------------------------------------------------------------
# Classification and signatures
# --------------------------------------------------------------------------

FRAME_RE = re.compile(r"^\s*#(\d+) 0x[0-9a-f]+ (.*?)(?: \(([^()]*)\))?$", re.M)
PROJECT_HINTS = ("tile", "Tile", "tiled_attn", "sdpa", "Sdpa", "Kernel",
                 "buildKernel", "Interpreter", "Executor")
# Frames that say nothing about where a run failed: signal handling, abort,
# allocation and containers.
SKIP_PREFIXES = ("llvm::sys::", "SignalHandler", "PrintStackTrace", "__pthread",
                 "pthread_kill", "__GI_", "llvm::report_", "report_fatal_error",
                 "llvm_unreachable", "__cxa", "std::", "__gnu_cxx",
                 "operator new", "__libc_start", "__assert", "llvm::safe_",
                 "llvm::SmallVector", "llvm::DenseMap", "llvm::raw_",
                 "llvm::Twine", "llvm::APInt", "llvm::function_ref",
                 "llvm::detail::", "mlir::detail::", "handleOOM")
SKIP_EXACT = {"main", "abort", "raise", "gsignal", "_start", "call_init"}


def skipped_frame(func):
    return func in SKIP_EXACT or func.startswith(SKIP_PREFIXES)


def function_name(frame):
    """A frame's function without arguments, templates or offsets."""
    name = frame.replace("(anonymous namespace)", "{anon}")
    name = re.sub(r"\s+\S+:\d+(:\d+)?$", "", name)  # file:line:column
    depth, out = 0, []
    for ch in name:
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth = max(0, depth - 1)
        elif depth == 0:
            if ch == "(":
                break
            out.append(ch)
    name = "".join(out).strip()
    name = re.sub(r"^.*\s(?=[\w:{}~]+$)", "", name)  # return type
    return name.replace("{anon}", "(anon)")


def stack_frames(text):
    """Symbolized frames of an LLVM stack dump: (function, module)."""
    frames = []
    for m in FRAME_RE.finditer(text):
        func, module = m.group(2).strip(), m.group(3) or ""
        if func.startswith("(/") or re.match(r"^0x[0-9a-f]+$", func):
            continue
        frames.append((function_name(func), module))
    return frames


def innermost_frames(text):
    """The innermost project frame and the innermost pass of a stack dump."""
    frames = [(f, m) for f, m in stack_frames(text) if not skipped_frame(f)]
    where = None
    for func, module in frames:
        if re.search(r"tiled-attn-(opt|run|compile)", module) or any(
                h in func for h in PROJECT_HINTS):
            where = func
            break
    if where is None and frames:  # upstream code: its innermost frame
        where = frames[0][0]
    pass_name = None
    for func, module in frames:
        m = re.search(r"(\w+(?:Pass|Pipeline))(?:Base<[^>]*>)?::"
                      r"(?:runOnOperation|runOnFunction)", func)
        if m:
            pass_name = m.group(1)
            break
        m = re.search(r"(?:^|::)(\w*Pass)::", func)
        if m and pass_name is None and "PassManager" not in func:
            pass_name = m.group(1)
    return where, pass_name


def normalize(line):
    """A message with numbers and paths made generic, for grouping."""
    line = re.sub(r"0x[0-9a-fA-F]+", "0xN", line)
    line = re.sub(r"(?<![\w])-?\d+", "N", line)
    line = re.sub(r"/[\w./+-]+/", "", line)
    line = re.sub(r"'[^']{40,}'", "'...'", line)
    return line.strip()[:200]


def signal_name(rc):
    try:
        return signal.Signals(-rc).name
    except ValueError:
        return "signal %d" % -rc


def pass_flags(args):
    names = []
    for a in args:
        m = re.match(r"^--?([a-z][\w-]*)", a)
        if m and (m.group(1).startswith(("tile", "convert-", "gpu-", "pass-"))):
            names.append(m.group(1))
    return "+".join(names[:4]) or "-"


# Crashes inside upstream MLIR's own code that upstream's mlir-opt shows on
# the same text, which LLVM 22.1.8 (the project's pinned LLVM) cannot be
# changed to avoid: each is named by the innermost upstream frame, with the
# upstream reproducer. Such a case is reported as "upstream" and does not
# fail the run; anything else in the same run still does.
UPSTREAM_CAUSES = {
    "mlir::vector::FromElementsOp::parse":
        "vector.from_elements' parser allocates one operand type per element "
        "of its result before any verifier runs: `vector.from_elements : "
        "vector<4294967296xf32>` aborts LLVM 22.1.8's mlir-opt the same way "
        "(tiled-attn-opt registers the vector dialect for lowered GPU IR)",
}


def upstream_cause(where):
    """The upstream cause a crash's innermost frames name, or None."""
    for frame, why in UPSTREAM_CAUSES.items():
        if where and frame in where:
            return why
    return None


def classify(tool, rc, hung, text, args):
    """The verdict of one run: its kind (ok, crash, oom, hang), its signature
    and the core of it that a reduced case must keep (the signature less
    the pass options it falls back on when the output names no place)."""
    name = TOOLS[tool]
    where, pass_name = innermost_frames(text)
    place = ""
    if where:
        place += " in " + where
    if pass_name and (not where or pass_name not in where):
        place += " [%s]" % pass_name
    if hung:
        # Where a slow run was stopped varies from run to run: a hang is
        # told apart by its tool and innermost pass only.
        core = "%s: hang%s" % (name, " [%s]" % pass_name if pass_name else "")
        flags = pass_flags(args)
        fallback = "" if pass_name or flags == "-" else " (%s)" % flags
        return {"kind": "hang", "core": core, "signature": core + fallback,
                "where": where}
    oom = any(m in text for m in OOM_MARKERS)
    crashed = rc < 0 or rc not in OK_STATUS[tool] or oom or any(
        m in text for m in CRASH_MARKERS)
    if not crashed and rc != 0 and not text.strip():
        core = "%s: exit %d without a diagnostic" % (name, rc)
        return {"kind": "silent", "core": core,
                "signature": core + " (%s)" % pass_flags(args)}
    if not crashed:
        return {"kind": "ok", "core": None, "signature": None}
    what = None
    for pattern in (r"LLVM ERROR: [^\n]*", r"Assertion `[^\n]*' failed",
                    r"[^\n]*\n?UNREACHABLE executed[^\n]*",
                    r"terminate called after throwing[^\n]*"
                    r"(?:\n\s*what\(\):[^\n]*)?",
                    r"ERROR: AddressSanitizer: [\w-]+"):
        m = re.search(pattern, text)
        if m:
            what = normalize(m.group(0).replace("\n", " "))
            break
    fallback = ""
    if what is None:
        what = signal_name(rc) if rc < 0 else "exit %d" % rc
        if not place:
            fallback = " (%s)" % pass_flags(args)
    core = "%s: %s%s" % (name, what, place)
    innermost = [f for f, _ in stack_frames(text) if not skipped_frame(f)][:3]
    if upstream_cause(" ".join(innermost)):
        return {"kind": "upstream", "core": core, "signature": core,
                "where": where}
    return {"kind": "oom" if oom else "crash", "core": core,
            "signature": core + fallback}


# --------------------------------------------------------------------------
# Reduction
# --------------------------------------------------------------------------


def block_end(lines, i):
    """The line that closes the braces line i opens (i when it opens none)."""
    depth = 0
    for j in range(i, len(lines)):
        depth += lines[j].count("{") - lines[j].count("}")
        if depth <= 0:
            return j
    return i


class Reducer:
    """Shrink a failing case while its signature stays the same."""

    def __init__(self, settings, core, deadline, max_tests):
        self.settings = settings
        self.core = core
        self.deadline = deadline
        self.max_tests = max_tests
        self.tests = 0
        self.cache = {}

    def out_of_budget(self):
        return time.monotonic() > self.deadline or self.tests >= self.max_tests

    def fails(self, case):
        key = (tuple(case.args), tuple(sorted(case.files.items())))
        if key in self.cache:
            return self.cache[key]
        if self.out_of_budget():
            return False
        self.tests += 1
        verdict = execute((case, self.settings))
        same = verdict["core"] == self.core
        self.cache[key] = same
        return same

    def ddmin(self, items, test):
        """Zeller's ddmin over a list: a smaller list for which test() holds."""
        n = 2
        while len(items) >= 2 and not self.out_of_budget():
            chunk = max(1, len(items) // n)
            subsets = [items[i:i + chunk] for i in range(0, len(items), chunk)]
            reduced = False
            for i in range(len(subsets)):
                complement = [x for j, s in enumerate(subsets) if j != i for x in s]
                if test(complement):
                    items, n, reduced = complement, max(n - 1, 2), True
                    break
            if not reduced:
                if n >= len(items):
                    break
                n = min(len(items), n * 2)
        return items

    def reduce_args(self, case):
        """Drop arguments one at a time (`-o FILE` as one)."""
        i = 0
        while i < len(case.args) and not self.out_of_budget():
            if case.args[i] in case.files:  # the input stays: no stdin
                i += 1
                continue
            width = 2 if case.args[i] == "-o" else 1
            trial = case.copy(args=case.args[:i] + case.args[i + width:])
            if self.fails(trial):
                case = trial
            else:
                i += width
        return case

    def reduce_option_items(self, case):
        for i, arg in enumerate(case.args):
            m = re.match(r"^(--[\w-]+=)(.*)$", arg, re.S)
            if not m or self.out_of_budget():
                continue
            sep = "," if m.group(1) in ("--shapes=", "--entry=", "--cubin=") else " "
            items = m.group(2).split(sep)
            if len(items) < 2:
                continue

            def test(kept, i=i, prefix=m.group(1)):
                args = list(case.args)
                args[i] = prefix + sep.join(kept)
                return self.fails(case.copy(args=args))
            kept = self.ddmin(items, test)
            args = list(case.args)
            args[i] = m.group(1) + sep.join(kept)
            case = case.copy(args=args)
        return case

    def reduce_file(self, case, name):
        """Shrink one file: comments and blank lines at once, the shortest
        failing prefix (a parser failure), ddmin over lines, then whole
        regions and single lines from the bottom up (a use goes before its
        definition), then ddmin over tokens."""
        def with_text(text):
            files = dict(case.files)
            files[name] = text
            return case.copy(files=files)

        def fails(lines):
            return self.fails(with_text("\n".join(lines)))
        lines = case.files[name].split("\n")
        bare = [l for l in lines if l.strip() and not l.strip().startswith("//")]
        if len(bare) < len(lines) and fails(bare):
            lines = bare
        lines = self.shortest_prefix(lines, fails)
        lines = self.ddmin(lines, fails)
        lines = self.drop_from_bottom(lines, fails)
        case = with_text("\n".join(lines))
        text = case.files[name]
        lead = text[:len(text) - len(text.lstrip())]
        words = re.findall(r"\S+\s*", text)  # each with the space after it
        if len(words) <= 400:
            words = self.ddmin(words, lambda kept: self.fails(
                with_text(lead + "".join(kept))))
            trial = with_text(lead + "".join(words))
            if len(trial.files[name]) < len(text) and self.fails(trial):
                case = trial
        return case

    def shortest_prefix(self, lines, fails):
        """Binary search for the shortest prefix that still fails."""
        if len(lines) < 50:
            return lines
        low, high = 1, len(lines)
        while low < high and not self.out_of_budget():
            middle = (low + high) // 2
            if fails(lines[:middle]):
                high = middle
            else:
                low = middle + 1
        return lines[:high] if high < len(lines) and fails(lines[:high]) else lines

    def drop_from_bottom(self, lines, fails):
        """Drop regions, then lines, from the last one up, until none goes."""
        changed = True
        while changed and not self.out_of_budget():
            changed = False
            i = len(lines) - 1
            while i >= 0 and not self.out_of_budget():
                for end in (block_end(lines, i), i):
                    trial = lines[:i] + lines[end + 1:]
                    if end >= i and fails(trial):
                        lines, changed = trial, True
                        break
                i = min(i, len(lines)) - 1
        return lines

    def reduce(self, case):
        if not self.fails(case):
            return None
        case = self.reduce_args(case)
        case = self.reduce_option_items(case)
        for name in sorted(case.files):
            if not self.out_of_budget():
                case = self.reduce_file(case, name)
        case = self.reduce_args(case)
        return case


# --------------------------------------------------------------------------
# The report
# --------------------------------------------------------------------------


def command_line(tools, case):
    return " ".join(shlex.quote(a) for a in [tools[case.tool]] + case.args)


def write_cause(out, number, tools, cause):
    """cause-NN/: the reproducer's files, repro.sh, output.txt, signature.txt."""
    folder = os.path.join(out, "cause-%02d" % number)
    os.makedirs(folder, exist_ok=True)
    case = cause["reduced"] or cause["case"]
    materialize(case, folder)
    with open(os.path.join(folder, "repro.sh"), "w") as f:
        f.write("#!/bin/sh\n# %s\ncd \"$(dirname \"$0\")\" && %s\n" % (
            cause["signature"], command_line(tools, case)))
    os.chmod(os.path.join(folder, "repro.sh"), 0o755)
    with open(os.path.join(folder, "signature.txt"), "w") as f:
        f.write(cause["signature"] + "\n")
    with open(os.path.join(folder, "output.txt"), "w") as f:
        f.write(cause["output"])
    if cause["reduced"]:
        original = os.path.join(folder, "original")
        materialize(cause["case"], original)
        with open(os.path.join(original, "command.txt"), "w") as f:
            f.write(command_line(tools, cause["case"]) + "\n")
    return folder


def print_cause(number, tools, cause, folder, max_lines):
    case = cause["reduced"] or cause["case"]
    print("== cause %d: %s" % (number, cause["signature"]))
    print("   %d case(s), first: case %d (%s); %s" % (
        cause["count"], cause["case"].index, cause["case"].origin,
        "reduced in %d runs" % cause["tests"] if cause["reduced"]
        else cause.get("note", "not reduced")))
    if cause.get("where"):
        print("   stopped in %s" % cause["where"])
    print("   command (in %s):" % folder)
    print("     " + command_line(tools, case))
    for name in sorted(case.files):
        lines = case.files[name].rstrip("\n").split("\n")
        print("   %s (%d lines):" % (name, len(lines)))
        for line in lines[:max_lines]:
            print("     | " + line[:300])
        if len(lines) > max_lines:
            print("     | ... (%d more lines, see the folder)" % (
                len(lines) - max_lines))
    for d in case.dirs:
        print("   folder %s/" % d)
    sys.stdout.flush()


# --------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------


def parse_args(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bin-dir", help="folder of the three tools (build/bin)")
    for tool, name in TOOLS.items():
        p.add_argument("--" + tool, metavar="PATH",
                       help="path of %s (default: BIN_DIR/%s)" % (name, name))
    p.add_argument("--repo", default=os.path.dirname(os.path.dirname(here)),
                   help="source checkout whose tests seed the fuzzer")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--cases", type=int, default=800)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--timeout", type=float, default=20.0,
                   help="seconds per case before it is a hang")
    p.add_argument("--time-budget", type=float, default=0,
                   help="stop starting cases after this many seconds (0: none)")
    p.add_argument("--mem-limit-mb", type=int, default=4096,
                   help="RLIMIT_AS of each run")
    p.add_argument("--out", help="folder of the report (default: a new "
                   "temporary folder)")
    p.add_argument("--no-reduce", action="store_true")
    p.add_argument("--reduce-time", type=float, default=120,
                   help="seconds of reduction per cause")
    p.add_argument("--reduce-tests", type=int, default=500,
                   help="runs of reduction per cause")
    p.add_argument("--print-lines", type=int, default=40,
                   help="lines of each reduced file printed")
    p.add_argument("--only", type=int, action="append",
                   help="run only this case index (repeatable)")
    p.add_argument("--print-cases", action="store_true",
                   help="print the cases' commands and run nothing")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="print each case's verdict (and output with --only)")
    args = p.parse_args(argv)
    tools = {}
    for tool, name in TOOLS.items():
        path = getattr(args, tool) or (
            os.path.join(args.bin_dir, name) if args.bin_dir else None)
        if not path:
            p.error("give --bin-dir (or --opt, --run and --compile)")
        path = os.path.abspath(path)
        if not os.access(path, os.X_OK):
            p.error("%s is not an executable" % path)
        tools[tool] = path
    args.tools = tools
    return args


def run_cases(args, corpus, settings):
    """Run the cases in a pool; return (verdicts, cases by index, ran)."""
    indices = args.only or list(range(args.cases))
    start = time.monotonic()
    verdicts, cases = [], {}
    pending = []
    ran = 0

    def jobs():
        for i in indices:
            if args.time_budget and time.monotonic() - start > args.time_budget:
                return
            case = make_case(args.seed, i, corpus)
            cases[i] = case
            yield (case, settings)

    with Pool(args.jobs) as pool:
        for verdict in pool.imap_unordered(execute, jobs()):
            ran += 1
            verdicts.append(verdict)
            case = cases[verdict["index"]]
            if args.verbose:
                print("case %d %s %s %.1fs rc=%d %s" % (
                    verdict["index"], TOOLS[case.tool], verdict["kind"],
                    verdict["seconds"], verdict["rc"], case.origin))
                if args.only:
                    print("  " + command_line(args.tools, case))
                    print(verdict.get("output", ""))
            if ran % 1000 == 0:
                print("fuzz: %d cases done, %d failing, %.0fs" % (
                    ran, sum(v["kind"] != "ok" for v in verdicts),
                    time.monotonic() - start))
            if verdict["kind"] != "ok" and verdict["signature"] not in pending:
                pending.append(verdict["signature"])
                print("fuzz: case %d: %s" % (verdict["index"],
                                             verdict["signature"]))
            sys.stdout.flush()
    del pending
    return verdicts, cases, ran


def main(argv=None):
    args = parse_args(argv if argv is not None else sys.argv[1:])
    os.environ.setdefault("LLVM_SYMBOLIZER_PATH",
                          shutil.which("llvm-symbolizer") or "")
    if not os.environ["LLVM_SYMBOLIZER_PATH"]:
        del os.environ["LLVM_SYMBOLIZER_PATH"]
    work = tempfile.mkdtemp(prefix="tiled-attn-fuzz-work-")
    try:
        begin = time.monotonic()
        corpus = Corpus(args.repo, args.tools, work)
        print("fuzz: %s (%.1fs)" % (corpus.describe(), time.monotonic() - begin))
        if not corpus.tile or not corpus.passes or not corpus.library_names:
            print("fuzz: error: no tile kernels, passes or library kernels to "
                  "start from; are --repo and the tools right?")
            return 2
        if args.print_cases:
            for i in args.only or range(args.cases):
                case = make_case(args.seed, i, corpus)
                print("case %d [%s] %s" % (i, case.origin,
                                           command_line(args.tools, case)))
            return 0
        settings = {"tools": args.tools, "timeout": args.timeout,
                    "mem_mb": args.mem_limit_mb, "work": work,
                    "keep_output": bool(args.only and args.verbose)}
        verdicts, cases, ran = run_cases(args, corpus, settings)
        return report(args, corpus, settings, verdicts, cases, ran,
                      time.monotonic() - begin)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def confirm_hangs(args, settings, causes):
    """Run up to three cases of each hang alone with twice the timeout; a
    cause none of whose cases hangs again is slow (the machine's load), not
    a failure. Returns the (signature, case) of the slow ones."""
    slow = []
    alone = dict(settings, timeout=2 * args.timeout)
    for signature in list(causes):
        cause = causes[signature]
        if cause["kind"] != "hang":
            continue
        for case in cause["cases"][:3]:
            verdict = execute((case, alone))
            if verdict["kind"] == "hang":
                cause["case"], cause["output"] = case, verdict.get("output", "")
                break
        else:
            slow.append((signature, cause["case"]))
            del causes[signature]
    return slow


def report(args, corpus, settings, verdicts, cases, ran, seconds):
    """Group the failures into causes, reduce them, print; the exit status."""
    per_tool = {}
    for v in verdicts:
        tool = cases[v["index"]].tool
        per_tool[tool] = per_tool.get(tool, 0) + 1
    causes = {}
    upstream = {}
    for v in sorted(verdicts, key=lambda v: v["index"]):
        if v["kind"] == "ok":
            continue
        if v["kind"] == "upstream":
            upstream.setdefault(v["signature"], []).append(v["index"])
            continue
        cause = causes.setdefault(v["signature"], {
            "signature": v["signature"], "core": v["core"], "kind": v["kind"],
            "count": 0, "case": cases[v["index"]], "output": v.get("output", ""),
            "reduced": None, "tests": 0, "cases": [], "where": v.get("where")})
        cause["count"] += 1
        cause["cases"].append(cases[v["index"]])
    slow = confirm_hangs(args, settings, causes)
    failures = sum(c["count"] for c in causes.values())
    for signature, case in slow:
        print("fuzz: slow, not a hang: case %d (%s) ran past %gs among the "
              "others but finished alone within %gs" % (
                  case.index, signature, args.timeout, 2 * args.timeout))
    print("fuzz: ran %d of %d cases in %.0fs: %s" % (
        ran, len(args.only or range(args.cases)), seconds, ", ".join(
            "%s %d" % (TOOLS[t], n) for t, n in sorted(per_tool.items()))))
    for signature, indices in upstream.items():
        print("fuzz: upstream, not ours: %d case(s), first case %d (%s): %s" % (
            len(indices), indices[0], signature,
            upstream_cause(signature) or "see UPSTREAM_CAUSES"))
    if causes:
        out = args.out or tempfile.mkdtemp(prefix="tiled-attn-fuzz-")
        os.makedirs(out, exist_ok=True)
        for number, cause in enumerate(causes.values(), 1):
            if not args.no_reduce:
                reduce_time = args.reduce_time
                if cause["kind"] == "hang":
                    reduce_time = min(reduce_time, 6 * args.timeout)
                reducer = Reducer(settings, cause["core"],
                                  time.monotonic() + reduce_time,
                                  args.reduce_tests)
                cause["reduced"] = reducer.reduce(cause["case"])
                cause["tests"] = reducer.tests
                if cause["reduced"] is None:
                    cause["note"] = "did not fail again alone (flaky, or " \
                                    "it needs the load of the others)"
            folder = write_cause(out, number, args.tools, cause)
            print_cause(number, args.tools, cause, folder, args.print_lines)
        print("fuzz: reproducers in %s" % out)
    print("fuzz: %d cases (seed %d), %d failures in %d distinct causes" % (
        ran, args.seed, failures, len(causes)))
    return 1 if causes else 0


if __name__ == "__main__":
    sys.exit(main())
