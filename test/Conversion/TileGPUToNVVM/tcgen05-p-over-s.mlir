// RUN: tiled-attn-opt %s --convert-tilegpu-to-nvvm | FileCheck %s
// RUN: tiled-attn-opt %s --tilegpu-to-ptx="chip=sm_100a" \
// RUN:   | sed -n 's/.*assembly = "\([^"]*\)".*/\1/p' | sed -e 's/\\0A/\n/g' -e 's/\\09/\t/g' > %t.ptx
// RUN: %if ptxas %{ ptxas -arch=sm_100a -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS %}

// P over S (FlashAttention-4's tensor-memory layout at D = 128 with
// 128-key blocks): O takes columns 0-255 and S 256-511, two row blocks
// each; P (packed) is a tilegpu.tmem_alias of S whose row block r starts
// where S's does, 128 columns apart, so block 1 of P is at column 384, not
// 320 as a buffer of its own blocks side by side would put it.

// CHECK-LABEL: gpu.func @tcgen05_p_over_s
// CHECK-SAME: tilegpu.tmem_columns = 512 : i64
// S's address (base + 256) is P's.
// CHECK: %[[S:.*]] = arith.addi %{{.*}}, %c256_i32 : i32
// The store of P: a thread of row block 1 starts 128 columns (S's step) on.
// CHECK: nvvm.tcgen05.ld
// CHECK: %[[BLK:.*]] = arith.divui %{{.*}}, %c4 : index
// CHECK: arith.muli %[[BLK]], %c128 : index
// CHECK: nvvm.tcgen05.st
// P.V: threads 0 and 128 issue, block b = tid / 128: its A 128 b columns
// into P (S's step, not P's own 64; then 8 columns a k-step), its D 128 b
// columns into O.
// CHECK: nvvm.barrier id
// CHECK: %[[PB:.*]] = arith.divui %[[T:.*]], %c128 : index
// CHECK-NEXT: arith.remui %[[T]], %c128 : index
// CHECK-NEXT: arith.cmpi eq, %{{.*}}, %c0 : index
// CHECK-NEXT: scf.if
// CHECK-NEXT: nvvm.tcgen05.fence <after>
// CHECK-NEXT: arith.muli %[[PB]], %c128 : index
// CHECK: %[[PA:.*]] = arith.muli %[[PB]], %c128 : index
// CHECK: %[[A0:.*]] = arith.index_castui %[[PA]] : index to i32
// CHECK-NEXT: arith.addi %[[S]], %[[A0]] : i32
// CHECK: nvvm.tcgen05.mma
// CHECK: arith.addi %[[PA]], %c8 : index
// CHECK: nvvm.tcgen05.mma
// PTXAS: 0 bytes spill stores, 0 bytes spill loads

module attributes {tilegpu.target = #tilegpu.target<chip = "sm_100a", family = tcgen05>} {
  func.func @tcgen05_p_over_s(%o: !tile.view<?x?x?x128xf32>)
      attributes {tilegpu.shared_bytes = 98320 : i64, tilegpu.warps = 8 : i64} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %false = arith.constant false
    %true = arith.constant true
    %q = tilegpu.alloc offset(0) : !tilegpu.buffer<256x128xf16, #tilegpu.shared<swizzle = 128>>
    %k = tilegpu.alloc offset(65536) : !tilegpu.buffer<128x128xf16, #tilegpu.shared<swizzle = 128, transposed = true>>
    %v = tilegpu.alloc offset(65536) : !tilegpu.buffer<128x128xf16, #tilegpu.shared<swizzle = 128>>
    %bars = tilegpu.alloc offset(98304) : !tilegpu.buffer<2xi64, #tilegpu.shared<>>
    %acc = tilegpu.alloc offset(0) : !tilegpu.buffer<256x128xf32, #tilegpu.tensor_memory<>>
    %s = tilegpu.alloc offset(256) : !tilegpu.buffer<256x128xf32, #tilegpu.tensor_memory<>>
    %p = tilegpu.tmem_alias %s : !tilegpu.buffer<256x128xf32, #tilegpu.tensor_memory<>>
        -> !tilegpu.buffer<256x128xf16, #tilegpu.tensor_memory<packed = true, block_columns = 128>>
    tilegpu.mbarrier_init %bars[%c0], count(1) : !tilegpu.buffer<2xi64, #tilegpu.shared<>>
    tilegpu.mbarrier_init %bars[%c1], count(1) : !tilegpu.buffer<2xi64, #tilegpu.shared<>>
    gpu.barrier
    tilegpu.group_barrier {groups = 2}
    tilegpu.tmem_mma %q, %k, %s, accumulate(%false)
        : !tilegpu.buffer<256x128xf16, #tilegpu.shared<swizzle = 128>>,
          !tilegpu.buffer<128x128xf16, #tilegpu.shared<swizzle = 128, transposed = true>>,
          !tilegpu.buffer<256x128xf32, #tilegpu.tensor_memory<>>
    tilegpu.mma_commit %bars[%c0] {groups = 2} : !tilegpu.buffer<2xi64, #tilegpu.shared<>>
    %g = tilegpu.group_id {groups = 2}
    tilegpu.mbarrier_wait %bars[%g], phase(%false) : !tilegpu.buffer<2xi64, #tilegpu.shared<>>
    %sr = tilegpu.tmem_load %s : !tilegpu.buffer<256x128xf32, #tilegpu.tensor_memory<>>
        -> tensor<256x128xf32, #tilegpu.tmem_lanes<acc, warps = 8, row_blocks = 2>>
    %pr = arith.truncf %sr : tensor<256x128xf32, #tilegpu.tmem_lanes<acc, warps = 8, row_blocks = 2>>
        to tensor<256x128xf16, #tilegpu.tmem_lanes<acc, warps = 8, row_blocks = 2>>
    tilegpu.tmem_store %pr, %p : tensor<256x128xf16, #tilegpu.tmem_lanes<acc, warps = 8, row_blocks = 2>>,
        !tilegpu.buffer<256x128xf16, #tilegpu.tensor_memory<packed = true, block_columns = 128>>
    tilegpu.group_barrier {groups = 2}
    tilegpu.tmem_mma %p, %v, %acc, accumulate(%false)
        : !tilegpu.buffer<256x128xf16, #tilegpu.tensor_memory<packed = true, block_columns = 128>>,
          !tilegpu.buffer<128x128xf16, #tilegpu.shared<swizzle = 128>>,
          !tilegpu.buffer<256x128xf32, #tilegpu.tensor_memory<>>
    tilegpu.mma_commit %bars[%c0] {groups = 2} : !tilegpu.buffer<2xi64, #tilegpu.shared<>>
    %g2 = tilegpu.group_id {groups = 2}
    tilegpu.mbarrier_wait %bars[%g2], phase(%true) : !tilegpu.buffer<2xi64, #tilegpu.shared<>>
    %or = tilegpu.tmem_load %acc : !tilegpu.buffer<256x128xf32, #tilegpu.tensor_memory<>>
        -> tensor<256x128xf32, #tilegpu.tmem_lanes<acc, warps = 8, row_blocks = 2>>
    tile.store %or, %o[%c0, %c0, %c0, %c0] : tensor<256x128xf32, #tilegpu.tmem_lanes<acc, warps = 8, row_blocks = 2>>, !tile.view<?x?x?x128xf32>
    return
  }
}
