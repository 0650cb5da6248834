// Split-KV kernels (`tile-generate-sdpa{variant=none_lse_split}`): program
// (m, h * splits + s, b) attends to the s-th chunk of the keys (whole key
// blocks) and writes its output, normalized by its own sum, in f32, and its
// log-sum-exps; tiled-attn-run merges the chunks in float64 (weights
// exp(lse_s - lse)) and checks the result and its log-sum-exps against the
// float64 reference. Chunks past the last key (S_k = 1 with 3 splits; 129
// keys in 5 blocks with 7 splits) see no key: -inf and zeros, which the
// merge ignores. Grouped KV heads take the K/V head of the query head, not
// of the (head, chunk) index; before and after the library's schedules.

// DEFINE: %{shapes} = 1x1,1x300,3x100,5x129,64x257,17x17

// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=64 block-m=32 block-n=16 variant=none_lse_split" -o %t.f16.mlir
// RUN: tiled-attn-opt %t.f16.mlir --tile-schedule="exp2=1 lazy-rescale=8 lazy-rescale-guard=0 mask-split=1 stages=2 refill-after-use=1" -o %t.f16s.mlir
// RUN: tiled-attn-run %t.f16.mlir --compare-with=%t.f16s.mlir --equivalence-tolerance=2e-3 --shapes=%{shapes} --batch=2 --heads=4 --kv-heads=2 --splits=3 | FileCheck %s
// RUN: tiled-attn-run %t.f16s.mlir --shapes=%{shapes} --batch=1 --heads=2 --splits=7 | FileCheck %s

// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=bf16 head-dim=128 block-m=64 block-n=64 variant=none_lse_split" -o %t.bf16.mlir
// RUN: tiled-attn-opt %t.bf16.mlir --tile-schedule="exp2=1 mask-split=1 stages=2 defer-pv=1" -o %t.bf16s.mlir
// RUN: tiled-attn-run %t.bf16.mlir --compare-with=%t.bf16s.mlir --equivalence-tolerance=1e-2 --shapes=%{shapes} --batch=1 --heads=8 --kv-heads=2 --splits=4 | FileCheck %s
// One split is the plain kernel.
// RUN: tiled-attn-run %t.bf16s.mlir --shapes=%{shapes} --batch=2 --heads=2 --splits=1 | FileCheck %s

// CHECK: lse_err=
// CHECK-NOT: FAIL
// CHECK: {{^}}6 passed, 0 failed
