// RUN: tiled-attn-opt %s -split-input-file --tile-heavy-first | FileCheck %s

// tile-heavy-first renumbers the query blocks of a causal kernel in reverse,
// m = ceil(S_q / BLOCK_M) - 1 - block_id.x, so that the programs with the
// most K/V blocks start first. Every former use of block_id.x sees m.

// CHECK-LABEL: func.func @causal(
// CHECK-SAME: %[[Q:[^:]*]]: !tile.view<?x?x?x64xf16>
// CHECK: %[[X:.*]] = tile.block_id x
// CHECK: %[[SQ:.*]] = tile.dim %[[Q]][2]
// CHECK: %[[C128:.*]] = arith.constant 128 : index
// CHECK: %[[C127:.*]] = arith.constant 127 : index
// CHECK: %[[UP:.*]] = arith.addi %[[SQ]], %[[C127]] : index
// CHECK: %[[NB:.*]] = arith.divui %[[UP]], %[[C128]] : index
// CHECK: %[[C1:.*]] = arith.constant 1 : index
// CHECK: %[[LAST:.*]] = arith.subi %[[NB]], %[[C1]] : index
// CHECK: %[[M:.*]] = arith.subi %[[LAST]], %[[X]] : index
// CHECK: tile.load %[[Q]][%{{.*}}, %{{.*}}, %[[M]], %{{.*}}]
// CHECK: tile.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}, %[[M]], %{{.*}}]
func.func @causal(%q: !tile.view<?x?x?x64xf16>, %k: !tile.view<?x?x?x64xf16>,
                  %v: !tile.view<?x?x?x64xf16>, %o: !tile.view<?x?x?x64xf16>,
                  %scale: f32) attributes {
    tile.sdpa = #tile.sdpa<head_dim = 64, element_type = f16,
                           causal = top_left, block_m = 128, block_n = 64>} {
  %c0 = arith.constant 0 : index
  %m = tile.block_id x
  %h = tile.block_id y
  %b = tile.block_id z
  %t = tile.load %q[%b, %h, %m, %c0] pad(0.0) : !tile.view<?x?x?x64xf16> -> tensor<128x64xf16>
  tile.store %t, %o[%b, %h, %m, %c0] : tensor<128x64xf16>, !tile.view<?x?x?x64xf16>
  return
}

// -----

// negative_non_causal: without a causal mask every program does the same
// work; the order is left alone.

// CHECK-LABEL: func.func @negative_non_causal(
// CHECK: %[[X:.*]] = tile.block_id x
// CHECK-NOT: tile.dim
// CHECK: tile.load %{{.*}}[%{{.*}}, %{{.*}}, %[[X]], %{{.*}}]
func.func @negative_non_causal(%q: !tile.view<?x?x?x64xf16>, %k: !tile.view<?x?x?x64xf16>,
                               %v: !tile.view<?x?x?x64xf16>, %o: !tile.view<?x?x?x64xf16>,
                               %scale: f32) attributes {
    tile.sdpa = #tile.sdpa<head_dim = 64, element_type = f16,
                           causal = none, block_m = 64, block_n = 64>} {
  %c0 = arith.constant 0 : index
  %m = tile.block_id x
  %h = tile.block_id y
  %b = tile.block_id z
  %t = tile.load %q[%b, %h, %m, %c0] pad(0.0) : !tile.view<?x?x?x64xf16> -> tensor<64x64xf16>
  tile.store %t, %o[%b, %h, %m, %c0] : tensor<64x64xf16>, !tile.view<?x?x?x64xf16>
  return
}

// -----

// negative_no_sdpa: a kernel without #tile.sdpa has no known mask; left
// alone.

// CHECK-LABEL: func.func @negative_no_sdpa(
// CHECK: %[[X:.*]] = tile.block_id x
// CHECK-NEXT: tile.dim
// CHECK-NOT: arith.subi
func.func @negative_no_sdpa(%q: !tile.view<?x?x?x64xf16>) -> index {
  %x = tile.block_id x
  %n = tile.dim %q[2] : !tile.view<?x?x?x64xf16>
  %s = arith.addi %x, %n : index
  return %s : index
}
