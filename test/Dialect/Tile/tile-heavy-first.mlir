// RUN: tiled-attn-opt %s -split-input-file --tile-heavy-first | FileCheck %s
// RUN: tiled-attn-opt %s -split-input-file --tile-heavy-first="head-group=4" | FileCheck %s --check-prefix=GROUP
// RUN: not tiled-attn-opt %s -split-input-file --tile-heavy-first="head-group=-1" 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: tiled-attn-opt %s -split-input-file --tile-heavy-first="all-masks=1" | FileCheck %s --check-prefix=ALL
// BAD: tile-heavy-first: head-group must be >= 0, got -1
// The option is checked whether or not the pass has work: a non-causal kernel
// (nothing to reorder) is refused with the bad option too.
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa \
// RUN:   | not tiled-attn-opt --tile-heavy-first="head-group=-1" 2>&1 | FileCheck %s --check-prefix=BAD

// tile-heavy-first renumbers the programs of a causal kernel. The launch grid
// stays (nq, H, B), nq = ceil(S_q / BLOCK_M); the linear id
// L = x + nq * (y + H * z), the order in which programs start, now counts the
// query blocks downwards with the heads innermost:
//   m = nq - 1 - L / (H * B),  h = (L mod (H * B)) mod H,  b = (L mod (H * B)) / H.
// Every former use of block_id x, y, z sees m, h, b.

// CHECK-LABEL: func.func @causal(
// CHECK-SAME: %[[Q:[^:]*]]: !tile.view<?x?x?x64xf16>
// CHECK-DAG: %[[X:.*]] = tile.block_id x
// CHECK-DAG: %[[Y:.*]] = tile.block_id y
// CHECK-DAG: %[[Z:.*]] = tile.block_id z
// CHECK-DAG: %[[B:.*]] = tile.dim %[[Q]][0]
// CHECK-DAG: %[[H:.*]] = tile.dim %[[Q]][1]
// CHECK-DAG: %[[SQ:.*]] = tile.dim %[[Q]][2]
// CHECK: %[[UP:.*]] = arith.addi %[[SQ]], %{{.*}} : index
// CHECK: %[[NQ:.*]] = arith.divui %[[UP]], %{{.*}} : index
// CHECK: %[[HZ:.*]] = arith.muli %[[H]], %[[Z]] : index
// CHECK: %[[YHZ:.*]] = arith.addi %[[Y]], %[[HZ]] : index
// CHECK: %[[OFF:.*]] = arith.muli %[[NQ]], %[[YHZ]] : index
// CHECK: %[[L:.*]] = arith.addi %[[X]], %[[OFF]] : index
// CHECK: %[[P:.*]] = arith.muli %[[H]], %[[B]] : index
// CHECK: %[[STEP:.*]] = arith.divui %[[L]], %[[P]] : index
// CHECK: %[[LAST:.*]] = arith.subi %[[NQ]], %{{.*}} : index
// CHECK: %[[M:.*]] = arith.subi %[[LAST]], %[[STEP]] : index
// CHECK: %[[HB:.*]] = arith.remui %[[L]], %[[P]] : index
// CHECK: %[[NH:.*]] = arith.remui %[[HB]], %[[H]] : index
// CHECK: %[[NB:.*]] = arith.divui %[[HB]], %[[H]] : index
// CHECK-NOT: tile.block_id
// CHECK: tile.load %[[Q]][%[[NB]], %[[NH]], %[[M]], %{{.*}}]
// CHECK: tile.store %{{.*}}, %{{.*}}[%[[NB]], %[[NH]], %[[M]], %{{.*}}]
func.func @causal(%q: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<q>}, %k: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<k>},
                  %v: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<v>}, %o: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<o>},
                  %scale: f32 {tile.arg = #tile.arg<scale>}) attributes {
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

// causal_grouped: with head-group=4 the heads are ordered 4 at a time:
// group g = L / (4 nq) holds heads 4g .. 4g + G - 1, G = min(4, H * B - 4g),
// and within it L' = L - 4g nq gives m = nq - 1 - L' / G, head 4g + L' mod G.

// GROUP-LABEL: func.func @causal_grouped(
// GROUP: %[[X:.*]] = tile.block_id x
// GROUP: %[[L:.*]] = arith.addi %[[X]], %{{.*}} : index
// GROUP: %[[P:.*]] = arith.muli %{{.*}}, %{{.*}} : index
// GROUP-DAG: %[[C4:.*]] = arith.constant 4 : index
// GROUP: %[[SPAN:.*]] = arith.muli %[[NQ:.*]], %[[C4]] : index
// GROUP: %[[G:.*]] = arith.divui %[[L]], %[[SPAN]] : index
// GROUP: %[[FIRST:.*]] = arith.muli %[[G]], %[[C4]] : index
// GROUP: %[[SKIP:.*]] = arith.muli %[[FIRST]], %[[NQ]] : index
// GROUP: %[[LOCAL:.*]] = arith.subi %[[L]], %[[SKIP]] : index
// GROUP: %[[LEFT:.*]] = arith.subi %[[P]], %[[FIRST]] : index
// GROUP: %[[SIZE:.*]] = arith.minui %[[C4]], %[[LEFT]] : index
// GROUP: %[[STEP:.*]] = arith.divui %[[LOCAL]], %[[SIZE]] : index
// GROUP: %[[M:.*]] = arith.subi %{{.*}}, %[[STEP]] : index
// GROUP: %[[R:.*]] = arith.remui %[[LOCAL]], %[[SIZE]] : index
// GROUP: %[[HB:.*]] = arith.addi %[[FIRST]], %[[R]] : index
// GROUP: tile.load %{{.*}}[%{{.*}}, %{{.*}}, %[[M]], %{{.*}}]
func.func @causal_grouped(%q: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<q>}, %k: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<k>},
                          %v: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<v>}, %o: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<o>},
                          %scale: f32 {tile.arg = #tile.arg<scale>}) attributes {
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
// work; the order is left alone. With all-masks it is renumbered with the
// query blocks upwards and the heads innermost (m = L / (H * B)), so that
// the heads' programs of a query block run together (a tensor broadcast
// over the heads is then read from L2).

// CHECK-LABEL: func.func @negative_non_causal(
// ALL-LABEL: func.func @negative_non_causal(
// ALL: %[[B:.*]] = tile.dim %{{.*}}[0]
// ALL: %[[H:.*]] = tile.dim %{{.*}}[1]
// ALL: %[[P:.*]] = arith.muli %[[H]], %[[B]] : index
// ALL-NEXT: %[[M:.*]] = arith.divui %[[L:.*]], %[[P]] : index
// ALL-NEXT: arith.remui %[[L]], %[[P]] : index
// ALL-NOT: arith.subi
// ALL: tile.load %{{.*}}[%{{.*}}, %{{.*}}, %[[M]], %{{.*}}]
// CHECK: %[[X:.*]] = tile.block_id x
// CHECK-NOT: tile.dim
// CHECK: tile.load %{{.*}}[%{{.*}}, %{{.*}}, %[[X]], %{{.*}}]
func.func @negative_non_causal(%q: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<q>}, %k: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<k>},
                               %v: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<v>}, %o: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<o>},
                               %scale: f32 {tile.arg = #tile.arg<scale>}) attributes {
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
