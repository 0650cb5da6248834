// Host execution of generated bf16 SDPA kernels against a float64 reference
// (relative L2 within 2e-3 for f16 and 1e-2 for bf16), on the shapes that
// break kernels: length 1, lengths that are not a multiple of the block,
// S_q != S_k both ways, and a non-contiguous (bshd) layout.

// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=bf16 head-dim=64" | tiled-attn-run | FileCheck %s
// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=bf16 head-dim=64 variant=top_left" | tiled-attn-run | FileCheck %s
// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=bf16 head-dim=64 variant=bottom_right" | tiled-attn-run | FileCheck %s
// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=bf16 head-dim=128 block-m=128 block-n=64" | tiled-attn-run | FileCheck %s
// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=bf16 head-dim=128 variant=top_left block-m=128 block-n=64" | tiled-attn-run | FileCheck %s
// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=bf16 head-dim=128 variant=bottom_right block-m=32 block-n=16" | tiled-attn-run | FileCheck %s

// The decomposed online softmax computes the same thing.
// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=bf16 head-dim=64 variant=top_left" --tile-decompose-online-softmax | tiled-attn-run | FileCheck %s
// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=bf16 head-dim=128 variant=bottom_right" --tile-decompose-online-softmax | tiled-attn-run | FileCheck %s

// Strided (bshd) tensors, one batch and one head, and a large scale.
// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=bf16 head-dim=64 variant=top_left" | tiled-attn-run --layout=bshd | FileCheck %s
// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=bf16 head-dim=64" | tiled-attn-run --batch=1 --heads=1 --scale=0.5 | FileCheck %s

// CHECK-NOT: FAIL
// CHECK: Sq=1 Sk=1 {{.*}} PASS
// CHECK: Sq=17 Sk=17 {{.*}} PASS
// CHECK: Sq=64 Sk=64 {{.*}} PASS
// CHECK: Sq=100 Sk=100 {{.*}} PASS
// CHECK: Sq=257 Sk=257 {{.*}} PASS
// CHECK: Sq=100 Sk=37 {{.*}} PASS
// CHECK: Sq=37 Sk=100 {{.*}} PASS
// CHECK: {{^}}7 passed, 0 failed
