// RUN: tiled-attn-opt %s -split-input-file --tile-decompose-online-softmax | FileCheck %s

// One step of the online softmax becomes: scale, row max, running max, the
// guard for rows that saw only -inf, exp, row sum and the rescaled sum.

// CHECK-LABEL: func.func @online_softmax_16x16
// CHECK-SAME: (%[[S:.*]]: tensor<16x16xf32>, %[[M:.*]]: tensor<16xf32>, %[[L:.*]]: tensor<16xf32>, %[[SCALE:.*]]: f32)
// CHECK-DAG: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : tensor<16xf32>
// CHECK-DAG: %[[NEG_INF:.*]] = arith.constant dense<0xFF800000> : tensor<16xf32>
// CHECK: %[[SPLAT:.*]] = tensor.splat %[[SCALE]] : tensor<16x16xf32>
// CHECK: %[[X:.*]] = arith.mulf %[[S]], %[[SPLAT]] : tensor<16x16xf32>
// CHECK: %[[ROW_MAX:.*]] = tile.reduce max %[[X]] along 1 : tensor<16x16xf32> -> tensor<16xf32>
// CHECK: %[[NEW_MAX:.*]] = arith.maximumf %[[M]], %[[ROW_MAX]] : tensor<16xf32>
// CHECK: %[[NO_KEY:.*]] = arith.cmpf oeq, %[[NEW_MAX]], %[[NEG_INF]] : tensor<16xf32>
// CHECK: %[[REF:.*]] = arith.select %[[NO_KEY]], %[[ZERO]], %[[NEW_MAX]] : tensor<16xi1>, tensor<16xf32>
// CHECK: %[[REF_B:.*]] = tile.broadcast %[[REF]] along 1 : tensor<16xf32> -> tensor<16x16xf32>
// CHECK: %[[SHIFTED:.*]] = arith.subf %[[X]], %[[REF_B]] : tensor<16x16xf32>
// CHECK: %[[P:.*]] = math.exp %[[SHIFTED]] : tensor<16x16xf32>
// CHECK: %[[M_SHIFTED:.*]] = arith.subf %[[M]], %[[REF]] : tensor<16xf32>
// CHECK: %[[ALPHA:.*]] = math.exp %[[M_SHIFTED]] : tensor<16xf32>
// CHECK: %[[ROW_SUM:.*]] = tile.reduce sum %[[P]] along 1 : tensor<16x16xf32> -> tensor<16xf32>
// CHECK: %[[L_SCALED:.*]] = arith.mulf %[[L]], %[[ALPHA]] : tensor<16xf32>
// CHECK: %[[NEW_SUM:.*]] = arith.addf %[[L_SCALED]], %[[ROW_SUM]] : tensor<16xf32>
// CHECK-NOT: tile.online_softmax
// CHECK: return %[[NEW_MAX]], %[[NEW_SUM]], %[[P]], %[[ALPHA]]
func.func @online_softmax_16x16(%s: tensor<16x16xf32>, %m: tensor<16xf32>,
                                %l: tensor<16xf32>, %scale: f32)
    -> (tensor<16xf32>, tensor<16xf32>, tensor<16x16xf32>, tensor<16xf32>) {
  %m1, %l1, %p, %alpha = tile.online_softmax %s, %m, %l scale(%scale)
      : tensor<16x16xf32>, tensor<16xf32>
  return %m1, %l1, %p, %alpha
      : tensor<16xf32>, tensor<16xf32>, tensor<16x16xf32>, tensor<16xf32>
}

// -----

// A non-square block: statistics are per row (axis 1 is reduced and
// broadcast back), and each step of a loop is decomposed.

// CHECK-LABEL: func.func @online_softmax_in_loop
// CHECK-DAG: %[[NEG_INF:.*]] = arith.constant dense<0xFF800000> : tensor<32xf32>
// CHECK: scf.for {{.*}} iter_args(%[[M:.*]] = %{{.*}}, %[[L:.*]] = %{{.*}}) -> (tensor<32xf32>, tensor<32xf32>)
// CHECK: %[[ROW_MAX:.*]] = tile.reduce max %{{.*}} along 1 : tensor<32x64xf32> -> tensor<32xf32>
// CHECK: %[[NEW_MAX:.*]] = arith.maximumf %[[M]], %[[ROW_MAX]] : tensor<32xf32>
// CHECK: arith.cmpf oeq, %[[NEW_MAX]], %[[NEG_INF]] : tensor<32xf32>
// CHECK: tile.broadcast %{{.*}} along 1 : tensor<32xf32> -> tensor<32x64xf32>
// CHECK: %[[P:.*]] = math.exp %{{.*}} : tensor<32x64xf32>
// CHECK: %[[ALPHA:.*]] = math.exp %{{.*}} : tensor<32xf32>
// CHECK: %[[ROW_SUM:.*]] = tile.reduce sum %[[P]] along 1 : tensor<32x64xf32> -> tensor<32xf32>
// CHECK: %[[L_SCALED:.*]] = arith.mulf %[[L]], %[[ALPHA]] : tensor<32xf32>
// CHECK: %[[NEW_SUM:.*]] = arith.addf %[[L_SCALED]], %[[ROW_SUM]] : tensor<32xf32>
// CHECK: scf.yield %[[NEW_MAX]], %[[NEW_SUM]]
// CHECK-NOT: tile.online_softmax
func.func @online_softmax_in_loop(%s: tensor<32x64xf32>, %scale: f32,
                                  %n: index) -> tensor<32xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m0 = arith.constant dense<0xFF800000> : tensor<32xf32>
  %l0 = arith.constant dense<0.0> : tensor<32xf32>
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%m = %m0, %l = %l0)
      -> (tensor<32xf32>, tensor<32xf32>) {
    %m1, %l1, %p, %alpha = tile.online_softmax %s, %m, %l scale(%scale)
        : tensor<32x64xf32>, tensor<32xf32>
    scf.yield %m1, %l1 : tensor<32xf32>, tensor<32xf32>
  }
  return %r#1 : tensor<32xf32>
}

// -----

// Without tile.online_softmax, nothing changes: the reductions and
// elementwise math already there are left alone.

// CHECK-LABEL: func.func @negative_no_online_softmax
// CHECK-SAME: (%[[S:.*]]: tensor<16x16xf32>, %[[M:.*]]: tensor<16xf32>)
// CHECK-NEXT: %[[R:.*]] = tile.reduce max %[[S]] along 1 : tensor<16x16xf32> -> tensor<16xf32>
// CHECK-NEXT: %[[MAX:.*]] = arith.maximumf %[[M]], %[[R]] : tensor<16xf32>
// CHECK-NEXT: return %[[MAX]] : tensor<16xf32>
func.func @negative_no_online_softmax(%s: tensor<16x16xf32>,
                                      %m: tensor<16xf32>) -> tensor<16xf32> {
  %r = tile.reduce max %s along 1 : tensor<16x16xf32> -> tensor<16xf32>
  %max = arith.maximumf %m, %r : tensor<16xf32>
  return %max : tensor<16xf32>
}

// -----

// A log-sum-exp whose max is of scaled scores (no exp2): max + log(sum).

// CHECK-LABEL: func.func @log_sum_exp
// CHECK-SAME: (%[[M:.*]]: tensor<16xf32>, %[[L:.*]]: tensor<16xf32>, %{{.*}}: f32)
// CHECK-NEXT: %[[LOG:.*]] = math.log %[[L]] : tensor<16xf32>
// CHECK-NEXT: %[[LSE:.*]] = arith.addf %[[M]], %[[LOG]] : tensor<16xf32>
// CHECK-NEXT: return %[[LSE]]
func.func @log_sum_exp(%m: tensor<16xf32>, %l: tensor<16xf32>, %scale: f32)
    -> tensor<16xf32> {
  %lse = tile.log_sum_exp %m, %l scale(%scale) : tensor<16xf32>
  return %lse : tensor<16xf32>
}
