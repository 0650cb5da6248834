// Host execution of generated f16 SDPA kernels against a float64 reference
// (relative L2 within 2e-3 for f16 and 1e-2 for bf16), on the shapes that
// break kernels: length 1, lengths that are not a multiple of the block,
// S_q != S_k both ways, and a non-contiguous (bshd) layout.

// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=64" | tiled-attn-run | FileCheck %s
// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=64 variant=top_left" | tiled-attn-run | FileCheck %s
// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=64 variant=bottom_right" | tiled-attn-run | FileCheck %s
// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=128 block-m=128 block-n=64" | tiled-attn-run | FileCheck %s
// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=128 variant=top_left block-m=128 block-n=64" | tiled-attn-run | FileCheck %s
// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=128 variant=bottom_right block-m=32 block-n=16" | tiled-attn-run | FileCheck %s

// Blocks that are multiples of 16 but not powers of two (FlashAttention-3's
// 192-row and 176-key blocks, and blocks no length here is a multiple of).
// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=64 block-m=48 block-n=80" | tiled-attn-run | FileCheck %s
// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=64 variant=top_left block-m=192 block-n=128" | tiled-attn-run | FileCheck %s
// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=128 variant=bottom_right block-m=128 block-n=176" | tiled-attn-run | FileCheck %s

// The decomposed online softmax computes the same thing.
// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=64 variant=top_left" --tile-decompose-online-softmax | tiled-attn-run | FileCheck %s
// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=128 variant=bottom_right" --tile-decompose-online-softmax | tiled-attn-run | FileCheck %s

// Strided (bshd) tensors, one batch and one head, and a large scale.
// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=64 variant=top_left" | tiled-attn-run --layout=bshd | FileCheck %s
// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=64" | tiled-attn-run --batch=1 --heads=1 --scale=0.5 | FileCheck %s

// Grouped KV heads (6 query heads on 2 K/V heads, and multi-query, 4 on 1), against
// the reference's K/V head h / (H / H_kv), plain and scheduled (the
// schedules move the loads; the K/V head goes with them), and bshd.
// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=64 variant=top_left" | tiled-attn-run --heads=6 --kv-heads=2 | FileCheck %s --check-prefixes=CHECK,GQA
// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=128 block-m=128 block-n=64" | tiled-attn-run --heads=4 --kv-heads=1 --layout=bshd | FileCheck %s --check-prefixes=CHECK,MQA
// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=64 variant=top_left block-m=128 block-n=64" --tile-schedule="exp2=1 lazy-rescale=8 mask-split=1 stages=2 heavy-first=1 heavy-first-heads=2" | tiled-attn-run --heads=6 --kv-heads=3 | FileCheck %s --check-prefixes=CHECK,GQA3
// GQA: H=6 Hkv=2
// MQA: H=4 Hkv=1
// GQA3: H=6 Hkv=3

// CHECK-NOT: FAIL
// CHECK: Sq=1 Sk=1 {{.*}} PASS
// CHECK: Sq=17 Sk=17 {{.*}} PASS
// CHECK: Sq=64 Sk=64 {{.*}} PASS
// CHECK: Sq=100 Sk=100 {{.*}} PASS
// CHECK: Sq=257 Sk=257 {{.*}} PASS
// CHECK: Sq=100 Sk=37 {{.*}} PASS
// CHECK: Sq=37 Sk=100 {{.*}} PASS
// CHECK: {{^}}7 passed, 0 failed
