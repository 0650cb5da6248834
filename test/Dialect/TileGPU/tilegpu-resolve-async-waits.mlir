// RUN: tiled-attn-opt %s -split-input-file --tilegpu-resolve-async-waits | FileCheck %s

// On the generated kernels, the counts the GPU lowering had before the
// tilegpu dialect (see test/Conversion/TileGPUToNVVM/pipelined.mlir): with both
// refills of a stage issued at the top of the body, Q·Kᵀ waits for K_j
// with V_j, K_j+1 and V_j+1 in flight (3) and P·V for V_j with K_j+1 and
// V_j+1 (2); with three stages two more groups (5 and 4).
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="head-dim=64 block-m=64 block-n=64" \
// RUN:   --tile-schedule="stages=2" --tilegpu-attach-target --tilegpu-assign-layouts \
// RUN:   --convert-tile-to-tilegpu --tilegpu-resolve-async-waits | FileCheck %s --check-prefix=STAGES2
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="head-dim=64 block-m=64 block-n=64" \
// RUN:   --tile-schedule="stages=3" --tilegpu-attach-target --tilegpu-assign-layouts \
// RUN:   --convert-tile-to-tilegpu --tilegpu-resolve-async-waits | FileCheck %s --check-prefix=STAGES3
// With refill-after-use and a mask split, each refill follows the last
// read of its block, so only the other stream's copy stays in flight (1),
// in the unmasked loop and in the masked one, which takes the first loop's
// buffers over (its entry path goes through the first loop's results).
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="head-dim=64 block-m=128" \
// RUN:   --tile-schedule="exp2=1 mask-split=1 stages=2 refill-after-use=1" --tilegpu-attach-target \
// RUN:   --tilegpu-assign-layouts --convert-tile-to-tilegpu --tilegpu-resolve-async-waits \
// RUN:   | FileCheck %s --check-prefix=AFTER2
// Masked blocks first, K prefetched: the masked loop ends with a K refill
// in flight that nobody waits for, and the copy of block 0 of K for the
// unmasked loop reuses its buffer: everyone first waits for all copies.
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="head-dim=64 block-m=128" \
// RUN:   --tile-schedule="mask-split=1 masked-first=1 stages=2 refill-after-use=1 prefetch-streams=1" \
// RUN:   --tilegpu-attach-target --tilegpu-assign-layouts --convert-tile-to-tilegpu \
// RUN:   --tilegpu-resolve-async-waits | FileCheck %s --check-prefix=DRAIN

// STAGES2-LABEL: func.func @sdpa_fwd
// STAGES2: tilegpu.async_wait %{{.*}} pending(0)
// STAGES2-NEXT: gpu.barrier
// STAGES2-NEXT: tilegpu.local_load
// STAGES2: scf.for
// STAGES2-NOT: tilegpu.async_wait
// STAGES2: tilegpu.async_copy %arg1
// STAGES2-NOT: tilegpu.async_wait
// STAGES2: tilegpu.async_copy %arg2
// STAGES2-NEXT: tilegpu.async_wait %{{.*}} pending(3)
// STAGES2-NOT: tilegpu.async_copy
// STAGES2: tilegpu.async_wait %{{.*}} pending(2)
// STAGES2-NOT: tilegpu.async_wait
// STAGES2: scf.yield

// STAGES3-LABEL: func.func @sdpa_fwd
// STAGES3: scf.for
// STAGES3-NOT: tilegpu.async_wait
// STAGES3: tilegpu.async_copy %arg1
// STAGES3-NOT: tilegpu.async_wait
// STAGES3: tilegpu.async_copy %arg2
// STAGES3-NEXT: tilegpu.async_wait %{{.*}} pending(5)
// STAGES3-NOT: tilegpu.async_copy
// STAGES3: tilegpu.async_wait %{{.*}} pending(4)
// STAGES3-NOT: tilegpu.async_wait
// STAGES3: scf.yield

// AFTER2-LABEL: func.func @sdpa_fwd
// AFTER2: %[[UNMASKED:.*]]:5 = scf.for
// AFTER2: tilegpu.async_wait %{{.*}} pending(1)
// AFTER2: tilegpu.async_wait %{{.*}} pending(1)
// AFTER2: scf.yield
// AFTER2: scf.for {{.*}} iter_args(%{{.*}} = %[[UNMASKED]]#0,
// AFTER2: tilegpu.async_wait %{{.*}} pending(1)
// AFTER2: tilegpu.async_wait %{{.*}} pending(1)
// AFTER2: scf.yield
// AFTER2-NEXT: }
// AFTER2-NOT: tilegpu.async_wait_all
// AFTER2: tilegpu.alloc
// AFTER2-NEXT: tilegpu.async_wait_all
// AFTER2-NEXT: gpu.barrier
// AFTER2-NEXT: tilegpu.staged_store

// DRAIN-LABEL: func.func @sdpa_fwd
// DRAIN: %[[MASKED:.*]]:4 = scf.for
// DRAIN-NOT: tilegpu.async_wait_all
// DRAIN: scf.yield
// DRAIN-NEXT: }
// DRAIN-NEXT: tilegpu.async_wait_all
// DRAIN-NEXT: gpu.barrier
// DRAIN-NEXT: tilegpu.async_copy %arg1[%{{.*}}, %{{.*}}, %c0, %c0]
// DRAIN: scf.for {{.*}} iter_args(%{{.*}} = %[[MASKED]]#0,

// Copies between a copy and its wait in the same block each add a group
// that may stay in flight.

// CHECK-LABEL: func.func @same_block
// CHECK: %[[A:.*]] = tilegpu.async_copy
// CHECK: %[[B:.*]] = tilegpu.async_copy
// CHECK: %[[C:.*]] = tilegpu.async_copy
// CHECK: tilegpu.async_wait %[[A]] pending(2)
// CHECK: tilegpu.async_wait %[[B]] pending(1)
// CHECK: tilegpu.async_wait %[[C]] pending(0)
// CHECK: %[[D:.*]] = tilegpu.async_copy
// CHECK: tilegpu.async_wait %[[A]] pending(3)
// CHECK: tilegpu.async_wait %[[D]] pending(0)
func.func @same_block(%v: !tile.view<?x?x?x64xf16>) {
  %c0 = arith.constant 0 : index
  %a = tilegpu.alloc : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %b = tilegpu.alloc : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %c = tilegpu.alloc : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %d = tilegpu.alloc : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %ca = tilegpu.async_copy %v[%c0, %c0, %c0, %c0] into %a : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %cb = tilegpu.async_copy %v[%c0, %c0, %c0, %c0] into %b : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %cc = tilegpu.async_copy %v[%c0, %c0, %c0, %c0] into %c : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %wa = tilegpu.async_wait %ca : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %wb = tilegpu.async_wait %cb : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %wc = tilegpu.async_wait %cc : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %cd = tilegpu.async_copy %v[%c0, %c0, %c0, %c0] into %d : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %wa2 = tilegpu.async_wait %ca : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %wd = tilegpu.async_wait %cd : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  return
}

// -----

// A count already there is replaced by the computed one.

// CHECK-LABEL: func.func @recount
// CHECK: tilegpu.async_wait %{{.*}} pending(1)
func.func @recount(%v: !tile.view<?x?x?x64xf16>) {
  %c0 = arith.constant 0 : index
  %a = tilegpu.alloc : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %b = tilegpu.alloc : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %ca = tilegpu.async_copy %v[%c0, %c0, %c0, %c0] into %a : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %cb = tilegpu.async_copy %v[%c0, %c0, %c0, %c0] into %b : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %wa = tilegpu.async_wait %ca pending(7) : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  return
}

// -----

// Through a loop a buffer comes from before the loop (first iteration) or
// from the previous iteration's yield (the others): the count is the
// smaller of the two paths, plus the copies of the body before the wait.
// Here the entry path has two groups after the prologue copy of K (V_0 and
// Q), the back edge one (V_j+1), and the body issues two before the wait.

// CHECK-LABEL: func.func @loop_back_edge_smaller
// CHECK: scf.for
// CHECK: tilegpu.async_copy
// CHECK: tilegpu.async_copy
// CHECK: tilegpu.async_wait %{{.*}} pending(3)
// CHECK: tilegpu.async_wait %{{.*}} pending(2)
// CHECK: scf.yield
func.func @loop_back_edge_smaller(%v: !tile.view<?x?x?x64xf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %q = tilegpu.alloc : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %kr = tilegpu.alloc : !tilegpu.buffer<2x64x64xf16, #tilegpu.shared<pad = 8, transposed = true>>
  %vr = tilegpu.alloc : !tilegpu.buffer<2x64x64xf16, #tilegpu.shared<pad = 8>>
  %k0s = tilegpu.slot %kr[%c0] : !tilegpu.buffer<2x64x64xf16, #tilegpu.shared<pad = 8, transposed = true>> -> !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8, transposed = true>>
  %k0 = tilegpu.async_copy %v[%c0, %c0, %c0, %c0] into %k0s : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8, transposed = true>>
  %v0s = tilegpu.slot %vr[%c0] : !tilegpu.buffer<2x64x64xf16, #tilegpu.shared<pad = 8>> -> !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %v0 = tilegpu.async_copy %v[%c0, %c0, %c0, %c0] into %v0s : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %qc = tilegpu.async_copy %v[%c0, %c0, %c0, %c0] into %q : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %r:2 = scf.for %j = %c0 to %n step %c1 iter_args(%k = %k0, %vv = %v0)
      -> (!tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8, transposed = true>>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>) {
    %j1 = arith.addi %j, %c1 : index
    %s = arith.remui %j1, %c2 : index
    %k1s = tilegpu.slot %kr[%s] : !tilegpu.buffer<2x64x64xf16, #tilegpu.shared<pad = 8, transposed = true>> -> !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8, transposed = true>>
    %k1 = tilegpu.async_copy %v[%c0, %c0, %j1, %c0] into %k1s : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8, transposed = true>>
    %v1s = tilegpu.slot %vr[%s] : !tilegpu.buffer<2x64x64xf16, #tilegpu.shared<pad = 8>> -> !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
    %v1 = tilegpu.async_copy %v[%c0, %c0, %j1, %c0] into %v1s : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
    %kw = tilegpu.async_wait %k : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8, transposed = true>>
    %vw = tilegpu.async_wait %vv : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
    scf.yield %k1, %v1 : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8, transposed = true>>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  }
  return
}

// -----

// The other way round: the prologue copy is the last before the loop
// (entry path 0), while two copies follow the refill in the body (back
// edge 2). The body issues one copy before the wait: 0 + 1.

// CHECK-LABEL: func.func @loop_entry_smaller
// CHECK: scf.for
// CHECK: tilegpu.async_copy
// CHECK-NEXT: tilegpu.async_wait %{{.*}} pending(1)
// CHECK: scf.yield
func.func @loop_entry_smaller(%v: !tile.view<?x?x?x64xf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = tilegpu.alloc : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %b = tilegpu.alloc : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %c = tilegpu.alloc : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %a0 = tilegpu.async_copy %v[%c0, %c0, %c0, %c0] into %a : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %r = scf.for %j = %c0 to %n step %c1 iter_args(%cur = %a0) -> (!tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>) {
    %x = tilegpu.async_copy %v[%c0, %c0, %j, %c0] into %b : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
    %w = tilegpu.async_wait %cur : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
    %next = tilegpu.async_copy %v[%c0, %c0, %j, %c0] into %a : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
    %y = tilegpu.async_copy %v[%c0, %c0, %j, %c0] into %c : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
    %z = tilegpu.async_copy %v[%c0, %c0, %j, %c0] into %c : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
    scf.yield %next : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  }
  return
}

// -----

// A buffer the loop hands on unchanged has only its entry path: the back
// edge leads back to itself and bounds nothing.

// CHECK-LABEL: func.func @loop_passes_through
// CHECK: scf.for
// CHECK: tilegpu.async_copy
// CHECK-NEXT: tilegpu.async_wait %{{.*}} pending(2)
// CHECK: scf.yield
func.func @loop_passes_through(%v: !tile.view<?x?x?x64xf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = tilegpu.alloc : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %b = tilegpu.alloc : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %a0 = tilegpu.async_copy %v[%c0, %c0, %c0, %c0] into %a : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %b0 = tilegpu.async_copy %v[%c0, %c0, %c0, %c0] into %b : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %r = scf.for %j = %c0 to %n step %c1 iter_args(%cur = %a0) -> (!tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>) {
    %x = tilegpu.async_copy %v[%c0, %c0, %j, %c0] into %b : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
    %w = tilegpu.async_wait %cur : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
    scf.yield %cur : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  }
  return
}

// -----

// Three stages: block j comes from two iterations back, through a chain of
// two iter_args (the buffer yielded as the second becomes the first). The
// prologue copies K_0, K_1; the body refills K_j+2 before the wait. Entry
// path: K_1 after K_0 (1); back edge: K_j+2 issued before the previous
// iteration's yield (1); plus the refill of this iteration: 2.

// CHECK-LABEL: func.func @chain_of_two_iter_args
// CHECK: scf.for
// CHECK: tilegpu.async_copy
// CHECK-NEXT: tilegpu.async_wait %{{.*}} pending(2)
// CHECK-NEXT: tilegpu.async_wait %{{.*}} pending(1)
// CHECK: scf.yield
func.func @chain_of_two_iter_args(%v: !tile.view<?x?x?x64xf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %kr = tilegpu.alloc : !tilegpu.buffer<3x64x64xf16, #tilegpu.shared<pad = 8>>
  %s0 = tilegpu.slot %kr[%c0] : !tilegpu.buffer<3x64x64xf16, #tilegpu.shared<pad = 8>> -> !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %k0 = tilegpu.async_copy %v[%c0, %c0, %c0, %c0] into %s0 : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %s1 = tilegpu.slot %kr[%c1] : !tilegpu.buffer<3x64x64xf16, #tilegpu.shared<pad = 8>> -> !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %k1 = tilegpu.async_copy %v[%c0, %c0, %c1, %c0] into %s1 : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %r:2 = scf.for %j = %c0 to %n step %c1 iter_args(%cur = %k0, %nxt = %k1)
      -> (!tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>) {
    %j2 = arith.addi %j, %c2 : index
    %s = arith.remui %j2, %c3 : index
    %ss = tilegpu.slot %kr[%s] : !tilegpu.buffer<3x64x64xf16, #tilegpu.shared<pad = 8>> -> !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
    %k2 = tilegpu.async_copy %v[%c0, %c0, %j2, %c0] into %ss : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
    %w = tilegpu.async_wait %cur : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
    %w1 = tilegpu.async_wait %nxt : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
    scf.yield %nxt, %k2 : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  }
  return
}

// -----

// A loop result waited for after the loop is the last yield or, when the
// loop runs no iteration, its initial value: the fewer groups of the two
// (here 0 on the zero-trip path, 1 on the other), plus the copies after
// the loop.

// CHECK-LABEL: func.func @loop_result_after_loop
// CHECK: %[[R:.*]] = scf.for
// CHECK: scf.yield
// CHECK: tilegpu.async_copy
// CHECK-NEXT: tilegpu.async_wait %[[R]] pending(1)
func.func @loop_result_after_loop(%v: !tile.view<?x?x?x64xf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = tilegpu.alloc : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %b = tilegpu.alloc : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %a0 = tilegpu.async_copy %v[%c0, %c0, %c0, %c0] into %a : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %r = scf.for %j = %c0 to %n step %c1 iter_args(%cur = %a0) -> (!tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>) {
    %w = tilegpu.async_wait %cur : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
    %next = tilegpu.async_copy %v[%c0, %c0, %j, %c0] into %a : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
    %x = tilegpu.async_copy %v[%c0, %c0, %j, %c0] into %b : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
    scf.yield %next : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  }
  %y = tilegpu.async_copy %v[%c0, %c0, %c0, %c0] into %b : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %wr = tilegpu.async_wait %r : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  return
}

// -----

// Copies inside nested regions (an if, a loop) may not run: they are not
// counted, and the count stays a lower bound.

// CHECK-LABEL: func.func @nested_copies_not_counted
// CHECK: %[[A:.*]] = tilegpu.async_copy
// CHECK: scf.if
// CHECK: scf.for
// CHECK: tilegpu.async_wait %[[A]] pending(0)
func.func @nested_copies_not_counted(%v: !tile.view<?x?x?x64xf16>, %p: i1, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = tilegpu.alloc : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %b = tilegpu.alloc : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %ca = tilegpu.async_copy %v[%c0, %c0, %c0, %c0] into %a : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  scf.if %p {
    %x = tilegpu.async_copy %v[%c0, %c0, %c0, %c0] into %b : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  }
  scf.for %j = %c0 to %n step %c1 {
    %y = tilegpu.async_copy %v[%c0, %c0, %j, %c0] into %b : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  }
  %wa = tilegpu.async_wait %ca : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  return
}

// -----

// A wait inside a nested region counts the copies of the enclosing block
// before that region, not those of the region itself.

// CHECK-LABEL: func.func @wait_in_nested_region
// CHECK: scf.if
// CHECK: tilegpu.async_copy
// CHECK-NEXT: tilegpu.async_wait %{{.*}} pending(1)
func.func @wait_in_nested_region(%v: !tile.view<?x?x?x64xf16>, %p: i1) {
  %c0 = arith.constant 0 : index
  %a = tilegpu.alloc : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %b = tilegpu.alloc : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %ca = tilegpu.async_copy %v[%c0, %c0, %c0, %c0] into %a : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %cb = tilegpu.async_copy %v[%c0, %c0, %c0, %c0] into %b : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  scf.if %p {
    %x = tilegpu.async_copy %v[%c0, %c0, %c0, %c0] into %b : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
    %wa = tilegpu.async_wait %ca : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  }
  return
}

// -----

// A wait on a buffer that no copy produced (an argument, a slot, a
// buffer already waited for) lets nothing stay in flight.

// CHECK-LABEL: func.func @negative_not_a_copy
// CHECK: tilegpu.async_wait %{{.*}} pending(0)
// CHECK: tilegpu.async_wait %{{.*}} pending(0)
// CHECK: tilegpu.async_wait %{{.*}} pending(0)
func.func @negative_not_a_copy(%v: !tile.view<?x?x?x64xf16>, %arg: !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>) {
  %c0 = arith.constant 0 : index
  %r = tilegpu.alloc : !tilegpu.buffer<2x64x64xf16, #tilegpu.shared<pad = 8>>
  %s = tilegpu.slot %r[%c0] : !tilegpu.buffer<2x64x64xf16, #tilegpu.shared<pad = 8>> -> !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %c = tilegpu.async_copy %v[%c0, %c0, %c0, %c0] into %s : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %w0 = tilegpu.async_wait %arg : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %w1 = tilegpu.async_wait %s : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %d = tilegpu.async_copy %v[%c0, %c0, %c0, %c0] into %arg : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %w2 = tilegpu.async_wait %w1 : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  return
}

// -----

// Drain: a loop ends with a refill in flight that nobody waits for (its
// buffer result is unused), and a copy comes later: every thread waits
// for all its copies right after the loop.

// CHECK-LABEL: func.func @drain_before_later_copy
// CHECK: scf.for
// CHECK: scf.yield
// CHECK-NEXT: }
// CHECK-NEXT: tilegpu.async_wait_all
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: tilegpu.async_copy
// CHECK-NOT: tilegpu.async_wait_all
// CHECK: return
func.func @drain_before_later_copy(%v: !tile.view<?x?x?x64xf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = tilegpu.alloc : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %a0 = tilegpu.async_copy %v[%c0, %c0, %c0, %c0] into %a : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %r = scf.for %j = %c0 to %n step %c1 iter_args(%cur = %a0) -> (!tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>) {
    %w = tilegpu.async_wait %cur : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
    gpu.barrier
    %next = tilegpu.async_copy %v[%c0, %c0, %j, %c0] into %a : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
    scf.yield %next : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  }
  gpu.barrier
  %b0 = tilegpu.async_copy %v[%c0, %c0, %c0, %c0] into %a : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %wb = tilegpu.async_wait %b0 : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  return
}

// -----

// The later copy may sit in a nested region: it still needs the drain.

// CHECK-LABEL: func.func @drain_before_nested_copy
// CHECK: scf.yield
// CHECK-NEXT: }
// CHECK-NEXT: tilegpu.async_wait_all
// CHECK-NEXT: scf.if
func.func @drain_before_nested_copy(%v: !tile.view<?x?x?x64xf16>, %n: index, %p: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = tilegpu.alloc : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %a0 = tilegpu.async_copy %v[%c0, %c0, %c0, %c0] into %a : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %r = scf.for %j = %c0 to %n step %c1 iter_args(%cur = %a0) -> (!tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>) {
    %w = tilegpu.async_wait %cur : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
    %next = tilegpu.async_copy %v[%c0, %c0, %j, %c0] into %a : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
    scf.yield %next : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  }
  scf.if %p {
    %b0 = tilegpu.async_copy %v[%c0, %c0, %c0, %c0] into %a : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  }
  return
}

// -----

// No copy after the loop: nothing to drain.

// CHECK-LABEL: func.func @negative_drain_no_later_copy
// CHECK-NOT: tilegpu.async_wait_all
// CHECK: return
func.func @negative_drain_no_later_copy(%v: !tile.view<?x?x?x64xf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = tilegpu.alloc : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %a0 = tilegpu.async_copy %v[%c0, %c0, %c0, %c0] into %a : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %r = scf.for %j = %c0 to %n step %c1 iter_args(%cur = %a0) -> (!tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>) {
    %w = tilegpu.async_wait %cur : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
    %next = tilegpu.async_copy %v[%c0, %c0, %j, %c0] into %a : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
    scf.yield %next : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  }
  gpu.barrier
  return
}

// -----

// The loop's buffer is taken over by a later loop, which waits for it:
// nothing to drain.

// CHECK-LABEL: func.func @negative_drain_result_used
// CHECK: %[[R:.*]] = scf.for
// CHECK-NOT: tilegpu.async_wait_all
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[R]])
// CHECK-NOT: tilegpu.async_wait_all
// CHECK: return
func.func @negative_drain_result_used(%v: !tile.view<?x?x?x64xf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = tilegpu.alloc : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %a0 = tilegpu.async_copy %v[%c0, %c0, %c0, %c0] into %a : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %r = scf.for %j = %c0 to %n step %c1 iter_args(%cur = %a0) -> (!tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>) {
    %w = tilegpu.async_wait %cur : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
    %next = tilegpu.async_copy %v[%c0, %c0, %j, %c0] into %a : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
    scf.yield %next : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  }
  %r2 = scf.for %j = %c0 to %n step %c1 iter_args(%cur = %r) -> (!tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>) {
    %w = tilegpu.async_wait %cur : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
    %next = tilegpu.async_copy %v[%c0, %c0, %j, %c0] into %a : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
    scf.yield %next : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  }
  return
}

// -----

// The loop sits in an scf.if and the copy that reuses its buffer comes
// after the if: the search for a later copy goes on past the loop's block,
// and the drain goes right after the loop, inside the if.

// CHECK-LABEL: func.func @drain_loop_in_if
// CHECK: scf.if
// CHECK: scf.for
// CHECK: scf.yield
// CHECK-NEXT: }
// CHECK-NEXT: tilegpu.async_wait_all
// CHECK-NEXT: }
// CHECK-NEXT: tilegpu.async_copy
// CHECK-NOT: tilegpu.async_wait_all
// CHECK: return
func.func @drain_loop_in_if(%v: !tile.view<?x?x?x64xf16>, %n: index, %p: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = tilegpu.alloc : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %a0 = tilegpu.async_copy %v[%c0, %c0, %c0, %c0] into %a : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  scf.if %p {
    %r = scf.for %j = %c0 to %n step %c1 iter_args(%cur = %a0) -> (!tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>) {
      %w = tilegpu.async_wait %cur : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
      %next = tilegpu.async_copy %v[%c0, %c0, %j, %c0] into %a : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
      scf.yield %next : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
    }
  }
  %b0 = tilegpu.async_copy %v[%c0, %c0, %c0, %c0] into %a : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %wb = tilegpu.async_wait %b0 : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  return
}

// -----

// The loop sits in an scf.if and no copy follows, in the if or after it:
// nothing to drain.

// CHECK-LABEL: func.func @negative_drain_loop_in_if
// CHECK-NOT: tilegpu.async_wait_all
// CHECK: return
func.func @negative_drain_loop_in_if(%v: !tile.view<?x?x?x64xf16>, %n: index, %p: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = tilegpu.alloc : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %a0 = tilegpu.async_copy %v[%c0, %c0, %c0, %c0] into %a : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  scf.if %p {
    %r = scf.for %j = %c0 to %n step %c1 iter_args(%cur = %a0) -> (!tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>) {
      %w = tilegpu.async_wait %cur : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
      %next = tilegpu.async_copy %v[%c0, %c0, %j, %c0] into %a : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
      scf.yield %next : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
    }
  }
  gpu.barrier
  return
}

// -----

// The loop sits in an outer loop: nothing follows it in the outer body,
// but the next outer iteration's copy reuses its buffer. The drain goes
// right after the inner loop, at the end of the outer body.

// CHECK-LABEL: func.func @drain_loop_in_loop
// CHECK: scf.for
// CHECK: tilegpu.async_copy
// CHECK: scf.for
// CHECK: scf.yield
// CHECK-NEXT: }
// CHECK-NEXT: tilegpu.async_wait_all
// CHECK-NEXT: }
// CHECK-NEXT: return
func.func @drain_loop_in_loop(%v: !tile.view<?x?x?x64xf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = tilegpu.alloc : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  scf.for %i = %c0 to %n step %c1 {
    %a0 = tilegpu.async_copy %v[%c0, %c0, %i, %c0] into %a : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
    %r = scf.for %j = %c0 to %n step %c1 iter_args(%cur = %a0) -> (!tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>) {
      %w = tilegpu.async_wait %cur : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
      %next = tilegpu.async_copy %v[%c0, %c0, %j, %c0] into %a : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
      scf.yield %next : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
    }
  }
  return
}

// -----

// wgmma waits: the products issued after the awaited one, before the wait,
// in its block (nested ones are not counted; a product of a synchronous
// family is not a group).
// CHECK-LABEL: func.func @mma_waits
// CHECK: %[[A:.*]] = tilegpu.mma
// CHECK: %[[B:.*]] = tilegpu.mma
// CHECK: %[[C:.*]] = tilegpu.mma
// CHECK: scf.if
// CHECK: tilegpu.mma_wait %[[A]] pending(2)
// CHECK: tilegpu.mma_wait %[[B]] pending(1)
// CHECK: tilegpu.mma_wait %[[C]] pending(0)
func.func @mma_waits(%q: !tilegpu.buffer<128x64xf16, #tilegpu.shared<swizzle = 128>>,
                     %k: !tilegpu.buffer<64x64xf16, #tilegpu.shared<swizzle = 128, transposed = true>>,
                     %acc: tensor<128x64xf32, #tilegpu.wgmma<acc, warpgroups = 2>>, %c: i1) {
  %a = tilegpu.mma %q, %k, %acc : !tilegpu.buffer<128x64xf16, #tilegpu.shared<swizzle = 128>>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<swizzle = 128, transposed = true>> -> tensor<128x64xf32, #tilegpu.wgmma<acc, warpgroups = 2>>
  %b = tilegpu.mma %q, %k, %acc : !tilegpu.buffer<128x64xf16, #tilegpu.shared<swizzle = 128>>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<swizzle = 128, transposed = true>> -> tensor<128x64xf32, #tilegpu.wgmma<acc, warpgroups = 2>>
  %d = tilegpu.mma %q, %k, %acc : !tilegpu.buffer<128x64xf16, #tilegpu.shared<swizzle = 128>>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<swizzle = 128, transposed = true>> -> tensor<128x64xf32, #tilegpu.wgmma<acc, warpgroups = 2>>
  scf.if %c {
    %e = tilegpu.mma %q, %k, %acc : !tilegpu.buffer<128x64xf16, #tilegpu.shared<swizzle = 128>>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<swizzle = 128, transposed = true>> -> tensor<128x64xf32, #tilegpu.wgmma<acc, warpgroups = 2>>
    %ew = tilegpu.mma_wait %e : tensor<128x64xf32, #tilegpu.wgmma<acc, warpgroups = 2>>
  }
  %aw = tilegpu.mma_wait %a : tensor<128x64xf32, #tilegpu.wgmma<acc, warpgroups = 2>>
  %bw = tilegpu.mma_wait %b : tensor<128x64xf32, #tilegpu.wgmma<acc, warpgroups = 2>>
  %dw = tilegpu.mma_wait %d : tensor<128x64xf32, #tilegpu.wgmma<acc, warpgroups = 2>>
  return
}
