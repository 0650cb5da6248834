// RUN: tiled-attn-opt %s -split-input-file -verify-diagnostics --tile-exp2 | FileCheck %s
// RUN: not tiled-attn-opt %s -split-input-file --tile-exp2 2>&1 | FileCheck %s --check-prefix=ERR
// RUN: tiled-attn-opt %s -split-input-file -verify-diagnostics --tile-exp2 --tile-decompose-online-softmax | FileCheck %s --check-prefix=DECOMP
// RUN: tiled-attn-opt %s -split-input-file -verify-diagnostics --tile-exp2 --tile-decompose-online-softmax | FileCheck %s --check-prefix=NO-EXP

// Once decomposed, no step uses math.exp: all are math.exp2 (the one
// math.exp left, of a function argument, is @plain_exp_left_alone's).
// NO-EXP-NOT: math.exp %{{[0-9]}}

// The positive cases come first; the cases the pass must refuse (a running
// max whose units would silently change) are at the end of the file. The
// second RUN checks their exact messages and that the tool fails.

// Every step of the loop is marked `exp2`; its operands are unchanged.

// CHECK-LABEL: func.func @loop
// CHECK-SAME:    (%[[S:.*]]: tensor<32x64xf32>, %[[SCALE:.*]]: f32, %[[N:.*]]: index)
// CHECK:         scf.for {{.*}} iter_args(%[[M:[^ ]*]] = %{{.*}}, %[[L:[^ ]*]] = %{{.*}})
// CHECK:           %[[M1:.*]], %[[L1:.*]], %{{.*}}, %{{.*}} = tile.online_softmax %[[S]], %[[M]], %[[L]] scale(%[[SCALE]]) exp2 : tensor<32x64xf32>, tensor<32xf32>
// CHECK:           scf.yield %[[M1]], %[[L1]]

// With exp2 the max is taken on the raw scores, and each probability is one
// fused multiply-add with c = scale * log2(e) followed by exp2.

// DECOMP-LABEL: func.func @loop
// DECOMP-SAME:    (%[[S:.*]]: tensor<32x64xf32>, %[[SCALE:.*]]: f32, %[[N:.*]]: index)
// DECOMP-DAG:     %[[LOG2E:.*]] = arith.constant 1.44269502 : f32
// DECOMP:         scf.for {{.*}} iter_args(%[[M:[^ ]*]] = %{{.*}}, %[[L:[^ ]*]] = %{{.*}})
// DECOMP-NOT:       arith.mulf %[[S]]
// DECOMP:           %[[C:.*]] = arith.mulf %[[SCALE]], %[[LOG2E]] : f32
// DECOMP:           %[[ROW_MAX:.*]] = tile.reduce max %[[S]] along 1 : tensor<32x64xf32> -> tensor<32xf32>
// DECOMP:           %[[NEW_MAX:.*]] = arith.maximumf %[[M]], %[[ROW_MAX]] : tensor<32xf32>
// DECOMP:           %[[C_ROWS:.*]] = tensor.splat %[[C]] : tensor<32xf32>
// DECOMP:           %[[REF_C:.*]] = arith.mulf %{{.*}}, %[[C_ROWS]] : tensor<32xf32>
// DECOMP:           %[[NEG_REF_C:.*]] = arith.negf %[[REF_C]] : tensor<32xf32>
// DECOMP-DAG:       %[[C_TILE:.*]] = tensor.splat %[[C]] : tensor<32x64xf32>
// DECOMP-DAG:       %[[NEG_REF_C_B:.*]] = tile.broadcast %[[NEG_REF_C]] along 1 : tensor<32xf32> -> tensor<32x64xf32>
// DECOMP:           %[[ARG:.*]] = math.fma %[[S]], %[[C_TILE]], %[[NEG_REF_C_B]] : tensor<32x64xf32>
// DECOMP:           %[[P:.*]] = math.exp2 %[[ARG]] : tensor<32x64xf32>
// DECOMP:           %[[GROW:.*]] = arith.subf %[[M]], %{{.*}} : tensor<32xf32>
// DECOMP:           %[[ALPHA_ARG:.*]] = arith.mulf %[[GROW]], %[[C_ROWS]] : tensor<32xf32>
// DECOMP:           %[[ALPHA:.*]] = math.exp2 %[[ALPHA_ARG]] : tensor<32xf32>
// DECOMP:           tile.reduce sum %[[P]] along 1
// DECOMP:           arith.mulf %[[L]], %[[ALPHA]] : tensor<32xf32>
// DECOMP:           scf.yield %[[NEW_MAX]]
func.func @loop(%s: tensor<32x64xf32>, %scale: f32, %n: index)
    -> tensor<32xf32> {
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

// Two independent softmax chains in one function, one carried by a loop and
// one a single step from -inf: both are marked.

// CHECK-LABEL: func.func @every_step
// CHECK:         tile.online_softmax {{.*}} scale(%{{.*}}) exp2 : tensor<16x16xf32>, tensor<16xf32>
// CHECK:         scf.for
// CHECK:           tile.online_softmax {{.*}} scale(%{{.*}}) exp2 : tensor<16x32xf32>, tensor<16xf32>
// CHECK-NOT:     tile.online_softmax

// DECOMP-LABEL: func.func @every_step
// DECOMP-COUNT-2: math.fma
// DECOMP:         scf.for
// DECOMP-COUNT-2: math.fma
// DECOMP-NOT:     tile.online_softmax
// DECOMP:         return
func.func @every_step(%a: tensor<16x16xf32>, %b: tensor<16x32xf32>,
                      %scale: f32, %n: index)
    -> (tensor<16xf32>, tensor<16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m0 = arith.constant dense<0xFF800000> : tensor<16xf32>
  %l0 = arith.constant dense<0.0> : tensor<16xf32>
  %m1, %l1, %p, %alpha = tile.online_softmax %a, %m0, %l0 scale(%scale)
      : tensor<16x16xf32>, tensor<16xf32>
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%m = %m0, %l = %l0)
      -> (tensor<16xf32>, tensor<16xf32>) {
    %m2, %l2, %p2, %alpha2 = tile.online_softmax %b, %m, %l scale(%scale)
        : tensor<16x32xf32>, tensor<16xf32>
    scf.yield %m2, %l2 : tensor<16xf32>, tensor<16xf32>
  }
  return %l1, %r#1 : tensor<16xf32>, tensor<16xf32>
}

// -----

// A kernel's #tile.sdpa records the schedule: exp2 = true.

// CHECK-LABEL: func.func @kernel
// CHECK-SAME:    attributes {tile.sdpa = #tile.sdpa<head_dim = 64, element_type = f16, causal = top_left, block_m = 64, block_n = 32, exp2 = true>}
// CHECK:         tile.online_softmax {{.*}} exp2 :
func.func @kernel(%q: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<q>}, %k: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<k>},
                  %v: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<v>}, %o: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<o>},
                  %scale: f32 {tile.arg = #tile.arg<scale>})
    attributes {tile.sdpa = #tile.sdpa<head_dim = 64, element_type = f16,
                                       causal = top_left,
                                       block_m = 64, block_n = 32>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %seq_k = tile.dim %k[2] : !tile.view<?x?x?x64xf16>
  %s = arith.constant dense<1.0> : tensor<64x32xf32>
  %m0 = arith.constant dense<0xFF800000> : tensor<64xf32>
  %l0 = arith.constant dense<0.0> : tensor<64xf32>
  %r:2 = scf.for %j = %c0 to %seq_k step %c1 iter_args(%m = %m0, %l = %l0)
      -> (tensor<64xf32>, tensor<64xf32>) {
    %m1, %l1, %p, %alpha = tile.online_softmax %s, %m, %l scale(%scale)
        : tensor<64x32xf32>, tensor<64xf32>
    scf.yield %m1, %l1 : tensor<64xf32>, tensor<64xf32>
  }
  return
}

// -----

// The backward's probabilities, exp(scale s - lse): log2(e) folds into the
// scale (a scalar, multiplied once where its splat is made) and into the
// vector before its broadcast; one FMA and one exp2 per element.

// CHECK-LABEL: func.func @plain_exp
// CHECK-SAME:    (%[[S:.*]]: tensor<16x32xf32>, %[[SCALE:.*]]: f32, %[[LSE:.*]]: tensor<32xf32>)
// CHECK:         %[[LOG2E:.*]] = arith.constant 1.44269502 : f32
// CHECK:         %[[C:.*]] = arith.mulf %[[SCALE]], %[[LOG2E]] : f32
// CHECK:         %[[CS:.*]] = tensor.splat %[[C]] : tensor<16x32xf32>
// CHECK:         %[[NEG:.*]] = arith.constant dense<-1.44269502> : tensor<32xf32>
// CHECK:         %[[L2:.*]] = arith.mulf %[[LSE]], %[[NEG]] : tensor<32xf32>
// CHECK:         %[[B:.*]] = tile.broadcast %[[L2]] along 0 : tensor<32xf32> -> tensor<16x32xf32>
// CHECK:         %[[X:.*]] = math.fma %[[S]], %[[CS]], %[[B]] : tensor<16x32xf32>
// CHECK:         %[[P:.*]] = math.exp2 %[[X]] : tensor<16x32xf32>
// CHECK-NEXT:    return %[[P]]
func.func @plain_exp(%s: tensor<16x32xf32>, %scale: f32, %lse: tensor<32xf32>)
    -> tensor<16x32xf32> {
  %c = tensor.splat %scale : tensor<16x32xf32>
  %x = arith.mulf %s, %c : tensor<16x32xf32>
  %b = tile.broadcast %lse along 0 : tensor<32xf32> -> tensor<16x32xf32>
  %z = arith.subf %x, %b : tensor<16x32xf32>
  %p = math.exp %z : tensor<16x32xf32>
  return %p : tensor<16x32xf32>
}

// -----

// A constant factor folds at compile time; a product used elsewhere too
// (here returned) is kept and multiplied by log2(e) in the FMA.

// CHECK-LABEL: func.func @plain_exp_constant
// CHECK:         math.fma %{{.*}}, %{{.*}} : tensor<16x32xf32>
// CHECK-LABEL: func.func @plain_exp_shared_product
// CHECK-SAME:    (%[[S:.*]]: tensor<16x32xf32>, %[[LSE:.*]]: tensor<16xf32>)
// CHECK:         %[[X:.*]] = arith.mulf %[[S]], %{{.*}} : tensor<16x32xf32>
// CHECK:         %[[B:.*]] = tile.broadcast %{{.*}} along 1 : tensor<16xf32> -> tensor<16x32xf32>
// CHECK:         %[[F:.*]] = math.fma %[[X]], %{{.*}}, %[[B]] : tensor<16x32xf32>
// CHECK:         math.exp2 %[[F]]
func.func @plain_exp_constant(%s: tensor<16x32xf32>, %lse: tensor<32xf32>)
    -> tensor<16x32xf32> {
  %c = arith.constant dense<0.125> : tensor<16x32xf32>
  %x = arith.mulf %c, %s : tensor<16x32xf32>
  %b = tile.broadcast %lse along 0 : tensor<32xf32> -> tensor<16x32xf32>
  %z = arith.subf %x, %b : tensor<16x32xf32>
  %p = math.exp %z : tensor<16x32xf32>
  return %p : tensor<16x32xf32>
}
func.func @plain_exp_shared_product(%s: tensor<16x32xf32>, %lse: tensor<16xf32>)
    -> (tensor<16x32xf32>, tensor<16x32xf32>) {
  %c = arith.constant dense<0.125> : tensor<16x32xf32>
  %x = arith.mulf %s, %c : tensor<16x32xf32>
  %b = tile.broadcast %lse along 1 : tensor<16xf32> -> tensor<16x32xf32>
  %z = arith.subf %x, %b : tensor<16x32xf32>
  %p = math.exp %z : tensor<16x32xf32>
  return %p, %x : tensor<16x32xf32>, tensor<16x32xf32>
}

// -----

// An exp of anything else (here of an argument) is left alone.

// CHECK-LABEL: func.func @plain_exp_left_alone
// CHECK:         math.exp %{{.*}} : tensor<16x32xf32>
// CHECK-NOT:     math.exp2
func.func @plain_exp_left_alone(%z: tensor<16x32xf32>) -> tensor<16x32xf32> {
  %p = math.exp %z : tensor<16x32xf32>
  return %p : tensor<16x32xf32>
}

// -----

// A kernel without tile.online_softmax is left alone, #tile.sdpa included.

// CHECK-LABEL: func.func @negative_no_online_softmax
// CHECK-SAME:    attributes {tile.sdpa = #tile.sdpa<head_dim = 64, element_type = f16, causal = none, block_m = 64, block_n = 64>}
// CHECK-NEXT:    %[[S:.*]] = arith.constant dense<1.000000e+00> : tensor<64x64xf32>
// CHECK-NEXT:    tile.reduce max %[[S]] along 1 : tensor<64x64xf32> -> tensor<64xf32>
// CHECK-NEXT:    return
func.func @negative_no_online_softmax(
    %q: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<q>}, %k: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<k>},
    %v: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<v>}, %o: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<o>}, %scale: f32 {tile.arg = #tile.arg<scale>})
    attributes {tile.sdpa = #tile.sdpa<head_dim = 64, element_type = f16,
                                       causal = none,
                                       block_m = 64, block_n = 64>} {
  %s = arith.constant dense<1.0> : tensor<64x64xf32>
  %r = tile.reduce max %s along 1 : tensor<64x64xf32> -> tensor<64xf32>
  return
}

// -----

// A step already marked stays marked; the pass is idempotent.

// CHECK-LABEL: func.func @already_exp2
// CHECK:         tile.online_softmax {{.*}} scale(%{{.*}}) exp2 : tensor<16x16xf32>, tensor<16xf32>
func.func @already_exp2(%s: tensor<16x16xf32>, %scale: f32) -> tensor<16xf32> {
  %m0 = arith.constant dense<0xFF800000> : tensor<16xf32>
  %l0 = arith.constant dense<0.0> : tensor<16xf32>
  %m1, %l1, %p, %alpha = tile.online_softmax %s, %m0, %l0 scale(%scale) exp2
      : tensor<16x16xf32>, tensor<16xf32>
  return %l1 : tensor<16xf32>
}

// -----

// The mask split chains two loops: the second starts from the first one's
// running max. Both steps are marked.

// CHECK-LABEL: func.func @chained_loops
// CHECK:         %[[R0:[^ ]*]]:2 = scf.for
// CHECK:           tile.online_softmax {{.*}} exp2 : tensor<16x16xf32>, tensor<16xf32>
// CHECK:         %[[R1:[^ ]*]]:2 = scf.for {{.*}} iter_args(%{{.*}} = %[[R0]]#0, %{{.*}} = %[[R0]]#1)
// CHECK:           tile.online_softmax {{.*}} exp2 : tensor<16x16xf32>, tensor<16xf32>
// CHECK:         return %[[R1]]#1
func.func @chained_loops(%s: tensor<16x16xf32>, %scale: f32, %n: index,
                         %n2: index) -> tensor<16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m0 = arith.constant dense<0xFF800000> : tensor<16xf32>
  %l0 = arith.constant dense<0.0> : tensor<16xf32>
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%m = %m0, %l = %l0)
      -> (tensor<16xf32>, tensor<16xf32>) {
    %m1, %l1, %p, %alpha = tile.online_softmax %s, %m, %l scale(%scale)
        : tensor<16x16xf32>, tensor<16xf32>
    scf.yield %m1, %l1 : tensor<16xf32>, tensor<16xf32>
  }
  %r2:2 = scf.for %i = %n to %n2 step %c1 iter_args(%m = %r#0, %l = %r#1)
      -> (tensor<16xf32>, tensor<16xf32>) {
    %m1, %l1, %p, %alpha = tile.online_softmax %s, %m, %l scale(%scale)
        : tensor<16x16xf32>, tensor<16xf32>
    scf.yield %m1, %l1 : tensor<16xf32>, tensor<16xf32>
  }
  return %r2#1 : tensor<16xf32>
}

// -----

// A log-sum-exp of the chain reads the max in its new units: it is marked
// too, and decomposes to max * scale + log(sum).

// CHECK-LABEL: func.func @log_sum_exp
// CHECK:         %[[R:[^ ]*]]:2 = scf.for
// CHECK:           tile.online_softmax {{.*}} exp2 : tensor<16x16xf32>, tensor<16xf32>
// CHECK:         tile.log_sum_exp %[[R]]#0, %[[R]]#1 scale(%{{.*}}) exp2 : tensor<16xf32>

// DECOMP-LABEL: func.func @log_sum_exp
// DECOMP-SAME:    (%{{.*}}: tensor<16x16xf32>, %[[SCALE:.*]]: f32, %{{.*}}: index)
// DECOMP:         %[[R:[^ ]*]]:2 = scf.for
// DECOMP:         %[[SPLAT:.*]] = tensor.splat %[[SCALE]] : tensor<16xf32>
// DECOMP:         %[[M:.*]] = arith.mulf %[[R]]#0, %[[SPLAT]] : tensor<16xf32>
// DECOMP:         %[[LOG:.*]] = math.log %[[R]]#1 : tensor<16xf32>
// DECOMP:         %[[LSE:.*]] = arith.addf %[[M]], %[[LOG]] : tensor<16xf32>
// DECOMP:         return %[[LSE]]
func.func @log_sum_exp(%s: tensor<16x16xf32>, %scale: f32, %n: index)
    -> tensor<16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m0 = arith.constant dense<0xFF800000> : tensor<16xf32>
  %l0 = arith.constant dense<0.0> : tensor<16xf32>
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%m = %m0, %l = %l0)
      -> (tensor<16xf32>, tensor<16xf32>) {
    %m1, %l1, %p, %alpha = tile.online_softmax %s, %m, %l scale(%scale)
        : tensor<16x16xf32>, tensor<16xf32>
    scf.yield %m1, %l1 : tensor<16xf32>, tensor<16xf32>
  }
  %lse = tile.log_sum_exp %r#0, %r#1 scale(%scale) : tensor<16xf32>
  return %lse : tensor<16xf32>
}

// -----

//===----------------------------------------------------------------------===//
// Refused: the running max would change units where someone can see it.
//===----------------------------------------------------------------------===//

// The running max leaves the loop (say, to write a log-sum-exp).

// ERR: error: tile-exp2: the running max is used outside the online-softmax chain; exp2 would change its units
func.func @negative_max_used_after_loop(%s: tensor<16x16xf32>, %scale: f32,
                                        %n: index) -> tensor<16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m0 = arith.constant dense<0xFF800000> : tensor<16xf32>
  %l0 = arith.constant dense<0.0> : tensor<16xf32>
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%m = %m0, %l = %l0)
      -> (tensor<16xf32>, tensor<16xf32>) {
    // expected-error @+1 {{tile-exp2: the running max is used outside the online-softmax chain; exp2 would change its units}}
    %m1, %l1, %p, %alpha = tile.online_softmax %s, %m, %l scale(%scale)
        : tensor<16x16xf32>, tensor<16xf32>
    scf.yield %m1, %l1 : tensor<16xf32>, tensor<16xf32>
  }
  return %r#0 : tensor<16xf32>
}

// -----

// The same, after the second of two chained loops.

// ERR: error: tile-exp2: the running max is used outside the online-softmax chain; exp2 would change its units
func.func @negative_max_used_after_chain(%s: tensor<16x16xf32>, %scale: f32,
                                         %n: index, %n2: index)
    -> tensor<16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m0 = arith.constant dense<0xFF800000> : tensor<16xf32>
  %l0 = arith.constant dense<0.0> : tensor<16xf32>
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%m = %m0, %l = %l0)
      -> (tensor<16xf32>, tensor<16xf32>) {
    %m1, %l1, %p, %alpha = tile.online_softmax %s, %m, %l scale(%scale)
        : tensor<16x16xf32>, tensor<16xf32>
    scf.yield %m1, %l1 : tensor<16xf32>, tensor<16xf32>
  }
  %r2:2 = scf.for %i = %n to %n2 step %c1 iter_args(%m = %r#0, %l = %r#1)
      -> (tensor<16xf32>, tensor<16xf32>) {
    // expected-error @+1 {{tile-exp2: the running max is used outside the online-softmax chain}}
    %m1, %l1, %p, %alpha = tile.online_softmax %s, %m, %l scale(%scale)
        : tensor<16x16xf32>, tensor<16xf32>
    scf.yield %m1, %l1 : tensor<16xf32>, tensor<16xf32>
  }
  return %r2#0 : tensor<16xf32>
}

// -----

// The new max is also yielded into another iter_arg, which leaves the loop.

// ERR: error: tile-exp2: the running max is used outside the online-softmax chain; exp2 would change its units
func.func @negative_max_copied_out(%s: tensor<16x16xf32>, %scale: f32,
                                   %n: index) -> tensor<16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m0 = arith.constant dense<0xFF800000> : tensor<16xf32>
  %l0 = arith.constant dense<0.0> : tensor<16xf32>
  %r:3 = scf.for %i = %c0 to %n step %c1
      iter_args(%m = %m0, %l = %l0, %copy = %l0)
      -> (tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) {
    // expected-error @+1 {{tile-exp2: the running max is used outside the online-softmax chain}}
    %m1, %l1, %p, %alpha = tile.online_softmax %s, %m, %l scale(%scale)
        : tensor<16x16xf32>, tensor<16xf32>
    scf.yield %m1, %l1, %m1 : tensor<16xf32>, tensor<16xf32>, tensor<16xf32>
  }
  return %r#2 : tensor<16xf32>
}

// -----

// A running max that starts from a finite value, in a loop ...

// ERR: error: tile-exp2: the running max does not start at -inf; exp2 would change its units
func.func @negative_max_not_neg_inf(%s: tensor<16x16xf32>, %scale: f32,
                                    %n: index) -> tensor<16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m0 = arith.constant dense<0.0> : tensor<16xf32>
  %l0 = arith.constant dense<0.0> : tensor<16xf32>
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%m = %m0, %l = %l0)
      -> (tensor<16xf32>, tensor<16xf32>) {
    // expected-error @+1 {{tile-exp2: the running max does not start at -inf; exp2 would change its units}}
    %m1, %l1, %p, %alpha = tile.online_softmax %s, %m, %l scale(%scale)
        : tensor<16x16xf32>, tensor<16xf32>
    scf.yield %m1, %l1 : tensor<16xf32>, tensor<16xf32>
  }
  return %r#1 : tensor<16xf32>
}

// -----

// ... or outside a loop (+inf is not -inf either) ...

// ERR: error: tile-exp2: the running max does not start at -inf; exp2 would change its units
func.func @negative_max_pos_inf(%s: tensor<16x16xf32>, %scale: f32)
    -> tensor<16xf32> {
  %m0 = arith.constant dense<0x7F800000> : tensor<16xf32>
  %l0 = arith.constant dense<0.0> : tensor<16xf32>
  // expected-error @+1 {{tile-exp2: the running max does not start at -inf; exp2 would change its units}}
  %m1, %l1, %p, %alpha = tile.online_softmax %s, %m0, %l0 scale(%scale)
      : tensor<16x16xf32>, tensor<16xf32>
  return %l1 : tensor<16xf32>
}

// -----

// ... or that comes from the caller.

// ERR: error: tile-exp2: the running max does not start at -inf; exp2 would change its units
func.func @negative_max_argument(%s: tensor<16x16xf32>, %m0: tensor<16xf32>,
                                 %scale: f32) -> tensor<16xf32> {
  %l0 = arith.constant dense<0.0> : tensor<16xf32>
  // expected-error @+1 {{tile-exp2: the running max does not start at -inf; exp2 would change its units}}
  %m1, %l1, %p, %alpha = tile.online_softmax %s, %m0, %l0 scale(%scale)
      : tensor<16x16xf32>, tensor<16xf32>
  return %l1 : tensor<16xf32>
}

// -----

// The new max feeds another op inside the loop.

// ERR: error: tile-exp2: the running max is used outside the online-softmax chain; exp2 would change its units
func.func @negative_new_max_used(%s: tensor<16x16xf32>, %scale: f32,
                                 %n: index) -> tensor<16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m0 = arith.constant dense<0xFF800000> : tensor<16xf32>
  %l0 = arith.constant dense<0.0> : tensor<16xf32>
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%m = %m0, %l = %l0)
      -> (tensor<16xf32>, tensor<16xf32>) {
    // expected-error @+1 {{tile-exp2: the running max is used outside the online-softmax chain; exp2 would change its units}}
    %m1, %l1, %p, %alpha = tile.online_softmax %s, %m, %l scale(%scale)
        : tensor<16x16xf32>, tensor<16xf32>
    %l2 = arith.addf %l1, %m1 : tensor<16xf32>
    scf.yield %m1, %l2 : tensor<16xf32>, tensor<16xf32>
  }
  return %r#1 : tensor<16xf32>
}

// -----

// The old max (the loop-carried value) feeds another op inside the loop.

// ERR: error: tile-exp2: the running max is used outside the online-softmax chain; exp2 would change its units
func.func @negative_running_max_used(%s: tensor<16x16xf32>, %scale: f32,
                                     %n: index) -> tensor<16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m0 = arith.constant dense<0xFF800000> : tensor<16xf32>
  %l0 = arith.constant dense<0.0> : tensor<16xf32>
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%m = %m0, %l = %l0)
      -> (tensor<16xf32>, tensor<16xf32>) {
    // expected-error @+1 {{tile-exp2: the running max is used outside the online-softmax chain}}
    %m1, %l1, %p, %alpha = tile.online_softmax %s, %m, %l scale(%scale)
        : tensor<16x16xf32>, tensor<16xf32>
    %l2 = arith.subf %l1, %m : tensor<16xf32>
    scf.yield %m1, %l2 : tensor<16xf32>, tensor<16xf32>
  }
  return %r#1 : tensor<16xf32>
}

// -----

// The new max of a single step is returned.

// ERR: error: tile-exp2: the running max is used outside the online-softmax chain; exp2 would change its units
func.func @negative_new_max_returned(%s: tensor<16x16xf32>, %scale: f32)
    -> tensor<16xf32> {
  %m0 = arith.constant dense<0xFF800000> : tensor<16xf32>
  %l0 = arith.constant dense<0.0> : tensor<16xf32>
  // expected-error @+1 {{tile-exp2: the running max is used outside the online-softmax chain; exp2 would change its units}}
  %m1, %l1, %p, %alpha = tile.online_softmax %s, %m0, %l0 scale(%scale)
      : tensor<16x16xf32>, tensor<16xf32>
  return %m1 : tensor<16xf32>
}

// -----

// One refused step fails the pass, even next to a step that would be fine.

// ERR: error: tile-exp2: the running max is used outside the online-softmax chain; exp2 would change its units
func.func @negative_one_bad_step(%s: tensor<16x16xf32>, %scale: f32,
                                 %n: index) -> (tensor<16xf32>, tensor<16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m0 = arith.constant dense<0xFF800000> : tensor<16xf32>
  %l0 = arith.constant dense<0.0> : tensor<16xf32>
  %m1, %l1, %p, %alpha = tile.online_softmax %s, %m0, %l0 scale(%scale)
      : tensor<16x16xf32>, tensor<16xf32>
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%m = %m0, %l = %l0)
      -> (tensor<16xf32>, tensor<16xf32>) {
    // expected-error @+1 {{tile-exp2: the running max is used outside the online-softmax chain}}
    %m2, %l2, %p2, %alpha2 = tile.online_softmax %s, %m, %l scale(%scale)
        : tensor<16x16xf32>, tensor<16xf32>
    scf.yield %m2, %l2 : tensor<16xf32>, tensor<16xf32>
  }
  return %l1, %r#0 : tensor<16xf32>, tensor<16xf32>
}

// -----

// A log-sum-exp of a max that no chain computed: its units would disagree
// with the chain's.

// ERR: error: tile-exp2: the log-sum-exp's max does not come from an online-softmax chain; exp2 would change the chain's units but not its
func.func @negative_log_sum_exp_of_other_max(%s: tensor<16x16xf32>,
                                             %scale: f32,
                                             %other: tensor<16xf32>)
    -> tensor<16xf32> {
  %m0 = arith.constant dense<0xFF800000> : tensor<16xf32>
  %l0 = arith.constant dense<0.0> : tensor<16xf32>
  %m1, %l1, %p, %alpha = tile.online_softmax %s, %m0, %l0 scale(%scale)
      : tensor<16x16xf32>, tensor<16xf32>
  // expected-error @+1 {{tile-exp2: the log-sum-exp's max does not come from an online-softmax chain; exp2 would change the chain's units but not its}}
  %lse = tile.log_sum_exp %other, %l1 scale(%scale) : tensor<16xf32>
  return %lse : tensor<16xf32>
}

// -----

// A log-sum-exp whose scale is not the chain's: with exp2 it would multiply
// the chain's max (of unscaled scores) by another factor.

// ERR: error: tile-exp2: the log-sum-exp's scale is not its online-softmax chain's; with exp2 it would scale the chain's max by another factor
func.func @negative_log_sum_exp_other_scale(%s: tensor<16x16xf32>, %scale: f32,
                                            %other: f32) -> tensor<16xf32> {
  %m0 = arith.constant dense<0xFF800000> : tensor<16xf32>
  %l0 = arith.constant dense<0.0> : tensor<16xf32>
  %m1, %l1, %p, %alpha = tile.online_softmax %s, %m0, %l0 scale(%scale)
      : tensor<16x16xf32>, tensor<16xf32>
  // expected-error @+1 {{tile-exp2: the log-sum-exp's scale is not its online-softmax chain's; with exp2 it would scale the chain's max by another factor}}
  %lse = tile.log_sum_exp %m1, %l1 scale(%other) : tensor<16xf32>
  return %lse : tensor<16xf32>
}
