// RUN: tiled-attn-opt %s --split-input-file --tile-vectorize-apply --verify-diagnostics | FileCheck %s

// Each value takes the shape of what it varies with: a per-head slope stays
// a scalar read, positions are i32 vectors of the rows and of the keys, and
// they meet in the block only where they combine. The function is erased
// once inlined.

// CHECK-NOT: func.func @alibi
func.func @alibi(%score: f32, %b: index, %h: index, %q: index, %kv: index,
                 %slopes: !tile.view<?xf32>) -> f32 {
  %slope = tile.read %slopes[%h] : !tile.view<?xf32> -> f32
  %d = arith.subi %kv, %q : index
  %di = arith.index_cast %d : index to i32
  %df = arith.sitofp %di : i32 to f32
  %bias = arith.mulf %slope, %df : f32
  %r = arith.addf %score, %bias : f32
  return %r : f32
}

// CHECK-LABEL: func.func @alibi_block
// CHECK-SAME: (%[[S:[^:]*]]: tensor<64x32xf32>, %[[B:[^:]*]]: index, %[[H:[^:]*]]: index, %[[Q0:[^:]*]]: index, %[[K0:[^:]*]]: index, %[[SLOPES:[^:]*]]: !tile.view<?xf32>)
// CHECK:      %[[Q:.*]] = tile.iota offset(%[[Q0]]) : tensor<64xi32>
// CHECK-NEXT: %[[KV:.*]] = tile.iota offset(%[[K0]]) : tensor<32xi32>
// CHECK-NEXT: %[[SLOPE:.*]] = tile.read %[[SLOPES]][%[[H]]] : <?xf32> -> f32
// CHECK-NEXT: %[[KVB:.*]] = tile.broadcast %[[KV]] along 0 : tensor<32xi32> -> tensor<64x32xi32>
// CHECK-NEXT: %[[QB:.*]] = tile.broadcast %[[Q]] along 1 : tensor<64xi32> -> tensor<64x32xi32>
// CHECK-NEXT: %[[D:.*]] = arith.subi %[[KVB]], %[[QB]] : tensor<64x32xi32>
// CHECK-NEXT: %[[DF:.*]] = arith.sitofp %[[D]] : tensor<64x32xi32> to tensor<64x32xf32>
// CHECK-NEXT: %[[SPLAT:.*]] = tensor.splat %[[SLOPE]] : tensor<64x32xf32>
// CHECK-NEXT: %[[BIAS:.*]] = arith.mulf %[[SPLAT]], %[[DF]] : tensor<64x32xf32>
// CHECK-NEXT: %[[R:.*]] = arith.addf %[[S]], %[[BIAS]] : tensor<64x32xf32>
// CHECK-NEXT: return %[[R]]
func.func @alibi_block(%s: tensor<64x32xf32>, %b: index, %h: index, %q0: index,
                       %k0: index, %slopes: !tile.view<?xf32>) -> tensor<64x32xf32> {
  %r = tile.apply @alibi score(%s : tensor<64x32xf32>) at(%b, %h, %q0, %k0)
      captures(%slopes : !tile.view<?xf32>) : tensor<64x32xf32>
  return %r : tensor<64x32xf32>
}

// -----

// Document masking: one read per row and one per key (gathers of vectors),
// compared in the block.

func.func @document(%b: index, %h: index, %q: index, %kv: index,
                    %doc: !tile.view<?x?xi32>) -> i1 {
  %dq = tile.read %doc[%b, %q] : !tile.view<?x?xi32> -> i32
  %dk = tile.read %doc[%b, %kv] : !tile.view<?x?xi32> -> i32
  %same = arith.cmpi eq, %dq, %dk : i32
  return %same : i1
}

// CHECK-LABEL: func.func @document_block
// CHECK-SAME: (%[[B:[^:]*]]: index, %[[H:[^:]*]]: index, %[[Q0:[^:]*]]: index, %[[K0:[^:]*]]: index, %[[DOC:[^:]*]]: !tile.view<?x?xi32>)
// CHECK:      %[[Q:.*]] = tile.iota offset(%[[Q0]]) : tensor<128xi32>
// CHECK-NEXT: %[[KV:.*]] = tile.iota offset(%[[K0]]) : tensor<64xi32>
// CHECK-NEXT: %[[DQ:.*]] = tile.gather %[[DOC]][%[[B]], %[[Q]]] pad(0.000000e+00) : <?x?xi32>, index, tensor<128xi32> -> tensor<128xi32>
// CHECK-NEXT: %[[DK:.*]] = tile.gather %[[DOC]][%[[B]], %[[KV]]] pad(0.000000e+00) : <?x?xi32>, index, tensor<64xi32> -> tensor<64xi32>
// CHECK-NEXT: %[[DQB:.*]] = tile.broadcast %[[DQ]] along 1 : tensor<128xi32> -> tensor<128x64xi32>
// CHECK-NEXT: %[[DKB:.*]] = tile.broadcast %[[DK]] along 0 : tensor<64xi32> -> tensor<128x64xi32>
// CHECK-NEXT: %[[SAME:.*]] = arith.cmpi eq, %[[DQB]], %[[DKB]] : tensor<128x64xi32>
// CHECK-NEXT: return %[[SAME]] : tensor<128x64xi1>
func.func @document_block(%b: index, %h: index, %q0: index, %k0: index,
                          %doc: !tile.view<?x?xi32>) -> tensor<128x64xi1> {
  %keep = tile.apply @document at(%b, %h, %q0, %k0)
      captures(%doc : !tile.view<?x?xi32>) : tensor<128x64xi1>
  return %keep : tensor<128x64xi1>
}

// -----

// An additive bias tensor [B, H, S_q, S_k]: one gather of the block. A
// function that ignores the positions gives a splat of the block.

func.func @bias(%score: f32, %b: index, %h: index, %q: index, %kv: index,
                %bias: !tile.view<?x?x?x?xf32>) -> f32 {
  %x = tile.read %bias[%b, %h, %q, %kv] : !tile.view<?x?x?x?xf32> -> f32
  %r = arith.addf %score, %x : f32
  return %r : f32
}

func.func @everything(%b: index, %h: index, %q: index, %kv: index) -> i1 {
  %true = arith.constant true
  return %true : i1
}

// CHECK-LABEL: func.func @bias_block
// CHECK:      %[[Q:.*]] = tile.iota offset(%{{.*}}) : tensor<16xi32>
// CHECK-NEXT: %[[KV:.*]] = tile.iota offset(%{{.*}}) : tensor<32xi32>
// CHECK-NEXT: %[[QB:.*]] = tile.broadcast %[[Q]] along 1 : tensor<16xi32> -> tensor<16x32xi32>
// CHECK-NEXT: %[[KVB:.*]] = tile.broadcast %[[KV]] along 0 : tensor<32xi32> -> tensor<16x32xi32>
// CHECK-NEXT: %[[X:.*]] = tile.gather %{{.*}}[%{{.*}}, %{{.*}}, %[[QB]], %[[KVB]]] pad(0.000000e+00) : <?x?x?x?xf32>, index, index, tensor<16x32xi32>, tensor<16x32xi32> -> tensor<16x32xf32>
// CHECK-NEXT: arith.addf %{{.*}}, %[[X]] : tensor<16x32xf32>
// CHECK:      %[[TRUE:.*]] = arith.constant true
// CHECK-NEXT: tensor.splat %[[TRUE]] : tensor<16x32xi1>
func.func @bias_block(%s: tensor<16x32xf32>, %b: index, %h: index, %q0: index,
                      %k0: index, %bias: !tile.view<?x?x?x?xf32>)
    -> (tensor<16x32xf32>, tensor<16x32xi1>) {
  %r = tile.apply @bias score(%s : tensor<16x32xf32>) at(%b, %h, %q0, %k0)
      captures(%bias : !tile.view<?x?x?x?xf32>) : tensor<16x32xf32>
  %m = tile.apply @everything at(%b, %h, %q0, %k0) : tensor<16x32xi1>
  return %r, %m : tensor<16x32xf32>, tensor<16x32xi1>
}

// -----

// What has no tile form is an error naming the op.

func.func @branchy(%b: index, %h: index, %q: index, %kv: index) -> i1 {
  %c = arith.cmpi ult, %q, %kv : index
  // expected-error @+1 {{'scf.if' op has no tile form: a function of tile.apply (@branchy) may use arith and math ops on scalars, tile.read and tile.dim}}
  %r = scf.if %c -> (i1) {
    %t = arith.constant true
    scf.yield %t : i1
  } else {
    %f = arith.constant false
    scf.yield %f : i1
  }
  return %r : i1
}

func.func @branchy_block(%b: index, %h: index, %q0: index, %k0: index) -> tensor<16x16xi1> {
  %m = tile.apply @branchy at(%b, %h, %q0, %k0) : tensor<16x16xi1>
  return %m : tensor<16x16xi1>
}
