// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="head-dim=64 block-m=128 block-n=64" \
// RUN:   --tile-schedule="exp2=1 stages=2 defer-pv=1" --tilegpu-attach-target="chip=sm_90a" \
// RUN:   --tilegpu-assign-layouts="warps=8" --convert-tile-to-tilegpu="empty-barriers=1" \
// RUN:   --tilegpu-resolve-async-waits --tilegpu-allocate-memory \
// RUN:   --tilegpu-warp-specialize="producer-registers=24 consumer-registers=240" \
// RUN:   --convert-tilegpu-to-nvvm | FileCheck %s

// A warp-specialized kernel's lowering:
// - 384 threads, and nvvm.minctasm = 1 so that ptxas honours setmaxnreg;
// - one branch per role on the thread's warp: warps 0-7 move up to 240
//   registers and run the consumers' region; warps 8-11 move down to 24,
//   and only warp 8 runs the producer's;
// - the producer counts its threads from its first (thread 256), so its
//   first thread issues the TMA copies;
// - a consumer warp releases a slot with one arrive from its first lane,
//   after __syncwarp, once its wgmma has finished;
// - the CTA barrier before the staged store becomes named barrier 1 of the
//   256 consumer threads (the producer never reaches it).

// CHECK: gpu.func @sdpa_fwd
// CHECK-SAME: known_block_size = array<i32: 384, 1, 1>, nvvm.minctasm = 1 : i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c8_i32
// CHECK: gpu.barrier
// CHECK-NEXT: %[[TID:.*]] = gpu.thread_id x
// CHECK-NEXT: %[[WARP:.*]] = arith.divui %[[TID]], %c32
// CHECK-NEXT: %[[CONSUMER:.*]] = arith.cmpi ult, %[[WARP]], %c8
// CHECK-NEXT: scf.if %[[CONSUMER]] {
// CHECK-NEXT: nvvm.setmaxregister increase 240
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-NEXT: nvvm.bar.warp.sync %c-1_i32
// CHECK-NEXT: %[[T:.*]] = gpu.thread_id x
// CHECK-NEXT: %[[LANE:.*]] = arith.remui %[[T]], %c32
// CHECK-NEXT: %[[FIRST:.*]] = arith.cmpi eq, %[[LANE]], %c0
// (A K or V slot's release after its wgmma: the first lane's arrive,
// predicated, not branched around.)
// CHECK-NOT: scf.if
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c0_i32, predicate = %[[FIRST]] : !llvm.ptr<3>, i32, i1
// CHECK: nvvm.barrier id = %c1_i32 number_of_threads = %c256_i32
// CHECK: %[[BELOW:.*]] = arith.cmpi ult, %[[WARP]], %c12
// CHECK-NEXT: %[[ABOVE:.*]] = arith.cmpi uge, %[[WARP]], %c8
// CHECK-NEXT: %[[PRODUCER:.*]] = arith.andi %[[ABOVE]], %[[BELOW]]
// CHECK-NEXT: scf.if %[[PRODUCER]] {
// CHECK-NEXT: nvvm.setmaxregister decrease 24
// CHECK-NEXT: arith.cmpi ult, %[[WARP]], %c9
// CHECK: %[[PT:.*]] = gpu.thread_id x
// CHECK-NEXT: %[[REL:.*]] = arith.subi %[[PT]], %c256
// CHECK-NEXT: %[[ISSUER:.*]] = arith.cmpi eq, %[[REL]], %c0
// CHECK-NEXT: scf.if %[[ISSUER]] {
// CHECK-NEXT: memref.extract_aligned_pointer_as_index
// CHECK: nvvm.mbarrier.arrive.expect_tx
// CHECK: nvvm.mbarrier.try_wait %{{.*}}, %c1_i32
// CHECK-NOT: nvvm.wgmma
// CHECK-NOT: nvvm.barrier
// CHECK: gpu.return

// Ping-pong: the consumers' two warpgroups take turns through named
// barriers 3 and 4 (after the roles' 1 and 2), 256 threads each: warpgroup
// 1 lets warpgroup 0 go first, each waits on 3 + its index before its
// products and arrives on the other's after them.
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="head-dim=64 block-m=128 block-n=64" \
// RUN:   --tile-schedule="exp2=1 stages=2 defer-pv=1" --tilegpu-attach-target="chip=sm_90a" \
// RUN:   --tilegpu-assign-layouts="warps=8" --convert-tile-to-tilegpu="empty-barriers=1" \
// RUN:   --tilegpu-resolve-async-waits --tilegpu-allocate-memory --tilegpu-pingpong \
// RUN:   --tilegpu-warp-specialize --convert-tilegpu-to-nvvm | FileCheck %s --check-prefix=PINGPONG
// PINGPONG: %[[CONSUMER:.*]] = arith.cmpi ult, %{{.*}}, %c8
// PINGPONG-NEXT: scf.if %[[CONSUMER]] {
// PINGPONG-NEXT: %[[T:.*]] = gpu.thread_id x
// PINGPONG-NEXT: %[[WG:.*]] = arith.divui %[[T]], %c128
// PINGPONG-NEXT: %[[LAST:.*]] = arith.cmpi eq, %[[WG]], %c1
// PINGPONG-NEXT: scf.if %[[LAST]] {
// PINGPONG-NEXT: nvvm.barrier.arrive id = %c3_i32 number_of_threads = %c256_i32
// PINGPONG: %[[T2:.*]] = gpu.thread_id x
// PINGPONG-NEXT: %[[WG2:.*]] = arith.divui %[[T2]], %c128
// PINGPONG-NEXT: %[[ID:.*]] = arith.addi %[[WG2]], %c3
// PINGPONG-NEXT: %[[ID32:.*]] = arith.index_cast %[[ID]] : index to i32
// PINGPONG-NEXT: nvvm.barrier id = %[[ID32]] number_of_threads = %c256_i32
// PINGPONG: nvvm.wgmma.mma_async
// PINGPONG: %[[NEXT:.*]] = arith.remui %{{.*}}, %c2
// PINGPONG-NEXT: %[[NID:.*]] = arith.addi %[[NEXT]], %c3
// PINGPONG-NEXT: %[[NID32:.*]] = arith.index_cast %[[NID]] : index to i32
// PINGPONG-NEXT: nvvm.barrier.arrive id = %[[NID32]] number_of_threads = %c256_i32
// PINGPONG: nvvm.wgmma.wait.group.sync.aligned
