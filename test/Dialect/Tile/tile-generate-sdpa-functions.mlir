// The generator with a score and a mask function of the module: their
// captured inputs become the kernel's last arguments (once per name), the
// score function sees the scaled scores (the softmax's scale is then 1),
// and the mask function's result joins the bounds and causal masks.

// RUN: tiled-attn-opt %s --split-input-file --verify-diagnostics \
// RUN:   --tile-generate-sdpa="head-dim=64 variant=top_left+alibi+document" \
// RUN:   | FileCheck %s
// RUN: echo 'module {}' | not tiled-attn-opt --tile-generate-sdpa="variant=none+document" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=MISSING
// MISSING: no function 'document' with a body in the module for the kernel's variant none+document
// A split-KV kernel (issue 38) takes no functions yet.
// RUN: not tiled-attn-opt %s --split-input-file --tile-generate-sdpa="variant=none_lse_split+alibi" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=SPLIT
// SPLIT: error: a split-KV kernel takes no score or mask function and no block mask

func.func @alibi(%score: f32, %b: index, %h: index, %q: index, %kv: index,
                 %slopes: !tile.view<?xf32> {tile.arg = #tile.arg<captured, "slopes">}) -> f32 {
  %slope = tile.read %slopes[%h] : !tile.view<?xf32> -> f32
  %d = arith.subi %kv, %q : index
  %di = arith.index_cast %d : index to i32
  %df = arith.sitofp %di : i32 to f32
  %bias = arith.mulf %slope, %df : f32
  %r = arith.addf %score, %bias : f32
  return %r : f32
}

func.func @document(%b: index, %h: index, %q: index, %kv: index,
                    %doc: !tile.view<?x?xi32> {tile.arg = #tile.arg<captured, "document_ids">},
                    %slopes: !tile.view<?xf32> {tile.arg = #tile.arg<captured, "slopes">}) -> i1 {
  %dq = tile.read %doc[%b, %q] : !tile.view<?x?xi32> -> i32
  %dk = tile.read %doc[%b, %kv] : !tile.view<?x?xi32> -> i32
  %same = arith.cmpi eq, %dq, %dk : i32
  return %same : i1
}

// CHECK-LABEL: func.func @sdpa_fwd
// CHECK-SAME: %[[SCALE:[^:]*]]: f32 {tile.arg = #tile.arg<scale>}, %[[SLOPES:[^:]*]]: !tile.view<?xf32> {tile.arg = #tile.arg<captured, "slopes">}, %[[DOC:[^:]*]]: !tile.view<?x?xi32> {tile.arg = #tile.arg<captured, "document_ids">})
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG: %[[M:.*]] = tile.block_id x
// CHECK-DAG: %[[H:.*]] = tile.block_id y
// CHECK-DAG: %[[B:.*]] = tile.block_id z
// CHECK: %[[Q0:.*]] = arith.muli %[[M]], %{{.*}} : index
// CHECK: scf.for %[[J:[^ ]*]] =
// CHECK: %[[S:.*]] = tile.mma
// CHECK: %[[K0:.*]] = arith.muli %[[J]], %{{.*}} : index
// CHECK: %[[FACTOR:.*]] = tensor.splat %[[SCALE]] : tensor<64x64xf32>
// CHECK: %[[SCALED:.*]] = arith.mulf %[[S]], %[[FACTOR]]
// CHECK: %[[MODDED:.*]] = tile.apply @alibi score(%[[SCALED]] : tensor<64x64xf32>) at(%[[B]], %[[H]], %[[Q0]], %[[K0]]) captures(%[[SLOPES]] : !tile.view<?xf32>) : tensor<64x64xf32>
// CHECK: tile.causal_mask
// CHECK: %[[SAME:.*]] = tile.apply @document at(%[[B]], %[[H]], %[[Q0]], %[[K0]]) captures(%[[DOC]], %[[SLOPES]] : !tile.view<?x?xi32>, !tile.view<?xf32>) : tensor<64x64xi1>
// CHECK: %[[KEEP:.*]] = arith.andi %{{.*}}, %[[SAME]]
// CHECK: arith.select %[[KEEP]], %[[MODDED]], %{{.*}}
// CHECK: tile.online_softmax %{{.*}} scale(%[[ONE]])

// -----

// expected-error @+1 {{argument #5 of 'alibi' is a captured input: mark it #tile.arg<captured, "name">, the name the caller gives it by}}
func.func @alibi(%score: f32, %b: index, %h: index, %q: index, %kv: index,
                 %slopes: !tile.view<?xf32>) -> f32 {
  return %score : f32
}

// -----

// expected-error @+1 {{a score function takes (score: f32, b, h, q_idx, kv_idx: index, captured inputs...) and gives an f32, got '(index, index, index, index) -> f32'}}
func.func @alibi(%b: index, %h: index, %q: index, %kv: index) -> f32 {
  %c = arith.constant 0.0 : f32
  return %c : f32
}
