// RUN: tiled-attn-opt %s -split-input-file --merge-barriers | FileCheck %s
// RUN: echo "module {}" | tiled-attn-opt --tile-generate-sdpa="head-dim=64 block-m=64 block-n=64" \
// RUN:   --tile-schedule="stages=2 prefetch-streams=1 refill-after-use=1" \
// RUN:   --tile-assign-layouts --convert-tile-to-gpu --canonicalize --cse --merge-barriers \
// RUN:   | FileCheck %s --check-prefix=FA2

// A barrier that frees a buffer for its refill, then register work, then
// the wait and barrier that publish another stream's copy: one barrier,
// after the wait, whose count drops by the group committed in between.

// CHECK-LABEL: gpu.func @refill_then_wait
// CHECK: nvgpu.ldmatrix
// CHECK-NEXT: nvvm.cp.async.wait.group 0
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: nvgpu.device_async_copy
// CHECK-NEXT: nvgpu.device_async_create_group
// CHECK-NEXT: gpu.shuffle
// CHECK-NEXT: nvvm.vote.sync
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: nvgpu.ldmatrix
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return
gpu.module @m {
  gpu.func @refill_then_wait(%a: memref<16x16xf16, 3>, %b: memref<16x16xf16, 3>,
                             %g: memref<16x16xf16>, %x: f32, %p: i1) kernel {
    %c0 = arith.constant 0 : index
    %m = arith.constant -1 : i32
    %c1 = arith.constant 1 : i32
    %r0 = nvgpu.ldmatrix %a[%c0, %c0] {numTiles = 4 : i32, transpose = false} : memref<16x16xf16, 3> -> vector<4x2xf16>
    gpu.barrier
    %t = nvgpu.device_async_copy %g[%c0, %c0], %a[%c0, %c0], 8 : memref<16x16xf16> to memref<16x16xf16, 3>
    %grp = nvgpu.device_async_create_group %t
    %s, %v = gpu.shuffle xor %x, %c1, %c1 : f32
    %any = nvvm.vote.sync any %m, %p -> i1
    %y = arith.mulf %s, %x : f32
    nvvm.cp.async.wait.group 1
    gpu.barrier
    %r1 = nvgpu.ldmatrix %b[%c0, %c0] {numTiles = 4 : i32, transpose = false} : memref<16x16xf16, 3> -> vector<4x2xf16>
    gpu.return
  }
}

// -----

// A shared-memory read between the barriers keeps both.

// CHECK-LABEL: gpu.func @read_between
// CHECK: gpu.barrier
// CHECK-NEXT: nvgpu.ldmatrix
// CHECK-NEXT: nvvm.cp.async.wait.group 0
// CHECK-NEXT: gpu.barrier
gpu.module @m {
  gpu.func @read_between(%a: memref<16x16xf16, 3>) kernel {
    %c0 = arith.constant 0 : index
    gpu.barrier
    %r = nvgpu.ldmatrix %a[%c0, %c0] {numTiles = 4 : i32, transpose = false} : memref<16x16xf16, 3> -> vector<4x2xf16>
    nvvm.cp.async.wait.group 0
    gpu.barrier
    gpu.return
  }
}

// -----

// A wait for a copy issued after the first barrier cannot move above it:
// both barriers stay, and the wait keeps its count.

// CHECK-LABEL: gpu.func @wait_for_later_copy
// CHECK: gpu.barrier
// CHECK-NEXT: nvgpu.device_async_copy
// CHECK-NEXT: nvgpu.device_async_create_group
// CHECK-NEXT: nvgpu.device_async_wait %{{.*}} {numGroups = 0 : i32}
// CHECK-NEXT: gpu.barrier
gpu.module @m {
  gpu.func @wait_for_later_copy(%a: memref<16x16xf16, 3>, %g: memref<16x16xf16>) kernel {
    %c0 = arith.constant 0 : index
    gpu.barrier
    %t = nvgpu.device_async_copy %g[%c0, %c0], %a[%c0, %c0], 8 : memref<16x16xf16> to memref<16x16xf16, 3>
    %grp = nvgpu.device_async_create_group %t
    nvgpu.device_async_wait %grp {numGroups = 0 : i32}
    gpu.barrier
    gpu.return
  }
}

// -----

// A global store between the barriers (it may alias nothing shared, but the
// pass does not assume so) keeps both.

// CHECK-LABEL: gpu.func @store_between
// CHECK: gpu.barrier
// CHECK-NEXT: memref.store
// CHECK-NEXT: gpu.barrier
gpu.module @m {
  gpu.func @store_between(%g: memref<4xf32>, %x: f32) kernel {
    %c0 = arith.constant 0 : index
    gpu.barrier
    memref.store %x, %g[%c0] : memref<4xf32>
    gpu.barrier
    gpu.return
  }
}

// -----

// Barriers in different blocks (a loop body and the code around it) are
// never merged.

// CHECK-LABEL: gpu.func @across_blocks
// CHECK: gpu.barrier
// CHECK: scf.for
// CHECK-NEXT: gpu.barrier
gpu.module @m {
  gpu.func @across_blocks(%n: index) kernel {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    gpu.barrier
    scf.for %i = %c0 to %n step %c1 {
      gpu.barrier
    }
    gpu.return
  }
}

// -----

// FlashAttention-2's loop: K prefetched one block ahead and refilled after
// Q·Kᵀ, V copied at the top of its iteration. Two barriers per block: the
// one that publishes K_j also frees V's buffer, the one that publishes V_j
// also frees K's.

// FA2-LABEL: gpu.func @sdpa_fwd
// FA2: scf.for
// FA2-NOT: gpu.barrier
// FA2: nvvm.cp.async.wait.group 0
// FA2-NEXT: gpu.barrier
// FA2-NOT: gpu.barrier
// FA2: nvgpu.device_async_copy
// FA2-NOT: gpu.barrier
// FA2: nvgpu.mma.sync
// FA2-NOT: gpu.barrier
// FA2: nvgpu.device_async_wait %{{.*}} {numGroups = 0 : i32}
// FA2-NEXT: gpu.barrier
// FA2-NOT: gpu.barrier
// FA2: nvgpu.device_async_copy
// FA2-NOT: gpu.barrier
// FA2: scf.yield
