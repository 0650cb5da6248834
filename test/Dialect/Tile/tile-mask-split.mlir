// RUN: tiled-attn-opt %s -split-input-file -verify-diagnostics --tile-mask-split | FileCheck %s
// RUN: tiled-attn-opt %s -split-input-file -verify-diagnostics --tile-mask-split=guard=1 | FileCheck %s --check-prefix=GUARD
// RUN: tiled-attn-opt %s -split-input-file -verify-diagnostics --tile-mask-split=masked-first=1 | FileCheck %s --check-prefix=FIRST
// RUN: tiled-attn-opt %repo/kernels/functions/document.mlir --tile-generate-sdpa="head-dim=64 variant=none_sparse+document" --tile-mask-split | FileCheck %s --check-prefix=SPARSE

// Top-left, BLOCK_M = 32, BLOCK_N = 16. With row0 = m * 32:
//   n_visible = clamp(ceildiv(row0 + 32, 16), 0, ub)
//   n_full    = clamp(min(floordiv(row0 + 1, 16), floordiv(S_k, 16),
//                         floordiv(rows of K, 16)), 0, n_visible)
// The first loop has no mask left and loads K in bounds; the second is the
// original body.

// CHECK-LABEL: func.func @top_left
// CHECK-SAME:    mask_split = true
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[NEG_INF:.*]] = arith.constant dense<0xFF800000> : tensor<32xf32>
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : tensor<32xf32>
// CHECK:         %[[SEQ_K:.*]] = tile.dim %{{.*}}[2]
// CHECK:         %[[UB:.*]] = arith.ceildivui %[[SEQ_K]], %{{.*}} : index
// CHECK:         %[[ROW:.*]] = arith.muli
// CHECK-DAG:     %[[BM:.*]] = arith.constant 32 : index
// CHECK-DAG:     %[[BN:.*]] = arith.constant 16 : index
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[LO:.*]] = arith.constant 0 : index
// CHECK:         %[[END:.*]] = arith.addi %[[ROW]], %[[BM]] : index
// CHECK:         %[[CEIL:.*]] = arith.ceildivsi %[[END]], %[[BN]] : index
// CHECK:         %[[VIS:.*]] = arith.minsi %[[CEIL]], %[[UB]] : index
// CHECK:         %[[N_VISIBLE:.*]] = arith.maxsi %[[VIS]], %[[LO]] : index
// CHECK:         %[[NEXT:.*]] = arith.addi %[[ROW]], %[[ONE]] : index
// CHECK:         %[[DIAG:.*]] = arith.floordivsi %[[NEXT]], %[[BN]] : index
// CHECK:         %[[IN:.*]] = arith.floordivsi %[[SEQ_K]], %[[BN]] : index
// CHECK:         %[[FULL0:.*]] = arith.minsi %[[DIAG]], %[[IN]] : index
// CHECK:         %[[K_ROWS:.*]] = tile.dim %[[K:.*]][2]
// CHECK:         %[[K_IN:.*]] = arith.floordivsi %[[K_ROWS]], %[[BN]] : index
// CHECK:         %[[FULL1:.*]] = arith.minsi %[[FULL0]], %[[K_IN]] : index
// CHECK:         %[[FULL2:.*]] = arith.minsi %[[FULL1]], %[[N_VISIBLE]] : index
// CHECK:         %[[N_FULL:.*]] = arith.maxsi %[[FULL2]], %[[LO]] : index
// CHECK:         %[[UNMASKED:.*]]:2 = scf.for %{{.*}} = %[[C0]] to %[[N_FULL]] step %{{.*}} iter_args(%{{.*}} = %[[NEG_INF]], %{{.*}} = %[[ZERO]])
// CHECK:           tile.load %[[K]][{{.*}}] pad(0.000000e+00) transpose in_bounds
// CHECK:           %[[S:.*]] = tile.mma
// CHECK-NOT:       tile.bounds_mask
// CHECK-NOT:       tile.causal_mask
// CHECK-NOT:       arith.select
// CHECK:           tile.online_softmax %[[S]],
// CHECK:         %[[MASKED:.*]]:2 = scf.for %{{.*}} = %[[N_FULL]] to %[[N_VISIBLE]] step %{{.*}} iter_args(%{{.*}} = %[[UNMASKED]]#0, %{{.*}} = %[[UNMASKED]]#1)
// CHECK:           tile.load %[[K]][{{.*}}] pad(0.000000e+00) transpose :
// CHECK:           %[[COL:.*]] = arith.muli
// CHECK:           tile.bounds_mask offsets(%[[COL]]) limits(%[[SEQ_K]])
// CHECK:           tile.causal_mask %[[ROW]], %[[COL]]
// CHECK:           arith.andi
// CHECK:           %[[X:.*]] = arith.select
// CHECK:           tile.online_softmax %[[X]],
// CHECK:         tile.broadcast %[[MASKED]]#1 along 1
// Guard: one loop over the visible blocks; the masks and their select run
// only for j >= n_full, under an scf.if whose else branch passes the scores
// through. The loads keep their checks.
// GUARD-LABEL: func.func @top_left
// GUARD-SAME:    mask_split = true
// GUARD:         %[[N_VISIBLE:.*]] = arith.maxsi
// GUARD:         %[[N_FULL:.*]] = arith.maxsi
// GUARD:         scf.for %[[J:.*]] = %{{.*}} to %[[N_VISIBLE]]
// GUARD:           tile.load %{{.*}} pad(0.000000e+00) transpose :
// GUARD:           %[[S:.*]] = tile.mma
// GUARD:           %[[COL:.*]] = arith.muli %[[J]]
// GUARD:           %[[PARTIAL:.*]] = arith.cmpi sge, %[[J]], %[[N_FULL]] : index
// GUARD-NEXT:      %[[X:.*]] = scf.if %[[PARTIAL]] -> (tensor<32x16xf32>) {
// GUARD-NEXT:        tile.bounds_mask offsets(%[[COL]])
// GUARD-NEXT:        tile.broadcast
// GUARD-NEXT:        tile.causal_mask
// GUARD-NEXT:        arith.andi
// GUARD-NEXT:        %[[M:.*]] = arith.select
// GUARD-NEXT:        scf.yield %[[M]] : tensor<32x16xf32>
// GUARD-NEXT:      } else {
// GUARD-NEXT:        scf.yield %[[S]] : tensor<32x16xf32>
// GUARD-NEXT:      }
// GUARD-NEXT:      tile.online_softmax %[[X]],
// GUARD-NOT:     scf.for
// GUARD:         return
// Masked first: the same two loops, the masked one first, from the same
// start values; the unmasked loop takes its results, and the function's
// users take the unmasked loop's.
// FIRST-LABEL: func.func @top_left
// FIRST-SAME:    mask_split = true
// FIRST-DAG:     %[[C0:.*]] = arith.constant 0 : index
// FIRST-DAG:     %[[NEG_INF:.*]] = arith.constant dense<0xFF800000> : tensor<32xf32>
// FIRST-DAG:     %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : tensor<32xf32>
// FIRST:         %[[N_VISIBLE:.*]] = arith.maxsi
// FIRST:         %[[N_FULL:.*]] = arith.maxsi
// FIRST:         %[[MASKED:.*]]:2 = scf.for %{{.*}} = %[[N_FULL]] to %[[N_VISIBLE]] step %{{.*}} iter_args(%{{.*}} = %[[NEG_INF]], %{{.*}} = %[[ZERO]])
// FIRST:           tile.load %[[K:.*]][{{.*}}] pad(0.000000e+00) transpose :
// FIRST:           tile.causal_mask
// FIRST:           arith.select
// FIRST:         %[[UNMASKED:.*]]:2 = scf.for %{{.*}} = %[[C0]] to %[[N_FULL]] step %{{.*}} iter_args(%{{.*}} = %[[MASKED]]#0, %{{.*}} = %[[MASKED]]#1)
// FIRST:           tile.load %[[K]][{{.*}}] pad(0.000000e+00) transpose in_bounds
// FIRST-NOT:       tile.causal_mask
// FIRST-NOT:       arith.select
// FIRST:           tile.online_softmax
// FIRST:         tile.broadcast %[[UNMASKED]]#1 along 1
func.func @top_left(%q: !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<q>}, %k: !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<k>},
                    %v: !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<v>}, %o: !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<o>},
                    %scale: f32 {tile.arg = #tile.arg<scale>})
    attributes {tile.sdpa = #tile.sdpa<head_dim = 16, element_type = f16, causal = top_left, block_m = 32, block_n = 16>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %neg_inf = arith.constant dense<0xFF800000> : tensor<32xf32>
  %zero = arith.constant dense<0.0> : tensor<32xf32>
  %zero_s = arith.constant dense<0.0> : tensor<32x16xf32>
  %masked = arith.constant dense<0xFF800000> : tensor<32x16xf32>
  %m_blk = tile.block_id x
  %seq_k = tile.dim %k[2] : !tile.view<?x?x?x16xf16>
  %qt = tile.load %q[%c0, %c0, %m_blk, %c0] pad(0.0)
      : !tile.view<?x?x?x16xf16> -> tensor<32x16xf16>
  %n = arith.ceildivui %seq_k, %c16 : index
  %row = arith.muli %m_blk, %c32 : index
  %r:2 = scf.for %j = %c0 to %n step %c1 iter_args(%m = %neg_inf, %l = %zero)
      -> (tensor<32xf32>, tensor<32xf32>) {
    %kt = tile.load %k[%c0, %c0, %j, %c0] pad(0.0) transpose
        : !tile.view<?x?x?x16xf16> -> tensor<16x16xf16>
    %s = tile.mma %qt, %kt, %zero_s
        : tensor<32x16xf16>, tensor<16x16xf16> -> tensor<32x16xf32>
    %col = arith.muli %j, %c16 : index
    %in = tile.bounds_mask offsets(%col) limits(%seq_k) : tensor<16xi1>
    %in_b = tile.broadcast %in along 0 : tensor<16xi1> -> tensor<32x16xi1>
    %vis = tile.causal_mask %row, %col : tensor<32x16xi1>
    %keep = arith.andi %in_b, %vis : tensor<32x16xi1>
    %x = arith.select %keep, %s, %masked : tensor<32x16xi1>, tensor<32x16xf32>
    %m1, %l1, %p, %a = tile.online_softmax %x, %m, %l scale(%scale)
        : tensor<32x16xf32>, tensor<32xf32>
    scf.yield %m1, %l1 : tensor<32xf32>, tensor<32xf32>
  }
  %l_b = tile.broadcast %r#1 along 1 : tensor<32xf32> -> tensor<32x16xf32>
  %out = arith.truncf %l_b : tensor<32x16xf32> to tensor<32x16xf16>
  tile.store %out, %o[%c0, %c0, %m_blk, %c0]
      : tensor<32x16xf16>, !tile.view<?x?x?x16xf16>
  return
}

// -----

// A window mask (the band lo <= c - r <= hi, given at run time): a masked
// loop on each side of the unmasked one. BLOCK_M = 32, BLOCK_N = 16:
//   n_visible = clamp(ceildiv(row0 + 32 + hi, 16), 0, ub)
//   n_full    = floordiv(row0 + 1 + hi, 16) (then S_k's and K's bounds)
//   n_first   = clamp(floordiv(row0 + lo, 16), 0, n_visible)
//   n_lo      = clamp(ceildiv(row0 + lo + 31, 16), n_first, n_visible)
//   n_full    clamped to [n_lo, n_visible]
// The left edge runs first from the start values, then the unmasked loop,
// then the right edge; blocks outside [n_first, n_visible) are not visited.

// CHECK-LABEL: func.func @window
// CHECK-SAME:    %[[BAND_LO:[^:]*]]: index {tile.arg = #tile.arg<window_lo>}, %[[BAND_HI:[^:]*]]: index {tile.arg = #tile.arg<window_hi>})
// CHECK-SAME:    mask_split = true
// CHECK-DAG:     %[[NEG_INF:.*]] = arith.constant dense<0xFF800000> : tensor<32xf32>
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : tensor<32xf32>
// CHECK:         %[[SEQ_K:.*]] = tile.dim %{{.*}}[2]
// CHECK:         %[[UB:.*]] = arith.ceildivui %[[SEQ_K]], %{{.*}} : index
// CHECK:         %[[ROW:.*]] = arith.muli
// CHECK-DAG:     %[[BM:.*]] = arith.constant 32 : index
// CHECK-DAG:     %[[BN:.*]] = arith.constant 16 : index
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK:         %[[END0:.*]] = arith.addi %[[ROW]], %[[BM]] : index
// CHECK:         %[[END:.*]] = arith.addi %[[END0]], %[[BAND_HI]] : index
// CHECK:         %[[CEIL:.*]] = arith.ceildivsi %[[END]], %[[BN]] : index
// CHECK:         %[[VIS:.*]] = arith.minsi %[[CEIL]], %[[UB]] : index
// CHECK:         %[[N_VISIBLE:.*]] = arith.maxsi %[[VIS]], %[[C0]] : index
// CHECK:         %[[NEXT0:.*]] = arith.addi %[[ROW]], %[[ONE]] : index
// CHECK:         %[[NEXT:.*]] = arith.addi %[[NEXT0]], %[[BAND_HI]] : index
// CHECK:         %[[RIGHT:.*]] = arith.floordivsi %[[NEXT]], %[[BN]] : index
// CHECK:         %[[START:.*]] = arith.addi %[[ROW]], %[[BAND_LO]] : index
// CHECK:         %[[FIRST0:.*]] = arith.floordivsi %[[START]], %[[BN]] : index
// CHECK:         %[[FIRST1:.*]] = arith.minsi %[[FIRST0]], %[[N_VISIBLE]] : index
// CHECK:         %[[N_FIRST:.*]] = arith.maxsi %[[FIRST1]], %[[C0]] : index
// CHECK:         %[[EDGE:.*]] = arith.addi %[[START]], %{{.*}} : index
// CHECK:         %[[LO0:.*]] = arith.ceildivsi %[[EDGE]], %[[BN]] : index
// CHECK:         %[[LO1:.*]] = arith.minsi %[[LO0]], %[[N_VISIBLE]] : index
// CHECK:         %[[N_LO:.*]] = arith.maxsi %[[LO1]], %[[N_FIRST]] : index
// CHECK:         %[[FULL0:.*]] = arith.minsi %[[RIGHT]], %{{.*}} : index
// CHECK:         %[[FULL1:.*]] = arith.minsi %{{.*}}, %[[N_VISIBLE]] : index
// CHECK:         %[[N_FULL:.*]] = arith.maxsi %[[FULL1]], %[[N_LO]] : index
// CHECK:         %[[LEFT:.*]]:2 = scf.for %{{.*}} = %[[N_FIRST]] to %[[N_LO]] step %{{.*}} iter_args(%{{.*}} = %[[NEG_INF]], %{{.*}} = %[[ZERO]])
// CHECK:           tile.window_mask %[[ROW]], %{{.*}} diagonals(%[[BAND_LO]], %[[BAND_HI]])
// CHECK:           arith.select
// CHECK:         %[[UNMASKED:.*]]:2 = scf.for %{{.*}} = %[[N_LO]] to %[[N_FULL]] step %{{.*}} iter_args(%{{.*}} = %[[LEFT]]#0, %{{.*}} = %[[LEFT]]#1)
// CHECK:           tile.load %{{.*}} transpose in_bounds
// CHECK-NOT:       tile.window_mask
// CHECK-NOT:       arith.select
// CHECK:           tile.online_softmax
// CHECK:         %[[MASKED:.*]]:2 = scf.for %{{.*}} = %[[N_FULL]] to %[[N_VISIBLE]] step %{{.*}} iter_args(%{{.*}} = %[[UNMASKED]]#0, %{{.*}} = %[[UNMASKED]]#1)
// CHECK:           tile.window_mask %[[ROW]], %{{.*}} diagonals(%[[BAND_LO]], %[[BAND_HI]])
// CHECK:           arith.select
// CHECK:         tile.broadcast %[[MASKED]]#1 along 1
// Guard: one loop over [n_first, n_visible); the masks run for the blocks of
// either edge, j < n_lo or j >= n_full.
// GUARD-LABEL: func.func @window
// GUARD:         %[[N_VISIBLE:.*]] = arith.maxsi
// GUARD:         %[[N_FIRST:.*]] = arith.maxsi
// GUARD:         %[[N_LO:.*]] = arith.maxsi
// GUARD:         %[[N_FULL:.*]] = arith.maxsi
// GUARD:         scf.for %[[J:.*]] = %[[N_FIRST]] to %[[N_VISIBLE]]
// GUARD:           %[[RIGHT:.*]] = arith.cmpi sge, %[[J]], %[[N_FULL]] : index
// GUARD-NEXT:      %[[LEFT:.*]] = arith.cmpi slt, %[[J]], %[[N_LO]] : index
// GUARD-NEXT:      %[[EDGE:.*]] = arith.ori %[[RIGHT]], %[[LEFT]] : i1
// GUARD-NEXT:      scf.if %[[EDGE]] -> (tensor<32x16xf32>) {
// GUARD:             tile.window_mask
// GUARD-NOT:     scf.for
// GUARD:         return
// Masked first: both edges, then the unmasked loop.
// FIRST-LABEL: func.func @window
// FIRST:         %[[N_VISIBLE:.*]] = arith.maxsi
// FIRST:         %[[N_FIRST:.*]] = arith.maxsi
// FIRST:         %[[N_LO:.*]] = arith.maxsi
// FIRST:         %[[N_FULL:.*]] = arith.maxsi
// FIRST:         %[[LEFT:.*]]:2 = scf.for %{{.*}} = %[[N_FIRST]] to %[[N_LO]]
// FIRST:           tile.window_mask
// FIRST:         %[[MASKED:.*]]:2 = scf.for %{{.*}} = %[[N_FULL]] to %[[N_VISIBLE]] step %{{.*}} iter_args(%{{.*}} = %[[LEFT]]#0, %{{.*}} = %[[LEFT]]#1)
// FIRST:           tile.window_mask
// FIRST:         %[[UNMASKED:.*]]:2 = scf.for %{{.*}} = %[[N_LO]] to %[[N_FULL]] step %{{.*}} iter_args(%{{.*}} = %[[MASKED]]#0, %{{.*}} = %[[MASKED]]#1)
// FIRST-NOT:       tile.window_mask
// FIRST:         tile.broadcast %[[UNMASKED]]#1 along 1
func.func @window(%q: !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<q>}, %k: !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<k>},
                  %v: !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<v>}, %o: !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<o>},
                  %scale: f32 {tile.arg = #tile.arg<scale>}, %lo: index {tile.arg = #tile.arg<window_lo>}, %hi: index {tile.arg = #tile.arg<window_hi>})
    attributes {tile.sdpa = #tile.sdpa<head_dim = 16, element_type = f16, causal = window, block_m = 32, block_n = 16>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %neg_inf = arith.constant dense<0xFF800000> : tensor<32xf32>
  %zero = arith.constant dense<0.0> : tensor<32xf32>
  %zero_s = arith.constant dense<0.0> : tensor<32x16xf32>
  %masked = arith.constant dense<0xFF800000> : tensor<32x16xf32>
  %m_blk = tile.block_id x
  %seq_k = tile.dim %k[2] : !tile.view<?x?x?x16xf16>
  %qt = tile.load %q[%c0, %c0, %m_blk, %c0] pad(0.0)
      : !tile.view<?x?x?x16xf16> -> tensor<32x16xf16>
  %n = arith.ceildivui %seq_k, %c16 : index
  %row = arith.muli %m_blk, %c32 : index
  %r:2 = scf.for %j = %c0 to %n step %c1 iter_args(%m = %neg_inf, %l = %zero)
      -> (tensor<32xf32>, tensor<32xf32>) {
    %kt = tile.load %k[%c0, %c0, %j, %c0] pad(0.0) transpose
        : !tile.view<?x?x?x16xf16> -> tensor<16x16xf16>
    %s = tile.mma %qt, %kt, %zero_s
        : tensor<32x16xf16>, tensor<16x16xf16> -> tensor<32x16xf32>
    %col = arith.muli %j, %c16 : index
    %in = tile.bounds_mask offsets(%col) limits(%seq_k) : tensor<16xi1>
    %in_b = tile.broadcast %in along 0 : tensor<16xi1> -> tensor<32x16xi1>
    %vis = tile.window_mask %row, %col diagonals(%lo, %hi) : tensor<32x16xi1>
    %keep = arith.andi %in_b, %vis : tensor<32x16xi1>
    %x = arith.select %keep, %s, %masked : tensor<32x16xi1>, tensor<32x16xf32>
    %m1, %l1, %p, %a = tile.online_softmax %x, %m, %l scale(%scale)
        : tensor<32x16xf32>, tensor<32xf32>
    scf.yield %m1, %l1 : tensor<32xf32>, tensor<32xf32>
  }
  %l_b = tile.broadcast %r#1 along 1 : tensor<32xf32> -> tensor<32x16xf32>
  %out = arith.truncf %l_b : tensor<32x16xf32> to tensor<32x16xf16>
  tile.store %out, %o[%c0, %c0, %m_blk, %c0]
      : tensor<32x16xf16>, !tile.view<?x?x?x16xf16>
  return
}

// -----

// Bottom-right: the bounds use the mask's row offset, which already holds
// the shift S_k - S_q (and may be negative).

// CHECK-LABEL: func.func @bottom_right
// CHECK-SAME:    mask_split = true
// CHECK:         %[[SHIFT:.*]] = arith.subi
// CHECK:         %[[ROW:.*]] = arith.addi %{{.*}}, %[[SHIFT]] : index
// CHECK:         arith.addi %[[ROW]], %{{.*}} : index
// CHECK:         arith.ceildivsi
// CHECK:         arith.addi %[[ROW]], %{{.*}} : index
// CHECK:         arith.floordivsi
// CHECK:         scf.for
// CHECK-NOT:       tile.causal_mask
// CHECK:         scf.for
// CHECK:           tile.causal_mask %[[ROW]],
func.func @bottom_right(%q: !tile.view<?x?x?x16xbf16> {tile.arg = #tile.arg<q>}, %k: !tile.view<?x?x?x16xbf16> {tile.arg = #tile.arg<k>},
                        %v: !tile.view<?x?x?x16xbf16> {tile.arg = #tile.arg<v>}, %o: !tile.view<?x?x?x16xbf16> {tile.arg = #tile.arg<o>},
                        %scale: f32 {tile.arg = #tile.arg<scale>})
    attributes {tile.sdpa = #tile.sdpa<head_dim = 16, element_type = bf16, causal = bottom_right, block_m = 16, block_n = 32>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %neg_inf = arith.constant dense<0xFF800000> : tensor<16xf32>
  %zero = arith.constant dense<0.0> : tensor<16xf32>
  %zero_s = arith.constant dense<0.0> : tensor<16x32xf32>
  %masked = arith.constant dense<0xFF800000> : tensor<16x32xf32>
  %m_blk = tile.block_id x
  %seq_q = tile.dim %q[2] : !tile.view<?x?x?x16xbf16>
  %seq_k = tile.dim %k[2] : !tile.view<?x?x?x16xbf16>
  %n = arith.ceildivui %seq_k, %c32 : index
  %first = arith.muli %m_blk, %c16 : index
  %shift = arith.subi %seq_k, %seq_q : index
  %row = arith.addi %first, %shift : index
  %r:2 = scf.for %j = %c0 to %n step %c1 iter_args(%m = %neg_inf, %l = %zero)
      -> (tensor<16xf32>, tensor<16xf32>) {
    %col = arith.muli %j, %c32 : index
    %in = tile.bounds_mask offsets(%col) limits(%seq_k) : tensor<32xi1>
    %in_b = tile.broadcast %in along 0 : tensor<32xi1> -> tensor<16x32xi1>
    %vis = tile.causal_mask %row, %col : tensor<16x32xi1>
    %keep = arith.andi %in_b, %vis : tensor<16x32xi1>
    %x = arith.select %keep, %zero_s, %masked : tensor<16x32xi1>, tensor<16x32xf32>
    %m1, %l1, %p, %a = tile.online_softmax %x, %m, %l scale(%scale)
        : tensor<16x32xf32>, tensor<16xf32>
    scf.yield %m1, %l1 : tensor<16xf32>, tensor<16xf32>
  }
  return
}

// -----

// Without a bounds mask only the diagonal bounds the unmasked blocks; the
// column offset may be written BN * j.

// CHECK-LABEL: func.func @no_bounds_mask
// CHECK-SAME:    mask_split = true
// CHECK:         %[[DIAG:.*]] = arith.floordivsi
// CHECK-NOT:     arith.floordivsi
// CHECK:         %[[FULL:.*]] = arith.minsi %[[DIAG]], %{{.*}} : index
// CHECK:         %[[N_FULL:.*]] = arith.maxsi %[[FULL]], %{{.*}} : index
// CHECK:         scf.for %{{.*}} = %{{.*}} to %[[N_FULL]]
// CHECK-NOT:       arith.select
// CHECK:           tile.online_softmax
// CHECK:         scf.for %{{.*}} = %[[N_FULL]] to
// CHECK:           tile.causal_mask
// CHECK:           arith.select
func.func @no_bounds_mask(%q: !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<q>}, %k: !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<k>},
                          %v: !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<v>}, %o: !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<o>},
                          %scale: f32 {tile.arg = #tile.arg<scale>})
    attributes {tile.sdpa = #tile.sdpa<head_dim = 16, element_type = f16, causal = top_left, block_m = 16, block_n = 16>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant dense<0.0> : tensor<16xf32>
  %zero_s = arith.constant dense<0.0> : tensor<16x16xf32>
  %masked = arith.constant dense<0xFF800000> : tensor<16x16xf32>
  %m_blk = tile.block_id x
  %seq_k = tile.dim %k[2] : !tile.view<?x?x?x16xf16>
  %n = arith.ceildivui %seq_k, %c16 : index
  %row = arith.muli %m_blk, %c16 : index
  %r:2 = scf.for %j = %c0 to %n step %c1 iter_args(%m = %zero, %l = %zero)
      -> (tensor<16xf32>, tensor<16xf32>) {
    %col = arith.muli %c16, %j : index
    %vis = tile.causal_mask %row, %col : tensor<16x16xi1>
    %x = arith.select %vis, %zero_s, %masked : tensor<16x16xi1>, tensor<16x16xf32>
    %m1, %l1, %p, %a = tile.online_softmax %x, %m, %l scale(%scale)
        : tensor<16x16xf32>, tensor<16xf32>
    scf.yield %m1, %l1 : tensor<16xf32>, tensor<16xf32>
  }
  return
}

// -----

// A non-causal kernel: only the last, partial key block needs the bounds
// mask. n_visible is the loop's bound; n_full stays below S_k / 16 and below
// the row blocks of K and V, whose loads in the first loop are in bounds.
// A load at a block index other than j (Q, at m) is left as it is.

// CHECK-LABEL: func.func @non_causal
// CHECK-SAME:    mask_split = true
// CHECK:         %[[SEQ_K:.*]] = tile.dim %[[K:.*]][2]
// CHECK:         %[[UB:.*]] = arith.ceildivui %[[SEQ_K]]
// CHECK:         %[[IN:.*]] = arith.floordivsi %[[SEQ_K]], %[[BN:.*]] : index
// CHECK:         %[[FULL0:.*]] = arith.minsi %[[IN]], %{{.*}} : index
// CHECK:         %[[V_ROWS:.*]] = tile.dim %[[V:.*]][2]
// CHECK:         %[[V_IN:.*]] = arith.floordivsi %[[V_ROWS]], %[[BN]] : index
// CHECK:         %[[FULL1:.*]] = arith.minsi %[[FULL0]], %[[V_IN]] : index
// CHECK:         %[[FULL2:.*]] = arith.minsi %[[FULL1]], %[[UB]] : index
// CHECK:         %[[N_FULL:.*]] = arith.maxsi %[[FULL2]], %{{.*}} : index
// CHECK:         scf.for %{{.*}} = %{{.*}} to %[[N_FULL]]
// CHECK:           tile.load %[[K]][{{.*}}] pad(0.000000e+00) transpose in_bounds
// CHECK-NOT:       tile.bounds_mask
// CHECK-NOT:       arith.select
// CHECK:           tile.online_softmax
// CHECK:           tile.load %[[V]][{{.*}}] pad(0.000000e+00) in_bounds
// CHECK:           tile.load %{{.*}}[{{.*}}] pad(0.000000e+00) :
// CHECK:         scf.for %{{.*}} = %[[N_FULL]] to %[[UB]]
// CHECK:           tile.load %[[K]][{{.*}}] pad(0.000000e+00) transpose :
// CHECK:           tile.bounds_mask
// CHECK:           arith.select
// CHECK:           tile.load %[[V]][{{.*}}] pad(0.000000e+00) :
func.func @non_causal(%q: !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<q>}, %k: !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<k>},
                      %v: !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<v>}, %o: !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<o>},
                      %scale: f32 {tile.arg = #tile.arg<scale>})
    attributes {tile.sdpa = #tile.sdpa<head_dim = 16, element_type = f16, causal = none, block_m = 16, block_n = 16>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant dense<0.0> : tensor<16xf32>
  %zero_s = arith.constant dense<0.0> : tensor<16x16xf32>
  %zero_v = arith.constant dense<0.0> : tensor<16x16xf16>
  %masked = arith.constant dense<0xFF800000> : tensor<16x16xf32>
  %m_blk = tile.block_id x
  %seq_k = tile.dim %k[2] : !tile.view<?x?x?x16xf16>
  %n = arith.ceildivui %seq_k, %c16 : index
  %r:3 = scf.for %j = %c0 to %n step %c1 iter_args(%m = %zero, %l = %zero, %last = %zero_v)
      -> (tensor<16xf32>, tensor<16xf32>, tensor<16x16xf16>) {
    %kt = tile.load %k[%c0, %c0, %j, %c0] pad(0.0) transpose
        : !tile.view<?x?x?x16xf16> -> tensor<16x16xf16>
    %s = tile.mma %last, %kt, %zero_s
        : tensor<16x16xf16>, tensor<16x16xf16> -> tensor<16x16xf32>
    %col = arith.muli %j, %c16 : index
    %in = tile.bounds_mask offsets(%col) limits(%seq_k) : tensor<16xi1>
    %in_b = tile.broadcast %in along 0 : tensor<16xi1> -> tensor<16x16xi1>
    %x = arith.select %in_b, %s, %masked : tensor<16x16xi1>, tensor<16x16xf32>
    %m1, %l1, %p, %a = tile.online_softmax %x, %m, %l scale(%scale)
        : tensor<16x16xf32>, tensor<16xf32>
    %vt = tile.load %v[%c0, %c0, %j, %c0] pad(0.0)
        : !tile.view<?x?x?x16xf16> -> tensor<16x16xf16>
    %qt = tile.load %q[%c0, %c0, %m_blk, %c0] pad(0.0)
        : !tile.view<?x?x?x16xf16> -> tensor<16x16xf16>
    %next = arith.addf %vt, %qt : tensor<16x16xf16>
    scf.yield %m1, %l1, %next : tensor<16xf32>, tensor<16xf32>, tensor<16x16xf16>
  }
  tile.store %r#2, %o[%c0, %c0, %m_blk, %c0]
      : tensor<16x16xf16>, !tile.view<?x?x?x16xf16>
  return
}

// -----

// A causal kernel whose loop has no causal mask splits at the bounds mask
// alone, like a non-causal one.

// CHECK-LABEL: func.func @bounds_only
// CHECK-SAME:    mask_split = true
// CHECK:         %[[SEQ_K:.*]] = tile.dim
// CHECK:         %[[UB:.*]] = arith.ceildivui %[[SEQ_K]]
// CHECK:         %[[IN:.*]] = arith.floordivsi %[[SEQ_K]]
// CHECK:         %[[FULL:.*]] = arith.minsi %[[IN]], %[[UB]] : index
// CHECK:         %[[N_FULL:.*]] = arith.maxsi %[[FULL]], %{{.*}} : index
// CHECK:         scf.for %{{.*}} = %{{.*}} to %[[N_FULL]]
// CHECK-NOT:       tile.bounds_mask
// CHECK:         scf.for %{{.*}} = %[[N_FULL]] to %[[UB]]
// CHECK:           tile.bounds_mask
func.func @bounds_only(%q: !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<q>}, %k: !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<k>},
                       %v: !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<v>}, %o: !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<o>},
                       %scale: f32 {tile.arg = #tile.arg<scale>})
    attributes {tile.sdpa = #tile.sdpa<head_dim = 16, element_type = f16, causal = top_left, block_m = 16, block_n = 16>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant dense<0.0> : tensor<16xf32>
  %zero_s = arith.constant dense<0.0> : tensor<16x16xf32>
  %masked = arith.constant dense<0xFF800000> : tensor<16x16xf32>
  %seq_k = tile.dim %k[2] : !tile.view<?x?x?x16xf16>
  %n = arith.ceildivui %seq_k, %c16 : index
  %r:2 = scf.for %j = %c0 to %n step %c1 iter_args(%m = %zero, %l = %zero)
      -> (tensor<16xf32>, tensor<16xf32>) {
    %col = arith.muli %j, %c16 : index
    %in = tile.bounds_mask offsets(%col) limits(%seq_k) : tensor<16xi1>
    %in_b = tile.broadcast %in along 0 : tensor<16xi1> -> tensor<16x16xi1>
    %x = arith.select %in_b, %zero_s, %masked : tensor<16x16xi1>, tensor<16x16xf32>
    %m1, %l1, %p, %a = tile.online_softmax %x, %m, %l scale(%scale)
        : tensor<16x16xf32>, tensor<16xf32>
    scf.yield %m1, %l1 : tensor<16xf32>, tensor<16xf32>
  }
  return
}

// -----

// A loop whose masks do not depend on it has nothing to split.

// CHECK-LABEL: func.func @negative_invariant_mask
// CHECK-NOT:     mask_split
// CHECK:         scf.for
// CHECK:           tile.bounds_mask
// CHECK-NOT:     scf.for
func.func @negative_invariant_mask(%q: !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<q>}, %k: !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<k>},
                                   %v: !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<v>}, %o: !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<o>},
                       %scale: f32 {tile.arg = #tile.arg<scale>})
    attributes {tile.sdpa = #tile.sdpa<head_dim = 16, element_type = f16, causal = none, block_m = 16, block_n = 16>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant dense<0.0> : tensor<16xf32>
  %zero_s = arith.constant dense<0.0> : tensor<16x16xf32>
  %masked = arith.constant dense<0xFF800000> : tensor<16x16xf32>
  %seq_k = tile.dim %k[2] : !tile.view<?x?x?x16xf16>
  %n = arith.ceildivui %seq_k, %c16 : index
  %r:2 = scf.for %j = %c0 to %n step %c1 iter_args(%m = %zero, %l = %zero)
      -> (tensor<16xf32>, tensor<16xf32>) {
    %in = tile.bounds_mask offsets(%c16) limits(%seq_k) : tensor<16xi1>
    %in_b = tile.broadcast %in along 0 : tensor<16xi1> -> tensor<16x16xi1>
    %x = arith.select %in_b, %zero_s, %masked : tensor<16x16xi1>, tensor<16x16xf32>
    %m1, %l1, %p, %a = tile.online_softmax %x, %m, %l scale(%scale)
        : tensor<16x16xf32>, tensor<16xf32>
    scf.yield %m1, %l1 : tensor<16xf32>, tensor<16xf32>
  }
  return
}

// -----

// Already split: the pass does nothing the second time.

// CHECK-LABEL: func.func @negative_already_split
// CHECK:         scf.for %{{.*}} = %[[LB:.*]] to
// CHECK:           tile.causal_mask
// CHECK-NOT:     scf.for
func.func @negative_already_split(%q: !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<q>}, %k: !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<k>},
                                  %v: !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<v>}, %o: !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<o>},
                                  %scale: f32 {tile.arg = #tile.arg<scale>})
    attributes {tile.sdpa = #tile.sdpa<head_dim = 16, element_type = f16, causal = top_left, block_m = 16, block_n = 16, mask_split = true>} {
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant dense<0.0> : tensor<16xf32>
  %zero_s = arith.constant dense<0.0> : tensor<16x16xf32>
  %masked = arith.constant dense<0xFF800000> : tensor<16x16xf32>
  %seq_k = tile.dim %k[2] : !tile.view<?x?x?x16xf16>
  %n = arith.ceildivui %seq_k, %c16 : index
  %r:2 = scf.for %j = %c1 to %n step %c1 iter_args(%m = %zero, %l = %zero)
      -> (tensor<16xf32>, tensor<16xf32>) {
    %col = arith.muli %j, %c16 : index
    %vis = tile.causal_mask %c16, %col : tensor<16x16xi1>
    %x = arith.select %vis, %zero_s, %masked : tensor<16x16xi1>, tensor<16x16xf32>
    %m1, %l1, %p, %a = tile.online_softmax %x, %m, %l scale(%scale)
        : tensor<16x16xf32>, tensor<16xf32>
    scf.yield %m1, %l1 : tensor<16xf32>, tensor<16xf32>
  }
  return
}

// -----

// Errors: a structure the pass does not understand is never split silently.

func.func @row_offset_in_loop(%q: !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<q>}, %k: !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<k>},
                              %v: !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<v>}, %o: !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<o>},
                              %scale: f32 {tile.arg = #tile.arg<scale>})
    attributes {tile.sdpa = #tile.sdpa<head_dim = 16, element_type = f16, causal = top_left, block_m = 16, block_n = 16>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %seq_k = tile.dim %k[2] : !tile.view<?x?x?x16xf16>
  %n = arith.ceildivui %seq_k, %c16 : index
  scf.for %j = %c0 to %n step %c1 {
    %col = arith.muli %j, %c16 : index
    %row = arith.addi %col, %c16 : index
    // expected-error @+1 {{tile-mask-split: expects the row offset of the causal mask to be defined outside the loop}}
    %vis = tile.causal_mask %row, %col : tensor<16x16xi1>
  }
  return
}

// -----

func.func @column_not_block(%q: !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<q>}, %k: !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<k>},
                            %v: !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<v>}, %o: !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<o>},
                            %scale: f32 {tile.arg = #tile.arg<scale>})
    attributes {tile.sdpa = #tile.sdpa<head_dim = 16, element_type = f16, causal = top_left, block_m = 16, block_n = 16>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %seq_k = tile.dim %k[2] : !tile.view<?x?x?x16xf16>
  scf.for %j = %c0 to %seq_k step %c1 {
    %col = arith.muli %j, %c32 : index
    // expected-error @+1 {{tile-mask-split: expects the column offset of the keys to be the induction variable times 16}}
    %vis = tile.causal_mask %c0, %col : tensor<16x16xi1>
  }
  return
}

// -----

func.func @step_not_one(%q: !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<q>}, %k: !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<k>},
                        %v: !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<v>}, %o: !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<o>},
                        %scale: f32 {tile.arg = #tile.arg<scale>})
    attributes {tile.sdpa = #tile.sdpa<head_dim = 16, element_type = f16, causal = top_left, block_m = 16, block_n = 16>} {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c16 = arith.constant 16 : index
  %seq_k = tile.dim %k[2] : !tile.view<?x?x?x16xf16>
  // expected-error @+1 {{tile-mask-split: expects the masked K/V loop to start at 0 with step 1}}
  scf.for %j = %c0 to %seq_k step %c2 {
    %col = arith.muli %j, %c16 : index
    %vis = tile.causal_mask %c0, %col : tensor<16x16xi1>
  }
  return
}

// -----

func.func @two_causal_masks(%q: !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<q>}, %k: !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<k>},
                            %v: !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<v>}, %o: !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<o>},
                            %scale: f32 {tile.arg = #tile.arg<scale>})
    attributes {tile.sdpa = #tile.sdpa<head_dim = 16, element_type = f16, causal = top_left, block_m = 16, block_n = 16>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %seq_k = tile.dim %k[2] : !tile.view<?x?x?x16xf16>
  scf.for %j = %c0 to %seq_k step %c1 {
    %col = arith.muli %j, %c16 : index
    %vis = tile.causal_mask %c0, %col : tensor<16x16xi1>
    // expected-error @+1 {{tile-mask-split: expects one causal or window mask per loop, found a second one}}
    %vis2 = tile.causal_mask %c16, %col : tensor<16x16xi1>
  }
  return
}

// -----

func.func @bounds_mask_rank_2(%q: !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<q>}, %k: !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<k>},
                              %v: !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<v>}, %o: !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<o>},
                              %scale: f32 {tile.arg = #tile.arg<scale>})
    attributes {tile.sdpa = #tile.sdpa<head_dim = 16, element_type = f16, causal = top_left, block_m = 16, block_n = 16>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %seq_q = tile.dim %q[2] : !tile.view<?x?x?x16xf16>
  %seq_k = tile.dim %k[2] : !tile.view<?x?x?x16xf16>
  scf.for %j = %c0 to %seq_k step %c1 {
    %col = arith.muli %j, %c16 : index
    // expected-error @+1 {{tile-mask-split: expects a bounds mask in the loop to be rank 1 over the 16 keys of the block, at the keys' column offset, with a limit defined outside the loop}}
    %in = tile.bounds_mask offsets(%c0, %col) limits(%seq_q, %seq_k) : tensor<16x16xi1>
    %vis = tile.causal_mask %c0, %col : tensor<16x16xi1>
  }
  return
}

// A block-sparse kernel's two loops read the blocks they visit from the
// block mask's lists, partial and full apart: they stay as they are (two
// loops, the first with the keys' bounds mask, the second without).
// SPARSE-LABEL: func.func @sdpa_fwd
// SPARSE: tile.read %arg6
// SPARSE: scf.for
// SPARSE: tile.read %arg7
// SPARSE: tile.bounds_mask
// SPARSE: scf.yield
// SPARSE: tile.read %arg8
// SPARSE: scf.for
// SPARSE: tile.read %arg9
// SPARSE-NOT: tile.bounds_mask
// SPARSE: scf.yield
// SPARSE-NOT: scf.for
