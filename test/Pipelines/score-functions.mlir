// Score and mask functions (tile.apply) from the tile level to PTX on every
// family: ALiBi on the scaled scores (a per-head slope read once, positions
// of rows and keys) and document masking (a gather of the rows' and the
// keys' document ids) in the generator's 128x64 kernel. The host runs it
// against the float64 reference with the same functions; each family lowers
// it (tile-to-ptx vectorizes the functions itself) and ptxas assembles it.

// RUN: tiled-attn-run %s --batch=2 --heads=4 --kv-heads=2 \
// RUN:   --shapes=1x1,17x17,100x37,37x100,257x130 \
// RUN:   --capture=slopes=H:-0.5:0 --capture=doc_ids=BxSk:0:2 | FileCheck %s --check-prefix=HOST
// HOST: 5 passed, 0 failed

// RUN: tiled-attn-opt %s --tile-schedule="exp2=1" --tile-to-ptx="chip=sm_80 warps=4" \
// RUN:   | sed -n 's/.*assembly = "\([^"]*\)".*/\1/p' | sed -e 's/\\0A/\n/g' -e 's/\\09/\t/g' > %t.sm_80.ptx
// RUN: FileCheck %s --check-prefix=PTX --input-file=%t.sm_80.ptx
// RUN: %if ptxas %{ ptxas -arch=sm_80 %t.sm_80.ptx -o %t.sm_80.cubin %}
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

// The captured inputs are kernel parameters (memref descriptors: base
// pointers, sizes, strides); the document ids are read with bounds checks.
// PTX: .entry sdpa_fwd(
// PTX: ld.global.{{.*}}b32
// WGMMA: wgmma.mma_async
// TCGEN05: tcgen05.mma

// ALiBi: the score plus slopes[h] * (kv - q).
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

// Document masking: a key of the same document as the query (ids per
// batch entry and key; the queries are the last S_q keys' documents, as in
// a packed row with S_q <= S_k: q_idx + S_k - S_q).
func.func @document(%b: index, %h: index, %q: index, %kv: index,
                    %doc_ids: !tile.view<?x?xi32>) -> i1 {
  %seq_k = tile.dim %doc_ids[1] : !tile.view<?x?xi32>
  %zero = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %last = arith.subi %seq_k, %c1 : index
  %q_at = arith.minsi %q, %last : index
  %q_key = arith.maxsi %q_at, %zero : index
  %dq = tile.read %doc_ids[%b, %q_key] : !tile.view<?x?xi32> -> i32
  %dk = tile.read %doc_ids[%b, %kv] : !tile.view<?x?xi32> -> i32
  %same = arith.cmpi eq, %dq, %dk : i32
  return %same : i1
}

func.func @sdpa_fwd(%arg0: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<q>}, %arg1: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<k>}, %arg2: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<v>}, %arg3: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<o>}, %arg4: f32 {tile.arg = #tile.arg<scale>}, %slopes: !tile.view<?xf32> {tile.arg = #tile.arg<captured, "slopes">}, %doc_ids: !tile.view<?x?xi32> {tile.arg = #tile.arg<captured, "doc_ids">}) attributes {tile.sdpa = #tile.sdpa<head_dim = 64, element_type = f16, causal = none, block_m = 128, block_n = 64>} {
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
  %one = arith.constant 1.0 : f32
  %scale = tensor.splat %arg4 : tensor<128x64xf32>
  %10 = arith.ceildivui %4, %c64 : index
  %11 = arith.muli %0, %c128 : index
  %12:3 = scf.for %arg5 = %c0 to %10 step %c1 iter_args(%arg6 = %cst, %arg7 = %cst_0, %arg8 = %cst_1) -> (tensor<128xf32>, tensor<128xf32>, tensor<128x64xf32>) {
    %19 = tile.load %arg1[%2, %9, %arg5, %c0] pad(0.000000e+00) transpose : <?x?x?x64xf16> -> tensor<64x64xf16>
    %20 = tile.load %arg2[%2, %9, %arg5, %c0] pad(0.000000e+00) : <?x?x?x64xf16> -> tensor<64x64xf16>
    %21 = tile.mma %5, %19, %cst_2 : tensor<128x64xf16>, tensor<64x64xf16> -> tensor<128x64xf32>
    %22 = arith.muli %arg5, %c64 : index
    %scaled = arith.mulf %21, %scale : tensor<128x64xf32>
    %modded = tile.apply @alibi score(%scaled : tensor<128x64xf32>) at(%2, %1, %11, %22) captures(%slopes : !tile.view<?xf32>) : tensor<128x64xf32>
    %same_doc = tile.apply @document at(%2, %1, %11, %22) captures(%doc_ids : !tile.view<?x?xi32>) : tensor<128x64xi1>
    %23 = tile.bounds_mask offsets(%22) limits(%4) : tensor<64xi1>
    %24 = tile.broadcast %23 along 0 : tensor<64xi1> -> tensor<128x64xi1>
    %keep = arith.andi %24, %same_doc : tensor<128x64xi1>
    %25 = arith.select %keep, %modded, %cst_3 : tensor<128x64xi1>, tensor<128x64xf32>
    %new_max, %new_sum, %probs, %alpha = tile.online_softmax %25, %arg6, %arg7 scale(%one) : tensor<128x64xf32>, tensor<128xf32>
    %26 = arith.truncf %probs : tensor<128x64xf32> to tensor<128x64xf16>
    %27 = tile.broadcast %alpha along 1 : tensor<128xf32> -> tensor<128x64xf32>
    %28 = arith.mulf %arg8, %27 : tensor<128x64xf32>
    %29 = tile.mma %26, %20, %28 : tensor<128x64xf16>, tensor<64x64xf16> -> tensor<128x64xf32>
    scf.yield %new_max, %new_sum, %29 : tensor<128xf32>, tensor<128xf32>, tensor<128x64xf32>
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
