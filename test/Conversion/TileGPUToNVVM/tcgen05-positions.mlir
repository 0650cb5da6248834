// RUN: tiled-attn-opt %s -split-input-file --tilegpu-attach-target="chip=sm_100a" \
// RUN:   --tilegpu-assign-layouts="warps=4" --convert-tile-to-tilegpu \
// RUN:   --tilegpu-merge-barriers --tilegpu-resolve-async-waits \
// RUN:   --tilegpu-allocate-memory --convert-tilegpu-to-nvvm | FileCheck %s

// tile.iota in the tcgen05 family's register layout (#tilegpu.tmem_lanes):
// a thread holds one row, 32 * (warp % 4) + lane, and consecutive columns
// from its column group's first. Over a score block, dim 0 is the thread's
// row in every register, dim 1 its columns; a rows vector is the row alone
// (one register), a columns vector the columns.

// CHECK-LABEL: gpu.func @positions
// CHECK-SAME: (%[[I:[^:]*]]: index {tilegpu.param = #tilegpu.param<scalar, "arg0">}, %[[J:[^:]*]]: index
// CHECK-DAG: %[[STEPS:.*]] = arith.constant dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]> : vector<16xindex>
// dim 0: i + 32 * (warp % 4) + lane, in all 16 registers.
// CHECK: %[[QUAD:.*]] = arith.muli %{{.*}}, %c32 : index
// CHECK: %[[ROW:.*]] = arith.addi %[[QUAD]], %{{.*}} : index
// CHECK: %[[QB:.*]] = arith.addi %[[I]], %[[ROW]] : index
// CHECK: %[[QS:.*]] = vector.broadcast %[[QB]] : index to vector<16xindex>
// CHECK: %[[Q:.*]] = arith.index_cast %[[QS]] : vector<16xindex> to vector<16xi32>
// dim 1: j + the column group's first column, then consecutive columns.
// CHECK: %[[KB:.*]] = arith.addi %[[J]], %{{.*}} : index
// CHECK: %[[KS:.*]] = vector.broadcast %[[KB]] : index to vector<16xindex>
// CHECK: %[[KV:.*]] = arith.addi %[[KS]], %[[STEPS]] : vector<16xindex>
// CHECK: %[[K:.*]] = arith.index_cast %[[KV]] : vector<16xindex> to vector<16xi32>
// The rows vector: one register.
// CHECK: %[[RS:.*]] = vector.broadcast %{{.*}} : index to vector<1xindex>
// CHECK: arith.index_cast %[[RS]] : vector<1xindex> to vector<1xi32>
// CHECK: arith.subi %[[K]], %[[Q]] : vector<16xi32>
func.func @positions(%i: index, %j: index, %o: !tile.view<?x?x?x16xf32>) {
  %c0 = arith.constant 0 : index
  %q = tile.iota dim 0 offset(%i) : tensor<128x16xi32>
  %k = tile.iota dim 1 offset(%j) : tensor<128x16xi32>
  %rows = tile.iota offset(%i) : tensor<128xi32>
  %cols = tile.iota : tensor<16xi32>
  %rb = tile.broadcast %rows along 1 : tensor<128xi32> -> tensor<128x16xi32>
  %cb = tile.broadcast %cols along 0 : tensor<16xi32> -> tensor<128x16xi32>
  %d = arith.subi %k, %q : tensor<128x16xi32>
  %e = arith.addi %rb, %cb : tensor<128x16xi32>
  %s = arith.addi %d, %e : tensor<128x16xi32>
  %f = arith.sitofp %s : tensor<128x16xi32> to tensor<128x16xf32>
  tile.store %f, %o[%c0, %c0, %c0, %c0] : tensor<128x16xf32>, !tile.view<?x?x?x16xf32>
  return
}

// -----

// f32 positions: the thread's first column converted once plus 0, 1, ...
// as f32 constants; its row converted once.
// CHECK-LABEL: gpu.func @float_positions
// CHECK-SAME: (%[[I:[^:]*]]: index {tilegpu.param = #tilegpu.param<scalar, "arg0">}, %[[J:[^:]*]]: index
// CHECK-DAG: %[[STEPS:.*]] = arith.constant dense<[0.000000e+00, 1.000000e+00, 2.000000e+00, {{.*}}, 1.500000e+01]> : vector<16xf32>
// CHECK: %[[KB:.*]] = arith.addi %[[J]], %{{.*}} : index
// CHECK: %[[KI:.*]] = arith.index_cast %[[KB]] : index to i32
// CHECK: %[[KF:.*]] = arith.sitofp %[[KI]] : i32 to f32
// CHECK: %[[KS:.*]] = vector.broadcast %[[KF]] : f32 to vector<16xf32>
// CHECK: %[[K:.*]] = arith.addf %[[KS]], %[[STEPS]] : vector<16xf32>
// CHECK: %[[QI:.*]] = arith.index_cast %{{.*}} : index to i32
// CHECK: %[[QF:.*]] = arith.sitofp %[[QI]] : i32 to f32
// CHECK: %[[QS:.*]] = vector.broadcast %[[QF]] : f32 to vector<16xf32>
// CHECK: arith.subf %[[K]], %[[QS]] : vector<16xf32>
func.func @float_positions(%i: index, %j: index, %o: !tile.view<?x?x?x16xf32>) {
  %c0 = arith.constant 0 : index
  %k = tile.iota dim 1 offset(%j) : tensor<128x16xf32>
  %rows = tile.iota offset(%i) : tensor<128xf32>
  %rb = tile.broadcast %rows along 1 : tensor<128xf32> -> tensor<128x16xf32>
  %s = arith.subf %k, %rb : tensor<128x16xf32>
  tile.store %s, %o[%c0, %c0, %c0, %c0] : tensor<128x16xf32>, !tile.view<?x?x?x16xf32>
  return
}

// -----

// f32 positions with a step in tmem lanes: the thread's first column times
// the step once, then one multiply-add per register.
// CHECK-LABEL: gpu.func @scaled_positions
// CHECK-SAME: (%[[J:[^:]*]]: index {{.*}}, %[[S:[^:]*]]: f32
// CHECK-DAG: %[[STEPS:.*]] = arith.constant dense<[0.000000e+00, 1.000000e+00, 2.000000e+00, {{.*}}, 1.500000e+01]> : vector<16xf32>
// CHECK: %[[KF:.*]] = arith.sitofp %{{.*}} : i32 to f32
// CHECK: %[[FIRST:.*]] = arith.mulf %[[KF]], %[[S]] : f32
// CHECK: %[[FIRSTS:.*]] = vector.broadcast %[[FIRST]] : f32 to vector<16xf32>
// CHECK: %[[SS:.*]] = vector.broadcast %[[S]] : f32 to vector<16xf32>
// CHECK: vector.fma %[[STEPS]], %[[SS]], %[[FIRSTS]] : vector<16xf32>
func.func @scaled_positions(%j: index, %slope: f32, %o: !tile.view<?x?x?x16xf32>) {
  %c0 = arith.constant 0 : index
  %k = tile.iota dim 1 offset(%j) step(%slope) : tensor<128x16xf32>
  tile.store %k, %o[%c0, %c0, %c0, %c0] : tensor<128x16xf32>, !tile.view<?x?x?x16xf32>
  return
}
