// tile-fold-score-terms on the generator's ALiBi kernels after
// tile-vectorize-apply: the query term (slope * q_idx, the same in every
// iteration) leaves the scores and returns in the log-sum-exps after the
// loop; the scale moves from the scores into the softmax, the key term
// divided by it once per block; with float-positions (the default) the
// keys' positions are f32 positions (the INTPOS run: without, the i32 ones converted).

// RUN: tiled-attn-opt %repo/kernels/functions/alibi.mlir --tile-generate-sdpa="head-dim=64 variant=none_lse+alibi" \
// RUN:   --tile-vectorize-apply --tile-fold-score-terms | FileCheck %s
// RUN: tiled-attn-opt %repo/kernels/functions/alibi.mlir --tile-generate-sdpa="head-dim=64 variant=none_lse+alibi" \
// RUN:   --tile-vectorize-apply --tile-fold-score-terms=scale=0 | FileCheck %s --check-prefix=ROWS
// RUN: tiled-attn-opt %repo/kernels/functions/alibi.mlir --tile-generate-sdpa="head-dim=64 variant=none_lse+alibi" \
// RUN:   --tile-vectorize-apply --tile-fold-score-terms=row-terms=0 | FileCheck %s --check-prefix=SCALE
// RUN: tiled-attn-opt %repo/kernels/functions/alibi.mlir --tile-generate-sdpa="head-dim=64 variant=none_lse+alibi" \
// RUN:   --tile-vectorize-apply --tile-fold-score-terms=float-positions=0 | FileCheck %s --check-prefix=INTPOS
// A bias read per score (a term that is no row or key vector) keeps the
// scale where it is, the scaled score and the bias one multiply-add (with
// contract=0 a multiply and an addition); a block-sparse kernel (two
// softmax loops) is left alone.
// RUN: tiled-attn-opt %repo/kernels/functions/bias.mlir --tile-generate-sdpa="head-dim=64 variant=none+bias" \
// RUN:   --tile-vectorize-apply --tile-fold-score-terms | FileCheck %s --check-prefix=BIAS
// RUN: tiled-attn-opt %repo/kernels/functions/bias.mlir --tile-generate-sdpa="head-dim=64 variant=none+bias" \
// RUN:   --tile-vectorize-apply --tile-fold-score-terms=contract=0 | FileCheck %s --check-prefix=NOFMA
// RUN: tiled-attn-opt %repo/kernels/functions/alibi.mlir --tile-generate-sdpa="head-dim=64 variant=none_sparse+alibi" \
// RUN:   --tile-vectorize-apply --tile-fold-score-terms | FileCheck %s --check-prefix=SPARSE
// Numerically: the folded kernels against the generated ones and float64.
// RUN: tiled-attn-opt %repo/kernels/functions/alibi.mlir --tile-generate-sdpa="head-dim=16 variant=top_left_lse+alibi" -o %t.mlir
// RUN: tiled-attn-opt %t.mlir --tile-vectorize-apply --tile-fold-score-terms=float-positions=1 -o %t.folded.mlir
// RUN: tiled-attn-run %t.mlir --compare-with=%t.folded.mlir --equivalence-tolerance=2e-3 --batch=2 --heads=3 --kv-heads=1 \
// RUN:   --shapes=1x1,100x37,37x100,130x130 --scale=0.4 --capture=slopes=H:-0.5:0 | FileCheck %s --check-prefix=HOST
// HOST: 4 passed, 0 failed
// RUN: tiled-attn-opt %repo/kernels/functions/bias.mlir --tile-generate-sdpa="head-dim=16 variant=top_left+bias" -o %t.bias.mlir
// RUN: tiled-attn-opt %t.bias.mlir --tile-vectorize-apply --tile-fold-score-terms -o %t.bias.folded.mlir
// RUN: tiled-attn-run %t.bias.mlir --compare-with=%t.bias.folded.mlir --equivalence-tolerance=1e-3 --batch=2 --heads=3 --kv-heads=1 \
// RUN:   --shapes=1x1,100x37,37x100,130x130 --scale=0.4 --capture=bias=BxHxSqxSk:-1:1 | FileCheck %s --check-prefix=HOST

// CHECK-LABEL: func.func @sdpa_fwd
// CHECK: %[[INV:.*]] = arith.divf %{{.*}}, %arg4 fastmath<afn> : f32
// CHECK: %[[LOOP:.*]]:3 = scf.for
// CHECK: %[[S:.*]] = tile.mma
// CHECK-NOT: arith.subf
// With float-positions, the keys' positions as floats: an f32 iota, not a
// conversion of i32 ones.
// CHECK-NOT: arith.sitofp
// CHECK: %[[SLOPE:.*]] = tile.read %arg6
// CHECK-NOT: arith.sitofp
// slope * keys / scale as (slope / scale) * keys, the keys' positions
// with that step.
// CHECK: %[[FACTOR:.*]] = arith.mulf %[[SLOPE]], %[[INV]] : f32
// CHECK-NOT: arith.mulf
// CHECK: %[[KEYS:.*]] = tile.iota offset(%{{.*}}) step(%[[FACTOR]]) : tensor<64xf32>
// CHECK: %[[B:.*]] = tile.broadcast %[[KEYS]] along 0
// CHECK: %[[E:.*]] = arith.addf %[[S]], %[[B]] : tensor<64x64xf32>
// CHECK: %[[SEL:.*]] = arith.select %{{.*}}, %[[E]], %{{.*}}
// CHECK: tile.online_softmax %[[SEL]], %{{.*}}, %{{.*}} scale(%arg4)
// CHECK: %[[LSE:.*]] = tile.log_sum_exp %[[LOOP]]#0, %[[LOOP]]#1 scale(%arg4)
// CHECK: %[[FIXED:.*]] = arith.subf %[[LSE]], %{{.*}} : tensor<64xf32>
// CHECK: tile.store %[[FIXED]], %arg5

// ROWS-LABEL: func.func @sdpa_fwd
// ROWS: scf.for
// ROWS: %[[K:.*]] = tile.broadcast %{{.*}} along 0 : tensor<64xf32> -> tensor<64x64xf32>
// ROWS-NOT: arith.subf
// ROWS: math.fma %{{.*}}, %{{.*}}, %[[K]] : tensor<64x64xf32>
// ROWS: tile.online_softmax %{{.*}} scale(%cst)
// ROWS: tile.log_sum_exp {{.*}} scale(%cst)
// ROWS-NEXT: arith.subf

// INTPOS-LABEL: func.func @sdpa_fwd
// INTPOS: scf.for
// INTPOS: %[[KV:.*]] = tile.iota offset(%{{.*}}) : tensor<64xi32>
// INTPOS: arith.sitofp %[[KV]] : tensor<64xi32> to tensor<64xf32>
// INTPOS-NOT: tile.iota {{.*}} : tensor<64xf32>

// SCALE-LABEL: func.func @sdpa_fwd
// SCALE: arith.divf
// SCALE: scf.for
// SCALE: arith.addf
// SCALE: arith.subf %{{.*}}, %{{.*}} : tensor<64x64xf32>
// SCALE: tile.online_softmax %{{.*}} scale(%arg4)
// SCALE: tile.log_sum_exp {{.*}} scale(%arg4)
// SCALE-NOT: arith.subf

// BIAS-LABEL: func.func @sdpa_fwd
// BIAS: scf.for
// BIAS: %[[S:.*]] = tile.mma
// BIAS: %[[B:.*]] = tile.gather
// BIAS: %[[C:.*]] = tensor.splat %arg4 : tensor<64x64xf32>
// BIAS: %[[X:.*]] = math.fma %[[S]], %[[C]], %[[B]] : tensor<64x64xf32>
// BIAS: arith.select %{{.*}}, %[[X]]
// BIAS: tile.online_softmax %{{.*}} scale(%cst)

// NOFMA-LABEL: func.func @sdpa_fwd
// NOFMA: scf.for
// NOFMA: %[[S:.*]] = tile.mma
// NOFMA: %[[X:.*]] = arith.mulf %[[S]], %{{.*}} : tensor<64x64xf32>
// NOFMA: %[[B:.*]] = tile.gather
// NOFMA: arith.addf %[[X]], %[[B]] : tensor<64x64xf32>
// NOFMA-NOT: math.fma %{{.*}} : tensor<64x64xf32>
// NOFMA: tile.online_softmax %{{.*}} scale(%cst)

// SPARSE-LABEL: func.func @sdpa_fwd
// SPARSE-COUNT-2: arith.subf %{{.*}} : tensor<64x64xf32>
