// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="head-dim=64 block-m=128 block-n=64" \
// RUN:   --tile-schedule="exp2=1" --tilegpu-attach-target="chip=sm_100a" --tilegpu-assign-layouts \
// RUN:   | FileCheck %s
// RUN: tiled-attn-opt %s -split-input-file -verify-diagnostics --tilegpu-assign-layouts
// RUN: not tiled-attn-opt %s -split-input-file --tilegpu-assign-layouts="warps=12" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=WARPS
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="head-dim=64 block-m=256 block-n=128" \
// RUN:   --tile-schedule="exp2=1" --tilegpu-attach-target="chip=sm_100a" --tilegpu-assign-layouts="warps=8" \
// RUN:   | FileCheck %s --check-prefix=TWO
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="head-dim=64 block-m=128 block-n=128" \
// RUN:   --tile-schedule="exp2=1" --tilegpu-attach-target="chip=sm_100a" --tilegpu-assign-layouts="warps=8" \
// RUN:   | FileCheck %s --check-prefix=ROWS
// RUN: echo 'module {}' | not tiled-attn-opt --tile-generate-sdpa="head-dim=64 block-m=256 block-n=128" \
// RUN:   --tile-schedule="exp2=1" --tilegpu-attach-target="chip=sm_100a" --tilegpu-assign-layouts="warps=4" \
// RUN:   2>&1 | FileCheck %s --check-prefix=BLOCKS

// The tcgen05 family's layouts on the generated kernel. The accumulators
// live in tensor memory (#tilegpu.tensor_memory): S, the mma's result, and
// O, which the loop carries from its zero start. Q and the K/V blocks are
// TMA's swizzled panels. Every register op meets them through a move
// (tile.convert_layout): S is read once, before the first op that uses it;
// O is read for the correction, and the corrected O goes back; P, computed
// in registers, moves to tensor memory packed for the second mma. Register
// tiles have one row per thread (#tilegpu.tmem_lanes).

// CHECK-LABEL: func.func @sdpa_fwd
// CHECK-SAME: tilegpu.warps = 4
// CHECK-DAG: %[[O0:.*]] = arith.constant dense<0.000000e+00> : tensor<128x64xf32, #tilegpu.tensor_memory<>>
// CHECK-DAG: %[[M0:.*]] = arith.constant dense<0xFF800000> : tensor<128xf32, #tilegpu.tmem_lanes<rows, warps = 4>>
// CHECK: %[[Q:.*]] = tile.load %arg0{{.*}} -> tensor<128x64xf16, #tilegpu.shared<swizzle = 128>>
// CHECK: %[[LOOP:.*]]:3 = scf.for {{.*}} iter_args(%[[M:.*]] = %[[M0]], %[[L:.*]] = %{{.*}}, %[[O:.*]] = %[[O0]]) -> (tensor<128xf32, #tilegpu.tmem_lanes<rows, warps = 4>>, tensor<128xf32, #tilegpu.tmem_lanes<rows, warps = 4>>, tensor<128x64xf32, #tilegpu.tensor_memory<>>)
// CHECK: %[[KT:.*]] = tile.load %arg1{{.*}} transpose : {{.*}} -> tensor<64x64xf16, #tilegpu.shared<swizzle = 128, transposed = true>>
// CHECK: %[[V:.*]] = tile.load %arg2{{.*}} -> tensor<64x64xf16, #tilegpu.shared<swizzle = 128>>
// The zero that starts S is a copy of its own, in tensor memory.
// CHECK: %[[Z:.*]] = arith.constant dense<0.000000e+00> : tensor<128x64xf32, #tilegpu.tensor_memory<>>
// CHECK: %[[S:.*]] = tile.mma %[[Q]], %[[KT]], %[[Z]] : {{.*}} -> tensor<128x64xf32, #tilegpu.tensor_memory<>>
// CHECK: tile.bounds_mask {{.*}} : tensor<64xi1, #tilegpu.tmem_lanes<cols, warps = 4>>
// CHECK: %[[SR:.*]] = tile.convert_layout %[[S]] : tensor<128x64xf32, #tilegpu.tensor_memory<>> -> tensor<128x64xf32, #tilegpu.tmem_lanes<acc, warps = 4>>
// CHECK-NOT: tile.convert_layout %[[S]]
// CHECK: tile.reduce max %{{.*}} along 1 : tensor<128x64xf32, #tilegpu.tmem_lanes<acc, warps = 4>> -> tensor<128xf32, #tilegpu.tmem_lanes<rows, warps = 4>>
// CHECK: %[[P:.*]] = arith.truncf %{{.*}} : tensor<128x64xf32, #tilegpu.tmem_lanes<acc, warps = 4>> to tensor<128x64xf16, #tilegpu.tmem_lanes<acc, warps = 4>>
// CHECK: %[[ALPHA:.*]] = tile.broadcast %{{.*}} along 1 : tensor<128xf32, #tilegpu.tmem_lanes<rows, warps = 4>> -> tensor<128x64xf32, #tilegpu.tmem_lanes<acc, warps = 4>>
// CHECK: %[[OR:.*]] = tile.convert_layout %[[O]] : tensor<128x64xf32, #tilegpu.tensor_memory<>> -> tensor<128x64xf32, #tilegpu.tmem_lanes<acc, warps = 4>>
// CHECK: %[[OS:.*]] = arith.mulf %[[OR]], %[[ALPHA]] : tensor<128x64xf32, #tilegpu.tmem_lanes<acc, warps = 4>>
// CHECK: %[[OT:.*]] = tile.convert_layout %[[OS]] : tensor<128x64xf32, #tilegpu.tmem_lanes<acc, warps = 4>> -> tensor<128x64xf32, #tilegpu.tensor_memory<>>
// CHECK: %[[PT:.*]] = tile.convert_layout %[[P]] : tensor<128x64xf16, #tilegpu.tmem_lanes<acc, warps = 4>> -> tensor<128x64xf16, #tilegpu.tensor_memory<packed = true>>
// CHECK: %[[ONEXT:.*]] = tile.mma %[[PT]], %[[V]], %[[OT]] : {{.*}} -> tensor<128x64xf32, #tilegpu.tensor_memory<>>
// CHECK: scf.yield %{{.*}}, %{{.*}}, %[[ONEXT]]
// The epilogue reads O once, and stores from the thread's row.
// CHECK: %[[OF:.*]] = tile.convert_layout %[[LOOP]]#2 : tensor<128x64xf32, #tilegpu.tensor_memory<>> -> tensor<128x64xf32, #tilegpu.tmem_lanes<acc, warps = 4>>
// CHECK: arith.mulf %[[OF]]
// CHECK: tile.store %{{.*}} : tensor<128x64xf16, #tilegpu.tmem_lanes<acc, warps = 4>>

// Two Q tiles per CTA (FlashAttention-4): on 8 warps a block of 256 rows
// is two blocks of 128, a warpgroup each; in tensor memory they lie side
// by side.
// TWO-LABEL: func.func @sdpa_fwd
// TWO-SAME: tilegpu.warps = 8
// TWO: tile.load %arg0{{.*}} -> tensor<256x64xf16, #tilegpu.shared<swizzle = 128>>
// TWO: scf.for {{.*}} -> (tensor<256xf32, #tilegpu.tmem_lanes<rows, warps = 8, row_blocks = 2>>, tensor<256xf32, #tilegpu.tmem_lanes<rows, warps = 8, row_blocks = 2>>, tensor<256x64xf32, #tilegpu.tensor_memory<>>)
// TWO: tile.mma %{{.*}} -> tensor<256x128xf32, #tilegpu.tensor_memory<>>
// TWO: tile.bounds_mask {{.*}} : tensor<128xi1, #tilegpu.tmem_lanes<cols, warps = 8, row_blocks = 2>>
// TWO: tile.convert_layout %{{.*}} : tensor<256x128xf32, #tilegpu.tensor_memory<>> -> tensor<256x128xf32, #tilegpu.tmem_lanes<acc, warps = 8, row_blocks = 2>>
// TWO: tile.convert_layout %{{.*}} : tensor<256x128xf16, #tilegpu.tmem_lanes<acc, warps = 8, row_blocks = 2>> -> tensor<256x128xf16, #tilegpu.tensor_memory<packed = true>>
// TWO: tile.store %{{.*}} : tensor<256x64xf16, #tilegpu.tmem_lanes<acc, warps = 8, row_blocks = 2>>

// On 8 warps, products of one block of 128 rows: the two warps of a lane
// quadrant split the columns (the backward's arrangement; the forward's
// row reductions would then combine two warps, which the GPU lowering
// refuses).
// Products of two blocks of 128 rows need a warpgroup each.
// BLOCKS: error: tilegpu-assign-layouts: tcgen05 products of 256 rows take a multiple of 8 warps (four a block of 128 rows), not 4
// ROWS: tile.convert_layout %{{.*}} : tensor<128x128xf32, #tilegpu.tensor_memory<>> -> tensor<128x128xf32, #tilegpu.tmem_lanes<acc, warps = 8>>

// The cases the family refuses.

// WARPS: error: tilegpu-assign-layouts: tcgen05 kernels run on a warpgroup per block of 128 rows (a thread per tensor-memory lane): warps 4, or 8 (two Q tiles, or two warps a lane quadrant splitting the columns), got 12
module attributes {tilegpu.target = #tilegpu.target<chip = "sm_100a", family = tcgen05>} {
  func.func @transposed_lhs(%q: !tile.view<?x?x?x64xf16>, %k: !tile.view<?x?x?x64xf16>, %o: !tile.view<?x?x?x64xf32>) {
    %c0 = arith.constant 0 : index
    %zero = arith.constant dense<0.0> : tensor<128x64xf32>
    %qt = tile.load %q[%c0, %c0, %c0, %c0] pad(0.0) transpose : !tile.view<?x?x?x64xf16> -> tensor<128x64xf16>
    %kt = tile.load %k[%c0, %c0, %c0, %c0] pad(0.0) transpose : !tile.view<?x?x?x64xf16> -> tensor<64x64xf16>
    // expected-error @+1 {{tilegpu-assign-layouts: tcgen05 reads its lhs from an untransposed shared tile or from tensor memory, not from a transposed load}}
    %s = tile.mma %qt, %kt, %zero : tensor<128x64xf16>, tensor<64x64xf16> -> tensor<128x64xf32>
    tile.store %s, %o[%c0, %c0, %c0, %c0] : tensor<128x64xf32>, !tile.view<?x?x?x64xf32>
    return
  }
}

// -----

// An accumulator needs the 128 lanes.
module attributes {tilegpu.target = #tilegpu.target<chip = "sm_100a", family = tcgen05>} {
  func.func @short_accumulator(%q: !tile.view<?x?x?x64xf16>, %k: !tile.view<?x?x?x64xf16>, %o: !tile.view<?x?x?x64xf32>) {
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{tilegpu-assign-layouts: a tile of shape 'tensor<64x64xf32>' in tensor memory on 4 warps needs 128 rows (a block of 128 lanes per group of warps) and 16 to 512 columns in all}}
    %zero = arith.constant dense<0.0> : tensor<64x64xf32>
    %qb = tile.load %q[%c0, %c0, %c0, %c0] pad(0.0) : !tile.view<?x?x?x64xf16> -> tensor<64x64xf16>
    %kt = tile.load %k[%c0, %c0, %c0, %c0] pad(0.0) transpose : !tile.view<?x?x?x64xf16> -> tensor<64x64xf16>
    %s = tile.mma %qb, %kt, %zero : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf32>
    tile.store %s, %o[%c0, %c0, %c0, %c0] : tensor<64x64xf32>, !tile.view<?x?x?x64xf32>
    return
  }
}
