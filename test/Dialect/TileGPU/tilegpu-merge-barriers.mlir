// RUN: tiled-attn-opt %s -split-input-file --tilegpu-merge-barriers \
// RUN:   | FileCheck %s --check-prefixes=CHECK,KEEP
// RUN: tiled-attn-opt %s -split-input-file --tilegpu-merge-barriers="hoist-waits=1" \
// RUN:   | FileCheck %s --check-prefixes=CHECK,HOIST

// FlashAttention-2's loop at D=128 (K prefetched one block ahead and
// refilled after Q·Kᵀ, V copied at the top of its iteration): two barriers
// per K/V block in the unmasked loop. The one that publishes K_j also
// frees V's buffer; the one that publishes V_j (its wait hoisted above it,
// right after Q·Kᵀ) also frees K's for K_j+1. The waits let no group stay
// in flight.
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="head-dim=128 block-m=128" \
// RUN:   --tile-schedule="mask-split=1 masked-first=1 stages=2 refill-after-use=1 prefetch-streams=1" \
// RUN:   --tilegpu-attach-target --tilegpu-assign-layouts --convert-tile-to-tilegpu \
// RUN:   --tilegpu-merge-barriers="hoist-waits=1" --tilegpu-resolve-async-waits \
// RUN:   | FileCheck %s --check-prefix=FA2
// Without hoist-waits each wait keeps its barrier pair: four per block.
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="head-dim=128 block-m=128" \
// RUN:   --tile-schedule="mask-split=1 masked-first=1 stages=2 refill-after-use=1 prefetch-streams=1" \
// RUN:   --tilegpu-attach-target --tilegpu-assign-layouts --convert-tile-to-tilegpu \
// RUN:   --tilegpu-merge-barriers --tilegpu-resolve-async-waits \
// RUN:   | FileCheck %s --check-prefix=FA2-KEEP

// FA2-LABEL: func.func @sdpa_fwd
// FA2: %[[MASKED:.*]]:4 = scf.for
// FA2: scf.yield
// FA2: tilegpu.async_wait_all
// FA2-NEXT: gpu.barrier
// FA2: scf.for {{.*}} iter_args(%{{.*}} = %[[MASKED]]#0,
// FA2-NOT: gpu.barrier
// FA2: %[[K:.*]] = tilegpu.async_wait %{{.*}} pending(0)
// FA2-NEXT: gpu.barrier
// FA2-NEXT: %[[V:.*]] = tilegpu.async_copy %arg2
// FA2-NEXT: tilegpu.mma %{{.*}}, %[[K]], %{{.*}}
// FA2-NEXT: %[[VR:.*]] = tilegpu.async_wait %[[V]] pending(0)
// FA2-NEXT: gpu.barrier
// FA2-NEXT: tilegpu.async_copy %arg1
// FA2-NOT: gpu.barrier
// FA2: tilegpu.mma %{{.*}}, %[[VR]], %{{.*}}
// FA2-NOT: gpu.barrier
// FA2: scf.yield

// FA2-KEEP-LABEL: func.func @sdpa_fwd
// FA2-KEEP: %[[MASKED:.*]]:4 = scf.for
// FA2-KEEP: scf.for {{.*}} iter_args(%{{.*}} = %[[MASKED]]#0,
// FA2-KEEP-COUNT-4: gpu.barrier
// FA2-KEEP-NOT: gpu.barrier
// FA2-KEEP: scf.yield

// Between the two barriers only copy issues, a slot and register math:
// nothing touched shared memory, the second barrier goes.

// CHECK-LABEL: func.func @copies_between
// CHECK: gpu.barrier
// CHECK-NEXT: tilegpu.slot
// CHECK-NEXT: tilegpu.async_copy
// CHECK-NEXT: arith.addi
// CHECK-NEXT: tilegpu.async_copy
// CHECK-NOT: gpu.barrier
// CHECK: return
func.func @copies_between(%k: !tile.view<?x?x?x64xf16>, %i: index) {
  %c0 = arith.constant 0 : index
  %ring = tilegpu.alloc : !tilegpu.buffer<2x64x64xf16, #tilegpu.shared<pad = 8>>
  %b = tilegpu.alloc : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  gpu.barrier
  %s = tilegpu.slot %ring[%i] : !tilegpu.buffer<2x64x64xf16, #tilegpu.shared<pad = 8>> -> !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %c = tilegpu.async_copy %k[%c0, %c0, %i, %c0] into %s : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %j = arith.addi %i, %i : index
  gpu.barrier
  %d = tilegpu.async_copy %k[%c0, %c0, %j, %c0] into %b : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  return
}

// -----

// A run of barriers with only copies between them keeps its first.

// CHECK-LABEL: func.func @three_in_a_row
// CHECK: gpu.barrier
// CHECK-NEXT: tilegpu.async_copy
// CHECK-NEXT: tilegpu.async_copy
// CHECK-NEXT: return
func.func @three_in_a_row(%k: !tile.view<?x?x?x64xf16>) {
  %c0 = arith.constant 0 : index
  %a = tilegpu.alloc : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %b = tilegpu.alloc : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  gpu.barrier
  %c = tilegpu.async_copy %k[%c0, %c0, %c0, %c0] into %a : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  gpu.barrier
  gpu.barrier
  %d = tilegpu.async_copy %k[%c0, %c0, %c0, %c0] into %b : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  gpu.barrier
  return
}

// -----

// A barrier that frees a buffer for its refill, then register work, then
// the wait and barrier that publish another stream's copy. By default the
// wait (it reads and writes shared memory) keeps both barriers; with
// hoist-waits it moves above the first, which now publishes the landed
// copy, and the second goes.

// CHECK-LABEL: func.func @refill_then_wait
// CHECK-SAME: (%[[K:.*]]: !tile.view<?x?x?x64xf16>, %[[X:.*]]: f32)
// CHECK: %[[A:.*]] = tilegpu.alloc
// CHECK: %[[B:.*]] = tilegpu.alloc
// CHECK: %[[VCOPY:.*]] = tilegpu.async_copy %[[K]]{{.*}} into %[[B]]
// KEEP-NEXT: gpu.barrier
// KEEP-NEXT: %[[REFILL:.*]] = tilegpu.async_copy %[[K]]{{.*}} into %[[A]]
// KEEP-NEXT: arith.mulf
// KEEP-NEXT: %[[V:.*]] = tilegpu.async_wait %[[VCOPY]]
// KEEP-NEXT: gpu.barrier
// HOIST-NEXT: %[[V:.*]] = tilegpu.async_wait %[[VCOPY]]
// HOIST-NEXT: gpu.barrier
// HOIST-NEXT: %[[REFILL:.*]] = tilegpu.async_copy %[[K]]{{.*}} into %[[A]]
// HOIST-NEXT: arith.mulf
// HOIST-NOT: gpu.barrier
// CHECK: tilegpu.local_load %[[V]]
func.func @refill_then_wait(%k: !tile.view<?x?x?x64xf16>, %x: f32) -> tensor<64x64xf16, #tilegpu.mma_sync<opa, warps = 4>> {
  %c0 = arith.constant 0 : index
  %a = tilegpu.alloc : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %b = tilegpu.alloc : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %vcopy = tilegpu.async_copy %k[%c0, %c0, %c0, %c0] into %b : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  gpu.barrier
  %refill = tilegpu.async_copy %k[%c0, %c0, %c0, %c0] into %a : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %y = arith.mulf %x, %x : f32
  %v = tilegpu.async_wait %vcopy : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  gpu.barrier
  %r = tilegpu.local_load %v : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>> -> tensor<64x64xf16, #tilegpu.mma_sync<opa, warps = 4>>
  return %r : tensor<64x64xf16, #tilegpu.mma_sync<opa, warps = 4>>
}

// -----

// Several waits move together, in their order, above the earlier barrier;
// so does a wait for a buffer that enters the function or loop.

// CHECK-LABEL: func.func @two_waits_hoisted
// CHECK-SAME: (%[[K:.*]]: !tile.view<?x?x?x64xf16>, %[[IN:.*]]: !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>)
// CHECK: %[[C:.*]] = tilegpu.async_copy
// KEEP-NEXT: gpu.barrier
// KEEP-NEXT: arith.constant 1
// KEEP-NEXT: tilegpu.async_wait %[[C]]
// KEEP-NEXT: tilegpu.async_wait %[[IN]]
// KEEP-NEXT: gpu.barrier
// HOIST-NEXT: tilegpu.async_wait %[[C]]
// HOIST-NEXT: tilegpu.async_wait %[[IN]]
// HOIST-NEXT: gpu.barrier
// HOIST-NEXT: arith.constant 1
// HOIST-NOT: gpu.barrier
// CHECK: return
func.func @two_waits_hoisted(%k: !tile.view<?x?x?x64xf16>, %in: !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>) {
  %c0 = arith.constant 0 : index
  %b = tilegpu.alloc : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %c = tilegpu.async_copy %k[%c0, %c0, %c0, %c0] into %b : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  gpu.barrier
  %c1 = arith.constant 1 : index
  %w0 = tilegpu.async_wait %c : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %w1 = tilegpu.async_wait %in : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  gpu.barrier
  return
}

// -----

// A wait for a copy issued after the earlier barrier cannot move above
// it: both barriers stay, with or without hoist-waits.

// CHECK-LABEL: func.func @negative_wait_for_later_copy
// CHECK: gpu.barrier
// CHECK-NEXT: %[[C:.*]] = tilegpu.async_copy
// CHECK-NEXT: tilegpu.async_wait %[[C]]
// CHECK-NEXT: gpu.barrier
func.func @negative_wait_for_later_copy(%k: !tile.view<?x?x?x64xf16>) {
  %c0 = arith.constant 0 : index
  %b = tilegpu.alloc : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  gpu.barrier
  %c = tilegpu.async_copy %k[%c0, %c0, %c0, %c0] into %b : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %w = tilegpu.async_wait %c : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  gpu.barrier
  return
}

// -----

// One of two waits cannot move: none moves, both barriers stay.

// CHECK-LABEL: func.func @negative_one_wait_blocks
// CHECK: %[[EARLY:.*]] = tilegpu.async_copy
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: tilegpu.async_wait %[[EARLY]]
// CHECK-NEXT: %[[LATE:.*]] = tilegpu.async_copy
// CHECK-NEXT: tilegpu.async_wait %[[LATE]]
// CHECK-NEXT: gpu.barrier
func.func @negative_one_wait_blocks(%k: !tile.view<?x?x?x64xf16>) {
  %c0 = arith.constant 0 : index
  %a = tilegpu.alloc : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %b = tilegpu.alloc : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %early = tilegpu.async_copy %k[%c0, %c0, %c0, %c0] into %a : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  gpu.barrier
  %w0 = tilegpu.async_wait %early : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %late = tilegpu.async_copy %k[%c0, %c0, %c0, %c0] into %b : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %w1 = tilegpu.async_wait %late : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  gpu.barrier
  return
}

// -----

// Waiting for every copy is not a wait for one that can move: both
// barriers stay.

// CHECK-LABEL: func.func @negative_wait_all_between
// CHECK: gpu.barrier
// CHECK-NEXT: tilegpu.async_wait_all
// CHECK-NEXT: gpu.barrier
func.func @negative_wait_all_between() {
  gpu.barrier
  tilegpu.async_wait_all
  gpu.barrier
  return
}

// -----

// Shared-memory reads between the barriers (an mma with a shared operand,
// a local_load) keep both.

// CHECK-LABEL: func.func @negative_mma_between
// CHECK: gpu.barrier
// CHECK-NEXT: tilegpu.mma
// CHECK-NEXT: gpu.barrier
func.func @negative_mma_between(%q: tensor<64x64xf16, #tilegpu.mma_sync<opa, warps = 4>>,
                                %acc: tensor<64x64xf32, #tilegpu.mma_sync<acc, warps = 4>>,
                                %b: !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>) -> tensor<64x64xf32, #tilegpu.mma_sync<acc, warps = 4>> {
  gpu.barrier
  %r = tilegpu.mma %q, %b, %acc : tensor<64x64xf16, #tilegpu.mma_sync<opa, warps = 4>>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
      -> tensor<64x64xf32, #tilegpu.mma_sync<acc, warps = 4>>
  gpu.barrier
  return %r : tensor<64x64xf32, #tilegpu.mma_sync<acc, warps = 4>>
}

// -----

// CHECK-LABEL: func.func @negative_local_load_between
// CHECK: gpu.barrier
// CHECK-NEXT: tilegpu.local_load
// CHECK-NEXT: gpu.barrier
func.func @negative_local_load_between(%b: !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>) -> tensor<64x64xf16, #tilegpu.mma_sync<opa, warps = 4>> {
  gpu.barrier
  %r = tilegpu.local_load %b : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>> -> tensor<64x64xf16, #tilegpu.mma_sync<opa, warps = 4>>
  gpu.barrier
  return %r : tensor<64x64xf16, #tilegpu.mma_sync<opa, warps = 4>>
}

// -----

// A global store between the barriers (the pass does not assume it aliases
// no shared memory) keeps both.

// CHECK-LABEL: func.func @negative_store_between
// CHECK: gpu.barrier
// CHECK-NEXT: memref.store
// CHECK-NEXT: gpu.barrier
func.func @negative_store_between(%g: memref<4xf32>, %x: f32) {
  %c0 = arith.constant 0 : index
  gpu.barrier
  memref.store %x, %g[%c0] : memref<4xf32>
  gpu.barrier
  return
}

// -----

// Barriers in different blocks (a loop body and the code around it, the
// branches of an if) never merge, even with nothing between them.

// CHECK-LABEL: func.func @negative_across_blocks
// CHECK: gpu.barrier
// CHECK-NEXT: scf.for
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: }
// CHECK-NEXT: scf.if
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: } else {
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: }
func.func @negative_across_blocks(%n: index, %p: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  gpu.barrier
  scf.for %i = %c0 to %n step %c1 {
    gpu.barrier
  }
  scf.if %p {
    gpu.barrier
  } else {
    gpu.barrier
  }
  return
}

// -----

// A loop's body is a block of its own: there two barriers merge as
// anywhere, and a wait for the buffer the loop carries (a block argument,
// there before the first barrier) moves with hoist-waits.

// CHECK-LABEL: func.func @in_loop_body
// CHECK: scf.for {{.*}} iter_args(%[[CUR:.*]] = %{{.*}})
// KEEP-NEXT: gpu.barrier
// KEEP-NEXT: %[[NEXT:.*]] = tilegpu.async_copy
// KEEP-NEXT: tilegpu.async_wait %[[CUR]]
// KEEP-NEXT: gpu.barrier
// HOIST-NEXT: tilegpu.async_wait %[[CUR]]
// HOIST-NEXT: gpu.barrier
// HOIST-NEXT: %[[NEXT:.*]] = tilegpu.async_copy
// HOIST-NOT: gpu.barrier
// CHECK: scf.yield %[[NEXT]]
func.func @in_loop_body(%k: !tile.view<?x?x?x64xf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = tilegpu.alloc : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %b = tilegpu.alloc : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %first = tilegpu.async_copy %k[%c0, %c0, %c0, %c0] into %a : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %last = scf.for %i = %c0 to %n step %c1 iter_args(%cur = %first) -> (!tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>) {
    gpu.barrier
    %next = tilegpu.async_copy %k[%c0, %c0, %i, %c0] into %b : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
    %w = tilegpu.async_wait %cur : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
    gpu.barrier
    scf.yield %next : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  }
  return
}
