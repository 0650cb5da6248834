// RUN: tiled-attn-opt %s --canonicalize --split-input-file | FileCheck %s

// A static view size folds to a constant; a dynamic one stays.
// CHECK-LABEL: func.func @dim_static
// CHECK-DAG:     %[[C64:.*]] = arith.constant 64 : index
// CHECK-DAG:     %[[S:.*]] = tile.dim %{{.*}}[2]
// CHECK:         return %[[S]], %[[C64]]
func.func @dim_static(%v: !tile.view<?x?x?x64xf16>) -> (index, index) {
  %s = tile.dim %v[2] : !tile.view<?x?x?x64xf16>
  %d = tile.dim %v[3] : !tile.view<?x?x?x64xf16>
  return %s, %d : index, index
}

// -----

// A slice's size along its dimension is its `size`; along the others, its
// view's.
// CHECK-LABEL: func.func @dim_slice
// CHECK-SAME:    (%[[V:.*]]: !tile.view<?x?x?x64xf16>, %[[O:.*]]: index, %[[N:.*]]: index)
// CHECK:         %[[H:.*]] = tile.dim %[[V]][1]
// CHECK:         return %[[N]], %[[H]]
func.func @dim_slice(%v: !tile.view<?x?x?x64xf16>, %o: index, %n: index) -> (index, index) {
  %s = tile.slice %v[2] offset(%o) size(%n) : !tile.view<?x?x?x64xf16>
  %a = tile.dim %s[2] : !tile.view<?x?x?x64xf16>
  %b = tile.dim %s[1] : !tile.view<?x?x?x64xf16>
  return %a, %b : index, index
}

// -----

// A broadcast of a splat is a splat of the larger shape.
// CHECK-LABEL: func.func @broadcast_splat
// CHECK:         %[[C:.*]] = arith.constant dense<1.500000e+00> : tensor<16x32xf32>
// CHECK-NOT:     tile.broadcast
// CHECK:         return %[[C]]
func.func @broadcast_splat() -> tensor<16x32xf32> {
  %c = arith.constant dense<1.5> : tensor<16xf32>
  %b = tile.broadcast %c along 1 : tensor<16xf32> -> tensor<16x32xf32>
  return %b : tensor<16x32xf32>
}

// -----

// CHECK-LABEL: func.func @negative_broadcast_not_splat
// CHECK:         tile.broadcast
func.func @negative_broadcast_not_splat(%r: tensor<16xf32>) -> tensor<16x32xf32> {
  %b = tile.broadcast %r along 1 : tensor<16xf32> -> tensor<16x32xf32>
  return %b : tensor<16x32xf32>
}

// -----

// With constant operands the mask folds: row 2 sees keys 1 .. 3 (diagonals
// -1 .. 1 of keys 0 .. 3 from column offset 0).
// CHECK-LABEL: func.func @window_mask_fold
// CHECK: %[[M:.*]] = arith.constant dense<{{\[}}[false, true, true, true]]> : tensor<1x4xi1>
// CHECK-NOT: tile.window_mask
// CHECK: return %[[M]]
func.func @window_mask_fold() -> tensor<1x4xi1> {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %lo = arith.constant -1 : index
  %hi = arith.constant 1 : index
  %w = tile.window_mask %c2, %c0 diagonals(%lo, %hi) : tensor<1x4xi1>
  return %w : tensor<1x4xi1>
}
