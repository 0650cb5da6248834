// tile-exp2 computes the same attention up to rounding: the kernel after it
// is run on the same random inputs as the kernel before it, and the two
// outputs must agree (relative L2) within a tolerance about 4x the largest
// difference measured over f16/bf16, D = 64/128, every causal mode and
// several block sizes (seeds 0-2, batch 1, 2 heads): 2.95e-5 for f16 and
// 1.13e-4 for bf16. Both kernels must also pass the float64 reference.

// DEFINE: %{f16} = --shapes=1x1,17x17,100x37,37x100,257x257 --batch=1 --heads=2 --equivalence-tolerance=1.2e-4
// DEFINE: %{bf16} = --shapes=1x1,17x17,100x37,37x100,257x257 --batch=1 --heads=2 --equivalence-tolerance=4.5e-4

// f16
// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=64" -o %t.before.mlir
// RUN: tiled-attn-opt %t.before.mlir --tile-exp2 -o %t.after.mlir
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.after.mlir %{f16} | FileCheck %s

// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=64 variant=top_left block-m=32 block-n=16" -o %t.before.mlir
// RUN: tiled-attn-opt %t.before.mlir --tile-exp2 -o %t.after.mlir
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.after.mlir %{f16} | FileCheck %s

// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=128 variant=bottom_right block-m=128 block-n=64" -o %t.before.mlir
// RUN: tiled-attn-opt %t.before.mlir --tile-exp2 -o %t.after.mlir
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.after.mlir %{f16} | FileCheck %s

// Decomposed (math.fma and math.exp2), against the undecomposed original.
// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=128 variant=top_left block-m=64 block-n=32" -o %t.before.mlir
// RUN: tiled-attn-opt %t.before.mlir --tile-exp2 --tile-decompose-online-softmax -o %t.after.mlir
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.after.mlir %{f16} | FileCheck %s

// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=64 variant=bottom_right" -o %t.before.mlir
// RUN: tiled-attn-opt %t.before.mlir --tile-exp2 --tile-decompose-online-softmax -o %t.after.mlir
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.after.mlir %{f16} --layout=bshd | FileCheck %s

// bf16
// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=bf16 head-dim=64 block-m=128 block-n=32" -o %t.before.mlir
// RUN: tiled-attn-opt %t.before.mlir --tile-exp2 -o %t.after.mlir
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.after.mlir %{bf16} | FileCheck %s

// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=bf16 head-dim=128 variant=top_left" -o %t.before.mlir
// RUN: tiled-attn-opt %t.before.mlir --tile-exp2 -o %t.after.mlir
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.after.mlir %{bf16} | FileCheck %s

// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=bf16 head-dim=64 variant=bottom_right block-m=32 block-n=16" -o %t.before.mlir
// RUN: tiled-attn-opt %t.before.mlir --tile-exp2 -o %t.after.mlir
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.after.mlir %{bf16} | FileCheck %s

// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=bf16 head-dim=128" -o %t.before.mlir
// RUN: tiled-attn-opt %t.before.mlir --tile-exp2 --tile-decompose-online-softmax -o %t.after.mlir
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.after.mlir %{bf16} | FileCheck %s

// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=bf16 head-dim=128 variant=bottom_right block-m=32 block-n=16" -o %t.before.mlir
// RUN: tiled-attn-opt %t.before.mlir --tile-exp2 --tile-decompose-online-softmax -o %t.after.mlir
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.after.mlir %{bf16} | FileCheck %s

// The kernels differ (the transform did something) but stay within the
// tolerance.
// CHECK-NOT: FAIL
// CHECK: Sq=1 Sk=1 {{.*}} PASS
// CHECK: Sq=17 Sk=17 {{.*}} PASS
// CHECK: Sq=100 Sk=37 {{.*}} PASS
// CHECK: Sq=37 Sk=100 {{.*}} PASS
// CHECK: Sq=257 Sk=257 {{.*}} diff={{[1-9]}}{{.*}} PASS
// CHECK: {{^}}5 passed, 0 failed
