// RUN: tiled-attn-opt %S/Inputs/column-blocks-lhs.mlir --tilegpu-attach-target="chip=sm_90a" \
// RUN:   --tilegpu-assign-layouts="warps=8" --convert-tile-to-tilegpu | FileCheck %s --check-prefix=LHS
// A register tile that an mma takes from shared memory (Pᵀ of a 64-key
// block on two warpgroups side by side, each of which reads all of it):
// written into its panels by each warpgroup's block (tilegpu.local_store)
// between barriers, then read through its buffer, as a transpose is.
// LHS-LABEL: func.func @column_blocks_lhs
// LHS: %[[PT:.*]] = tilegpu.alloc : <64x64xf16, #tilegpu.shared<swizzle = 128>>
// LHS: arith.truncf
// LHS: gpu.barrier
// LHS-NEXT: tilegpu.local_store %{{.*}}, %[[PT]] : tensor<64x64xf16, #tilegpu.wgmma<acc, warpgroups = 2, column_blocks = 2>>, <64x64xf16, #tilegpu.shared<swizzle = 128>>
// LHS-NEXT: gpu.barrier
// LHS-NEXT: tilegpu.mma %[[PT]], %{{.*}} : !tilegpu.buffer<64x64xf16, #tilegpu.shared<swizzle = 128>>, <64x256xf16, #tilegpu.shared<swizzle = 128>> -> tensor<64x256xf32, #tilegpu.wgmma<acc, warpgroups = 2, column_blocks = 2>>

// A transpose of a tile that a move has just written into shared memory
// (the wide backward's dSᵀ: the lhs of dK's product, and transposed of
// dQ's) reads the move's buffer through a transposed view: one buffer,
// one write and its two barriers.
// RUN: tiled-attn-opt %S/Inputs/shared-lhs-both-ways.mlir --tilegpu-attach-target="chip=sm_90a" \
// RUN:   --tilegpu-assign-layouts="warps=8" --convert-tile-to-tilegpu | FileCheck %s --check-prefix=BOTH-WAYS
// BOTH-WAYS-LABEL: func.func @shared_lhs_both_ways
// BOTH-WAYS: %[[DST:.*]] = tilegpu.alloc : <64x64xbf16, #tilegpu.shared<swizzle = 128>>
// BOTH-WAYS-NOT: tilegpu.alloc
// BOTH-WAYS: arith.truncf
// BOTH-WAYS: gpu.barrier
// BOTH-WAYS-NEXT: tilegpu.local_store %{{.*}}, %[[DST]]
// BOTH-WAYS-NEXT: gpu.barrier
// BOTH-WAYS-NEXT: tilegpu.mma %[[DST]], %{{.*}} : !tilegpu.buffer<64x64xbf16, #tilegpu.shared<swizzle = 128>>, <64x256xbf16
// BOTH-WAYS-NEXT: %[[DS:.*]] = tilegpu.transpose_view %[[DST]] : <64x64xbf16, #tilegpu.shared<swizzle = 128>> -> <64x64xbf16, #tilegpu.shared<swizzle = 128, transposed = true>>
// BOTH-WAYS-NEXT: tilegpu.mma %[[DS]], %{{.*}} : !tilegpu.buffer<64x64xbf16, #tilegpu.shared<swizzle = 128, transposed = true>>, <64x256xbf16
// BOTH-WAYS-NOT: tilegpu.local_store
// BOTH-WAYS: return

// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="head-dim=128 block-m=128 block-n=128" \
// RUN:   --tile-schedule="exp2=1 stages=2" --tilegpu-attach-target="chip=sm_90a" \
// RUN:   --tilegpu-assign-layouts="warps=8" --convert-tile-to-tilegpu | FileCheck %s
// Pages of 16 under blocks of 64: K's and V's maps have a box of one page's
// rows, and each block's copy gathers four pages.
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="head-dim=128 block-m=64 block-n=64 page-size=16 variant=none_seqused_paged" \
// RUN:   --tile-schedule="exp2=1 stages=2" --tilegpu-attach-target="chip=sm_90a" \
// RUN:   --tilegpu-assign-layouts="warps=4" --convert-tile-to-tilegpu | FileCheck %s --check-prefix=GATHER
// GATHER-LABEL: func.func @sdpa_fwd
// GATHER-SAME: !tilegpu.tensor_map<16x64xf16, swizzle = 128> {tilegpu.param = #tilegpu.param<tensor_map, "k"
// GATHER-SAME: !tilegpu.tensor_map<16x64xf16, swizzle = 128> {tilegpu.param = #tilegpu.param<tensor_map, "v"
// GATHER: tilegpu.tma_load %{{.*}} gather(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) into {{.*}} : <16x64xf16, swizzle = 128>, <128x64xf16, #tilegpu.shared<swizzle = 128, transposed = true>>
// A bias block (block-loads) is a TMA stream as K and V are: its own map
// (over the captured view, named after it), a ring of two slots with full
// and empty mbarriers; its reader waits for the slot, reads it into the
// scores' layout and releases it. K's release after its wgmma is one
// predicated arrive; the bias slot's after its read into registers keeps
// its branch (tilegpu.mbarrier_arrive).
// RUN: tiled-attn-opt %repo/kernels/functions/bias.mlir --tile-generate-sdpa="head-dim=64 variant=none+bias" \
// RUN:   --tile-schedule="block-loads=1 stages=2" --tilegpu-attach-target="chip=sm_90a" --tilegpu-assign-layouts="warps=4" \
// RUN:   --convert-tile-to-tilegpu="empty-barriers=1 ring-slots=2" | FileCheck %s --check-prefix=BIAS
// BIAS-LABEL: func.func @sdpa_fwd
// BIAS-SAME: %[[BMAP:[a-z0-9]+]]: !tilegpu.tensor_map<64x32xf32, swizzle = 128> {tilegpu.param = #tilegpu.param<tensor_map, "bias"
// BIAS: %[[RING:.*]] = tilegpu.alloc : <2x64x64xf32, #tilegpu.shared<swizzle = 128>>
// BIAS-NEXT: %[[FULL:.*]] = tilegpu.alloc : <2xi64, #tilegpu.shared<>>
// BIAS-NEXT: %[[FREE:.*]] = tilegpu.alloc : <2xi64, #tilegpu.shared<>>
// BIAS: scf.for
// BIAS: tilegpu.mbarrier_wait %[[FREE]]
// BIAS-NEXT: tilegpu.tma_load %[[BMAP]][{{.*}}] into %{{.*}}, %[[FULL]][{{.*}}] : <64x32xf32, swizzle = 128>, <64x64xf32, #tilegpu.shared<swizzle = 128>>
// BIAS: tilegpu.mbarrier_wait %[[FULL]]
// BIAS-NEXT: tilegpu.local_load %{{.*}} : <64x64xf32, #tilegpu.shared<swizzle = 128>> -> tensor<64x64xf32, #tilegpu.wgmma<acc, warpgroups = 1>>
// BIAS: tilegpu.mbarrier_arrive %[[FREE]][%{{.*}}] : <2xi64
// BIAS: tilegpu.mma_wait
// BIAS-NEXT: arith.constant 2 : index
// BIAS-NEXT: arith.remui
// BIAS-NEXT: tilegpu.mbarrier_arrive %{{.*}}[%{{.*}}] predicated :

// The wgmma family's loads are TMA's: each view that is loaded gets a tensor
// map (a new kernel argument tagged with its parameter), each stream a ring
// of 128-byte swizzled slots and one mbarrier per slot, initialized to one
// arrival before anything is loaded.

// CHECK-LABEL: func.func @sdpa_fwd
// CHECK-SAME: %[[QMAP:[a-z0-9]+]]: !tilegpu.tensor_map<128x64xf16, swizzle = 128> {tilegpu.param = #tilegpu.param<tensor_map, "q" : !tilegpu.tensor_map<128x64xf16, swizzle = 128>>}
// CHECK-SAME: %[[KMAP:[a-z0-9]+]]: !tilegpu.tensor_map<128x64xf16, swizzle = 128> {tilegpu.param = #tilegpu.param<tensor_map, "k"
// CHECK-SAME: %[[VMAP:[a-z0-9]+]]: !tilegpu.tensor_map<128x64xf16, swizzle = 128> {tilegpu.param = #tilegpu.param<tensor_map, "v"
// CHECK: %[[Q:.*]] = tilegpu.alloc : <128x128xf16, #tilegpu.shared<swizzle = 128>>
// CHECK: %[[QBAR:.*]] = tilegpu.alloc : <1xi64, #tilegpu.shared<>>
// CHECK: %[[KRING:.*]] = tilegpu.alloc : <2x128x128xf16, #tilegpu.shared<swizzle = 128, transposed = true>>
// CHECK: %[[KBAR:.*]] = tilegpu.alloc : <2xi64, #tilegpu.shared<>>
// CHECK: %[[VRING:.*]] = tilegpu.alloc : <2x128x128xf16, #tilegpu.shared<swizzle = 128>>
// CHECK: %[[VBAR:.*]] = tilegpu.alloc : <2xi64, #tilegpu.shared<>>
// CHECK-COUNT-5: tilegpu.mbarrier_init {{.*}} count(1)
// CHECK: gpu.barrier

// Q: its own buffer, count 0 of its barrier; K and V: slot (count mod 2).
// CHECK: tilegpu.tma_load %[[QMAP]][{{.*}}] into %[[Q]], %[[QBAR]][
// CHECK: %[[K0:.*]] = tilegpu.tma_load %[[KMAP]][{{.*}}] into {{.*}}, %[[KBAR]][
// CHECK: %[[V0:.*]] = tilegpu.tma_load %[[VMAP]][{{.*}}] into {{.*}}, %[[VBAR]][

// Readers wait on their slot's mbarrier for the phase (count / 2) mod 2.
// CHECK: tilegpu.mbarrier_wait %[[QBAR]][{{.*}}], phase(

// The loop carries each stream's count of loads and, with each buffer, the
// count of the load that fills it.
// CHECK: scf.for {{.*}} iter_args({{.*}}%[[KBUF:[a-z0-9]+]] = %[[K0]], %[[VBUF:[a-z0-9]+]] = %[[V0]], %[[KCOUNT:[a-z0-9]+]] = %{{.*}}, %[[VCOUNT:[a-z0-9]+]] = %{{.*}}, %[[KTICKET:[a-z0-9]+]] = %{{.*}}, %[[VTICKET:[a-z0-9]+]] = %{{.*}})
// CHECK: %[[KSLOT:.*]] = arith.remui %[[KCOUNT]], %{{.*}} : index
// CHECK: gpu.barrier
// CHECK: tilegpu.tma_load %[[KMAP]][{{.*}}] into {{.*}}, %[[KBAR]][%[[KSLOT]]]
// CHECK: %[[KWAITSLOT:.*]] = arith.remui %[[KTICKET]], %{{.*}} : index
// CHECK: %[[KROUND:.*]] = arith.divui %[[KTICKET]], %{{.*}} : index
// CHECK: tilegpu.mbarrier_wait %[[KBAR]][%[[KWAITSLOT]]], phase(
// CHECK-NEXT: tilegpu.mma %{{.*}}, %[[KBUF]], {{.*}} -> tensor<128x128xf32, #tilegpu.wgmma<acc, warpgroups = 2>>
// CHECK: tilegpu.mbarrier_wait %[[VBAR]][
// CHECK-NEXT: tilegpu.mma %{{.*}}, %[[VBUF]], {{.*}} : tensor<128x128xf16, #tilegpu.wgmma<opa, warpgroups = 2>>
// CHECK: scf.yield {{.*}}, %[[KCOUNT]], %[[VCOUNT]] :

// Before the staging buffer of the output, which may overlap the rings, the
// copies still in flight (the last two of each stream) land.
// CHECK: tilegpu.alloc : <128x128xf16, #tilegpu.shared<pad = 8>>
// CHECK: scf.if
// CHECK: tilegpu.mbarrier_wait %[[KBAR]]
// CHECK: tilegpu.mbarrier_wait %[[VBAR]]
// CHECK: tilegpu.staged_store {{.*}} : tensor<128x128xf16, #tilegpu.wgmma<acc, warpgroups = 2>>

// wgmma is asynchronous: each product gets a tilegpu.mma_wait before its
// first reader. With tile-defer-pv (block j's Q.K^T, then block j-1's P.V
// in flight together):
// - V, read one iteration after its refill is issued, gets three slots;
// - the wait for Q.K^T comes after the P.V is issued; the wait for P.V
//   comes before the new P is computed (it takes the place of the P that
//   wgmma still reads, on the back edge) and before the yield;
// - the branch around prologue, loop and epilogue returns each stream's
//   count and the counts of the buffers in flight it hands on.
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="head-dim=64 block-m=128 block-n=64" \
// RUN:   --tile-schedule="exp2=1 stages=2 defer-pv=1" --tilegpu-attach-target="chip=sm_90a" \
// RUN:   --tilegpu-assign-layouts="warps=8" --convert-tile-to-tilegpu | FileCheck %s --check-prefix=DEFER
// DEFER: tilegpu.alloc : <2x64x64xf16, #tilegpu.shared<swizzle = 128, transposed = true>>
// DEFER: tilegpu.alloc : <3x64x64xf16, #tilegpu.shared<swizzle = 128>>
// DEFER: %[[BR:.*]]:9 = scf.if
// DEFER: %[[S0:.*]] = tilegpu.mma
// DEFER-NOT: tilegpu.mma
// DEFER: tilegpu.mma_wait %[[S0]] :
// DEFER-NEXT: arith.select
// DEFER: scf.for {{.*}} iter_args(
// DEFER: %[[S:.*]] = tilegpu.mma %{{.*}}, %{{.*}}, %{{.*}} : !tilegpu.buffer<128x64xf16
// DEFER: %[[PA:.*]] = tile.convert_layout %[[P:arg[0-9]+]] :
// DEFER: %[[O:.*]] = tilegpu.mma %[[PA]], %{{.*}}, %{{.*}} : tensor<128x64xf16, #tilegpu.wgmma<opa, warpgroups = 2>>
// DEFER-NOT: tilegpu.mma
// DEFER: tilegpu.mma_wait %[[S]] :
// DEFER: %[[OW:.*]] = tilegpu.mma_wait %[[O]] :
// DEFER-NEXT: %[[PN:.*]] = arith.truncf
// DEFER-NEXT: scf.yield %{{.*}}, %{{.*}}, %[[OW]], {{.*}}, %[[PN]],
// DEFER: tilegpu.mma
// DEFER-NEXT: tilegpu.mma_wait
// DEFER-NEXT: scf.yield {{.*}} : {{.*}}, index, index, index, index
// DEFER: } else {
// DEFER-NEXT: scf.yield {{.*}} : {{.*}}, index, index, index, index

// With empty-barriers each ring slot also gets an "empty" mbarrier that
// expects one arrival per warp (8 here), and no CTA barrier paces the
// refills any more:
// - a refill of slot s waits on empty[s] for the phase before its own
//   round (count / slots, flipped: the first round passes at once);
// - the reader of a block releases its slot after the wait of the
//   asynchronous mma that reads it (K after Q.K^T's wait, V after P.V's);
// - a prefetch that nobody reads (the last one of each stream) waits for
//   its copy and is released at once.
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="head-dim=64 block-m=128 block-n=64" \
// RUN:   --tile-schedule="exp2=1 stages=2 defer-pv=1" --tilegpu-attach-target="chip=sm_90a" \
// RUN:   --tilegpu-assign-layouts="warps=8" --convert-tile-to-tilegpu="empty-barriers=1" \
// RUN:   | FileCheck %s --check-prefix=EMPTY
// EMPTY: %[[KBAR:.*]] = tilegpu.alloc : <2xi64, #tilegpu.shared<>>
// EMPTY-NEXT: %[[KEMPTY:.*]] = tilegpu.alloc : <2xi64, #tilegpu.shared<>>
// EMPTY-NEXT: tilegpu.alloc : <3x64x64xf16
// EMPTY-NEXT: %[[VBAR:.*]] = tilegpu.alloc : <3xi64, #tilegpu.shared<>>
// EMPTY-NEXT: %[[VEMPTY:.*]] = tilegpu.alloc : <3xi64, #tilegpu.shared<>>
// EMPTY-COUNT-6: tilegpu.mbarrier_init {{.*}} count(1)
// EMPTY-COUNT-2: tilegpu.mbarrier_init %[[KEMPTY]]{{.*}} count(8)
// EMPTY-COUNT-3: tilegpu.mbarrier_init %[[VEMPTY]]{{.*}} count(8)
// EMPTY-NEXT: gpu.barrier
// EMPTY-NOT: gpu.barrier
// EMPTY: %[[ROUND:.*]] = arith.divui %{{.*}}, %[[TWO:.*]] : index
// EMPTY: %[[PAR:.*]] = arith.trunci
// EMPTY: %[[PREV:.*]] = arith.xori %[[PAR]], %{{.*}} : i1
// EMPTY-NEXT: tilegpu.mbarrier_wait %[[KEMPTY]][%[[SLOT:.*]]], phase(%[[PREV]])
// EMPTY-NEXT: tilegpu.tma_load {{.*}}, %[[KBAR]][%[[SLOT]]]
// EMPTY: scf.for
// EMPTY: tilegpu.mbarrier_wait %[[VEMPTY]]
// EMPTY-NEXT: tilegpu.tma_load
// EMPTY: %[[S:.*]] = tilegpu.mma %{{.*}}, %{{.*}}, %{{.*}} : !tilegpu.buffer<128x64xf16
// EMPTY: %[[O:.*]] = tilegpu.mma %{{.*}}, %{{.*}}, %{{.*}} : tensor<128x64xf16
// EMPTY: tilegpu.mma_wait %[[S]] :
// EMPTY-NEXT: arith.constant 2 : index
// EMPTY-NEXT: %[[KS:.*]] = arith.remui
// EMPTY-NEXT: tilegpu.mbarrier_arrive %[[KEMPTY]][%[[KS]]]
// EMPTY: tilegpu.mma_wait %[[O]] :
// EMPTY-NEXT: arith.constant 3 : index
// EMPTY-NEXT: %[[VS:.*]] = arith.remui
// EMPTY-NEXT: tilegpu.mbarrier_arrive %[[VEMPTY]][%[[VS]]]
// EMPTY: } else {
// EMPTY: tilegpu.mbarrier_wait %[[VBAR]][%[[DV:.*]]], phase(
// EMPTY-NEXT: tilegpu.mbarrier_arrive %[[VEMPTY]][%[[DV]]]
// EMPTY: tilegpu.mbarrier_wait %[[KBAR]][%[[DK:.*]]], phase(
// EMPTY-NEXT: tilegpu.mbarrier_arrive %[[KEMPTY]][%[[DK]]]
// EMPTY: gpu.barrier
// EMPTY-NEXT: tilegpu.staged_store

// ring-slots sets every TMA ring's slots (here 2 for V, which the deferred
// P.V would otherwise keep at 3); it needs empty-barriers.
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="head-dim=64 block-m=128 block-n=64" \
// RUN:   --tile-schedule="exp2=1 stages=2 defer-pv=1" --tilegpu-attach-target="chip=sm_90a" \
// RUN:   --tilegpu-assign-layouts="warps=8" --convert-tile-to-tilegpu="empty-barriers=1 ring-slots=2" \
// RUN:   | FileCheck %s --check-prefix=SLOTS
// SLOTS: tilegpu.alloc : <2x64x64xf16, #tilegpu.shared<swizzle = 128, transposed = true>>
// SLOTS: tilegpu.alloc : <2x64x64xf16, #tilegpu.shared<swizzle = 128>>
// SLOTS-NEXT: tilegpu.alloc : <2xi64, #tilegpu.shared<>>
// SLOTS-NEXT: tilegpu.alloc : <2xi64, #tilegpu.shared<>>
// RUN: echo 'module {}' | not tiled-attn-opt --tile-generate-sdpa="head-dim=64 block-m=128 block-n=64" \
// RUN:   --tile-schedule="exp2=1 stages=2" --tilegpu-attach-target="chip=sm_90a" \
// RUN:   --tilegpu-assign-layouts="warps=8" --convert-tile-to-tilegpu="ring-slots=2" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=SLOTS-ERR
// SLOTS-ERR: error: convert-tile-to-tilegpu: ring-slots (2) needs empty-barriers and at least one slot

// The mma.sync family with tma=1 (consumer Blackwell) takes the same path.
// With masked-first, the masked loop's last refills are prefetches that no
// loop reads (the unmasked loop starts again from block 0): before a load
// outside a loop arms its slot's mbarrier again, every thread waits for the
// latest load of each slot (the other slot's first: the unmasked loop's
// first refill goes there and waits for nothing; then its own slot's
// previous phase; at once when they were read), then the CTA barrier; a
// stream's first load (count 0) needs no such wait.
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="head-dim=64 block-m=64 block-n=64" \
// RUN:   --tile-schedule="exp2=1 mask-split=1 masked-first=1 stages=2" --tilegpu-attach-target="chip=sm_120a" \
// RUN:   --tilegpu-assign-layouts="tma=1" --convert-tile-to-tilegpu | FileCheck %s --check-prefix=MASKED-FIRST
// MASKED-FIRST: tilegpu.mbarrier_init
// MASKED-FIRST-NOT: tilegpu.mbarrier_wait
// MASKED-FIRST: tilegpu.tma_load %{{.*}} into %{{.*}}, %[[KBARS:[0-9]+]][%{{.*}}] : <64x64xf16, swizzle = 128>, <64x64xf16, #tilegpu.shared<swizzle = 128, transposed = true>>
// MASKED-FIRST-NOT: tilegpu.mbarrier_wait
// MASKED-FIRST: tilegpu.tma_load %{{.*}} into %{{.*}}, %[[VBARS:[0-9]+]][%{{.*}}] : <64x64xf16, swizzle = 128>, <64x64xf16, #tilegpu.shared<swizzle = 128>>
// MASKED-FIRST: scf.for
// MASKED-FIRST: scf.yield
// MASKED-FIRST-NEXT: }
// MASKED-FIRST: %[[KNEXT:.*]] = arith.addi %{{.*}}, %c1
// MASKED-FIRST: %[[KOTHER:.*]] = arith.remui %[[KNEXT]], %c2
// MASKED-FIRST: tilegpu.mbarrier_wait %[[KBARS]][%[[KOTHER]]], phase(%{{.*}})
// MASKED-FIRST: tilegpu.mbarrier_wait %[[KBARS]][%[[KSLOT:[0-9]+]]], phase(%{{.*}})
// MASKED-FIRST-NEXT: gpu.barrier
// MASKED-FIRST-NEXT: tilegpu.tma_load %{{.*}} into %{{.*}}, %[[KBARS]][%[[KSLOT]]]
// MASKED-FIRST: tilegpu.mbarrier_wait %[[VBARS]][%{{[0-9]+}}], phase(%{{.*}})
// MASKED-FIRST: tilegpu.mbarrier_wait %[[VBARS]][%[[VSLOT:[0-9]+]]], phase(%{{.*}})
// MASKED-FIRST-NEXT: gpu.barrier
// MASKED-FIRST-NEXT: tilegpu.tma_load %{{.*}} into %{{.*}}, %[[VBARS]][%[[VSLOT]]]
// MASKED-FIRST: scf.for

// tma-reduce: the backward's adding store of dQ's part into dq_accum goes
// through one swizzled f32 buffer (32 floats a panel row), shared by the
// mask split's loops, and a TMA reduction; each waits until the previous
// reduction has read the buffer (before an earlier barrier of its block,
// where there is one), and the last is waited for after the loop
// (before the epilogue's staging buffers may reuse its memory).
// Without the option, or into a slice of a view (varlen), atomics:
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa-backward="head-dim=64 dtype=bf16" \
// RUN:   --tilegpu-attach-target="chip=sm_90a" --tilegpu-assign-layouts="warps=4" \
// RUN:   --convert-tile-to-tilegpu="tma-reduce=1 merge-barriers=1" | FileCheck %s --check-prefix=REDUCE
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa-backward="head-dim=64 dtype=bf16" \
// RUN:   --tilegpu-attach-target="chip=sm_90a" --tilegpu-assign-layouts="warps=4" \
// RUN:   --convert-tile-to-tilegpu="tma-reduce=1" | FileCheck %s --check-prefix=REDUCE-PLAIN
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa-backward="head-dim=64 dtype=bf16" \
// RUN:   --tilegpu-attach-target="chip=sm_90a" --tilegpu-assign-layouts="warps=4" \
// RUN:   --convert-tile-to-tilegpu | FileCheck %s --check-prefix=NO-REDUCE
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa-backward="head-dim=64 dtype=bf16 varlen=1" \
// RUN:   --tilegpu-attach-target="chip=sm_90a" --tilegpu-assign-layouts="warps=4" \
// RUN:   --convert-tile-to-tilegpu="tma-reduce=1" | FileCheck %s --check-prefix=NO-REDUCE
// REDUCE-LABEL: func.func @sdpa_bwd(
// REDUCE-SAME: %[[MAP:[^:]*]]: !tilegpu.tensor_map<64x32xf32, swizzle = 128> {tilegpu.param = #tilegpu.param<tensor_map, "dq_accum"
// REDUCE-NEXT: %[[BUF:.*]] = tilegpu.alloc : <64x64xf32, #tilegpu.shared<swizzle = 128>>
// REDUCE-NOT: tilegpu.alloc : <64x64xf32
// Without merge-barriers, four barriers a step: dSᵀ's buffer free, dSᵀ
// written, the reduction's buffer free, staged.
// REDUCE-PLAIN-LABEL: func.func @sdpa_bwd(
// REDUCE-PLAIN: scf.for
// REDUCE-PLAIN: scf.for
// REDUCE-PLAIN: tilegpu.mma %{{.*}} : tensor<64x64xbf16, #tilegpu.wgmma<opa, warpgroups = 1>>
// REDUCE-PLAIN: gpu.barrier
// REDUCE-PLAIN-NEXT: tilegpu.local_store %{{.*}} transposed = true>>
// REDUCE-PLAIN-NEXT: gpu.barrier
// REDUCE-PLAIN-NEXT: tilegpu.mma
// REDUCE-PLAIN: tilegpu.tma_reduce_wait %{{.*}} {read}
// REDUCE-PLAIN-NEXT: gpu.barrier
// REDUCE-PLAIN-NEXT: tilegpu.local_store
// REDUCE-PLAIN-NEXT: gpu.barrier
// REDUCE-PLAIN-NEXT: tilegpu.tma_reduce
// With merge-barriers (below), two.
// dSᵀ's buffer: its readers (dQ's product) are waited for before the
// reduction's barrier later in the step, so the barrier before its write
// (every thread done reading it) stands before the loop, not in it.
// REDUCE: scf.for
// REDUCE: gpu.barrier
// REDUCE-NEXT: scf.for
// REDUCE: tilegpu.mma %{{.*}} : tensor<64x64xbf16, #tilegpu.wgmma<opa, warpgroups = 1>>
// REDUCE-NOT: gpu.barrier
// The wait for the previous reduction goes before the barrier that
// publishes dSᵀ (the barrier before dQ's product), which publishes it too:
// no barrier of its own between dQ's product and its staging.
// REDUCE: tilegpu.local_store %{{.*}} : tensor<64x64xbf16, #tilegpu.wgmma<acc, warpgroups = 1>>, <64x64xbf16, #tilegpu.shared<swizzle = 128, transposed = true>>
// REDUCE-NEXT: tilegpu.tma_reduce_wait %[[BUF]] {read}
// REDUCE-NEXT: gpu.barrier
// REDUCE-NEXT: %[[DQ:.*]] = tilegpu.mma
// REDUCE-NOT: gpu.barrier
// REDUCE: tilegpu.local_store %{{.*}}, %[[BUF]] : tensor<64x64xf32, #tilegpu.wgmma<acc, warpgroups = 1>>, <64x64xf32, #tilegpu.shared<swizzle = 128>>
// REDUCE-NEXT: gpu.barrier
// REDUCE-NEXT: tilegpu.tma_reduce %[[BUF]] into %[[MAP]][%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : <64x64xf32, #tilegpu.shared<swizzle = 128>>, <64x32xf32, swizzle = 128>
// REDUCE-NOT: tilegpu.staged_store
// REDUCE: {{^    }}tilegpu.tma_reduce_wait %[[BUF]] : <64x64xf32, #tilegpu.shared<swizzle = 128>>
// REDUCE: tilegpu.staged_store
// REDUCE-LABEL: func.func @sdpa_bwd_postprocess(
// A reduction in the kernel's body (no loop around it; this crashed on a
// dangling op before): its wait before the barrier before it, and the
// final wait right after it.
// RUN: tiled-attn-opt %S/Inputs/reduce-in-body.mlir --tilegpu-attach-target="chip=sm_90a" \
// RUN:   --tilegpu-assign-layouts="warps=4" --convert-tile-to-tilegpu="tma-reduce=1 merge-barriers=1" | FileCheck %s --check-prefix=BODY
// BODY-LABEL: func.func @reduce_in_body(
// BODY: tilegpu.tma_reduce_wait %[[BUF:.*]] {read}
// BODY-NEXT: gpu.barrier
// BODY-NOT: gpu.barrier
// BODY: tilegpu.local_store %{{.*}}, %[[BUF]]
// BODY-NEXT: gpu.barrier
// BODY-NEXT: tilegpu.tma_reduce %[[BUF]]
// BODY-NEXT: tilegpu.tma_reduce_wait %[[BUF]] :
// NO-REDUCE-LABEL: func.func @sdpa_bwd(
// NO-REDUCE-NOT: tma_reduce
// NO-REDUCE: tile.store %{{.*}} add
// NO-REDUCE-NOT: tma_reduce
// NO-REDUCE-LABEL: func.func @sdpa_bwd_postprocess(
