// RUN: tiled-attn-opt %S/../TileToTileGPU/Inputs/column-blocks-lhs.mlir --tilegpu-attach-target="chip=sm_80" \
// RUN:   --tilegpu-assign-layouts="warps=8" --convert-tile-to-tilegpu --tilegpu-resolve-async-waits \
// RUN:   --tilegpu-allocate-memory --convert-tilegpu-to-nvvm | FileCheck %s --check-prefix=MMA-COLUMNS
// mma.sync with 8 warps side by side on the columns of 64 rows: warp w
// reads the rhs's columns of block w % 2 (32 of Sᵀ's 64), its lhs rows
// (16 (w / 2) ..) with ldmatrix from shared memory.
// MMA-COLUMNS-LABEL: gpu.func @column_blocks_lhs
// MMA-COLUMNS: %[[HALF:.*]] = arith.divui %{{.*}}, %c16 : index
// MMA-COLUMNS-NEXT: %[[NHALF:.*]] = arith.muli %[[HALF]], %c8 : index
// MMA-COLUMNS-NEXT: %[[BLOCK:.*]] = arith.remui %{{.*}}, %c2 : index
// MMA-COLUMNS-NEXT: %[[FIRST:.*]] = arith.muli %[[BLOCK]], %c32 : index
// MMA-COLUMNS-NEXT: arith.addi %[[NHALF]], %[[FIRST]] : index
// MMA-COLUMNS: nvgpu.ldmatrix
// MMA-COLUMNS: nvgpu.mma.sync

// RUN: tiled-attn-opt %s -split-input-file --tilegpu-attach-target="chip=sm_80" \
// RUN:   --tilegpu-assign-layouts="warps=1" --convert-tile-to-tilegpu \
// RUN:   --tilegpu-merge-barriers --tilegpu-resolve-async-waits \
// RUN:   --tilegpu-allocate-memory --convert-tilegpu-to-nvvm | FileCheck %s
// RUN: tiled-attn-opt %s -split-input-file --tilegpu-attach-target="chip=sm_80" \
// RUN:   --tilegpu-assign-layouts="warps=1 smem-lhs=1" --convert-tile-to-tilegpu \
// RUN:   --tilegpu-merge-barriers --tilegpu-resolve-async-waits \
// RUN:   --tilegpu-allocate-memory --convert-tilegpu-to-nvvm | FileCheck %s --check-prefix=SMEM

// With tma=1 (consumer Blackwell's recipe) K and V arrive by TMA into
// 128-byte swizzled panels, and ldmatrix reads them through the buffer's
// flat form, the 16-byte chunk index XORed with the row mod 8; Q is staged
// by cp.async into padded rows as before.
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="head-dim=64 block-m=64 block-n=64" \
// RUN:   --tile-schedule="exp2=1 stages=2" --tilegpu-attach-target="chip=sm_120a" \
// RUN:   --tilegpu-assign-layouts="tma=1" --convert-tile-to-tilegpu --tilegpu-resolve-async-waits \
// RUN:   --tilegpu-allocate-memory --convert-tilegpu-to-nvvm | FileCheck %s --check-prefix=TMA
// TMA: nvgpu.device_async_copy {{.*}} to memref<64x72xf16, #gpu.address_space<workgroup>>
// TMA: nvgpu.ldmatrix %{{.*}} {numTiles = 4 : i32, transpose = false} : memref<64x72xf16, #gpu.address_space<workgroup>>
// TMA: nvvm.cp.async.bulk.tensor.shared.cluster.global
// TMA: scf.for
// TMA: nvvm.mbarrier.try_wait
// TMA: %[[INPANEL:.*]] = arith.remui %{{.*}}, %c64 : index
// TMA-NEXT: %[[CHUNK:.*]] = arith.divui %[[INPANEL]], %c8 : index
// TMA-NEXT: %[[ROW8:.*]] = arith.remui %{{.*}}, %c8 : index
// TMA-NEXT: arith.xori %[[CHUNK]], %[[ROW8]] : index
// TMA: %[[FLAT:.*]] = memref.collapse_shape %{{.*}} {{\[\[}}0, 1]] : memref<64x64xf16, #gpu.address_space<workgroup>> into memref<4096xf16, #gpu.address_space<workgroup>>
// TMA: nvgpu.ldmatrix %[[FLAT]][%{{.*}}] {numTiles = 4 : i32, transpose = false} : memref<4096xf16, #gpu.address_space<workgroup>> -> vector<4x2xf16>
// TMA: nvgpu.mma.sync
// TMA: nvgpu.ldmatrix %{{.*}} {numTiles = 4 : i32, transpose = true} : memref<4096xf16, #gpu.address_space<workgroup>> -> vector<4x2xf16>

// tile.mma: the A operand is in registers, the B operand in shared memory.
// Each k-step of 16 reads the B fragments of a pair of n-tiles with one
// ldmatrix.x4 (no transpose for K, stored as rows of K for Kᵀ; transpose
// for V, stored as is) and issues one mma.sync m16n8k16 per n-tile and
// m-tile. P goes from the accumulator of S to the A operand in place.

// CHECK-LABEL: gpu.func @qk_pv_f16(
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
// CHECK-DAG: %[[C16:.*]] = arith.constant 16 : index
// CHECK-DAG: %[[C32:.*]] = arith.constant 32 : index
// CHECK-DAG: %[[C768:.*]] = arith.constant 768 : index
// CHECK-DAG: %[[C1536:.*]] = arith.constant 1536 : index
// The buffers are views of dynamic shared memory at their offsets, all at
// the top of the kernel, in the order of the loads.
// CHECK: %[[QBUF:.*]] = memref.view %{{.*}}[%[[C0]]][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<16x24xf16, #gpu.address_space<workgroup>>
// CHECK: %[[KBUF:.*]] = memref.view %{{.*}}[%[[C768]]][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<16x24xf16, #gpu.address_space<workgroup>>
// CHECK: %[[VBUF:.*]] = memref.view %{{.*}}[%[[C1536]]][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<16x24xf16, #gpu.address_space<workgroup>>
// Q: its copy, a wait for it, then ldmatrix.x4 into registers.
// CHECK: nvgpu.device_async_copy %{{.*}}, %[[QBUF]][
// CHECK: nvvm.cp.async.wait.group 0
// CHECK-NEXT: gpu.barrier
// CHECK: %[[QREGS:.*]] = nvgpu.ldmatrix %[[QBUF]]

// S = Q Kᵀ. The K buffer is [n][k]: lane l reads row l % 8 + 8 * (l / 16)
// (the second n-tile) at column 8 * ((l / 8) % 2) (the second half of k).
// CHECK: nvvm.cp.async.wait.group 1
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: %[[TID:.*]] = gpu.thread_id x
// CHECK-NEXT: %[[LANE:.*]] = arith.remui %[[TID]], %[[C32]] : index
// CHECK-NEXT: %[[L8:.*]] = arith.remui %[[LANE]], %[[C8]] : index
// CHECK-NEXT: %[[LD8:.*]] = arith.divui %[[LANE]], %[[C8]] : index
// CHECK-NEXT: %[[LD8M2:.*]] = arith.remui %[[LD8]], %[[C2]] : index
// CHECK-NEXT: %[[KHALF:.*]] = arith.muli %[[LD8M2]], %[[C8]] : index
// CHECK-NEXT: %[[LD16:.*]] = arith.divui %[[LANE]], %[[C16]] : index
// CHECK-NEXT: %[[NHALF:.*]] = arith.muli %[[LD16]], %[[C8]] : index
// CHECK-NEXT: %[[KROW:.*]] = arith.addi %[[L8]], %[[NHALF]] : index
// CHECK-NEXT: %[[KB:.*]] = nvgpu.ldmatrix %[[KBUF]][%[[KROW]], %[[KHALF]]] {numTiles = 4 : i32, transpose = false} : memref<16x24xf16, #gpu.address_space<workgroup>> -> vector<4x2xf16>
// CHECK-NOT: nvgpu.ldmatrix
// CHECK: nvgpu.mma.sync(%{{.*}}, %{{.*}}, %{{.*}}) {mmaShape = [16, 8, 16]} : (vector<4x2xf16>, vector<2x2xf16>, vector<2x2xf32>) -> vector<2x2xf32>
// CHECK-NOT: nvgpu.ldmatrix
// CHECK: nvgpu.mma.sync(%{{.*}}, %{{.*}}, %{{.*}}) {mmaShape = [16, 8, 16]} : (vector<4x2xf16>, vector<2x2xf16>, vector<2x2xf32>) -> vector<2x2xf32>
// P, truncated in the accumulator's registers, is the A operand as is.
// CHECK: %[[P:.*]] = arith.truncf %{{.*}} : vector<8xf32> to vector<8xf16>
// CHECK-NOT: tile.convert_layout

// O = P V. The V buffer is [k][n]: lane l reads row l % 8 + 8 * ((l / 8) % 2)
// at column 8 * (l / 16), transposing on the way.
// CHECK: nvvm.cp.async.wait.group 0
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: %[[TID2:.*]] = gpu.thread_id x
// CHECK-NEXT: %[[LANE2:.*]] = arith.remui %[[TID2]], %[[C32]] : index
// CHECK-NEXT: %[[L8_2:.*]] = arith.remui %[[LANE2]], %[[C8]] : index
// CHECK-NEXT: %[[LD8_2:.*]] = arith.divui %[[LANE2]], %[[C8]] : index
// CHECK-NEXT: %[[LD8M2_2:.*]] = arith.remui %[[LD8_2]], %[[C2]] : index
// CHECK-NEXT: %[[KHALF2:.*]] = arith.muli %[[LD8M2_2]], %[[C8]] : index
// CHECK-NEXT: %[[LD16_2:.*]] = arith.divui %[[LANE2]], %[[C16]] : index
// CHECK-NEXT: %[[NHALF2:.*]] = arith.muli %[[LD16_2]], %[[C8]] : index
// CHECK-NEXT: %[[VROW:.*]] = arith.addi %[[L8_2]], %[[KHALF2]] : index
// CHECK-NEXT: %[[VB:.*]] = nvgpu.ldmatrix %[[VBUF]][%[[VROW]], %[[NHALF2]]] {numTiles = 4 : i32, transpose = true} : memref<16x24xf16, #gpu.address_space<workgroup>> -> vector<4x2xf16>
// The A fragment of P: its first 8 registers.
// CHECK: vector.shuffle %[[P]], %[[P]] [0, 1]
// CHECK: nvgpu.mma.sync(%{{.*}}, %{{.*}}, %{{.*}}) {mmaShape = [16, 8, 16]}
// CHECK-NOT: nvgpu.ldmatrix
// CHECK: nvgpu.mma.sync(%{{.*}}, %{{.*}}, %{{.*}}) {mmaShape = [16, 8, 16]}
// CHECK-NOT: nvgpu.mma.sync
// CHECK-NOT: nvvm.mma.sync
// CHECK: gpu.return
func.func @qk_pv_f16(%q: !tile.view<?x?x?x16xf16>, %k: !tile.view<?x?x?x16xf16>,
                     %v: !tile.view<?x?x?x16xf16>,
                     %o: !tile.view<?x?x?x16xf16>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant dense<0.0> : tensor<16x16xf32>
  %qt = tile.load %q[%c0, %c0, %c0, %c0] pad(0.0)
      : !tile.view<?x?x?x16xf16> -> tensor<16x16xf16>
  %kt = tile.load %k[%c0, %c0, %c0, %c0] pad(0.0) transpose
      : !tile.view<?x?x?x16xf16> -> tensor<16x16xf16>
  %vt = tile.load %v[%c0, %c0, %c0, %c0] pad(0.0)
      : !tile.view<?x?x?x16xf16> -> tensor<16x16xf16>
  %s = tile.mma %qt, %kt, %zero
      : tensor<16x16xf16>, tensor<16x16xf16> -> tensor<16x16xf32>
  %p = arith.truncf %s : tensor<16x16xf32> to tensor<16x16xf16>
  %acc = tile.mma %p, %vt, %zero
      : tensor<16x16xf16>, tensor<16x16xf16> -> tensor<16x16xf32>
  %out = arith.truncf %acc : tensor<16x16xf32> to tensor<16x16xf16>
  tile.store %out, %o[%c0, %c0, %c0, %c0]
      : tensor<16x16xf16>, !tile.view<?x?x?x16xf16>
  return
}

// -----

// bf16: nvgpu.mma.sync has no bf16 lowering, so the operands are packed two
// per 32-bit register for nvvm.mma.sync.

// CHECK-LABEL: gpu.func @qk_pv_bf16(
// CHECK: nvgpu.ldmatrix %{{.*}} {numTiles = 4 : i32, transpose = false} : memref<16x24xbf16, #gpu.address_space<workgroup>> -> vector<4x2xbf16>
// CHECK: %[[KB:.*]] = nvgpu.ldmatrix %{{.*}} {numTiles = 4 : i32, transpose = false} : memref<16x24xbf16, #gpu.address_space<workgroup>> -> vector<4x2xbf16>
// CHECK: %[[A:.*]] = vector.bitcast %{{.*}} : vector<8xbf16> to vector<4xi32>
// CHECK-DAG: %[[A0:.*]] = vector.extract %[[A]][0] : i32 from vector<4xi32>
// CHECK-DAG: %[[A1:.*]] = vector.extract %[[A]][1] : i32 from vector<4xi32>
// CHECK-DAG: %[[A2:.*]] = vector.extract %[[A]][2] : i32 from vector<4xi32>
// CHECK-DAG: %[[A3:.*]] = vector.extract %[[A]][3] : i32 from vector<4xi32>
// CHECK-DAG: %[[B0W:.*]] = vector.bitcast %{{.*}} : vector<2xbf16> to vector<1xi32>
// CHECK-DAG: %[[B0:.*]] = vector.extract %[[B0W]][0] : i32 from vector<1xi32>
// CHECK: %[[D:.*]] = nvvm.mma.sync A[%[[A0]], %[[A1]], %[[A2]], %[[A3]]] B[%[[B0]], %{{.*}}] C[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}]
// CHECK-SAME: layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>
// CHECK-SAME: multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>
// CHECK-SAME: shape = #nvvm.shape<m = 16, n = 8, k = 16>
// CHECK-SAME: : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK: llvm.extractvalue %[[D]][0] : !llvm.struct<(f32, f32, f32, f32)>
// CHECK: nvvm.mma.sync
// CHECK: nvgpu.ldmatrix %{{.*}} {numTiles = 4 : i32, transpose = true} : memref<16x24xbf16, #gpu.address_space<workgroup>> -> vector<4x2xbf16>
// CHECK: nvvm.mma.sync
// CHECK-SAME: multiplicandAPtxType = #nvvm.mma_type<bf16>
// CHECK: nvvm.mma.sync
// CHECK-NOT: nvgpu.mma.sync
// CHECK: gpu.return
func.func @qk_pv_bf16(%q: !tile.view<?x?x?x16xbf16>,
                      %k: !tile.view<?x?x?x16xbf16>,
                      %v: !tile.view<?x?x?x16xbf16>,
                      %o: !tile.view<?x?x?x16xbf16>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant dense<0.0> : tensor<16x16xf32>
  %qt = tile.load %q[%c0, %c0, %c0, %c0] pad(0.0)
      : !tile.view<?x?x?x16xbf16> -> tensor<16x16xbf16>
  %kt = tile.load %k[%c0, %c0, %c0, %c0] pad(0.0) transpose
      : !tile.view<?x?x?x16xbf16> -> tensor<16x16xbf16>
  %vt = tile.load %v[%c0, %c0, %c0, %c0] pad(0.0)
      : !tile.view<?x?x?x16xbf16> -> tensor<16x16xbf16>
  %s = tile.mma %qt, %kt, %zero
      : tensor<16x16xbf16>, tensor<16x16xbf16> -> tensor<16x16xf32>
  %p = arith.truncf %s : tensor<16x16xf32> to tensor<16x16xbf16>
  %acc = tile.mma %p, %vt, %zero
      : tensor<16x16xbf16>, tensor<16x16xbf16> -> tensor<16x16xf32>
  %out = arith.truncf %acc : tensor<16x16xf32> to tensor<16x16xbf16>
  tile.store %out, %o[%c0, %c0, %c0, %c0]
      : tensor<16x16xbf16>, !tile.view<?x?x?x16xbf16>
  return
}

// -----

// Two m-tiles in one warp share each B fragment: one ldmatrix, then one
// mma.sync per (n-tile, m-tile).

// CHECK-LABEL: gpu.func @two_m_tiles(
// CHECK: %[[KBUF:.*]] = memref.view %{{.*}} to memref<16x24xf16, #gpu.address_space<workgroup>>
// CHECK: %[[A0:.*]] = vector.shuffle %[[QA:.*]], %[[QA]] [0, 1, 2, 3, 4, 5, 6, 7] : vector<16xf16>, vector<16xf16>
// CHECK: %[[A1:.*]] = vector.shuffle %[[QA]], %[[QA]] [8, 9, 10, 11, 12, 13, 14, 15] : vector<16xf16>, vector<16xf16>
// CHECK: %[[B:.*]] = nvgpu.ldmatrix %[[KBUF]]{{.*}} {numTiles = 4 : i32, transpose = false}
// CHECK: %[[B0:.*]] = vector.insert %{{.*}}, %{{.*}} [1] : vector<2xf16> into vector<2x2xf16>
// CHECK: %[[B1:.*]] = vector.insert %{{.*}}, %{{.*}} [1] : vector<2xf16> into vector<2x2xf16>
// CHECK: vector.shuffle %[[A0]], %[[A0]] [0, 1]
// CHECK: nvgpu.mma.sync(%{{.*}}, %[[B0]], %{{.*}})
// CHECK-NOT: nvgpu.ldmatrix
// CHECK: vector.shuffle %[[A1]], %[[A1]] [0, 1]
// CHECK: nvgpu.mma.sync(%{{.*}}, %[[B0]], %{{.*}})
// CHECK-NOT: nvgpu.ldmatrix
// CHECK: nvgpu.mma.sync(%{{.*}}, %[[B1]], %{{.*}})
// CHECK-NOT: nvgpu.ldmatrix
// CHECK: nvgpu.mma.sync(%{{.*}}, %[[B1]], %{{.*}})
// CHECK-NOT: nvgpu.mma.sync
// CHECK: gpu.return
func.func @two_m_tiles(%q: !tile.view<?x?x?x16xf16>,
                       %k: !tile.view<?x?x?x16xf16>,
                       %o: !tile.view<?x?x?x16xf16>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant dense<0.0> : tensor<32x16xf32>
  %qt = tile.load %q[%c0, %c0, %c0, %c0] pad(0.0)
      : !tile.view<?x?x?x16xf16> -> tensor<32x16xf16>
  %kt = tile.load %k[%c0, %c0, %c0, %c0] pad(0.0) transpose
      : !tile.view<?x?x?x16xf16> -> tensor<16x16xf16>
  %s = tile.mma %qt, %kt, %zero
      : tensor<32x16xf16>, tensor<16x16xf16> -> tensor<32x16xf32>
  %sh = arith.truncf %s : tensor<32x16xf32> to tensor<32x16xf16>
  tile.store %sh, %o[%c0, %c0, %c0, %c0]
      : tensor<32x16xf16>, !tile.view<?x?x?x16xf16>
  return
}

// -----

// Q in shared memory (tilegpu-assign-layouts{smem-lhs}), two m-tiles and two
// k-steps. Q's load is only its copy: no ldmatrix until the mma, which
// waits for Q's group (K's may stay in flight) and then K's. At each k-step
// the A fragment of each m-tile is read from Q's buffer with ldmatrix.x4
// (rows +16 for the second m-tile, columns +16 for the second k-step), then
// the B fragments; 2 + 1 ldmatrix per k-step, 6 in all.

// SMEM-LABEL: gpu.func @smem_lhs_two_k_steps(
// SMEM-SAME: tilegpu.shared_bytes = 3840
// SMEM-DAG: %[[C16:.*]] = arith.constant 16 : index
// SMEM-DAG: %[[C2560:.*]] = arith.constant 2560 : index
// SMEM: %[[QBUF:.*]] = memref.view %{{.*}}[%{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<32x40xf16, #gpu.address_space<workgroup>>
// SMEM: %[[KBUF:.*]] = memref.view %{{.*}}[%[[C2560]]][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<16x40xf16, #gpu.address_space<workgroup>>
// SMEM-NOT: nvgpu.ldmatrix
// SMEM-COUNT-4: nvgpu.device_async_copy %{{.*}}, %[[QBUF]][
// SMEM-NEXT: nvgpu.device_async_create_group
// SMEM-NOT: nvgpu.ldmatrix
// SMEM-COUNT-2: nvgpu.device_async_copy %{{.*}}, %[[KBUF]][
// SMEM-NEXT: nvgpu.device_async_create_group
// Q's group, with K's (issued after it) left in flight, then K's.
// SMEM-NEXT: nvvm.cp.async.wait.group 1
// SMEM-NEXT: gpu.barrier
// SMEM-NEXT: nvvm.cp.async.wait.group 0
// SMEM-NEXT: gpu.barrier
// k-step 0.
// SMEM-NOT: nvgpu.ldmatrix
// SMEM: %[[A00:.*]] = nvgpu.ldmatrix %[[QBUF]][%{{.*}}, %{{.*}}] {numTiles = 4 : i32, transpose = false} : memref<32x40xf16, #gpu.address_space<workgroup>> -> vector<4x2xf16>
// SMEM-NEXT: gpu.thread_id x
// SMEM-NOT: nvgpu.ldmatrix
// SMEM: %[[ROW1:.*]] = arith.addi %{{.*}}, %[[C16]] : index
// SMEM-NEXT: %[[A10:.*]] = nvgpu.ldmatrix %[[QBUF]][%[[ROW1]], %{{.*}}] {numTiles = 4 : i32, transpose = false} : memref<32x40xf16, #gpu.address_space<workgroup>> -> vector<4x2xf16>
// SMEM-NOT: nvgpu.ldmatrix
// SMEM: nvgpu.ldmatrix %[[KBUF]][%{{.*}}, %{{.*}}] {numTiles = 4 : i32, transpose = false} : memref<16x40xf16, #gpu.address_space<workgroup>> -> vector<4x2xf16>
// SMEM-NOT: nvgpu.ldmatrix
// SMEM: nvgpu.mma.sync(%[[A00]], %{{.*}}, %{{.*}}) {mmaShape = [16, 8, 16]}
// SMEM-NOT: nvgpu.ldmatrix
// SMEM: nvgpu.mma.sync(%[[A10]], %{{.*}}, %{{.*}}) {mmaShape = [16, 8, 16]}
// SMEM-NOT: nvgpu.ldmatrix
// SMEM: nvgpu.mma.sync(%[[A00]], %{{.*}}, %{{.*}}) {mmaShape = [16, 8, 16]}
// SMEM-NOT: nvgpu.ldmatrix
// SMEM: nvgpu.mma.sync(%[[A10]], %{{.*}}, %{{.*}}) {mmaShape = [16, 8, 16]}
// k-step 1: Q is read again, 16 columns on.
// SMEM-NOT: nvgpu.mma.sync
// SMEM: %[[COL01:.*]] = arith.addi %{{.*}}, %[[C16]] : index
// SMEM-NEXT: %[[A01:.*]] = nvgpu.ldmatrix %[[QBUF]][%{{.*}}, %[[COL01]]] {numTiles = 4 : i32, transpose = false}
// SMEM-NOT: nvgpu.ldmatrix
// SMEM: %[[ROW11:.*]] = arith.addi %{{.*}}, %[[C16]] : index
// SMEM-NEXT: %[[COL11:.*]] = arith.addi %{{.*}}, %[[C16]] : index
// SMEM-NEXT: %[[A11:.*]] = nvgpu.ldmatrix %[[QBUF]][%[[ROW11]], %[[COL11]]] {numTiles = 4 : i32, transpose = false}
// SMEM-NOT: nvgpu.ldmatrix
// SMEM: nvgpu.ldmatrix %[[KBUF]]
// SMEM-NOT: nvgpu.ldmatrix
// SMEM: nvgpu.mma.sync(%[[A01]], %{{.*}}, %{{.*}})
// SMEM-NOT: nvgpu.ldmatrix
// SMEM: nvgpu.mma.sync(%[[A11]], %{{.*}}, %{{.*}})
// SMEM-NOT: nvgpu.ldmatrix
// SMEM: nvgpu.mma.sync(%[[A01]], %{{.*}}, %{{.*}})
// SMEM-NOT: nvgpu.ldmatrix
// SMEM: nvgpu.mma.sync(%[[A11]], %{{.*}}, %{{.*}})
// SMEM-NOT: nvgpu.ldmatrix
// SMEM-NOT: nvgpu.mma.sync
// SMEM: gpu.return

// Without smem-lhs, the same kernel reads all of Q into registers right
// after its copy (one ldmatrix per m-tile and k-step), and the mma reads
// only K.

// CHECK-LABEL: gpu.func @smem_lhs_two_k_steps(
// CHECK: %[[QBUF:.*]] = memref.view %{{.*}} to memref<32x40xf16, #gpu.address_space<workgroup>>
// CHECK: %[[KBUF:.*]] = memref.view %{{.*}} to memref<16x40xf16, #gpu.address_space<workgroup>>
// CHECK: nvgpu.device_async_create_group
// CHECK-NEXT: nvvm.cp.async.wait.group 0
// CHECK-NEXT: gpu.barrier
// CHECK-COUNT-4: nvgpu.ldmatrix %[[QBUF]][
// CHECK-NOT: nvgpu.ldmatrix
// CHECK: nvgpu.device_async_copy %{{.*}}, %[[KBUF]][
// CHECK-NOT: nvgpu.ldmatrix %[[QBUF]][
// CHECK: nvgpu.ldmatrix %[[KBUF]][
// CHECK-NOT: nvgpu.ldmatrix %[[QBUF]][
// CHECK: nvgpu.ldmatrix %[[KBUF]][
// CHECK-NOT: nvgpu.ldmatrix
// CHECK: gpu.return
func.func @smem_lhs_two_k_steps(%q: !tile.view<?x?x?x32xf16>,
                                %k: !tile.view<?x?x?x32xf16>,
                                %o: !tile.view<?x?x?x16xf16>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant dense<0.0> : tensor<32x16xf32>
  %qt = tile.load %q[%c0, %c0, %c0, %c0] pad(0.0)
      : !tile.view<?x?x?x32xf16> -> tensor<32x32xf16>
  %kt = tile.load %k[%c0, %c0, %c0, %c0] pad(0.0) transpose
      : !tile.view<?x?x?x32xf16> -> tensor<32x16xf16>
  %s = tile.mma %qt, %kt, %zero
      : tensor<32x32xf16>, tensor<32x16xf16> -> tensor<32x16xf32>
  %sh = arith.truncf %s : tensor<32x16xf32> to tensor<32x16xf16>
  tile.store %sh, %o[%c0, %c0, %c0, %c0]
      : tensor<32x16xf16>, !tile.view<?x?x?x16xf16>
  return
}

// -----

// The backward pass's dQ = dS K: dSᵀ, rounded in the accumulator's
// registers, is written as the rows of a transposed buffer (the lanes'
// pairs, between barriers); the mma reads dS from it with ldmatrix.trans
// (lane l addresses stored row 8 * (l / 16) + l % 8, column
// 8 * ((l / 8) % 2)); its result is added to memory, element by element.

// CHECK-LABEL: gpu.func @transposed_lhs(
// CHECK: %[[DS:.*]] = arith.truncf %{{.*}} : vector<8xf32> to vector<8xf16>
// CHECK-NEXT: gpu.barrier
// CHECK: vector.store %{{.*}}, %[[TBUF:.*]][%{{.*}}, %{{.*}}] {alignment = 4 : i64} : memref<16x24xf16, #gpu.address_space<workgroup>>, vector<2xf16>
// CHECK-COUNT-3: vector.store %{{.*}}, %[[TBUF]]
// CHECK: gpu.barrier
// CHECK: nvgpu.ldmatrix %[[TBUF]][%{{.*}}, %{{.*}}] {numTiles = 4 : i32, transpose = true} : memref<16x24xf16, #gpu.address_space<workgroup>> -> vector<4x2xf16>
// CHECK: nvgpu.mma.sync
// CHECK-COUNT-8: memref.atomic_rmw addf
// CHECK-NOT: memref.atomic_rmw
// CHECK: gpu.return
func.func @transposed_lhs(%k: !tile.view<?x?x?x16xf16>,
                          %acc: !tile.view<?x?x?x16xf32>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant dense<0.0> : tensor<16x16xf32>
  %a = tile.load %k[%c0, %c0, %c0, %c0] pad(0.0)
      : !tile.view<?x?x?x16xf16> -> tensor<16x16xf16>
  %bt = tile.load %k[%c0, %c0, %c0, %c0] pad(0.0) transpose
      : !tile.view<?x?x?x16xf16> -> tensor<16x16xf16>
  %s = tile.mma %a, %bt, %zero
      : tensor<16x16xf16>, tensor<16x16xf16> -> tensor<16x16xf32>
  %s16 = arith.truncf %s : tensor<16x16xf32> to tensor<16x16xf16>
  %t = tile.transpose %s16 : tensor<16x16xf16> -> tensor<16x16xf16>
  %b = tile.load %k[%c0, %c0, %c0, %c0] pad(0.0)
      : !tile.view<?x?x?x16xf16> -> tensor<16x16xf16>
  %d = tile.mma %t, %b, %zero
      : tensor<16x16xf16>, tensor<16x16xf16> -> tensor<16x16xf32>
  tile.store %d, %acc[%c0, %c0, %c0, %c0] add
      : tensor<16x16xf32>, !tile.view<?x?x?x16xf32>
  return
}
