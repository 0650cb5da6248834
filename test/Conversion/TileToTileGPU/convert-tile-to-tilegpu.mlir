// RUN: tiled-attn-opt %s -split-input-file -verify-diagnostics --convert-tile-to-tilegpu \
// RUN:   | FileCheck %s
// RUN: tiled-attn-opt %s -split-input-file -verify-diagnostics \
// RUN:   --convert-tile-to-tilegpu="staged-stores=0" | FileCheck %s --check-prefix=NOSTAGE
// The backward pass's transpose of dSᵀ: a buffer of its own, written from
// the accumulator between barriers (every thread done with the last
// iteration's reads of it; every write landed before dQ's mma reads it);
// dQ's part leaves by an adding store, unstaged.
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa-backward="head-dim=64 dtype=bf16" \
// RUN:   --tilegpu-attach-target="chip=sm_80" --tilegpu-assign-layouts="warps=4" --convert-tile-to-tilegpu \
// RUN:   | FileCheck %s --check-prefix=BWD
// BWD-LABEL: func.func @sdpa_bwd(
// BWD: tilegpu.local_store %{{.*}}, %[[T:.*]] : tensor<64x64xbf16, #tilegpu.mma_sync<acc, warps = 4>>, <64x64xbf16, #tilegpu.shared<pad = 8, transposed = true>>
// BWD-NEXT: gpu.barrier
// BWD-NEXT: %[[DQ:.*]] = tilegpu.mma %[[T]], %{{.*}} : !tilegpu.buffer<64x64xbf16, #tilegpu.shared<pad = 8, transposed = true>>
// BWD-NEXT: tile.store %[[DQ]], %{{.*}} add :
// A bias block staged in shared memory (block-loads): a cp.async copy into
// its buffer, which the loop carries, and a local_load into the
// accumulator's layout where it is read:
// With share-transposes, the three loops of the causal mask split write
// dSᵀ into one buffer (each loop's first barrier orders the previous
// loop's readers, as it does the previous iteration's), not one each:
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa-backward="head-dim=64 dtype=bf16 causal=top_left" \
// RUN:   --tilegpu-attach-target="chip=sm_80" --tilegpu-assign-layouts="warps=4" \
// RUN:   --convert-tile-to-tilegpu="share-transposes=1" | FileCheck %s --check-prefix=SHARE
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa-backward="head-dim=64 dtype=bf16 causal=top_left" \
// RUN:   --tilegpu-attach-target="chip=sm_80" --tilegpu-assign-layouts="warps=4" \
// RUN:   --convert-tile-to-tilegpu | FileCheck %s --check-prefix=NOSHARE
// SHARE-LABEL: func.func @sdpa_bwd(
// SHARE: %[[DS:.*]] = tilegpu.alloc : <64x64xbf16, #tilegpu.shared<pad = 8, transposed = true>>
// SHARE-NOT: tilegpu.alloc : <64x64xbf16, #tilegpu.shared<pad = 8, transposed = true>>
// SHARE-COUNT-3: tilegpu.local_store %{{.*}}, %[[DS]] :
// SHARE-LABEL: func.func @sdpa_bwd_postprocess(
// NOSHARE-LABEL: func.func @sdpa_bwd(
// NOSHARE-COUNT-3: tilegpu.alloc : <64x64xbf16, #tilegpu.shared<pad = 8, transposed = true>>
// RUN: tiled-attn-opt %repo/kernels/functions/bias.mlir --tile-generate-sdpa="head-dim=64 variant=none+bias block-m=64 block-n=32" \
// RUN:   --tile-schedule="block-loads=1 stages=2 refill-after-use=1" --tilegpu-attach-target="chip=sm_80" \
// RUN:   --tilegpu-assign-layouts="warps=4" --convert-tile-to-tilegpu | FileCheck %s --check-prefix=BLOCK
// BLOCK: %[[BUF:.*]] = tilegpu.alloc : <64x32xf32, #tilegpu.shared<pad = 8>>
// BLOCK: tilegpu.async_copy %arg5[{{.*}}] into %[[BUF]] : <?x?x?x?xf32>, <64x32xf32, #tilegpu.shared<pad = 8>>
// BLOCK: scf.for
// BLOCK: tilegpu.async_wait
// BLOCK: tilegpu.local_load %{{.*}} : <64x32xf32, #tilegpu.shared<pad = 8>> -> tensor<64x32xf32, #tilegpu.mma_sync<acc, warps = 4>>
// BLOCK: tilegpu.async_copy %arg5[{{.*}}] into %[[BUF]]
// The generated kernel, pipelined by tile-prefetch:
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="head-dim=64 block-m=64 block-n=64" \
// RUN:   --tile-schedule="stages=2" --tilegpu-attach-target="chip=sm_80" --tilegpu-assign-layouts \
// RUN:   --convert-tile-to-tilegpu | FileCheck %s --check-prefix=RING
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="head-dim=64 block-m=64 block-n=64" \
// RUN:   --tile-schedule="stages=2 refill-after-use=1" --tilegpu-attach-target="chip=sm_80" \
// RUN:   --tilegpu-assign-layouts --convert-tile-to-tilegpu | FileCheck %s --check-prefix=AFTER
// A paged cache's blocks, read through its block table, in a cp.async ring
// of two slots: refused (a block's slot is its block index's parity), and
// taken with refills after use (one slot).
// RUN: echo 'module {}' | not tiled-attn-opt --tile-generate-sdpa="head-dim=64 block-m=64 block-n=64 variant=none_seqused_paged" \
// RUN:   --tile-schedule="stages=2" --tilegpu-attach-target="chip=sm_80" --tilegpu-assign-layouts \
// RUN:   --convert-tile-to-tilegpu 2>&1 | FileCheck %s --check-prefix=PAGED-RING
// PAGED-RING: error: convert-tile-to-tilegpu: a cp.async ring of 2 slots picks each block's slot by its block index, which here is not the loop's induction variable plus a constant (a block read through a table); refill after use (one slot) or load with TMA
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="head-dim=64 block-m=64 block-n=64 variant=none_seqused_paged" \
// RUN:   --tile-schedule="stages=2 refill-after-use=1" --tilegpu-attach-target="chip=sm_80" \
// RUN:   --tilegpu-assign-layouts --convert-tile-to-tilegpu | FileCheck %s --check-prefix=PAGED-AFTER
// PAGED-AFTER: tilegpu.alloc : <64x64xf16, #tilegpu.shared<pad = 8, transposed = true>>
// PAGED-AFTER-NOT: tilegpu.slot
// Pages of 16 under blocks of 64: the copies keep the gather.
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="head-dim=64 block-m=64 block-n=64 page-size=16 variant=none_seqused_paged" \
// RUN:   --tile-schedule="stages=2 refill-after-use=1" --tilegpu-attach-target="chip=sm_80" \
// RUN:   --tilegpu-assign-layouts --convert-tile-to-tilegpu | FileCheck %s --check-prefix=GATHER
// GATHER: tilegpu.async_copy %arg1[%c0, %{{.*}}, %c0, %c0] gather(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) into %{{.*}} : <?x?x?x64xf16>, <64x64xf16, #tilegpu.shared<pad = 8, transposed = true>>
// GATHER: tilegpu.async_copy %arg2[%c0, %{{.*}}, %c0, %c0] gather(

// Shared memory made explicit. The kernels are written with their layouts,
// as tilegpu-assign-layouts leaves them (one warp). Redundant barriers stay
// (tilegpu-merge-barriers), waits have no count yet
// (tilegpu-resolve-async-waits), buffers no offset (tilegpu-allocate-memory).

#opa = #tilegpu.mma_sync<opa, warps = 1>
#acc = #tilegpu.mma_sync<acc, warps = 1>
#sh = #tilegpu.shared<pad = 8>
#kt = #tilegpu.shared<pad = 8, transposed = true>

// Every buffer is allocated first thing, in the order of the loads; Q, a
// register tile, is staged in an untransposed buffer of its own. Each copy
// comes after a barrier (nobody may still read its buffer); Q is waited for
// at once and read into registers, K and V just before their first
// readers, V's copy staying in flight at Q·Kᵀ.

// CHECK-LABEL: func.func @q_k_v(
// CHECK-SAME: %[[Q:[^:]*]]: !tile.view<?x?x?x16xf16>, %[[K:[^:]*]]: !tile.view<?x?x?x16xf16>, %[[V:[^:]*]]: !tile.view<?x?x?x16xf16>, %[[O:[^:]*]]: !tile.view<?x?x?x16xf16>)
// CHECK-NEXT: %[[QBUF:.*]] = tilegpu.alloc : <16x16xf16, #tilegpu.shared<pad = 8>>
// CHECK-NEXT: %[[KBUF:.*]] = tilegpu.alloc : <16x16xf16, #tilegpu.shared<pad = 8, transposed = true>>
// CHECK-NEXT: %[[VBUF:.*]] = tilegpu.alloc : <16x16xf16, #tilegpu.shared<pad = 8>>
// CHECK-NOT: tilegpu.alloc
// CHECK: gpu.barrier
// CHECK-NEXT: %[[QCP:.*]] = tilegpu.async_copy %[[Q]][{{.*}}] into %[[QBUF]] :
// CHECK-NEXT: %[[QR:.*]] = tilegpu.async_wait %[[QCP]] : <16x16xf16, #tilegpu.shared<pad = 8>>
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: %[[QA:.*]] = tilegpu.local_load %[[QR]] : <16x16xf16, #tilegpu.shared<pad = 8>> -> tensor<16x16xf16, #tilegpu.mma_sync<opa, warps = 1>>
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: %[[KCP:.*]] = tilegpu.async_copy %[[K]][{{.*}}] into %[[KBUF]] :
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: %[[VCP:.*]] = tilegpu.async_copy %[[V]][{{.*}}] into %[[VBUF]] :
// CHECK-NEXT: %[[KR:.*]] = tilegpu.async_wait %[[KCP]] : <16x16xf16, #tilegpu.shared<pad = 8, transposed = true>>
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: %[[S:.*]] = tilegpu.mma %[[QA]], %[[KR]], %{{.*}} : tensor<16x16xf16, #tilegpu.mma_sync<opa, warps = 1>>, <16x16xf16, #tilegpu.shared<pad = 8, transposed = true>> -> tensor<16x16xf32, #tilegpu.mma_sync<acc, warps = 1>>
// CHECK: %[[P:.*]] = tile.convert_layout
// CHECK-NEXT: %[[VR:.*]] = tilegpu.async_wait %[[VCP]] : <16x16xf16, #tilegpu.shared<pad = 8>>
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: %[[OUT:.*]] = tilegpu.mma %[[P]], %[[VR]], %{{.*}} :
// CHECK-NEXT: %[[OH:.*]] = arith.truncf %[[OUT]]
// The store goes through a staging buffer once every copy has landed and
// every thread is done with the buffers it may overlap; nothing follows it.
// CHECK-NEXT: %[[STAGE:.*]] = tilegpu.alloc : <16x16xf16, #tilegpu.shared<pad = 8>>
// CHECK-NEXT: tilegpu.async_wait_all
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: tilegpu.staged_store %[[OH]], %[[O]][{{.*}}] through %[[STAGE]] : tensor<16x16xf16, #tilegpu.mma_sync<acc, warps = 1>>, <?x?x?x16xf16>, <16x16xf16, #tilegpu.shared<pad = 8>>
// CHECK-NEXT: return

// staged-stores=0 keeps the store as it is: no staging buffer, no wait.
// NOSTAGE-LABEL: func.func @q_k_v(
// NOSTAGE-COUNT-3: tilegpu.alloc
// NOSTAGE-NOT: tilegpu.alloc
// NOSTAGE-NOT: tilegpu.async_wait_all
// NOSTAGE-NOT: tilegpu.staged_store
// NOSTAGE: tile.store %{{.*}} : tensor<16x16xf16, #tilegpu.mma_sync<acc, warps = 1>>, <?x?x?x16xf16>
// NOSTAGE-NEXT: return
func.func @q_k_v(%q: !tile.view<?x?x?x16xf16>, %k: !tile.view<?x?x?x16xf16>,
                 %v: !tile.view<?x?x?x16xf16>, %o: !tile.view<?x?x?x16xf16>)
    attributes {tilegpu.warps = 1 : i64} {
  %c0 = arith.constant 0 : index
  %zero = arith.constant dense<0.0> : tensor<16x16xf32, #acc>
  %qt = tile.load %q[%c0, %c0, %c0, %c0] pad(0.0)
      : !tile.view<?x?x?x16xf16> -> tensor<16x16xf16, #opa>
  %kt = tile.load %k[%c0, %c0, %c0, %c0] pad(0.0) transpose
      : !tile.view<?x?x?x16xf16> -> tensor<16x16xf16, #kt>
  %vt = tile.load %v[%c0, %c0, %c0, %c0] pad(0.0)
      : !tile.view<?x?x?x16xf16> -> tensor<16x16xf16, #sh>
  %s = tile.mma %qt, %kt, %zero
      : tensor<16x16xf16, #opa>, tensor<16x16xf16, #kt> -> tensor<16x16xf32, #acc>
  %p = arith.truncf %s : tensor<16x16xf32, #acc> to tensor<16x16xf16, #acc>
  %pa = tile.convert_layout %p : tensor<16x16xf16, #acc> -> tensor<16x16xf16, #opa>
  %out = tile.mma %pa, %vt, %zero
      : tensor<16x16xf16, #opa>, tensor<16x16xf16, #sh> -> tensor<16x16xf32, #acc>
  %oh = arith.truncf %out : tensor<16x16xf32, #acc> to tensor<16x16xf16, #acc>
  tile.store %oh, %o[%c0, %c0, %c0, %c0]
      : tensor<16x16xf16, #acc>, !tile.view<?x?x?x16xf16>
  return
}

// -----

// A loop that carries the K block it reads and issues the refill before
// reading it holds two blocks at once: a ring of two buffers, block j in
// slot j mod 2. The loop carries the buffer with its copy in flight and
// waits for it before its reader; the refill stays in flight. Q stays in
// shared memory (smem-lhs): the mma reads its buffer, waited for before
// the loop, its first reader in that block.

#acc = #tilegpu.mma_sync<acc, warps = 1>
#sh = #tilegpu.shared<pad = 8>
#kt = #tilegpu.shared<pad = 8, transposed = true>

// CHECK-LABEL: func.func @ring_refill_before_use(
// CHECK-SAME: %[[Q:[^:]*]]: !tile.view<?x?x?x16xf16>, %[[K:[^:]*]]: !tile.view<?x?x?x16xf16>
// CHECK-NEXT: %[[QBUF:.*]] = tilegpu.alloc : <16x16xf16, #tilegpu.shared<pad = 8>>
// CHECK-NEXT: %[[KSLOTS:.*]] = tilegpu.alloc : <2x16x16xf16, #tilegpu.shared<pad = 8, transposed = true>>
// CHECK-NOT: tilegpu.alloc
// CHECK: gpu.barrier
// CHECK-NEXT: %[[QCP:.*]] = tilegpu.async_copy %[[Q]][{{.*}}] into %[[QBUF]] :
// CHECK: %[[S0:.*]] = arith.remui %{{.*}}, %{{.*}} : index
// CHECK-NEXT: %[[SLOT0:.*]] = tilegpu.slot %[[KSLOTS]][%[[S0]]] : <2x16x16xf16, #tilegpu.shared<pad = 8, transposed = true>> -> <16x16xf16, #tilegpu.shared<pad = 8, transposed = true>>
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: %[[K0:.*]] = tilegpu.async_copy %[[K]][{{.*}}] into %[[SLOT0]] :
// CHECK-NEXT: %[[QR:.*]] = tilegpu.async_wait %[[QCP]] :
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: scf.for %[[J:.*]] = %{{.*}} iter_args(%[[KJ:.*]] = %[[K0]], %[[ACC:.*]] = %{{.*}}) -> (!tilegpu.buffer<16x16xf16, #tilegpu.shared<pad = 8, transposed = true>>, tensor<16x16xf32, #tilegpu.mma_sync<acc, warps = 1>>)
// CHECK-NEXT: %[[J1:.*]] = arith.addi %[[J]], %{{.*}} : index
// CHECK: %[[S1:.*]] = arith.remui %[[J1]], %{{.*}} : index
// CHECK-NEXT: %[[SLOT1:.*]] = tilegpu.slot %[[KSLOTS]][%[[S1]]] :
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: %[[NEXT:.*]] = tilegpu.async_copy %[[K]][%{{.*}}, %{{.*}}, %[[J1]], %{{.*}}] into %[[SLOT1]] :
// CHECK-NEXT: %[[KR:.*]] = tilegpu.async_wait %[[KJ]] :
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: %[[S:.*]] = tilegpu.mma %[[QR]], %[[KR]], %[[ACC]] : !tilegpu.buffer<16x16xf16, #tilegpu.shared<pad = 8>>, <16x16xf16, #tilegpu.shared<pad = 8, transposed = true>> -> tensor<16x16xf32, #tilegpu.mma_sync<acc, warps = 1>>
// CHECK-NEXT: scf.yield %[[NEXT]], %[[S]] : !tilegpu.buffer<16x16xf16, #tilegpu.shared<pad = 8, transposed = true>>, tensor<16x16xf32, #tilegpu.mma_sync<acc, warps = 1>>
// Only 16-bit tiles are staged.
// CHECK: tile.store %{{.*}} : tensor<16x16xf32, #tilegpu.mma_sync<acc, warps = 1>>, <?x?x?x16xf32>
func.func @ring_refill_before_use(%q: !tile.view<?x?x?x16xf16>,
                                  %k: !tile.view<?x?x?x16xf16>,
                                  %o: !tile.view<?x?x?x16xf32>, %n: index)
    attributes {tilegpu.warps = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant dense<0.0> : tensor<16x16xf32, #acc>
  %qt = tile.load %q[%c0, %c0, %c0, %c0] pad(0.0)
      : !tile.view<?x?x?x16xf16> -> tensor<16x16xf16, #sh>
  %k0 = tile.load %k[%c0, %c0, %c0, %c0] pad(0.0) transpose
      : !tile.view<?x?x?x16xf16> -> tensor<16x16xf16, #kt>
  %r:2 = scf.for %j = %c0 to %n step %c1 iter_args(%kj = %k0, %acc = %zero)
      -> (tensor<16x16xf16, #kt>, tensor<16x16xf32, #acc>) {
    %j1 = arith.addi %j, %c1 : index
    %next = tile.load %k[%c0, %c0, %j1, %c0] pad(0.0) transpose
        : !tile.view<?x?x?x16xf16> -> tensor<16x16xf16, #kt>
    %s = tile.mma %qt, %kj, %acc
        : tensor<16x16xf16, #sh>, tensor<16x16xf16, #kt> -> tensor<16x16xf32, #acc>
    scf.yield %next, %s : tensor<16x16xf16, #kt>, tensor<16x16xf32, #acc>
  }
  tile.store %r#1, %o[%c0, %c0, %c0, %c0]
      : tensor<16x16xf32, #acc>, !tile.view<?x?x?x16xf32>
  return
}

// -----

// With the refill issued after the last read of the block it replaces
// (refill-after-use), one buffer is enough: no ring, no slot. The refill
// takes the buffer once every thread is past reading it.

#opa = #tilegpu.mma_sync<opa, warps = 1>
#acc = #tilegpu.mma_sync<acc, warps = 1>
#kt = #tilegpu.shared<pad = 8, transposed = true>

// CHECK-LABEL: func.func @one_buffer_refill_after_use(
// CHECK-SAME: %[[Q:[^:]*]]: !tile.view<?x?x?x16xf16>, %[[K:[^:]*]]: !tile.view<?x?x?x16xf16>
// CHECK-NEXT: tilegpu.alloc : <16x16xf16, #tilegpu.shared<pad = 8>>
// CHECK-NEXT: %[[KBUF:.*]] = tilegpu.alloc : <16x16xf16, #tilegpu.shared<pad = 8, transposed = true>>
// CHECK-NOT: tilegpu.slot
// CHECK: tilegpu.local_load
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: %[[K0:.*]] = tilegpu.async_copy %[[K]][{{.*}}] into %[[KBUF]] :
// CHECK-NEXT: scf.for %[[J:.*]] = %{{.*}} iter_args(%[[KJ:.*]] = %[[K0]], %[[ACC:.*]] = %{{.*}}) -> (!tilegpu.buffer<16x16xf16, #tilegpu.shared<pad = 8, transposed = true>>, tensor<16x16xf32, #tilegpu.mma_sync<acc, warps = 1>>)
// CHECK-NEXT: %[[KR:.*]] = tilegpu.async_wait %[[KJ]] :
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: %[[S:.*]] = tilegpu.mma %{{.*}}, %[[KR]], %[[ACC]] :
// CHECK-NEXT: %[[J1:.*]] = arith.addi %[[J]], %{{.*}} : index
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: %[[NEXT:.*]] = tilegpu.async_copy %[[K]][%{{.*}}, %{{.*}}, %[[J1]], %{{.*}}] into %[[KBUF]] :
// CHECK-NEXT: scf.yield %[[NEXT]], %[[S]]
func.func @one_buffer_refill_after_use(%q: !tile.view<?x?x?x16xf16>,
                                       %k: !tile.view<?x?x?x16xf16>,
                                       %o: !tile.view<?x?x?x16xf32>, %n: index)
    attributes {tilegpu.warps = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant dense<0.0> : tensor<16x16xf32, #acc>
  %qt = tile.load %q[%c0, %c0, %c0, %c0] pad(0.0)
      : !tile.view<?x?x?x16xf16> -> tensor<16x16xf16, #opa>
  %k0 = tile.load %k[%c0, %c0, %c0, %c0] pad(0.0) transpose
      : !tile.view<?x?x?x16xf16> -> tensor<16x16xf16, #kt>
  %r:2 = scf.for %j = %c0 to %n step %c1 iter_args(%kj = %k0, %acc = %zero)
      -> (tensor<16x16xf16, #kt>, tensor<16x16xf32, #acc>) {
    %s = tile.mma %qt, %kj, %acc
        : tensor<16x16xf16, #opa>, tensor<16x16xf16, #kt> -> tensor<16x16xf32, #acc>
    %j1 = arith.addi %j, %c1 : index
    %next = tile.load %k[%c0, %c0, %j1, %c0] pad(0.0) transpose
        : !tile.view<?x?x?x16xf16> -> tensor<16x16xf16, #kt>
    scf.yield %next, %s : tensor<16x16xf16, #kt>, tensor<16x16xf32, #acc>
  }
  tile.store %r#1, %o[%c0, %c0, %c0, %c0]
      : tensor<16x16xf32, #acc>, !tile.view<?x?x?x16xf32>
  return
}

// -----

// A staged store followed by more code: a barrier after it, so that no
// later user of the memory overwrites its buffer while a warp still reads
// it back.

#acc = #tilegpu.mma_sync<acc, warps = 1>

// CHECK-LABEL: func.func @two_stores(
// CHECK: %[[ST0:.*]] = tilegpu.alloc : <16x16xf16, #tilegpu.shared<pad = 8>>
// CHECK-NEXT: tilegpu.async_wait_all
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: tilegpu.staged_store %{{.*}} through %[[ST0]] :
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: %[[ST1:.*]] = tilegpu.alloc : <16x16xf16, #tilegpu.shared<pad = 8>>
// CHECK-NEXT: tilegpu.async_wait_all
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: tilegpu.staged_store %{{.*}} through %[[ST1]] :
// CHECK-NEXT: return
func.func @two_stores(%x: f16, %o: !tile.view<?x?x?x16xf16>)
    attributes {tilegpu.warps = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %t = tensor.splat %x : tensor<16x16xf16, #acc>
  tile.store %t, %o[%c0, %c0, %c0, %c0]
      : tensor<16x16xf16, #acc>, !tile.view<?x?x?x16xf16>
  tile.store %t, %o[%c0, %c0, %c1, %c0]
      : tensor<16x16xf16, #acc>, !tile.view<?x?x?x16xf16>
  return
}

//===----------------------------------------------------------------------===//
// Refused
//===----------------------------------------------------------------------===//

// -----

// ldmatrix reads A operands untransposed: a transposed load cannot give a
// register tile.

#opa = #tilegpu.mma_sync<opa, warps = 1>
func.func @negative_transposed_register_load(%q: !tile.view<?x?x?x16xf16>)
    attributes {tilegpu.warps = 1 : i64} {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{convert-tile-to-tilegpu: a load gives a shared tile or an untransposed A operand, not 'tensor<16x16xf16, #tilegpu.mma_sync<opa, warps = 1>>' transposed}}
  %qt = tile.load %q[%c0, %c0, %c0, %c0] pad(0.0) transpose
      : !tile.view<?x?x?x16xf16> -> tensor<16x16xf16, #opa>
  return
}

// -----

// cp.async zero-fills what lies outside the view: another padding value
// cannot be honoured.

#opa = #tilegpu.mma_sync<opa, warps = 1>
func.func @negative_nonzero_pad(%q: !tile.view<?x?x?x16xf16>)
    attributes {tilegpu.warps = 1 : i64} {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{convert-tile-to-tilegpu: loads pad with zero only (cp.async zero-fills), not -1.000000e+00}}
  %qt = tile.load %q[%c0, %c0, %c0, %c0] pad(-1.0)
      : !tile.view<?x?x?x16xf16> -> tensor<16x16xf16, #opa>
  return
}

// -----

// A register tile comes from memory as an A operand (ldmatrix) only.

#acc = #tilegpu.mma_sync<acc, warps = 1>
func.func @negative_accumulator_load(%q: !tile.view<?x?x?x16xf16>)
    attributes {tilegpu.warps = 1 : i64} {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{convert-tile-to-tilegpu: a load gives a shared tile or an untransposed A operand, not 'tensor<16x16xf16, #tilegpu.mma_sync<acc, warps = 1>>'}}
  %qt = tile.load %q[%c0, %c0, %c0, %c0] pad(0.0)
      : !tile.view<?x?x?x16xf16> -> tensor<16x16xf16, #acc>
  return
}

// -----

// A reduction to a scalar becomes tilegpu.cta_reduce: through one f32 per
// warp, allocated before the loop that runs it, where the warps hold
// different rows; with no buffer where every warp holds the same columns.

#rows = #tilegpu.mma_sync<rows, warps = 8>
#cols = #tilegpu.mma_sync<cols, warps = 8>
// CHECK-LABEL: func.func @scalar_reductions
// CHECK-COUNT-2: arith.constant
// CHECK-NEXT: %[[SCRATCH:.*]] = tilegpu.alloc : <1x8xf32, #tilegpu.shared<>>
// CHECK-NEXT: scf.for
// CHECK-NEXT: tilegpu.cta_reduce max %{{.*}} through %[[SCRATCH]] : tensor<128xf32, #tilegpu.mma_sync<rows, warps = 8>>, !tilegpu.buffer<1x8xf32, #tilegpu.shared<>> -> f32
// CHECK-NOT: tilegpu.alloc
// CHECK: tilegpu.cta_reduce sum %{{.*}} : tensor<64xf32, #tilegpu.mma_sync<cols, warps = 8>> -> f32
func.func @scalar_reductions(%r: tensor<128xf32, #rows>, %c: tensor<64xf32, #cols>,
                             %o: !tile.view<?xf32>, %n: index)
    attributes {tilegpu.warps = 8 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    %m = tile.reduce max %r along 0 : tensor<128xf32, #rows> -> f32
    tile.write %m, %o[%i] : f32, !tile.view<?xf32>
  }
  %s = tile.reduce sum %c along 0 : tensor<64xf32, #cols> -> f32
  tile.write %s, %o[%c0] : f32, !tile.view<?xf32>
  return
}

// -----

// The GPU reduces f32 tiles to a scalar (its shuffles and scratch are f32).

#cols16 = #tilegpu.mma_sync<cols, warps = 1>
func.func @negative_f16_scalar_reduction(%c: tensor<16xf16, #cols16>)
    attributes {tilegpu.warps = 1 : i64} {
  // expected-error @+1 {{convert-tile-to-tilegpu: a reduction to a scalar reduces f32 tiles on the GPU, not 'tensor<16xf16, #tilegpu.mma_sync<cols, warps = 1>>'}}
  %s = tile.reduce max %c along 0 : tensor<16xf16, #cols16> -> f16
  return
}

// -----

// tilegpu-assign-layouts not run.

func.func @negative_no_layout(%q: !tile.view<?x?x?x16xf16>) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{convert-tile-to-tilegpu: a load gives a shared tile or an untransposed A operand, not 'tensor<16x16xf16>'}}
  %qt = tile.load %q[%c0, %c0, %c0, %c0] pad(0.0)
      : !tile.view<?x?x?x16xf16> -> tensor<16x16xf16>
  return
}

// -----

#opa = #tilegpu.mma_sync<opa, warps = 1>
#acc = #tilegpu.mma_sync<acc, warps = 1>
func.func @negative_rhs_in_registers(%x: f16) attributes {tilegpu.warps = 1 : i64} {
  %zero = arith.constant dense<0.0> : tensor<16x16xf32, #acc>
  %a = tensor.splat %x : tensor<16x16xf16, #opa>
  // expected-error @+1 {{convert-tile-to-tilegpu: expects the rhs of tile.mma in shared memory (run tilegpu-assign-layouts first)}}
  %s = tile.mma %a, %a, %zero
      : tensor<16x16xf16, #opa>, tensor<16x16xf16, #opa> -> tensor<16x16xf32, #acc>
  return
}

//===----------------------------------------------------------------------===//
// The generated kernel (4 warps, 64x64 blocks, D = 64), two stages
//===----------------------------------------------------------------------===//

// K and V each get a ring of two buffers (tile-prefetch issues the refill of
// block j+1 before reading block j); the prologue copies block 0 and the
// loop block j+1 into slot (j+1) mod 2, each after a barrier. The loop
// carries the buffers of block j with their copies in flight and waits for
// each just before the mma that reads it.

// RING-LABEL: func.func @sdpa_fwd
// RING-NEXT: %[[QBUF:.*]] = tilegpu.alloc : <64x64xf16, #tilegpu.shared<pad = 8>>
// RING-NEXT: %[[KRING:.*]] = tilegpu.alloc : <2x64x64xf16, #tilegpu.shared<pad = 8, transposed = true>>
// RING-NEXT: %[[VRING:.*]] = tilegpu.alloc : <2x64x64xf16, #tilegpu.shared<pad = 8>>
// RING: tilegpu.local_load
// RING: %[[K0:.*]] = tilegpu.async_copy {{.*}} into %{{.*}} : <?x?x?x64xf16>, <64x64xf16, #tilegpu.shared<pad = 8, transposed = true>>
// RING: %[[V0:.*]] = tilegpu.async_copy {{.*}} into %{{.*}} : <?x?x?x64xf16>, <64x64xf16, #tilegpu.shared<pad = 8>>
// RING-NOT: tilegpu.async_wait
// RING: scf.for %[[J:[^ ]*]] = {{.*}} iter_args({{.*}}, %[[KJ:[^ ]*]] = %[[K0]], %[[VJ:[^ ]*]] = %[[V0]]) -> ({{.*}}, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8, transposed = true>>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>)
// RING-NEXT: %[[J1:.*]] = arith.addi %[[J]], %{{.*}} : index
// RING: %[[KS:.*]] = arith.remui %[[J1]], %{{.*}} : index
// RING-NEXT: %[[KSLOT:.*]] = tilegpu.slot %[[KRING]][%[[KS]]]
// RING-NEXT: gpu.barrier
// RING-NEXT: %[[K1:.*]] = tilegpu.async_copy %{{.*}}[%{{.*}}, %{{.*}}, %[[J1]], %{{.*}}] into %[[KSLOT]]
// RING: %[[VS:.*]] = arith.remui %[[J1]], %{{.*}} : index
// RING-NEXT: %[[VSLOT:.*]] = tilegpu.slot %[[VRING]][%[[VS]]]
// RING-NEXT: gpu.barrier
// RING-NEXT: %[[V1:.*]] = tilegpu.async_copy %{{.*}}[%{{.*}}, %{{.*}}, %[[J1]], %{{.*}}] into %[[VSLOT]]
// RING-NEXT: %[[KR:.*]] = tilegpu.async_wait %[[KJ]] :
// RING-NEXT: gpu.barrier
// RING-NEXT: tilegpu.mma %{{.*}}, %[[KR]], %{{.*}} :
// RING: %[[VR:.*]] = tilegpu.async_wait %[[VJ]] :
// RING-NEXT: gpu.barrier
// RING-NEXT: tilegpu.mma %{{.*}}, %[[VR]], %{{.*}} :
// RING-NEXT: scf.yield {{.*}}, %[[K1]], %[[V1]] :

// With refill-after-use each stream has one buffer: the refill of K goes
// into K's buffer after Q·Kᵀ, V's after P·V, each after a barrier.

// AFTER-LABEL: func.func @sdpa_fwd
// AFTER-NEXT: tilegpu.alloc : <64x64xf16, #tilegpu.shared<pad = 8>>
// AFTER-NEXT: %[[KBUF:.*]] = tilegpu.alloc : <64x64xf16, #tilegpu.shared<pad = 8, transposed = true>>
// AFTER-NEXT: %[[VBUF:.*]] = tilegpu.alloc : <64x64xf16, #tilegpu.shared<pad = 8>>
// AFTER-NOT: tilegpu.slot
// AFTER: scf.for {{.*}} iter_args({{.*}}, %[[KJ:[^ ]*]] = %{{[^,]*}}, %[[VJ:[^ ]*]] = %{{[^)]*}})
// AFTER-NEXT: arith.addi
// AFTER-NEXT: %[[KR:.*]] = tilegpu.async_wait %[[KJ]] :
// AFTER-NEXT: gpu.barrier
// AFTER-NEXT: tilegpu.mma %{{.*}}, %[[KR]], %{{.*}} :
// AFTER-NEXT: gpu.barrier
// AFTER-NEXT: %[[K1:.*]] = tilegpu.async_copy {{.*}} into %[[KBUF]] :
// AFTER: %[[VR:.*]] = tilegpu.async_wait %[[VJ]] :
// AFTER-NEXT: gpu.barrier
// AFTER-NEXT: tilegpu.mma %{{.*}}, %[[VR]], %{{.*}} :
// AFTER-NEXT: gpu.barrier
// AFTER-NEXT: %[[V1:.*]] = tilegpu.async_copy {{.*}} into %[[VBUF]] :
// AFTER-NEXT: scf.yield {{.*}}, %[[K1]], %[[V1]] :
