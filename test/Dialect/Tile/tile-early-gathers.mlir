// RUN: tiled-attn-opt %s -split-input-file --tile-early-gathers | FileCheck %s

// A gather of a captured tensor at the step's keys moves, with the index
// arithmetic it needs, above the body's first mma; the ops that use it and
// the mmas keep their order.

// CHECK-LABEL: func.func @early
// CHECK:         scf.for %[[J:[^ ]*]] =
// CHECK:           %[[K0:.*]] = arith.muli %[[J]], %{{.*}} : index
// CHECK:           %[[COLS:.*]] = tile.iota offset(%[[K0]]) : tensor<16xi32>
// CHECK:           %[[AT:.*]] = tile.broadcast %[[COLS]] along 0
// CHECK:           %[[BIAS:.*]] = tile.gather %{{.*}}[%{{.*}}, %[[AT]]]
// CHECK:           %[[S:.*]] = tile.mma
// CHECK:           %[[O:.*]] = tile.mma
// CHECK:           arith.addf %[[S]], %[[BIAS]]
func.func @early(%bias: !tile.view<?x?xf32>, %a: tensor<16x16xf16>,
                 %rows: tensor<16x16xi32>, %n: index) -> tensor<16x16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant dense<0.0> : tensor<16x16xf32>
  %r = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %zero) -> tensor<16x16xf32> {
    %s = tile.mma %a, %a, %zero : tensor<16x16xf16>, tensor<16x16xf16> -> tensor<16x16xf32>
    %o = tile.mma %a, %a, %acc : tensor<16x16xf16>, tensor<16x16xf16> -> tensor<16x16xf32>
    %k0 = arith.muli %j, %c16 : index
    %cols = tile.iota offset(%k0) : tensor<16xi32>
    %at = tile.broadcast %cols along 0 : tensor<16xi32> -> tensor<16x16xi32>
    %b = tile.gather %bias[%rows, %at] pad(0.0) : !tile.view<?x?xf32>, tensor<16x16xi32>, tensor<16x16xi32> -> tensor<16x16xf32>
    %sum = arith.addf %s, %b : tensor<16x16xf32>
    %next = arith.addf %o, %sum : tensor<16x16xf32>
    scf.yield %next : tensor<16x16xf32>
  }
  return %r : tensor<16x16xf32>
}

// -----

// A gather whose indices need an mma's result stays after it; so does one
// of a view the function writes.

// CHECK-LABEL: func.func @stays
// CHECK:         scf.for
// CHECK:           %[[S:.*]] = tile.mma
// CHECK:           arith.fptosi %[[S]]
// CHECK:           tile.gather
// CHECK:           tile.gather
// CHECK:           tile.store
func.func @stays(%v: !tile.view<?x?xf32>, %w: !tile.view<?x?xf32>,
                 %a: tensor<16x16xf16>, %rows: tensor<16x16xi32>,
                 %n: index) -> tensor<16x16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant dense<0.0> : tensor<16x16xf32>
  %r = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %zero) -> tensor<16x16xf32> {
    %s = tile.mma %a, %a, %acc : tensor<16x16xf16>, tensor<16x16xf16> -> tensor<16x16xf32>
    %at = arith.fptosi %s : tensor<16x16xf32> to tensor<16x16xi32>
    %b = tile.gather %v[%rows, %at] pad(0.0) : !tile.view<?x?xf32>, tensor<16x16xi32>, tensor<16x16xi32> -> tensor<16x16xf32>
    %c = tile.gather %w[%rows, %rows] pad(0.0) : !tile.view<?x?xf32>, tensor<16x16xi32>, tensor<16x16xi32> -> tensor<16x16xf32>
    tile.store %b, %w[%c0, %c0] : tensor<16x16xf32>, !tile.view<?x?xf32>
    %next = arith.addf %b, %c : tensor<16x16xf32>
    scf.yield %next : tensor<16x16xf32>
  }
  return %r : tensor<16x16xf32>
}

// -----

// A write between the mma and the gather (here to another view, which might
// alias the gathered one) keeps the gather after it.

// CHECK-LABEL: func.func @after_a_write
// CHECK:         scf.for
// CHECK:           tile.mma
// CHECK:           tile.store
// CHECK:           tile.gather
func.func @after_a_write(%v: !tile.view<?x?xf32>, %w: !tile.view<?x?xf32>,
                         %a: tensor<16x16xf16>, %rows: tensor<16x16xi32>,
                         %n: index) -> tensor<16x16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant dense<0.0> : tensor<16x16xf32>
  %r = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %zero) -> tensor<16x16xf32> {
    %s = tile.mma %a, %a, %acc : tensor<16x16xf16>, tensor<16x16xf16> -> tensor<16x16xf32>
    tile.store %s, %w[%c0, %c0] : tensor<16x16xf32>, !tile.view<?x?xf32>
    %b = tile.gather %v[%rows, %rows] pad(0.0) : !tile.view<?x?xf32>, tensor<16x16xi32>, tensor<16x16xi32> -> tensor<16x16xf32>
    %next = arith.addf %s, %b : tensor<16x16xf32>
    scf.yield %next : tensor<16x16xf32>
  }
  return %r : tensor<16x16xf32>
}
