// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="head-dim=64 block-m=128 block-n=64 causal=1" \
// RUN:   --tile-schedule="exp2=1 mask-split=1 stages=2 defer-pv=1" --tilegpu-attach-target="chip=sm_90a" \
// RUN:   --tilegpu-assign-layouts="warps=8" --convert-tile-to-tilegpu="empty-barriers=1" \
// RUN:   --tilegpu-resolve-async-waits --tilegpu-allocate-memory \
// RUN:   --tilegpu-warp-specialize="producer-registers=24 consumer-registers=240" | FileCheck %s

// FlashAttention-3's roles out of a TMA kernel paced by empty mbarriers:
// what precedes the CTA barrier after the mbarriers' initialization stays
// shared; the eight warps the layouts name become the consumers (first, so
// their thread ids do not move), a producer warpgroup is added (one warp
// active), and the kernel's warps become twelve.

// CHECK-LABEL: func.func @sdpa_fwd
// CHECK-SAME: tilegpu.warps = 12
// CHECK: tilegpu.mbarrier_init
// CHECK: gpu.barrier
// CHECK-NEXT: tilegpu.warp_specialize [#tilegpu.role<"consumer", warps = 8, registers = 240>, #tilegpu.role<"producer", warps = 4, registers = 24, active = 1>] {

// Consumers: no TMA loads and no waits for empty slots; they wait for full
// slots, compute and release.
// CHECK-NOT: tilegpu.tma_load
// CHECK: tilegpu.mbarrier_wait
// CHECK-NOT: tilegpu.tma_load
// CHECK: tilegpu.mma
// CHECK-NOT: tilegpu.tma_load
// CHECK: tilegpu.mbarrier_arrive
// CHECK-NOT: tilegpu.tma_load
// CHECK: tilegpu.staged_store
// CHECK-NOT: tilegpu.tma_load

// Producer: the same loops and branches carrying only the stream counts,
// each refill after the wait for its empty slot; no register tile at all.
// CHECK: }, {
// CHECK-NOT: tensor<
// CHECK-NOT: tilegpu.mma
// CHECK: tilegpu.tma_load %arg5
// CHECK: %[[P:.*]] = arith.xori
// CHECK-NEXT: tilegpu.mbarrier_wait %{{.*}}[%[[S:.*]]], phase(%[[P]])
// CHECK-NEXT: tilegpu.tma_load %arg6{{.*}}[%[[S]]]
// CHECK: scf.if %{{.*}} -> (index, index) {
// CHECK: scf.for %{{.*}} iter_args(%{{.*}}, %{{.*}}) -> (index, index) {
// CHECK-NOT: tensor<
// CHECK-NOT: tilegpu.mma
// CHECK-NOT: mbarrier_arrive
// CHECK-NOT: staged_store
// CHECK: return

// Without empty mbarriers the producer could not know when a slot is free.
// RUN: echo 'module {}' | not tiled-attn-opt --tile-generate-sdpa="head-dim=64 block-m=128 block-n=64" \
// RUN:   --tile-schedule="exp2=1 stages=2" --tilegpu-attach-target="chip=sm_90a" \
// RUN:   --tilegpu-assign-layouts="warps=8" --convert-tile-to-tilegpu \
// RUN:   --tilegpu-warp-specialize 2>&1 | FileCheck %s --check-prefix=NOEMPTY
// NOEMPTY: error: tilegpu-warp-specialize: the TMA rings have no empty mbarriers; run convert-tile-to-tilegpu with empty-barriers=1

// RUN: echo 'module {}' | not tiled-attn-opt --tile-generate-sdpa="head-dim=64 block-m=128 block-n=64" \
// RUN:   --tile-schedule="exp2=1 stages=2" --tilegpu-attach-target="chip=sm_90a" \
// RUN:   --tilegpu-assign-layouts="warps=8" --convert-tile-to-tilegpu="empty-barriers=1" \
// RUN:   --tilegpu-warp-specialize="producer-warps=0" 2>&1 | FileCheck %s --check-prefix=NOPRODUCER
// NOPRODUCER: error: tilegpu-warp-specialize: producer-warps must be positive, got 0

// A kernel without TMA loads (cp.async, sm_80) has nothing to hand over.
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="head-dim=64 block-m=64 block-n=64" \
// RUN:   --tile-schedule="exp2=1 stages=2" --tilegpu-attach-target="chip=sm_80" \
// RUN:   --tilegpu-assign-layouts="warps=4" --convert-tile-to-tilegpu \
// RUN:   --tilegpu-warp-specialize | FileCheck %s --check-prefix=NOTMA
// NOTMA: tilegpu.warps = 4
// NOTMA-NOT: tilegpu.warp_specialize
// NOTMA: tilegpu.async_copy
