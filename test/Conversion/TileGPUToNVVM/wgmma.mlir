// RUN: tiled-attn-opt %S/../TileToTileGPU/Inputs/column-blocks-lhs.mlir --tilegpu-attach-target="chip=sm_90a" \
// RUN:   --tilegpu-assign-layouts="warps=8" --convert-tile-to-tilegpu --tilegpu-resolve-async-waits \
// RUN:   --tilegpu-allocate-memory --convert-tilegpu-to-nvvm | FileCheck %s --check-prefix=COLVEC
// Positions in a layout whose warpgroups split the columns: the query
// positions of a 64-column score block (the gathered log-sum-exps'
// indices) start at the warpgroup's block, 32 (w / 4 mod 2), plus 2t.
// COLVEC-LABEL: gpu.func @column_blocks_lhs
// COLVEC: vector.from_elements
// COLVEC-NEXT: %[[TID:.*]] = gpu.thread_id x
// COLVEC-NEXT: %[[LANE:.*]] = arith.remui %[[TID]], %c32 : index
// COLVEC-NEXT: %[[WARP:.*]] = arith.divui %[[TID]], %c32 : index
// COLVEC-NEXT: %[[T:.*]] = arith.remui %[[LANE]], %c4 : index
// COLVEC-NEXT: %[[GROUP:.*]] = arith.divui %[[WARP]], %c4 : index
// COLVEC-NEXT: %[[BLOCK:.*]] = arith.remui %[[GROUP]], %c2 : index
// COLVEC-NEXT: %[[FIRST:.*]] = arith.muli %[[BLOCK]], %c32 : index
// COLVEC-NEXT: %[[TWO_T:.*]] = arith.muli %[[T]], %c2 : index
// COLVEC-NEXT: arith.addi %[[FIRST]], %[[TWO_T]] : index

// uniform-warpgroup on warpgroups side by side on the columns (the wide
// backward's products): the row block and the block of columns, and so
// the rhs panel offset (32 columns of 128-byte rows), come from the
// shuffled index.
// RUN: tiled-attn-opt %S/../TileToTileGPU/Inputs/column-blocks-lhs.mlir --tilegpu-attach-target="chip=sm_90a" \
// RUN:   --tilegpu-assign-layouts="warps=8" --convert-tile-to-tilegpu --tilegpu-resolve-async-waits \
// RUN:   --tilegpu-allocate-memory --convert-tilegpu-to-nvvm="uniform-warpgroup=1" \
// RUN:   | FileCheck %s --check-prefix=UNIFORM-COLUMNS
// UNIFORM-COLUMNS-LABEL: gpu.func @column_blocks_lhs
// UNIFORM-COLUMNS: %[[WG:.*]] = arith.divui %thread_id_x{{.*}}, %c128 : index
// UNIFORM-COLUMNS-NEXT: %[[WG32:.*]] = arith.index_castui %[[WG]] : index to i32
// UNIFORM-COLUMNS-NEXT: %[[U:.*]] = nvvm.shfl.sync idx %{{.*}}, %[[WG32]], %c0_i32, %c31_i32 : i32 -> i32
// UNIFORM-COLUMNS-NEXT: %[[G:.*]] = arith.index_castui %[[U]] : i32 to index
// UNIFORM-COLUMNS-NEXT: arith.divui %[[G]], %c2 : index
// UNIFORM-COLUMNS-NEXT: %[[BLOCK:.*]] = arith.remui %[[G]], %c2 : index
// UNIFORM-COLUMNS-NEXT: %[[COL0:.*]] = arith.muli %[[BLOCK]], %c32 : index
// UNIFORM-COLUMNS-NEXT: arith.muli %[[COL0]], %c128 : index
// UNIFORM-COLUMNS: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 32, k = 16>

// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="head-dim=64 block-m=128 block-n=64" \
// RUN:   --tile-schedule="exp2=1 stages=2" --tilegpu-attach-target="chip=sm_90a" \
// RUN:   --tilegpu-assign-layouts="warps=8" --convert-tile-to-tilegpu --tilegpu-resolve-async-waits \
// RUN:   --tilegpu-allocate-memory \
// RUN:   --convert-tilegpu-to-nvvm | FileCheck %s

// The wgmma family's lowering, on a D=64 kernel of two consumer warpgroups
// (BLOCK_M 128) and 64-key blocks:
// - the tensor maps are pointer parameters, listed in tilegpu.params (which
//   survives the lowering to llvm.func; argument attributes do not);
// - thread 0 initializes the five mbarriers (Q's, K's two, V's two) and, for
//   every copy, arrives expecting the tile's bytes and issues the TMA copy
//   (one 128-byte panel: D = 64 f16);
// - every thread waits with mbarrier.try_wait in a loop;
// - S = Q.K^T: four m64n64k16 wgmma per k-step of 16 over D = 64, both
//   operands through descriptors (A K-major "row", B K-major "col"); the
//   first with scale-d = 0 (<zero>: S starts from zeros, and no register
//   holds them);
// - O += P.V: P from registers, the register-A wgmma as one inline-asm
//   instruction (NVVM lacks it), V N-major (transpose bit 1);
// - each product fences and commits its group; tilegpu.mma_wait becomes
//   wgmma.wait_group with its pending count (0 here: nothing is issued
//   between a product and its first reader), the P.V wait right before
//   the loop's yield.

// CHECK-LABEL: gpu.func @sdpa_fwd
// CHECK-SAME: %{{.*}}: !llvm.ptr {tilegpu.param = #tilegpu.param<tensor_map, "q" : !tilegpu.tensor_map<128x64xf16, swizzle = 128>>}
// CHECK-SAME: tilegpu.params = [#tilegpu.param<base, "q">,
// CHECK-COUNT-5: nvvm.mbarrier.init
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %{{.*}} : !llvm.ptr<3>, i32
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %{{.*}}, %{{.*}}, box[
// CHECK: scf.while
// CHECK: nvvm.mbarrier.try_wait
// CHECK-NOT: nvvm.shfl.sync idx
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 16>, D[<f32>, <zero>], A[<f16>, <one>, <row>], B[<f16>, <one>, <col>]
// CHECK-COUNT-3: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 16>, D[<f32>, <one>], A[<f16>, <one>, <row>], B[<f16>, <one>, <col>]
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NOT: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-4: llvm.inline_asm has_side_effects asm_dialect = att "{\0A.reg .pred p;\0Asetp.ne.b32 p, $37, 0;\0Awgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {{.*}}, p, 1, 1, 1;\0A}"
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NOT: llvm.inline_asm
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-NEXT: scf.yield

// uniform-warpgroup: each product computes its warpgroup from lane 0's
// value broadcast by shfl.sync idx, right where it is issued (ptxas then
// keeps the offsets and descriptors derived from it in uniform registers);
// without the option the warpgroup is the thread index over 128 and no
// shuffle is emitted before the first product.
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="head-dim=64 block-m=128 block-n=64" \
// RUN:   --tile-schedule="exp2=1 stages=2" --tilegpu-attach-target="chip=sm_90a" \
// RUN:   --tilegpu-assign-layouts="warps=8" --convert-tile-to-tilegpu --tilegpu-resolve-async-waits \
// RUN:   --tilegpu-allocate-memory \
// RUN:   --convert-tilegpu-to-nvvm="uniform-warpgroup=1" | FileCheck %s --check-prefix=UNIFORM
// UNIFORM-LABEL: gpu.func @sdpa_fwd
// UNIFORM: scf.while
// UNIFORM: nvvm.mbarrier.try_wait
// UNIFORM: %[[WG:.*]] = arith.divui %thread_id_x{{.*}}, %c128 : index
// UNIFORM-NEXT: %[[WG32:.*]] = arith.index_castui %[[WG]] : index to i32
// UNIFORM-NEXT: %[[U:.*]] = nvvm.shfl.sync idx %{{.*}}, %[[WG32]], %c0_i32, %c31_i32 : i32 -> i32
// UNIFORM-NEXT: arith.index_castui %[[U]] : i32 to index
// UNIFORM: nvvm.wgmma.fence.aligned
// UNIFORM-COUNT-4: nvvm.wgmma.mma_async

// With tile-defer-pv, block j's Q.K^T and block j-1's P.V are both in
// flight: the softmax waits for the first with one group still pending.
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="head-dim=64 block-m=128 block-n=64" \
// RUN:   --tile-schedule="exp2=1 stages=2 defer-pv=1" --tilegpu-attach-target="chip=sm_90a" \
// RUN:   --tilegpu-assign-layouts="warps=8" --convert-tile-to-tilegpu --tilegpu-resolve-async-waits \
// RUN:   --tilegpu-allocate-memory --convert-tilegpu-to-nvvm | FileCheck %s --check-prefix=DEFER
// DEFER: scf.for
// DEFER: nvvm.wgmma.mma_async
// DEFER: nvvm.wgmma.commit.group.sync.aligned
// DEFER-NOT: nvvm.wgmma.wait.group.sync.aligned
// DEFER: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16
// DEFER: nvvm.wgmma.commit.group.sync.aligned
// DEFER-NOT: wgmma.mma_async
// DEFER: nvvm.wgmma.wait.group.sync.aligned 1
// DEFER: nvvm.wgmma.wait.group.sync.aligned 0
// DEFER: scf.yield

// Without tilegpu-resolve-async-waits a wait has no count of groups to leave
// in flight: the lowering says so instead of guessing.
// RUN: echo 'module {}' | not tiled-attn-opt --tile-generate-sdpa="head-dim=64 block-m=128 block-n=64" \
// RUN:   --tile-schedule="exp2=1 stages=2" --tilegpu-attach-target="chip=sm_90a" \
// RUN:   --tilegpu-assign-layouts="warps=8" --convert-tile-to-tilegpu --tilegpu-allocate-memory \
// RUN:   --convert-tilegpu-to-nvvm 2>&1 | FileCheck %s --check-prefix=NOPENDING
// NOPENDING: error: GPU lowering: the wait has no pending count (run tilegpu-resolve-async-waits)

// D = 96 (192-byte rows, not a multiple of 128): Q, K and V are kept in
// 64-byte swizzled panels of 32 columns, three per tile, each one TMA box.
// The descriptors carry swizzle mode 2 (64B) in bits 62-63 and SBO = 8 rows
// of 64 bytes = 512 (32 << 32); K-major (Q, K) LBO 16 (1 << 16): the
// constant -9223371899415756800 = 0x8000002000010000; N-major V LBO = its
// panel of 64 rows x 64 bytes = 4096 (256 << 16): 0x8000002001000000. Q.K^T
// takes 6 k-steps of m64n64k16, P.V 4 of m64n96k16.
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="head-dim=96 block-m=128 block-n=64" \
// RUN:   --tile-schedule="exp2=1 stages=2" --tilegpu-attach-target="chip=sm_90a" \
// RUN:   --tilegpu-assign-layouts="warps=8" --convert-tile-to-tilegpu --tilegpu-resolve-async-waits \
// RUN:   --tilegpu-allocate-memory \
// RUN:   --convert-tilegpu-to-nvvm | FileCheck %s --check-prefix=D96
// D96-LABEL: gpu.func @sdpa_fwd
// D96-SAME: !tilegpu.tensor_map<128x32xf16, swizzle = 64>
// D96-SAME: !tilegpu.tensor_map<64x32xf16, swizzle = 64>
// The low word holds the start address >> 4 and LBO, the high word the
// rest: 0x80000020 << 32 for all three. A k-step's descriptor is the
// buffer's base descriptor plus its offset >> 4 in the low word (the second
// k-step of K: 32 bytes into the 64-byte panel row, + 2).
// D96-DAG: %[[HI:.*]] = arith.constant -9223371899415822336 : i64
// D96-DAG: %[[NMAJOR:.*]] = arith.constant 16777216 : i32
// D96-DAG: %[[KMAJOR:.*]] = arith.constant 65536 : i32
// D96: nvvm.wgmma.fence.aligned
// D96: %[[BBASE:.*]] = arith.ori %{{.*}}, %[[KMAJOR]] : i32
// D96: %[[BW:.*]] = arith.extui %[[BBASE]] : i32 to i64
// D96: %[[B:.*]] = arith.ori %[[BW]], %[[HI]] : i64
// D96: arith.ori %{{.*}}, %[[KMAJOR]] : i32
// D96: %[[A:.*]] = arith.ori %{{.*}}, %[[HI]] : i64
// D96-NEXT: nvvm.wgmma.mma_async %[[A]], %[[B]], {{.*}} <m = 64, n = 64, k = 16>
// D96: %[[B1BASE:.*]] = arith.ori %{{.*}}, %[[KMAJOR]] : i32
// D96-NEXT: %[[B1:.*]] = arith.addi %[[B1BASE]], %c2_i32 : i32
// D96-NEXT: arith.extui %[[B1]] : i32 to i64
// D96-COUNT-5: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 16>
// D96-NOT: nvvm.wgmma.mma_async
// D96: nvvm.wgmma.commit.group.sync.aligned
// D96: nvvm.wgmma.fence.aligned
// D96: arith.ori %{{.*}}, %[[NMAJOR]] : i32
// D96: arith.ori %{{.*}}, %[[HI]] : i64
// D96: wgmma.mma_async.sync.aligned.m64n96k16.f32.f16.f16

// The backward pass's main kernel on wgmma (one warpgroup, 64x64 blocks):
// Sᵀ = K_n Q_mᵀ reads Q_m's panels through a K-major descriptor (the
// transposed view, B "col"), dK += dSᵀ Q_m the same panels N-major (B
// "row", in the register-A instruction); dSᵀ is written into transposed
// swizzled panels (16 pairs a thread at their swizzled places), the writes
// fenced for the async proxy before the barrier, and dQ's product reads
// them as an M-major lhs (A "col") with K_n N-major; its part is added to
// dq_accum atomically.
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa-backward="head-dim=64 dtype=bf16" \
// RUN:   --tilegpu-attach-target="chip=sm_90a" --tilegpu-assign-layouts="warps=4" --convert-tile-to-tilegpu \
// RUN:   --tilegpu-resolve-async-waits --tilegpu-allocate-memory --convert-tilegpu-to-nvvm \
// RUN:   | FileCheck %s --check-prefix=BWD
// BWD-LABEL: gpu.func @sdpa_bwd(
// BWD-SAME: #tilegpu.param<tensor_map, "q" : !tilegpu.tensor_map<64x64xbf16, swizzle = 128>>
// BWD: nvvm.wgmma.mma_async {{.*}} A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// BWD: llvm.inline_asm has_side_effects {{.*}}wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
// BWD: gpu.barrier
// BWD-COUNT-16: vector.store %{{.*}}, %{{.*}}[%{{.*}}] {alignment = 4 : i64} : memref<4096xbf16, #gpu.address_space<workgroup>>, vector<2xbf16>
// BWD-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// BWD-NEXT: gpu.barrier
// BWD: nvvm.wgmma.mma_async {{.*}} A[<bf16>, <one>, <col>], B[<bf16>, <one>, <row>]
// BWD: memref.atomic_rmw addf
// BWD-LABEL: gpu.func @sdpa_bwd_postprocess(

// tma-reduce: dQ's part leaves through a swizzled f32 buffer (8-byte pairs
// at their swizzled places), fenced for the async proxy, and thread 0 adds
// it to dq_accum with one cp.reduce.async.bulk.tensor per 32-float panel
// and commits; before the next write, thread 0 waits until the previous
// reduction has read the buffer; after the loop, it waits for the last.
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa-backward="head-dim=64 dtype=bf16" \
// RUN:   --tilegpu-attach-target="chip=sm_90a" --tilegpu-assign-layouts="warps=4" --convert-tile-to-tilegpu="tma-reduce=1" \
// RUN:   --tilegpu-resolve-async-waits --tilegpu-allocate-memory --convert-tilegpu-to-nvvm \
// RUN:   | FileCheck %s --check-prefix=REDUCE
// REDUCE-LABEL: gpu.func @sdpa_bwd(
// REDUCE-SAME: #tilegpu.param<tensor_map, "dq_accum" : !tilegpu.tensor_map<64x32xf32, swizzle = 128>>
// REDUCE-NOT: memref.atomic_rmw
// REDUCE: nvvm.cp.async.bulk.wait_group 0 {read}
// REDUCE-NEXT: }
// REDUCE-NEXT: gpu.barrier
// REDUCE-COUNT-16: vector.store %{{.*}}, %{{.*}}[%{{.*}}] {alignment = 8 : i64} : memref<4096xf32, #gpu.address_space<workgroup>>, vector<2xf32>
// REDUCE-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// REDUCE-NEXT: gpu.barrier
// REDUCE: nvvm.cp.async.bulk.tensor.reduce %{{.*}}, %{{.*}}, box[%c0_i32, %{{.*}}, %{{.*}}, %{{.*}}] {redKind = #nvvm.tma_redux_kind<add>}
// REDUCE: nvvm.cp.async.bulk.tensor.reduce %{{.*}}, %{{.*}}, box[%c32_i32, %{{.*}}, %{{.*}}, %{{.*}}] {redKind = #nvvm.tma_redux_kind<add>}
// REDUCE-NEXT: nvvm.cp.async.bulk.commit.group
// REDUCE-NOT: memref.atomic_rmw
// REDUCE: nvvm.cp.async.bulk.wait_group 0{{$}}
// REDUCE-LABEL: gpu.func @sdpa_bwd_postprocess(
