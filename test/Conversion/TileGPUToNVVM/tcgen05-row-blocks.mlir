// RUN: tiled-attn-opt %s --convert-tilegpu-to-nvvm | FileCheck %s
// RUN: tiled-attn-opt %s --tilegpu-to-ptx="chip=sm_100a" \
// RUN:   | sed -n 's/.*assembly = "\([^"]*\)".*/\1/p' | sed -e 's/\\0A/\n/g' -e 's/\\09/\t/g' > %t.ptx
// RUN: FileCheck %s --check-prefix=PTX --input-file=%t.ptx
// RUN: %if ptxas %{ ptxas -arch=sm_100a -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS %}

// Two Q tiles per CTA (FlashAttention-4): a block of 256 rows is two blocks
// of 128, one per warpgroup of 8 warps (#tilegpu.tmem_lanes<..., row_blocks
// = 2>). In tensor memory the blocks lie side by side: S (256 x 128 f32)
// takes columns 0-255, block 1 from column 128; P (packed) 256-383, block 1
// from 320; O (256 x 64) 384-511, block 1 from 448. Each warpgroup is a
// group of its own: its named barrier, its products (issued by its first
// thread, 0 or 128, its block = tid / 128 setting the offsets), its
// mbarrier (commits and waits at 8 bytes x group).

// CHECK-LABEL: gpu.func @tcgen05_two_q_tiles
// CHECK-SAME: tilegpu.tmem_columns = 512 : i64
// The group barrier: named barrier 1 + tid / 128 of 128 threads.
// CHECK: %[[WG:.*]] = arith.divui %{{.*}}, %c128 : index
// CHECK-NEXT: %[[ID:.*]] = arith.addi %[[WG]], %c1 : index
// CHECK-NEXT: %[[ID32:.*]] = arith.index_cast %[[ID]] : index to i32
// CHECK-NEXT: nvvm.barrier id = %[[ID32]] number_of_threads = %c128_i32
// S = Q.K^T: threads 0 and 128 issue (4 k-steps), block b = tid / 128:
// its D 128 b columns on and its A 128 b rows x 128 bytes on in each panel.
// CHECK: %[[B:.*]] = arith.divui %[[TID:.*]], %c128 : index
// CHECK-NEXT: %[[R:.*]] = arith.remui %[[TID]], %c128 : index
// CHECK-NEXT: %[[FIRST:.*]] = arith.cmpi eq, %[[R]], %c0 : index
// CHECK-NEXT: scf.if %[[FIRST]] {
// CHECK-NEXT: nvvm.tcgen05.fence <after>
// CHECK-NEXT: arith.muli %[[B]], %c128 : index
// CHECK: arith.muli %[[B]], %c16384 : index
// CHECK-COUNT-4: nvvm.tcgen05.mma
// CHECK-NOT: nvvm.tcgen05.mma
// CHECK: }
// Each group's thread commits to its own mbarrier (index 0 + group).
// CHECK: arith.cmpi eq, %{{.*}}, %c0 : index
// CHECK: nvvm.tcgen05.commit
// CHECK: arith.cmpi eq, %{{.*}}, %c128 : index
// CHECK-NEXT: scf.if
// CHECK-NEXT: memref.extract_aligned_pointer_as_index
// CHECK-NEXT: arith.addi %{{.*}}, %c8 : index
// CHECK: nvvm.tcgen05.commit
// The wait: the group's mbarrier, 8 x (tid / 128) bytes in.
// CHECK: %[[WWG:.*]] = arith.divui %{{.*}}, %c128 : index
// CHECK-NEXT: arith.muli %[[WWG]], %c8 : index
// CHECK: nvvm.mbarrier.try_wait
// S read by each warp: its quadrant's lanes, its block's columns
// ((warp / 4) x 128).
// CHECK: %[[WARP:.*]] = arith.divui %{{.*}}, %c32 : index
// CHECK-NEXT: arith.remui %[[WARP]], %c4 : index
// CHECK-NEXT: %[[BLK:.*]] = arith.divui %[[WARP]], %c4 : index
// CHECK: arith.muli %[[BLK]], %c128 : index
// CHECK-COUNT-8: nvvm.tcgen05.ld
// O += P.V: block b reads P 64 b columns on and accumulates 64 b columns
// on.
// CHECK: nvvm.barrier id
// CHECK: %[[PB:.*]] = arith.divui %[[PTID:.*]], %c128 : index
// CHECK-NEXT: %[[PR:.*]] = arith.remui %[[PTID]], %c128 : index
// CHECK-NEXT: %[[PFIRST:.*]] = arith.cmpi eq, %[[PR]], %c0 : index
// CHECK-NEXT: scf.if %[[PFIRST]] {
// CHECK-NEXT: nvvm.tcgen05.fence <after>
// CHECK-NEXT: arith.muli %[[PB]], %c64 : index
// CHECK: arith.muli %[[PB]], %c64 : index
// CHECK-COUNT-8: nvvm.tcgen05.mma
// CHECK-NOT: nvvm.tcgen05.mma
// CHECK: }
// The correction: each block's 64 columns of O.
// CHECK: arith.muli %{{.*}}, %c64 : index
// CHECK-COUNT-4: nvvm.tcgen05.st
// The epilogue: the thread's row is 128 x (warp / 4) + 32 x (warp mod 4) + lane.
// CHECK: arith.remui %{{.*}}, %c32 : index
// CHECK-NEXT: arith.remui %[[EWARP:.*]], %c4 : index
// CHECK-NEXT: %[[EBLK:.*]] = arith.divui %[[EWARP]], %c4 : index
// CHECK: arith.muli %[[EBLK]], %c128 : index
// CHECK: vector.store

// 256 threads; each warpgroup's barrier is its own; one issue of 4
// k-steps of Q.K^T and one of 8 of P.V, run by each group's first thread.
// PTX: .maxntid 256, 1, 1
// PTX: tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32
// PTX: bar.sync {{%r[0-9]+}}, 128;
// PTX-COUNT-4: tcgen05.mma.cta_group::1.kind::f16.collector::a::discard [{{%r[0-9]+}}], {{%rd[0-9]+}}, {{%rd[0-9]+}}
// PTX-NOT: tcgen05.mma
// PTX-COUNT-2: tcgen05.commit.cta_group::1.mbarrier::arrive::one
// PTX: bar.sync {{%r[0-9]+}}, 128;
// PTX-COUNT-8: tcgen05.mma.cta_group::1.kind::f16.collector::a::discard [{{%r[0-9]+}}], [{{%r[0-9]+}}], {{%rd[0-9]+}}
// PTX-NOT: tcgen05.mma.cta_group::1.kind::f16.collector::a::discard [{{%r[0-9]+}}], [{{%r[0-9]+}}], {{%rd[0-9]+}}
// PTXAS: 0 bytes spill stores, 0 bytes spill loads

module attributes {tilegpu.target = #tilegpu.target<chip = "sm_100a", family = tcgen05>} {
  func.func @tcgen05_two_q_tiles(%o: !tile.view<?x?x?x64xf32>, %scale: f32)
      attributes {tilegpu.shared_bytes = 81936 : i64, tilegpu.warps = 8 : i64} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %false = arith.constant false
    %true = arith.constant true
    %q = tilegpu.alloc offset(0) : !tilegpu.buffer<256x64xf16, #tilegpu.shared<swizzle = 128>>
    %k = tilegpu.alloc offset(32768) : !tilegpu.buffer<64x128xf16, #tilegpu.shared<swizzle = 128, transposed = true>>
    %v = tilegpu.alloc offset(49152) : !tilegpu.buffer<128x64xf16, #tilegpu.shared<swizzle = 128>>
    %bars = tilegpu.alloc offset(81920) : !tilegpu.buffer<2xi64, #tilegpu.shared<>>
    %s = tilegpu.alloc offset(0) : !tilegpu.buffer<256x128xf32, #tilegpu.tensor_memory<>>
    %p = tilegpu.alloc offset(256) : !tilegpu.buffer<256x128xf16, #tilegpu.tensor_memory<packed = true>>
    %acc = tilegpu.alloc offset(384) : !tilegpu.buffer<256x64xf32, #tilegpu.tensor_memory<>>
    tilegpu.mbarrier_init %bars[%c0], count(1) : !tilegpu.buffer<2xi64, #tilegpu.shared<>>
    tilegpu.mbarrier_init %bars[%c1], count(1) : !tilegpu.buffer<2xi64, #tilegpu.shared<>>
    gpu.barrier
    tilegpu.group_barrier {groups = 2}
    tilegpu.tmem_mma %q, %k, %s, accumulate(%false)
        : !tilegpu.buffer<256x64xf16, #tilegpu.shared<swizzle = 128>>,
          !tilegpu.buffer<64x128xf16, #tilegpu.shared<swizzle = 128, transposed = true>>,
          !tilegpu.buffer<256x128xf32, #tilegpu.tensor_memory<>>
    tilegpu.mma_commit %bars[%c0] {groups = 2} : !tilegpu.buffer<2xi64, #tilegpu.shared<>>
    %g = tilegpu.group_id {groups = 2}
    tilegpu.mbarrier_wait %bars[%g], phase(%false) : !tilegpu.buffer<2xi64, #tilegpu.shared<>>
    %sr = tilegpu.tmem_load %s : !tilegpu.buffer<256x128xf32, #tilegpu.tensor_memory<>>
        -> tensor<256x128xf32, #tilegpu.tmem_lanes<acc, warps = 8, row_blocks = 2>>
    %pr = arith.truncf %sr : tensor<256x128xf32, #tilegpu.tmem_lanes<acc, warps = 8, row_blocks = 2>>
        to tensor<256x128xf16, #tilegpu.tmem_lanes<acc, warps = 8, row_blocks = 2>>
    tilegpu.tmem_store %pr, %p : tensor<256x128xf16, #tilegpu.tmem_lanes<acc, warps = 8, row_blocks = 2>>,
        !tilegpu.buffer<256x128xf16, #tilegpu.tensor_memory<packed = true>>
    tilegpu.group_barrier {groups = 2}
    tilegpu.tmem_mma %p, %v, %acc, accumulate(%false)
        : !tilegpu.buffer<256x128xf16, #tilegpu.tensor_memory<packed = true>>,
          !tilegpu.buffer<128x64xf16, #tilegpu.shared<swizzle = 128>>,
          !tilegpu.buffer<256x64xf32, #tilegpu.tensor_memory<>>
    tilegpu.mma_commit %bars[%c0] {groups = 2} : !tilegpu.buffer<2xi64, #tilegpu.shared<>>
    %g2 = tilegpu.group_id {groups = 2}
    tilegpu.mbarrier_wait %bars[%g2], phase(%true) : !tilegpu.buffer<2xi64, #tilegpu.shared<>>
    %alpha = tensor.splat %scale : tensor<256xf32, #tilegpu.tmem_lanes<rows, warps = 8, row_blocks = 2>>
    tilegpu.tmem_scale_rows %acc, %alpha : !tilegpu.buffer<256x64xf32, #tilegpu.tensor_memory<>>,
        tensor<256xf32, #tilegpu.tmem_lanes<rows, warps = 8, row_blocks = 2>>
    %or = tilegpu.tmem_load %acc : !tilegpu.buffer<256x64xf32, #tilegpu.tensor_memory<>>
        -> tensor<256x64xf32, #tilegpu.tmem_lanes<acc, warps = 8, row_blocks = 2>>
    tile.store %or, %o[%c0, %c0, %c0, %c0] : tensor<256x64xf32, #tilegpu.tmem_lanes<acc, warps = 8, row_blocks = 2>>, !tile.view<?x?x?x64xf32>
    return
  }
}

