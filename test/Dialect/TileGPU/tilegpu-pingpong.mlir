// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="head-dim=128 block-m=128 block-n=128" \
// RUN:   --tile-schedule="exp2=1 mask-split=1 stages=2 defer-pv=1" --tilegpu-attach-target="chip=sm_90a" \
// RUN:   --tilegpu-assign-layouts="warps=8" --convert-tile-to-tilegpu="empty-barriers=1" \
// RUN:   --tilegpu-resolve-async-waits --tilegpu-pingpong | FileCheck %s

// Each run of wgmma products up to the first wait after them is one turn:
// Q.K^T alone where nothing is deferred yet (the prologue), Q.K^T_j and
// P_j-1.V_j-1 together in the loops (the wait for V's slot inside the turn),
// P.V alone in the epilogues. The first turn is granted after the CTA
// barrier that publishes the mbarriers.

// CHECK-LABEL: func.func @sdpa_fwd
// CHECK: tilegpu.mbarrier_init
// CHECK: gpu.barrier
// CHECK-NEXT: tilegpu.turn_start
// CHECK-NOT: tilegpu.turn_start
// CHECK: tilegpu.turn_take
// CHECK-NEXT: %[[S0:.*]] = tilegpu.mma
// CHECK-NEXT: tilegpu.turn_pass
// CHECK: tilegpu.mma_wait %[[S0]]
// CHECK: scf.for
// CHECK: tilegpu.tma_load
// CHECK: tilegpu.tma_load
// CHECK: tilegpu.mbarrier_wait
// CHECK-NEXT: tilegpu.turn_take
// CHECK-NEXT: %[[S:.*]] = tilegpu.mma
// CHECK-NOT: tilegpu.turn_
// CHECK: tilegpu.mbarrier_wait
// CHECK-NEXT: %[[O:.*]] = tilegpu.mma
// CHECK-NEXT: tilegpu.turn_pass
// CHECK-NEXT: tilegpu.mma_wait %[[S]] pending(1)
// CHECK: tilegpu.mma_wait %[[O]] pending(0)
// CHECK: scf.yield
// CHECK: tilegpu.turn_take
// CHECK-NEXT: %[[OE:.*]] = tilegpu.mma
// CHECK-NEXT: tilegpu.turn_pass
// CHECK-NEXT: tilegpu.mma_wait %[[OE]]

// Nothing to take turns for without asynchronous products (mma.sync).
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="head-dim=64 block-m=64 block-n=64" \
// RUN:   --tile-schedule="exp2=1" --tilegpu-attach-target="chip=sm_80" \
// RUN:   --tilegpu-assign-layouts="warps=4" --convert-tile-to-tilegpu \
// RUN:   --tilegpu-pingpong | FileCheck %s --check-prefix=SYNC
// SYNC-NOT: tilegpu.turn_
// SYNC: tilegpu.mma
// SYNC-NOT: tilegpu.turn_
