// RUN: tiled-attn-opt %s --split-input-file --tile-vectorize-apply --verify-diagnostics | FileCheck %s
// block-loads: a 32-bit or one-byte tensor read at (b, h, q_idx, kv_idx)
// becomes the load of the score's block (block indices: the block's first
// query and key over the block shape); the blocks equal the gathers on the
// host.
// RUN: tiled-attn-opt %repo/kernels/functions/bias.mlir --tile-generate-sdpa="head-dim=64 variant=none+bias" \
// RUN:   --tile-vectorize-apply=block-loads=1 | FileCheck %s --check-prefix=BLOCK
// RUN: tiled-attn-opt %repo/kernels/functions/mask.mlir --tile-generate-sdpa="head-dim=64 variant=none+mask" \
// RUN:   --tile-vectorize-apply=block-loads=1 | FileCheck %s --check-prefix=BYTES
// RUN: tiled-attn-opt %repo/kernels/functions/bias.mlir --tile-generate-sdpa="head-dim=16 variant=top_left_lse+bias" -o %t.mlir
// RUN: tiled-attn-opt %t.mlir --tile-vectorize-apply=block-loads=1 -o %t.blocks.mlir
// RUN: tiled-attn-run %t.mlir --compare-with=%t.blocks.mlir --equivalence-tolerance=1e-6 --batch=2 --heads=3 --kv-heads=1 \
// RUN:   --shapes=1x1,100x37,37x100,130x130 --scale=0.4 --capture=bias=Bx1xSqxSk:-2:2 | FileCheck %s --check-prefix=HOST
// A 16-bit bias (bias_bf16.mlir) is block-loaded as it is, widened in registers:
// RUN: tiled-attn-opt %repo/kernels/functions/bias_bf16.mlir --tile-generate-sdpa="head-dim=64 variant=none+bias_bf16" \
// RUN:   --tile-vectorize-apply=block-loads=1 | FileCheck %s --check-prefix=HALF
// RUN: tiled-attn-opt %repo/kernels/functions/bias_bf16.mlir --tile-generate-sdpa="head-dim=16 variant=top_left+bias_bf16" -o %t.half.mlir
// RUN: tiled-attn-opt %t.half.mlir --tile-vectorize-apply=block-loads=1 -o %t.half-blocks.mlir
// RUN: tiled-attn-run %t.half.mlir --compare-with=%t.half-blocks.mlir --equivalence-tolerance=1e-6 --batch=2 --heads=3 --kv-heads=1 \
// RUN:   --shapes=1x1,100x37,37x100,130x130 --scale=0.4 --capture=bias=Bx1xSqxSk:-2:2 | FileCheck %s --check-prefix=HOST
// HALF: %[[B:.*]] = tile.load %arg5[{{.*}}] pad(0.000000e+00) : <?x?x?x?xbf16> -> tensor<64x64xbf16>
// HALF-NEXT: arith.extf %[[B]] : tensor<64x64xbf16> to tensor<64x64xf32>
// RUN: tiled-attn-opt %repo/kernels/functions/mask.mlir --tile-generate-sdpa="head-dim=16 variant=none+mask" -o %t.mask.mlir
// RUN: tiled-attn-opt %t.mask.mlir --tile-vectorize-apply=block-loads=1 -o %t.mask-blocks.mlir
// RUN: tiled-attn-run %t.mask.mlir --compare-with=%t.mask-blocks.mlir --equivalence-tolerance=1e-6 --batch=2 --heads=3 \
// RUN:   --kv-heads=1 --shapes=1x1,100x37,37x100,130x130 --scale=0.4 --capture=mask=Bx1xSqxSk:0:1 | FileCheck %s --check-prefix=HOST
// HOST: 4 passed, 0 failed

// BLOCK-LABEL: func.func @sdpa_fwd
// BLOCK: %[[QB:.*]] = tile.block_id x
// BLOCK: scf.for %[[J:[^ ]*]] =
// BLOCK-NOT: tile.gather
// BLOCK: tile.load %arg5[%{{.*}}, %{{.*}}, %[[QB]], %[[J]]] pad(0.000000e+00) : <?x?x?x?xf32> -> tensor<64x64xf32>
// BLOCK-NOT: tile.gather

// BYTES-LABEL: func.func @sdpa_fwd
// BYTES-NOT: tile.gather
// BYTES: tile.load %arg5[{{.*}}] pad(0.000000e+00) : <?x?x?x?xi8> -> tensor<64x64xi8>


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

// Transposed (keys as rows, the backward's Sᵀ): the keys' positions run
// along dimension 0 and the queries' along dimension 1.
// CHECK-LABEL: func.func @alibi_transposed
// CHECK-SAME: (%[[S:[^:]*]]: tensor<32x64xf32>, %[[B:[^:]*]]: index, %[[H:[^:]*]]: index, %[[Q0:[^:]*]]: index, %[[K0:[^:]*]]: index, %[[SLOPES:[^:]*]]: !tile.view<?xf32>)
// CHECK:      %[[Q:.*]] = tile.iota offset(%[[Q0]]) : tensor<64xi32>
// CHECK-NEXT: %[[KV:.*]] = tile.iota offset(%[[K0]]) : tensor<32xi32>
// CHECK-NEXT: %[[SLOPE:.*]] = tile.read %[[SLOPES]][%[[H]]] : <?xf32> -> f32
// CHECK-NEXT: %[[KVB:.*]] = tile.broadcast %[[KV]] along 1 : tensor<32xi32> -> tensor<32x64xi32>
// CHECK-NEXT: %[[QB:.*]] = tile.broadcast %[[Q]] along 0 : tensor<64xi32> -> tensor<32x64xi32>
// CHECK-NEXT: %[[D:.*]] = arith.subi %[[KVB]], %[[QB]] : tensor<32x64xi32>
func.func @alibi_transposed(%s: tensor<32x64xf32>, %b: index, %h: index, %q0: index,
                            %k0: index, %slopes: !tile.view<?xf32>) -> tensor<32x64xf32> {
  %r = tile.apply @alibi score(%s : tensor<32x64xf32>) at(%b, %h, %q0, %k0)
      captures(%slopes : !tile.view<?xf32>) {transposed} : tensor<32x64xf32>
  return %r : tensor<32x64xf32>
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

// -----

// block-loads needs the block's first positions as multiples of its shape;
// other starts keep the gather (here without block-loads as well).
func.func @bias(%score: f32, %b: index, %h: index, %q: index, %kv: index,
                %t: !tile.view<?x?x?x?xf32>) -> f32 {
  %x = tile.read %t[%b, %h, %q, %kv] : !tile.view<?x?x?x?xf32> -> f32
  %r = arith.addf %score, %x : f32
  return %r : f32
}

// CHECK-LABEL: func.func @bias_at_any_start
// CHECK: tile.gather
func.func @bias_at_any_start(%s: tensor<64x32xf32>, %b: index, %h: index,
                             %q0: index, %k0: index,
                             %t: !tile.view<?x?x?x?xf32>) -> tensor<64x32xf32> {
  %x = tile.apply @bias score(%s : tensor<64x32xf32>) at(%b, %h, %q0, %k0)
      captures(%t : !tile.view<?x?x?x?xf32>) : tensor<64x32xf32>
  return %x : tensor<64x32xf32>
}
