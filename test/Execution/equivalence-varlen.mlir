// Variable-length batches (`tile-generate-sdpa{varlen}`): the sequences of
// --shapes packed into [total, H, D] tensors (with three rows past the last
// sequence, which must stay unwritten), each compared with the float64
// reference of it alone, before and after the library's schedules. The
// sequences include an empty one (0x5), one with no keys (1x0), more keys
// than queries and fewer; grouped K/V heads, bottom-right causal (each
// sequence's own S_k - S_q), windows of both alignments (window_align),
// softcap and the log-sum-exps (asked for, and not: a view of no rows).

// DEFINE: %{seqs} = 17x17,0x5,40x23,1x0,33x50,64x64

// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=32 block-m=32 block-n=16 variant=none_varlen" -o %t.none.mlir
// RUN: tiled-attn-opt %t.none.mlir --tile-schedule="exp2=1 lazy-rescale=8 lazy-rescale-guard=0 mask-split=1 stages=2 refill-after-use=1" -o %t.none2.mlir
// RUN: tiled-attn-run %t.none.mlir --compare-with=%t.none2.mlir --equivalence-tolerance=2e-3 --shapes=%{seqs} --heads=4 --kv-heads=2 | FileCheck %s

// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=bf16 head-dim=32 block-m=32 block-n=16 variant=bottom_right_varlen" -o %t.br.mlir
// RUN: tiled-attn-opt %t.br.mlir --tile-schedule="exp2=1 mask-split=1 stages=2" -o %t.br2.mlir
// RUN: tiled-attn-run %t.br.mlir --compare-with=%t.br2.mlir --equivalence-tolerance=1e-2 --shapes=%{seqs} --heads=2 | FileCheck %s

// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=32 block-m=32 block-n=16 variant=window_softcap_lse_varlen" -o %t.window.mlir
// RUN: tiled-attn-opt %t.window.mlir --tile-schedule="exp2=1 lazy-rescale=8 lazy-rescale-guard=0 mask-split=1 masked-first=1 stages=2" -o %t.window2.mlir
// RUN: tiled-attn-run %t.window.mlir --compare-with=%t.window2.mlir --equivalence-tolerance=2e-3 --shapes=%{seqs} --heads=2 --softcap=2 --window=20,0 --window-causal | FileCheck %s --check-prefixes=CHECK,LSE
// RUN: tiled-attn-run %t.window.mlir --compare-with=%t.window2.mlir --equivalence-tolerance=2e-3 --shapes=%{seqs} --heads=2 --softcap=30 --window=-1,-1 --window-causal --window-align=bottom-right | FileCheck %s --check-prefixes=CHECK,LSE
// RUN: tiled-attn-run %t.window.mlir --compare-with=%t.window2.mlir --equivalence-tolerance=2e-3 --shapes=%{seqs} --heads=2 --softcap=30 --window=3,5 --window-align=bottom-right | FileCheck %s --check-prefixes=CHECK,LSE

// CHECK: varlen H={{.*}} seqs=17x17,0x5,40x23,1x0,33x50,64x64
// LSE-SAME: lse_err=
// CHECK-SAME: vs sdpa_fwd: diff={{.*}} PASS

// A kernel that is not varlen computes something else: refused.
// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=32 block-m=32 block-n=16" -o %t.plain.mlir
// RUN: not tiled-attn-run %t.none.mlir --compare-with=%t.plain.mlir --shapes=%{seqs} 2>&1 | FileCheck %s --check-prefix=OTHER
// OTHER: computes something else than the kernel it is compared with

// --batch and --layout do not apply to packed sequences.
// RUN: not tiled-attn-run %t.none.mlir --shapes=%{seqs} --batch=2 2>&1 | FileCheck %s --check-prefix=BATCH
// BATCH: a varlen kernel runs the sequences of --shapes packed ([total, H, D]); --batch and --layout do not apply

// The varlen kernels refuse the schedules that need the grid's lengths.
// RUN: not tiled-attn-opt %t.br.mlir --tile-heavy-first 2>&1 | FileCheck %s --check-prefix=HEAVY
// HEAVY: tile-heavy-first: does not reorder a varlen kernel's programs
// RUN: not tiled-attn-opt %t.none.mlir --tile-retile=block-m=64 2>&1 | FileCheck %s --check-prefix=RETILE
// RETILE: tile-retile: varlen kernels are not supported
