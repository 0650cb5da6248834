// RUN: tiled-attn-opt %s -split-input-file --tile-defer-pv | FileCheck %s
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="head-dim=64 block-m=64 block-n=32" \
// RUN:   --tile-defer-pv | FileCheck %s --check-prefix=SDPA
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="head-dim=128 block-m=128 block-n=128 variant=top_left" \
// RUN:   --tile-schedule="exp2=1 mask-split=1 stages=2 defer-pv=1" | FileCheck %s --check-prefix=SPLIT

// tile-defer-pv on the generated kernel: the loop runs under an scf.if on
// its trip count; the prologue is block 0 without the P.V chain; the loop
// from 1 carries alpha, P and the V block of the previous iteration, and
// runs that chain right after its own Q.K^T; the epilogue runs the last
// chain. The kernel records defer_pv.

// SDPA-LABEL: func.func @sdpa_fwd
// SDPA-SAME: defer_pv = true
// SDPA: %[[RUNS:.*]] = arith.cmpi slt, %c0, %[[UB:.*]] : index
// SDPA: %[[IF:.*]]:3 = scf.if %[[RUNS]]
// SDPA: %[[K0:.*]] = tile.load %arg1[{{.*}}, %c0, %c0] {{.*}} transpose
// SDPA: %[[V0:.*]] = tile.load %arg2[{{.*}}, %c0, %c0]
// SDPA: tile.mma %{{.*}}, %[[K0]], %{{.*}}
// SDPA-NOT: tile.mma
// SDPA: %[[M0:.*]], %[[L0:.*]], %[[P0:.*]], %[[A0:.*]] = tile.online_softmax
// SDPA: %[[PH0:.*]] = arith.truncf %[[P0]]
// SDPA: %[[LB:.*]] = arith.addi %c0, %c1 : index
// SDPA: %[[LOOP:.*]]:6 = scf.for %[[J:.*]] = %[[LB]] to %[[UB]] step %c1 iter_args(%[[M:.*]] = %[[M0]], %[[L:.*]] = %[[L0]], %[[O:.*]] = %{{.*}}, %[[A:.*]] = %[[A0]], %[[P:.*]] = %[[PH0]], %[[V:.*]] = %[[V0]])
// SDPA: %[[K:.*]] = tile.load %arg1[{{.*}}, %[[J]], %c0]
// SDPA: %[[VN:.*]] = tile.load %arg2[{{.*}}, %[[J]], %c0]
// SDPA: %[[S:.*]] = tile.mma %{{.*}}, %[[K]], %{{.*}}
// SDPA-NEXT: %[[AB:.*]] = tile.broadcast %[[A]] along 1
// SDPA-NEXT: %[[OS:.*]] = arith.mulf %[[O]], %[[AB]]
// SDPA-NEXT: %[[ON:.*]] = tile.mma %[[P]], %[[V]], %[[OS]]
// SDPA: %[[MN:.*]], %[[LN:.*]], %[[PN:.*]], %[[AN:.*]] = tile.online_softmax
// SDPA: %[[PHN:.*]] = arith.truncf %[[PN]]
// SDPA: scf.yield %[[MN]], %[[LN]], %[[ON]], %[[AN]], %[[PHN]], %[[VN]]
// SDPA: %[[AE:.*]] = tile.broadcast %[[LOOP]]#3 along 1
// SDPA: %[[OE:.*]] = arith.mulf %[[LOOP]]#2, %[[AE]]
// SDPA: %[[OF:.*]] = tile.mma %[[LOOP]]#4, %[[LOOP]]#5, %[[OE]]
// SDPA: scf.yield %[[LOOP]]#0, %[[LOOP]]#1, %[[OF]]
// SDPA: } else {
// SDPA: scf.yield
// SDPA: tile.store

// In the schedule, after the mask split and the prefetch: both loops are
// rotated, each under its own scf.if; the prefetched K/V blocks the first
// leaves in flight start the second (the branches hand them on), and V is
// carried one more block.
// SPLIT-LABEL: func.func @sdpa_fwd
// SPLIT-SAME: stages = 2, mask_split = true, exp2 = true, defer_pv = true
// SPLIT: %[[FIRST:.*]]:5 = scf.if
// SPLIT: scf.for {{.*}} -> (tensor<128xf32>, tensor<128xf32>, tensor<128x128xf32>, tensor<128x128xf16>, tensor<128x128xf16>, tensor<128xf32>, tensor<128x128xf16>, tensor<128x128xf16>)
// SPLIT: scf.if
// SPLIT: tile.mma %{{.*}}, %[[FIRST]]#3,
// SPLIT: scf.for
// SPLIT: tile.causal_mask

// -----

// No mma yields the loop's value: nothing to defer.
// CHECK-LABEL: func.func @no_mma
// CHECK: scf.for
// CHECK-NOT: scf.if
func.func @no_mma(%n: index, %x: tensor<16xf32>) -> tensor<16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%a = %x) -> (tensor<16xf32>) {
    %b = arith.addf %a, %a : tensor<16xf32>
    scf.yield %b : tensor<16xf32>
  }
  return %r : tensor<16xf32>
}

// -----

// The rescaled accumulator is also read outside the chain (yielded a second
// time): deferring it would change what that reader sees, so the loop stays.
// CHECK-LABEL: func.func @chain_escapes
// CHECK: scf.for
// CHECK: tile.mma
// CHECK: tile.mma
// CHECK-NOT: scf.if
func.func @chain_escapes(%n: index, %q: tensor<16x16xf16>, %k: tensor<16x16xf16>,
                         %v: tensor<16x16xf16>, %o: tensor<16x16xf32>) -> (tensor<16x16xf32>, tensor<16x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant dense<0.0> : tensor<16x16xf32>
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %o, %seen = %o) -> (tensor<16x16xf32>, tensor<16x16xf32>) {
    %s = tile.mma %q, %k, %zero : tensor<16x16xf16>, tensor<16x16xf16> -> tensor<16x16xf32>
    %half = arith.mulf %acc, %s : tensor<16x16xf32>
    %p = arith.truncf %s : tensor<16x16xf32> to tensor<16x16xf16>
    %next = tile.mma %p, %v, %half : tensor<16x16xf16>, tensor<16x16xf16> -> tensor<16x16xf32>
    scf.yield %next, %half : tensor<16x16xf32>, tensor<16x16xf32>
  }
  return %r#0, %r#1 : tensor<16x16xf32>, tensor<16x16xf32>
}

// -----

// A chain that reads the loop's own value of this iteration (here %s, the
// Q.K^T of the same block) carries it: the rotated chain multiplies by the
// previous block's %s.
// CHECK-LABEL: func.func @carries_operands
// CHECK: scf.if
// CHECK: %[[S0:.*]] = tile.mma
// CHECK: %[[P0:.*]] = arith.truncf %[[S0]]
// CHECK: scf.for {{.*}} iter_args(%[[ACC:.*]] = %{{.*}}, %[[SP:.*]] = %[[S0]], %[[PP:.*]] = %[[P0]])
// CHECK: %[[S:.*]] = tile.mma
// CHECK-NEXT: %[[H:.*]] = arith.mulf %[[ACC]], %[[SP]]
// CHECK-NEXT: %[[N:.*]] = tile.mma %[[PP]], %{{.*}}, %[[H]]
// CHECK: %[[P:.*]] = arith.truncf %[[S]]
// CHECK: scf.yield %[[N]], %[[S]], %[[P]]
func.func @carries_operands(%n: index, %q: tensor<16x16xf16>, %k: tensor<16x16xf16>,
                            %v: tensor<16x16xf16>, %o: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant dense<0.0> : tensor<16x16xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %o) -> (tensor<16x16xf32>) {
    %s = tile.mma %q, %k, %zero : tensor<16x16xf16>, tensor<16x16xf16> -> tensor<16x16xf32>
    %half = arith.mulf %acc, %s : tensor<16x16xf32>
    %p = arith.truncf %s : tensor<16x16xf32> to tensor<16x16xf16>
    %next = tile.mma %p, %v, %half : tensor<16x16xf16>, tensor<16x16xf16> -> tensor<16x16xf32>
    scf.yield %next : tensor<16x16xf32>
  }
  return %r : tensor<16x16xf32>
}
