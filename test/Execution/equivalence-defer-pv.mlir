// tile-defer-pv moves each block's rescale and P.V one iteration later; it
// computes the same values with the same operations, so the deferred kernel
// must give the same output as the one it came from, bit for bit
// (--compare-with at its default tolerance of 0). The shapes include loops
// that run zero times (the scf.if's else side), once (prologue and epilogue
// only) and many times, with every schedule the deferral meets in the
// library: the mask split (two rotated loops, the first handing its K/V
// blocks in flight to the second), masked-first, prefetch of 2 and 3
// stages, exp2, lazy rescale with and without its CTA-wide guard.

// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=64 block-m=64 block-n=32" -o %t.before.mlir
// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=64 block-m=64 block-n=32" --tile-defer-pv -o %t.after.mlir
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.after.mlir --shapes=1x1,17x17,100x37,37x100,5x3,130x257 | FileCheck %s

// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=128 block-m=128 block-n=128 variant=top_left" --tile-schedule="exp2=1 mask-split=1 stages=2" -o %t.before.mlir
// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=128 block-m=128 block-n=128 variant=top_left" --tile-schedule="exp2=1 mask-split=1 stages=2 defer-pv=1" -o %t.after.mlir
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.after.mlir --shapes=1x1,17x17,100x37,37x100,5x3,130x257 | FileCheck %s

// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=bf16 head-dim=64 block-m=32 block-n=16 variant=bottom_right" --tile-schedule="mask-split=1 lazy-rescale=8" -o %t.before.mlir
// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=bf16 head-dim=64 block-m=32 block-n=16 variant=bottom_right" --tile-schedule="mask-split=1 lazy-rescale=8 defer-pv=1" -o %t.after.mlir
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.after.mlir --shapes=1x1,17x17,100x37,37x100,5x3,130x257 | FileCheck %s

// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=64 block-m=32 block-n=16 variant=top_left" --tile-schedule="exp2=1 mask-split=1 masked-first=1 stages=3 lazy-rescale=8 lazy-rescale-guard=0" -o %t.before.mlir
// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=64 block-m=32 block-n=16 variant=top_left" --tile-schedule="exp2=1 mask-split=1 masked-first=1 stages=3 lazy-rescale=8 lazy-rescale-guard=0 defer-pv=1" -o %t.after.mlir
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.after.mlir --shapes=1x1,17x17,100x37,37x100,5x3,130x257 | FileCheck %s

// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=bf16 head-dim=64 block-m=64 block-n=64" --tile-schedule="exp2=1 mask-split=1 stages=2 defer-pv=1" -o %t.after.mlir
// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=bf16 head-dim=64 block-m=64 block-n=64" --tile-schedule="exp2=1 mask-split=1 stages=2" -o %t.before.mlir
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.after.mlir --shapes=257x257 --batch=1 --heads=2 | FileCheck %s --check-prefix=BIG

// CHECK-COUNT-6: diff=0.000e+00 (tol 0.0e+00) PASS
// CHECK: 6 passed, 0 failed
// BIG: diff=0.000e+00 (tol 0.0e+00) PASS
// BIG: 1 passed, 0 failed
