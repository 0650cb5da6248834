// RUN: tiled-attn-opt %s --tile-generate-split-merge="head-dim-v=128 dtype=bf16" | FileCheck %s
// RUN: not tiled-attn-opt %s --tile-generate-split-merge="head-dim-v=96 block-d=64" 2>&1 | FileCheck %s --check-prefix=BLOCK-D
// RUN: not tiled-attn-opt %s --tile-generate-split-merge="dtype=f32" 2>&1 | FileCheck %s --check-prefix=DTYPE

// The merge of a split-KV kernel's chunks: the partial outputs and
// log-sum-exps (head index h * num_splits + s), the largest log-sum-exp
// and the sum of the weights per row, then per 64 columns the weighted
// sum of the chunks' outputs; o and lse out.

// CHECK-LABEL: func.func @split_merge(
// CHECK-SAME: %[[OP:[^:]*]]: !tile.view<?x?x?x128xf32> {tile.arg = #tile.arg<o_partial>}
// CHECK-SAME: %[[LP:[^:]*]]: !tile.view<?x?x?xf32> {tile.arg = #tile.arg<lse_partial>}
// CHECK-SAME: %[[S:[^:]*]]: index {tile.arg = #tile.arg<num_splits>}
// CHECK-SAME: %[[O:[^:]*]]: !tile.view<?x?x?x128xbf16> {tile.arg = #tile.arg<o>}
// CHECK-SAME: %[[LSE:[^:]*]]: !tile.view<?x?x?xf32> {tile.arg = #tile.arg<lse>})
// CHECK: %[[H:.*]] = tile.block_id y
// CHECK: %[[FIRST:.*]] = arith.muli %[[H]], %[[S]]
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[S]]
// CHECK: tile.gather %[[LP]]
// CHECK: arith.maximumf
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[S]]
// CHECK: math.exp
// CHECK-COUNT-2: tile.store %{{.*}}, %[[O]]
// CHECK: tile.store %{{.*}}, %[[LSE]]

// BLOCK-D: error: block_m must be a multiple of 16 in [16, 256], block_d a multiple of 8 dividing head_dim_v (at most 256); got block_m 16, block_d 64, head_dim_v 96
// DTYPE: error: tile-generate-split-merge: dtype must be f16 or bf16, got 'f32'
