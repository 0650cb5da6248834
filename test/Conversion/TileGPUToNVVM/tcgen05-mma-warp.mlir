// RUN: tiled-attn-opt %s --convert-tilegpu-to-nvvm | FileCheck %s
// RUN: tiled-attn-opt %s --tilegpu-to-ptx="chip=sm_100a" \
// RUN:   | sed -n 's/.*assembly = "\([^"]*\)".*/\1/p' | sed -e 's/\\0A/\n/g' -e 's/\\09/\t/g' > %t.ptx
// RUN: FileCheck %s --check-prefix=PTX --input-file=%t.ptx
// RUN: %if ptxas %{ ptxas -arch=sm_100a -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS %}

// FlashAttention-4's MMA warp: the products of two Q tiles (two blocks of
// 128 rows) come from a role of their own, which shares a warpgroup with
// the producer (warps 8-11: one setmaxnreg for all four, then warp 8 the
// producer's, warps 9-11 the MMA role's with warp 9 active, thread 288 of
// the CTA its first). The consumers (two
// warpgroups) arrive on their group's ready mbarrier and wait on their
// group's mma mbarrier; the MMA thread waits for each group's readiness and
// issues that group's row block alone (row_block): block 1's D is 128
// columns on, its A 128 rows x 128 bytes on in each panel, its commit goes
// to the mbarrier 8 bytes on. Tensor memory is still allocated and freed by
// the consumers (the first role).

// CHECK-LABEL: gpu.func @tcgen05_mma_warp
// CHECK-SAME: tilegpu.tmem_columns = 256 : i64
// The warpgroup's branch (warps 8 to 11) and its budget, then the
// producer's warp, then the MMA role's (9 to 11, warp 9 active).
// CHECK: arith.cmpi uge, %{{.*}}, %c8 : index
// CHECK: nvvm.setmaxregister decrease 48
// CHECK: arith.cmpi ult, %{{.*}}, %c9 : index
// CHECK: nvvm.cp.async.wait.group 0
// CHECK: arith.cmpi ult, %{{.*}}, %c12 : index
// CHECK-NEXT: arith.cmpi uge, %{{.*}}, %c9 : index
// CHECK-NOT: nvvm.setmaxregister
// CHECK: arith.cmpi ult, %{{.*}}, %c10 : index
// Group 0's readiness, block 0 from the role's thread 0 (thread id - 256)
// at D and A as they are, its commit; then group 1's readiness and block 1.
// CHECK: nvvm.mbarrier.try_wait
// CHECK: %[[REL0:.*]] = arith.subi %{{.*}}, %c288 : index
// CHECK-NEXT: %[[F0:.*]] = arith.cmpi eq, %[[REL0]], %c0 : index
// CHECK-NEXT: scf.if %[[F0]] {
// CHECK-NEXT: nvvm.tcgen05.fence <after>
// CHECK-NEXT: llvm.inttoptr
// CHECK-COUNT-4: nvvm.tcgen05.mma
// CHECK: nvvm.tcgen05.commit
// CHECK: nvvm.mbarrier.try_wait
// CHECK: %[[REL:.*]] = arith.subi %{{.*}}, %c288 : index
// CHECK-NEXT: %[[T0:.*]] = arith.cmpi eq, %[[REL]], %c0 : index
// CHECK-NEXT: scf.if %[[T0]] {
// CHECK-NEXT: nvvm.tcgen05.fence <after>
// CHECK-NEXT: arith.addi %{{.*}}, %c128_i32 : i32
// CHECK: arith.addi %{{.*}}, %c16384 : index
// CHECK-COUNT-4: nvvm.tcgen05.mma
// CHECK: arith.cmpi eq, %{{.*}}, %c0 : index
// CHECK-NEXT: scf.if
// CHECK-NEXT: memref.extract_aligned_pointer_as_index
// CHECK-NEXT: arith.addi %{{.*}}, %c8 : index
// CHECK: nvvm.tcgen05.commit
// CHECK-NOT: nvvm.tcgen05.ld
// CHECK: gpu.return

// 384 threads; one thread issues both blocks (8 k-steps of 16); the
// consumers arrive (one lane per warp) and the dealloc is theirs.
// PTX: .maxntid 384, 1, 1
// PTX: tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32
// PTX: mbarrier.arrive.shared.b64
// PTX: tcgen05.ld.sync.aligned.32x32b
// PTX: tcgen05.dealloc.cta_group::1.sync.aligned.b32
// PTX: setmaxnreg.dec.sync.aligned.u32 48;
// PTX-NOT: setmaxnreg
// PTX: mbarrier.try_wait.parity
// PTX-COUNT-4: tcgen05.mma.cta_group::1.kind::f16.collector::a::discard
// PTX: tcgen05.commit.cta_group::1.mbarrier::arrive::one
// PTX: mbarrier.try_wait.parity
// PTX-COUNT-4: tcgen05.mma.cta_group::1.kind::f16.collector::a::discard
// PTX: tcgen05.commit.cta_group::1.mbarrier::arrive::one
// PTXAS: 0 bytes spill stores, 0 bytes spill loads

module attributes {tilegpu.target = #tilegpu.target<chip = "sm_100a", family = tcgen05>} {
  func.func @tcgen05_mma_warp(%o: !tile.view<?x?x?x128xf32>)
      attributes {tilegpu.shared_bytes = 65680 : i64, tilegpu.warps = 12 : i64} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %false = arith.constant false
    %q = tilegpu.alloc offset(0) : !tilegpu.buffer<256x64xf16, #tilegpu.shared<swizzle = 128>>
    %k = tilegpu.alloc offset(32768) : !tilegpu.buffer<64x128xf16, #tilegpu.shared<swizzle = 128, transposed = true>>
    %done = tilegpu.alloc offset(65536) : !tilegpu.buffer<2xi64, #tilegpu.shared<>>
    %ready = tilegpu.alloc offset(65664) : !tilegpu.buffer<2xi64, #tilegpu.shared<>>
    %s = tilegpu.alloc offset(0) : !tilegpu.buffer<256x128xf32, #tilegpu.tensor_memory<>>
    tilegpu.mbarrier_init %done[%c0], count(1) : !tilegpu.buffer<2xi64, #tilegpu.shared<>>
    tilegpu.mbarrier_init %done[%c1], count(1) : !tilegpu.buffer<2xi64, #tilegpu.shared<>>
    tilegpu.mbarrier_init %ready[%c0], count(4) : !tilegpu.buffer<2xi64, #tilegpu.shared<>>
    tilegpu.mbarrier_init %ready[%c1], count(4) : !tilegpu.buffer<2xi64, #tilegpu.shared<>>
    gpu.barrier
    tilegpu.warp_specialize [#tilegpu.role<"consumer", warps = 8, registers = 224>,
                             #tilegpu.role<"producer", warps = 1, registers = 48>,
                             #tilegpu.role<"mma", warps = 3, registers = 48, active = 1>] {
      %g = tilegpu.group_id {groups = 2}
      tilegpu.mbarrier_arrive %ready[%g] : !tilegpu.buffer<2xi64, #tilegpu.shared<>>
      %g2 = tilegpu.group_id {groups = 2}
      tilegpu.mbarrier_wait %done[%g2], phase(%false) : !tilegpu.buffer<2xi64, #tilegpu.shared<>>
      %sr = tilegpu.tmem_load %s : !tilegpu.buffer<256x128xf32, #tilegpu.tensor_memory<>>
          -> tensor<256x128xf32, #tilegpu.tmem_lanes<acc, warps = 8, row_blocks = 2>>
      tile.store %sr, %o[%c0, %c0, %c0, %c0] : tensor<256x128xf32, #tilegpu.tmem_lanes<acc, warps = 8, row_blocks = 2>>, !tile.view<?x?x?x128xf32>
    }, {
      tilegpu.async_wait_all
    }, {
      tilegpu.mbarrier_wait %ready[%c0], phase(%false) : !tilegpu.buffer<2xi64, #tilegpu.shared<>>
      tilegpu.tmem_mma %q, %k, %s, accumulate(%false) {row_block = 0}
          : !tilegpu.buffer<256x64xf16, #tilegpu.shared<swizzle = 128>>,
            !tilegpu.buffer<64x128xf16, #tilegpu.shared<swizzle = 128, transposed = true>>,
            !tilegpu.buffer<256x128xf32, #tilegpu.tensor_memory<>>
      tilegpu.mma_commit %done[%c0] : !tilegpu.buffer<2xi64, #tilegpu.shared<>>
      tilegpu.mbarrier_wait %ready[%c1], phase(%false) : !tilegpu.buffer<2xi64, #tilegpu.shared<>>
      tilegpu.tmem_mma %q, %k, %s, accumulate(%false) {row_block = 1}
          : !tilegpu.buffer<256x64xf16, #tilegpu.shared<swizzle = 128>>,
            !tilegpu.buffer<64x128xf16, #tilegpu.shared<swizzle = 128, transposed = true>>,
            !tilegpu.buffer<256x128xf32, #tilegpu.tensor_memory<>>
      tilegpu.mma_commit %done[%c1] : !tilegpu.buffer<2xi64, #tilegpu.shared<>>
    }
    return
  }
}
