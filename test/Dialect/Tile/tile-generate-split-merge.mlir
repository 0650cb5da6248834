// RUN: tiled-attn-opt %s --tile-generate-split-merge="head-dim-v=128 dtype=bf16" | FileCheck %s
// RUN: tiled-attn-opt %s --tile-generate-split-merge="head-dim-v=128 block-d=16 dtype=bf16" | FileCheck %s --check-prefix=NARROW
// RUN: not tiled-attn-opt %s --tile-generate-split-merge="head-dim-v=96 block-d=64" 2>&1 | FileCheck %s --check-prefix=BLOCK-D
// RUN: not tiled-attn-opt %s --tile-generate-split-merge="dtype=f32" 2>&1 | FileCheck %s --check-prefix=DTYPE

// The merge of a split-KV kernel's chunks: program x takes row block x / 2
// and column block x % 2 (64 of D_v = 128 columns each); the partial
// outputs and log-sum-exps (head index h * num_splits + s) in one pass over
// the chunks, two a step (a step's partial outputs fill 64 registers of a
// warp's lanes: 16 x 64 f32 is 32 each; eight of 16 x 16), an online softmax over them (the running largest
// log-sum-exp, the sum of the weights and the weighted sum of the outputs,
// rescaled as the largest grows), after the split kernel's grid has ended
// (tile.wait_prior_grids: the merge is launched as its dependent); o's column block out, and lse by the
// programs of column block 0.

// CHECK-LABEL: func.func @split_merge(
// CHECK-SAME: %[[OP:[^:]*]]: !tile.view<?x?x?x128xf32> {tile.arg = #tile.arg<o_partial>}
// CHECK-SAME: %[[LP:[^:]*]]: !tile.view<?x?x?xf32> {tile.arg = #tile.arg<lse_partial>}
// CHECK-SAME: %[[S:[^:]*]]: index {tile.arg = #tile.arg<num_splits>}
// CHECK-SAME: %[[O:[^:]*]]: !tile.view<?x?x?x128xbf16> {tile.arg = #tile.arg<o>}
// CHECK-SAME: %[[LSE:[^:]*]]: !tile.view<?x?x?xf32> {tile.arg = #tile.arg<lse>})
// CHECK-NEXT: tile.wait_prior_grids
// CHECK: %[[X:.*]] = tile.block_id x
// CHECK: %[[M:.*]] = arith.divui %[[X]], %c2
// CHECK: %[[C:.*]] = arith.remui %[[X]], %c2
// CHECK: %[[H:.*]] = tile.block_id y
// CHECK: %[[FIRST:.*]] = arith.muli %[[H]], %[[S]]
// CHECK: scf.for %[[S0:.*]] = %{{.*}} to %[[S]] step %c2{{.*}} -> (tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>)
// The step's chunks' reads first (a chunk past the last reads past the
// views), then its largest log-sum-exp, the rescale and its weights.
// CHECK: %[[SI:.*]] = arith.addi %[[S0]], %c0
// CHECK: %[[VALID:.*]] = arith.cmpi ult, %[[SI]], %[[S]]
// CHECK: %[[PAST:.*]] = tile.dim %[[LP]][1]
// CHECK: %[[AT:.*]] = arith.addi %[[FIRST]], %[[SI]]
// CHECK: %[[CHUNK:.*]] = arith.select %[[VALID]], %[[AT]], %[[PAST]]
// CHECK: tile.gather %[[LP]][%{{.*}}, %[[CHUNK]],
// CHECK-COUNT-2: tile.gather %[[OP]]
// CHECK-NOT: math.exp
// CHECK-COUNT-2: arith.maximumf
// CHECK-COUNT-3: math.exp
// CHECK: scf.yield
// NARROW: scf.for {{.*}} step %c8{{.*}} -> (tensor<16xf32>, tensor<16xf32>, tensor<16x16xf32>)
// NARROW-COUNT-8: tile.gather %{{.*}} : <?x?x?x128xf32>
// CHECK-NOT: scf.for
// CHECK: tile.store %{{.*}}, %[[O]][%{{.*}}, %[[H]], %[[M]], %[[C]]]
// CHECK: scf.if
// CHECK: tile.store %{{.*}}, %[[LSE]]

// BLOCK-D: error: block_m must be a multiple of 16 in [16, 256], block_d a multiple of 8 dividing head_dim_v (at most 256); got block_m 16, block_d 64, head_dim_v 96
// DTYPE: error: tile-generate-split-merge: dtype must be f16 or bf16, got 'f32'
