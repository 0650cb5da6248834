// RUN: tiled-attn-opt %s -split-input-file --tile-prefetch | FileCheck %s
// RUN: tiled-attn-opt %s -split-input-file --tile-prefetch=stages=3 | FileCheck %s --check-prefix=STAGES3
// RUN: tiled-attn-opt %s -split-input-file --tile-prefetch=stages=4 | FileCheck %s --check-prefix=STAGES4
// RUN: tiled-attn-opt %s -split-input-file --tile-prefetch=stages=1 | FileCheck %s --check-prefix=STAGES1
// RUN: not tiled-attn-opt %s -split-input-file --tile-prefetch=stages=0 2>&1 | FileCheck %s --check-prefix=STAGES0
// RUN: not tiled-attn-opt %s -split-input-file --tile-prefetch=stages=5 2>&1 | FileCheck %s --check-prefix=STAGES5
// RUN: tiled-attn-opt %s -split-input-file --tile-prefetch="stages=2 refill-after-use=1" | FileCheck %s --check-prefix=AFTER2
// RUN: tiled-attn-opt %s -split-input-file --tile-prefetch="stages=3 refill-after-use=1" | FileCheck %s --check-prefix=AFTER3
// RUN: tiled-attn-opt %s -split-input-file --tile-prefetch="stages=1 refill-after-use=1" | FileCheck %s --check-prefix=STAGES1
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="head-dim=64" --tile-prefetch="stages=2 refill-after-use=1" | FileCheck %s --check-prefix=GEN-AFTER2
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="head-dim=64" --tile-prefetch="stages=2 streams=1 refill-after-use=1" | FileCheck %s --check-prefix=GEN-K-ONLY
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="head-dim=64" --tile-prefetch="stages=2 streams=2" | FileCheck %s --check-prefix=GEN-STREAMS2
// RUN: not tiled-attn-opt %s -split-input-file --tile-prefetch="streams=-1" 2>&1 | FileCheck %s --check-prefix=STREAMS-NEG
// RUN: tiled-attn-opt %repo/kernels/functions/document.mlir --tile-generate-sdpa="head-dim=64 variant=none_sparse+document" --tile-vectorize-apply --tile-prefetch="stages=2 refill-after-use=1" --cse | FileCheck %s --check-prefix=GEN-SPARSE
// RUN: tiled-attn-opt %repo/kernels/functions/document.mlir --tile-generate-sdpa="head-dim=64 variant=none_seqused_paged" --tile-prefetch="stages=2" --cse | FileCheck %s --check-prefix=GEN-PAGED
// RUN: tiled-attn-opt %repo/kernels/functions/document.mlir --tile-generate-sdpa="head-dim=64 block-n=64 page-size=16 variant=none_seqused_paged" --tile-prefetch="stages=2" --cse | FileCheck %s --check-prefix=GEN-GATHER

// The loads of block %j in iteration %j are issued stages - 1 iterations
// ahead: a prologue loads the first blocks, the loop carries the blocks in
// flight in iter_args, uses the oldest and loads block %j + (stages - 1).

// STAGES0: error: tile-prefetch: stages must be in [1, 4], got 0
// STAGES5: error: tile-prefetch: stages must be in [1, 4], got 5
// STREAMS-NEG: error: tile-prefetch: streams must be >= 0, got -1

// CHECK-LABEL: func.func @prefetch_one_load
// CHECK-SAME: (%[[K:.*]]: !tile.view<?x?x16xf16>, %[[Q:.*]]: tensor<16x16xf16>, %[[H:.*]]: index, %[[N:.*]]: index)
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK: %[[K0:.*]] = tile.load %[[K]][%[[H]], %[[C0]], %[[C0]]] pad(0.000000e+00) transpose
// CHECK-NEXT: %[[R:.*]]:2 = scf.for %[[J:.*]] = %[[C0]] to %[[N]] step %[[C1]] iter_args(%[[ACC:.*]] = %{{.*}}, %[[KJ:.*]] = %[[K0]]) -> (tensor<16x16xf32>, tensor<16x16xf16>)
// CHECK-NEXT: %[[J1:.*]] = arith.addi %[[J]], %[[C1]] : index
// CHECK-NEXT: %[[NEXT:.*]] = tile.load %[[K]][%[[H]], %[[J1]], %[[C0]]] pad(0.000000e+00) transpose
// CHECK-NEXT: %[[S:.*]] = tile.mma %[[Q]], %[[KJ]], %[[ACC]]
// CHECK-NEXT: scf.yield %[[S]], %[[NEXT]] : tensor<16x16xf32>, tensor<16x16xf16>
// CHECK: return %[[R]]#0

// AFTER2-LABEL: func.func @prefetch_one_load
// AFTER2: scf.for %[[J:.*]] = %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}, %[[KJ:.*]] = %{{.*}})
// AFTER2-NEXT: %[[J1:.*]] = arith.addi %[[J]], %{{.*}} : index
// AFTER2-NEXT: %[[S:.*]] = tile.mma %{{.*}}, %[[KJ]], %[[ACC]]
// AFTER2-NEXT: %[[NEXT:.*]] = tile.load %{{.*}}[%{{.*}}, %[[J1]], %{{.*}}] pad(0.000000e+00) transpose
// AFTER2-NEXT: scf.yield %[[S]], %[[NEXT]]
func.func @prefetch_one_load(%k: !tile.view<?x?x16xf16>, %q: tensor<16x16xf16>,
                             %h: index, %n: index) -> tensor<16x16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant dense<0.0> : tensor<16x16xf32>
  %r = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %zero)
      -> (tensor<16x16xf32>) {
    %kt = tile.load %k[%h, %j, %c0] pad(0.0) transpose
        : !tile.view<?x?x16xf16> -> tensor<16x16xf16>
    %s = tile.mma %q, %kt, %acc
        : tensor<16x16xf16>, tensor<16x16xf16> -> tensor<16x16xf32>
    scf.yield %s : tensor<16x16xf32>
  }
  return %r : tensor<16x16xf32>
}

// -----

// The K and V blocks of an SDPA-like loop: the prologue issues them in the
// order the first iterations use them, the new loads stay where the
// original ones were, and `stages` is recorded in tile.sdpa.

// CHECK-LABEL: func.func @prefetch_k_and_v
// CHECK-SAME: (%{{[^:]*}}: !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<q>}, %[[K:[^:]*]]: !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<k>}, %[[V:[^:]*]]: !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<v>},
// CHECK-SAME: tile.sdpa = #tile.sdpa<head_dim = 16, element_type = f16, causal = none, block_m = 16, block_n = 16, stages = 2>
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK: %[[K0:.*]] = tile.load %[[K]][%[[C0]], %[[C0]], %[[C0]], %[[C0]]] pad(0.000000e+00) transpose
// CHECK-NEXT: %[[V0:.*]] = tile.load %[[V]][%[[C0]], %[[C0]], %[[C0]], %[[C0]]] pad(0.000000e+00) :
// CHECK-NEXT: %[[R:.*]]:3 = scf.for %[[J:.*]] = %[[C0]] to %{{.*}} step %[[C1]] iter_args(%[[ACC:.*]] = %{{.*}}, %[[KJ:.*]] = %[[K0]], %[[VJ:.*]] = %[[V0]])
// CHECK-NEXT: %[[J1:.*]] = arith.addi %[[J]], %[[C1]] : index
// CHECK-NEXT: %[[K1:.*]] = tile.load %[[K]][%[[C0]], %[[C0]], %[[J1]], %[[C0]]] pad(0.000000e+00) transpose
// CHECK-NEXT: %[[S:.*]] = tile.mma %{{.*}}, %[[KJ]], %{{.*}}
// CHECK-NEXT: %[[P:.*]] = arith.truncf %[[S]]
// CHECK-NEXT: %[[V1:.*]] = tile.load %[[V]][%[[C0]], %[[C0]], %[[J1]], %[[C0]]] pad(0.000000e+00) :
// CHECK-NEXT: %[[ACC1:.*]] = tile.mma %[[P]], %[[VJ]], %[[ACC]]
// CHECK-NEXT: scf.yield %[[ACC1]], %[[K1]], %[[V1]]
// CHECK: arith.truncf %[[R]]#0

// With three stages, two blocks of each are in flight, oldest first.

// STAGES3-LABEL: func.func @prefetch_k_and_v
// STAGES3-SAME: (%{{[^:]*}}: !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<q>}, %[[K:[^:]*]]: !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<k>}, %[[V:[^:]*]]: !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<v>},
// STAGES3-SAME: tile.sdpa = #tile.sdpa<head_dim = 16, element_type = f16, causal = none, block_m = 16, block_n = 16, stages = 3>
// STAGES3-DAG: %[[C0:.*]] = arith.constant 0 : index
// STAGES3-DAG: %[[C1:.*]] = arith.constant 1 : index
// STAGES3: %[[K0:.*]] = tile.load %[[K]][%[[C0]], %[[C0]], %[[C0]], %[[C0]]]
// STAGES3-NEXT: %[[V0:.*]] = tile.load %[[V]][%[[C0]], %[[C0]], %[[C0]], %[[C0]]]
// STAGES3-NEXT: %[[K1:.*]] = tile.load %[[K]][%[[C0]], %[[C0]], %[[C1]], %[[C0]]]
// STAGES3-NEXT: %[[V1:.*]] = tile.load %[[V]][%[[C0]], %[[C0]], %[[C1]], %[[C0]]]
// STAGES3-NEXT: %[[C2:.*]] = arith.constant 2 : index
// STAGES3-NEXT: scf.for %[[J:.*]] = %[[C0]] to %{{.*}} step %[[C1]] iter_args(%[[ACC:.*]] = %{{.*}}, %[[K_OLD:.*]] = %[[K0]], %[[K_NEW:.*]] = %[[K1]], %[[V_OLD:.*]] = %[[V0]], %[[V_NEW:.*]] = %[[V1]])
// STAGES3-NEXT: %[[J2:.*]] = arith.addi %[[J]], %[[C2]] : index
// STAGES3-NEXT: %[[K2:.*]] = tile.load %[[K]][%[[C0]], %[[C0]], %[[J2]], %[[C0]]]
// STAGES3-NEXT: tile.mma %{{.*}}, %[[K_OLD]], %{{.*}}
// STAGES3: %[[V2:.*]] = tile.load %[[V]][%[[C0]], %[[C0]], %[[J2]], %[[C0]]]
// STAGES3-NEXT: %[[ACC1:.*]] = tile.mma %{{.*}}, %[[V_OLD]], %[[ACC]]
// STAGES3-NEXT: scf.yield %[[ACC1]], %[[K_NEW]], %[[K2]], %[[V_NEW]], %[[V2]]

// With refill-after-use, each refill moves to just after the last op that
// reads the block it replaces: K's after Q·Kᵀ, V's after P·V (the index
// computation stays at the top). tile.sdpa records it.

// AFTER2-LABEL: func.func @prefetch_k_and_v
// AFTER2-SAME: (%{{[^:]*}}: !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<q>}, %[[K:[^:]*]]: !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<k>}, %[[V:[^:]*]]: !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<v>},
// AFTER2-SAME: tile.sdpa = #tile.sdpa<head_dim = 16, element_type = f16, causal = none, block_m = 16, block_n = 16, stages = 2, refill_after_use = true>
// AFTER2-DAG: %[[C0:.*]] = arith.constant 0 : index
// AFTER2-DAG: %[[C1:.*]] = arith.constant 1 : index
// AFTER2: %[[K0:.*]] = tile.load %[[K]][%[[C0]], %[[C0]], %[[C0]], %[[C0]]] pad(0.000000e+00) transpose
// AFTER2-NEXT: %[[V0:.*]] = tile.load %[[V]][%[[C0]], %[[C0]], %[[C0]], %[[C0]]] pad(0.000000e+00) :
// AFTER2-NEXT: %[[R:.*]]:3 = scf.for %[[J:.*]] = %[[C0]] to %{{.*}} step %[[C1]] iter_args(%[[ACC:.*]] = %{{.*}}, %[[KJ:.*]] = %[[K0]], %[[VJ:.*]] = %[[V0]])
// AFTER2-NEXT: %[[J1:.*]] = arith.addi %[[J]], %[[C1]] : index
// AFTER2-NEXT: %[[S:.*]] = tile.mma %{{.*}}, %[[KJ]], %{{.*}}
// AFTER2-NEXT: %[[K1:.*]] = tile.load %[[K]][%[[C0]], %[[C0]], %[[J1]], %[[C0]]] pad(0.000000e+00) transpose
// AFTER2-NEXT: %[[P:.*]] = arith.truncf %[[S]]
// AFTER2-NEXT: %[[ACC1:.*]] = tile.mma %[[P]], %[[VJ]], %[[ACC]]
// AFTER2-NEXT: %[[V1:.*]] = tile.load %[[V]][%[[C0]], %[[C0]], %[[J1]], %[[C0]]] pad(0.000000e+00) :
// AFTER2-NEXT: scf.yield %[[ACC1]], %[[K1]], %[[V1]]
// AFTER2: arith.truncf %[[R]]#0

// With three stages the refill replaces the oldest of the two blocks in
// flight: it follows the mma that reads that one.

// AFTER3-LABEL: func.func @prefetch_k_and_v
// AFTER3-SAME: (%{{[^:]*}}: !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<q>}, %[[K:[^:]*]]: !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<k>}, %[[V:[^:]*]]: !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<v>},
// AFTER3-SAME: tile.sdpa = #tile.sdpa<head_dim = 16, element_type = f16, causal = none, block_m = 16, block_n = 16, stages = 3, refill_after_use = true>
// AFTER3-DAG: %[[C0:.*]] = arith.constant 0 : index
// AFTER3-DAG: %[[C1:.*]] = arith.constant 1 : index
// AFTER3: scf.for %[[J:.*]] = %[[C0]] to %{{.*}} step %[[C1]] iter_args(%[[ACC:.*]] = %{{.*}}, %[[K_OLD:.*]] = %{{.*}}, %[[K_NEW:.*]] = %{{.*}}, %[[V_OLD:.*]] = %{{.*}}, %[[V_NEW:.*]] = %{{.*}})
// AFTER3-NEXT: %[[J2:.*]] = arith.addi %[[J]], %{{.*}} : index
// AFTER3-NEXT: %[[S:.*]] = tile.mma %{{.*}}, %[[K_OLD]], %{{.*}}
// AFTER3-NEXT: %[[K2:.*]] = tile.load %[[K]][%[[C0]], %[[C0]], %[[J2]], %[[C0]]]
// AFTER3-NEXT: %[[P:.*]] = arith.truncf %[[S]]
// AFTER3-NEXT: %[[ACC1:.*]] = tile.mma %[[P]], %[[V_OLD]], %[[ACC]]
// AFTER3-NEXT: %[[V2:.*]] = tile.load %[[V]][%[[C0]], %[[C0]], %[[J2]], %[[C0]]]
// AFTER3-NEXT: scf.yield %[[ACC1]], %[[K_NEW]], %[[K2]], %[[V_NEW]], %[[V2]]

// STAGES4-LABEL: func.func @prefetch_k_and_v
// STAGES4-SAME: stages = 4>
func.func @prefetch_k_and_v(%q: !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<q>},
                            %k: !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<k>},
                            %v: !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<v>},
                            %o: !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<o>}, %scale: f32 {tile.arg = #tile.arg<scale>})
    attributes {tile.sdpa = #tile.sdpa<head_dim = 16, element_type = f16,
                causal = none, block_m = 16, block_n = 16>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant dense<0.0> : tensor<16x16xf32>
  %n = tile.dim %k[2] : !tile.view<?x?x?x16xf16>
  %qt = tile.load %q[%c0, %c0, %c0, %c0] pad(0.0)
      : !tile.view<?x?x?x16xf16> -> tensor<16x16xf16>
  %r = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %zero)
      -> (tensor<16x16xf32>) {
    %kt = tile.load %k[%c0, %c0, %j, %c0] pad(0.0) transpose
        : !tile.view<?x?x?x16xf16> -> tensor<16x16xf16>
    %s = tile.mma %qt, %kt, %zero
        : tensor<16x16xf16>, tensor<16x16xf16> -> tensor<16x16xf32>
    %p = arith.truncf %s : tensor<16x16xf32> to tensor<16x16xf16>
    %vb = tile.load %v[%c0, %c0, %j, %c0] pad(0.0)
        : !tile.view<?x?x?x16xf16> -> tensor<16x16xf16>
    %acc1 = tile.mma %p, %vb, %acc
        : tensor<16x16xf16>, tensor<16x16xf16> -> tensor<16x16xf32>
    scf.yield %acc1 : tensor<16x16xf32>
  }
  %out = arith.truncf %r : tensor<16x16xf32> to tensor<16x16xf16>
  tile.store %out, %o[%c0, %c0, %c0, %c0]
      : tensor<16x16xf16>, !tile.view<?x?x?x16xf16>
  return
}

// -----

// Bounds and step known only at run time: blocks lb, lb + step, ... in the
// prologue, block j + (stages - 1) * step in the loop.

// CHECK-LABEL: func.func @prefetch_dynamic_bounds
// CHECK-SAME: (%[[K:.*]]: !tile.view<?x16xf16>, %[[LB:.*]]: index, %[[UB:.*]]: index, %[[ST:.*]]: index)
// CHECK: %[[K0:.*]] = tile.load %[[K]][%[[LB]], %{{.*}}]
// CHECK-NEXT: scf.for %[[J:.*]] = %[[LB]] to %[[UB]] step %[[ST]] iter_args(%{{.*}} = %{{.*}}, %[[KJ:.*]] = %[[K0]])
// CHECK-NEXT: %[[J1:.*]] = arith.addi %[[J]], %[[ST]] : index
// CHECK-NEXT: %[[NEXT:.*]] = tile.load %[[K]][%[[J1]], %{{.*}}]
// CHECK-NEXT: %[[SUM:.*]] = arith.addf %{{.*}}, %[[KJ]]
// CHECK-NEXT: scf.yield %[[SUM]], %[[NEXT]]

// STAGES4-LABEL: func.func @prefetch_dynamic_bounds
// STAGES4-SAME: (%[[K:.*]]: !tile.view<?x16xf16>, %[[LB:.*]]: index, %[[UB:.*]]: index, %[[ST:.*]]: index)
// STAGES4: %[[K0:.*]] = tile.load %[[K]][%[[LB]], %{{.*}}]
// STAGES4-NEXT: %[[B1:.*]] = arith.addi %[[LB]], %[[ST]] : index
// STAGES4-NEXT: %[[K1:.*]] = tile.load %[[K]][%[[B1]], %{{.*}}]
// STAGES4-NEXT: %[[C2:.*]] = arith.constant 2 : index
// STAGES4-NEXT: %[[ST2:.*]] = arith.muli %[[ST]], %[[C2]] : index
// STAGES4-NEXT: %[[B2:.*]] = arith.addi %[[LB]], %[[ST2]] : index
// STAGES4-NEXT: %[[K2:.*]] = tile.load %[[K]][%[[B2]], %{{.*}}]
// STAGES4-NEXT: %[[C3:.*]] = arith.constant 3 : index
// STAGES4-NEXT: %[[ST3:.*]] = arith.muli %[[ST]], %[[C3]] : index
// STAGES4-NEXT: scf.for %[[J:.*]] = %[[LB]] to %[[UB]] step %[[ST]] iter_args(%{{.*}} = %{{.*}}, %[[KA:.*]] = %[[K0]], %[[KB:.*]] = %[[K1]], %[[KC:.*]] = %[[K2]])
// STAGES4-NEXT: %[[J3:.*]] = arith.addi %[[J]], %[[ST3]] : index
// STAGES4-NEXT: %[[NEXT:.*]] = tile.load %[[K]][%[[J3]], %{{.*}}]
// STAGES4-NEXT: %[[SUM:.*]] = arith.addf %{{.*}}, %[[KA]]
// STAGES4-NEXT: scf.yield %[[SUM]], %[[KB]], %[[KC]], %[[NEXT]]
func.func @prefetch_dynamic_bounds(%k: !tile.view<?x16xf16>, %lb: index,
                                   %ub: index, %st: index)
    -> tensor<16x16xf16> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant dense<0.0> : tensor<16x16xf16>
  %r = scf.for %j = %lb to %ub step %st iter_args(%acc = %zero)
      -> (tensor<16x16xf16>) {
    %kb = tile.load %k[%j, %c0] pad(0.0)
        : !tile.view<?x16xf16> -> tensor<16x16xf16>
    %sum = arith.addf %acc, %kb : tensor<16x16xf16>
    scf.yield %sum : tensor<16x16xf16>
  }
  return %r : tensor<16x16xf16>
}

// -----

// Two consecutive loops (as tile-mask-split leaves them): each gets its
// own prologue, starting at its own lower bound.

// CHECK-LABEL: func.func @prefetch_two_loops
// CHECK-SAME: (%[[K:.*]]: !tile.view<?x16xf16>, %[[MID:.*]]: index, %[[N:.*]]: index)
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK: %[[A0:.*]] = tile.load %[[K]][%[[C0]], %[[C0]]]
// CHECK-NEXT: %[[FIRST:.*]]:2 = scf.for %{{.*}} = %[[C0]] to %[[MID]] step %[[C1]] iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %[[A0]])
// CHECK: scf.yield
// CHECK: %[[B0:.*]] = tile.load %[[K]][%[[MID]], %[[C0]]]
// CHECK-NEXT: %[[SECOND:.*]]:2 = scf.for %{{.*}} = %[[MID]] to %[[N]] step %[[C1]] iter_args(%{{.*}} = %[[FIRST]]#0, %{{.*}} = %[[B0]])
// CHECK: return %[[SECOND]]#0
func.func @prefetch_two_loops(%k: !tile.view<?x16xf16>, %mid: index,
                              %n: index) -> tensor<16x16xf16> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant dense<0.0> : tensor<16x16xf16>
  %r0 = scf.for %j = %c0 to %mid step %c1 iter_args(%acc = %zero)
      -> (tensor<16x16xf16>) {
    %kb = tile.load %k[%j, %c0] pad(0.0)
        : !tile.view<?x16xf16> -> tensor<16x16xf16>
    %sum = arith.addf %acc, %kb : tensor<16x16xf16>
    scf.yield %sum : tensor<16x16xf16>
  }
  %r1 = scf.for %j = %mid to %n step %c1 iter_args(%acc = %r0)
      -> (tensor<16x16xf16>) {
    %kb = tile.load %k[%j, %c0] pad(0.0)
        : !tile.view<?x16xf16> -> tensor<16x16xf16>
    %sum = arith.maximumf %acc, %kb : tensor<16x16xf16>
    scf.yield %sum : tensor<16x16xf16>
  }
  return %r1 : tensor<16x16xf16>
}

// -----

// Nested loops: each loop pipelines the loads of its own induction variable
// (the inner load may use the outer one as another index); the inner
// prologue, inside the outer loop, is not pipelined again.

// CHECK-LABEL: func.func @prefetch_nested_loops
// CHECK-SAME: (%[[Q:.*]]: !tile.view<?x16xf16>, %[[K:.*]]: !tile.view<?x?x16xf16>, %[[N:.*]]: index)
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[Q0:.*]] = tile.load %[[Q]][%[[C0]], %[[C0]]]
// CHECK-NEXT: scf.for %[[I:.*]] = %[[C0]] to %[[N]] step %{{.*}} iter_args(%{{.*}} = %{{.*}}, %[[QI:.*]] = %[[Q0]]) -> (tensor<16x16xf16>, tensor<16x16xf16>)
// CHECK: %[[NEXT_Q:.*]] = tile.load %[[Q]][%{{.*}}, %[[C0]]]
// CHECK-NEXT: %[[K0:.*]] = tile.load %[[K]][%[[I]], %[[C0]], %[[C0]]]
// CHECK-NEXT: %[[INNER:.*]]:2 = scf.for %[[J:.*]] = %[[C0]] to %[[N]] step %{{.*}} iter_args(%{{.*}} = %[[QI]], %[[KJ:.*]] = %[[K0]])
// CHECK: %[[NEXT_K:.*]] = tile.load %[[K]][%[[I]], %{{.*}}, %[[C0]]]
// CHECK-NEXT: %[[SUM:.*]] = arith.addf %{{.*}}, %[[KJ]]
// CHECK-NEXT: scf.yield %[[SUM]], %[[NEXT_K]]
// CHECK: scf.yield %[[INNER]]#0, %[[NEXT_Q]]
func.func @prefetch_nested_loops(%q: !tile.view<?x16xf16>,
                                 %k: !tile.view<?x?x16xf16>, %n: index)
    -> tensor<16x16xf16> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant dense<0.0> : tensor<16x16xf16>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero)
      -> (tensor<16x16xf16>) {
    %qb = tile.load %q[%i, %c0] pad(0.0)
        : !tile.view<?x16xf16> -> tensor<16x16xf16>
    %inner = scf.for %j = %c0 to %n step %c1 iter_args(%acc2 = %qb)
        -> (tensor<16x16xf16>) {
      %kb = tile.load %k[%i, %j, %c0] pad(0.0)
          : !tile.view<?x?x16xf16> -> tensor<16x16xf16>
      %sum = arith.addf %acc2, %kb : tensor<16x16xf16>
      scf.yield %sum : tensor<16x16xf16>
    }
    scf.yield %inner : tensor<16x16xf16>
  }
  return %r : tensor<16x16xf16>
}

// -----

// A load of block j + 1, an index computed from j: its computation is
// copied for the step ahead (the prologue's block 0 + 1, the refill's
// (j + 1) + 1), and the original, now unused, is gone.

// CHECK-LABEL: func.func @index_j_plus_1
// CHECK: %[[B0:.*]] = arith.addi %c0, %c1 : index
// CHECK: %[[K0:.*]] = tile.load %{{.*}}[%[[B0]], %{{.*}}]
// CHECK: scf.for %[[J:.*]] = %{{.*}} iter_args(%{{.*}} = %{{.*}}, %[[CUR:.*]] = %[[K0]])
// CHECK-NEXT: %[[AHEAD:.*]] = arith.addi %[[J]], %c1 : index
// CHECK-NEXT: %[[B1:.*]] = arith.addi %[[AHEAD]], %c1 : index
// CHECK-NEXT: %[[NEXT:.*]] = tile.load %{{.*}}[%[[B1]], %{{.*}}]
// CHECK: arith.addf %{{.*}}, %[[CUR]]
// CHECK: scf.yield %{{.*}}, %[[NEXT]]
func.func @index_j_plus_1(%k: !tile.view<?x16xf16>, %n: index)
    -> tensor<16x16xf16> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant dense<0.0> : tensor<16x16xf16>
  %r = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %zero)
      -> (tensor<16x16xf16>) {
    %j1 = arith.addi %j, %c1 : index
    %kb = tile.load %k[%j1, %c0] pad(0.0)
        : !tile.view<?x16xf16> -> tensor<16x16xf16>
    %sum = arith.addf %acc, %kb : tensor<16x16xf16>
    scf.yield %sum : tensor<16x16xf16>
  }
  return %r : tensor<16x16xf16>
}

// -----

// Another index depends on a value of the loop (an iter_arg): the block an
// iteration reads is not known ahead of it.

// CHECK-LABEL: func.func @negative_index_from_iter_arg
// CHECK-NOT: tile.load
// CHECK: scf.for %[[J:.*]] = %{{.*}} iter_args(%{{.*}} = %{{.*}}, %[[COL:.*]] = %{{.*}}) -> (tensor<16x16xf16>, index)
// CHECK-NEXT: tile.load %{{.*}}[%[[J]], %[[COL]]]
func.func @negative_index_from_iter_arg(%k: !tile.view<?x?xf16>, %n: index)
    -> tensor<16x16xf16> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant dense<0.0> : tensor<16x16xf16>
  %r:2 = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %zero, %col = %c0)
      -> (tensor<16x16xf16>, index) {
    %kb = tile.load %k[%j, %col] pad(0.0)
        : !tile.view<?x?xf16> -> tensor<16x16xf16>
    %sum = arith.addf %acc, %kb : tensor<16x16xf16>
    %next = arith.addi %col, %c1 : index
    scf.yield %sum, %next : tensor<16x16xf16>, index
  }
  return %r#0 : tensor<16x16xf16>
}

// -----

// The induction variable as two indices: not a load of one block j.

// CHECK-LABEL: func.func @negative_iv_twice
// CHECK-NOT: tile.load
// CHECK: scf.for %[[J:.*]] = %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (tensor<16x16xf16>)
// CHECK-NEXT: tile.load %{{.*}}[%[[J]], %[[J]]]
func.func @negative_iv_twice(%k: !tile.view<?x?xf16>, %n: index)
    -> tensor<16x16xf16> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant dense<0.0> : tensor<16x16xf16>
  %r = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %zero)
      -> (tensor<16x16xf16>) {
    %kb = tile.load %k[%j, %j] pad(0.0)
        : !tile.view<?x?xf16> -> tensor<16x16xf16>
    %sum = arith.addf %acc, %kb : tensor<16x16xf16>
    scf.yield %sum : tensor<16x16xf16>
  }
  return %r : tensor<16x16xf16>
}

// -----

// A load inside an scf.if is not issued on every iteration: left alone.

// CHECK-LABEL: func.func @negative_load_under_if
// CHECK-NOT: tile.load
// CHECK: scf.for %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (tensor<16x16xf16>)
// CHECK: scf.if
// CHECK-NEXT: tile.load
func.func @negative_load_under_if(%k: !tile.view<?x16xf16>, %n: index,
                                  %cond: i1) -> tensor<16x16xf16> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant dense<0.0> : tensor<16x16xf16>
  %r = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %zero)
      -> (tensor<16x16xf16>) {
    %sum = scf.if %cond -> (tensor<16x16xf16>) {
      %kb = tile.load %k[%j, %c0] pad(0.0)
          : !tile.view<?x16xf16> -> tensor<16x16xf16>
      %s = arith.addf %acc, %kb : tensor<16x16xf16>
      scf.yield %s : tensor<16x16xf16>
    } else {
      scf.yield %acc : tensor<16x16xf16>
    }
    scf.yield %sum : tensor<16x16xf16>
  }
  return %r : tensor<16x16xf16>
}

// -----

// A loop that stores into the view it loads from: a load moved ahead of
// earlier iterations could miss what they write, so the loop is left alone.
// (Slices of one argument are the same memory.)

// CHECK-LABEL: func.func @negative_loop_stores
// CHECK-NOT: tile.load
// CHECK: scf.for %[[J:.*]] = %{{.*}} {
// CHECK-NEXT: %[[KB:.*]] = tile.load %{{.*}}[%[[J]], %{{.*}}]
// CHECK-NEXT: arith.addi
// CHECK-NEXT: tile.store %[[KB]]
func.func @negative_loop_stores(%k: !tile.view<?x16xf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %kk = tile.slice %k[0] offset(%c0) size(%c64) : !tile.view<?x16xf16>
  scf.for %j = %c0 to %n step %c1 {
    %kb = tile.load %k[%j, %c0] pad(0.0)
        : !tile.view<?x16xf16> -> tensor<16x16xf16>
    %j1 = arith.addi %j, %c1 : index
    tile.store %kb, %kk[%j1, %c0] : tensor<16x16xf16>, !tile.view<?x16xf16>
  }
  return
}

// -----

// A store into a view of another kernel argument (the backward's dQ
// additions while Q streams): a kernel's written arguments share no memory
// with its other arguments (the kernel ABI; the runtime refuses calls
// where they would), so the loads are pipelined.

// CHECK-LABEL: func.func @loop_stores_another_argument
// CHECK: %[[K0:.*]] = tile.load %{{.*}}[%c0, %c0]
// CHECK: scf.for %[[J:.*]] = %{{.*}} iter_args(%[[KJ:.*]] = %[[K0]])
// CHECK: %[[NEXT:.*]] = tile.load
// CHECK: arith.extf %[[KJ]]
// CHECK: tile.store %{{.*}} add
// CHECK: scf.yield %[[NEXT]]
func.func @loop_stores_another_argument(%k: !tile.view<?x16xf16>,
                                        %o: !tile.view<?x16xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %oo = tile.slice %o[0] offset(%c0) size(%c64) : !tile.view<?x16xf32>
  scf.for %j = %c0 to %n step %c1 {
    %kb = tile.load %k[%j, %c0] pad(0.0)
        : !tile.view<?x16xf16> -> tensor<16x16xf16>
    %kf = arith.extf %kb : tensor<16x16xf16> to tensor<16x16xf32>
    tile.store %kf, %oo[%j, %c0] add : tensor<16x16xf32>, !tile.view<?x16xf32>
  }
  return
}

// -----

// refill-after-use: the last reader of the carried block may be nested (in
// an scf.if): the refill goes after the op of the body that holds it, and
// before the ops that do not read the block.

// AFTER2-LABEL: func.func @refill_after_last_reader
// AFTER2: scf.for %[[J:.*]] = %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}, %[[KJ:.*]] = %{{.*}})
// AFTER2-NEXT: %[[J1:.*]] = arith.addi %[[J]], %{{.*}} : index
// AFTER2-NEXT: %[[S:.*]] = tile.mma %{{.*}}, %[[KJ]], %[[ACC]]
// AFTER2-NEXT: %[[T:.*]] = scf.if
// AFTER2-NEXT: tile.mma %{{.*}}, %[[KJ]], %[[S]]
// AFTER2: } else {
// AFTER2-NEXT: scf.yield %[[S]]
// AFTER2-NEXT: }
// AFTER2-NEXT: %[[NEXT:.*]] = tile.load %{{.*}}[%[[J1]], %{{.*}}]
// AFTER2-NEXT: %[[U:.*]] = arith.addf %[[T]], %[[ACC]]
// AFTER2-NEXT: scf.yield %[[U]], %[[NEXT]]

// Without the option the refill stays where the load was.

// CHECK-LABEL: func.func @refill_after_last_reader
// CHECK: scf.for %[[J:.*]] = %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}, %[[KJ:.*]] = %{{.*}})
// CHECK-NEXT: %[[J1:.*]] = arith.addi %[[J]], %{{.*}} : index
// CHECK-NEXT: %[[NEXT:.*]] = tile.load %{{.*}}[%[[J1]], %{{.*}}]
// CHECK-NEXT: tile.mma %{{.*}}, %[[KJ]], %[[ACC]]
func.func @refill_after_last_reader(%k: !tile.view<?x16xf16>,
                                    %q: tensor<16x16xf16>, %n: index,
                                    %c: i1) -> tensor<16x16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant dense<0.0> : tensor<16x16xf32>
  %r = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %zero)
      -> (tensor<16x16xf32>) {
    %kb = tile.load %k[%j, %c0] pad(0.0)
        : !tile.view<?x16xf16> -> tensor<16x16xf16>
    %s = tile.mma %q, %kb, %acc
        : tensor<16x16xf16>, tensor<16x16xf16> -> tensor<16x16xf32>
    %t = scf.if %c -> (tensor<16x16xf32>) {
      %s2 = tile.mma %q, %kb, %s
          : tensor<16x16xf16>, tensor<16x16xf16> -> tensor<16x16xf32>
      scf.yield %s2 : tensor<16x16xf32>
    } else {
      scf.yield %s : tensor<16x16xf32>
    }
    %u = arith.addf %t, %acc : tensor<16x16xf32>
    scf.yield %u : tensor<16x16xf32>
  }
  return %r : tensor<16x16xf32>
}

// -----

// stages = 1 keeps no block in flight: the IR is unchanged (also with
// refill-after-use, which then has nothing to move and is not recorded).

// CHECK-LABEL: func.func @negative_stages_1
// CHECK-SAME: stages = 2>

// STAGES1-LABEL: func.func @negative_stages_1
// STAGES1-SAME: attributes {tile.sdpa = #tile.sdpa<head_dim = 16, element_type = f16, causal = none, block_m = 16, block_n = 16>}
// STAGES1-NEXT: %[[C0:.*]] = arith.constant 0 : index
// STAGES1-NEXT: %[[C1:.*]] = arith.constant 1 : index
// STAGES1-NEXT: %[[ZERO:.*]] = arith.constant
// STAGES1-NEXT: %[[N:.*]] = tile.dim
// STAGES1-NEXT: %[[R:.*]] = scf.for %[[J:.*]] = %[[C0]] to %[[N]] step %[[C1]] iter_args(%[[ACC:.*]] = %[[ZERO]]) -> (tensor<16x16xf32>) {
// STAGES1-NEXT: %[[KT:.*]] = tile.load %{{.*}}[%[[C0]], %[[C0]], %[[J]], %[[C0]]]
// STAGES1-NEXT: %[[S:.*]] = tile.mma %{{.*}}, %[[KT]], %[[ACC]]
// STAGES1-NEXT: scf.yield %[[S]] : tensor<16x16xf32>
// STAGES1-NEXT: }
// STAGES1-NEXT: %[[OUT:.*]] = arith.truncf %[[R]]
// STAGES1-NEXT: tile.store %[[OUT]]
func.func @negative_stages_1(%q: !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<q>},
                             %k: !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<k>},
                             %v: !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<v>},
                             %o: !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<o>}, %scale: f32 {tile.arg = #tile.arg<scale>})
    attributes {tile.sdpa = #tile.sdpa<head_dim = 16, element_type = f16,
                causal = none, block_m = 16, block_n = 16>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant dense<0.0> : tensor<16x16xf32>
  %n = tile.dim %k[2] : !tile.view<?x?x?x16xf16>
  %r = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %zero)
      -> (tensor<16x16xf32>) {
    %kt = tile.load %k[%c0, %c0, %j, %c0] pad(0.0) transpose
        : !tile.view<?x?x?x16xf16> -> tensor<16x16xf16>
    %s = tile.mma %kt, %kt, %acc
        : tensor<16x16xf16>, tensor<16x16xf16> -> tensor<16x16xf32>
    scf.yield %s : tensor<16x16xf32>
  }
  %out = arith.truncf %r : tensor<16x16xf32> to tensor<16x16xf16>
  tile.store %out, %o[%c0, %c0, %c0, %c0]
      : tensor<16x16xf16>, !tile.view<?x?x?x16xf16>
  return
}

// A generated kernel: K's refill follows Q·Kᵀ, before the softmax; V's
// follows P·V, at the end of the body.

// GEN-AFTER2-LABEL: func.func @sdpa_fwd
// GEN-AFTER2-SAME: tile.sdpa = #tile.sdpa<head_dim = 64, element_type = f16, causal = none, block_m = 64, block_n = 64, stages = 2, refill_after_use = true>
// GEN-AFTER2: scf.for %{{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %[[KJ:.*]] = %{{.*}}, %[[VJ:.*]] = %{{.*}})
// GEN-AFTER2-NOT: tile.load
// GEN-AFTER2: %[[S:.*]] = tile.mma %{{.*}}, %[[KJ]], %{{.*}}
// GEN-AFTER2-NEXT: %[[K1:.*]] = tile.load %{{.*}} transpose
// GEN-AFTER2: tile.online_softmax
// GEN-AFTER2-NOT: tile.load
// GEN-AFTER2: %[[ACC1:.*]] = tile.mma %{{.*}}, %[[VJ]], %{{.*}}
// GEN-AFTER2-NEXT: %[[V1:.*]] = tile.load
// GEN-AFTER2-NEXT: scf.yield %{{.*}}, %{{.*}}, %[[ACC1]], %[[K1]], %[[V1]]

// -----

// Two loops over consecutive blocks (a mask split): the second starts where
// the first ends, and the first provably ends at or after its start (its
// bound is max(%m, lb)). The blocks the first leaves in flight start the
// second: no second prologue, which would load them again.

// CHECK-LABEL: func.func @chain_consecutive_loops
// CHECK: %[[SPLIT:.*]] = arith.maxsi
// CHECK: %[[K0:.*]] = tile.load
// CHECK-NEXT: %[[R1:.*]]:2 = scf.for %{{.*}} = %{{.*}} to %[[SPLIT]] {{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %[[K0]])
// CHECK: scf.yield
// CHECK-NOT: tile.load
// CHECK: %[[R2:.*]]:2 = scf.for %{{.*}} = %[[SPLIT]] to %{{.*}} iter_args(%{{.*}} = %[[R1]]#0, %{{.*}} = %[[R1]]#1)

// STAGES3-LABEL: func.func @chain_consecutive_loops
// STAGES3: %[[R1:.*]]:3 = scf.for
// STAGES3: scf.yield
// STAGES3-NOT: tile.load
// STAGES3: scf.for %{{.*}} iter_args(%{{.*}} = %[[R1]]#0, %{{.*}} = %[[R1]]#1, %{{.*}} = %[[R1]]#2)

// AFTER2-LABEL: func.func @chain_consecutive_loops
// AFTER2: %[[R1:.*]]:2 = scf.for
// AFTER2: scf.yield
// AFTER2-NOT: tile.load
// AFTER2: scf.for %{{.*}} iter_args(%{{.*}} = %[[R1]]#0, %{{.*}} = %[[R1]]#1)
func.func @chain_consecutive_loops(%k: !tile.view<?x?x16xf16>,
                                   %q: tensor<16x16xf16>, %h: index,
                                   %m: index, %n: index) -> tensor<16x16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant dense<0.0> : tensor<16x16xf32>
  %split = arith.maxsi %m, %c0 : index
  %r1 = scf.for %j = %c0 to %split step %c1 iter_args(%acc = %zero)
      -> (tensor<16x16xf32>) {
    %kt = tile.load %k[%h, %j, %c0] pad(0.0) transpose
        : !tile.view<?x?x16xf16> -> tensor<16x16xf16>
    %s = tile.mma %q, %kt, %acc
        : tensor<16x16xf16>, tensor<16x16xf16> -> tensor<16x16xf32>
    scf.yield %s : tensor<16x16xf32>
  }
  %r2 = scf.for %j = %split to %n step %c1 iter_args(%acc = %r1)
      -> (tensor<16x16xf32>) {
    %kt = tile.load %k[%h, %j, %c0] pad(0.0) transpose
        : !tile.view<?x?x16xf16> -> tensor<16x16xf16>
    %s = tile.mma %q, %kt, %acc
        : tensor<16x16xf16>, tensor<16x16xf16> -> tensor<16x16xf32>
    scf.yield %s : tensor<16x16xf32>
  }
  return %r2 : tensor<16x16xf32>
}

// -----

// Not chained: the first loop may end before it starts (%m < 0 runs no
// iteration and leaves block 0 in flight, not block %m), and a loop over
// another head's blocks is another stream. Both second loops keep their
// prologue.

// CHECK-LABEL: func.func @no_chain
// CHECK: scf.for
// CHECK: scf.yield
// CHECK: tile.load %{{.*}}[%{{.*}}, %[[M:[^,]*]], %{{.*}}]
// CHECK-NEXT: scf.for %{{.*}} = %[[M]]
// CHECK: scf.yield
// CHECK: tile.load
// CHECK-NEXT: scf.for
// CHECK: scf.yield
// CHECK: tile.load %{{.*}}[%[[H2:[^,]*]], %[[SPLIT:[^,]*]], %{{.*}}]
// CHECK-NEXT: scf.for %{{.*}} = %[[SPLIT]]
func.func @no_chain(%k: !tile.view<?x?x16xf16>, %q: tensor<16x16xf16>,
                    %h: index, %h2: index, %m: index,
                    %n: index) -> tensor<16x16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant dense<0.0> : tensor<16x16xf32>
  %r1 = scf.for %j = %c0 to %m step %c1 iter_args(%acc = %zero)
      -> (tensor<16x16xf32>) {
    %kt = tile.load %k[%h, %j, %c0] pad(0.0) transpose
        : !tile.view<?x?x16xf16> -> tensor<16x16xf16>
    %s = tile.mma %q, %kt, %acc
        : tensor<16x16xf16>, tensor<16x16xf16> -> tensor<16x16xf32>
    scf.yield %s : tensor<16x16xf32>
  }
  %r2 = scf.for %j = %m to %n step %c1 iter_args(%acc = %r1)
      -> (tensor<16x16xf32>) {
    %kt = tile.load %k[%h, %j, %c0] pad(0.0) transpose
        : !tile.view<?x?x16xf16> -> tensor<16x16xf16>
    %s = tile.mma %q, %kt, %acc
        : tensor<16x16xf16>, tensor<16x16xf16> -> tensor<16x16xf32>
    scf.yield %s : tensor<16x16xf32>
  }
  %split = arith.maxsi %n, %c0 : index
  %r3 = scf.for %j = %c0 to %split step %c1 iter_args(%acc = %r2)
      -> (tensor<16x16xf32>) {
    %kt = tile.load %k[%h, %j, %c0] pad(0.0) transpose
        : !tile.view<?x?x16xf16> -> tensor<16x16xf16>
    %s = tile.mma %q, %kt, %acc
        : tensor<16x16xf16>, tensor<16x16xf16> -> tensor<16x16xf32>
    scf.yield %s : tensor<16x16xf32>
  }
  %r4 = scf.for %j = %split to %n step %c1 iter_args(%acc = %r3)
      -> (tensor<16x16xf32>) {
    %kt = tile.load %k[%h2, %j, %c0] pad(0.0) transpose
        : !tile.view<?x?x16xf16> -> tensor<16x16xf16>
    %s = tile.mma %q, %kt, %acc
        : tensor<16x16xf16>, tensor<16x16xf16> -> tensor<16x16xf32>
    scf.yield %s : tensor<16x16xf32>
  }
  return %r4 : tensor<16x16xf32>
}

// streams=1 pipelines only the first block load of the loop, K
// (FlashAttention-2's schedule): the prologue copies K alone, the loop
// carries one K block, refills it after Q·Kᵀ, and still loads V in place at
// the top of its iteration, where its copy overlaps Q·Kᵀ.

// GEN-K-ONLY-LABEL: func.func @sdpa_fwd
// GEN-K-ONLY-SAME: stages = 2, refill_after_use = true
// GEN-K-ONLY: %[[K0:.*]] = tile.load %arg1[{{.*}}] pad(0.000000e+00) transpose
// GEN-K-ONLY-NOT: tile.load
// GEN-K-ONLY: scf.for %[[J:[^ ]*]] = {{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %[[KJ:.*]] = %[[K0]])
// GEN-K-ONLY: %[[VJ:.*]] = tile.load %arg2[%{{.*}}, %{{.*}}, %[[J]], %{{.*}}] pad(0.000000e+00) :
// GEN-K-ONLY-NEXT: %[[S:.*]] = tile.mma %{{.*}}, %[[KJ]], %{{.*}}
// GEN-K-ONLY-NEXT: %[[K1:.*]] = tile.load %arg1[{{.*}}] pad(0.000000e+00) transpose
// GEN-K-ONLY: tile.mma %{{.*}}, %[[VJ]], %{{.*}}
// GEN-K-ONLY-NOT: tile.load
// GEN-K-ONLY: scf.yield %{{.*}}, %{{.*}}, %{{.*}}, %[[K1]] :

// streams at or above the number of block loads pipelines them all.

// GEN-STREAMS2-LABEL: func.func @sdpa_fwd
// GEN-STREAMS2: scf.for %{{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}})

// -----

// In-bounds loads (the unmasked loop of a mask split). With stages=2 and
// refill-after-use, the refill of a loop that no loop continues reads block
// min(j + 1, ub - 1): a block of the loop, so it keeps `in_bounds`, and the
// last iteration reloads the last block into the buffer it has just read.
// The first loop here is continued by the second (a chain), whose first
// block must be block %split: its refill reads block j + 1 and pads. Other
// schedules keep the padded refill too.

// AFTER2-LABEL: func.func @in_bounds_refills
// AFTER2: %[[SPLIT:.*]] = arith.maxsi
// AFTER2: %[[R1:.*]]:2 = scf.for %[[J:.*]] = %{{.*}} to %[[SPLIT]]
// AFTER2-NEXT: %[[J1:.*]] = arith.addi %[[J]]
// AFTER2-NOT: arith.minsi
// AFTER2: tile.load %{{.*}}[%{{.*}}, %[[J1]], %{{.*}}] pad(0.000000e+00) transpose :
// AFTER2: %[[LAST:.*]] = arith.subi %[[N:.*]], %c1
// AFTER2-NEXT: scf.for %[[J:.*]] = %[[SPLIT]] to %[[N]] {{.*}} iter_args(%{{.*}} = %[[R1]]#0, %{{.*}} = %[[R1]]#1)
// AFTER2-NEXT: %[[J1:.*]] = arith.addi %[[J]]
// AFTER2-NEXT: %[[NEXT:.*]] = arith.minsi %[[J1]], %[[LAST]]
// AFTER2: tile.load %{{.*}}[%{{.*}}, %[[NEXT]], %{{.*}}] pad(0.000000e+00) transpose in_bounds

// CHECK-LABEL: func.func @in_bounds_refills
// CHECK-NOT: arith.minsi
// CHECK: return
// STAGES3-LABEL: func.func @in_bounds_refills
// STAGES3-NOT: arith.minsi
// STAGES3: return
func.func @in_bounds_refills(%k: !tile.view<?x?x16xf16>,
                             %q: tensor<16x16xf16>, %h: index,
                             %m: index, %n: index) -> tensor<16x16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant dense<0.0> : tensor<16x16xf32>
  %split = arith.maxsi %m, %c0 : index
  %r1 = scf.for %j = %c0 to %split step %c1 iter_args(%acc = %zero)
      -> (tensor<16x16xf32>) {
    %kt = tile.load %k[%h, %j, %c0] pad(0.0) transpose in_bounds
        : !tile.view<?x?x16xf16> -> tensor<16x16xf16>
    %s = tile.mma %q, %kt, %acc
        : tensor<16x16xf16>, tensor<16x16xf16> -> tensor<16x16xf32>
    scf.yield %s : tensor<16x16xf32>
  }
  %r2 = scf.for %j = %split to %n step %c1 iter_args(%acc = %r1)
      -> (tensor<16x16xf32>) {
    %kt = tile.load %k[%h, %j, %c0] pad(0.0) transpose in_bounds
        : !tile.view<?x?x16xf16> -> tensor<16x16xf16>
    %s = tile.mma %q, %kt, %acc
        : tensor<16x16xf16>, tensor<16x16xf16> -> tensor<16x16xf32>
    scf.yield %s : tensor<16x16xf32>
  }
  return %r2 : tensor<16x16xf32>
}

// A block-sparse kernel's loops load block indices[t / 2] * 2 + t % 2 (a
// chain of index arithmetic and a read of the block list) at step t: the
// prologue and each refill copy the chain for step t + 1, reading the list
// at that step clamped into [0, ub - 1] (entry 0 when the loop runs no
// step), so that the read stays inside the list.
// GEN-SPARSE-LABEL: func.func @sdpa_fwd
// GEN-SPARSE: %[[COUNT:.*]] = tile.read %arg6
// GEN-SPARSE: %[[UB:.*]] = arith.muli
// GEN-SPARSE: %[[LAST:.*]] = arith.subi %[[UB]], %c1
// GEN-SPARSE: %[[LO:.*]] = arith.minsi %c0, %[[LAST]]
// GEN-SPARSE: %[[AT:.*]] = arith.maxsi %[[LO]], %c0
// GEN-SPARSE: %[[ENTRY:.*]] = arith.divui %[[AT]], %c2
// GEN-SPARSE: tile.read %arg7[{{.*}}, %[[ENTRY]]]
// GEN-SPARSE: %[[K0:.*]] = tile.load %arg1
// GEN-SPARSE: %[[V0:.*]] = tile.load %arg2
// GEN-SPARSE: scf.for %[[T:.*]] = %c0 to %[[UB]] step %c1 iter_args({{.*}}, %{{.*}} = %[[K0]], %{{.*}} = %[[V0]])
// GEN-SPARSE: %[[NEXT:.*]] = arith.addi %[[T]], %c1
// GEN-SPARSE: %[[HI:.*]] = arith.minsi %[[NEXT]], %[[LAST]]
// GEN-SPARSE: %[[AHEAD:.*]] = arith.maxsi %[[HI]], %c0
// GEN-SPARSE: %[[ENTRY2:.*]] = arith.divui %[[AHEAD]], %c2
// GEN-SPARSE: tile.read %arg7[{{.*}}, %[[ENTRY2]]]
// GEN-SPARSE: tile.load %arg1
// GEN-SPARSE: tile.read %arg8
// GEN-SPARSE: tile.read %arg9
// GEN-SPARSE: scf.for

// A paged cache's loop loads block j of an entry from its page: two
// indices vary, the page (a read of the block table) and the block within
// it, both from j through one chain. The prologue and each refill copy the
// chain for the step ahead, the read clamped into the loop's range; the
// original chain, read included, goes with the loads it fed.
// GEN-PAGED-LABEL: func.func @sdpa_fwd
// GEN-PAGED: %[[LAST:.*]] = arith.subi %{{.*}}, %c1 : index
// GEN-PAGED: tile.read %arg6[%{{.*}}, %[[P0:.*]]] : <?x?xi32> -> i32
// GEN-PAGED: %[[K0:.*]] = tile.load %arg1[%[[PAGE0:.*]], %{{.*}}, %[[IN0:.*]], %c0]
// GEN-PAGED: %[[V0:.*]] = tile.load %arg2[%[[PAGE0]], %{{.*}}, %[[IN0]], %c0]
// GEN-PAGED: scf.for %[[J:.*]] = %c0 to %{{.*}} step %c1 iter_args({{.*}}, %{{.*}} = %[[K0]], %{{.*}} = %[[V0]])
// GEN-PAGED-NOT: tile.read
// GEN-PAGED: %[[NEXT:.*]] = arith.addi %[[J]], %c1 : index
// GEN-PAGED: %[[HI:.*]] = arith.minsi %[[NEXT]], %[[LAST]] : index
// GEN-PAGED: tile.read %arg6
// GEN-PAGED-NOT: tile.read
// GEN-PAGED: tile.load %arg1
// GEN-PAGED: tile.load %arg2
// GEN-PAGED-NOT: tile.read
// GEN-PAGED: scf.yield

// Pages of 16 under blocks of 64: each key block gathers four pages, the
// four reads of the table one chain with the loads (the gather indices
// vary, the other indices do not). The prologue and each refill read the
// next block's four pages.
// GEN-GATHER-LABEL: func.func @sdpa_fwd
// GEN-GATHER-COUNT-4: tile.read %arg6
// GEN-GATHER: %[[K0:.*]] = tile.load %arg1[%c0, %{{.*}}, %c0, %c0] gather(%[[A:.*]], %[[B:.*]], %[[C:.*]], %[[D:.*]]) pad
// GEN-GATHER: %[[V0:.*]] = tile.load %arg2[%c0, %{{.*}}, %c0, %c0] gather(%[[A]], %[[B]], %[[C]], %[[D]]) pad
// GEN-GATHER: scf.for %[[J:.*]] = %c0 to %{{.*}} step %c1 iter_args({{.*}}, %{{.*}} = %[[K0]], %{{.*}} = %[[V0]])
// GEN-GATHER: arith.addi %[[J]], %c1 : index
// GEN-GATHER-COUNT-4: tile.read %arg6
// GEN-GATHER-NOT: tile.read
// GEN-GATHER: tile.load %arg1{{.*}} gather(
// GEN-GATHER: tile.load %arg2{{.*}} gather(
// GEN-GATHER-NOT: tile.read
// GEN-GATHER: scf.yield
