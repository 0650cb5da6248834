// RUN: tiled-attn-opt %s -split-input-file --tilegpu-attach-target="chip=sm_80" \
// RUN:   --tilegpu-assign-layouts="warps=1" --convert-tile-to-tilegpu \
// RUN:   --tilegpu-merge-barriers --tilegpu-resolve-async-waits \
// RUN:   --tilegpu-allocate-memory --convert-tilegpu-to-nvvm | FileCheck %s

// tile.iota in quad fragments (mma.sync, and wgmma's, which share them):
// each register's row or column, from the lane (g = lane / 4, t = lane % 4)
// and the layout's constant offsets, plus the op's offset. Over a score
// block, dim 0 is the row and dim 1 the column of the accumulator's eight
// registers (m16n8 halves: rows g and g + 8, columns 2t, 2t + 1 and 8 more);
// a rows vector is rows g and g + 8; a columns vector 2t, 2t + 1, 2t + 8,
// 2t + 9.

// CHECK-LABEL: gpu.func @positions
// CHECK-SAME: (%[[I:[^:]*]]: index {tilegpu.param = #tilegpu.param<scalar, "arg0">}, %[[J:[^:]*]]: index
// CHECK-DAG: %[[ROWS8:.*]] = arith.constant dense<[0, 0, 8, 8, 0, 0, 8, 8]> : vector<8xindex>
// CHECK-DAG: %[[COLS8:.*]] = arith.constant dense<[0, 1, 0, 1, 8, 9, 8, 9]> : vector<8xindex>
// CHECK-DAG: %[[ROWS2:.*]] = arith.constant dense<[0, 8]> : vector<2xindex>
// CHECK-DAG: %[[COLS4:.*]] = arith.constant dense<[0, 1, 8, 9]> : vector<4xindex>
// dim 0: i + 16 * warp + g, plus each register's row offset.
// CHECK: %[[G:.*]] = arith.divui %{{.*}}, %c4 : index
// CHECK: %[[R0:.*]] = arith.addi %{{.*}}, %[[G]] : index
// CHECK: %[[QB:.*]] = arith.addi %[[I]], %[[R0]] : index
// CHECK: %[[QS:.*]] = vector.broadcast %[[QB]] : index to vector<8xindex>
// CHECK: %[[QV:.*]] = arith.addi %[[QS]], %[[ROWS8]] : vector<8xindex>
// CHECK: %[[Q:.*]] = arith.index_cast %[[QV]] : vector<8xindex> to vector<8xi32>
// dim 1: j + 2t, plus each register's column offset.
// CHECK: %[[T:.*]] = arith.remui %{{.*}}, %c4 : index
// CHECK: %[[C0:.*]] = arith.muli %[[T]], %c2 : index
// CHECK: %[[KB:.*]] = arith.addi %[[J]], %[[C0]] : index
// CHECK: %[[KS:.*]] = vector.broadcast %[[KB]] : index to vector<8xindex>
// CHECK: %[[KV:.*]] = arith.addi %[[KS]], %[[COLS8]] : vector<8xindex>
// CHECK: %[[K:.*]] = arith.index_cast %[[KV]] : vector<8xindex> to vector<8xi32>
// The rows vector, then the columns vector (no offset).
// CHECK: arith.addi %{{.*}}, %[[ROWS2]] : vector<2xindex>
// CHECK: %[[ROWS:.*]] = arith.index_cast %{{.*}} : vector<2xindex> to vector<2xi32>
// CHECK: arith.addi %{{.*}}, %[[COLS4]] : vector<4xindex>
// CHECK: %[[COLS:.*]] = arith.index_cast %{{.*}} : vector<4xindex> to vector<4xi32>
// CHECK: vector.shuffle %[[ROWS]], %[[ROWS]] [0, 0, 1, 1, 0, 0, 1, 1]
// CHECK: vector.shuffle %[[COLS]], %[[COLS]] [0, 1, 0, 1, 2, 3, 2, 3]
// CHECK: arith.subi %[[K]], %[[Q]] : vector<8xi32>
func.func @positions(%i: index, %j: index, %o: !tile.view<?x?x?x16xf32>) {
  %c0 = arith.constant 0 : index
  %q = tile.iota dim 0 offset(%i) : tensor<16x16xi32>
  %k = tile.iota dim 1 offset(%j) : tensor<16x16xi32>
  %rows = tile.iota offset(%i) : tensor<16xi32>
  %cols = tile.iota : tensor<16xi32>
  %rb = tile.broadcast %rows along 1 : tensor<16xi32> -> tensor<16x16xi32>
  %cb = tile.broadcast %cols along 0 : tensor<16xi32> -> tensor<16x16xi32>
  %d = arith.subi %k, %q : tensor<16x16xi32>
  %e = arith.addi %rb, %cb : tensor<16x16xi32>
  %s = arith.addi %d, %e : tensor<16x16xi32>
  %f = arith.sitofp %s : tensor<16x16xi32> to tensor<16x16xf32>
  tile.store %f, %o[%c0, %c0, %c0, %c0] : tensor<16x16xf32>, !tile.view<?x?x?x16xf32>
  return
}

// -----

// f32 positions: the first row or column of the lane converted once, each
// register's offset added as an f32 constant (exact below 2^24), instead of
// a conversion per register.
// CHECK-LABEL: gpu.func @float_positions
// CHECK-SAME: (%[[I:[^:]*]]: index {tilegpu.param = #tilegpu.param<scalar, "arg0">}, %[[J:[^:]*]]: index
// CHECK-DAG: %[[ROWS2:.*]] = arith.constant dense<[0.000000e+00, 8.000000e+00]> : vector<2xf32>
// CHECK-DAG: %[[COLS8:.*]] = arith.constant dense<[0.000000e+00, 1.000000e+00, 0.000000e+00, 1.000000e+00, 8.000000e+00, 9.000000e+00, 8.000000e+00, 9.000000e+00]> : vector<8xf32>
// CHECK: %[[KB:.*]] = arith.addi %[[J]], %{{.*}} : index
// CHECK: %[[KI:.*]] = arith.index_cast %[[KB]] : index to i32
// CHECK: %[[KF:.*]] = arith.sitofp %[[KI]] : i32 to f32
// CHECK: %[[KS:.*]] = vector.broadcast %[[KF]] : f32 to vector<8xf32>
// CHECK: %[[K:.*]] = arith.addf %[[KS]], %[[COLS8]] : vector<8xf32>
// CHECK: %[[QB:.*]] = arith.addi %[[I]], %{{.*}} : index
// CHECK: %[[QI:.*]] = arith.index_cast %[[QB]] : index to i32
// CHECK: %[[QF:.*]] = arith.sitofp %[[QI]] : i32 to f32
// CHECK: %[[QS:.*]] = vector.broadcast %[[QF]] : f32 to vector<2xf32>
// CHECK: %[[Q:.*]] = arith.addf %[[QS]], %[[ROWS2]] : vector<2xf32>
// CHECK: %[[QB8:.*]] = vector.shuffle %[[Q]], %[[Q]] [0, 0, 1, 1, 0, 0, 1, 1]
// CHECK: arith.subf %[[K]], %[[QB8]] : vector<8xf32>
func.func @float_positions(%i: index, %j: index, %o: !tile.view<?x?x?x16xf32>) {
  %c0 = arith.constant 0 : index
  %k = tile.iota dim 1 offset(%j) : tensor<16x16xf32>
  %rows = tile.iota offset(%i) : tensor<16xf32>
  %rb = tile.broadcast %rows along 1 : tensor<16xf32> -> tensor<16x16xf32>
  %s = arith.subf %k, %rb : tensor<16x16xf32>
  tile.store %s, %o[%c0, %c0, %c0, %c0] : tensor<16x16xf32>, !tile.view<?x?x?x16xf32>
  return
}

// -----

// f32 positions with a step: the thread's first position times the step
// once, then one multiply-add per register (constant offset * step + that).
// CHECK-LABEL: gpu.func @scaled_positions
// CHECK-SAME: (%[[J:[^:]*]]: index {{.*}}, %[[S:[^:]*]]: f32
// CHECK-DAG: %[[COLS8:.*]] = arith.constant dense<[0.000000e+00, 1.000000e+00, 0.000000e+00, 1.000000e+00, 8.000000e+00, 9.000000e+00, 8.000000e+00, 9.000000e+00]> : vector<8xf32>
// CHECK: %[[KB:.*]] = arith.addi %[[J]], %{{.*}} : index
// CHECK: %[[KI:.*]] = arith.index_cast %[[KB]] : index to i32
// CHECK: %[[KF:.*]] = arith.sitofp %[[KI]] : i32 to f32
// CHECK: %[[FIRST:.*]] = arith.mulf %[[KF]], %[[S]] : f32
// CHECK: %[[FIRSTS:.*]] = vector.broadcast %[[FIRST]] : f32 to vector<8xf32>
// CHECK: %[[STEPS:.*]] = vector.broadcast %[[S]] : f32 to vector<8xf32>
// CHECK: vector.fma %[[COLS8]], %[[STEPS]], %[[FIRSTS]] : vector<8xf32>
func.func @scaled_positions(%j: index, %slope: f32, %o: !tile.view<?x?x?x16xf32>) {
  %c0 = arith.constant 0 : index
  %k = tile.iota dim 1 offset(%j) step(%slope) : tensor<16x16xf32>
  tile.store %k, %o[%c0, %c0, %c0, %c0] : tensor<16x16xf32>, !tile.view<?x?x?x16xf32>
  return
}
