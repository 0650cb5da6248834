// RUN: rm -rf %t && split-file --leading-lines %s %t
// RUN: tiled-attn-opt %t/document.mlir --tile-generate-block-mask="mask-function=document" | FileCheck %s
// RUN: tiled-attn-opt %t/document.mlir --tile-generate-block-mask="mask-function=document name=kinds_of_documents" \
// RUN:   | FileCheck %s --check-prefix=NAMED
// RUN: tiled-attn-opt %t/errors.mlir -split-input-file -verify-diagnostics \
// RUN:   --tile-generate-block-mask="mask-function=mask"
// RUN: not tiled-attn-opt %t/document.mlir --tile-generate-block-mask="mask-function=absent" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=ABSENT
// RUN: not tiled-attn-opt %t/document.mlir --tile-generate-block-mask="mask-function=document name=document" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=TAKEN
// RUN: not tiled-attn-opt %t/document.mlir --tile-generate-block-mask="mask-function=document name=1st" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=IDENT

// The block mask kernel of a mask function: the function's captured inputs,
// then seq_q, seq_k and block_kinds; one program per query block, a loop
// over the key blocks, two reductions to a scalar per block (some element
// seen, all covered) and one byte written per block.

//--- document.mlir
func.func @document(%b: index, %h: index, %q_idx: index, %kv_idx: index,
                    %document_ids: !tile.view<?x?xi32> {tile.arg = #tile.arg<captured, "document_ids">})
    -> i1 {
  %dq = tile.read %document_ids[%b, %q_idx] : !tile.view<?x?xi32> -> i32
  %dk = tile.read %document_ids[%b, %kv_idx] : !tile.view<?x?xi32> -> i32
  %same = arith.cmpi eq, %dq, %dk : i32
  return %same : i1
}

// CHECK-LABEL: func.func @block_mask(
// CHECK-SAME: %[[IDS:[^:]*]]: !tile.view<?x?xi32> {tile.arg = #tile.arg<captured, "document_ids">}
// CHECK-SAME: %[[SQ:[^:]*]]: index {tile.arg = #tile.arg<seq_q>}
// CHECK-SAME: %[[SK:[^:]*]]: index {tile.arg = #tile.arg<seq_k>}
// CHECK-SAME: %[[KINDS:[^:]*]]: !tile.view<?x?x?x?xi8> {tile.arg = #tile.arg<block_kinds>})
// CHECK-DAG: %[[M:.*]] = tile.block_id x
// CHECK-DAG: %[[H:.*]] = tile.block_id y
// CHECK-DAG: %[[B:.*]] = tile.block_id z
// CHECK: %[[Q0:.*]] = arith.muli %[[M]], %c128
// CHECK: %[[ROWS:.*]] = tile.iota offset(%[[Q0]]) : tensor<128xi32>
// CHECK: %[[NK:.*]] = arith.ceildivui %[[SK]], %c128
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %[[NK]]
// CHECK: %[[K0:.*]] = arith.muli %[[J]], %c128
// CHECK: tile.apply @document at(%[[B]], %[[H]], %[[Q0]], %[[K0]]) captures(%[[IDS]] : !tile.view<?x?xi32>) : tensor<128x128xi1>
// CHECK: tile.bounds_mask offsets(%[[K0]]) limits(%[[SK]])
// CHECK: tile.reduce max %{{.*}} along 1 : tensor<128x128xf32> -> tensor<128xf32>
// CHECK: %[[SOME:.*]] = tile.reduce max %{{.*}} along 0 : tensor<128xf32> -> f32
// CHECK: tile.reduce min %{{.*}} along 1 : tensor<128x128xf32> -> tensor<128xf32>
// CHECK: %[[ALL:.*]] = tile.reduce min %{{.*}} along 0 : tensor<128xf32> -> f32
// CHECK: tile.write %{{.*}}, %[[KINDS]][%[[B]], %[[H]], %[[M]], %[[J]]] : i8, <?x?x?x?xi8>

// NAMED: func.func @kinds_of_documents(

// ABSENT: error: no function 'absent' with a body in the module for the block mask kernel
// TAKEN: error: tile-generate-block-mask: the module already has a symbol named 'document'
// IDENT: error: tile-generate-block-mask: name must be a C identifier

//--- errors.mlir

// expected-error @+1 {{a mask function takes (b, h, q_idx, kv_idx: index, captured inputs...) and gives an i1, got '(index, index, index) -> i1'}}
func.func @mask(%b: index, %h: index, %q_idx: index) -> i1 {
  %t = arith.constant true
  return %t : i1
}

// -----

// expected-error @+1 {{argument #4 of 'mask' is a captured input: mark it #tile.arg<captured, "name">}}
func.func @mask(%b: index, %h: index, %q_idx: index, %kv_idx: index, %x: f32) -> i1 {
  %t = arith.constant true
  return %t : i1
}
