// Positions are values of their element type: an i32 tile.iota wraps as
// the GPU's 32-bit registers do (index_cast truncates). The kernel is
// Pipelines/positions.mlir's with the query positions of its score-block
// mask offset by -2^32: in i32 they wrap to the same rows, and the causal
// mask holds; kept wide, no key would be visible and every row would be
// zero, against the causal reference.

// RUN: tiled-attn-opt %s --tile-decompose-online-softmax | tiled-attn-run - \
// RUN:   --batch=1 --heads=2 --shapes=17x17,100x37,130x130 | FileCheck %s
// CHECK-NOT: FAIL
// CHECK: {{^}}3 passed, 0 failed

func.func @sdpa_fwd(%arg0: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<q>}, %arg1: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<k>}, %arg2: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<v>}, %arg3: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<o>}, %arg4: f32 {tile.arg = #tile.arg<scale>}) attributes {tile.sdpa = #tile.sdpa<head_dim = 64, element_type = f16, causal = top_left, block_m = 128, block_n = 64>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  %c64 = arith.constant 64 : index
  %0 = tile.block_id x
  %1 = tile.block_id y
  %2 = tile.block_id z
  %3 = tile.dim %arg0[2] : <?x?x?x64xf16>
  %4 = tile.dim %arg1[2] : <?x?x?x64xf16>
  %5 = tile.load %arg0[%2, %1, %0, %c0] pad(0.000000e+00) : <?x?x?x64xf16> -> tensor<128x64xf16>
  %6 = tile.dim %arg0[1] : <?x?x?x64xf16>
  %7 = tile.dim %arg1[1] : <?x?x?x64xf16>
  %8 = arith.cmpi ne, %6, %7 : index
  %9 = scf.if %8 -> (index) {
    %19 = arith.divui %6, %7 : index
    %20 = arith.divui %1, %19 : index
    scf.yield %20 : index
  } else {
    scf.yield %1 : index
  }
  %cst = arith.constant dense<0xFF800000> : tensor<128xf32>
  %cst_0 = arith.constant dense<0.000000e+00> : tensor<128xf32>
  %cst_1 = arith.constant dense<0.000000e+00> : tensor<128x64xf32>
  %cst_2 = arith.constant dense<0.000000e+00> : tensor<128x64xf32>
  %cst_3 = arith.constant dense<0xFF800000> : tensor<128x64xf32>
  %10 = arith.ceildivui %4, %c64 : index
  %11 = arith.muli %0, %c128 : index
  %12:3 = scf.for %arg5 = %c0 to %10 step %c1 iter_args(%arg6 = %cst, %arg7 = %cst_0, %arg8 = %cst_1) -> (tensor<128xf32>, tensor<128xf32>, tensor<128x64xf32>) {
    %19 = tile.load %arg1[%2, %9, %arg5, %c0] pad(0.000000e+00) transpose : <?x?x?x64xf16> -> tensor<64x64xf16>
    %20 = tile.load %arg2[%2, %9, %arg5, %c0] pad(0.000000e+00) : <?x?x?x64xf16> -> tensor<64x64xf16>
    %21 = tile.mma %5, %19, %cst_2 : tensor<128x64xf16>, tensor<64x64xf16> -> tensor<128x64xf32>
    %22 = arith.muli %arg5, %c64 : index
    // Keys past S_k: a vector of key positions against S_k, broadcast.
    %keys = tile.iota offset(%22) : tensor<64xi32>
    %seq_k = arith.index_cast %4 : index to i32
    %limit = tensor.splat %seq_k : tensor<64xi32>
    %23 = arith.cmpi slt, %keys, %limit : tensor<64xi32>
    %24 = tile.broadcast %23 along 0 : tensor<64xi1> -> tensor<128x64xi1>
    // Causal, twice: the score block's own positions (q_idx, kv_idx),
    // and a vector of query positions broadcast along the keys.
    %c2p32 = arith.constant 4294967296 : index
    %far = arith.subi %11, %c2p32 : index
    %q_idx = tile.iota dim 0 offset(%far) : tensor<128x64xi32>
    %kv_idx = tile.iota dim 1 offset(%22) : tensor<128x64xi32>
    %25 = arith.cmpi sle, %kv_idx, %q_idx : tensor<128x64xi32>
    %queries = tile.iota offset(%11) : tensor<128xi32>
    %q_rows = tile.broadcast %queries along 1 : tensor<128xi32> -> tensor<128x64xi32>
    %visible = arith.cmpi sle, %kv_idx, %q_rows : tensor<128x64xi32>
    %both = arith.andi %25, %visible : tensor<128x64xi1>
    %26 = arith.andi %24, %both : tensor<128x64xi1>
    %27 = arith.select %26, %21, %cst_3 : tensor<128x64xi1>, tensor<128x64xf32>
    %new_max, %new_sum, %probs, %alpha = tile.online_softmax %27, %arg6, %arg7 scale(%arg4) : tensor<128x64xf32>, tensor<128xf32>
    %28 = arith.truncf %probs : tensor<128x64xf32> to tensor<128x64xf16>
    %29 = tile.broadcast %alpha along 1 : tensor<128xf32> -> tensor<128x64xf32>
    %30 = arith.mulf %arg8, %29 : tensor<128x64xf32>
    %31 = tile.mma %28, %20, %30 : tensor<128x64xf16>, tensor<64x64xf16> -> tensor<128x64xf32>
    scf.yield %new_max, %new_sum, %31 : tensor<128xf32>, tensor<128xf32>, tensor<128x64xf32>
  }
  %cst_4 = arith.constant dense<1.000000e+00> : tensor<128xf32>
  %13 = arith.divf %cst_4, %12#1 : tensor<128xf32>
  %14 = arith.cmpf oeq, %12#1, %cst_0 : tensor<128xf32>
  %15 = arith.select %14, %cst_0, %13 : tensor<128xi1>, tensor<128xf32>
  %16 = tile.broadcast %15 along 1 : tensor<128xf32> -> tensor<128x64xf32>
  %17 = arith.mulf %12#2, %16 : tensor<128x64xf32>
  %18 = arith.truncf %17 : tensor<128x64xf32> to tensor<128x64xf16>
  tile.store %18, %arg3[%2, %1, %0, %c0] : tensor<128x64xf16>, <?x?x?x64xf16>
  return
}
