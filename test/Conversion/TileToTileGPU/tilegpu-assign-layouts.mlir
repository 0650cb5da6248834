// RUN: tiled-attn-opt %s -split-input-file -verify-diagnostics --tilegpu-attach-target="chip=sm_80" \
// RUN:   --tilegpu-assign-layouts | FileCheck %s
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="head-dim=64 variant=top_left block-m=128" \
// RUN:   --tile-schedule="exp2=1" --tilegpu-attach-target="chip=sm_80" --tilegpu-assign-layouts="warps=8" \
// RUN:   | FileCheck %s --check-prefix=GEN8
// RUN: echo 'module {}' | not tiled-attn-opt --tile-generate-sdpa="head-dim=64 block-m=16" --tile-schedule \
// RUN:   --tilegpu-attach-target="chip=sm_80" --tilegpu-assign-layouts 2>&1 | FileCheck %s --check-prefix=ROWS
// RUN: not tiled-attn-opt %s -split-input-file --tilegpu-attach-target="chip=sm_80" \
// RUN:   --tilegpu-assign-layouts="warps=3" 2>&1 | FileCheck %s --check-prefix=WARPS3
// A bias block (tile-vectorize-apply's block-loads) is staged in shared
// memory, rows padded for cp.async on mma.sync; on wgmma (TMA, as K and V)
// in 128-byte swizzled panels (32 floats a panel row), a mask's 64 bytes a
// row in 64-byte ones; read into the scores' layout where it is used. Not
// yet on tcgen05 (its scores live in tensor memory):
// RUN: tiled-attn-opt %repo/kernels/functions/bias.mlir --tile-generate-sdpa="head-dim=64 variant=none+bias block-m=64 block-n=32" \
// RUN:   --tile-schedule="block-loads=1 stages=2 refill-after-use=1" --tilegpu-attach-target="chip=sm_80" \
// RUN:   --tilegpu-assign-layouts="warps=4" | FileCheck %s --check-prefix=BLOCK
// RUN: tiled-attn-opt %repo/kernels/functions/bias.mlir --tile-generate-sdpa="head-dim=64 variant=none+bias" \
// RUN:   --tile-schedule="block-loads=1" --tilegpu-attach-target="chip=sm_90a" --tilegpu-assign-layouts="warps=4" \
// RUN:   | FileCheck %s --check-prefix=BLOCK-TMA
// RUN: tiled-attn-opt %repo/kernels/functions/mask.mlir --tile-generate-sdpa="head-dim=64 variant=none+mask" \
// RUN:   --tile-schedule="block-loads=1" --tilegpu-attach-target="chip=sm_90a" --tilegpu-assign-layouts="warps=4" \
// RUN:   | FileCheck %s --check-prefix=BLOCK-TMA-BYTES
// RUN: tiled-attn-opt %repo/kernels/functions/bias_bf16.mlir --tile-generate-sdpa="head-dim=64 variant=none+bias_bf16" \
// RUN:   --tile-schedule="block-loads=1" --tilegpu-attach-target="chip=sm_90a" --tilegpu-assign-layouts="warps=4" \
// RUN:   | FileCheck %s --check-prefix=BLOCK-TMA-HALF
// BLOCK-TMA-HALF: %[[B:.*]] = tile.load %arg5[{{.*}}] pad(0.000000e+00) : <?x?x?x?xbf16> -> tensor<64x64xbf16, #tilegpu.shared<swizzle = 128>>
// BLOCK-TMA-HALF: tile.convert_layout %[[B]] : tensor<64x64xbf16, #tilegpu.shared<swizzle = 128>> -> tensor<64x64xbf16, #tilegpu.wgmma<acc, warpgroups = 1>>
// A mask block of 16 bytes a row has no swizzled panel for the copies:
// RUN: not tiled-attn-opt %repo/kernels/functions/mask.mlir --tile-generate-sdpa="head-dim=64 variant=none+mask block-m=64 block-n=16" \
// RUN:   --tile-schedule="block-loads=1" --tilegpu-attach-target="chip=sm_90a" --tilegpu-assign-layouts="warps=4" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BLOCK-TMA-NARROW
// BLOCK-TMA-NARROW: error: tilegpu-assign-layouts: a block read in the scores' layout is staged by TMA in swizzled panels, which need rows of a multiple of 32 bytes
// RUN: tiled-attn-opt %repo/kernels/functions/mask.mlir --tile-generate-sdpa="head-dim=64 variant=none+mask block-m=128" \
// RUN:   --tile-schedule="block-loads=1" --tilegpu-attach-target="chip=sm_100a" --tilegpu-assign-layouts="warps=4" \
// RUN:   | FileCheck %s --check-prefix=BLOCK-TCGEN05
// RUN: tiled-attn-opt %repo/kernels/functions/mask.mlir --tile-generate-sdpa="head-dim=64 variant=none+mask block-m=64 block-n=32" \
// RUN:   --tile-schedule="block-loads=1 stages=2 refill-after-use=1" --tilegpu-attach-target="chip=sm_80" \
// RUN:   --tilegpu-assign-layouts="warps=4" | FileCheck %s --check-prefix=BLOCK-BYTES
// (A mask block's rows padded by 16 bytes: cp.async copies 16 at a time.)
// BLOCK-BYTES: tile.load %arg5[{{.*}}] pad(0.000000e+00) : <?x?x?x?xi8> -> tensor<64x32xi8, #tilegpu.shared<pad = 16>>
// BLOCK-BYTES: tile.convert_layout %{{.*}} : tensor<64x32xi8, #tilegpu.shared<pad = 16>> -> tensor<64x32xi8, #tilegpu.mma_sync<acc, warps = 4>>
// BLOCK: tile.load %arg5[{{.*}}] pad(0.000000e+00) : <?x?x?x?xf32> -> tensor<64x32xf32, #tilegpu.shared<pad = 8>>
// BLOCK: scf.for {{.*}} iter_args({{.*}}, %[[B:[^ ]*]] = %{{.*}}) -> ({{.*}}tensor<64x32xf32, #tilegpu.shared<pad = 8>>)
// BLOCK: tile.convert_layout %[[B]] : tensor<64x32xf32, #tilegpu.shared<pad = 8>> -> tensor<64x32xf32, #tilegpu.mma_sync<acc, warps = 4>>
// BLOCK: tile.load %arg5[{{.*}}] pad(0.000000e+00) : <?x?x?x?xf32> -> tensor<64x32xf32, #tilegpu.shared<pad = 8>>
// BLOCK-TMA: %[[B:.*]] = tile.load %arg5[{{.*}}] pad(0.000000e+00) : <?x?x?x?xf32> -> tensor<64x64xf32, #tilegpu.shared<swizzle = 128>>
// BLOCK-TMA: tile.convert_layout %[[B]] : tensor<64x64xf32, #tilegpu.shared<swizzle = 128>> -> tensor<64x64xf32, #tilegpu.wgmma<acc, warpgroups = 1>>
// BLOCK-TMA-BYTES: %[[B:.*]] = tile.load %arg5[{{.*}}] pad(0.000000e+00) : <?x?x?x?xi8> -> tensor<64x64xi8, #tilegpu.shared<swizzle = 64>>
// BLOCK-TMA-BYTES: tile.convert_layout %[[B]] : tensor<64x64xi8, #tilegpu.shared<swizzle = 64>> -> tensor<64x64xi8, #tilegpu.wgmma<acc, warpgroups = 1>>
// (tcgen05: the block by TMA, read into the accumulator's lanes, where
// the scores arrive from tensor memory.)
// BLOCK-TCGEN05: %[[B:.*]] = tile.load %arg5[{{.*}}] pad(0.000000e+00) : <?x?x?x?xi8> -> tensor<128x64xi8, #tilegpu.shared<swizzle = 64>>
// BLOCK-TCGEN05: tile.convert_layout %[[B]] : tensor<128x64xi8, #tilegpu.shared<swizzle = 64>> -> tensor<128x64xi8, #tilegpu.tmem_lanes<acc, warps = 4>>
// The backward pass's main kernel: Q_m is staged once, as loaded, and Q_mᵀ
// (Sᵀ = K Q_mᵀ's rhs) is a transposed view of it; dSᵀ leaves the
// accumulator for a transposed shared buffer that dQ's mma reads as its
// lhs (ldmatrix.trans); dQ's part is added in the accumulator's layout.
// K_n, which the program loads once, is Sᵀ's lhs and dQ's rhs: mma.sync
// holds its lhs in registers, so that use gets a copy of its own (a second
// load, before the first); wgmma reads both from the one swizzled buffer.
// On wgmma the same in TMA's swizzled panels: a transposed view of Q_m's
// panels (Sᵀ's K-major rhs), Q_m itself (dK's N-major rhs), dSᵀ written
// into transposed panels that dQ's mma reads as an M-major lhs. On
// tcgen05 (blocks of 128 keys and 128 queries on 8 warps, the two warps of
// a lane quadrant splitting the columns) the same views and panels, with
// Sᵀ, dPᵀ, dV, dK and dQ in tensor memory, and Pᵀ and dSᵀ moved there
// packed for dV's and dK's products:
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa-backward="head-dim=64 dtype=bf16 causal=top_left" \
// RUN:   --tilegpu-attach-target="chip=sm_80" --tilegpu-assign-layouts="warps=4" | FileCheck %s --check-prefix=BWD
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa-backward="head-dim=64" \
// RUN:   --tilegpu-attach-target="chip=sm_90a" --tilegpu-assign-layouts="warps=4" | FileCheck %s --check-prefix=BWD-WGMMA
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa-backward="head-dim=64 block-m=128 block-n=128" \
// RUN:   --tilegpu-attach-target="chip=sm_100a" --tilegpu-assign-layouts="warps=8" | FileCheck %s --check-prefix=BWD-TCGEN05
// BWD-LABEL: func.func @sdpa_bwd(
// BWD: %[[KL:.*]] = tile.load %arg1[{{.*}}] pad(0.000000e+00) : <?x?x?x64xbf16> -> tensor<64x64xbf16, #tilegpu.mma_sync<opa, warps = 4>>
// BWD-NEXT: %[[KR:.*]] = tile.load %arg1[{{.*}}] pad(0.000000e+00) : <?x?x?x64xbf16> -> tensor<64x64xbf16, #tilegpu.shared<pad = 8>>
// BWD: %[[QB:.*]] = tile.load %arg0[{{.*}}] pad(0.000000e+00) : <?x?x?x64xbf16> -> tensor<64x64xbf16, #tilegpu.shared<pad = 8>>
// BWD: %[[QT:.*]] = tile.transpose %[[QB]] : tensor<64x64xbf16, #tilegpu.shared<pad = 8>> -> tensor<64x64xbf16, #tilegpu.shared<pad = 8, transposed = true>>
// BWD: tile.mma %{{.*}}, %[[QT]], %{{.*}} : tensor<64x64xbf16, #tilegpu.mma_sync<opa, warps = 4>>, tensor<64x64xbf16, #tilegpu.shared<pad = 8, transposed = true>>
// BWD: tile.mma %{{.*}}, %[[QB]], %{{.*}} : tensor<64x64xbf16, #tilegpu.mma_sync<opa, warps = 4>>, tensor<64x64xbf16, #tilegpu.shared<pad = 8>>
// BWD: %[[T:.*]] = tile.transpose %{{.*}} : tensor<64x64xbf16, #tilegpu.mma_sync<acc, warps = 4>> -> tensor<64x64xbf16, #tilegpu.shared<pad = 8, transposed = true>>
// BWD: %[[DQ:.*]] = tile.mma %[[T]], %[[KR]], %{{.*}} : tensor<64x64xbf16, #tilegpu.shared<pad = 8, transposed = true>>, tensor<64x64xbf16, #tilegpu.shared<pad = 8>> -> tensor<64x64xf32, #tilegpu.mma_sync<acc, warps = 4>>
// BWD: tile.store %[[DQ]], %{{.*}} add : tensor<64x64xf32, #tilegpu.mma_sync<acc, warps = 4>>
// BWD-WGMMA-LABEL: func.func @sdpa_bwd(
// BWD-WGMMA: %[[K:.*]] = tile.load %arg1[{{.*}}] pad(0.000000e+00) : <?x?x?x64xf16> -> tensor<64x64xf16, #tilegpu.shared<swizzle = 128>>
// BWD-WGMMA-NOT: tile.load %arg1[
// BWD-WGMMA: %[[QB:.*]] = tile.load %arg0[{{.*}}] pad(0.000000e+00) : <?x?x?x64xf16> -> tensor<64x64xf16, #tilegpu.shared<swizzle = 128>>
// BWD-WGMMA: %[[QT:.*]] = tile.transpose %[[QB]] : tensor<64x64xf16, #tilegpu.shared<swizzle = 128>> -> tensor<64x64xf16, #tilegpu.shared<swizzle = 128, transposed = true>>
// BWD-WGMMA: tile.mma %{{.*}}, %[[QT]], %{{.*}} : tensor<64x64xf16, #tilegpu.shared<swizzle = 128>>, tensor<64x64xf16, #tilegpu.shared<swizzle = 128, transposed = true>> -> tensor<64x64xf32, #tilegpu.wgmma<acc, warpgroups = 1>>
// BWD-WGMMA: tile.mma %{{.*}}, %[[QB]], %{{.*}} : tensor<64x64xf16, #tilegpu.wgmma<opa, warpgroups = 1>>, tensor<64x64xf16, #tilegpu.shared<swizzle = 128>>
// BWD-WGMMA: %[[T:.*]] = tile.transpose %{{.*}} : tensor<64x64xf16, #tilegpu.wgmma<acc, warpgroups = 1>> -> tensor<64x64xf16, #tilegpu.shared<swizzle = 128, transposed = true>>
// BWD-WGMMA: %[[DQ:.*]] = tile.mma %[[T]], %[[K]], %{{.*}} : tensor<64x64xf16, #tilegpu.shared<swizzle = 128, transposed = true>>, tensor<64x64xf16, #tilegpu.shared<swizzle = 128>> -> tensor<64x64xf32, #tilegpu.wgmma<acc, warpgroups = 1>>
// BWD-WGMMA: tile.store %[[DQ]], %{{.*}} add : tensor<64x64xf32, #tilegpu.wgmma<acc, warpgroups = 1>>
// BWD-TCGEN05-LABEL: func.func @sdpa_bwd(
// BWD-TCGEN05: %[[K:.*]] = tile.load %arg1[{{.*}}] pad(0.000000e+00) : <?x?x?x64xf16> -> tensor<128x64xf16, #tilegpu.shared<swizzle = 128>>
// BWD-TCGEN05: %[[QB:.*]] = tile.load %arg0[{{.*}}] pad(0.000000e+00) : <?x?x?x64xf16> -> tensor<128x64xf16, #tilegpu.shared<swizzle = 128>>
// BWD-TCGEN05: %[[QT:.*]] = tile.transpose %[[QB]] : tensor<128x64xf16, #tilegpu.shared<swizzle = 128>> -> tensor<64x128xf16, #tilegpu.shared<swizzle = 128, transposed = true>>
// BWD-TCGEN05: %[[ST:.*]] = tile.mma %[[K]], %[[QT]], %{{.*}} : {{.*}} -> tensor<128x128xf32, #tilegpu.tensor_memory<>>
// BWD-TCGEN05: tile.convert_layout %[[ST]] : tensor<128x128xf32, #tilegpu.tensor_memory<>> -> tensor<128x128xf32, #tilegpu.tmem_lanes<acc, warps = 8>>
// BWD-TCGEN05: %[[PT:.*]] = tile.convert_layout %{{.*}} : tensor<128x128xf16, #tilegpu.tmem_lanes<acc, warps = 8>> -> tensor<128x128xf16, #tilegpu.tensor_memory<packed = true>>
// BWD-TCGEN05: tile.mma %[[PT]], %{{.*}}, %{{.*}} : tensor<128x128xf16, #tilegpu.tensor_memory<packed = true>>, tensor<128x64xf16, #tilegpu.shared<swizzle = 128>> -> tensor<128x64xf32, #tilegpu.tensor_memory<>>
// BWD-TCGEN05: %[[DST:.*]] = tile.convert_layout %[[DS:.*]] : tensor<128x128xf16, #tilegpu.tmem_lanes<acc, warps = 8>> -> tensor<128x128xf16, #tilegpu.tensor_memory<packed = true>>
// BWD-TCGEN05: tile.mma %[[DST]], %[[QB]], %{{.*}} : tensor<128x128xf16, #tilegpu.tensor_memory<packed = true>>, tensor<128x64xf16, #tilegpu.shared<swizzle = 128>> -> tensor<128x64xf32, #tilegpu.tensor_memory<>>
// BWD-TCGEN05: %[[T:.*]] = tile.transpose %[[DS]] : tensor<128x128xf16, #tilegpu.tmem_lanes<acc, warps = 8>> -> tensor<128x128xf16, #tilegpu.shared<swizzle = 128, transposed = true>>
// BWD-TCGEN05: %[[DQ:.*]] = tile.mma %[[T]], %[[K]], %{{.*}} : tensor<128x128xf16, #tilegpu.shared<swizzle = 128, transposed = true>>, tensor<128x64xf16, #tilegpu.shared<swizzle = 128>> -> tensor<128x64xf32, #tilegpu.tensor_memory<>>
// BWD-TCGEN05: %[[DQR:.*]] = tile.convert_layout %[[DQ]] : tensor<128x64xf32, #tilegpu.tensor_memory<>> -> tensor<128x64xf32, #tilegpu.tmem_lanes<acc, warps = 8>>
// BWD-TCGEN05: tile.store %[[DQR]], %{{.*}} add : tensor<128x64xf32, #tilegpu.tmem_lanes<acc, warps = 8>>
// Register tiles no thread can hold are refused before anything unrolls
// them (D = 256 with 256 x 256 blocks took 203 s and 2.1 GB to compile for
// sm_80 before), alone or as a loop's carried values, under the SM's
// register file shared by 16 warps:
// RUN: echo 'module {}' | not tiled-attn-opt --tile-generate-sdpa="head-dim=256 block-m=256 block-n=256" \
// RUN:   --tile-schedule --tilegpu-attach-target="chip=sm_80" --tilegpu-assign-layouts="warps=4" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=REGS
// RUN: echo 'module {}' | not tiled-attn-opt --tile-generate-sdpa="head-dim=128 block-m=128 block-n=128 dtype=bf16" \
// RUN:   --tile-schedule="stages=2" --tilegpu-attach-target="chip=sm_120a" --tilegpu-assign-layouts="warps=2" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=REGS2
// RUN: echo 'module {}' | not tiled-attn-opt --tile-generate-sdpa="head-dim=256 block-m=256 block-n=128" \
// RUN:   --tile-schedule="exp2=1" --tilegpu-attach-target="chip=sm_90a" --tilegpu-assign-layouts="warps=16" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=CARRIED
// Q in registers is live through the loop with what it carries; with
// smem-lhs it is not:
// RUN: echo 'module {}' | not tiled-attn-opt --tile-generate-sdpa="head-dim=192 block-m=64 block-n=32" \
// RUN:   --tile-schedule="exp2=1" --tilegpu-attach-target="chip=sm_80" --tilegpu-assign-layouts="warps=2" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=LIVE
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="head-dim=192 block-m=64 block-n=32" \
// RUN:   --tile-schedule="exp2=1" --tilegpu-attach-target="chip=sm_80" --tilegpu-assign-layouts="warps=2 smem-lhs=1" \
// RUN:   | FileCheck %s --check-prefix=LIVE-SMEM
// The smem-lhs cases, alone (the refused cases above would fail differently
// with Q in shared memory):
// The swizzle follows the stored rows: D = 96 (192-byte rows) takes
// 64-byte panels, D = 192 (384 bytes) 128-byte ones, on wgmma as on
// mma.sync with TMA.
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="head-dim=96 block-m=128 block-n=64" \
// RUN:   --tile-schedule="exp2=1" --tilegpu-attach-target="chip=sm_90a" --tilegpu-assign-layouts="warps=8" \
// RUN:   | FileCheck %s --check-prefix=SWIZZLE96
// SWIZZLE96-DAG: tensor<128x96xf16, #tilegpu.shared<swizzle = 64>>
// SWIZZLE96-DAG: tensor<96x64xf16, #tilegpu.shared<swizzle = 64, transposed = true>>
// SWIZZLE96-DAG: tensor<64x96xf16, #tilegpu.shared<swizzle = 64>>
// SWIZZLE96-NOT: swizzle = 128
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="head-dim=192 block-m=64 block-n=32" \
// RUN:   --tile-schedule="exp2=1" --tilegpu-attach-target="chip=sm_120a" --tilegpu-assign-layouts="warps=4 tma=1" \
// RUN:   | FileCheck %s --check-prefix=SWIZZLE192
// SWIZZLE192-DAG: tensor<192x32xf16, #tilegpu.shared<swizzle = 128, transposed = true>>
// SWIZZLE192-DAG: tensor<32x192xf16, #tilegpu.shared<swizzle = 128>>
// SWIZZLE192-NOT: swizzle = 64
// RUN: rm -rf %t && split-file --leading-lines %s %t
// RUN: tiled-attn-opt %t/smem-lhs.mlir -split-input-file --tilegpu-attach-target="chip=sm_80" \
// RUN:   --tilegpu-assign-layouts="smem-lhs=true" | FileCheck %s --check-prefix=SMEM
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="head-dim=64 variant=top_left block-m=128" \
// RUN:   --tile-schedule="exp2=1" --tilegpu-attach-target="chip=sm_80" \
// RUN:   --tilegpu-assign-layouts="warps=8 smem-lhs=true" | FileCheck %s --check-prefix=GEN8SMEM
// Modules the pass cannot give layouts to, without tilegpu-attach-target
// (which would set an mma_sync target on them):
// RUN: not tiled-attn-opt %t/targets.mlir -split-input-file --tilegpu-assign-layouts 2>&1 \
// RUN:   | FileCheck %s --check-prefix=TARGET
// Swizzled panels need rows of a multiple of 32 bytes (the generator's
// head dims always give them; hand-written IR may not):
// RUN: not tiled-attn-opt %t/rows.mlir --tilegpu-attach-target="chip=sm_90a" \
// RUN:   --tilegpu-assign-layouts="warps=4" 2>&1 | FileCheck %s --check-prefix=ROWS32
// wgmma on two warpgroups, a product of 64 rows (the backward's dQ part):
// the warpgroups split its columns, and its store takes the same layout.
// RUN: tiled-attn-opt %t/column-blocks.mlir --tilegpu-attach-target="chip=sm_90a" \
// RUN:   --tilegpu-assign-layouts="warps=8" | FileCheck %s --check-prefix=COLUMNS
// RUN: tiled-attn-opt %S/Inputs/column-blocks-lhs.mlir --tilegpu-attach-target="chip=sm_80" \
// RUN:   --tilegpu-assign-layouts="warps=8" | FileCheck %s --check-prefix=MMA-COLUMNS
// mma.sync alike: 64 rows on 8 warps are four warps of 16 rows, twice, side
// by side on the columns; the lhs of such a product, loaded (K) or
// computed (Pᵀ), is read from shared memory (padded rows, ldmatrix).
// MMA-COLUMNS: tile.mma %{{.*}} : tensor<64x256xf16, #tilegpu.shared<pad = 8>>, tensor<256x64xf16, #tilegpu.shared<pad = 8, transposed = true>> -> tensor<64x64xf32, #tilegpu.mma_sync<acc, warps = 8, column_blocks = 2>>
// MMA-COLUMNS: tile.broadcast %{{.*}} along 0 : tensor<64xf32, #tilegpu.mma_sync<cols, warps = 8, column_blocks = 2>> -> tensor<64x64xf32, #tilegpu.mma_sync<acc, warps = 8, column_blocks = 2>>
// MMA-COLUMNS: tile.convert_layout %{{.*}} : tensor<64x64xf16, #tilegpu.mma_sync<acc, warps = 8, column_blocks = 2>> -> tensor<64x64xf16, #tilegpu.shared<pad = 8>>
// MMA-COLUMNS: tile.mma %{{.*}} : tensor<64x64xf16, #tilegpu.shared<pad = 8>>, tensor<64x256xf16, #tilegpu.shared<pad = 8>> -> tensor<64x256xf32, #tilegpu.mma_sync<acc, warps = 8, column_blocks = 2>>

// The layouts of the mma.sync family, on a decomposed kernel with the
// default 4 warps: mma operands and results fix opa, a shared encoding
// (#tilegpu.shared, rows padded by 8; transposed for Kᵀ) and acc, row
// reductions give rows, the rank-1 bounds mask gives cols, and everything
// else follows through elementwise ops and loop-carried values. The cases
// the pass refuses are at the end of the file. The kernel records its warps
// for the lowering (its block size).

// CHECK-LABEL: func.func @attention_step
// CHECK-SAME: attributes {tilegpu.warps = 4 : i64}
// CHECK-DAG: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : tensor<64x16xf32, #tilegpu.mma_sync<acc, warps = 4>>
// CHECK-DAG: %[[NEG_INF:.*]] = arith.constant dense<0xFF800000> : tensor<64x16xf32, #tilegpu.mma_sync<acc, warps = 4>>
// CHECK-DAG: %[[M0:.*]] = arith.constant dense<0xFF800000> : tensor<64xf32, #tilegpu.mma_sync<rows, warps = 4>>
// CHECK: %[[Q:.*]] = tile.load {{.*}} -> tensor<64x16xf16, #tilegpu.mma_sync<opa, warps = 4>>
// CHECK: scf.for {{.*}} iter_args(%[[M:.*]] = %[[M0]], %[[ACC:.*]] = %[[ZERO]]) -> (tensor<64xf32, #tilegpu.mma_sync<rows, warps = 4>>, tensor<64x16xf32, #tilegpu.mma_sync<acc, warps = 4>>)
// CHECK: %[[KT:.*]] = tile.load {{.*}} transpose : <?x?x?x16xf16> -> tensor<16x16xf16, #tilegpu.shared<pad = 8, transposed = true>>
// CHECK: %[[V:.*]] = tile.load {{.*}} pad(0.000000e+00) : <?x?x?x16xf16> -> tensor<16x16xf16, #tilegpu.shared<pad = 8>>
// The Q operand comes straight from its load: no conversion.
// CHECK-NOT: tile.convert_layout
// CHECK: %[[S:.*]] = tile.mma %[[Q]], %[[KT]], %[[ZERO]] : tensor<64x16xf16, #tilegpu.mma_sync<opa, warps = 4>>, tensor<16x16xf16, #tilegpu.shared<pad = 8, transposed = true>> -> tensor<64x16xf32, #tilegpu.mma_sync<acc, warps = 4>>
// CHECK: %[[IN:.*]] = tile.bounds_mask {{.*}} : tensor<16xi1, #tilegpu.mma_sync<cols, warps = 4>>
// CHECK: %[[IN2:.*]] = tile.broadcast %[[IN]] along 0 : tensor<16xi1, #tilegpu.mma_sync<cols, warps = 4>> -> tensor<64x16xi1, #tilegpu.mma_sync<acc, warps = 4>>
// CHECK: %[[CAUSAL:.*]] = tile.causal_mask {{.*}} : tensor<64x16xi1, #tilegpu.mma_sync<acc, warps = 4>>
// CHECK: %[[MASK:.*]] = arith.andi %[[IN2]], %[[CAUSAL]] : tensor<64x16xi1, #tilegpu.mma_sync<acc, warps = 4>>
// CHECK: %[[SM:.*]] = arith.select %[[MASK]], %[[S]], %[[NEG_INF]] : tensor<64x16xi1, #tilegpu.mma_sync<acc, warps = 4>>, tensor<64x16xf32, #tilegpu.mma_sync<acc, warps = 4>>
// CHECK: %[[RMAX:.*]] = tile.reduce max %[[SM]] along 1 : tensor<64x16xf32, #tilegpu.mma_sync<acc, warps = 4>> -> tensor<64xf32, #tilegpu.mma_sync<rows, warps = 4>>
// CHECK: %[[M1:.*]] = arith.maximumf %[[M]], %[[RMAX]] : tensor<64xf32, #tilegpu.mma_sync<rows, warps = 4>>
// CHECK: %[[MB:.*]] = tile.broadcast %[[M1]] along 1 : tensor<64xf32, #tilegpu.mma_sync<rows, warps = 4>> -> tensor<64x16xf32, #tilegpu.mma_sync<acc, warps = 4>>
// CHECK: %[[X:.*]] = arith.subf %[[SM]], %[[MB]] : tensor<64x16xf32, #tilegpu.mma_sync<acc, warps = 4>>
// CHECK: %[[P:.*]] = math.exp %[[X]] : tensor<64x16xf32, #tilegpu.mma_sync<acc, warps = 4>>
// CHECK: %[[PH:.*]] = arith.truncf %[[P]] : tensor<64x16xf32, #tilegpu.mma_sync<acc, warps = 4>> to tensor<64x16xf16, #tilegpu.mma_sync<acc, warps = 4>>
// P leaves the accumulator of one mma for the A operand of the next.
// CHECK: %[[PA:.*]] = tile.convert_layout %[[PH]] : tensor<64x16xf16, #tilegpu.mma_sync<acc, warps = 4>> -> tensor<64x16xf16, #tilegpu.mma_sync<opa, warps = 4>>
// CHECK: %[[ACC1:.*]] = tile.mma %[[PA]], %[[V]], %[[ACC]] : tensor<64x16xf16, #tilegpu.mma_sync<opa, warps = 4>>, tensor<16x16xf16, #tilegpu.shared<pad = 8>> -> tensor<64x16xf32, #tilegpu.mma_sync<acc, warps = 4>>
// CHECK: scf.yield %[[M1]], %[[ACC1]] : tensor<64xf32, #tilegpu.mma_sync<rows, warps = 4>>, tensor<64x16xf32, #tilegpu.mma_sync<acc, warps = 4>>
// CHECK: %[[OUT:.*]] = arith.truncf {{.*}} to tensor<64x16xf16, #tilegpu.mma_sync<acc, warps = 4>>
// CHECK: tile.store %[[OUT]], {{.*}} : tensor<64x16xf16, #tilegpu.mma_sync<acc, warps = 4>>, <?x?x?x16xf16>
func.func @attention_step(%q: !tile.view<?x?x?x16xf16>,
                          %k: !tile.view<?x?x?x16xf16>,
                          %v: !tile.view<?x?x?x16xf16>,
                          %o: !tile.view<?x?x?x16xf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant dense<0.0> : tensor<64x16xf32>
  %ninf = arith.constant dense<0xFF800000> : tensor<64x16xf32>
  %m0 = arith.constant dense<0xFF800000> : tensor<64xf32>
  %qt = tile.load %q[%c0, %c0, %c0, %c0] pad(0.0)
      : !tile.view<?x?x?x16xf16> -> tensor<64x16xf16>
  %r:2 = scf.for %j = %c0 to %n step %c1 iter_args(%m = %m0, %acc = %zero)
      -> (tensor<64xf32>, tensor<64x16xf32>) {
    %kt = tile.load %k[%c0, %c0, %j, %c0] pad(0.0) transpose
        : !tile.view<?x?x?x16xf16> -> tensor<16x16xf16>
    %vt = tile.load %v[%c0, %c0, %j, %c0] pad(0.0)
        : !tile.view<?x?x?x16xf16> -> tensor<16x16xf16>
    %s = tile.mma %qt, %kt, %zero
        : tensor<64x16xf16>, tensor<16x16xf16> -> tensor<64x16xf32>
    %in = tile.bounds_mask offsets(%j) limits(%n) : tensor<16xi1>
    %in2 = tile.broadcast %in along 0 : tensor<16xi1> -> tensor<64x16xi1>
    %cm = tile.causal_mask %c0, %j : tensor<64x16xi1>
    %mask = arith.andi %in2, %cm : tensor<64x16xi1>
    %sm = arith.select %mask, %s, %ninf : tensor<64x16xi1>, tensor<64x16xf32>
    %rmax = tile.reduce max %sm along 1 : tensor<64x16xf32> -> tensor<64xf32>
    %m1 = arith.maximumf %m, %rmax : tensor<64xf32>
    %mb = tile.broadcast %m1 along 1 : tensor<64xf32> -> tensor<64x16xf32>
    %x = arith.subf %sm, %mb : tensor<64x16xf32>
    %p = math.exp %x : tensor<64x16xf32>
    %ph = arith.truncf %p : tensor<64x16xf32> to tensor<64x16xf16>
    %acc1 = tile.mma %ph, %vt, %acc
        : tensor<64x16xf16>, tensor<16x16xf16> -> tensor<64x16xf32>
    scf.yield %m1, %acc1 : tensor<64xf32>, tensor<64x16xf32>
  }
  %out = arith.truncf %r#1 : tensor<64x16xf32> to tensor<64x16xf16>
  tile.store %out, %o[%c0, %c0, %c0, %c0]
      : tensor<64x16xf16>, !tile.view<?x?x?x16xf16>
  return
}

// -----

// A column reduction gives cols; scf.if results share their yields'
// layout; a store mask is an accumulator like the value it guards.

// CHECK-LABEL: func.func @cols_if_and_store_mask
// CHECK: %[[Q:.*]] = tile.load {{.*}} -> tensor<64x16xf16, #tilegpu.mma_sync<opa, warps = 4>>
// CHECK: %[[S:.*]] = tile.mma %[[Q]], {{.*}} -> tensor<64x16xf32, #tilegpu.mma_sync<acc, warps = 4>>
// CHECK: %[[CMAX:.*]] = tile.reduce max %[[S]] along 0 : tensor<64x16xf32, #tilegpu.mma_sync<acc, warps = 4>> -> tensor<16xf32, #tilegpu.mma_sync<cols, warps = 4>>
// CHECK: %[[SEL:.*]] = scf.if %{{.*}} -> (tensor<16xf32, #tilegpu.mma_sync<cols, warps = 4>>)
// CHECK: scf.yield %[[CMAX]] : tensor<16xf32, #tilegpu.mma_sync<cols, warps = 4>>
// CHECK: } else {
// CHECK: scf.yield %{{.*}} : tensor<16xf32, #tilegpu.mma_sync<cols, warps = 4>>
// CHECK: %[[B:.*]] = tile.broadcast %[[SEL]] along 0 : tensor<16xf32, #tilegpu.mma_sync<cols, warps = 4>> -> tensor<64x16xf32, #tilegpu.mma_sync<acc, warps = 4>>
// CHECK: %[[MASK:.*]] = tile.causal_mask {{.*}} : tensor<64x16xi1, #tilegpu.mma_sync<acc, warps = 4>>
// CHECK: tile.store {{.*}} mask(%[[MASK]] : tensor<64x16xi1, #tilegpu.mma_sync<acc, warps = 4>>) : tensor<64x16xf16, #tilegpu.mma_sync<acc, warps = 4>>, <?x?x?x16xf16>
func.func @cols_if_and_store_mask(%q: !tile.view<?x?x?x16xf16>,
                                  %k: !tile.view<?x?x?x16xf16>,
                                  %o: !tile.view<?x?x?x16xf16>, %c: i1) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant dense<0.0> : tensor<64x16xf32>
  %ones = arith.constant dense<1.0> : tensor<16xf32>
  %qt = tile.load %q[%c0, %c0, %c0, %c0] pad(0.0)
      : !tile.view<?x?x?x16xf16> -> tensor<64x16xf16>
  %kt = tile.load %k[%c0, %c0, %c0, %c0] pad(0.0) transpose
      : !tile.view<?x?x?x16xf16> -> tensor<16x16xf16>
  %s = tile.mma %qt, %kt, %zero
      : tensor<64x16xf16>, tensor<16x16xf16> -> tensor<64x16xf32>
  %cmax = tile.reduce max %s along 0 : tensor<64x16xf32> -> tensor<16xf32>
  %sel = scf.if %c -> (tensor<16xf32>) {
    scf.yield %cmax : tensor<16xf32>
  } else {
    scf.yield %ones : tensor<16xf32>
  }
  %b = tile.broadcast %sel along 0 : tensor<16xf32> -> tensor<64x16xf32>
  %bh = arith.truncf %b : tensor<64x16xf32> to tensor<64x16xf16>
  %mask = tile.causal_mask %c0, %c0 : tensor<64x16xi1>
  tile.store %bh, %o[%c0, %c0, %c0, %c0] mask(%mask : tensor<64x16xi1>)
      : tensor<64x16xf16>, !tile.view<?x?x?x16xf16>
  return
}

// -----

// A software-pipelined loop carries the K tile: the rhs is a loop argument
// whose start value and next value come from loads, all in shared memory.

// CHECK-LABEL: func.func @pipelined_rhs
// CHECK: %[[K0:.*]] = tile.load {{.*}} transpose : <?x?x?x16xf16> -> tensor<16x16xf16, #tilegpu.shared<pad = 8, transposed = true>>
// CHECK: scf.for {{.*}} iter_args(%[[KT:.*]] = %[[K0]], %{{.*}} = %{{.*}}) -> (tensor<16x16xf16, #tilegpu.shared<pad = 8, transposed = true>>, tensor<64x16xf32, #tilegpu.mma_sync<acc, warps = 4>>)
// CHECK: %[[NEXT:.*]] = tile.load {{.*}} transpose : <?x?x?x16xf16> -> tensor<16x16xf16, #tilegpu.shared<pad = 8, transposed = true>>
// CHECK: %[[S:.*]] = tile.mma %{{.*}}, %[[KT]], %{{.*}} : tensor<64x16xf16, #tilegpu.mma_sync<opa, warps = 4>>, tensor<16x16xf16, #tilegpu.shared<pad = 8, transposed = true>> -> tensor<64x16xf32, #tilegpu.mma_sync<acc, warps = 4>>
// CHECK: scf.yield %[[NEXT]], %[[S]]
func.func @pipelined_rhs(%q: !tile.view<?x?x?x16xf16>,
                         %k: !tile.view<?x?x?x16xf16>,
                         %o: !tile.view<?x?x?x16xf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant dense<0.0> : tensor<64x16xf32>
  %qt = tile.load %q[%c0, %c0, %c0, %c0] pad(0.0)
      : !tile.view<?x?x?x16xf16> -> tensor<64x16xf16>
  %k0 = tile.load %k[%c0, %c0, %c0, %c0] pad(0.0) transpose
      : !tile.view<?x?x?x16xf16> -> tensor<16x16xf16>
  %r:2 = scf.for %j = %c0 to %n step %c1 iter_args(%kt = %k0, %acc = %zero)
      -> (tensor<16x16xf16>, tensor<64x16xf32>) {
    %j1 = arith.addi %j, %c1 : index
    %next = tile.load %k[%c0, %c0, %j1, %c0] pad(0.0) transpose
        : !tile.view<?x?x?x16xf16> -> tensor<16x16xf16>
    %s = tile.mma %qt, %kt, %acc
        : tensor<64x16xf16>, tensor<16x16xf16> -> tensor<64x16xf32>
    scf.yield %next, %s : tensor<16x16xf16>, tensor<64x16xf32>
  }
  %out = arith.truncf %r#1 : tensor<64x16xf32> to tensor<64x16xf16>
  tile.store %out, %o[%c0, %c0, %c0, %c0]
      : tensor<64x16xf16>, !tile.view<?x?x?x16xf16>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Refused
//===----------------------------------------------------------------------===//

// WARPS3: error: tilegpu-assign-layouts: warps must be 1, 2, 4 or 8, got 3

// REGS: error: tilegpu-assign-layouts: the accumulator 'tensor<256x256xf32, #tilegpu.mma_sync<acc, warps = 4>>' needs 512 registers per thread; a thread has at most 255 registers on sm_80
// REGS2: error: tilegpu-assign-layouts: the accumulator 'tensor<128x128xf32, #tilegpu.mma_sync<acc, warps = 2>>' needs 256 registers per thread; a thread has at most 255 registers on sm_120a
// CARRIED: error: tilegpu-assign-layouts: this loop keeps tiles of 132 registers per thread live through every iteration (132 carried, 0 read from outside it); the 16 warps' threads share 65536 registers of one SM, at most 128 each
// LIVE: error: tilegpu-assign-layouts: this loop keeps tiles of 296 registers per thread live through every iteration (200 carried, 96 read from outside it); a thread has at most 255 registers on sm_80
// LIVE-SMEM: tilegpu.warps = 2

// A transpose goes through shared memory to the lhs of an mma, and nowhere
// else.

func.func @negative_transpose(%o: !tile.view<?x?x?x64xf16>) {
  %c0 = arith.constant 0 : index
  %t = arith.constant dense<1.0> : tensor<64x16xf16>
  // expected-error @+1 {{tilegpu-assign-layouts: a tile.transpose feeds the lhs of tile.mma ops only (it goes through shared memory)}}
  %r = tile.transpose %t : tensor<64x16xf16> -> tensor<16x64xf16>
  tile.store %r, %o[%c0, %c0, %c0, %c0] : tensor<16x64xf16>, !tile.view<?x?x?x64xf16>
  return
}

// -----

// A transpose of a loaded block is a view of its shared buffer, which only
// an mma reads.

func.func @negative_transpose_of_load(%k: !tile.view<?x?x?x64xf16>, %o: !tile.view<?x?x?x64xf16>) {
  %c0 = arith.constant 0 : index
  %kb = tile.load %k[%c0, %c0, %c0, %c0] pad(0.0) : !tile.view<?x?x?x64xf16> -> tensor<16x64xf16>
  // expected-error @+1 {{tilegpu-assign-layouts: a transpose of a loaded block feeds mma operands only (it is a view of the block's shared buffer)}}
  %r = tile.transpose %kb : tensor<16x64xf16> -> tensor<64x16xf16>
  tile.store %r, %o[%c0, %c0, %c0, %c0] : tensor<64x16xf16>, !tile.view<?x?x?x64xf16>
  return
}

// -----

func.func @negative_online_softmax(%s: !tile.view<?x?x?x16xf16>, %scale: f32) {
  %m0 = arith.constant dense<0xFF800000> : tensor<64xf32>
  %l0 = arith.constant dense<0.0> : tensor<64xf32>
  %x = arith.constant dense<0.0> : tensor<64x16xf32>
  // expected-error @+1 {{tilegpu-assign-layouts: decompose the online softmax first (tile-decompose-online-softmax)}}
  %m1, %l1, %p, %alpha = tile.online_softmax %x, %m0, %l0 scale(%scale)
      : tensor<64x16xf32>, tensor<64xf32>
  return
}

// -----

// The rhs of an mma is staged in shared memory by its load (directly, or
// carried by a pipelined loop); one computed in registers is not.

func.func @negative_mma_rhs_not_loaded(%q: !tile.view<?x?x?x16xf16>,
                                       %k: !tile.view<?x?x?x16xf16>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant dense<0.0> : tensor<64x16xf32>
  %qt = tile.load %q[%c0, %c0, %c0, %c0] pad(0.0)
      : !tile.view<?x?x?x16xf16> -> tensor<64x16xf16>
  %kt = tile.load %k[%c0, %c0, %c0, %c0] pad(0.0) transpose
      : !tile.view<?x?x?x16xf16> -> tensor<16x16xf16>
  %nk = arith.negf %kt : tensor<16x16xf16>
  // expected-error @+1 {{tilegpu-assign-layouts: expects the rhs of tile.mma to come from a tile.load, directly, carried by a loop or transposed (it is staged in shared memory)}}
  %s = tile.mma %qt, %nk, %zero
      : tensor<64x16xf16>, tensor<16x16xf16> -> tensor<64x16xf32>
  return
}

// -----

// A reduction to a scalar takes its input where it lies (here the rows'
// layout its row reduction gives it); one with nothing to say where its
// input lies has no layout.
// CHECK-LABEL: func.func @scalar_reduction
// CHECK: %[[R:.*]] = tile.reduce max %{{.*}} along 1 : tensor<64x16xf32, #tilegpu.mma_sync<acc, warps = 4>> -> tensor<64xf32, #tilegpu.mma_sync<rows, warps = 4>>
// CHECK: tile.reduce min %[[R]] along 0 : tensor<64xf32, #tilegpu.mma_sync<rows, warps = 4>> -> f32
func.func @scalar_reduction(%x: f32, %o: !tile.view<?x?xf32>) {
  %s = tensor.splat %x : tensor<64x16xf32>
  %r = tile.reduce max %s along 1 : tensor<64x16xf32> -> tensor<64xf32>
  %m = tile.reduce min %r along 0 : tensor<64xf32> -> f32
  %c0 = arith.constant 0 : index
  tile.write %m, %o[%c0, %c0] : f32, !tile.view<?x?xf32>
  return
}

// -----

func.func @negative_scalar_reduction_of_nothing(%o: !tile.view<?x?x?x16xf16>) {
  // expected-error @+1 {{tilegpu-assign-layouts: cannot tell how to spread 'tensor<64xf32>' over the threads}}
  %m = arith.constant dense<1.0> : tensor<64xf32>
  %min = tile.reduce min %m along 0 : tensor<64xf32> -> f32
  return
}

// -----

// With 4 warps an accumulator needs 64 rows (16 per warp).

func.func @negative_rows_not_divisible(%q: !tile.view<?x?x?x16xf16>,
                                       %k: !tile.view<?x?x?x16xf16>,
                                       %o: !tile.view<?x?x?x16xf16>) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{tilegpu-assign-layouts: a tile of shape 2-d [16, 16] in #tilegpu.mma_sync<acc, warps = 4> needs rank 2, rows a multiple of 16 x warps and columns of 8 (16 for an A operand)}}
  %zero = arith.constant dense<0.0> : tensor<16x16xf32>
  %qt = tile.load %q[%c0, %c0, %c0, %c0] pad(0.0)
      : !tile.view<?x?x?x16xf16> -> tensor<16x16xf16>
  %kt = tile.load %k[%c0, %c0, %c0, %c0] pad(0.0) transpose
      : !tile.view<?x?x?x16xf16> -> tensor<16x16xf16>
  %s = tile.mma %qt, %kt, %zero
      : tensor<16x16xf16>, tensor<16x16xf16> -> tensor<16x16xf32>
  %sh = arith.truncf %s : tensor<16x16xf32> to tensor<16x16xf16>
  tile.store %sh, %o[%c0, %c0, %c0, %c0]
      : tensor<16x16xf16>, !tile.view<?x?x?x16xf16>
  return
}

// -----

// The generated kernel with BLOCK_M = 16 fails the same way (first on one of
// its 16-row tiles or row vectors).
// ROWS: error: tilegpu-assign-layouts: a tile of shape {{[12]}}-d [16{{.*}}] in #tilegpu.mma_sync<{{.*}}, warps = 4> needs {{.*}}a multiple of 16 x warps

// Blocks that are multiples of 16 but not powers of two: 48 rows do not
// split over 4 warps of 16-row mma.sync tiles, but do on one warp; 192 rows
// are three warpgroups of wgmma's 64, not two.
// RUN: echo 'module {}' | not tiled-attn-opt --tile-generate-sdpa="head-dim=64 block-m=48 block-n=80" --tile-schedule \
// RUN:   --tilegpu-attach-target="chip=sm_80" --tilegpu-assign-layouts 2>&1 | FileCheck %s --check-prefix=ROWS48
// ROWS48: error: tilegpu-assign-layouts: a tile of shape 1-d [48] in #tilegpu.mma_sync<rows, warps = 4> needs rank 1 and a length that is a multiple of 16 x warps
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="head-dim=64 block-m=48 block-n=80" --tile-schedule \
// RUN:   --tilegpu-attach-target="chip=sm_80" --tilegpu-assign-layouts="warps=1" | FileCheck %s --check-prefix=ONE-WARP
// ONE-WARP: tile.mma {{.*}} : tensor<48x64xf16, #tilegpu.mma_sync<opa, warps = 1>>, tensor<64x80xf16, {{.*}}> -> tensor<48x80xf32, #tilegpu.mma_sync<acc, warps = 1>>
// RUN: echo 'module {}' | not tiled-attn-opt --tile-generate-sdpa="head-dim=64 block-m=192" --tile-schedule \
// RUN:   --tilegpu-attach-target="chip=sm_90a" --tilegpu-assign-layouts="warps=8" 2>&1 | FileCheck %s --check-prefix=WG192
// WG192: error: tilegpu-assign-layouts: #tilegpu.wgmma<rows, warpgroups = 2> needs 128 rows (64 per warpgroup)
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="head-dim=64 block-m=192 block-n=176" --tile-schedule \
// RUN:   --tilegpu-attach-target="chip=sm_90a" --tilegpu-assign-layouts="warps=12" | FileCheck %s --check-prefix=THREE-WG
// THREE-WG: tile.mma {{.*}} -> tensor<192x176xf32, #tilegpu.wgmma<acc, warpgroups = 3>>

// tma=1 keeps the mma.sync family's shared operands in 128-byte swizzled
// panels (what TMA writes), on a chip with TMA; Q stays in registers.
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="head-dim=64" --tile-schedule \
// RUN:   --tilegpu-attach-target="chip=sm_120a" --tilegpu-assign-layouts="tma=1" | FileCheck %s --check-prefix=TMA
// TMA: tile.mma {{.*}} : tensor<64x64xf16, #tilegpu.mma_sync<opa, warps = 4>>, tensor<64x64xf16, #tilegpu.shared<swizzle = 128, transposed = true>> -> tensor<64x64xf32, #tilegpu.mma_sync<acc, warps = 4>>
// TMA: tile.mma {{.*}} : tensor<64x64xf16, #tilegpu.mma_sync<opa, warps = 4>>, tensor<64x64xf16, #tilegpu.shared<swizzle = 128>> -> tensor<64x64xf32, #tilegpu.mma_sync<acc, warps = 4>>
// RUN: echo 'module {}' | not tiled-attn-opt --tile-generate-sdpa="head-dim=64" --tile-schedule \
// RUN:   --tilegpu-attach-target="chip=sm_80" --tilegpu-assign-layouts="tma=1" 2>&1 | FileCheck %s --check-prefix=NO-TMA
// NO-TMA: error: tilegpu-assign-layouts: tma=1 needs a chip with TMA (sm_90 and later), got sm_80

// A Q tile that is both an mma operand and stored.

func.func @negative_two_layouts(%q: !tile.view<?x?x?x16xf16>,
                                %k: !tile.view<?x?x?x16xf16>,
                                %o: !tile.view<?x?x?x16xf16>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant dense<0.0> : tensor<64x16xf32>
  // The error is reported at the tile's definition.
  // expected-error @+1 {{tilegpu-assign-layouts: this tile needs both #tilegpu.mma_sync<opa, warps = 4> and #tilegpu.mma_sync<acc, warps = 4>}}
  %qt = tile.load %q[%c0, %c0, %c0, %c0] pad(0.0)
      : !tile.view<?x?x?x16xf16> -> tensor<64x16xf16>
  %kt = tile.load %k[%c0, %c0, %c0, %c0] pad(0.0) transpose
      : !tile.view<?x?x?x16xf16> -> tensor<16x16xf16>
  %s = tile.mma %qt, %kt, %zero
      : tensor<64x16xf16>, tensor<16x16xf16> -> tensor<64x16xf32>
  tile.store %qt, %o[%c0, %c0, %c0, %c0]
      : tensor<64x16xf16>, !tile.view<?x?x?x16xf16>
  return
}

// -----

// Nothing says how an unused iota is spread.

func.func @negative_no_layout() {
  // expected-error @+1 {{tilegpu-assign-layouts: cannot tell how to spread 'tensor<64xi32>' over the threads}}
  %i = tile.iota : tensor<64xi32>
  return
}

// -----

// An A operand has no register move to an accumulator.

func.func @negative_convert_opa_to_acc(%q: !tile.view<?x?x?x16xf16>,
                                       %k: !tile.view<?x?x?x16xf16>,
                                       %o: !tile.view<?x?x?x16xf16>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant dense<0.0> : tensor<64x16xf32>
  %qt = tile.load %q[%c0, %c0, %c0, %c0] pad(0.0)
      : !tile.view<?x?x?x16xf16> -> tensor<64x16xf16>
  %kt = tile.load %k[%c0, %c0, %c0, %c0] pad(0.0) transpose
      : !tile.view<?x?x?x16xf16> -> tensor<16x16xf16>
  %s = tile.mma %qt, %kt, %zero
      : tensor<64x16xf16>, tensor<16x16xf16> -> tensor<64x16xf32>
  // expected-error @+1 {{tilegpu-assign-layouts: no register move from 'tensor<64x16xf16, #tilegpu.mma_sync<opa, warps = 4>>' to 'tensor<64x16xf16, #tilegpu.mma_sync<acc, warps = 4>>' yet}}
  %qa = tile.convert_layout %qt : tensor<64x16xf16> -> tensor<64x16xf16>
  tile.store %qa, %o[%c0, %c0, %c0, %c0]
      : tensor<64x16xf16>, !tile.view<?x?x?x16xf16>
  return
}

//===----------------------------------------------------------------------===//
// A generated kernel with 8 warps (BLOCK_M = 128)
//===----------------------------------------------------------------------===//

// GEN8-LABEL: func.func @sdpa_fwd
// GEN8-SAME: tilegpu.warps = 8 : i64
// GEN8: %[[Q:.*]] = tile.load {{.*}} -> tensor<128x64xf16, #tilegpu.mma_sync<opa, warps = 8>>
// GEN8: scf.for
// GEN8: %[[K:.*]] = tile.load {{.*}} transpose : <?x?x?x64xf16> -> tensor<64x64xf16, #tilegpu.shared<pad = 8, transposed = true>>
// GEN8: %[[V:.*]] = tile.load {{.*}} pad(0.000000e+00) : <?x?x?x64xf16> -> tensor<64x64xf16, #tilegpu.shared<pad = 8>>
// GEN8-NOT: tile.convert_layout
// GEN8: tile.mma %[[Q]], %[[K]], {{.*}} -> tensor<128x64xf32, #tilegpu.mma_sync<acc, warps = 8>>
// GEN8: tile.bounds_mask {{.*}} : tensor<64xi1, #tilegpu.mma_sync<cols, warps = 8>>
// GEN8: tile.causal_mask {{.*}} : tensor<128x64xi1, #tilegpu.mma_sync<acc, warps = 8>>
// GEN8: tile.reduce max {{.*}} -> tensor<128xf32, #tilegpu.mma_sync<rows, warps = 8>>
// GEN8: math.exp2 {{.*}} : tensor<128x64xf32, #tilegpu.mma_sync<acc, warps = 8>>
// GEN8: tile.reduce sum {{.*}} -> tensor<128xf32, #tilegpu.mma_sync<rows, warps = 8>>
// GEN8: %[[P:.*]] = tile.convert_layout {{.*}} : tensor<128x64xf16, #tilegpu.mma_sync<acc, warps = 8>> -> tensor<128x64xf16, #tilegpu.mma_sync<opa, warps = 8>>
// GEN8: tile.mma %[[P]], %[[V]], {{.*}} -> tensor<128x64xf32, #tilegpu.mma_sync<acc, warps = 8>>
// GEN8: tile.store {{.*}} : tensor<128x64xf16, #tilegpu.mma_sync<acc, warps = 8>>
// GEN8-NOT: warps = 4

// -----

// A function that passes tiles in or out is not a kernel.
// expected-error @+1 {{tilegpu-assign-layouts: expects a kernel whose arguments and results are views and scalars, not tiles}}
func.func @negative_tile_argument(%t: tensor<64x64xf32>) -> tensor<64x64xf32> {
  return %t : tensor<64x64xf32>
}

//===----------------------------------------------------------------------===//
// smem-lhs: an mma lhs straight from an untransposed load (Q) stays in
// shared memory. The sections below are also checked without the option
// (CHECK), by the first RUN line.
//===----------------------------------------------------------------------===//

// -----

//--- smem-lhs.mlir

// Q comes straight from its load: with smem-lhs it keeps the shared encoding of
// its copy (not transposed), and the mma reads it from there. P is computed
// in registers: it still moves from the accumulator to opa. Without the
// option Q is in opa, as before.

// SMEM-LABEL: func.func @smem_lhs_q_and_p
// SMEM: %[[Q:.*]] = tile.load {{.*}} pad(0.000000e+00) : <?x?x?x16xf16> -> tensor<64x16xf16, #tilegpu.shared<pad = 8>>
// SMEM: %[[KT:.*]] = tile.load {{.*}} transpose : <?x?x?x16xf16> -> tensor<16x16xf16, #tilegpu.shared<pad = 8, transposed = true>>
// SMEM: %[[V:.*]] = tile.load {{.*}} : <?x?x?x16xf16> -> tensor<16x16xf16, #tilegpu.shared<pad = 8>>
// SMEM-NOT: tile.convert_layout
// SMEM: %[[S:.*]] = tile.mma %[[Q]], %[[KT]], %{{.*}} : tensor<64x16xf16, #tilegpu.shared<pad = 8>>, tensor<16x16xf16, #tilegpu.shared<pad = 8, transposed = true>> -> tensor<64x16xf32, #tilegpu.mma_sync<acc, warps = 4>>
// SMEM: %[[PH:.*]] = arith.truncf %[[S]] : tensor<64x16xf32, #tilegpu.mma_sync<acc, warps = 4>> to tensor<64x16xf16, #tilegpu.mma_sync<acc, warps = 4>>
// SMEM: %[[PA:.*]] = tile.convert_layout %[[PH]] : tensor<64x16xf16, #tilegpu.mma_sync<acc, warps = 4>> -> tensor<64x16xf16, #tilegpu.mma_sync<opa, warps = 4>>
// SMEM: tile.mma %[[PA]], %[[V]], %{{.*}} : tensor<64x16xf16, #tilegpu.mma_sync<opa, warps = 4>>, tensor<16x16xf16, #tilegpu.shared<pad = 8>> -> tensor<64x16xf32, #tilegpu.mma_sync<acc, warps = 4>>

// CHECK-LABEL: func.func @smem_lhs_q_and_p
// CHECK: %[[Q:.*]] = tile.load {{.*}} -> tensor<64x16xf16, #tilegpu.mma_sync<opa, warps = 4>>
// CHECK-NOT: tile.convert_layout
// CHECK: tile.mma %[[Q]], %{{.*}}, %{{.*}} : tensor<64x16xf16, #tilegpu.mma_sync<opa, warps = 4>>, tensor<16x16xf16, #tilegpu.shared<pad = 8, transposed = true>>
// CHECK: %[[PA:.*]] = tile.convert_layout %{{.*}} : tensor<64x16xf16, #tilegpu.mma_sync<acc, warps = 4>> -> tensor<64x16xf16, #tilegpu.mma_sync<opa, warps = 4>>
// CHECK: tile.mma %[[PA]], %{{.*}} : tensor<64x16xf16, #tilegpu.mma_sync<opa, warps = 4>>, tensor<16x16xf16, #tilegpu.shared<pad = 8>>
func.func @smem_lhs_q_and_p(%q: !tile.view<?x?x?x16xf16>,
                            %k: !tile.view<?x?x?x16xf16>,
                            %v: !tile.view<?x?x?x16xf16>,
                            %o: !tile.view<?x?x?x16xf16>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant dense<0.0> : tensor<64x16xf32>
  %qt = tile.load %q[%c0, %c0, %c0, %c0] pad(0.0)
      : !tile.view<?x?x?x16xf16> -> tensor<64x16xf16>
  %kt = tile.load %k[%c0, %c0, %c0, %c0] pad(0.0) transpose
      : !tile.view<?x?x?x16xf16> -> tensor<16x16xf16>
  %vt = tile.load %v[%c0, %c0, %c0, %c0] pad(0.0)
      : !tile.view<?x?x?x16xf16> -> tensor<16x16xf16>
  %s = tile.mma %qt, %kt, %zero
      : tensor<64x16xf16>, tensor<16x16xf16> -> tensor<64x16xf32>
  %p = arith.truncf %s : tensor<64x16xf32> to tensor<64x16xf16>
  %acc = tile.mma %p, %vt, %zero
      : tensor<64x16xf16>, tensor<16x16xf16> -> tensor<64x16xf32>
  %out = arith.truncf %acc : tensor<64x16xf32> to tensor<64x16xf16>
  tile.store %out, %o[%c0, %c0, %c0, %c0]
      : tensor<64x16xf16>, !tile.view<?x?x?x16xf16>
  return
}

// -----

// A lhs loaded transposed would need ldmatrix.trans to be read from shared
// memory: it goes to registers (opa) with or without smem-lhs.

// SMEM-LABEL: func.func @smem_lhs_transposed_load
// SMEM: %[[Q:.*]] = tile.load {{.*}} transpose : <?x?x?x64xf16> -> tensor<64x16xf16, #tilegpu.mma_sync<opa, warps = 4>>
// SMEM-NOT: tile.convert_layout
// SMEM: tile.mma %[[Q]], %{{.*}}, %{{.*}} : tensor<64x16xf16, #tilegpu.mma_sync<opa, warps = 4>>, tensor<16x16xf16, #tilegpu.shared<pad = 8, transposed = true>> -> tensor<64x16xf32, #tilegpu.mma_sync<acc, warps = 4>>

// CHECK-LABEL: func.func @smem_lhs_transposed_load
// CHECK: %[[Q:.*]] = tile.load {{.*}} transpose : <?x?x?x64xf16> -> tensor<64x16xf16, #tilegpu.mma_sync<opa, warps = 4>>
// CHECK: tile.mma %[[Q]], %{{.*}}, %{{.*}} : tensor<64x16xf16, #tilegpu.mma_sync<opa, warps = 4>>,
func.func @smem_lhs_transposed_load(%q: !tile.view<?x?x?x64xf16>,
                                    %k: !tile.view<?x?x?x16xf16>,
                                    %o: !tile.view<?x?x?x16xf16>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant dense<0.0> : tensor<64x16xf32>
  %qt = tile.load %q[%c0, %c0, %c0, %c0] pad(0.0) transpose
      : !tile.view<?x?x?x64xf16> -> tensor<64x16xf16>
  %kt = tile.load %k[%c0, %c0, %c0, %c0] pad(0.0) transpose
      : !tile.view<?x?x?x16xf16> -> tensor<16x16xf16>
  %s = tile.mma %qt, %kt, %zero
      : tensor<64x16xf16>, tensor<16x16xf16> -> tensor<64x16xf32>
  %sh = arith.truncf %s : tensor<64x16xf32> to tensor<64x16xf16>
  tile.store %sh, %o[%c0, %c0, %c0, %c0]
      : tensor<64x16xf16>, !tile.view<?x?x?x16xf16>
  return
}

// The generated kernel with BLOCK_M = 128 and 8 warps, its Q in shared
// memory: Q·Kᵀ reads both operands from shared memory, P·V still takes P in
// registers.

// GEN8SMEM-LABEL: func.func @sdpa_fwd
// GEN8SMEM: %[[Q:.*]] = tile.load {{.*}} : <?x?x?x64xf16> -> tensor<128x64xf16, #tilegpu.shared<pad = 8>>
// GEN8SMEM: scf.for
// GEN8SMEM: %[[K:.*]] = tile.load {{.*}} transpose : <?x?x?x64xf16> -> tensor<64x64xf16, #tilegpu.shared<pad = 8, transposed = true>>
// GEN8SMEM: %[[V:.*]] = tile.load {{.*}} : <?x?x?x64xf16> -> tensor<64x64xf16, #tilegpu.shared<pad = 8>>
// GEN8SMEM-NOT: tile.convert_layout
// GEN8SMEM: tile.mma %[[Q]], %[[K]], {{.*}} : tensor<128x64xf16, #tilegpu.shared<pad = 8>>, tensor<64x64xf16, #tilegpu.shared<pad = 8, transposed = true>> -> tensor<128x64xf32, #tilegpu.mma_sync<acc, warps = 8>>
// GEN8SMEM: %[[P:.*]] = tile.convert_layout {{.*}} : tensor<128x64xf16, #tilegpu.mma_sync<acc, warps = 8>> -> tensor<128x64xf16, #tilegpu.mma_sync<opa, warps = 8>>
// GEN8SMEM: tile.mma %[[P]], %[[V]], {{.*}} : tensor<128x64xf16, #tilegpu.mma_sync<opa, warps = 8>>, tensor<64x64xf16, #tilegpu.shared<pad = 8>> -> tensor<128x64xf32, #tilegpu.mma_sync<acc, warps = 8>>
// GEN8SMEM-NOT: tile.convert_layout
// GEN8SMEM-NOT: warps = 4

// -----

//--- targets.mlir

//===----------------------------------------------------------------------===//
// The target's family chooses the layouts (these cases run without
// tilegpu-attach-target; the first RUN line gives them an mma_sync target)
//===----------------------------------------------------------------------===//

// TARGET: targets.mlir:[[@LINE+1]]:1: error: tilegpu-assign-layouts: the module has no #tilegpu.target; run tilegpu-attach-target first
func.func @negative_no_target(%o: !tile.view<?x?x?x16xf16>) {
  return
}

// -----

//--- rows.mlir

// (The first RUN line, on sm_80, refuses it earlier: mma.sync's A operand
// needs 16 columns.)
func.func @rows_of_16_bytes(%q: !tile.view<?x?x?x8xf16>, %k: !tile.view<?x?x?x8xf16>,
                            %o: !tile.view<?x?x?x64xf16>) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{columns of 8 (16 for an A operand)}}
  %q_i = tile.load %q[%c0, %c0, %c0, %c0] pad(0.0) : !tile.view<?x?x?x8xf16> -> tensor<64x8xf16>
  %kt = tile.load %k[%c0, %c0, %c0, %c0] pad(0.0) transpose : !tile.view<?x?x?x8xf16> -> tensor<8x64xf16>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  // ROWS32: rows.mlir:[[@LINE+1]]:8: error: tilegpu-assign-layouts: TMA and the asynchronous tensor cores read swizzled panels, and rows of 'tensor<64x8xf16>' are not a multiple of 32 bytes
  %s = tile.mma %q_i, %kt, %zero : tensor<64x8xf16>, tensor<8x64xf16> -> tensor<64x64xf32>
  %s16 = arith.truncf %s : tensor<64x64xf32> to tensor<64x64xf16>
  tile.store %s16, %o[%c0, %c0, %c0, %c0] : tensor<64x64xf16>, !tile.view<?x?x?x64xf16>
  return
}

// -----

//--- column-blocks.mlir

func.func @column_blocks(%a: !tile.view<?x?x?x128xf16>, %b: !tile.view<?x?x?x64xf16>,
                         %o: !tile.view<?x?x?x64xf32>) {
  %c0 = arith.constant 0 : index
  %x = tile.load %a[%c0, %c0, %c0, %c0] pad(0.0) : !tile.view<?x?x?x128xf16> -> tensor<64x128xf16>
  // (Blocks of 32 columns, 64 bytes, divide its 128-byte panels.)
  // COLUMNS: tile.load %arg1[{{.*}}] pad(0.000000e+00) : <?x?x?x64xf16> -> tensor<128x64xf16, #tilegpu.shared<swizzle = 128>>
  %y = tile.load %b[%c0, %c0, %c0, %c0] pad(0.0) : !tile.view<?x?x?x64xf16> -> tensor<128x64xf16>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  // COLUMNS: tile.mma {{.*}} -> tensor<64x64xf32, #tilegpu.wgmma<acc, warpgroups = 2, column_blocks = 2>>
  %p = tile.mma %x, %y, %zero : tensor<64x128xf16>, tensor<128x64xf16> -> tensor<64x64xf32>
  // COLUMNS: tile.store {{.*}} add : tensor<64x64xf32, #tilegpu.wgmma<acc, warpgroups = 2, column_blocks = 2>>
  tile.store %p, %o[%c0, %c0, %c0, %c0] add : tensor<64x64xf32>, !tile.view<?x?x?x64xf32>
  return
}

// An N-major rhs read in column blocks of 48 columns (D = 96 on two
// warpgroups: dQ = dS K) starts each block at a panel: its block staged in
// 32-byte panels (16 columns), not the 64-byte ones its 192-byte rows
// would take; the other reader of the same block (Sᵀ = K Qᵀ's lhs) reads
// those panels too.
func.func @column_blocks_of_48(%a: !tile.view<?x?x?x128xf16>, %b: !tile.view<?x?x?x96xf16>,
                               %q: !tile.view<?x?x?x96xf16>,
                               %o: !tile.view<?x?x?x96xf32>, %s: !tile.view<?x?x?x64xf32>) {
  %c0 = arith.constant 0 : index
  %x = tile.load %a[%c0, %c0, %c0, %c0] pad(0.0) : !tile.view<?x?x?x128xf16> -> tensor<64x128xf16>
  // COLUMNS: tile.load %arg1[{{.*}}] pad(0.000000e+00) : <?x?x?x96xf16> -> tensor<128x96xf16, #tilegpu.shared<swizzle = 32>>
  %y = tile.load %b[%c0, %c0, %c0, %c0] pad(0.0) : !tile.view<?x?x?x96xf16> -> tensor<128x96xf16>
  // COLUMNS: tile.load %arg2[{{.*}}] pad(0.000000e+00) : <?x?x?x96xf16> -> tensor<64x96xf16, #tilegpu.shared<swizzle = 64>>
  %qb = tile.load %q[%c0, %c0, %c0, %c0] pad(0.0) : !tile.view<?x?x?x96xf16> -> tensor<64x96xf16>
  %qt = tile.transpose %qb : tensor<64x96xf16> -> tensor<96x64xf16>
  %z0 = arith.constant dense<0.0> : tensor<128x64xf32>
  // COLUMNS: tile.mma {{.*}} : tensor<128x96xf16, #tilegpu.shared<swizzle = 32>>, tensor<96x64xf16, #tilegpu.shared<swizzle = 64, transposed = true>>
  %st = tile.mma %y, %qt, %z0 : tensor<128x96xf16>, tensor<96x64xf16> -> tensor<128x64xf32>
  tile.store %st, %s[%c0, %c0, %c0, %c0] : tensor<128x64xf32>, !tile.view<?x?x?x64xf32>
  %zero = arith.constant dense<0.0> : tensor<64x96xf32>
  // COLUMNS: tile.mma {{.*}} -> tensor<64x96xf32, #tilegpu.wgmma<acc, warpgroups = 2, column_blocks = 2>>
  %p = tile.mma %x, %y, %zero : tensor<64x128xf16>, tensor<128x96xf16> -> tensor<64x96xf32>
  tile.store %p, %o[%c0, %c0, %c0, %c0] add : tensor<64x96xf32>, !tile.view<?x?x?x96xf32>
  return
}

// The backward's step at D = 256 on two warpgroups (64 keys, 64 queries):
// every product's accumulator has the warpgroups side by side on its
// columns. The scores' column vector (a gathered log-sum-exp) is split
// the same way, and Pᵀ, the lhs of dV's product, which each warpgroup
// needs whole, moves into shared memory (a convert_layout to its panels).
func.func @column_blocks_lhs(%k: !tile.view<?x?x?x256xf16>, %q: !tile.view<?x?x?x256xf16>,
                             %lse: !tile.view<?x?x?xf32>, %o: !tile.view<?x?x?x256xf32>) {
  %c0 = arith.constant 0 : index
  %kb = tile.load %k[%c0, %c0, %c0, %c0] pad(0.0) : !tile.view<?x?x?x256xf16> -> tensor<64x256xf16>
  %qb = tile.load %q[%c0, %c0, %c0, %c0] pad(0.0) : !tile.view<?x?x?x256xf16> -> tensor<64x256xf16>
  %qt = tile.transpose %qb : tensor<64x256xf16> -> tensor<256x64xf16>
  %z = arith.constant dense<0.0> : tensor<64x64xf32>
  // COLUMNS: tile.mma {{.*}} -> tensor<64x64xf32, #tilegpu.wgmma<acc, warpgroups = 2, column_blocks = 2>>
  %st = tile.mma %kb, %qt, %z : tensor<64x256xf16>, tensor<256x64xf16> -> tensor<64x64xf32>
  // COLUMNS: tile.iota {{.*}} : tensor<64xi32, #tilegpu.wgmma<cols, warpgroups = 2, column_blocks = 2>>
  %rows = tile.iota offset(%c0) : tensor<64xi32>
  // COLUMNS: tile.gather {{.*}} -> tensor<64xf32, #tilegpu.wgmma<cols, warpgroups = 2, column_blocks = 2>>
  %l = tile.gather %lse[%c0, %c0, %rows] pad(0.0) : <?x?x?xf32>, index, index, tensor<64xi32> -> tensor<64xf32>
  // COLUMNS: tile.broadcast {{.*}} -> tensor<64x64xf32, #tilegpu.wgmma<acc, warpgroups = 2, column_blocks = 2>>
  %lb = tile.broadcast %l along 0 : tensor<64xf32> -> tensor<64x64xf32>
  %pt = arith.subf %st, %lb : tensor<64x64xf32>
  %p16 = arith.truncf %pt : tensor<64x64xf32> to tensor<64x64xf16>
  // COLUMNS: tile.convert_layout {{.*}} : tensor<64x64xf16, #tilegpu.wgmma<acc, warpgroups = 2, column_blocks = 2>> -> tensor<64x64xf16, #tilegpu.shared<swizzle = 128>>
  %zd = arith.constant dense<0.0> : tensor<64x256xf32>
  // COLUMNS: tile.mma {{.*}} : tensor<64x64xf16, #tilegpu.shared<swizzle = 128>>, tensor<64x256xf16, #tilegpu.shared<swizzle = 128>> -> tensor<64x256xf32, #tilegpu.wgmma<acc, warpgroups = 2, column_blocks = 2>>
  %dv = tile.mma %p16, %qb, %zd : tensor<64x64xf16>, tensor<64x256xf16> -> tensor<64x256xf32>
  tile.store %dv, %o[%c0, %c0, %c0, %c0] : tensor<64x256xf32>, !tile.view<?x?x?x256xf32>
  return
}
