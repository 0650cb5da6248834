// tile-hoist-invariants only moves and folds: the hoisted kernel must be
// bitwise identical to the original (--equivalence-tolerance defaults to 0),
// on the shapes that break kernels. The hand-written kernel at the end keeps
// its invariants inside the loop on purpose; generated kernels are hoisted
// after the transforms that put invariants in the loop (the decomposed
// softmax's scale * log2(e) and its splats, the lazy-rescale guard's 1.0).

// DEFINE: %{run} = --shapes=1x1,17x17,100x37,37x100,257x257 --batch=1 --heads=2

// The hand-written kernel: its Q load, first query row, row mask and
// all-true mask leave the loop (the last one folds away); the row mask's
// broadcast to the block stays in it (free there).
// RUN: tiled-attn-opt %s --tile-hoist-invariants -o %t.after.mlir
// RUN: FileCheck %s --check-prefix=HOISTED --input-file=%t.after.mlir
// RUN: tiled-attn-run %s --compare-with=%t.after.mlir %{run} | FileCheck %s
// HOISTED-LABEL: func.func @hand
// HOISTED:         tile.load %{{.*}} -> tensor<64x64xf16>
// HOISTED:         tile.bounds_mask {{.*}} : tensor<64xi1>
// HOISTED:         scf.for
// HOISTED-NOT:       -> tensor<64x64xf16>
// HOISTED-NOT:       tile.bounds_mask {{.*}} : tensor<64xi1>
// HOISTED:           tile.broadcast {{.*}} : tensor<64xi1> -> tensor<64x32xi1>
// HOISTED:           arith.andi
// HOISTED:           arith.andi
// HOISTED-NOT:       arith.andi
// HOISTED:           tile.online_softmax
// HOISTED:         scf.yield

// The same, decomposed: hoisting before the decomposition, and after it.
// RUN: tiled-attn-opt %s --tile-decompose-online-softmax -o %t.before.mlir
// RUN: tiled-attn-opt %s --tile-hoist-invariants --tile-decompose-online-softmax -o %t.after.mlir
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.after.mlir %{run} | FileCheck %s
// RUN: tiled-attn-opt %s --tile-exp2 --tile-lazy-rescale --tile-decompose-online-softmax -o %t.before.mlir
// RUN: tiled-attn-opt %t.before.mlir --tile-hoist-invariants -o %t.after.mlir
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.after.mlir %{run} | FileCheck %s

// Generated kernels (named gen, next to @hand in the module).
// RUN: tiled-attn-opt %s --tile-generate-sdpa="name=gen dtype=f16 head-dim=64" -o %t.before.mlir
// RUN: tiled-attn-opt %t.before.mlir --tile-hoist-invariants -o %t.after.mlir
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.after.mlir --kernel=gen %{run} | FileCheck %s

// RUN: tiled-attn-opt %s --tile-generate-sdpa="name=gen dtype=bf16 head-dim=64 variant=top_left block-m=32 block-n=16" --tile-decompose-online-softmax -o %t.before.mlir
// RUN: tiled-attn-opt %t.before.mlir --tile-hoist-invariants -o %t.after.mlir
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.after.mlir --kernel=gen %{run} | FileCheck %s

// RUN: tiled-attn-opt %s --tile-generate-sdpa="name=gen dtype=f16 head-dim=128 variant=bottom_right block-m=128 block-n=64" --tile-exp2 --tile-lazy-rescale --tile-decompose-online-softmax -o %t.before.mlir
// RUN: tiled-attn-opt %t.before.mlir --tile-hoist-invariants -o %t.after.mlir
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.after.mlir --kernel=gen %{run} | FileCheck %s

// RUN: tiled-attn-opt %s --tile-generate-sdpa="name=gen dtype=bf16 head-dim=128 block-m=64 block-n=32" --tile-lazy-rescale=threshold=4 -o %t.before.mlir
// RUN: tiled-attn-opt %t.before.mlir --tile-hoist-invariants -o %t.after.mlir
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.after.mlir --kernel=gen %{run} | FileCheck %s

// RUN: tiled-attn-opt %s --tile-generate-sdpa="name=gen dtype=bf16 head-dim=64 variant=bottom_right block-m=128 block-n=32" --tile-exp2 --tile-decompose-online-softmax -o %t.before.mlir
// RUN: tiled-attn-opt %t.before.mlir --tile-hoist-invariants -o %t.after.mlir
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.after.mlir --kernel=gen %{run} | FileCheck %s

// RUN: tiled-attn-opt %s --tile-generate-sdpa="name=gen dtype=f16 head-dim=128 variant=top_left block-m=64 block-n=64" --tile-decompose-online-softmax -o %t.before.mlir
// RUN: tiled-attn-opt %t.before.mlir --tile-hoist-invariants -o %t.after.mlir
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.after.mlir --kernel=gen %{run} --layout=bshd | FileCheck %s

// CHECK-NOT: FAIL
// CHECK: Sq=1 Sk=1 {{.*}} diff=0.000e+00 (tol 0.0e+00) PASS
// CHECK: Sq=17 Sk=17 {{.*}} diff=0.000e+00 (tol 0.0e+00) PASS
// CHECK: Sq=100 Sk=37 {{.*}} diff=0.000e+00 (tol 0.0e+00) PASS
// CHECK: Sq=37 Sk=100 {{.*}} diff=0.000e+00 (tol 0.0e+00) PASS
// CHECK: Sq=257 Sk=257 {{.*}} diff=0.000e+00 (tol 0.0e+00) PASS
// CHECK: {{^}}5 passed, 0 failed

// A FlashAttention-2 kernel as in examples/sdpa_fwd.mlir, with its
// loop-invariant work left inside the loop.
func.func @hand(%q: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<q>}, %k: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<k>},
                %v: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<v>}, %o: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<o>},
                %scale: f32 {tile.arg = #tile.arg<scale>})
    attributes {tile.sdpa = #tile.sdpa<head_dim = 64, element_type = f16,
                                       causal = top_left,
                                       block_m = 64, block_n = 32>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %m_blk = tile.block_id x
  %h = tile.block_id y
  %b = tile.block_id z
  %seq_q = tile.dim %q[2] : !tile.view<?x?x?x64xf16>
  %seq_k = tile.dim %k[2] : !tile.view<?x?x?x64xf16>
  %m_init = arith.constant dense<0xFF800000> : tensor<64xf32>
  %l_init = arith.constant dense<0.0> : tensor<64xf32>
  %acc_init = arith.constant dense<0.0> : tensor<64x64xf32>
  %n_blocks = arith.ceildivui %seq_k, %c32 : index
  %res:3 = scf.for %j = %c0 to %n_blocks step %c1
      iter_args(%m = %m_init, %l = %l_init, %acc = %acc_init)
      -> (tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>) {
    // Loop-invariant: the Q block, its first row, the zero and -inf tiles,
    // the rows inside S_q, and a mask that is true everywhere.
    %q_i = tile.load %q[%b, %h, %m_blk, %c0] pad(0.0)
        : !tile.view<?x?x?x64xf16> -> tensor<64x64xf16>
    %q_row0 = arith.muli %m_blk, %c64 : index
    %s_zero = arith.constant dense<0.0> : tensor<64x32xf32>
    %s_masked = arith.constant dense<0xFF800000> : tensor<64x32xf32>
    %row_in = tile.bounds_mask offsets(%q_row0) limits(%seq_q) : tensor<64xi1>
    %rows_in = tile.broadcast %row_in along 1 : tensor<64xi1> -> tensor<64x32xi1>
    %all = tile.bounds_mask offsets(%c0) limits(%c32) : tensor<32xi1>
    %all_b = tile.broadcast %all along 0 : tensor<32xi1> -> tensor<64x32xi1>
    %kt = tile.load %k[%b, %h, %j, %c0] pad(0.0) transpose
        : !tile.view<?x?x?x64xf16> -> tensor<64x32xf16>
    %s = tile.mma %q_i, %kt, %s_zero
        : tensor<64x64xf16>, tensor<64x32xf16> -> tensor<64x32xf32>
    %k_col0 = arith.muli %j, %c32 : index
    %key_exists = tile.bounds_mask offsets(%k_col0) limits(%seq_k) : tensor<32xi1>
    %in_bounds = tile.broadcast %key_exists along 0 : tensor<32xi1> -> tensor<64x32xi1>
    %visible = tile.causal_mask %q_row0, %k_col0 : tensor<64x32xi1>
    %keep0 = arith.andi %in_bounds, %visible : tensor<64x32xi1>
    %keep1 = arith.andi %keep0, %rows_in : tensor<64x32xi1>
    %keep = arith.andi %keep1, %all_b : tensor<64x32xi1>
    %s_m = arith.select %keep, %s, %s_masked : tensor<64x32xi1>, tensor<64x32xf32>
    %m_new, %l_new, %p, %alpha = tile.online_softmax %s_m, %m, %l scale(%scale)
        : tensor<64x32xf32>, tensor<64xf32>
    %v_j = tile.load %v[%b, %h, %j, %c0] pad(0.0)
        : !tile.view<?x?x?x64xf16> -> tensor<32x64xf16>
    %p16 = arith.truncf %p : tensor<64x32xf32> to tensor<64x32xf16>
    %alpha_b = tile.broadcast %alpha along 1 : tensor<64xf32> -> tensor<64x64xf32>
    %acc_scaled = arith.mulf %acc, %alpha_b : tensor<64x64xf32>
    %acc_new = tile.mma %p16, %v_j, %acc_scaled
        : tensor<64x32xf16>, tensor<32x64xf16> -> tensor<64x64xf32>
    scf.yield %m_new, %l_new, %acc_new
        : tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>
  }
  %l_b = tile.broadcast %res#1 along 1 : tensor<64xf32> -> tensor<64x64xf32>
  %o_f32 = arith.divf %res#2, %l_b : tensor<64x64xf32>
  %no_key = arith.cmpf oeq, %l_b, %acc_init : tensor<64x64xf32>
  %o_safe = arith.select %no_key, %acc_init, %o_f32 : tensor<64x64xi1>, tensor<64x64xf32>
  %o_i = arith.truncf %o_safe : tensor<64x64xf32> to tensor<64x64xf16>
  tile.store %o_i, %o[%b, %h, %m_blk, %c0]
      : tensor<64x64xf16>, !tile.view<?x?x?x64xf16>
  return
}
