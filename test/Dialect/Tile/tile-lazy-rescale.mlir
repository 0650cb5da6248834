// RUN: tiled-attn-opt %s -split-input-file --tile-lazy-rescale | FileCheck %s
// RUN: tiled-attn-opt %s -split-input-file --tile-lazy-rescale=threshold=4 | FileCheck %s --check-prefix=T4
// RUN: tiled-attn-opt %s -split-input-file --tile-lazy-rescale=guard=0 | FileCheck %s --check-prefix=NOGUARD
// RUN: tiled-attn-opt %s -split-input-file --tile-lazy-rescale --tile-decompose-online-softmax | FileCheck %s --check-prefix=DECOMP
// RUN: tiled-attn-opt %s -split-input-file --tile-exp2 --tile-lazy-rescale=threshold=4 --tile-decompose-online-softmax | FileCheck %s --check-prefix=EXP2
// RUN: not tiled-attn-opt %s -split-input-file --tile-lazy-rescale=threshold=0 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: not tiled-attn-opt %s -split-input-file --tile-lazy-rescale=threshold=17 2>&1 | FileCheck %s --check-prefix=SEVENTEEN

// The threshold must be in [1, 16].
// ZERO: error: tile-lazy-rescale: threshold must be in [1, 16], got 0
// SEVENTEEN: error: tile-lazy-rescale: threshold must be in [1, 16], got 17

// The step gets lazy_rescale(T), and the accumulator update
// acc * broadcast(alpha) runs only when some row's alpha is below 1 (or NaN:
// the comparison is unordered). The broadcast moves into the branch.

// CHECK-LABEL: func.func @guard
// CHECK-SAME:    (%[[S:.*]]: tensor<32x64xf32>, %[[PV:.*]]: tensor<32x16xf32>, %[[SCALE:.*]]: f32, %[[N:.*]]: index)
// CHECK:         scf.for {{.*}} iter_args(%[[M:[^ ]*]] = %{{.*}}, %[[L:[^ ]*]] = %{{.*}}, %[[ACC:[^ ]*]] = %{{.*}})
// CHECK:           %[[M1:.*]], %[[L1:.*]], %{{.*}}, %[[ALPHA:.*]] = tile.online_softmax %[[S]], %[[M]], %[[L]] scale(%[[SCALE]]) lazy_rescale(8.000000e+00) : tensor<32x64xf32>, tensor<32xf32>
// CHECK-NOT:       tile.broadcast
// CHECK:           %[[MIN:.*]] = tile.reduce min %[[ALPHA]] along 0 : tensor<32xf32> -> f32
// CHECK:           %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK:           %[[NEEDED:.*]] = arith.cmpf ult, %[[MIN]], %[[ONE]] : f32
// CHECK:           %[[ACC1:.*]] = scf.if %[[NEEDED]] -> (tensor<32x16xf32>) {
// CHECK-NEXT:        %[[ALPHA_B:.*]] = tile.broadcast %[[ALPHA]] along 1 : tensor<32xf32> -> tensor<32x16xf32>
// CHECK-NEXT:        %[[SCALED:.*]] = arith.mulf %[[ACC]], %[[ALPHA_B]] : tensor<32x16xf32>
// CHECK-NEXT:        scf.yield %[[SCALED]] : tensor<32x16xf32>
// CHECK-NEXT:      } else {
// CHECK-NEXT:        scf.yield %[[ACC]] : tensor<32x16xf32>
// CHECK-NEXT:      }
// CHECK:           %[[ACC2:.*]] = arith.addf %[[ACC1]], %[[PV]] : tensor<32x16xf32>
// CHECK:           scf.yield %[[M1]], %[[L1]], %[[ACC2]]

// guard=0: only the threshold; the multiply stays as it is (the GPU lowering
// skips it per warp with convert-tilegpu-to-nvvm{skip-unit-row-scales}).
// NOGUARD-LABEL: func.func @guard
// NOGUARD:         tile.online_softmax {{.*}} lazy_rescale(8.000000e+00)
// NOGUARD-NOT:     tile.reduce min
// NOGUARD-NOT:     scf.if
// NOGUARD:         %[[B:.*]] = tile.broadcast
// NOGUARD-NEXT:    arith.mulf %{{.*}}, %[[B]] : tensor<32x16xf32>
// NOGUARD:         return

// T4-LABEL: func.func @guard
// T4:         tile.online_softmax {{.*}} lazy_rescale(4.000000e+00) : tensor<32x64xf32>, tensor<32xf32>
// T4:         tile.reduce min
// T4:         arith.cmpf ult
// T4:         scf.if

// Decomposed, the max moves only when it grows by more than T * ln(2) in
// scaled units (8 * ln 2 = 5.54517746): otherwise the old max is kept.

// DECOMP-LABEL: func.func @guard
// DECOMP-DAG:     %[[LIMIT:.*]] = arith.constant dense<5.54517746> : tensor<32xf32>
// DECOMP:         scf.for {{.*}} iter_args(%[[M:[^ ]*]] = %{{.*}}, %[[L:[^ ]*]] = %{{.*}}, %[[ACC:[^ ]*]] = %{{.*}})
// DECOMP:           %[[ROW_MAX:.*]] = tile.reduce max %{{.*}} along 1 : tensor<32x64xf32> -> tensor<32xf32>
// DECOMP:           %[[MAX:.*]] = arith.maximumf %[[M]], %[[ROW_MAX]] : tensor<32xf32>
// DECOMP:           %[[GROW:.*]] = arith.subf %[[MAX]], %[[M]] : tensor<32xf32>
// DECOMP:           %[[MOVE:.*]] = arith.cmpf ogt, %[[GROW]], %[[LIMIT]] : tensor<32xf32>
// DECOMP:           %[[NEW_MAX:.*]] = arith.select %[[MOVE]], %[[MAX]], %[[M]] : tensor<32xi1>, tensor<32xf32>
// DECOMP:           arith.cmpf oeq, %[[NEW_MAX]], %{{.*}} : tensor<32xf32>
// DECOMP:           math.exp
// DECOMP:           %[[ALPHA:.*]] = math.exp %{{.*}} : tensor<32xf32>
// DECOMP:           tile.reduce min %[[ALPHA]] along 0 : tensor<32xf32> -> f32
// DECOMP:           scf.if
// DECOMP:           scf.yield %[[NEW_MAX]]
// DECOMP-NOT:     tile.online_softmax

// With exp2 the growth is measured in log2 units: (max - m) * c > T.

// EXP2-LABEL: func.func @guard
// EXP2-SAME:    (%{{.*}}: tensor<32x64xf32>, %{{.*}}: tensor<32x16xf32>, %[[SCALE:.*]]: f32, %{{.*}}: index)
// EXP2-DAG:     %[[LIMIT:.*]] = arith.constant dense<4.000000e+00> : tensor<32xf32>
// EXP2-DAG:     %[[LOG2E:.*]] = arith.constant 1.44269502 : f32
// EXP2:         scf.for {{.*}} iter_args(%[[M:[^ ]*]] = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}})
// EXP2:           %[[C:.*]] = arith.mulf %[[SCALE]], %[[LOG2E]] : f32
// EXP2:           %[[MAX:.*]] = arith.maximumf %[[M]], %{{.*}} : tensor<32xf32>
// EXP2:           %[[GROW:.*]] = arith.subf %[[MAX]], %[[M]] : tensor<32xf32>
// EXP2:           %[[C_ROWS:.*]] = tensor.splat %[[C]] : tensor<32xf32>
// EXP2:           %[[GROW_C:.*]] = arith.mulf %[[GROW]], %[[C_ROWS]] : tensor<32xf32>
// EXP2:           %[[MOVE:.*]] = arith.cmpf ogt, %[[GROW_C]], %[[LIMIT]] : tensor<32xf32>
// EXP2:           arith.select %[[MOVE]], %[[MAX]], %[[M]] : tensor<32xi1>, tensor<32xf32>
// EXP2:           math.fma
// EXP2:           math.exp2
func.func @guard(%s: tensor<32x64xf32>, %pv: tensor<32x16xf32>, %scale: f32,
                 %n: index) -> tensor<32x16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m0 = arith.constant dense<0xFF800000> : tensor<32xf32>
  %l0 = arith.constant dense<0.0> : tensor<32xf32>
  %acc0 = arith.constant dense<0.0> : tensor<32x16xf32>
  %r:3 = scf.for %i = %c0 to %n step %c1
      iter_args(%m = %m0, %l = %l0, %acc = %acc0)
      -> (tensor<32xf32>, tensor<32xf32>, tensor<32x16xf32>) {
    %m1, %l1, %p, %alpha = tile.online_softmax %s, %m, %l scale(%scale)
        : tensor<32x64xf32>, tensor<32xf32>
    %alpha_b = tile.broadcast %alpha along 1
        : tensor<32xf32> -> tensor<32x16xf32>
    %acc_scaled = arith.mulf %acc, %alpha_b : tensor<32x16xf32>
    %acc1 = arith.addf %acc_scaled, %pv : tensor<32x16xf32>
    scf.yield %m1, %l1, %acc1
        : tensor<32xf32>, tensor<32xf32>, tensor<32x16xf32>
  }
  return %r#2 : tensor<32x16xf32>
}

// -----

// The broadcast may be the multiply's left operand: the skipped branch still
// yields the accumulator. A broadcast with another user stays outside.

// CHECK-LABEL: func.func @broadcast_lhs_shared
// CHECK-SAME:    (%[[S:.*]]: tensor<16x16xf32>, %[[ACC:.*]]: tensor<16x32xf32>, %[[SCALE:.*]]: f32)
// CHECK:         %{{.*}}, %{{.*}}, %{{.*}}, %[[ALPHA:.*]] = tile.online_softmax {{.*}} lazy_rescale(8.000000e+00)
// CHECK:         %[[ALPHA_B:.*]] = tile.broadcast %[[ALPHA]] along 1 : tensor<16xf32> -> tensor<16x32xf32>
// CHECK:         %[[MIN:.*]] = tile.reduce min %[[ALPHA]] along 0 : tensor<16xf32> -> f32
// CHECK:         %[[NEEDED:.*]] = arith.cmpf ult, %[[MIN]], %{{.*}} : f32
// CHECK:         %[[ACC1:.*]] = scf.if %[[NEEDED]] -> (tensor<16x32xf32>) {
// CHECK-NEXT:      %[[SCALED:.*]] = arith.mulf %[[ALPHA_B]], %[[ACC]] : tensor<16x32xf32>
// CHECK-NEXT:      scf.yield %[[SCALED]] : tensor<16x32xf32>
// CHECK-NEXT:    } else {
// CHECK-NEXT:      scf.yield %[[ACC]] : tensor<16x32xf32>
// CHECK-NEXT:    }
// CHECK:         return %[[ACC1]], %[[ALPHA_B]]
func.func @broadcast_lhs_shared(%s: tensor<16x16xf32>, %acc: tensor<16x32xf32>,
                                %scale: f32)
    -> (tensor<16x32xf32>, tensor<16x32xf32>) {
  %m0 = arith.constant dense<0xFF800000> : tensor<16xf32>
  %l0 = arith.constant dense<0.0> : tensor<16xf32>
  %m1, %l1, %p, %alpha = tile.online_softmax %s, %m0, %l0 scale(%scale)
      : tensor<16x16xf32>, tensor<16xf32>
  %alpha_b = tile.broadcast %alpha along 1 : tensor<16xf32> -> tensor<16x32xf32>
  %acc_scaled = arith.mulf %alpha_b, %acc : tensor<16x32xf32>
  return %acc_scaled, %alpha_b : tensor<16x32xf32>, tensor<16x32xf32>
}

// -----

// A kernel's #tile.sdpa records the threshold.

// CHECK-LABEL: func.func @kernel
// CHECK-SAME:    attributes {tile.sdpa = #tile.sdpa<head_dim = 64, element_type = f16, causal = none, block_m = 64, block_n = 64, rescale_threshold = 8>}
// CHECK:         tile.online_softmax {{.*}} lazy_rescale(8.000000e+00)

// T4-LABEL: func.func @kernel
// T4-SAME:    attributes {tile.sdpa = #tile.sdpa<head_dim = 64, element_type = f16, causal = none, block_m = 64, block_n = 64, rescale_threshold = 4>}
// T4:         tile.online_softmax {{.*}} lazy_rescale(4.000000e+00)

// EXP2-LABEL: func.func @kernel
// EXP2-SAME:    attributes {tile.sdpa = #tile.sdpa<head_dim = 64, element_type = f16, causal = none, block_m = 64, block_n = 64, exp2 = true, rescale_threshold = 4>}
func.func @kernel(%q: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<q>}, %k: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<k>},
                  %v: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<v>}, %o: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<o>},
                  %scale: f32 {tile.arg = #tile.arg<scale>})
    attributes {tile.sdpa = #tile.sdpa<head_dim = 64, element_type = f16,
                                       causal = none,
                                       block_m = 64, block_n = 64>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %seq_k = tile.dim %k[2] : !tile.view<?x?x?x64xf16>
  %s = arith.constant dense<1.0> : tensor<64x64xf32>
  %m0 = arith.constant dense<0xFF800000> : tensor<64xf32>
  %l0 = arith.constant dense<0.0> : tensor<64xf32>
  %r:2 = scf.for %j = %c0 to %seq_k step %c1 iter_args(%m = %m0, %l = %l0)
      -> (tensor<64xf32>, tensor<64xf32>) {
    %m1, %l1, %p, %alpha = tile.online_softmax %s, %m, %l scale(%scale)
        : tensor<64x64xf32>, tensor<64xf32>
    scf.yield %m1, %l1 : tensor<64xf32>, tensor<64xf32>
  }
  return
}

// -----

// Without tile.online_softmax nothing changes: a multiply by a broadcast is
// not guarded, and #tile.sdpa gets no threshold.

// CHECK-LABEL: func.func @negative_no_online_softmax
// CHECK-SAME:    attributes {tile.sdpa = #tile.sdpa<head_dim = 64, element_type = f16, causal = none, block_m = 64, block_n = 64>}
// CHECK-NOT:     scf.if
// CHECK-NOT:     tile.reduce
// CHECK:         %[[B:.*]] = tile.broadcast
// CHECK-NEXT:    arith.mulf %{{.*}}, %[[B]] : tensor<64x64xf32>
// CHECK-NEXT:    return

// T4-LABEL: func.func @negative_no_online_softmax
// T4-SAME:    block_n = 64>}
func.func @negative_no_online_softmax(
    %q: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<q>}, %k: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<k>},
    %v: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<v>}, %o: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<o>}, %scale: f32 {tile.arg = #tile.arg<scale>})
    attributes {tile.sdpa = #tile.sdpa<head_dim = 64, element_type = f16,
                                       causal = none,
                                       block_m = 64, block_n = 64>} {
  %acc = arith.constant dense<2.0> : tensor<64x64xf32>
  %x = arith.constant dense<0.5> : tensor<64xf32>
  %x_b = tile.broadcast %x along 1 : tensor<64xf32> -> tensor<64x64xf32>
  %y = arith.mulf %acc, %x_b : tensor<64x64xf32>
  return
}
