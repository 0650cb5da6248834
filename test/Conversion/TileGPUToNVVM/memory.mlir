// RUN: tiled-attn-opt %s -split-input-file --tilegpu-attach-target="chip=sm_80" \
// RUN:   --tilegpu-assign-layouts="warps=1" --convert-tile-to-tilegpu="staged-stores=0" \
// RUN:   --tilegpu-merge-barriers --tilegpu-resolve-async-waits \
// RUN:   --tilegpu-allocate-memory --convert-tilegpu-to-nvvm \
// RUN:   | FileCheck %s
// RUN: tiled-attn-opt %s -split-input-file --tilegpu-attach-target="chip=sm_80" \
// RUN:   --tilegpu-assign-layouts="warps=1" --convert-tile-to-tilegpu="staged-stores=1" \
// RUN:   --tilegpu-merge-barriers --tilegpu-resolve-async-waits \
// RUN:   --tilegpu-allocate-memory --convert-tilegpu-to-nvvm \
// RUN:   | FileCheck %s --check-prefix=STAGED
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="head-dim=64 variant=top_left" \
// RUN:   --tile-schedule --tilegpu-attach-target="chip=sm_80" --tilegpu-assign-layouts \
// RUN:   --convert-tile-to-tilegpu \
// RUN:   --tilegpu-merge-barriers --tilegpu-resolve-async-waits \
// RUN:   --tilegpu-allocate-memory --convert-tilegpu-to-nvvm \
// RUN:   | FileCheck %s --check-prefix=GEN
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="head-dim=64 variant=top_left" \
// RUN:   --tile-schedule="mask-split=1" --tilegpu-attach-target="chip=sm_80" \
// RUN:   --tilegpu-assign-layouts --convert-tile-to-tilegpu \
// RUN:   --tilegpu-merge-barriers --tilegpu-resolve-async-waits \
// RUN:   --tilegpu-allocate-memory --convert-tilegpu-to-nvvm \
// RUN:   | FileCheck %s --check-prefix=SPLIT
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="head-dim=64 variant=top_left" \
// RUN:   --tile-schedule="mask-split=1 stages=2" --tilegpu-attach-target="chip=sm_80" \
// RUN:   --tilegpu-assign-layouts --convert-tile-to-tilegpu \
// RUN:   --tilegpu-merge-barriers --tilegpu-resolve-async-waits \
// RUN:   --tilegpu-allocate-memory --convert-tilegpu-to-nvvm \
// RUN:   | FileCheck %s --check-prefix=CHAINED
// A bias block (block-loads, f32): 16-byte copies of 4 elements, the last
// of a row partial (its elements left, at most 4, zero-filling the rest);
// read into the accumulator's layout as column pairs, one vector load each.
// RUN: tiled-attn-opt %repo/kernels/functions/bias.mlir --tile-generate-sdpa="head-dim=64 variant=none+bias block-m=64 block-n=32" \
// RUN:   --tile-schedule="block-loads=1 stages=2 refill-after-use=1" --tilegpu-attach-target="chip=sm_80" \
// RUN:   --tilegpu-assign-layouts="warps=4" --convert-tile-to-tilegpu --tilegpu-merge-barriers \
// RUN:   --tilegpu-resolve-async-waits --tilegpu-allocate-memory --convert-tilegpu-to-nvvm \
// RUN:   | FileCheck %s --check-prefix=BLOCK
// BLOCK: %[[LEFT:.*]] = arith.subi %{{.*}}, %{{.*}} : index
// BLOCK: %[[MIN:.*]] = arith.minsi %[[LEFT]], %c4{{.*}} : index
// BLOCK: %[[N:.*]] = arith.maxsi %[[MIN]], %c0{{.*}} : index
// BLOCK: nvgpu.device_async_copy %{{.*}}, %{{.*}}, 4, %{{.*}} {bypassL1} : memref<?x?x?x?xf32, strided<[?, ?, ?, 1], offset: ?>> to memref<64x40xf32, #gpu.address_space<workgroup>>
// BLOCK: vector.load %{{.*}}[%{{.*}}, %{{.*}}] {alignment = 8 : i64} : memref<64x40xf32, #gpu.address_space<workgroup>>, vector<2xf32>

// tile.wait_prior_grids (the split merge's first op) is griddepcontrol.wait
// where the chip has grid dependency control (sm_90 on), before the first
// read of the partial results, and nothing on sm_80.
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-split-merge="head-dim-v=64" \
// RUN:   --tilegpu-attach-target="chip=sm_90a family=mma_sync" --tilegpu-assign-layouts="warps=1" \
// RUN:   --convert-tile-to-tilegpu --tilegpu-allocate-memory --convert-tilegpu-to-nvvm \
// RUN:   | FileCheck %s --check-prefix=GRID-WAIT
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-split-merge="head-dim-v=64" \
// RUN:   --tilegpu-attach-target="chip=sm_80" --tilegpu-assign-layouts="warps=1" \
// RUN:   --convert-tile-to-tilegpu --tilegpu-allocate-memory --convert-tilegpu-to-nvvm \
// RUN:   | FileCheck %s --check-prefix=NO-GRID-WAIT
// GRID-WAIT: gpu.func @split_merge(
// GRID-WAIT-NOT: memref.load
// GRID-WAIT: nvvm.griddepcontrol wait
// GRID-WAIT: memref.load
// NO-GRID-WAIT: gpu.func @split_merge(
// NO-GRID-WAIT-NOT: griddepcontrol

// A gather on registers (the merge's reads of lse_partial[b, chunk, rows]):
// the offset of the scalar indices once, from the view's metadata; then
// per register its row's part and its bounds check outside its branch,
// and in the branch only the load from the view's base as a flat memref.
// NO-GRID-WAIT: %[[BASE:.*]], %[[OFF:.*]], %[[SIZES:.*]]:3, %[[STRIDES:.*]]:3 = memref.extract_strided_metadata
// NO-GRID-WAIT: %[[FLAT:.*]] = memref.reinterpret_cast %[[BASE]] to offset: [0], sizes: [1099511627776], strides: [1] : memref<f32> to memref<?xf32, strided<[1]>>
// NO-GRID-WAIT: %[[B:.*]] = arith.muli %block_id_z, %[[STRIDES]]#0
// NO-GRID-WAIT: arith.addi %[[OFF]], %[[B]]
// NO-GRID-WAIT: arith.muli %{{.*}}, %[[STRIDES]]#1
// NO-GRID-WAIT-NOT: scf.if
// NO-GRID-WAIT: vector.extract
// NO-GRID-WAIT: %[[AT:.*]] = arith.index_cast
// NO-GRID-WAIT: %[[ROW:.*]] = arith.addi %{{.*}}, %[[AT]]
// NO-GRID-WAIT-NOT: memref.load
// NO-GRID-WAIT: scf.if %{{.*}} -> (f32) {
// NO-GRID-WAIT-NEXT: memref.load %[[FLAT]][%[[ROW]]] : memref<?xf32, strided<[1]>>

// Pages of 16 under key blocks of 64 (D = 64, 4 warps): each thread's four
// 16-byte copies of a block lie in rows 16 apart, one per page, so copy i
// reads the page of gather index i (read from the table at the top of the
// loop, before the block's products), four different pages.
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="head-dim=64 variant=none_seqused_paged page-size=16" \
// RUN:   --tile-schedule="stages=2 refill-after-use=1" --tilegpu-attach-target="chip=sm_80" \
// RUN:   --tilegpu-assign-layouts --convert-tile-to-tilegpu --tilegpu-merge-barriers \
// RUN:   --tilegpu-resolve-async-waits --tilegpu-allocate-memory --convert-tilegpu-to-nvvm \
// RUN:   | FileCheck %s --check-prefix=GATHER
// GATHER: scf.for
// GATHER: %[[P0:.*]] = memref.load %{{.*}}[%block_id_z, %{{.*}}] : memref<?x?xi32
// GATHER-NEXT: %[[E0:[0-9]+]] = arith.index_cast %[[P0]] : i32 to index
// GATHER: %[[P1:.*]] = memref.load %{{.*}}[%block_id_z, %{{.*}}] : memref<?x?xi32
// GATHER-NEXT: %[[E1:[0-9]+]] = arith.index_cast %[[P1]] : i32 to index
// GATHER: %[[P2:.*]] = memref.load %{{.*}}[%block_id_z, %{{.*}}] : memref<?x?xi32
// GATHER-NEXT: %[[E2:[0-9]+]] = arith.index_cast %[[P2]] : i32 to index
// GATHER: %[[P3:.*]] = memref.load %{{.*}}[%block_id_z, %{{.*}}] : memref<?x?xi32
// GATHER-NEXT: %[[E3:[0-9]+]] = arith.index_cast %[[P3]] : i32 to index
// GATHER: nvgpu.device_async_copy %[[K:[a-z_0-9]+]][%[[E0]], %[[H:[0-9]+]], %{{[0-9]+}}, %{{[0-9]+}}], %[[KB:[a-z_0-9]+]][
// GATHER: nvgpu.device_async_copy %[[K]][%[[E1]], %[[H]], %{{[0-9]+}}, %{{[0-9]+}}], %[[KB]][
// GATHER: nvgpu.device_async_copy %[[K]][%[[E2]], %[[H]], %{{[0-9]+}}, %{{[0-9]+}}], %[[KB]][
// GATHER: nvgpu.device_async_copy %[[K]][%[[E3]], %[[H]], %{{[0-9]+}}, %{{[0-9]+}}], %[[KB]][
// Pages of 8 (eight per block): a copy's 16 rows span two pages, so each
// thread picks its row's page (its group, r / 8) from the eight.
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="head-dim=64 variant=none_seqused_paged page-size=8" \
// RUN:   --tile-schedule="stages=2 refill-after-use=1" --tilegpu-attach-target="chip=sm_80" \
// RUN:   --tilegpu-assign-layouts --convert-tile-to-tilegpu --tilegpu-merge-barriers \
// RUN:   --tilegpu-resolve-async-waits --tilegpu-allocate-memory --convert-tilegpu-to-nvvm \
// RUN:   | FileCheck %s --check-prefix=GATHER-ROW
// GATHER-ROW: scf.for
// GATHER-ROW: %[[Q0:.*]] = memref.load %{{.*}}[%block_id_z, %{{.*}}] : memref<?x?xi32
// GATHER-ROW-NEXT: %[[P0:[0-9]+]] = arith.index_cast %[[Q0]] : i32 to index
// GATHER-ROW: %[[Q1:.*]] = memref.load %{{.*}}[%block_id_z, %{{.*}}] : memref<?x?xi32
// GATHER-ROW-NEXT: %[[P1:[0-9]+]] = arith.index_cast %[[Q1]] : i32 to index
// GATHER-ROW: %[[IS1:[0-9]+]] = arith.cmpi eq, %{{[0-9]+}}, %c1 : index
// GATHER-ROW-NEXT: %[[S1:[0-9]+]] = arith.select %[[IS1]], %[[P1]], %[[P0]] : index
// GATHER-ROW-COUNT-5: arith.select
// GATHER-ROW: %[[PAGE:[0-9]+]] = arith.select
// GATHER-ROW: nvgpu.device_async_copy %{{[a-z_0-9]+}}[%[[PAGE]],

// Loads, stores, block ids and dims. A load is a cooperative cp.async copy
// into dynamic shared memory (zero fill past the view's end), an A operand
// is then read with ldmatrix.x4. A store (staged-stores=0) writes each
// lane's pairs under the view's bounds; a staged store (the default) goes
// through shared memory and leaves in 16-byte row pieces. With one warp, a
// 16x16 f16 block is 32 copies of 16 bytes: one per thread.

// CHECK: module attributes {gpu.container_module, tilegpu.target = #tilegpu.target<chip = "sm_80", family = mma_sync>}
// CHECK: gpu.module @tiled_attn
// CHECK-LABEL: gpu.func @q_times_k_blocks(
// The views arrive as explicit parameters (the kernel ABI): a base pointer,
// three sizes and three strides each.
// CHECK-SAME: %[[QP:[^:]*]]: memref<f16> {tilegpu.param = #tilegpu.param<base, "arg0">}
// CHECK-SAME: %[[KP:[^:]*]]: memref<f16> {tilegpu.param = #tilegpu.param<base, "arg1">}
// CHECK-SAME: %[[OP:[^:]*]]: memref<f16> {tilegpu.param = #tilegpu.param<base, "arg2">}
// CHECK-SAME: kernel
// CHECK-SAME: known_block_size = array<i32: 32, 1, 1>
// Two 16 x (16 + 8) f16 buffers.
// CHECK-SAME: tilegpu.shared_bytes = 1536 : i64
// CHECK-SAME: tilegpu.warps = 1 : i64
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
// CHECK-DAG: %[[C768:.*]] = arith.constant 768 : index
// The views, rebuilt from their parameters.
// CHECK: %[[Q:.*]] = memref.reinterpret_cast %[[QP]] to offset: [%{{.*}}], sizes: [%{{.*}}, %{{.*}}, %{{.*}}, 16], strides: [%{{.*}}, %{{.*}}, %{{.*}}, 1] : memref<f16> to memref<?x?x?x16xf16, strided<[?, ?, ?, 1], offset: ?>>
// CHECK: %[[K:.*]] = memref.reinterpret_cast %[[KP]]
// CHECK: %[[O:.*]] = memref.reinterpret_cast %[[OP]]
// The buffers, first thing in the kernel: views of dynamic shared memory at
// the offsets tilegpu-allocate-memory gave them.
// CHECK: %[[SMEM:.*]] = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
// CHECK-NEXT: %[[QBUF:.*]] = memref.view %[[SMEM]][%[[C0]]][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<16x24xf16, #gpu.address_space<workgroup>>
// CHECK-NEXT: %[[SMEM2:.*]] = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
// CHECK-NEXT: %[[KBUF:.*]] = memref.view %[[SMEM2]][%[[C768]]][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<16x24xf16, #gpu.address_space<workgroup>>
// CHECK: %[[BX:.*]] = gpu.block_id x
// CHECK: %[[BY:.*]] = gpu.block_id y
// CHECK: %[[BZ:.*]] = gpu.block_id z
// CHECK: %[[SK:.*]] = memref.dim %[[K]], %{{.*}} : memref<?x?x?x16xf16, strided<[?, ?, ?, 1], offset: ?>>
// CHECK: %[[BLOCKS:.*]] = arith.ceildivui %[[SK]], %{{.*}} : index

// Q: copy, wait for the group, then ldmatrix.x4.
// CHECK: gpu.barrier
// CHECK: %[[SQ:.*]] = memref.dim %[[Q]], %{{.*}}
// CHECK: %[[IN_ROWS:.*]] = arith.cmpi slt, %{{.*}}, %[[SQ]] : index
// CHECK: %[[IN:.*]] = arith.andi %[[IN_ROWS]], %{{.*}} : i1
// Past the end: read 0 elements (zero fill) from row 0.
// CHECK: %[[NSRC:.*]] = arith.select %[[IN]], %[[C8]], %[[C0]] : index
// CHECK: %[[ROW:.*]] = arith.select %[[IN]], %{{.*}}, %[[C0]] : index
// CHECK: %[[COL:.*]] = arith.select %[[IN]], %{{.*}}, %[[C0]] : index
// CHECK: %[[CP:.*]] = nvgpu.device_async_copy %[[Q]][%[[BZ]], %[[BY]], %[[ROW]], %[[COL]]], %[[QBUF]][%{{.*}}, %{{.*}}], 8, %[[NSRC]] {bypassL1} : memref<?x?x?x16xf16, strided<[?, ?, ?, 1], offset: ?>> to memref<16x24xf16, #gpu.address_space<workgroup>>
// CHECK-NOT: nvgpu.device_async_copy
// CHECK: %[[G:.*]] = nvgpu.device_async_create_group %[[CP]]
// CHECK-NEXT: nvvm.cp.async.wait.group 0
// CHECK-NEXT: gpu.barrier
// CHECK: nvgpu.ldmatrix %[[QBUF]][%{{.*}}, %{{.*}}] {numTiles = 4 : i32, transpose = false} : memref<16x24xf16, #gpu.address_space<workgroup>> -> vector<4x2xf16>

// K, in the loop: its own buffer, a barrier before the copy overwrites it.
// CHECK: %[[ACC:.*]] = scf.for %[[J:.*]] = %[[C0]] to %[[BLOCKS]] {{.*}} -> (vector<8xf32>) {
// CHECK-NEXT: gpu.barrier
// CHECK: %[[KCP:.*]] = nvgpu.device_async_copy %[[K]][%[[BZ]], %[[BY]], %{{.*}}, %{{.*}}], %[[KBUF]]
// CHECK: nvgpu.device_async_create_group %[[KCP]]
// CHECK-NEXT: nvvm.cp.async.wait.group 0
// CHECK-NEXT: gpu.barrier
// CHECK: nvgpu.mma.sync
// CHECK: scf.yield %{{.*}} : vector<8xf32>

// The store: 4 pairs per lane, each under the bounds of the view.
// CHECK: %[[OUT:.*]] = arith.truncf %[[ACC]] : vector<8xf32> to vector<8xf16>
// CHECK: %[[SO:.*]] = memref.dim %[[O]], %{{.*}}
// CHECK: %[[IN_O:.*]] = arith.cmpi slt, %[[OROW:[^,]*]], %[[SO]] : index
// CHECK: %[[IN_COLS:.*]] = arith.cmpi sle, %{{.*}}, %{{.*}} : index
// CHECK: %[[IN_BOTH:.*]] = arith.andi %[[IN_O]], %[[IN_COLS]] : i1
// CHECK: %[[PAIR:.*]] = vector.shuffle %[[OUT]], %[[OUT]] [0, 1] : vector<8xf16>, vector<8xf16>
// CHECK: scf.if %[[IN_BOTH]] {
// CHECK-NEXT: vector.store %[[PAIR]], %[[O]][%[[BZ]], %[[BY]], %[[OROW]], %[[OCOL:.*]]] : memref<?x?x?x16xf16, strided<[?, ?, ?, 1], offset: ?>>, vector<2xf16>
// CHECK: vector.shuffle %[[OUT]], %[[OUT]] [2, 3]
// CHECK: scf.if
// CHECK-NEXT: vector.store
// CHECK: vector.shuffle %[[OUT]], %[[OUT]] [4, 5]
// CHECK: scf.if
// CHECK-NEXT: vector.store
// CHECK: vector.shuffle %[[OUT]], %[[OUT]] [6, 7]
// CHECK: scf.if
// CHECK-NEXT: vector.store
// CHECK-NOT: vector.store
// CHECK: gpu.return

// Staged: the buffer reuses Q's (offset 0; shared memory stays at two
// buffers). Every copy lands and every thread is done with the loads'
// buffers before the lanes write their pairs (4-byte aligned); then each
// warp copies its own rows out (a warp barrier between), here one 16-byte
// piece per lane, under the view's bounds.
// STAGED-LABEL: gpu.func @q_times_k_blocks(
// STAGED-SAME: %[[OP:[^:]*]]: memref<f16> {tilegpu.param = #tilegpu.param<base, "arg2">}
// STAGED-SAME: kernel
// STAGED-SAME: tilegpu.shared_bytes = 1536 : i64
// STAGED: %[[O:.*]] = memref.reinterpret_cast %[[OP]]
// STAGED: scf.yield
// STAGED: %[[OUT:.*]] = arith.truncf %{{.*}} : vector<8xf32> to vector<8xf16>
// STAGED: %[[BUF:.*]] = memref.view %{{.*}}[%[[C0:.*]]][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<16x24xf16, #gpu.address_space<workgroup>>
// STAGED-NEXT: nvvm.cp.async.wait.group 0
// STAGED-NEXT: gpu.barrier
// STAGED-COUNT-4: vector.store %{{.*}}, %[[BUF]][%{{.*}}, %{{.*}}] {alignment = 4 : i64} : memref<16x24xf16, #gpu.address_space<workgroup>>, vector<2xf16>
// STAGED-NEXT: nvvm.bar.warp.sync
// STAGED: %[[SO:.*]] = memref.dim %[[O]], %{{.*}}
// STAGED: %[[PIECE:.*]] = vector.load %[[BUF]][%[[R:.*]], %[[C:.*]]] {alignment = 16 : i64} : memref<16x24xf16, #gpu.address_space<workgroup>>, vector<8xf16>
// STAGED: %[[IN_ROWS:.*]] = arith.cmpi slt, %[[ROW:.*]], %[[SO]] : index
// STAGED: %[[IN:.*]] = arith.andi %[[IN_ROWS]], %{{.*}} : i1
// STAGED-NEXT: scf.if %[[IN]] {
// STAGED-NEXT: vector.store %[[PIECE]], %[[O]][%{{.*}}, %{{.*}}, %[[ROW]], %{{.*}}] {alignment = 16 : i64} : memref<?x?x?x16xf16, strided<[?, ?, ?, 1], offset: ?>>, vector<8xf16>
// STAGED-NEXT: }
// STAGED-NOT: vector.store
// STAGED-NOT: gpu.barrier
// STAGED: gpu.return
func.func @q_times_k_blocks(%q: !tile.view<?x?x?x16xf16>,
                            %k: !tile.view<?x?x?x16xf16>,
                            %o: !tile.view<?x?x?x16xf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %x = tile.block_id x
  %y = tile.block_id y
  %z = tile.block_id z
  %n = tile.dim %k[2] : !tile.view<?x?x?x16xf16>
  %blocks = arith.ceildivui %n, %c16 : index
  %zero = arith.constant dense<0.0> : tensor<16x16xf32>
  %qt = tile.load %q[%z, %y, %x, %c0] pad(0.0)
      : !tile.view<?x?x?x16xf16> -> tensor<16x16xf16>
  %acc = scf.for %j = %c0 to %blocks step %c1 iter_args(%a = %zero)
      -> (tensor<16x16xf32>) {
    %kt = tile.load %k[%z, %y, %j, %c0] pad(0.0) transpose
        : !tile.view<?x?x?x16xf16> -> tensor<16x16xf16>
    %s = tile.mma %qt, %kt, %a
        : tensor<16x16xf16>, tensor<16x16xf16> -> tensor<16x16xf32>
    scf.yield %s : tensor<16x16xf32>
  }
  %sh = arith.truncf %acc : tensor<16x16xf32> to tensor<16x16xf16>
  tile.store %sh, %o[%z, %y, %x, %c0]
      : tensor<16x16xf16>, !tile.view<?x?x?x16xf16>
  return
}

//===----------------------------------------------------------------------===//
// The generated kernel (4 warps, 64x64 blocks, D = 64)
//===----------------------------------------------------------------------===//

// Q, K and V buffers of 64 x (64 + 8) f16. K and V are copied together:
// K's group is waited for with V's still in flight (cp.async.wait.group 1), V's
// only before P·V.

// GEN-LABEL: gpu.func @sdpa_fwd(
// GEN-SAME: known_block_size = array<i32: 128, 1, 1>
// GEN-SAME: tilegpu.shared_bytes = 27648 : i64
// GEN-SAME: tilegpu.warps = 4 : i64
// GEN: %[[QBUF:.*]] = memref.view %{{.*}}[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<64x72xf16, #gpu.address_space<workgroup>>
// GEN: %[[KBUF:.*]] = memref.view %{{.*}}[%c9216][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<64x72xf16, #gpu.address_space<workgroup>>
// GEN: %[[VBUF:.*]] = memref.view %{{.*}}[%c18432][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<64x72xf16, #gpu.address_space<workgroup>>
// GEN-COUNT-4: nvgpu.device_async_copy %{{.*}}, %[[QBUF]][
// GEN: nvgpu.device_async_create_group
// GEN-NEXT: nvvm.cp.async.wait.group 0
// GEN: scf.for
// GEN-COUNT-4: nvgpu.device_async_copy %{{.*}}, %[[KBUF]][
// GEN: nvgpu.device_async_create_group
// GEN-COUNT-4: nvgpu.device_async_copy %{{.*}}, %[[VBUF]][
// GEN: nvgpu.device_async_create_group
// GEN-NOT: nvgpu.mma.sync
// GEN: nvvm.cp.async.wait.group 1
// GEN-NEXT: gpu.barrier
// GEN: nvgpu.mma.sync
// GEN: nvvm.cp.async.wait.group 0
// GEN-NEXT: gpu.barrier
// GEN: nvgpu.mma.sync
// GEN: scf.yield
// The staged store: 16 pairs per lane into shared memory, then four 16-byte
// pieces per lane (each warp's 16 rows x 8 pieces over its 32 lanes): row
// warp * 16 + (lane + 32 i) / 8.
// GEN: nvvm.cp.async.wait.group 0
// GEN-COUNT-16: vector.store %{{.*}} {alignment = 4 : i64} : memref<64x72xf16, #gpu.address_space<workgroup>>, vector<2xf16>
// GEN-NEXT: nvvm.bar.warp.sync
// GEN: %[[WROW:.*]] = arith.muli %{{.*}}, %c16 : index
// GEN: %[[LROW:.*]] = arith.divui %{{.*}}, %c8 : index
// GEN: arith.addi %[[WROW]], %[[LROW]] : index
// GEN-COUNT-4: vector.store %{{.*}} {alignment = 16 : i64} : memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>, vector<8xf16>
// GEN-NOT: vector.store

// The loops of a mask split run one after the other: their K and V loads
// reuse the same buffers, so shared memory stays at three buffers.

// SPLIT-LABEL: gpu.func @sdpa_fwd(
// SPLIT-SAME: tilegpu.shared_bytes = 27648 : i64
// SPLIT: %[[KBUF:.*]] = memref.view %{{.*}}[%c9216][]
// SPLIT: %[[VBUF:.*]] = memref.view %{{.*}}[%c18432][]
// The unmasked loop's K and V blocks lie inside their views (in_bounds): all
// 8 elements of each 16-byte copy are read, with no bounds check. The
// masked loop's copies read 8 or 0 elements.
// SPLIT: scf.for
// SPLIT-NOT: arith.select
// SPLIT: nvgpu.device_async_copy {{.*}}, %[[KBUF]][{{.*}}], 8 {bypassL1}
// SPLIT-NOT: arith.select
// SPLIT: nvgpu.device_async_copy {{.*}}, %[[VBUF]][{{.*}}], 8 {bypassL1}
// SPLIT: scf.yield
// SPLIT: scf.for
// SPLIT: arith.select
// SPLIT: nvgpu.device_async_copy {{.*}}, %[[KBUF]][{{.*}}], 8, %{{.*}} {bypassL1}
// SPLIT: nvgpu.device_async_copy {{.*}}, %[[VBUF]][{{.*}}], 8, %{{.*}} {bypassL1}
// SPLIT: scf.yield

// -----

// A tile that lives in shared memory (K, an mma operand) is read again after
// the first store: that store's buffer must not overlap K's (offset 768).
// Q is in registers since its ldmatrix, so its buffer is free: both staging
// buffers reuse offset 0, and shared memory stays at 1536 bytes. A barrier
// follows the first store's reads (K's reader comes next); the last store
// needs none before the return.

// STAGED-LABEL: gpu.func @shared_tile_read_after_store(
// STAGED-SAME: tilegpu.shared_bytes = 1536 : i64
// STAGED: %[[KBUF:.*]] = memref.view %{{.*}}[%c768][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<16x24xf16, #gpu.address_space<workgroup>>
// STAGED: nvgpu.ldmatrix %[[KBUF]]
// STAGED: nvgpu.mma.sync
// STAGED: %[[FIRST:.*]] = memref.view %{{.*}}[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<16x24xf16, #gpu.address_space<workgroup>>
// STAGED-NEXT: nvvm.cp.async.wait.group 0
// STAGED-NEXT: gpu.barrier
// STAGED: vector.load %[[FIRST]]
// STAGED: scf.if
// STAGED-NEXT: vector.store %{{.*}} {alignment = 16 : i64}
// STAGED-NEXT: }
// STAGED-NEXT: gpu.barrier
// STAGED: nvgpu.ldmatrix %[[KBUF]]
// STAGED: nvgpu.mma.sync
// STAGED: %[[SECOND:.*]] = memref.view %{{.*}}[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<16x24xf16, #gpu.address_space<workgroup>>
// STAGED-NEXT: nvvm.cp.async.wait.group 0
// STAGED-NEXT: gpu.barrier
// STAGED: vector.load %[[SECOND]]
// STAGED: scf.if
// STAGED-NEXT: vector.store %{{.*}} {alignment = 16 : i64}
// STAGED-NEXT: }
// STAGED-NEXT: gpu.return
func.func @shared_tile_read_after_store(%q: !tile.view<?x?x?x16xf16>,
                                        %k: !tile.view<?x?x?x16xf16>,
                                        %o: !tile.view<?x?x?x16xf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
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
  %s2 = tile.mma %qt, %kt, %s
      : tensor<16x16xf16>, tensor<16x16xf16> -> tensor<16x16xf32>
  %sh2 = arith.truncf %s2 : tensor<16x16xf32> to tensor<16x16xf16>
  tile.store %sh2, %o[%c0, %c0, %c1, %c0]
      : tensor<16x16xf16>, !tile.view<?x?x?x16xf16>
  return
}

// Pipelined loops of a mask split (stages = 2) form one pipeline: the masked
// loop starts with the shared buffers the unmasked loop leaves in flight,
// with no copies in between.

// CHAINED-LABEL: gpu.func @sdpa_fwd(
// CHAINED: %[[FIRST:.*]]:5 = scf.for
// CHAINED: scf.yield
// CHAINED-NOT: nvgpu.device_async_copy
// CHAINED: scf.for %{{.*}} iter_args(%{{.*}} = %[[FIRST]]#0, %{{.*}} = %[[FIRST]]#1, %{{.*}} = %[[FIRST]]#2, %{{.*}} = %[[FIRST]]#3, %{{.*}} = %[[FIRST]]#4) -> (vector<2xf32>, vector<2xf32>, vector<32xf32>, memref<64x72xf16, #gpu.address_space<workgroup>>, memref<64x72xf16, #gpu.address_space<workgroup>>)

// -----

// A masked store of an accumulator: each element on its own (a 1-element
// vector store), where it lies in the view and its mask bit is set.
// CHECK-LABEL: gpu.func @masked_store(
// CHECK: %[[MASK:.*]] = arith.cmpi sle, %{{.*}}, %{{.*}} : vector<8xindex>
// CHECK: %[[IN0:.*]] = arith.andi
// CHECK-NEXT: %[[BIT0:.*]] = vector.extract %[[MASK]][0] : i1 from vector<8xi1>
// CHECK-NEXT: %[[W0:.*]] = arith.andi %[[IN0]], %[[BIT0]] : i1
// CHECK: scf.if %[[W0]] {
// CHECK-NEXT: vector.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : memref<?x?x?x16xf32, strided<[?, ?, ?, 1], offset: ?>>, vector<1xf32>
// CHECK: vector.extract %[[MASK]][1] : i1 from vector<8xi1>
// CHECK-COUNT-7: vector.store %{{.*}} vector<1xf32>
// CHECK-NOT: vector.store
// STAGED-LABEL: gpu.func @masked_store(
// STAGED-NOT: gpu.barrier
// STAGED: vector<1xf32>
func.func @masked_store(%x: f32, %o: !tile.view<?x?x?x16xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %s = tensor.splat %x : tensor<16x16xf32>
  %r = tile.reduce max %s along 1 : tensor<16x16xf32> -> tensor<16xf32>
  %m = tile.causal_mask %c0, %n : tensor<16x16xi1>
  tile.store %s, %o[%c0, %c0, %c0, %c0] mask(%m : tensor<16x16xi1>)
      : tensor<16x16xf32>, !tile.view<?x?x?x16xf32>
  return
}

// -----

// An in_bounds gather (the backward's unmasked steps read their rows'
// log-sum-exps and deltas so) is a plain load per register from the flat
// view: no bounds check, no branch.
// CHECK-LABEL: gpu.func @gather_in_bounds(
// CHECK: memref.reinterpret_cast %{{.*}} to offset: [0], sizes: [1099511627776], strides: [1]
// CHECK-NOT: scf.if
// CHECK-NOT: arith.cmpi
// CHECK: %[[I:.*]] = arith.index_cast %{{.*}} : i32 to index
// CHECK-NEXT: %[[AT:.*]] = arith.addi %{{.*}}, %[[I]] : index
// CHECK-NEXT: memref.load %{{.*}}[%[[AT]]] : memref<?xf32, strided<[1]>>
// CHECK-NOT: scf.if
// CHECK: vector.from_elements
func.func @gather_in_bounds(%v: !tile.view<?x?xf32>, %o: !tile.view<?x?x?x16xf32>,
                            %b: index, %q0: index) {
  %c0 = arith.constant 0 : index
  %i = tile.iota offset(%q0) : tensor<16xi32>
  %g = tile.gather %v[%b, %i] pad(0.0) in_bounds : !tile.view<?x?xf32>, index, tensor<16xi32> -> tensor<16xf32>
  %t = tile.broadcast %g along 0 : tensor<16xf32> -> tensor<16x16xf32>
  tile.store %t, %o[%c0, %c0, %c0, %c0] : tensor<16x16xf32>, !tile.view<?x?x?x16xf32>
  return
}

// A transpose of a loaded block is a view of its buffer: K is copied once,
// and Kᵀ (the first product's rhs) and K (the second's) are read from the
// same shared memory, with and without ldmatrix's .trans.

// CHECK-LABEL: gpu.func @transposed_view
// CHECK: %[[KV:.*]] = memref.view %{{.*}}[%c768{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<16x24xf16, #gpu.address_space<workgroup>>
// CHECK: nvgpu.device_async_copy
// CHECK: nvgpu.device_async_copy {{.*}}, %[[KV]][
// CHECK-NOT: nvgpu.device_async_copy
// CHECK: nvgpu.ldmatrix %[[KV]][{{.*}}] {numTiles = 4 : i32, transpose = false}
// CHECK-NOT: nvgpu.device_async_copy
// CHECK: nvgpu.ldmatrix %[[KV]][{{.*}}] {numTiles = 4 : i32, transpose = true}
func.func @transposed_view(%q: !tile.view<?x?x?x16xf16>, %k: !tile.view<?x?x?x16xf16>,
                           %o: !tile.view<?x?x?x16xf32>) {
  %c0 = arith.constant 0 : index
  %qb = tile.load %q[%c0, %c0, %c0, %c0] pad(0.0) : !tile.view<?x?x?x16xf16> -> tensor<16x16xf16>
  %kb = tile.load %k[%c0, %c0, %c0, %c0] pad(0.0) : !tile.view<?x?x?x16xf16> -> tensor<16x16xf16>
  %kt = tile.transpose %kb : tensor<16x16xf16> -> tensor<16x16xf16>
  %z = arith.constant dense<0.0> : tensor<16x16xf32>
  %s = tile.mma %qb, %kt, %z : tensor<16x16xf16>, tensor<16x16xf16> -> tensor<16x16xf32>
  %p = tile.mma %qb, %kb, %s : tensor<16x16xf16>, tensor<16x16xf16> -> tensor<16x16xf32>
  tile.store %p, %o[%c0, %c0, %c0, %c0] : tensor<16x16xf32>, !tile.view<?x?x?x16xf32>
  return
}
