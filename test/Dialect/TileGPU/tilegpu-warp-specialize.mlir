// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="head-dim=64 block-m=128 block-n=64 variant=top_left" \
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
// NOPRODUCER: error: tilegpu-warp-specialize: producer-warps must be in [1, 4] (one warpgroup), got 0
// The register budgets are setmaxnreg's (0, or a multiple of 8 in [24, 256]),
// checked even on a kernel with nothing to split (no TMA: mma.sync on sm_80).
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa --tile-schedule \
// RUN:   --tilegpu-attach-target="chip=sm_80" --tilegpu-assign-layouts --convert-tile-to-tilegpu \
// RUN:   | not tiled-attn-opt --tilegpu-warp-specialize="consumer-registers=250" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=REGISTERS
// REGISTERS: error: tilegpu-warp-specialize: consumer-registers must be 0 (the launch's) or a multiple of 8 in [24, 256], got 250

// A kernel without TMA loads (cp.async, sm_80) has nothing to hand over.
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="head-dim=64 block-m=64 block-n=64" \
// RUN:   --tile-schedule="exp2=1 stages=2" --tilegpu-attach-target="chip=sm_80" \
// RUN:   --tilegpu-assign-layouts="warps=4" --convert-tile-to-tilegpu \
// RUN:   --tilegpu-warp-specialize | FileCheck %s --check-prefix=NOTMA
// NOTMA: tilegpu.warps = 4
// NOTMA-NOT: tilegpu.warp_specialize
// NOTMA: tilegpu.async_copy

// mma-warp (tcgen05, two Q tiles): a third role, `mma`, shares the
// producer's warpgroup (the producer its first warp, `mma` the other three,
// one active, at the producer's budget) and runs only what the products
// need. The consumers arrive on their group's ready mbarrier of an
// accumulator and wait on its done mbarrier where they read it; they wait
// for no K/V slot (the MMA warp releases the slots by tcgen05.commit). The
// MMA role waits for the full K slot, then for each group's readiness
// before issuing that group's row block and committing it, then releases
// K's slot; the same for V and P.V. 12 warps in all.
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="head-dim=64 block-m=256 block-n=128 variant=top_left" \
// RUN:   --tile-schedule="exp2=1 lazy-rescale=8 lazy-rescale-guard=0 mask-split=1 stages=2" \
// RUN:   --tilegpu-attach-target=chip=sm_100a --tilegpu-assign-layouts=warps=8 \
// RUN:   --convert-tile-to-tilegpu="empty-barriers=1 ring-slots=2 mma-warp=1" \
// RUN:   --tilegpu-resolve-async-waits --tilegpu-allocate-memory \
// RUN:   --tilegpu-warp-specialize="producer-registers=48 consumer-registers=232 mma-warp=1" \
// RUN:   | FileCheck %s --check-prefix=MMA
// MMA-LABEL: func.func @sdpa_fwd
// MMA-SAME: tilegpu.warps = 12
// MMA: %[[SDONE:.*]] = tilegpu.alloc offset({{[0-9]+}}) : <2xi64, #tilegpu.shared<>>
// MMA: %[[SREADY:.*]] = tilegpu.alloc offset({{[0-9]+}}) : <2xi64, #tilegpu.shared<>>
// MMA: tilegpu.mbarrier_init %[[SREADY]][%{{.*}}], count(4)
// MMA: %[[ODONE:.*]] = tilegpu.alloc offset({{[0-9]+}}) : <2xi64, #tilegpu.shared<>>
// MMA: %[[OREADY:.*]] = tilegpu.alloc offset({{[0-9]+}}) : <2xi64, #tilegpu.shared<>>
// MMA: tilegpu.alloc offset({{[0-9]+}}) : <2x64x128xf16
// MMA-NEXT: %[[KFULL:.*]] = tilegpu.alloc offset({{[0-9]+}}) : <2xi64, #tilegpu.shared<>>
// MMA-NEXT: %[[KEMPTY:.*]] = tilegpu.alloc offset({{[0-9]+}}) : <2xi64, #tilegpu.shared<>>
// The slots' empty mbarriers expect the commits of the two issuers (one
// per Q tile) that release them.
// MMA: tilegpu.mbarrier_init %[[KEMPTY]][%{{.*}}], count(2)
// MMA: tilegpu.warp_specialize [#tilegpu.role<"consumer", warps = 8, registers = 232>, #tilegpu.role<"producer", warps = 1, registers = 48, active = 1>, #tilegpu.role<"mma", warps = 3, registers = 48, active = 2>] {
// Consumers: no products, no commits, no waits for readiness or for K.
// MMA-NOT: tilegpu.tmem_mma
// MMA-NOT: tilegpu.mma_commit
// MMA-NOT: tilegpu.mbarrier_wait %[[SREADY]]
// MMA-NOT: tilegpu.mbarrier_wait %[[KFULL]]
// MMA: %[[G:.*]] = tilegpu.group_id {groups = 2 : i64}
// MMA-NEXT: tilegpu.mbarrier_arrive %[[SREADY]][%[[G]]]
// MMA-NOT: tilegpu.tmem_mma
// MMA: tilegpu.mbarrier_wait %[[SDONE]][%{{.*}}]
// MMA-NOT: tilegpu.tmem_mma
// MMA-NOT: tilegpu.mbarrier_wait %[[SREADY]]
// MMA: tilegpu.tmem_load
// MMA-NOT: tilegpu.mbarrier_arrive %[[KEMPTY]]
// MMA: tilegpu.mbarrier_arrive %[[OREADY]]
// MMA-NOT: tilegpu.mbarrier_wait
// MMA: scf.yield
// Producer: the loads, into slots the MMA warp released.
// MMA: }, {
// MMA-NOT: tilegpu.tmem_mma
// MMA: tilegpu.tma_load
// MMA: tilegpu.mbarrier_wait %[[KEMPTY]]
// MMA-NEXT: tilegpu.tma_load {{.*}}, %[[KFULL]][
// MMA-NOT: tilegpu.tmem_mma
// MMA: }, {
// MMA role: no register tile, no load, no arrival; two active warps, the
// issuers of the two Q tiles: per product, each waits for its group's
// readiness (at its group id), issues its group's rows and commits them to
// its group's mbarrier; then both release the slot the product read.
// MMA-NOT: tensor<
// MMA-NOT: tilegpu.tma_load
// MMA-NOT: tilegpu.mbarrier_arrive
// MMA: scf.for
// MMA: tilegpu.mbarrier_wait %[[KFULL]]
// MMA: %[[GS:.*]] = tilegpu.group_id {groups = 2 : i64}
// MMA: tilegpu.mbarrier_wait %[[SREADY]][%[[GS]]], phase(
// MMA-NEXT: tilegpu.tmem_mma {{.*}}accumulate(%false) :
// MMA-NEXT: arith.constant 0 : index
// MMA-NEXT: tilegpu.mma_commit %[[SDONE]][%{{.*}}] {groups = 2 : i64}
// MMA: tilegpu.mma_commit %[[KEMPTY]][%{{.*}}] {groups = 2 : i64, joint}
// MMA: tilegpu.mbarrier_wait %[[OREADY]][%{{.*}}], phase(
// MMA-NEXT: tilegpu.tmem_mma {{.*}}accumulate(%true) :
// MMA-NEXT: arith.constant 0 : index
// MMA-NEXT: tilegpu.mma_commit %[[ODONE]][%{{.*}}] {groups = 2 : i64}
// MMA: tilegpu.mma_commit %{{.*}}[%{{.*}}] {groups = 2 : i64, joint}
// MMA-NEXT: scf.yield
// MMA-NOT: tensor<
// MMA-NOT: tilegpu.tma_load
// MMA-NOT: tilegpu.mbarrier_arrive
// MMA-NOT: tilegpu.tmem_load
// MMA: return

// mma-warp asks for products handed over by ready mbarriers, and for a
// producer warpgroup with room for the MMA warp.
// RUN: echo 'module {}' | not tiled-attn-opt --tile-generate-sdpa="head-dim=64 block-m=256 block-n=128" \
// RUN:   --tile-schedule="exp2=1 stages=2" --tilegpu-attach-target=chip=sm_100a --tilegpu-assign-layouts=warps=8 \
// RUN:   --convert-tile-to-tilegpu="empty-barriers=1 ring-slots=2" \
// RUN:   --tilegpu-warp-specialize="mma-warp=1" 2>&1 | FileCheck %s --check-prefix=NOREADY
// NOREADY: error: tilegpu-warp-specialize: mma-warp needs tcgen05 products handed over by ready mbarriers; run convert-tile-to-tilegpu with mma-warp=1
// RUN: echo 'module {}' | not tiled-attn-opt --tile-generate-sdpa="head-dim=64 block-m=256 block-n=128" \
// RUN:   --tile-schedule="exp2=1 stages=2" --tilegpu-attach-target=chip=sm_100a --tilegpu-assign-layouts=warps=8 \
// RUN:   --convert-tile-to-tilegpu="empty-barriers=1 ring-slots=2 mma-warp=1" \
// RUN:   --tilegpu-warp-specialize="mma-warp=1 producer-warps=2" 2>&1 | FileCheck %s --check-prefix=MMAWARPS
// MMAWARPS: error: tilegpu-warp-specialize: mma-warp puts an MMA warp per group of rows (2) beside the producer's in its warpgroup, which needs at least 3 warps, not 2

// An empty mbarrier that the consumers release expects one arrival per
// consumer warp (here the IR is edited to expect 7 of the 8).
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="head-dim=64 block-m=256 block-n=128" \
// RUN:   --tile-schedule="exp2=1 stages=2" --tilegpu-attach-target=chip=sm_100a --tilegpu-assign-layouts=warps=8 \
// RUN:   --convert-tile-to-tilegpu="empty-barriers=1 ring-slots=2" | sed 's/count(8)/count(7)/' \
// RUN:   | not tiled-attn-opt --tilegpu-warp-specialize 2>&1 | FileCheck %s --check-prefix=EMPTYCOUNT
// EMPTYCOUNT: error: tilegpu-warp-specialize: an empty mbarrier expects 7 arrivals, not one per consumer warp (8)

// With correction (after convert-tile-to-tilegpu's hand-offs), a role
// `correction` of as many warps as the consumers follows them: it waits for
// the factors and O's products, reads the factors, scales O and arrives on
// the ready mbarrier of P.V, which now expects 8 warps per Q tile (4 of the
// softmax, 4 of the correction). The consumers write the factors and arrive,
// and no longer scale O.
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="head-dim=64 block-m=256 block-n=128 variant=top_left" \
// RUN:   --tile-schedule="exp2=1 lazy-rescale=8 lazy-rescale-guard=0 mask-split=1 stages=2" \
// RUN:   --tilegpu-attach-target=chip=sm_100a --tilegpu-assign-layouts=warps=8 \
// RUN:   --convert-tile-to-tilegpu="empty-barriers=1 ring-slots=2 mma-warp=1 correction=1" \
// RUN:   --tilegpu-resolve-async-waits --tilegpu-allocate-memory \
// RUN:   --tilegpu-warp-specialize="producer-registers=48 consumer-registers=184 mma-warp=1 correction=1 correction-registers=48" \
// RUN:   | FileCheck %s --check-prefix=CORR
// CORR-LABEL: func.func @sdpa_fwd
// CORR-SAME: tilegpu.warps = 20
// CORR: %[[O:.*]] = tilegpu.alloc offset(0) : <256x64xf32, #tilegpu.tensor_memory<>>
// CORR: tilegpu.alloc offset({{[0-9]+}}) : <2xi64, #tilegpu.shared<>>
// CORR: tilegpu.alloc offset({{[0-9]+}}) : <2xi64, #tilegpu.shared<>>
// CORR: %[[ODONE:.*]] = tilegpu.alloc offset({{[0-9]+}}) : <2xi64, #tilegpu.shared<>>
// CORR: %[[OREADY:.*]] = tilegpu.alloc offset({{[0-9]+}}) : <2xi64, #tilegpu.shared<>>
// CORR: tilegpu.mbarrier_init %[[OREADY]][%{{.*}}], count(8)
// CORR: %[[FACTORS:.*]] = tilegpu.alloc offset({{[0-9]+}}) : <256xf32, #tilegpu.shared<>>
// CORR-NEXT: %[[FULL:.*]] = tilegpu.alloc offset({{[0-9]+}}) : <2xi64, #tilegpu.shared<>>
// CORR: tilegpu.mbarrier_init %[[FULL]][%{{.*}}], count(4)
// CORR: tilegpu.warp_specialize [#tilegpu.role<"consumer", warps = 8, registers = 184>, #tilegpu.role<"correction", warps = 8, registers = 48>, #tilegpu.role<"producer", warps = 1, registers = 48, active = 1>, #tilegpu.role<"mma", warps = 3, registers = 48, active = 2>] {
// Consumers: the factors out, no scaling, no read back.
// CORR-NOT: tilegpu.tmem_scale_rows
// CORR-NOT: tilegpu.local_load
// CORR: tilegpu.local_store %{{.*}}, %[[FACTORS]]
// CORR-NEXT: tilegpu.mbarrier_arrive %[[FULL]][
// CORR-NOT: tilegpu.tmem_scale_rows
// CORR: tilegpu.mbarrier_arrive %[[OREADY]][
// CORR-NOT: tilegpu.tmem_scale_rows
// CORR-NOT: tilegpu.local_load
// CORR-NOT: tilegpu.tmem_scale_store
// CORR-NOT: tile.store
// CORR: }, {
// Correction: per block, the wait for the last P.V and for the factors, the
// scaling, the arrival for the next P.V; no register tile but the factors.
// CORR-NOT: tilegpu.tmem_load
// CORR-NOT: tilegpu.local_store
// CORR: scf.for
// CORR: tilegpu.mbarrier_wait %[[ODONE]][
// CORR: %[[G:.*]] = tilegpu.group_id {groups = 2 : i64}
// CORR: tilegpu.mbarrier_wait %[[FULL]][%[[G]]], phase(
// CORR-NEXT: %[[F:.*]] = tilegpu.local_load %[[FACTORS]]
// CORR-NEXT: tilegpu.tmem_scale_rows %[[O]], %[[F]]
// CORR: tilegpu.mbarrier_arrive %[[OREADY]][
// CORR-NOT: {{^ *}}tilegpu.
// CORR: scf.yield
// And the epilogue: once the last P.V is done and 1 / l handed over, O
// scaled and stored.
// CORR: tilegpu.tmem_scale_store %[[O]], %{{.*}} to %arg3[
// CORR-NOT: tilegpu.tmem_load
// CORR-NOT: tilegpu.local_store
// CORR-NOT: tilegpu.tma_load
// CORR: }, {
// CORR: tilegpu.tma_load
// CORR: }, {
// CORR: tilegpu.tmem_mma
// CORR-NOT: tilegpu.tmem_scale_rows
// CORR: return

// correction needs mma-warp and the hand-offs, and hand-offs need it.
// RUN: echo 'module {}' | not tiled-attn-opt --tile-generate-sdpa="head-dim=64 block-m=256 block-n=128" \
// RUN:   --tile-schedule="exp2=1 stages=2" --tilegpu-attach-target=chip=sm_100a --tilegpu-assign-layouts=warps=8 \
// RUN:   --convert-tile-to-tilegpu="empty-barriers=1 ring-slots=2 mma-warp=1" \
// RUN:   --tilegpu-warp-specialize="mma-warp=1 correction=1" 2>&1 | FileCheck %s --check-prefix=NOHANDOFF
// NOHANDOFF: error: tilegpu-warp-specialize: correction needs the corrections of O handed off through shared memory; run convert-tile-to-tilegpu with correction=1
// RUN: echo 'module {}' | not tiled-attn-opt --tile-generate-sdpa="head-dim=64 block-m=256 block-n=128" \
// RUN:   --tile-schedule="exp2=1 stages=2" --tilegpu-attach-target=chip=sm_100a --tilegpu-assign-layouts=warps=8 \
// RUN:   --convert-tile-to-tilegpu="empty-barriers=1 ring-slots=2 mma-warp=1 correction=1" \
// RUN:   --tilegpu-warp-specialize="correction=1" 2>&1 | FileCheck %s --check-prefix=CORRNOMMA
// CORRNOMMA: error: tilegpu-warp-specialize: correction needs mma-warp: the correction warps hand O to the MMA warps through its ready mbarriers
// RUN: echo 'module {}' | not tiled-attn-opt --tile-generate-sdpa="head-dim=64 block-m=256 block-n=128" \
// RUN:   --tile-schedule="exp2=1 stages=2" --tilegpu-attach-target=chip=sm_100a --tilegpu-assign-layouts=warps=8 \
// RUN:   --convert-tile-to-tilegpu="empty-barriers=1 ring-slots=2 mma-warp=1 correction=1" \
// RUN:   --tilegpu-warp-specialize="mma-warp=1" 2>&1 | FileCheck %s --check-prefix=HANDOFFNOCORR
// HANDOFFNOCORR: error: tilegpu-warp-specialize: the kernel hands its corrections of O off through shared memory (convert-tile-to-tilegpu with correction=1); run with correction=1, or convert without it
