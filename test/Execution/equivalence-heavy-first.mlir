// tile-heavy-first permutes the programs of a causal kernel (query blocks
// counted downwards, heads innermost, optionally a group of heads at a time),
// so the output must be the same bit for bit: each kernel runs before and
// after the pass on the same random inputs (diff=0; both are also checked
// against the float64 reference). B = 2 and H = 3 make B * H = 6 programs per
// query block: head groups of 2 divide it, groups of 4 leave a smaller last
// group, groups of 8 are larger than the grid. Shapes: one block, a partial
// last block, S_q != S_k both ways, and bottom-right alignment with rows that
// see no key.

// DEFINE: %{shapes} = 1x1,17x17,100x100,257x257,100x37,37x100,300x5

// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=64 variant=top_left block-m=64 block-n=32" -o %t.before.mlir
// RUN: tiled-attn-opt %t.before.mlir --tile-mask-split --tile-heavy-first -o %t.after.mlir
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.after.mlir --shapes=%{shapes} --batch=2 --heads=3 | FileCheck %s
// RUN: tiled-attn-opt %t.before.mlir --tile-heavy-first="head-group=2" -o %t.after.mlir
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.after.mlir --shapes=%{shapes} --batch=2 --heads=3 | FileCheck %s
// RUN: tiled-attn-opt %t.before.mlir --tile-heavy-first="head-group=4" -o %t.after.mlir
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.after.mlir --shapes=%{shapes} --batch=2 --heads=3 | FileCheck %s
// RUN: tiled-attn-opt %t.before.mlir --tile-heavy-first="head-group=8" -o %t.after.mlir
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.after.mlir --shapes=%{shapes} --batch=2 --heads=3 | FileCheck %s

// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=bf16 head-dim=64 variant=bottom_right block-m=32 block-n=64" -o %t.before.mlir
// RUN: tiled-attn-opt %t.before.mlir --tile-heavy-first="head-group=4" -o %t.after.mlir
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.after.mlir --shapes=%{shapes} --batch=2 --heads=3 | FileCheck %s

// all-masks: a kernel without a causal mask, its query blocks upwards with
// the heads innermost.
// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=64 variant=none block-m=32 block-n=32" -o %t.before.mlir
// RUN: tiled-attn-opt %t.before.mlir --tile-heavy-first="all-masks=1" -o %t.after.mlir
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.after.mlir --shapes=%{shapes} --batch=2 --heads=3 | FileCheck %s

// The schedule pipeline's knobs.
// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=64 variant=top_left" -o %t.before.mlir
// RUN: tiled-attn-opt %t.before.mlir --tile-schedule="block-m=128 mask-split=1 exp2=1 heavy-first=1 heavy-first-heads=4 stages=2 refill-after-use=1" -o %t.after.mlir
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.after.mlir --shapes=%{shapes} --batch=2 --heads=3 --equivalence-tolerance=1e-3 | FileCheck %s --check-prefix=SCHED
// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=64 variant=none" -o %t.before.mlir
// RUN: tiled-attn-opt %t.before.mlir --tile-schedule="block-m=64 mask-split=1 exp2=1 heavy-first=1 heavy-first-all-masks=1 stages=2" -o %t.after.mlir
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.after.mlir --shapes=%{shapes} --batch=2 --heads=3 --equivalence-tolerance=1e-3 | FileCheck %s --check-prefix=SCHED
// RUN: FileCheck %s --check-prefix=SCHED-ORDER --input-file=%t.after.mlir
// SCHED-ORDER: arith.remui

// CHECK-COUNT-7: diff=0.000e+00 {{.*}}PASS
// CHECK: {{^}}7 passed, 0 failed
// SCHED-COUNT-7: PASS
// SCHED: {{^}}7 passed, 0 failed
