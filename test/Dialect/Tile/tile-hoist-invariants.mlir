// RUN: tiled-attn-opt %s -split-input-file --tile-hoist-invariants | FileCheck %s

// Pure tile ops whose operands come from outside the loop leave it: a
// causal mask at invariant offsets, arithmetic on splats of invariant
// scalars, and a load from a view the function never writes. What depends
// on the induction variable stays, and so does a broadcast (free in the
// loop, where each thread reuses its rows' registers; a block of registers
// live through the loop if hoisted), and what uses it.

// CHECK-LABEL: func.func @hoist_pure
// CHECK-SAME:    (%[[V:.*]]: !tile.view<?x?xf32>, %[[ROW:.*]]: tensor<16xf32>, %[[X:.*]]: f32, %[[R0:.*]]: index, %[[C0:.*]]: index, %[[N:.*]]: index)
// CHECK-DAG:     %[[MASK:.*]] = tile.causal_mask %[[R0]], %[[C0]] : tensor<16x16xi1>
// CHECK-DAG:     %[[SPLAT:.*]] = tensor.splat %[[X]] : tensor<16x16xf32>
// CHECK-DAG:     %[[SQ:.*]] = arith.mulf %[[SPLAT]], %[[SPLAT]] : tensor<16x16xf32>
// CHECK-DAG:     %[[TILE:.*]] = tile.load %[[V]][%[[R0]], %[[C0]]] pad(0.000000e+00) : <?x?xf32> -> tensor<16x16xf32>
// CHECK:         scf.for %[[I:[^ ]*]] = %{{.*}} to %[[N]] step %{{.*}} iter_args(%[[ACC:[^ ]*]] = %{{.*}})
// CHECK-NOT:       tile.causal_mask
// CHECK-NOT:       tensor.splat
// CHECK:           %[[ROW_B:.*]] = tile.broadcast %[[ROW]] along 1 : tensor<16xf32> -> tensor<16x16xf32>
// CHECK:           %[[COLS:.*]] = tile.load %[[V]][%[[I]], %[[C0]]]
// CHECK:           %[[A:.*]] = arith.addf %[[ACC]], %[[ROW_B]]
// CHECK:           %[[B:.*]] = arith.addf %[[A]], %[[COLS]]
// CHECK:           %[[C:.*]] = arith.addf %[[B]], %[[SQ]]
// CHECK:           %[[D:.*]] = arith.addf %[[C]], %[[TILE]]
// CHECK:           %[[E:.*]] = arith.select %[[MASK]], %[[D]], %[[ACC]]
// CHECK:           scf.yield %[[E]]
func.func @hoist_pure(%v: !tile.view<?x?xf32>, %row: tensor<16xf32>, %x: f32,
                      %r0: index, %c0: index, %n: index) -> tensor<16x16xf32> {
  %lb = arith.constant 0 : index
  %step = arith.constant 1 : index
  %init = arith.constant dense<0.0> : tensor<16x16xf32>
  %r = scf.for %i = %lb to %n step %step iter_args(%acc = %init)
      -> tensor<16x16xf32> {
    %row_b = tile.broadcast %row along 1 : tensor<16xf32> -> tensor<16x16xf32>
    %mask = tile.causal_mask %r0, %c0 : tensor<16x16xi1>
    %splat = tensor.splat %x : tensor<16x16xf32>
    %sq = arith.mulf %splat, %splat : tensor<16x16xf32>
    %tile = tile.load %v[%r0, %c0] pad(0.0) : !tile.view<?x?xf32> -> tensor<16x16xf32>
    %cols = tile.load %v[%i, %c0] pad(0.0) : !tile.view<?x?xf32> -> tensor<16x16xf32>
    %a = arith.addf %acc, %row_b : tensor<16x16xf32>
    %b = arith.addf %a, %cols : tensor<16x16xf32>
    %c = arith.addf %b, %sq : tensor<16x16xf32>
    %d = arith.addf %c, %tile : tensor<16x16xf32>
    %e = arith.select %mask, %d, %acc : tensor<16x16xi1>, tensor<16x16xf32>
    scf.yield %e : tensor<16x16xf32>
  }
  return %r : tensor<16x16xf32>
}

// -----

// Invariant ops hoist through nested loops to the outermost loop they do not
// depend on; the index math of an SDPA kernel (first query row of the block)
// goes with them.

// CHECK-LABEL: func.func @hoist_nested
// CHECK-SAME:    (%[[V:.*]]: !tile.view<?x?xf16>, %[[M:.*]]: index, %[[N:.*]]: index)
// CHECK:         %[[ROW0:.*]] = arith.muli %[[M]], %{{.*}} : index
// CHECK:         %[[Q:.*]] = tile.load %[[V]][%[[M]], %{{.*}}] pad(0.000000e+00) : <?x?xf16> -> tensor<32x16xf16>
// CHECK:         scf.for %[[I:[^ ]*]] =
// CHECK:           %[[COL0:.*]] = arith.muli %[[I]], %{{.*}} : index
// CHECK:           %[[MASK:.*]] = tile.causal_mask %[[ROW0]], %[[COL0]] : tensor<32x16xi1>
// CHECK:           scf.for
// CHECK-NOT:         tile.causal_mask
// CHECK-NOT:         tile.load
// CHECK:             arith.select %[[MASK]]
func.func @hoist_nested(%v: !tile.view<?x?xf16>, %m: index, %n: index)
    -> tensor<32x16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %zero = arith.constant dense<0.0> : tensor<32x16xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero)
      -> tensor<32x16xf32> {
    %r2 = scf.for %k = %c0 to %n step %c1 iter_args(%acc2 = %acc)
        -> tensor<32x16xf32> {
      %row0 = arith.muli %m, %c32 : index
      %col0 = arith.muli %i, %c16 : index
      %mask = tile.causal_mask %row0, %col0 : tensor<32x16xi1>
      %q = tile.load %v[%m, %c0] pad(0.0) : !tile.view<?x?xf16> -> tensor<32x16xf16>
      %q32 = arith.extf %q : tensor<32x16xf16> to tensor<32x16xf32>
      %sum = arith.addf %acc2, %q32 : tensor<32x16xf32>
      %sel = arith.select %mask, %sum, %acc2 : tensor<32x16xi1>, tensor<32x16xf32>
      scf.yield %sel : tensor<32x16xf32>
    }
    scf.yield %r2 : tensor<32x16xf32>
  }
  return %r : tensor<32x16xf32>
}

// -----

// A load from a view the function also writes stays in the loop, even with
// invariant indices and a store that comes after the loop.

// CHECK-LABEL: func.func @negative_load_written_view
// CHECK-SAME:    (%[[IN:.*]]: !tile.view<?x?xf32>, %[[OUT:.*]]: !tile.view<?x?xf32>, %[[C0:.*]]: index, %[[N:.*]]: index)
// CHECK:         %[[IN_TILE:.*]] = tile.load %[[IN]][%[[C0]], %[[C0]]]
// CHECK:         scf.for
// CHECK:           %[[OUT_TILE:.*]] = tile.load %[[OUT]][%[[C0]], %[[C0]]]
// CHECK:           tile.store %{{.*}}, %[[OUT]][%[[C0]], %[[C0]]]
// CHECK:         scf.for
// CHECK:           tile.load %[[OUT]][%[[C0]], %[[C0]]]
// CHECK:         tile.store %{{.*}}, %[[OUT]]
func.func @negative_load_written_view(%in: !tile.view<?x?xf32>,
                                      %out: !tile.view<?x?xf32>, %c0: index,
                                      %n: index) {
  %lb = arith.constant 0 : index
  %step = arith.constant 1 : index
  %zero = arith.constant dense<0.0> : tensor<16x16xf32>
  // A store in the loop: the load must see it on the next iteration.
  scf.for %i = %lb to %n step %step {
    %a = tile.load %in[%c0, %c0] pad(0.0) : !tile.view<?x?xf32> -> tensor<16x16xf32>
    %b = tile.load %out[%c0, %c0] pad(0.0) : !tile.view<?x?xf32> -> tensor<16x16xf32>
    %c = arith.addf %a, %b : tensor<16x16xf32>
    tile.store %c, %out[%c0, %c0] : tensor<16x16xf32>, !tile.view<?x?xf32>
  }
  // A store only after the loop: the view is written, so its loads stay.
  %r = scf.for %i = %lb to %n step %step iter_args(%acc = %zero)
      -> tensor<16x16xf32> {
    %b = tile.load %out[%c0, %c0] pad(0.0) : !tile.view<?x?xf32> -> tensor<16x16xf32>
    %c = arith.addf %acc, %b : tensor<16x16xf32>
    scf.yield %c : tensor<16x16xf32>
  }
  tile.store %r, %out[%c0, %c0] : tensor<16x16xf32>, !tile.view<?x?xf32>
  return
}

// -----

// Ops that depend on the induction variable, or on a value the loop carries,
// stay where they are.

// CHECK-LABEL: func.func @negative_variant
// CHECK:         scf.for %[[I:[^ ]*]] = {{.*}} iter_args(%[[ROW:[^ ]*]] = %{{.*}})
// CHECK:           %[[COL0:.*]] = arith.muli %[[I]], %{{.*}} : index
// CHECK:           tile.bounds_mask offsets(%[[COL0]]) limits(%{{.*}}) : tensor<16xi1>
// CHECK:           tile.broadcast %[[ROW]] along 1 : tensor<16xf32> -> tensor<16x16xf32>
func.func @negative_variant(%limit: index, %n: index) -> tensor<16x16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant dense<0.0> : tensor<16xf32>
  %zero2 = arith.constant dense<0.0> : tensor<16x16xf32>
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%row = %zero, %t = %zero2)
      -> (tensor<16xf32>, tensor<16x16xf32>) {
    %col0 = arith.muli %i, %c16 : index
    %in = tile.bounds_mask offsets(%col0) limits(%limit) : tensor<16xi1>
    %in_b = tile.broadcast %in along 0 : tensor<16xi1> -> tensor<16x16xi1>
    %row_b = tile.broadcast %row along 1 : tensor<16xf32> -> tensor<16x16xf32>
    %sel = arith.select %in_b, %row_b, %t : tensor<16x16xi1>, tensor<16x16xf32>
    %row1 = tile.reduce sum %sel along 1 : tensor<16x16xf32> -> tensor<16xf32>
    scf.yield %row1, %sel : tensor<16xf32>, tensor<16x16xf32>
  }
  return %r#1 : tensor<16x16xf32>
}

// -----

// Masks with constant operands fold to constants: the bounds mask of keys
// 8 .. 23 with 20 keys, and a causal mask on the diagonal.

// CHECK-LABEL: func.func @fold_masks
// CHECK-DAG:     %[[BOUNDS:.*]] = arith.constant dense<[true, true, true, true, true, true, true, true, true, true, true, true, false, false, false, false]> : tensor<16xi1>
// CHECK-DAG:     %[[CAUSAL:.*]] = arith.constant dense<{{\[}}[true, false, false, false], [true, true, false, false], [true, true, true, false], [true, true, true, true]]> : tensor<4x4xi1>
// CHECK-DAG:     %[[SHIFTED:.*]] = arith.constant dense<{{\[}}[true, true, true, false], [true, true, true, true], [true, true, true, true], [true, true, true, true]]> : tensor<4x4xi1>
// CHECK-NOT:     tile.bounds_mask
// CHECK-NOT:     tile.causal_mask
// CHECK:         return %[[BOUNDS]], %[[CAUSAL]], %[[SHIFTED]]
func.func @fold_masks() -> (tensor<16xi1>, tensor<4x4xi1>, tensor<4x4xi1>) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  %c20 = arith.constant 20 : index
  %bounds = tile.bounds_mask offsets(%c8) limits(%c20) : tensor<16xi1>
  %causal = tile.causal_mask %c0, %c0 : tensor<4x4xi1>
  // Row offset 2, column offset 0: query i sees keys j <= i + 2.
  %shifted = tile.causal_mask %c2, %c0 : tensor<4x4xi1>
  return %bounds, %causal, %shifted : tensor<16xi1>, tensor<4x4xi1>, tensor<4x4xi1>
}

// -----

// Masks that hold everywhere fold to splats of true, and a select on them
// folds to its true operand: a loop whose blocks lie inside S_k and below the
// diagonal loses its masking, and what is left hoists.

// CHECK-LABEL: func.func @fold_select
// CHECK-SAME:    (%[[S:.*]]: tensor<16x16xf32>, %[[N:.*]]: index)
// CHECK-NOT:     tile.bounds_mask
// CHECK-NOT:     tile.causal_mask
// CHECK-NOT:     arith.select
// CHECK:         scf.for {{.*}} iter_args(%[[ACC:[^ ]*]] = %{{.*}})
// CHECK-NEXT:      %[[SUM:.*]] = arith.addf %[[ACC]], %[[S]] : tensor<16x16xf32>
// CHECK-NEXT:      scf.yield %[[SUM]]
func.func @fold_select(%s: tensor<16x16xf32>, %n: index) -> tensor<16x16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %neg_inf = arith.constant dense<0xFF800000> : tensor<16x16xf32>
  %zero = arith.constant dense<0.0> : tensor<16x16xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero)
      -> tensor<16x16xf32> {
    // Keys 0 .. 15 of 64 all exist; queries 16 .. 31 see all keys 0 .. 15.
    %in = tile.bounds_mask offsets(%c0) limits(%c64) : tensor<16xi1>
    %in_b = tile.broadcast %in along 0 : tensor<16xi1> -> tensor<16x16xi1>
    %vis = tile.causal_mask %c16, %c0 : tensor<16x16xi1>
    %keep = arith.andi %in_b, %vis : tensor<16x16xi1>
    %masked = arith.select %keep, %s, %neg_inf : tensor<16x16xi1>, tensor<16x16xf32>
    %sum = arith.addf %acc, %masked : tensor<16x16xf32>
    scf.yield %sum : tensor<16x16xf32>
  }
  return %r : tensor<16x16xf32>
}

// -----

// A mask that is false somewhere is kept as a constant, and the select on it
// stays.

// CHECK-LABEL: func.func @negative_fold_partial_mask
// CHECK:         %[[MASK:.*]] = arith.constant dense<{{\[}}[true, false], [true, true]]> : tensor<2x2xi1>
// CHECK:         arith.select %[[MASK]]
func.func @negative_fold_partial_mask(%s: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %c0 = arith.constant 0 : index
  %neg_inf = arith.constant dense<0xFF800000> : tensor<2x2xf32>
  %vis = tile.causal_mask %c0, %c0 : tensor<2x2xi1>
  %masked = arith.select %vis, %s, %neg_inf : tensor<2x2xi1>, tensor<2x2xf32>
  return %masked : tensor<2x2xf32>
}

// -----

// A read of a captured input at invariant indices (ALiBi's slope of the
// head) leaves the loop; a read of any other view stays.

// CHECK-LABEL: func.func @hoist_captured_read
// CHECK:         %[[SLOPE:.*]] = tile.read %arg0[%arg2]
// CHECK:         scf.for
// CHECK-NOT:     tile.read %arg0
// CHECK:         tile.read %arg1[%arg2]
// CHECK:         arith.addf
func.func @hoist_captured_read(
    %slopes: !tile.view<?xf32> {tile.arg = #tile.arg<captured, "slopes">},
    %other: !tile.view<?xf32>, %h: index, %n: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> f32 {
    %slope = tile.read %slopes[%h] : !tile.view<?xf32> -> f32
    %x = tile.read %other[%h] : !tile.view<?xf32> -> f32
    %s = arith.addf %acc, %slope : f32
    %t = arith.addf %s, %x : f32
    scf.yield %t : f32
  }
  return %r : f32
}
