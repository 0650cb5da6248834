// RUN: tiled-attn-opt %s --convert-tilegpu-to-nvvm | FileCheck %s
// RUN: tiled-attn-opt %s --tilegpu-to-ptx="chip=sm_100a" \
// RUN:   | sed -n 's/.*assembly = "\([^"]*\)".*/\1/p' | sed -e 's/\\0A/\n/g' -e 's/\\09/\t/g' > %t.ptx
// RUN: FileCheck %s --check-prefix=PTX --input-file=%t.ptx
// RUN: %if ptxas %{ ptxas -arch=sm_100a -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS %}

// The hand-off of a correction of O (FlashAttention-4's correction
// warpgroup, here one per Q tile): the softmax warps write their rows'
// factors to shared memory (tilegpu.local_store of a tmem_lanes<rows>
// vector: each thread its row's element, at 128 x block + 32 x (warp mod 4)
// + lane) and arrive; the correction warps, a role of their own starting at
// warp 8 (thread ids less 256), wait, read the same rows back and scale O in
// tensor memory.

// CHECK-LABEL: gpu.func @correction_hand_off
// Softmax (warps 0-7): row = 128 x (warp / 4) + 32 x (warp mod 4) + lane,
// one store, then each warp's arrival.
// CHECK: arith.cmpi ult, %{{.*}}, %c8 : index
// CHECK: %[[WARP:.*]] = arith.divui %[[TID:.*]], %c32 : index
// CHECK-NEXT: %[[LANE:.*]] = arith.remui %[[TID]], %c32 : index
// CHECK-NEXT: %[[QUAD:.*]] = arith.remui %[[WARP]], %c4 : index
// CHECK-NEXT: %[[BLOCK:.*]] = arith.divui %[[WARP]], %c4 : index
// CHECK-NEXT: %[[B128:.*]] = arith.muli %[[BLOCK]], %c128 : index
// CHECK-NEXT: %[[Q32:.*]] = arith.muli %[[QUAD]], %c32 : index
// CHECK-NEXT: %[[IN:.*]] = arith.addi %[[Q32]], %[[LANE]] : index
// CHECK-NEXT: %[[ROW:.*]] = arith.addi %[[B128]], %[[IN]] : index
// CHECK-NEXT: memref.store %{{.*}}, %{{.*}}[%[[ROW]]] : memref<256xf32, #gpu.address_space<workgroup>>
// CHECK-NEXT: nvvm.bar.warp.sync
// CHECK: nvvm.mbarrier.arrive
// Warp 0 frees tensor memory only when the correction warps, which read
// and write it, have arrived on the release barrier (15: 32 + 256 threads).
// CHECK: nvvm.barrier id = %c15_i32 number_of_threads = %c288_i32
// CHECK: nvvm.tcgen05.dealloc
// Correction (warps 8-15, thread ids less 256): the wait, the same rows
// read back, then O scaled (tcgen05.ld, .st).
// CHECK: arith.subi %{{.*}}, %c256 : index
// CHECK: nvvm.mbarrier.try_wait
// CHECK: %[[CT:.*]] = arith.subi %{{.*}}, %c256 : index
// CHECK-NEXT: %[[CWARP:.*]] = arith.divui %[[CT]], %c32 : index
// CHECK-NEXT: %[[CLANE:.*]] = arith.remui %[[CT]], %c32 : index
// CHECK: memref.load %{{.*}}[%{{.*}}] : memref<256xf32, #gpu.address_space<workgroup>>
// CHECK: nvvm.tcgen05.ld
// CHECK: nvvm.tcgen05.st
// The epilogue (tilegpu.tmem_scale_store): per 16 columns, load, wait,
// scale, convert to bf16, two 16-byte stores where they lie in the view;
// then the arrival on the release barrier.
// CHECK: nvvm.tcgen05.wait <store>
// CHECK: nvvm.tcgen05.ld
// CHECK-NEXT: nvvm.tcgen05.wait <load>
// CHECK: arith.mulf %{{.*}}, %{{.*}} : vector<16xf32>
// CHECK-NEXT: arith.truncf %{{.*}} : vector<16xf32> to vector<16xbf16>
// CHECK: scf.if
// CHECK-NEXT: vector.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<?x?x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>, vector<8xbf16>
// CHECK: nvvm.barrier.arrive id = %{{.*}} number_of_threads = %{{.*}}
// With 8 warps on one block of 128 rows, the two warps of a quadrant hold
// each row: the first (column group 0) writes it.
// CHECK-LABEL: gpu.func @column_groups_write_once
// CHECK: %[[GROUP:.*]] = arith.divui %{{.*}}, %c4 : index
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[GROUP]], %c0 : index
// CHECK-NEXT: scf.if %[[FIRST]] {
// CHECK-NEXT: memref.store
// CHECK-NEXT: }

// PTX-LABEL: .entry correction_hand_off
// PTX: st.shared.b32 [%r{{[0-9]+}}], %r{{[0-9]+}};
// PTX: mbarrier.arrive.shared.b64
// PTX: mbarrier.try_wait.parity.shared.b64
// PTX: ld.shared.b32 %r{{[0-9]+}}, [%r{{[0-9]+}}+-1024];
// PTX: tcgen05.ld.sync.aligned.32x32b
// PTX: tcgen05.st.sync.aligned.32x32b
// PTX: st.global.v4.b32
// PTX: bar.arrive
// PTXAS: Compiling entry function 'correction_hand_off'
// PTXAS: 0 bytes spill stores, 0 bytes spill loads

module attributes {tilegpu.target = #tilegpu.target<chip = "sm_100a", family = tcgen05>} {
  func.func @correction_hand_off(%o: !tile.view<?x?x?x64xbf16>, %scale: f32)
      attributes {tilegpu.shared_bytes = 2048 : i64, tilegpu.warps = 16 : i64} {
    %alpha = tensor.splat %scale : tensor<256xf32, #tilegpu.tmem_lanes<rows, warps = 8, row_blocks = 2>>
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %false = arith.constant false
    %obuf = tilegpu.alloc offset(0) : !tilegpu.buffer<256x64xf32, #tilegpu.tensor_memory<>>
    %factors = tilegpu.alloc offset(0) : !tilegpu.buffer<256xf32, #tilegpu.shared<>>
    %full = tilegpu.alloc offset(1024) : !tilegpu.buffer<2xi64, #tilegpu.shared<>>
    tilegpu.mbarrier_init %full[%c0], count(4) : !tilegpu.buffer<2xi64, #tilegpu.shared<>>
    tilegpu.mbarrier_init %full[%c1], count(4) : !tilegpu.buffer<2xi64, #tilegpu.shared<>>
    gpu.barrier
    tilegpu.warp_specialize [#tilegpu.role<"consumer", warps = 8>, #tilegpu.role<"correction", warps = 8>] {
      %g = tilegpu.group_id {groups = 2}
      tilegpu.local_store %alpha, %factors : tensor<256xf32, #tilegpu.tmem_lanes<rows, warps = 8, row_blocks = 2>>,
          !tilegpu.buffer<256xf32, #tilegpu.shared<>>
      tilegpu.mbarrier_arrive %full[%g] : !tilegpu.buffer<2xi64, #tilegpu.shared<>>
    }, {
      %g = tilegpu.group_id {groups = 2}
      tilegpu.mbarrier_wait %full[%g], phase(%false) : !tilegpu.buffer<2xi64, #tilegpu.shared<>>
      %back = tilegpu.local_load %factors : !tilegpu.buffer<256xf32, #tilegpu.shared<>>
          -> tensor<256xf32, #tilegpu.tmem_lanes<rows, warps = 8, row_blocks = 2>>
      tilegpu.tmem_scale_rows %obuf, %back : !tilegpu.buffer<256x64xf32, #tilegpu.tensor_memory<>>,
          tensor<256xf32, #tilegpu.tmem_lanes<rows, warps = 8, row_blocks = 2>>
      %bx = tile.block_id x
      tilegpu.tmem_scale_store %obuf, %back to %o[%c0, %c0, %bx, %c0]
          : !tilegpu.buffer<256x64xf32, #tilegpu.tensor_memory<>>,
            tensor<256xf32, #tilegpu.tmem_lanes<rows, warps = 8, row_blocks = 2>>, !tile.view<?x?x?x64xbf16>
    }
    return
  }

  func.func @column_groups_write_once(%o: !tile.view<?x?x?x64xf32>, %scale: f32)
      attributes {tilegpu.shared_bytes = 512 : i64, tilegpu.warps = 8 : i64} {
    %alpha = tensor.splat %scale : tensor<128xf32, #tilegpu.tmem_lanes<rows, warps = 8>>
    %factors = tilegpu.alloc offset(0) : !tilegpu.buffer<128xf32, #tilegpu.shared<>>
    tilegpu.local_store %alpha, %factors : tensor<128xf32, #tilegpu.tmem_lanes<rows, warps = 8>>,
        !tilegpu.buffer<128xf32, #tilegpu.shared<>>
    return
  }
}
