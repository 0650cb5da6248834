// Per-entry key lengths (`seqused`, a KV cache's filled length,
// FlashAttention's seqused_k): batch entry b attends to its first
// seqused_k[b] keys. tiled-attn-run gives the first entry all S_k keys, the
// second none (its rows are zeros, log-sum-exps -inf), the third one key
// and the others random lengths, and checks against the float64 reference
// that sees only those keys. Bottom-right causal aligns by each entry's own
// length (decoding a batch of caches of different fill); with split-KV the
// chunks divide the used keys (chunks past them see none); GQA; before and
// after the library's schedules.

// DEFINE: %{shapes} = 1x1,1x300,3x100,5x129,64x257,17x17

// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=64 block-m=32 block-n=16 variant=none_seqused" -o %t.none.mlir
// RUN: tiled-attn-opt %t.none.mlir --tile-schedule="exp2=1 lazy-rescale=8 lazy-rescale-guard=0 mask-split=1 stages=2 refill-after-use=1" -o %t.nones.mlir
// RUN: tiled-attn-run %t.none.mlir --compare-with=%t.nones.mlir --equivalence-tolerance=2e-3 --shapes=%{shapes} --batch=5 --heads=4 --kv-heads=2 | FileCheck %s

// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=bf16 head-dim=64 block-m=32 block-n=32 variant=bottom_right_seqused" -o %t.br.mlir
// RUN: tiled-attn-opt %t.br.mlir --tile-schedule="exp2=1 mask-split=1 stages=2" -o %t.brs.mlir
// RUN: tiled-attn-run %t.br.mlir --compare-with=%t.brs.mlir --equivalence-tolerance=1e-2 --shapes=%{shapes} --batch=4 --heads=2 | FileCheck %s

// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=64 block-m=32 block-n=16 variant=none_lse_split_seqused" -o %t.split.mlir
// RUN: tiled-attn-opt %t.split.mlir --tile-schedule="exp2=1 mask-split=1 stages=2 defer-pv=1" -o %t.splits.mlir
// RUN: tiled-attn-run %t.split.mlir --compare-with=%t.splits.mlir --equivalence-tolerance=2e-3 --shapes=%{shapes} --batch=5 --heads=4 --kv-heads=1 --splits=3 | FileCheck %s --check-prefixes=CHECK,LSE

// The generator refuses a window (its band would follow the longest length).
// RUN: not tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=64 variant=window_seqused" 2>&1 | FileCheck %s --check-prefix=WINDOW
// WINDOW: a seqused kernel takes no window

// LSE: lse_err=
// CHECK-NOT: FAIL
// CHECK: {{^}}6 passed, 0 failed
module {}
