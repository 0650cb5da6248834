// Positions (tile.iota over score blocks, and over vectors of rows and
// columns) from the tile level to PTX on every family. The kernel is the
// generator's top-left causal kernel with its two masks written from
// positions instead of tile.bounds_mask and tile.causal_mask: the host runs
// it against the float64 causal reference, and each family lowers it; ptxas
// assembles each family's PTX.

// RUN: tiled-attn-opt %s --tile-decompose-online-softmax | tiled-attn-run - \
// RUN:   --batch=2 --heads=3 --shapes=1x1,17x17,100x37,37x100,257x257 | FileCheck %s --check-prefix=HOST
// HOST: 5 passed, 0 failed

// mma.sync (sm_80): each register's row and column from its lane.
// RUN: tiled-attn-opt %s --tile-schedule="exp2=1" --tile-to-ptx="chip=sm_80 warps=4" \
// RUN:   | sed -n 's/.*assembly = "\([^"]*\)".*/\1/p' | sed -e 's/\\0A/\n/g' -e 's/\\09/\t/g' > %t.sm_80.ptx
// RUN: FileCheck %s --check-prefix=PTX --input-file=%t.sm_80.ptx
// RUN: %if ptxas %{ ptxas -arch=sm_80 %t.sm_80.ptx -o %t.sm_80.cubin %}
// wgmma (sm_90a), tcgen05 (sm_100a: one row per thread), mma.sync fed by
// TMA (sm_120a).
// RUN: tiled-attn-opt %s --tile-schedule="exp2=1" --tile-to-ptx="chip=sm_90a warps=8" \
// RUN:   | sed -n 's/.*assembly = "\([^"]*\)".*/\1/p' | sed -e 's/\\0A/\n/g' -e 's/\\09/\t/g' > %t.sm_90a.ptx
// RUN: FileCheck %s --check-prefixes=PTX,WGMMA --input-file=%t.sm_90a.ptx
// RUN: %if ptxas %{ ptxas -arch=sm_90a %t.sm_90a.ptx -o %t.sm_90a.cubin %}
// RUN: tiled-attn-opt %s --tile-schedule="exp2=1 lazy-rescale=8 lazy-rescale-guard=0" \
// RUN:   --tile-to-ptx="chip=sm_100a warps=4 skip-unit-row-scales=1" \
// RUN:   | sed -n 's/.*assembly = "\([^"]*\)".*/\1/p' | sed -e 's/\\0A/\n/g' -e 's/\\09/\t/g' > %t.sm_100a.ptx
// RUN: FileCheck %s --check-prefixes=PTX,TCGEN05 --input-file=%t.sm_100a.ptx
// RUN: %if ptxas %{ ptxas -arch=sm_100a %t.sm_100a.ptx -o %t.sm_100a.cubin %}
// RUN: tiled-attn-opt %s --tile-schedule="exp2=1" --tile-to-ptx="chip=sm_120a warps=4 tma=1" \
// RUN:   | sed -n 's/.*assembly = "\([^"]*\)".*/\1/p' | sed -e 's/\\0A/\n/g' -e 's/\\09/\t/g' > %t.sm_120a.ptx
// RUN: FileCheck %s --check-prefix=PTX --input-file=%t.sm_120a.ptx
// RUN: %if ptxas %{ ptxas -arch=sm_120a %t.sm_120a.ptx -o %t.sm_120a.cubin %}

// PTX: .entry sdpa_fwd(
// PTX: setp.{{[lg]}}{{[te]}}.s32
// WGMMA: wgmma.mma_async
// TCGEN05: tcgen05.mma

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
    %q_idx = tile.iota dim 0 offset(%11) : tensor<128x64xi32>
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
