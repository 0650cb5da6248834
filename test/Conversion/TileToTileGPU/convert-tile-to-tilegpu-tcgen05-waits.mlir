// RUN: tiled-attn-opt %s --tilegpu-assign-layouts --convert-tile-to-tilegpu | FileCheck %s
// RUN: tiled-attn-opt %s --tilegpu-assign-layouts --convert-tile-to-tilegpu=mma-warp=1 | FileCheck %s --check-prefix=MMAWARP

// Where the threads wait for tcgen05 products (convert-tile-to-tilegpu).
// A product is waited for where the threads next touch tensor memory, not
// right after its commit, and always before the next product of its
// accumulator is let go (its group's barrier, or with mma-warp its ready
// arrival): an mbarrier never runs two phases ahead of its waiters. The
// wait is for the phase of the last commit: parity (count - 1) mod 2,
// computed as count + 1.

module attributes {tilegpu.target = #tilegpu.target<chip = "sm_100a", family = tcgen05>} {
  // Two products into one accumulator with no read in between: the second
  // waits for the first before its barrier; the read waits for the second.
  // CHECK-LABEL: func.func @twice
  // CHECK: %[[ACC:.*]] = tilegpu.alloc : <128x64xf32, #tilegpu.tensor_memory<>>
  // CHECK-NEXT: %[[DONE:.*]] = tilegpu.alloc : <1xi64, #tilegpu.shared<>>
  // CHECK: %false = arith.constant false
  // CHECK-NEXT: gpu.barrier
  // CHECK-NEXT: tilegpu.tmem_mma %{{.*}}, %{{.*}}, %[[ACC]], accumulate(%false)
  // CHECK-NEXT: arith.constant 0 : index
  // CHECK-NEXT: tilegpu.mma_commit %[[DONE]]
  // CHECK-NEXT: arith.constant 1 : index
  // CHECK-NEXT: %[[N1:.*]] = arith.addi %c0, %{{.*}} : index
  // CHECK-NOT: tilegpu.mbarrier_wait
  // CHECK: %[[L1:.*]] = arith.addi %[[N1]], %{{.*}} : index
  // CHECK-NEXT: %[[L1W:.*]] = arith.index_castui %[[L1]] : index to i64
  // CHECK-NEXT: %[[P1:.*]] = arith.trunci %[[L1W]] : i64 to i1
  // CHECK-NEXT: arith.constant 0 : index
  // CHECK-NEXT: tilegpu.mbarrier_wait %[[DONE]][%{{.*}}], phase(%[[P1]])
  // CHECK-NEXT: gpu.barrier
  // CHECK-NEXT: tilegpu.tmem_mma %{{.*}}, %{{.*}}, %[[ACC]], accumulate(%true)
  // CHECK-NEXT: arith.constant 0 : index
  // CHECK-NEXT: tilegpu.mma_commit %[[DONE]]
  // CHECK-NEXT: arith.constant 1 : index
  // CHECK-NEXT: %[[N2:.*]] = arith.addi %[[N1]], %{{.*}} : index
  // CHECK-NEXT: arith.constant 1 : index
  // CHECK-NEXT: %[[L2:.*]] = arith.addi %[[N2]], %{{.*}} : index
  // CHECK: tilegpu.mbarrier_wait %[[DONE]]
  // CHECK-NEXT: tilegpu.tmem_load %[[ACC]]
  // CHECK-NOT: tilegpu.mbarrier_wait %[[DONE]]
  // CHECK: return

  // MMAWARP-LABEL: func.func @twice
  // MMAWARP: %[[DONE:.*]] = tilegpu.alloc : <1xi64, #tilegpu.shared<>>
  // MMAWARP: %[[READY:.*]] = tilegpu.alloc : <1xi64, #tilegpu.shared<>>
  // MMAWARP-NEXT: arith.constant 0 : index
  // MMAWARP-NEXT: tilegpu.mbarrier_init %[[READY]][%{{.*}}], count(4)
  // MMAWARP: tilegpu.mbarrier_arrive %[[READY]]
  // MMAWARP: tilegpu.mma_commit %[[DONE]]
  // MMAWARP-NOT: tilegpu.mbarrier_arrive
  // MMAWARP: tilegpu.mbarrier_wait %[[DONE]]
  // MMAWARP-NEXT: tilegpu.mbarrier_arrive %[[READY]]
  // MMAWARP: tilegpu.mma_commit %[[DONE]]
  // MMAWARP: tilegpu.mbarrier_wait %[[DONE]]
  // MMAWARP-NEXT: tilegpu.tmem_load
  func.func @twice(%q: !tile.view<?x?x?x64xf16>, %k: !tile.view<?x?x?x64xf16>, %o: !tile.view<?x?x?x64xf32>) {
    %c0 = arith.constant 0 : index
    %zero = arith.constant dense<0.0> : tensor<128x64xf32>
    %qb = tile.load %q[%c0, %c0, %c0, %c0] pad(0.0) : !tile.view<?x?x?x64xf16> -> tensor<128x64xf16>
    %kt = tile.load %k[%c0, %c0, %c0, %c0] pad(0.0) transpose : !tile.view<?x?x?x64xf16> -> tensor<64x64xf16>
    %s0 = tile.mma %qb, %kt, %zero : tensor<128x64xf16>, tensor<64x64xf16> -> tensor<128x64xf32>
    %s1 = tile.mma %qb, %kt, %s0 : tensor<128x64xf16>, tensor<64x64xf16> -> tensor<128x64xf32>
    tile.store %s1, %o[%c0, %c0, %c0, %c0] : tensor<128x64xf32>, !tile.view<?x?x?x64xf32>
    return
  }

  // A product in one side of a branch: that side waits for the product
  // before it, and the branch yields the count of commits on each side,
  // which the read after it waits with.
  // CHECK-LABEL: func.func @branch
  // CHECK: %[[DONE:.*]] = tilegpu.alloc : <1xi64, #tilegpu.shared<>>
  // CHECK: tilegpu.mma_commit %[[DONE]]
  // CHECK-NEXT: arith.constant 1 : index
  // CHECK-NEXT: %[[N1:.*]] = arith.addi %c0, %{{.*}} : index
  // CHECK-NEXT: %[[IF:.*]]:2 = scf.if %{{.*}} -> (!tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>, index) {
  // CHECK: tilegpu.mbarrier_wait %[[DONE]]
  // CHECK-NEXT: gpu.barrier
  // CHECK-NEXT: tilegpu.tmem_mma
  // CHECK: tilegpu.mma_commit %[[DONE]]
  // CHECK-NEXT: arith.constant 1 : index
  // CHECK-NEXT: %[[N2:.*]] = arith.addi %[[N1]], %{{.*}} : index
  // CHECK-NEXT: scf.yield %{{.*}}, %[[N2]] : !tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>, index
  // CHECK-NEXT: } else {
  // CHECK-NEXT: scf.yield %{{.*}}, %[[N1]] : !tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>, index
  // CHECK: %[[L:.*]] = arith.addi %[[IF]]#1, %{{.*}} : index
  // CHECK-NEXT: %[[LW:.*]] = arith.index_castui %[[L]] : index to i64
  // CHECK-NEXT: %[[P:.*]] = arith.trunci %[[LW]] : i64 to i1
  // CHECK-NEXT: arith.constant 0 : index
  // CHECK-NEXT: tilegpu.mbarrier_wait %[[DONE]][%{{.*}}], phase(%[[P]])
  // CHECK-NEXT: tilegpu.tmem_load
  func.func @branch(%q: !tile.view<?x?x?x64xf16>, %k: !tile.view<?x?x?x64xf16>, %o: !tile.view<?x?x?x64xf32>, %cond: i1) {
    %c0 = arith.constant 0 : index
    %zero = arith.constant dense<0.0> : tensor<128x64xf32>
    %qb = tile.load %q[%c0, %c0, %c0, %c0] pad(0.0) : !tile.view<?x?x?x64xf16> -> tensor<128x64xf16>
    %kt = tile.load %k[%c0, %c0, %c0, %c0] pad(0.0) transpose : !tile.view<?x?x?x64xf16> -> tensor<64x64xf16>
    %s0 = tile.mma %qb, %kt, %zero : tensor<128x64xf16>, tensor<64x64xf16> -> tensor<128x64xf32>
    %r = scf.if %cond -> tensor<128x64xf32> {
      %s1 = tile.mma %qb, %kt, %s0 : tensor<128x64xf16>, tensor<64x64xf16> -> tensor<128x64xf32>
      scf.yield %s1 : tensor<128x64xf32>
    } else {
      scf.yield %s0 : tensor<128x64xf32>
    }
    tile.store %r, %o[%c0, %c0, %c0, %c0] : tensor<128x64xf32>, !tile.view<?x?x?x64xf32>
    return
  }
}
