// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="head-dim=64 block-m=128 block-n=64" \
// RUN:   --tile-schedule="exp2=1 stages=2" --tilegpu-attach-target="chip=sm_100a" --tilegpu-assign-layouts \
// RUN:   --convert-tile-to-tilegpu | FileCheck %s
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="head-dim=128 block-m=128 block-n=64 variant=top_left" \
// RUN:   --tile-schedule="exp2=1 mask-split=1 stages=2" --tilegpu-attach-target="chip=sm_100a" \
// RUN:   --tilegpu-assign-layouts --convert-tile-to-tilegpu | FileCheck %s --check-prefix=SPLIT
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="head-dim=64 block-m=256 block-n=128" \
// RUN:   --tile-schedule="exp2=1 lazy-rescale=8 lazy-rescale-guard=0 stages=2" --tilegpu-attach-target="chip=sm_100a" \
// RUN:   --tilegpu-assign-layouts="warps=8" --convert-tile-to-tilegpu | FileCheck %s --check-prefix=TWO
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="head-dim=64 block-m=256 block-n=128" \
// RUN:   --tile-schedule="exp2=1 lazy-rescale=8 lazy-rescale-guard=0 stages=2" --tilegpu-attach-target="chip=sm_100a" \
// RUN:   --tilegpu-assign-layouts="warps=8" --convert-tile-to-tilegpu="mma-warp=1" | FileCheck %s --check-prefix=MMAWARP
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="head-dim=128 block-m=256 block-n=128" \
// RUN:   --tile-schedule="exp2=1 lazy-rescale=8 lazy-rescale-guard=0 stages=2" --tilegpu-attach-target="chip=sm_100a" \
// RUN:   --tilegpu-assign-layouts="warps=8" --convert-tile-to-tilegpu="p-over-s=1" --tilegpu-allocate-memory \
// RUN:   | FileCheck %s --check-prefix=POVERS
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="head-dim=64 block-m=256 block-n=128" \
// RUN:   --tile-schedule="exp2=1 lazy-rescale=8 lazy-rescale-guard=0 stages=2" --tilegpu-attach-target="chip=sm_100a" \
// RUN:   --tilegpu-assign-layouts="warps=8" --convert-tile-to-tilegpu="mma-warp=1 correction=1" | FileCheck %s --check-prefix=HANDOFF
// RUN: echo 'module {}' | not tiled-attn-opt --tile-generate-sdpa="head-dim=64 block-m=256 block-n=128" \
// RUN:   --tile-schedule="exp2=1 stages=2" --tilegpu-attach-target="chip=sm_100a" \
// RUN:   --tilegpu-assign-layouts="warps=8" --convert-tile-to-tilegpu="correction=1" 2>&1 | FileCheck %s --check-prefix=HANDOFF-ERR

// The tcgen05 family's tensor memory, on the generated kernel with K/V
// prefetched one block ahead:
// - one buffer per accumulator (O, S) and one for P, packed; each
//   accumulator's mbarrier (S's, O's: the products of each commit there),
//   initialized before the TMA ones;
// - O starts as zeros stored into its buffer; the loop carries the buffer;
// - the CTA barrier before the refill of a slot waits first for the
//   products that may read it (P.V of the iteration before: O's mbarrier,
//   for the parity of its last commit, count - 1, carried by the loop);
// - S = Q.K^T overwrites S (accumulate false) after a CTA barrier, then its
//   commit; the wait for it (parity of S's count - 1) is where S is read;
// - S is read once; P is stored as soon as it is computed; O is corrected
//   in place (tilegpu.tmem_scale_rows by the rows' factors) before the P.V
//   mma accumulates into it; nobody waits for P.V in the iteration;
// - the epilogue waits for the last P.V, reads O and stores the thread's
//   rows.

// CHECK-LABEL: func.func @sdpa_fwd
// CHECK-DAG: %[[O:.*]] = tilegpu.alloc : <128x64xf32, #tilegpu.tensor_memory<>>
// CHECK-DAG: %[[S:.*]] = tilegpu.alloc : <128x64xf32, #tilegpu.tensor_memory<>>
// CHECK-DAG: %[[P:.*]] = tilegpu.alloc : <128x64xf16, #tilegpu.tensor_memory<packed = true>>
// CHECK: %[[SBAR:.*]] = tilegpu.alloc : <1xi64, #tilegpu.shared<>>
// CHECK-NEXT: arith.constant 0 : index
// CHECK-NEXT: tilegpu.mbarrier_init %[[SBAR]][%{{.*}}], count(1)
// CHECK-NEXT: %[[OBAR:.*]] = tilegpu.alloc : <1xi64, #tilegpu.shared<>>
// CHECK-NEXT: arith.constant 0 : index
// CHECK-NEXT: tilegpu.mbarrier_init %[[OBAR]][%{{.*}}], count(1)
// CHECK-NEXT: gpu.barrier
// CHECK: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : tensor<128x64xf32, #tilegpu.tmem_lanes<acc, warps = 4>>
// CHECK-NEXT: tilegpu.tmem_store %[[ZERO]], %[[O]]
// CHECK: %[[Q:.*]] = tilegpu.tma_load
// CHECK: scf.for {{.*}} iter_args({{.*}}, %{{.*}} = %[[O]], {{.*}}, %[[NS:.*]] = %{{.*}}, %[[NO:.*]] = %{{.*}}) -> ({{.*}}, !tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>, {{.*}}, index, index)
// CHECK: %[[LASTO:.*]] = arith.addi %[[NO]], %{{.*}} : index
// CHECK-NEXT: %[[LASTO64:.*]] = arith.index_castui %[[LASTO]] : index to i64
// CHECK-NEXT: %[[OPHASE:.*]] = arith.trunci %[[LASTO64]] : i64 to i1
// CHECK-NEXT: arith.constant 0 : index
// CHECK-NEXT: tilegpu.mbarrier_wait %[[OBAR]][%{{.*}}], phase(%[[OPHASE]])
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: tilegpu.tma_load
// CHECK: tilegpu.mbarrier_wait %{{.*}} : <2xi64, #tilegpu.shared<>>
// CHECK-NEXT: %false = arith.constant false
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: tilegpu.tmem_mma %[[Q]], %{{.*}}, %[[S]], accumulate(%false)
// CHECK-NEXT: arith.constant 0 : index
// CHECK-NEXT: tilegpu.mma_commit %[[SBAR]]
// CHECK-NEXT: arith.constant 1 : index
// CHECK-NEXT: %[[NS1:.*]] = arith.addi %[[NS]], %{{.*}} : index
// CHECK-NOT: tilegpu.mbarrier_wait
// CHECK: %[[LASTS:.*]] = arith.addi %[[NS1]], %{{.*}} : index
// CHECK-NEXT: %[[LASTS64:.*]] = arith.index_castui %[[LASTS]] : index to i64
// CHECK-NEXT: %[[SPHASE:.*]] = arith.trunci %[[LASTS64]] : i64 to i1
// CHECK-NEXT: arith.constant 0 : index
// CHECK-NEXT: tilegpu.mbarrier_wait %[[SBAR]][%{{.*}}], phase(%[[SPHASE]])
// CHECK-NEXT: tilegpu.tmem_load %[[S]] : <128x64xf32, #tilegpu.tensor_memory<>> -> tensor<128x64xf32, #tilegpu.tmem_lanes<acc, warps = 4>>
// CHECK-NOT: tilegpu.tmem_load %[[S]]
// CHECK: %[[PR:.*]] = arith.truncf
// CHECK-NEXT: tilegpu.tmem_store %[[PR]], %[[P]]
// CHECK-NOT: tilegpu.tmem_load %[[O]]
// CHECK: tilegpu.tmem_scale_rows %[[O]], %{{.*}} : <128x64xf32, #tilegpu.tensor_memory<>>, tensor<128xf32, #tilegpu.tmem_lanes<rows, warps = 4>>
// CHECK-NOT: tilegpu.tmem_store %{{.*}}, %[[O]]
// CHECK: tilegpu.mbarrier_wait %{{.*}} : <2xi64, #tilegpu.shared<>>
// CHECK-NEXT: %true = arith.constant true
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: tilegpu.tmem_mma %[[P]], %{{.*}}, %[[O]], accumulate(%true)
// CHECK-NEXT: arith.constant 0 : index
// CHECK-NEXT: tilegpu.mma_commit %[[OBAR]]
// CHECK-NEXT: arith.constant 1 : index
// CHECK-NEXT: %[[NO1:.*]] = arith.addi %[[NO]], %{{.*}} : index
// CHECK-NEXT: scf.yield {{.*}}, %[[O]], {{.*}}, %[[NS1]], %[[NO1]]
// CHECK: tilegpu.mbarrier_wait %[[OBAR]]
// CHECK-NEXT: %[[OF:.*]] = tilegpu.tmem_load %[[O]]
// CHECK: tile.store %{{.*}} : tensor<128x64xf16, #tilegpu.tmem_lanes<acc, warps = 4>>
// CHECK-NOT: tile.mma
// CHECK-NOT: tile.convert_layout

// mma-warp: each accumulator has a done mbarrier per warpgroup (the
// commit arrives) and a ready one (its 4 warps arrive): S's, then O's.
// Each group's warps arrive on S's ready mbarrier; each group's issuer
// waits there, issues the group's rows and commits them to the group's S
// mbarrier (groups = 2: run by all warps here, thread 0 and 128 issue;
// tilegpu-warp-specialize gives the issue an MMA warp per group); each
// group waits on its own S mbarrier where it reads S. P.V goes the same way
// through O's mbarriers, and nobody waits for it in the iteration: the next
// refill's barrier does. The k-th product of an accumulator completes
// phase k mod 2 of both of its mbarriers; each accumulator's count is
// carried by the loop.
// MMAWARP: %[[SDONE:.*]] = tilegpu.alloc : <2xi64, #tilegpu.shared<>>
// MMAWARP: tilegpu.mbarrier_init %[[SDONE]][%{{.*}}], count(1)
// MMAWARP: tilegpu.mbarrier_init %[[SDONE]][%{{.*}}], count(1)
// MMAWARP: %[[SREADY:.*]] = tilegpu.alloc : <2xi64, #tilegpu.shared<>>
// MMAWARP: tilegpu.mbarrier_init %[[SREADY]][%{{.*}}], count(4)
// MMAWARP: tilegpu.mbarrier_init %[[SREADY]][%{{.*}}], count(4)
// MMAWARP: %[[ODONE:.*]] = tilegpu.alloc : <2xi64, #tilegpu.shared<>>
// MMAWARP: %[[OREADY:.*]] = tilegpu.alloc : <2xi64, #tilegpu.shared<>>
// MMAWARP: scf.for {{.*}} iter_args({{.*}}, %[[NS:[a-z0-9_]+]] = %c0{{.*}}, %[[NO:[a-z0-9_]+]] = %c0{{.*}}) ->
// MMAWARP-NOT: tilegpu.group_barrier
// MMAWARP: tilegpu.mbarrier_wait %[[ODONE]]
// MMAWARP-NEXT: gpu.barrier
// MMAWARP-NEXT: tilegpu.tma_load
// MMAWARP: %[[G:.*]] = tilegpu.group_id {groups = 2 : i64}
// MMAWARP-NEXT: tilegpu.mbarrier_arrive %[[SREADY]][%[[G]]]
// MMAWARP: %[[I:.*]] = arith.index_castui %[[NS]] : index to i64
// MMAWARP-NEXT: %[[PH:.*]] = arith.trunci %[[I]] : i64 to i1
// MMAWARP-NEXT: %[[GI:.*]] = tilegpu.group_id {groups = 2 : i64}
// MMAWARP-NEXT: tilegpu.mbarrier_wait %[[SREADY]][%[[GI]]], phase(%[[PH]])
// MMAWARP-NEXT: tilegpu.tmem_mma {{.*}} : !tilegpu.buffer<256x64xf16, #tilegpu.shared<swizzle = 128>>
// MMAWARP-NEXT: arith.constant 0 : index
// MMAWARP-NEXT: tilegpu.mma_commit %[[SDONE]][%{{.*}}] {groups = 2 : i64}
// MMAWARP: %[[G2:.*]] = tilegpu.group_id {groups = 2 : i64}
// MMAWARP-NEXT: tilegpu.mbarrier_wait %[[SDONE]][%[[G2]]], phase(
// MMAWARP-NEXT: tilegpu.tmem_load
// MMAWARP: tilegpu.mbarrier_arrive %[[OREADY]]
// MMAWARP: %[[J:.*]] = arith.index_castui %[[NO]] : index to i64
// MMAWARP-NEXT: %[[PHO:.*]] = arith.trunci %[[J]] : i64 to i1
// MMAWARP-NEXT: %[[GO:.*]] = tilegpu.group_id {groups = 2 : i64}
// MMAWARP-NEXT: tilegpu.mbarrier_wait %[[OREADY]][%[[GO]]], phase(%[[PHO]])
// MMAWARP-NEXT: tilegpu.tmem_mma {{.*}} : !tilegpu.buffer<256x128xf16, #tilegpu.tensor_memory<packed = true>>
// MMAWARP-NEXT: arith.constant 0 : index
// MMAWARP-NEXT: tilegpu.mma_commit %[[ODONE]][%{{.*}}] {groups = 2 : i64}
// MMAWARP-NOT: tilegpu.mbarrier_wait
// MMAWARP-NOT: tilegpu.group_barrier
// MMAWARP: scf.yield

// p-over-s at D=128 with 128-key blocks (FlashAttention-4's layout): O
// (2 x 128 columns) and S (2 x 128) take all 512 columns; P is an alias
// whose row blocks lie over the first 64 columns of S's, 128 apart; the
// store of P and P.V go through it.
// POVERS-DAG: tilegpu.alloc offset(0) : <256x128xf32, #tilegpu.tensor_memory<>>
// POVERS-DAG: %[[S:.*]] = tilegpu.alloc offset(256) : <256x128xf32, #tilegpu.tensor_memory<>>
// POVERS: %[[P:.*]] = tilegpu.tmem_alias %[[S]] : <256x128xf32, #tilegpu.tensor_memory<>> -> <256x128xf16, #tilegpu.tensor_memory<packed = true, block_columns = 128>>
// POVERS-NOT: tilegpu.alloc {{.*}}packed
// POVERS: tilegpu.tmem_load %[[S]]
// POVERS: tilegpu.tmem_store %{{.*}}, %[[P]]
// POVERS: tilegpu.tmem_mma %[[P]], %{{.*}}, %{{.*}}, accumulate(%true)

// With the mask split, the two loops hand O and the commit counts on: the
// second starts from the first's counts.
// SPLIT: %[[O:.*]] = tilegpu.alloc : <128x128xf32, #tilegpu.tensor_memory<>>
// SPLIT: %[[FIRST:.*]]:{{[0-9]+}} = scf.for {{.*}} iter_args({{.*}}, %{{.*}} = %[[O]], {{.*}}) -> ({{.*}}, !tilegpu.buffer<128x128xf32, #tilegpu.tensor_memory<>>, {{.*}}, index)
// SPLIT-COUNT-2: tilegpu.mma_commit
// SPLIT: scf.for {{.*}} iter_args({{.*}}, %{{.*}} = %[[O]], {{.*}}, %{{.*}} = %[[FIRST]]#{{[0-9]+}}) -> ({{.*}}, index)
// SPLIT: tilegpu.mma_commit
// SPLIT: tile.causal_mask {{.*}} : tensor<128x64xi1, #tilegpu.tmem_lanes<acc, warps = 4>>
// SPLIT: tilegpu.mma_commit
// SPLIT: tilegpu.tmem_load %[[O]] : <128x128xf32, #tilegpu.tensor_memory<>>
// SPLIT-NOT: tilegpu.tmem_mma

// An accumulator stays in its buffer: a tile program that still reads S
// after an mma accumulated into it again is refused, not miscompiled.
// The tcgen05 options on another family are refused, whether or not the
// kernel would have work for them.
// RUN: echo 'module {}' | not tiled-attn-opt --tile-generate-sdpa="head-dim=64 block-m=128 block-n=64" \
// RUN:   --tile-schedule="exp2=1 stages=2" --tilegpu-attach-target="chip=sm_90a" \
// RUN:   --tilegpu-assign-layouts="warps=8" --convert-tile-to-tilegpu="p-over-s=1" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NOT-TCGEN05
// NOT-TCGEN05: error: convert-tile-to-tilegpu: p-over-s is for tcgen05 kernels (sm_100a, sm_100f), not sm_90a
// RUN: echo 'module {}' | not tiled-attn-opt --tile-generate-sdpa="head-dim=64 block-m=64 block-n=64" \
// RUN:   --tile-schedule="exp2=1 stages=2" --tilegpu-attach-target="chip=sm_80" \
// RUN:   --tilegpu-assign-layouts --convert-tile-to-tilegpu="mma-warp=1" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NOT-TCGEN05-MMA
// NOT-TCGEN05-MMA: error: convert-tile-to-tilegpu: mma-warp is for tcgen05 kernels (sm_100a, sm_100f), not sm_80

// RUN: tiled-attn-opt %s -split-input-file -verify-diagnostics --tilegpu-assign-layouts --convert-tile-to-tilegpu=p-over-s=1
module attributes {tilegpu.target = #tilegpu.target<chip = "sm_100a", family = tcgen05>} {
  func.func @older_accumulator(%q: !tile.view<?x?x?x64xf16>, %k: !tile.view<?x?x?x64xf16>, %o: !tile.view<?x?x?x64xf16>) {
    %c0 = arith.constant 0 : index
    %zero = arith.constant dense<0.0> : tensor<128x64xf32>
    %qb = tile.load %q[%c0, %c0, %c0, %c0] pad(0.0) : !tile.view<?x?x?x64xf16> -> tensor<128x64xf16>
    %kt = tile.load %k[%c0, %c0, %c0, %c0] pad(0.0) transpose : !tile.view<?x?x?x64xf16> -> tensor<64x64xf16>
    %s0 = tile.mma %qb, %kt, %zero : tensor<128x64xf16>, tensor<64x64xf16> -> tensor<128x64xf32>
    // expected-note @+1 {{written again here}}
    %s1 = tile.mma %qb, %kt, %s0 : tensor<128x64xf16>, tensor<64x64xf16> -> tensor<128x64xf32>
    // expected-error @+1 {{convert-tile-to-tilegpu: reads a tile in tensor memory after its buffer was written again (an accumulator is kept in place; keep no older value of it alive)}}
    %d = arith.subf %s1, %s0 : tensor<128x64xf32>
    %h = arith.truncf %d : tensor<128x64xf32> to tensor<128x64xf16>
    tile.store %h, %o[%c0, %c0, %c0, %c0] : tensor<128x64xf16>, !tile.view<?x?x?x64xf16>
    return
  }
}

// -----

// P over S needs a tile in tensor memory that P is computed from (of
// several, the one moved to registers last: the backward's dSᵀ over dPᵀ).
module attributes {tilegpu.target = #tilegpu.target<chip = "sm_100a", family = tcgen05>} {
  func.func @p_over_no_s(%q: !tile.view<?x?x?x64xf16>, %k: !tile.view<?x?x?x64xf16>, %v: !tile.view<?x?x?x64xf16>, %o: !tile.view<?x?x?x64xf32>) {
    %c0 = arith.constant 0 : index
    %zero = arith.constant dense<0.0> : tensor<128x64xf32>
    %vb = tile.load %v[%c0, %c0, %c0, %c0] pad(0.0) : !tile.view<?x?x?x64xf16> -> tensor<64x64xf16>
    %i = tile.iota dim 1 offset(%c0) : tensor<128x64xi32>
    %f = arith.sitofp %i : tensor<128x64xi32> to tensor<128x64xf32>
    %p = arith.truncf %f : tensor<128x64xf32> to tensor<128x64xf16>
    // (P moves to tensor memory where P.V reads it.)
    // expected-error @+1 {{convert-tile-to-tilegpu: p-over-s puts P over a tile in tensor memory it is computed from, but it comes from none}}
    %pv = tile.mma %p, %vb, %zero : tensor<128x64xf16>, tensor<64x64xf16> -> tensor<128x64xf32>
    tile.store %pv, %o[%c0, %c0, %c0, %c0] : tensor<128x64xf32>, !tile.view<?x?x?x64xf32>
    return
  }
}

// -----

// P over S: a product that writes S's buffer again before P.V has read P
// would overwrite P.
module attributes {tilegpu.target = #tilegpu.target<chip = "sm_100a", family = tcgen05>} {
  func.func @p_over_s_overwritten(%q: !tile.view<?x?x?x64xf16>, %k: !tile.view<?x?x?x64xf16>, %v: !tile.view<?x?x?x64xf16>, %o: !tile.view<?x?x?x64xf32>) {
    %c0 = arith.constant 0 : index
    %zero = arith.constant dense<0.0> : tensor<128x64xf32>
    %qb = tile.load %q[%c0, %c0, %c0, %c0] pad(0.0) : !tile.view<?x?x?x64xf16> -> tensor<128x64xf16>
    %kt = tile.load %k[%c0, %c0, %c0, %c0] pad(0.0) transpose : !tile.view<?x?x?x64xf16> -> tensor<64x64xf16>
    %vb = tile.load %v[%c0, %c0, %c0, %c0] pad(0.0) : !tile.view<?x?x?x64xf16> -> tensor<64x64xf16>
    %s = tile.mma %qb, %kt, %zero : tensor<128x64xf16>, tensor<64x64xf16> -> tensor<128x64xf32>
    %e = math.exp2 %s : tensor<128x64xf32>
    tile.store %e, %o[%c0, %c0, %c0, %c0] : tensor<128x64xf32>, !tile.view<?x?x?x64xf32>
    // expected-note @+1 {{P is stored here}}
    %p = arith.truncf %e : tensor<128x64xf32> to tensor<128x64xf16>
    // expected-error @+1 {{convert-tile-to-tilegpu: p-over-s would put P over S, but S is read or written again here, after P is stored}}
    %s2 = tile.mma %qb, %kt, %s : tensor<128x64xf16>, tensor<64x64xf16> -> tensor<128x64xf32>
    %pv = tile.mma %p, %vb, %s2 : tensor<128x64xf16>, tensor<64x64xf16> -> tensor<128x64xf32>
    tile.store %pv, %o[%c0, %c0, %c0, %c0] : tensor<128x64xf32>, !tile.view<?x?x?x64xf32>
    return
  }
}

// Two Q tiles per CTA (256 rows on 8 warps): the accumulators' buffers
// have two blocks of 128 rows; each warpgroup is a group with its own
// mbarrier of each accumulator (two each, initialized for one arrival
// each), its own barrier before the product, its own commit (groups = 2)
// and waits on its mbarrier (index: its group): S's where S is read, O's
// at the next refill's barrier.
// TWO-LABEL: func.func @sdpa_fwd
// TWO-DAG: tilegpu.alloc : <256x64xf32, #tilegpu.tensor_memory<>>
// TWO-DAG: tilegpu.alloc : <256x128xf32, #tilegpu.tensor_memory<>>
// TWO-DAG: tilegpu.alloc : <256x128xf16, #tilegpu.tensor_memory<packed = true>>
// TWO: %[[SBAR:.*]] = tilegpu.alloc : <2xi64, #tilegpu.shared<>>
// TWO: tilegpu.mbarrier_init %[[SBAR]][%{{.*}}], count(1)
// TWO: tilegpu.mbarrier_init %[[SBAR]][%{{.*}}], count(1)
// TWO: %[[OBAR:.*]] = tilegpu.alloc : <2xi64, #tilegpu.shared<>>
// TWO: tilegpu.mbarrier_init %[[OBAR]][%{{.*}}], count(1)
// TWO: tilegpu.mbarrier_init %[[OBAR]][%{{.*}}], count(1)
// TWO-NEXT: gpu.barrier
// TWO: scf.for
// TWO: tilegpu.group_barrier {groups = 2 : i64}
// TWO-NEXT: tilegpu.tmem_mma %{{.*}}, %{{.*}}, %{{.*}}, accumulate(%false) : !tilegpu.buffer<256x64xf16, #tilegpu.shared<swizzle = 128>>, <64x128xf16, #tilegpu.shared<swizzle = 128, transposed = true>>, <256x128xf32, #tilegpu.tensor_memory<>>
// TWO: tilegpu.mma_commit %[[SBAR]][%{{.*}}] {groups = 2 : i64}
// TWO: %[[G:.*]] = tilegpu.group_id {groups = 2 : i64}
// TWO-NEXT: tilegpu.mbarrier_wait %[[SBAR]][%[[G]]]
// TWO-NEXT: tilegpu.tmem_load %{{.*}} : <256x128xf32, #tilegpu.tensor_memory<>> -> tensor<256x128xf32, #tilegpu.tmem_lanes<acc, warps = 8, row_blocks = 2>>
// TWO: tilegpu.tmem_scale_rows %{{.*}}, %{{.*}} : <256x64xf32, #tilegpu.tensor_memory<>>, tensor<256xf32, #tilegpu.tmem_lanes<rows, warps = 8, row_blocks = 2>>
// TWO: tilegpu.group_barrier {groups = 2 : i64}
// TWO-NEXT: tilegpu.tmem_mma %{{.*}}, %{{.*}}, %{{.*}}, accumulate(%true) : !tilegpu.buffer<256x128xf16, #tilegpu.tensor_memory<packed = true>>, <128x64xf16, #tilegpu.shared<swizzle = 128>>, <256x64xf32, #tilegpu.tensor_memory<>>
// TWO: tilegpu.mma_commit %[[OBAR]][%{{.*}}] {groups = 2 : i64}
// TWO: scf.yield
// TWO: %[[G2:.*]] = tilegpu.group_id {groups = 2 : i64}
// TWO-NEXT: tilegpu.mbarrier_wait %[[OBAR]][%[[G2]]]
// TWO-NEXT: tilegpu.tmem_load

// -----

// P over S needs P of S's shape: here P (128 x 64) is made from S (128 x
// 128) through a row reduction, so its columns cannot lie over S's.
module attributes {tilegpu.target = #tilegpu.target<chip = "sm_100a", family = tcgen05>} {
  func.func @p_of_another_shape(%q: !tile.view<?x?x?x64xf16>, %k: !tile.view<?x?x?x64xf16>, %v: !tile.view<?x?x?x64xf16>, %o: !tile.view<?x?x?x64xf32>) {
    %c0 = arith.constant 0 : index
    %zero = arith.constant dense<0.0> : tensor<128x128xf32>
    %zero64 = arith.constant dense<0.0> : tensor<128x64xf32>
    %qb = tile.load %q[%c0, %c0, %c0, %c0] pad(0.0) : !tile.view<?x?x?x64xf16> -> tensor<128x64xf16>
    %kt = tile.load %k[%c0, %c0, %c0, %c0] pad(0.0) transpose : !tile.view<?x?x?x64xf16> -> tensor<64x128xf16>
    %vb = tile.load %v[%c0, %c0, %c0, %c0] pad(0.0) : !tile.view<?x?x?x64xf16> -> tensor<64x64xf16>
    %s = tile.mma %qb, %kt, %zero : tensor<128x64xf16>, tensor<64x128xf16> -> tensor<128x128xf32>
    %m = tile.reduce max %s along 1 : tensor<128x128xf32> -> tensor<128xf32>
    %b = tile.broadcast %m along 1 : tensor<128xf32> -> tensor<128x64xf32>
    %p = arith.truncf %b : tensor<128x64xf32> to tensor<128x64xf16>
    // (P moves to tensor memory where P.V reads it.)
    // expected-error @+1 {{convert-tile-to-tilegpu: p-over-s needs P of S's shape, got 'tensor<128x64xf16, #tilegpu.tensor_memory<packed = true>>' from 'tensor<128x128xf32, #tilegpu.tensor_memory<>>'}}
    %pv = tile.mma %p, %vb, %zero64 : tensor<128x64xf16>, tensor<64x64xf16> -> tensor<128x64xf32>
    tile.store %pv, %o[%c0, %c0, %c0, %c0] : tensor<128x64xf32>, !tile.view<?x?x?x64xf32>
    return
  }
}

// With correction (and mma-warp), each correction of O is handed off
// through shared memory: a buffer of one f32 per row and a "factors"
// mbarrier per Q tile expecting its 4 warps, initialized with the others.
// In the loop the group's warps write the factors and arrive, then wait for
// that hand-off's phase (its count mod 2, carried by the loop after the
// products' counts, from 0), read the factors back and scale O; the count
// goes up by one.
// HANDOFF-LABEL: func.func @sdpa_fwd
// HANDOFF: %[[O:.*]] = tilegpu.alloc : <256x64xf32, #tilegpu.tensor_memory<>>
// HANDOFF: %[[FACTORS:.*]] = tilegpu.alloc : <256xf32, #tilegpu.shared<>>
// HANDOFF-NEXT: %[[FULL:.*]] = tilegpu.alloc : <2xi64, #tilegpu.shared<>>
// HANDOFF: tilegpu.mbarrier_init %[[FULL]][%{{.*}}], count(4)
// HANDOFF: tilegpu.mbarrier_init %[[FULL]][%{{.*}}], count(4)
// HANDOFF-NEXT: gpu.barrier
// HANDOFF: scf.for {{.*}} iter_args({{.*}}, %[[N:.*]] = %c0) -> (
// HANDOFF: tilegpu.local_store %{{.*}}, %[[FACTORS]] : tensor<256xf32, #tilegpu.tmem_lanes<rows, warps = 8, row_blocks = 2>>, <256xf32, #tilegpu.shared<>>
// HANDOFF-NEXT: tilegpu.mbarrier_arrive %[[FULL]][%[[G:.*]]] :
// HANDOFF-NEXT: %[[NW:.*]] = arith.index_castui %[[N]] : index to i64
// HANDOFF-NEXT: %[[PH:.*]] = arith.trunci %[[NW]] : i64 to i1
// HANDOFF-NEXT: tilegpu.mbarrier_wait %[[FULL]][%[[G]]], phase(%[[PH]])
// HANDOFF-NEXT: %[[F:.*]] = tilegpu.local_load %[[FACTORS]]
// HANDOFF-NEXT: tilegpu.tmem_scale_rows %[[O]], %[[F]]
// HANDOFF-NEXT: arith.constant 1 : index
// HANDOFF-NEXT: %[[NEXT:.*]] = arith.addi %[[N]], %{{.*}} : index
// HANDOFF: scf.yield {{.*}}, %[[NEXT]] :
// The epilogue (O moved to registers, scaled by 1 / l, truncated, stored)
// is one tilegpu.tmem_scale_store, handed off the same way once the last
// P.V is done (the wait on O's mbarrier first): the factors are written
// over the last ones only after the P.V that the last correction let go.
// HANDOFF: tilegpu.mbarrier_wait %[[ODONE:.*]][%{{.*}}], phase(
// HANDOFF-NEXT: %[[GE:.*]] = tilegpu.group_id {groups = 2 : i64}
// HANDOFF-NEXT: tilegpu.local_store %{{.*}}, %[[FACTORS]]
// HANDOFF-NEXT: tilegpu.mbarrier_arrive %[[FULL]][%[[GE]]]
// HANDOFF: tilegpu.mbarrier_wait %[[FULL]][%[[GE]]], phase(
// HANDOFF-NEXT: %[[FE:.*]] = tilegpu.local_load %[[FACTORS]]
// HANDOFF-NEXT: tilegpu.tmem_scale_store %[[O]], %[[FE]] to %arg3[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : <256x64xf32, #tilegpu.tensor_memory<>>, tensor<256xf32, #tilegpu.tmem_lanes<rows, warps = 8, row_blocks = 2>>, <?x?x?x64xf16>
// HANDOFF-NOT: tile.store
// HANDOFF-NOT: tilegpu.tmem_load %[[O]]
// HANDOFF-ERR: error: convert-tile-to-tilegpu: correction hands the corrections of O to the threads beside the issuing ones; it needs mma-warp
