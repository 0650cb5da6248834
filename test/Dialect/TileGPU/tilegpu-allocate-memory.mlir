// RUN: tiled-attn-opt %s -split-input-file -verify-diagnostics --tilegpu-allocate-memory | FileCheck %s

// On the generated kernel (D=64, BLOCK_M=128, one K and one V buffer with
// refill-after-use): Q (128 x (64+8) halves, 18432 bytes) at 0, K and V
// (64 x 72 halves, 9216 bytes each) after it; the output's staging buffer,
// allocated after the loops, reuses Q's bytes.
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="head-dim=64 block-m=128" \
// RUN:   --tile-schedule="exp2=1 mask-split=1 stages=2 refill-after-use=1" --tilegpu-attach-target \
// RUN:   --tilegpu-assign-layouts --convert-tile-to-tilegpu --tilegpu-merge-barriers="hoist-waits=1" \
// RUN:   --tilegpu-resolve-async-waits --tilegpu-allocate-memory | FileCheck %s --check-prefix=KERNEL
// Three stages without refill-after-use: rings of three 9216-byte tiles
// for K and V, the old lowering's 64512 bytes.
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="head-dim=64 block-m=64 block-n=64" \
// RUN:   --tile-schedule="stages=3" --tilegpu-attach-target --tilegpu-assign-layouts \
// RUN:   --convert-tile-to-tilegpu --tilegpu-resolve-async-waits --tilegpu-allocate-memory \
// RUN:   | FileCheck %s --check-prefix=STAGES3

// KERNEL-LABEL: func.func @sdpa_fwd
// KERNEL-SAME: tilegpu.shared_bytes = 36864 : i64
// KERNEL-NEXT: tilegpu.alloc offset(0) : <128x64xf16, #tilegpu.shared<pad = 8>>
// KERNEL-NEXT: tilegpu.alloc offset(18432) : <64x64xf16, #tilegpu.shared<pad = 8, transposed = true>>
// KERNEL-NEXT: tilegpu.alloc offset(27648) : <64x64xf16, #tilegpu.shared<pad = 8>>
// KERNEL: scf.for
// KERNEL: scf.for
// KERNEL: %[[STAGE:.*]] = tilegpu.alloc offset(0) : <128x64xf16, #tilegpu.shared<pad = 8>>
// KERNEL: tilegpu.staged_store {{.*}} through %[[STAGE]]

// STAGES3-LABEL: func.func @sdpa_fwd
// STAGES3-SAME: tilegpu.shared_bytes = 64512 : i64
// STAGES3-NEXT: tilegpu.alloc offset(0) : <64x64xf16, #tilegpu.shared<pad = 8>>
// STAGES3-NEXT: tilegpu.alloc offset(9216) : <3x64x64xf16, #tilegpu.shared<pad = 8, transposed = true>>
// STAGES3-NEXT: tilegpu.alloc offset(36864) : <3x64x64xf16, #tilegpu.shared<pad = 8>>
// STAGES3: tilegpu.alloc offset(0) : <64x64xf16, #tilegpu.shared<pad = 8>>

// Buffers live together are placed in program order, one after the other
// (D=128: Q is 128 x (128+8) halves, Kᵀ of a 64-key block is stored as 64
// rows of 128+8).

// CHECK-LABEL: func.func @program_order
// CHECK-SAME: tilegpu.shared_bytes = 52224 : i64
// CHECK: tilegpu.alloc offset(0) : <128x128xf16, #tilegpu.shared<pad = 8>>
// CHECK: tilegpu.alloc offset(34816) : <128x64xf16, #tilegpu.shared<pad = 8, transposed = true>>
func.func @program_order(%v: !tile.view<?x?x?x128xf16>) {
  %c0 = arith.constant 0 : index
  %q = tilegpu.alloc : !tilegpu.buffer<128x128xf16, #tilegpu.shared<pad = 8>>
  %k = tilegpu.alloc : !tilegpu.buffer<128x64xf16, #tilegpu.shared<pad = 8, transposed = true>>
  %qc = tilegpu.async_copy %v[%c0, %c0, %c0, %c0] into %q : !tile.view<?x?x?x128xf16>, !tilegpu.buffer<128x128xf16, #tilegpu.shared<pad = 8>>
  %kc = tilegpu.async_copy %v[%c0, %c0, %c0, %c0] into %k : !tile.view<?x?x?x128xf16>, !tilegpu.buffer<128x64xf16, #tilegpu.shared<pad = 8, transposed = true>>
  return
}

// -----

// Alignment: a padded buffer at a multiple of 128 bytes, a buffer with the
// 128-byte swizzle at a multiple of 1024 (16 x 72 halves end at 2304, the
// swizzled tile starts at 3072). The mbarriers (16 bytes, taking 128)
// then fit in the gap that alignment left (first fit), and the last
// buffer goes after the swizzled one.

// CHECK-LABEL: func.func @alignment
// CHECK-SAME: tilegpu.shared_bytes = 28672 : i64
// CHECK: tilegpu.alloc offset(0) : <16x64xf16, #tilegpu.shared<pad = 8>>
// CHECK: tilegpu.alloc offset(3072) : <128x64xf16, #tilegpu.shared<swizzle = 128>>
// CHECK: tilegpu.alloc offset(2304) : <2xi64, #tilegpu.shared<>>
// CHECK: tilegpu.alloc offset(19456) : <64x64xf16, #tilegpu.shared<pad = 8>>
func.func @alignment(%v: !tile.view<?x?x?x64xf16>) {
  %c0 = arith.constant 0 : index
  %a = tilegpu.alloc : !tilegpu.buffer<16x64xf16, #tilegpu.shared<pad = 8>>
  %s = tilegpu.alloc : !tilegpu.buffer<128x64xf16, #tilegpu.shared<swizzle = 128>>
  %bars = tilegpu.alloc : !tilegpu.buffer<2xi64, #tilegpu.shared<>>
  %b = tilegpu.alloc : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %ac = tilegpu.async_copy %v[%c0, %c0, %c0, %c0] into %a : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<16x64xf16, #tilegpu.shared<pad = 8>>
  %sc = tilegpu.async_copy %v[%c0, %c0, %c0, %c0] into %s : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<128x64xf16, #tilegpu.shared<swizzle = 128>>
  tilegpu.mbarrier_init %bars[%c0], count(1) : !tilegpu.buffer<2xi64, #tilegpu.shared<>>
  %bc = tilegpu.async_copy %v[%c0, %c0, %c0, %c0] into %b : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  return
}

// -----

// A ring takes slots x tile size: two 9216-byte tiles of Kᵀ, three of V.

// CHECK-LABEL: func.func @rings
// CHECK-SAME: tilegpu.shared_bytes = 46080 : i64
// CHECK: tilegpu.alloc offset(0) : <2x64x64xf16, #tilegpu.shared<pad = 8, transposed = true>>
// CHECK: tilegpu.alloc offset(18432) : <3x64x64xf16, #tilegpu.shared<pad = 8>>
func.func @rings(%v: !tile.view<?x?x?x64xf16>, %i: index) {
  %c0 = arith.constant 0 : index
  %k = tilegpu.alloc : !tilegpu.buffer<2x64x64xf16, #tilegpu.shared<pad = 8, transposed = true>>
  %vv = tilegpu.alloc : !tilegpu.buffer<3x64x64xf16, #tilegpu.shared<pad = 8>>
  %ks = tilegpu.slot %k[%i] : !tilegpu.buffer<2x64x64xf16, #tilegpu.shared<pad = 8, transposed = true>> -> !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8, transposed = true>>
  %vs = tilegpu.slot %vv[%i] : !tilegpu.buffer<3x64x64xf16, #tilegpu.shared<pad = 8>> -> !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %kc = tilegpu.async_copy %v[%c0, %c0, %c0, %c0] into %ks : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8, transposed = true>>
  %vc = tilegpu.async_copy %v[%c0, %c0, %c0, %c0] into %vs : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  return
}

// -----

// A staging buffer allocated after the last use of the others (their
// slots, copies and waits included) reuses their bytes: it lands at 0.

// CHECK-LABEL: func.func @reuse_after_last_use
// CHECK-SAME: tilegpu.shared_bytes = 27648 : i64
// CHECK: tilegpu.alloc offset(0) : <2x64x64xf16, #tilegpu.shared<pad = 8>>
// CHECK: tilegpu.alloc offset(18432) : <64x64xf16, #tilegpu.shared<pad = 8>>
// CHECK: tilegpu.alloc offset(0) : <64x64xf16, #tilegpu.shared<pad = 8>>
func.func @reuse_after_last_use(%v: !tile.view<?x?x?x64xf16>, %o: !tile.view<?x?x?x64xf16>, %i: index,
                                %x: tensor<64x64xf16, #tilegpu.mma_sync<acc, warps = 4>>) {
  %c0 = arith.constant 0 : index
  %ring = tilegpu.alloc : !tilegpu.buffer<2x64x64xf16, #tilegpu.shared<pad = 8>>
  %b = tilegpu.alloc : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %s = tilegpu.slot %ring[%i] : !tilegpu.buffer<2x64x64xf16, #tilegpu.shared<pad = 8>> -> !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %c = tilegpu.async_copy %v[%c0, %c0, %c0, %c0] into %s : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %bc = tilegpu.async_copy %v[%c0, %c0, %c0, %c0] into %b : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %w = tilegpu.async_wait %c : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %l = tilegpu.local_load %w : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>> -> tensor<64x64xf16, #tilegpu.mma_sync<opa, warps = 4>>
  %bw = tilegpu.async_wait %bc : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %stage = tilegpu.alloc : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  tilegpu.async_wait_all
  gpu.barrier
  tilegpu.staged_store %x, %o[%c0, %c0, %c0, %c0] through %stage : tensor<64x64xf16, #tilegpu.mma_sync<acc, warps = 4>>, !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  return
}

// -----

// A buffer still read after a later allocation keeps its bytes: the later
// buffer goes after it.

// CHECK-LABEL: func.func @negative_reuse_while_live
// CHECK-SAME: tilegpu.shared_bytes = 18432 : i64
// CHECK: tilegpu.alloc offset(0) : <64x64xf16, #tilegpu.shared<pad = 8>>
// CHECK: tilegpu.alloc offset(9216) : <64x64xf16, #tilegpu.shared<pad = 8>>
func.func @negative_reuse_while_live(%v: !tile.view<?x?x?x64xf16>) -> tensor<64x64xf16, #tilegpu.mma_sync<opa, warps = 4>> {
  %c0 = arith.constant 0 : index
  %a = tilegpu.alloc : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %c = tilegpu.async_copy %v[%c0, %c0, %c0, %c0] into %a : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %b = tilegpu.alloc : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %bc = tilegpu.async_copy %v[%c0, %c0, %c0, %c0] into %b : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %w = tilegpu.async_wait %c : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %l = tilegpu.local_load %w : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>> -> tensor<64x64xf16, #tilegpu.mma_sync<opa, warps = 4>>
  return %l : tensor<64x64xf16, #tilegpu.mma_sync<opa, warps = 4>>
}

// -----

// First fit: a dead buffer's hole between two live ones is reused when
// the new buffer fits in it.

// CHECK-LABEL: func.func @first_fit_hole
// CHECK-SAME: tilegpu.shared_bytes = 27648 : i64
// CHECK: tilegpu.alloc offset(0) : <64x64xf16, #tilegpu.shared<pad = 8>>
// CHECK: tilegpu.alloc offset(9216) : <64x64xf16, #tilegpu.shared<pad = 8>>
// CHECK: tilegpu.alloc offset(18432) : <64x64xf16, #tilegpu.shared<pad = 8>>
// CHECK: tilegpu.alloc offset(9216) : <32x64xf16, #tilegpu.shared<pad = 8>>
func.func @first_fit_hole(%v: !tile.view<?x?x?x64xf16>) {
  %c0 = arith.constant 0 : index
  %a = tilegpu.alloc : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %b = tilegpu.alloc : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %c = tilegpu.alloc : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %ac = tilegpu.async_copy %v[%c0, %c0, %c0, %c0] into %a : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %bc = tilegpu.async_copy %v[%c0, %c0, %c0, %c0] into %b : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %cc = tilegpu.async_copy %v[%c0, %c0, %c0, %c0] into %c : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %d = tilegpu.alloc : !tilegpu.buffer<32x64xf16, #tilegpu.shared<pad = 8>>
  %dc = tilegpu.async_copy %v[%c0, %c0, %c0, %c0] into %d : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<32x64xf16, #tilegpu.shared<pad = 8>>
  %aw = tilegpu.async_wait %ac : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %cw = tilegpu.async_wait %cc : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  return
}

// -----

// A buffer used in a loop lives through the whole loop: a buffer
// allocated before the loop and after the first buffer's copy does not
// take its bytes. One allocated after the loop does.

// CHECK-LABEL: func.func @live_through_loop
// CHECK-SAME: tilegpu.shared_bytes = 18432 : i64
// CHECK: tilegpu.alloc offset(0) : <64x64xf16, #tilegpu.shared<pad = 8>>
// CHECK: tilegpu.alloc offset(9216) : <64x64xf16, #tilegpu.shared<pad = 8>>
// CHECK: scf.for
// CHECK: tilegpu.alloc offset(0) : <64x64xf16, #tilegpu.shared<pad = 8>>
func.func @live_through_loop(%v: !tile.view<?x?x?x64xf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = tilegpu.alloc : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %a0 = tilegpu.async_copy %v[%c0, %c0, %c0, %c0] into %a : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %b = tilegpu.alloc : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %bc = tilegpu.async_copy %v[%c0, %c0, %c0, %c0] into %b : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %r = scf.for %j = %c0 to %n step %c1 iter_args(%cur = %a0) -> (!tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>) {
    %w = tilegpu.async_wait %cur : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
    %next = tilegpu.async_copy %v[%c0, %c0, %j, %c0] into %a : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
    scf.yield %next : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  }
  %after = tilegpu.alloc : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %ac = tilegpu.async_copy %v[%c0, %c0, %c0, %c0] into %after : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  return
}

// -----

// A loop result waited for after the loop extends the buffer's life past
// the loop, through the loop's result.

// CHECK-LABEL: func.func @live_through_loop_result
// CHECK-SAME: tilegpu.shared_bytes = 18432 : i64
// CHECK: tilegpu.alloc offset(0) : <64x64xf16, #tilegpu.shared<pad = 8>>
// CHECK: scf.for
// CHECK: tilegpu.alloc offset(9216) : <64x64xf16, #tilegpu.shared<pad = 8>>
func.func @live_through_loop_result(%v: !tile.view<?x?x?x64xf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = tilegpu.alloc : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %a0 = tilegpu.async_copy %v[%c0, %c0, %c0, %c0] into %a : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %r = scf.for %j = %c0 to %n step %c1 iter_args(%cur = %a0) -> (!tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>) {
    %next = tilegpu.async_copy %v[%c0, %c0, %j, %c0] into %a : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
    scf.yield %next : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  }
  %b = tilegpu.alloc : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %bc = tilegpu.async_copy %v[%c0, %c0, %c0, %c0] into %b : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %w = tilegpu.async_wait %r : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  return
}

// -----

// Tensor memory is a space of its own (columns, aligned to 32): it neither
// pushes shared buffers along nor counts in tilegpu.shared_bytes.

// CHECK-LABEL: func.func @tensor_memory_apart
// CHECK-SAME: tilegpu.shared_bytes = 18432 : i64
// CHECK: tilegpu.alloc offset(0) : <2x128x64xf32, #tilegpu.tensor_memory<>>
// CHECK: tilegpu.alloc offset(0) : <2x64x64xf16, #tilegpu.shared<pad = 8>>
// CHECK: tilegpu.alloc offset(128) : <2x128x32xf32, #tilegpu.tensor_memory<>>
func.func @tensor_memory_apart(%i: index) {
  %s = tilegpu.alloc : !tilegpu.buffer<2x128x64xf32, #tilegpu.tensor_memory<>>
  %b = tilegpu.alloc : !tilegpu.buffer<2x64x64xf16, #tilegpu.shared<pad = 8>>
  %p = tilegpu.alloc : !tilegpu.buffer<2x128x32xf32, #tilegpu.tensor_memory<>>
  %s0 = tilegpu.slot %s[%i] : !tilegpu.buffer<2x128x64xf32, #tilegpu.tensor_memory<>> -> !tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>
  %b0 = tilegpu.slot %b[%i] : !tilegpu.buffer<2x64x64xf16, #tilegpu.shared<pad = 8>> -> !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %p0 = tilegpu.slot %p[%i] : !tilegpu.buffer<2x128x32xf32, #tilegpu.tensor_memory<>> -> !tilegpu.buffer<128x32xf32, #tilegpu.tensor_memory<>>
  %s1 = tilegpu.slot %s[%i] : !tilegpu.buffer<2x128x64xf32, #tilegpu.tensor_memory<>> -> !tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>
  return
}

// -----

// A tensor-memory buffer lives from its first use (a shared one from its
// alloc): the accumulators of two loops that run one after the other share
// their columns.

// CHECK-LABEL: func.func @tensor_memory_from_first_use
// CHECK: tilegpu.alloc offset(0) : <128x128xf32, #tilegpu.tensor_memory<>>
// CHECK: tilegpu.alloc offset(0) : <128x128xf32, #tilegpu.tensor_memory<>>
// CHECK: tilegpu.alloc offset(128) : <128x64xf32, #tilegpu.tensor_memory<>>
func.func @tensor_memory_from_first_use(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %s1 = tilegpu.alloc : !tilegpu.buffer<128x128xf32, #tilegpu.tensor_memory<>>
  %s2 = tilegpu.alloc : !tilegpu.buffer<128x128xf32, #tilegpu.tensor_memory<>>
  %o = tilegpu.alloc : !tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>
  %r1 = scf.for %k = %c0 to %n step %c1 iter_args(%a = %o) -> (!tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>) {
    %t = tilegpu.tmem_load %s1 : !tilegpu.buffer<128x128xf32, #tilegpu.tensor_memory<>> -> tensor<128x128xf32, #tilegpu.tmem_lanes<acc, warps = 4>>
    scf.yield %a : !tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>
  }
  %r2 = scf.for %k = %c0 to %n step %c1 iter_args(%a = %r1) -> (!tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>) {
    %t = tilegpu.tmem_load %s2 : !tilegpu.buffer<128x128xf32, #tilegpu.tensor_memory<>> -> tensor<128x128xf32, #tilegpu.tmem_lanes<acc, warps = 4>>
    scf.yield %a : !tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>
  }
  return
}

// -----

// Inside an outer loop (the backward's loop over a group's query heads),
// a tensor-memory buffer whose uses all lie in one inner loop lives while
// that loop runs, if its first use overwrites it (a product that does not
// accumulate, a store of a whole tile): %s1 and %s2 share columns. %keep's
// first use adds to what an earlier iteration of the outer loop left, so
// it lives through the whole outer loop; %acc, used by both inner loops,
// too.

// CHECK-LABEL: func.func @tensor_memory_nested
// CHECK: tilegpu.alloc offset(0) : <128x128xf32, #tilegpu.tensor_memory<>>
// CHECK-NEXT: tilegpu.alloc offset(0) : <128x128xf32, #tilegpu.tensor_memory<>>
// CHECK-NEXT: tilegpu.alloc offset(128) : <128x64xf32, #tilegpu.tensor_memory<>>
// CHECK-NEXT: tilegpu.alloc offset(192) : <128x64xf32, #tilegpu.tensor_memory<>>
func.func @tensor_memory_nested(%n: index, %a: !tilegpu.buffer<128x64xf16, #tilegpu.shared<swizzle = 128>>,
                                %b: !tilegpu.buffer<64x128xf16, #tilegpu.shared<swizzle = 128>>,
                                %b64: !tilegpu.buffer<64x64xf16, #tilegpu.shared<swizzle = 128>>,
                                %x: tensor<128x128xf32, #tilegpu.tmem_lanes<acc, warps = 4>>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %false = arith.constant false
  %true = arith.constant true
  %s1 = tilegpu.alloc : !tilegpu.buffer<128x128xf32, #tilegpu.tensor_memory<>>
  %s2 = tilegpu.alloc : !tilegpu.buffer<128x128xf32, #tilegpu.tensor_memory<>>
  %acc = tilegpu.alloc : !tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>
  %keep = tilegpu.alloc : !tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>
  scf.for %h = %c0 to %n step %c1 {
    scf.for %k = %c0 to %n step %c1 {
      tilegpu.tmem_mma %a, %b, %s1, accumulate(%false)
          : !tilegpu.buffer<128x64xf16, #tilegpu.shared<swizzle = 128>>, !tilegpu.buffer<64x128xf16, #tilegpu.shared<swizzle = 128>>,
            !tilegpu.buffer<128x128xf32, #tilegpu.tensor_memory<>>
      %t = tilegpu.tmem_load %s1 : !tilegpu.buffer<128x128xf32, #tilegpu.tensor_memory<>> -> tensor<128x128xf32, #tilegpu.tmem_lanes<acc, warps = 4>>
      tilegpu.tmem_mma %a, %b64, %acc, accumulate(%true)
          : !tilegpu.buffer<128x64xf16, #tilegpu.shared<swizzle = 128>>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<swizzle = 128>>,
            !tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>
      tilegpu.tmem_mma %a, %b64, %keep, accumulate(%true)
          : !tilegpu.buffer<128x64xf16, #tilegpu.shared<swizzle = 128>>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<swizzle = 128>>,
            !tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>
    }
    scf.for %k = %c0 to %n step %c1 {
      tilegpu.tmem_store %x, %s2 : tensor<128x128xf32, #tilegpu.tmem_lanes<acc, warps = 4>>, !tilegpu.buffer<128x128xf32, #tilegpu.tensor_memory<>>
      %t = tilegpu.tmem_load %s2 : !tilegpu.buffer<128x128xf32, #tilegpu.tensor_memory<>> -> tensor<128x128xf32, #tilegpu.tmem_lanes<acc, warps = 4>>
      tilegpu.tmem_mma %a, %b64, %acc, accumulate(%true)
          : !tilegpu.buffer<128x64xf16, #tilegpu.shared<swizzle = 128>>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<swizzle = 128>>,
            !tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>
    }
  }
  return
}

// -----

// Within one loop's body (nested in another), buffers whose uses lie in
// disjoint stretches share columns where each starts with a product (the
// backward's Sᵀ, dPᵀ and dQ): %b's product is issued after the threads'
// read of %a and after %a's products, by the same issuer; %a's next
// product after the threads' read of %b. %c, first written by the threads,
// does not follow %b, which a product (still running) last wrote.

// CHECK-LABEL: func.func @tensor_memory_in_body
// CHECK: tilegpu.alloc offset(0) : <128x128xf32, #tilegpu.tensor_memory<>>
// CHECK-NEXT: tilegpu.alloc offset(0) : <128x128xf32, #tilegpu.tensor_memory<>>
// CHECK-NEXT: tilegpu.alloc offset(128) : <128x128xf32, #tilegpu.tensor_memory<>>
func.func @tensor_memory_in_body(%n: index, %a: !tilegpu.buffer<128x64xf16, #tilegpu.shared<swizzle = 128>>,
                                 %b: !tilegpu.buffer<64x128xf16, #tilegpu.shared<swizzle = 128>>,
                                 %x: tensor<128x128xf32, #tilegpu.tmem_lanes<acc, warps = 4>>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %false = arith.constant false
  %sa = tilegpu.alloc : !tilegpu.buffer<128x128xf32, #tilegpu.tensor_memory<>>
  %sb = tilegpu.alloc : !tilegpu.buffer<128x128xf32, #tilegpu.tensor_memory<>>
  %sc = tilegpu.alloc : !tilegpu.buffer<128x128xf32, #tilegpu.tensor_memory<>>
  scf.for %h = %c0 to %n step %c1 {
    scf.for %k = %c0 to %n step %c1 {
      tilegpu.tmem_mma %a, %b, %sa, accumulate(%false)
          : !tilegpu.buffer<128x64xf16, #tilegpu.shared<swizzle = 128>>, !tilegpu.buffer<64x128xf16, #tilegpu.shared<swizzle = 128>>,
            !tilegpu.buffer<128x128xf32, #tilegpu.tensor_memory<>>
      %t = tilegpu.tmem_load %sa : !tilegpu.buffer<128x128xf32, #tilegpu.tensor_memory<>> -> tensor<128x128xf32, #tilegpu.tmem_lanes<acc, warps = 4>>
      tilegpu.tmem_mma %a, %b, %sb, accumulate(%false)
          : !tilegpu.buffer<128x64xf16, #tilegpu.shared<swizzle = 128>>, !tilegpu.buffer<64x128xf16, #tilegpu.shared<swizzle = 128>>,
            !tilegpu.buffer<128x128xf32, #tilegpu.tensor_memory<>>
      tilegpu.tmem_store %x, %sc : tensor<128x128xf32, #tilegpu.tmem_lanes<acc, warps = 4>>, !tilegpu.buffer<128x128xf32, #tilegpu.tensor_memory<>>
      %u = tilegpu.tmem_load %sc : !tilegpu.buffer<128x128xf32, #tilegpu.tensor_memory<>> -> tensor<128x128xf32, #tilegpu.tmem_lanes<acc, warps = 4>>
    }
  }
  return
}

// -----

// P over S (tilegpu.tmem_alias): the alias takes no columns of its own, and
// S lives as long as the alias is used, so the buffer allocated after the
// loop that reads P does not take S's columns while the loop runs.

// CHECK-LABEL: func.func @tensor_memory_alias
// CHECK: %[[S:.*]] = tilegpu.alloc offset(0) : <256x128xf32, #tilegpu.tensor_memory<>>
// CHECK-NEXT: tilegpu.tmem_alias %[[S]]
// CHECK: tilegpu.alloc offset(256) : <256x64xf32, #tilegpu.tensor_memory<>>
func.func @tensor_memory_alias(%n: index, %x: tensor<256x128xf16, #tilegpu.tmem_lanes<acc, warps = 8, row_blocks = 2>>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %s = tilegpu.alloc : !tilegpu.buffer<256x128xf32, #tilegpu.tensor_memory<>>
  %p = tilegpu.tmem_alias %s : !tilegpu.buffer<256x128xf32, #tilegpu.tensor_memory<>>
      -> !tilegpu.buffer<256x128xf16, #tilegpu.tensor_memory<packed = true, block_columns = 128>>
  %o = tilegpu.alloc : !tilegpu.buffer<256x64xf32, #tilegpu.tensor_memory<>>
  %t0 = tilegpu.tmem_load %s : !tilegpu.buffer<256x128xf32, #tilegpu.tensor_memory<>> -> tensor<256x128xf32, #tilegpu.tmem_lanes<acc, warps = 8, row_blocks = 2>>
  scf.for %k = %c0 to %n step %c1 {
    %t = tilegpu.tmem_load %o : !tilegpu.buffer<256x64xf32, #tilegpu.tensor_memory<>> -> tensor<256x64xf32, #tilegpu.tmem_lanes<acc, warps = 8, row_blocks = 2>>
    tilegpu.tmem_store %x, %p : tensor<256x128xf16, #tilegpu.tmem_lanes<acc, warps = 8, row_blocks = 2>>, !tilegpu.buffer<256x128xf16, #tilegpu.tensor_memory<packed = true, block_columns = 128>>
  }
  return
}

// -----

// Within the target's shared memory per block: two 64 KiB buffers whose
// lives do not overlap share their bytes on sm_86 (99 KiB).

// CHECK-LABEL: func.func @fits_by_reuse
// CHECK-SAME: tilegpu.shared_bytes = 65536 : i64
// CHECK: tilegpu.alloc offset(0) : <256x128xf16, #tilegpu.shared<>>
// CHECK: tilegpu.alloc offset(0) : <256x128xf16, #tilegpu.shared<>>
module attributes {tilegpu.target = #tilegpu.target<chip = "sm_86", family = mma_sync>} {
  func.func @fits_by_reuse(%v: !tile.view<?x?x?x128xf16>) {
    %c0 = arith.constant 0 : index
    %a = tilegpu.alloc : !tilegpu.buffer<256x128xf16, #tilegpu.shared<>>
    %ac = tilegpu.async_copy %v[%c0, %c0, %c0, %c0] into %a : !tile.view<?x?x?x128xf16>, !tilegpu.buffer<256x128xf16, #tilegpu.shared<>>
    %b = tilegpu.alloc : !tilegpu.buffer<256x128xf16, #tilegpu.shared<>>
    %bc = tilegpu.async_copy %v[%c0, %c0, %c0, %c0] into %b : !tile.view<?x?x?x128xf16>, !tilegpu.buffer<256x128xf16, #tilegpu.shared<>>
    return
  }
}

// -----

// Over it: the same two buffers live together need 128 KiB.

module attributes {tilegpu.target = #tilegpu.target<chip = "sm_86", family = mma_sync>} {
  // expected-error @+1 {{tilegpu-allocate-memory: the kernel needs 131072 bytes of shared memory, more than the 101376 a block of sm_86 has}}
  func.func @negative_over_shared_memory(%v: !tile.view<?x?x?x128xf16>) {
    %c0 = arith.constant 0 : index
    %a = tilegpu.alloc : !tilegpu.buffer<256x128xf16, #tilegpu.shared<>>
    %b = tilegpu.alloc : !tilegpu.buffer<256x128xf16, #tilegpu.shared<>>
    %ac = tilegpu.async_copy %v[%c0, %c0, %c0, %c0] into %a : !tile.view<?x?x?x128xf16>, !tilegpu.buffer<256x128xf16, #tilegpu.shared<>>
    %bc = tilegpu.async_copy %v[%c0, %c0, %c0, %c0] into %b : !tile.view<?x?x?x128xf16>, !tilegpu.buffer<256x128xf16, #tilegpu.shared<>>
    return
  }
}

// -----

// The same kernel fits on sm_80 (163 KiB).

// CHECK-LABEL: func.func @fits_on_sm_80
// CHECK-SAME: tilegpu.shared_bytes = 131072 : i64
module attributes {tilegpu.target = #tilegpu.target<chip = "sm_80", family = mma_sync>} {
  func.func @fits_on_sm_80(%v: !tile.view<?x?x?x128xf16>) {
    %c0 = arith.constant 0 : index
    %a = tilegpu.alloc : !tilegpu.buffer<256x128xf16, #tilegpu.shared<>>
    %b = tilegpu.alloc : !tilegpu.buffer<256x128xf16, #tilegpu.shared<>>
    %ac = tilegpu.async_copy %v[%c0, %c0, %c0, %c0] into %a : !tile.view<?x?x?x128xf16>, !tilegpu.buffer<256x128xf16, #tilegpu.shared<>>
    %bc = tilegpu.async_copy %v[%c0, %c0, %c0, %c0] into %b : !tile.view<?x?x?x128xf16>, !tilegpu.buffer<256x128xf16, #tilegpu.shared<>>
    return
  }
}

// -----

// Buffers belong at the top level of the kernel, where their lives are
// measured.

func.func @negative_alloc_in_loop(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %j = %c0 to %n step %c1 {
    // expected-error @+1 {{'tilegpu.alloc' op tilegpu-allocate-memory: allocations belong at the top level of the kernel}}
    %a = tilegpu.alloc : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  }
  return
}

// -----

// A buffer yielded by an scf.if lives on in the if's result: %a, waited
// for and read through %r after %b's allocation, keeps its bytes, and %b
// goes after it.

// CHECK-LABEL: func.func @live_through_if_result
// CHECK-SAME: tilegpu.shared_bytes = 18432 : i64
// CHECK: %[[A:.*]] = tilegpu.alloc offset(0) : <64x64xf16, #tilegpu.shared<pad = 8>>
// CHECK: scf.if
// CHECK: tilegpu.async_copy %{{.*}} into %[[A]]
// CHECK: %[[B:.*]] = tilegpu.alloc offset(9216) : <64x64xf16, #tilegpu.shared<pad = 8>>
// CHECK: tilegpu.async_copy %{{.*}} into %[[B]]
func.func @live_through_if_result(%v: !tile.view<?x?x?x64xf16>, %p: i1) -> tensor<64x64xf16, #tilegpu.mma_sync<opa, warps = 4>> {
  %c0 = arith.constant 0 : index
  %a = tilegpu.alloc : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %r = scf.if %p -> (!tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>) {
    %c = tilegpu.async_copy %v[%c0, %c0, %c0, %c0] into %a : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
    scf.yield %c : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  } else {
    scf.yield %a : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  }
  %b = tilegpu.alloc : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %bc = tilegpu.async_copy %v[%c0, %c0, %c0, %c0] into %b : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %w = tilegpu.async_wait %r : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  %l = tilegpu.local_load %w : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>> -> tensor<64x64xf16, #tilegpu.mma_sync<opa, warps = 4>>
  return %l : tensor<64x64xf16, #tilegpu.mma_sync<opa, warps = 4>>
}

// -----

// Tensor memory has 512 columns per CTA. Each ring of two 128-column f32
// tiles takes 256 (the buffer type accepts it); three of them live
// together need 768.

module attributes {tilegpu.target = #tilegpu.target<chip = "sm_100a", family = tcgen05>} {
  // expected-error @+1 {{tilegpu-allocate-memory: the kernel needs 768 columns of tensor memory, more than the 512 there are}}
  func.func @negative_over_tensor_memory(%i: index) {
    %s = tilegpu.alloc : !tilegpu.buffer<2x128x128xf32, #tilegpu.tensor_memory<>>
    %o = tilegpu.alloc : !tilegpu.buffer<2x128x128xf32, #tilegpu.tensor_memory<>>
    %p = tilegpu.alloc : !tilegpu.buffer<2x128x128xf32, #tilegpu.tensor_memory<>>
    %s0 = tilegpu.slot %s[%i] : !tilegpu.buffer<2x128x128xf32, #tilegpu.tensor_memory<>> -> !tilegpu.buffer<128x128xf32, #tilegpu.tensor_memory<>>
    %o0 = tilegpu.slot %o[%i] : !tilegpu.buffer<2x128x128xf32, #tilegpu.tensor_memory<>> -> !tilegpu.buffer<128x128xf32, #tilegpu.tensor_memory<>>
    %p0 = tilegpu.slot %p[%i] : !tilegpu.buffer<2x128x128xf32, #tilegpu.tensor_memory<>> -> !tilegpu.buffer<128x128xf32, #tilegpu.tensor_memory<>>
    %s1 = tilegpu.slot %s[%i] : !tilegpu.buffer<2x128x128xf32, #tilegpu.tensor_memory<>> -> !tilegpu.buffer<128x128xf32, #tilegpu.tensor_memory<>>
    %o1 = tilegpu.slot %o[%i] : !tilegpu.buffer<2x128x128xf32, #tilegpu.tensor_memory<>> -> !tilegpu.buffer<128x128xf32, #tilegpu.tensor_memory<>>
    return
  }
}
