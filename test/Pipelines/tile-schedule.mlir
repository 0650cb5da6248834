// The tile-schedule pipeline takes every knob in one option string, and the
// kernel's #tile.sdpa attribute reports the schedule it now carries.

// RUN: tiled-attn-opt %s --tile-generate-sdpa="head-dim=64 variant=top_left" \
// RUN:   --tile-schedule="block-m=128 block-n=32 mask-split=1 exp2=1 lazy-rescale=8 stages=2" \
// RUN:   | FileCheck %s --check-prefix=ALL
// ALL: tile.sdpa = #tile.sdpa<head_dim = 64, element_type = f16, causal = top_left, block_m = 128, block_n = 32, stages = 2, mask_split = true, exp2 = true, rescale_threshold = 8>
// Two loops (the mask split), each pipelined (two more tiles carried).
// ALL-COUNT-2: scf.for {{.*}} -> (tensor<128xf32>, tensor<128xf32>, tensor<128x64xf32>, tensor<64x32xf16>, tensor<32x64xf16>)
// The online softmax is decomposed, with exp2 and the lazy-rescale guard.
// ALL-NOT: tile.online_softmax
// ALL: math.exp2
// ALL: scf.if

// A mask split marks the unmasked loop's K and V loads in_bounds, unless
// in-bounds-loads=0.
// RUN: tiled-attn-opt %s --tile-generate-sdpa="head-dim=64" --tile-schedule="mask-split=1" \
// RUN:   | FileCheck %s --check-prefix=IN-BOUNDS
// IN-BOUNDS: mask_split = true
// IN-BOUNDS-COUNT-2: tile.load {{.*}} in_bounds
// IN-BOUNDS-NOT: in_bounds
// RUN: tiled-attn-opt %s --tile-generate-sdpa="head-dim=64" \
// RUN:   --tile-schedule="mask-split=1 masked-first=1 stages=2 refill-after-use=1 prefetch-streams=1" \
// RUN:   | FileCheck %s --check-prefix=MASKED-FIRST
// masked-first: the masked loop, then the unmasked one, whose K refill stays
// in bounds (clamped to its last block).
// MASKED-FIRST: scf.for
// MASKED-FIRST: tile.bounds_mask
// MASKED-FIRST: scf.for
// MASKED-FIRST-NOT: tile.bounds_mask
// MASKED-FIRST: arith.minsi
// MASKED-FIRST: tile.load {{.*}} transpose in_bounds
// MASKED-FIRST-NOT: tile.bounds_mask
// MASKED-FIRST: return
// RUN: tiled-attn-opt %s --tile-generate-sdpa="head-dim=64" --tile-schedule="mask-split=1 in-bounds-loads=0" \
// RUN:   | FileCheck %s --check-prefix=CHECKED
// CHECKED: mask_split = true
// CHECKED-NOT: in_bounds

// The defaults change nothing but decompose.
// RUN: tiled-attn-opt %s --tile-generate-sdpa="head-dim=64" --tile-schedule \
// RUN:   | FileCheck %s --check-prefix=DEFAULT
// DEFAULT: tile.sdpa = #tile.sdpa<head_dim = 64, element_type = f16, causal = none, block_m = 64, block_n = 64>
// DEFAULT-NOT: tile.online_softmax
// DEFAULT: math.exp

// Without decomposition the first-class op stays for later schedules.
// RUN: tiled-attn-opt %s --tile-generate-sdpa="head-dim=64" --tile-schedule="decompose=0 exp2=1" \
// RUN:   | FileCheck %s --check-prefix=KEEP
// KEEP: tile.online_softmax {{.*}} exp2

// Illegal values are reported before the pipeline runs (TileScheduleOptions::verify).
// RUN: not tiled-attn-opt %s --tile-generate-sdpa="head-dim=64" --tile-schedule="block-m=24" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BAD-M
// BAD-M: error: tile-schedule: block-m must be 0 (the kernel's) or a multiple of 16 in [16, 256], got 24
// RUN: not tiled-attn-opt %s --tile-generate-sdpa="head-dim=64" --tile-schedule="stages=7" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BAD-STAGES
// BAD-STAGES: error: tile-schedule: stages must be in [1, 4], got 7
// RUN: not tiled-attn-opt %s --tile-generate-sdpa="head-dim=64" --tile-schedule="lazy-rescale=20" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BAD-LAZY
// BAD-LAZY: error: tile-schedule: lazy-rescale must be in [1, 16], got 20
