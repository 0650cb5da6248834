// RUN: tiled-attn-opt %s -split-input-file --tilegpu-attach-target="chip=sm_80" \
// RUN:   --tilegpu-assign-layouts="warps=1" --convert-tile-to-tilegpu \
// RUN:   --tilegpu-merge-barriers --tilegpu-resolve-async-waits \
// RUN:   --tilegpu-allocate-memory --convert-tilegpu-to-nvvm | FileCheck %s
// RUN: tiled-attn-opt %s -split-input-file --tilegpu-attach-target="chip=sm_80" \
// RUN:   --tilegpu-assign-layouts="warps=1" --convert-tile-to-tilegpu \
// RUN:   --tilegpu-merge-barriers --tilegpu-resolve-async-waits \
// RUN:   --tilegpu-allocate-memory --convert-tilegpu-to-nvvm="skip-unit-row-scales=1" \
// RUN:   | FileCheck %s --check-prefix=SKIP
// RUN: tiled-attn-opt %s -split-input-file --tilegpu-attach-target="chip=sm_80" \
// RUN:   --tilegpu-assign-layouts="warps=1" --convert-tile-to-tilegpu \
// RUN:   --tilegpu-merge-barriers --tilegpu-resolve-async-waits \
// RUN:   --tilegpu-allocate-memory --convert-tilegpu-to-nvvm="exp2-poly-every=4" \
// RUN:   | FileCheck %s --check-prefix=POLY
// RUN: echo 'module {}' | not tiled-attn-opt --convert-tilegpu-to-nvvm="exp2-poly-every=-1" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=POLY-NEGATIVE
// POLY-NEGATIVE: error: convert-tilegpu-to-nvvm: exp2-poly-every must be 0 (off) or a positive register stride, got -1

// Elementwise arith and math ops apply to each lane's registers: the same op
// on the vector of the lane's elements (8 for a 16x16 accumulator with one
// warp, 2 for its rows). Splat constants become vector constants, splats of
// a scalar vector.broadcast; loops carry the vectors.

// CHECK-LABEL: gpu.func @scores_math(
// CHECK-SAME: %[[X:[^:]*]]: f32 {tilegpu.param = #tilegpu.param<scalar, "arg0">}, %{{[^:]*}}: index {tilegpu.param = #tilegpu.param<scalar, "arg1">}
// CHECK-DAG: %[[HALF:.*]] = arith.constant dense<5.000000e-01> : vector<8xf32>
// CHECK-DAG: %[[NEG_INF:.*]] = arith.constant dense<0xFF800000> : vector<8xf32>
// A splat with several uses is one per use (each may take its own layout).
// CHECK: %[[S2:.*]] = vector.broadcast %[[X]] : f32 to vector<8xf32>
// CHECK: %[[S:.*]] = vector.broadcast %[[X]] : f32 to vector<8xf32>
// CHECK: %[[MASK:.*]] = arith.cmpi sle, %{{.*}}, %{{.*}} : vector<8xindex>
// CHECK-NEXT: %[[SM:.*]] = arith.select %[[MASK]], %[[S]], %[[NEG_INF]] : vector<8xi1>, vector<8xf32>
// CHECK-NEXT: %[[A:.*]] = arith.mulf %[[SM]], %[[HALF]] : vector<8xf32>
// exp2 is one ex2.approx.ftz per register.
// CHECK-COUNT-8: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"(%{{.*}}) : (f32) -> f32
// CHECK-NEXT: %[[B:.*]] = vector.from_elements {{.*}} : vector<8xf32>
// With exp2-poly-every=4, registers 3 and 7 of the 8 take the polynomial
// (FlashAttention-4's emulation on the FMA units): x clamped to [-127,
// 127], j = floor(x), 2^(x - j) by three FMAs, j added to the exponent
// field, results below 2^-126 flushed to zero.
// POLY-LABEL: gpu.func @scores_math(
// POLY-COUNT-3: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"
// POLY-NEXT: vector.extract %{{.*}}[3] : f32 from vector<8xf32>
// POLY-NEXT: %[[LO:.*]] = arith.maximumf %{{.*}}, %{{.*}} : f32
// POLY-NEXT: %[[CL:.*]] = arith.minimumf %[[LO]], %{{.*}} : f32
// POLY-NEXT: %[[J:.*]] = math.floor %[[CL]] : f32
// POLY-NEXT: %[[F:.*]] = arith.subf %[[CL]], %[[J]] : f32
// POLY-NEXT: %[[P1:.*]] = math.fma %{{.*}}, %[[F]], %{{.*}} : f32
// POLY-NEXT: %[[P2:.*]] = math.fma %[[P1]], %[[F]], %{{.*}} : f32
// POLY-NEXT: %[[P3:.*]] = math.fma %[[P2]], %[[F]], %{{.*}} : f32
// POLY-NEXT: %[[JI:.*]] = arith.fptosi %[[J]] : f32 to i32
// POLY-NEXT: %[[EXP:.*]] = arith.shli %[[JI]], %{{.*}} : i32
// POLY-NEXT: %[[PB:.*]] = arith.bitcast %[[P3]] : f32 to i32
// POLY-NEXT: %[[SUM:.*]] = arith.addi %[[PB]], %[[EXP]] : i32
// POLY-NEXT: %[[R:.*]] = arith.bitcast %[[SUM]] : i32 to f32
// POLY-NEXT: %[[TINY:.*]] = arith.cmpf olt, %{{.*}}, %{{.*}} : f32
// POLY-NEXT: arith.select %[[TINY]], %{{.*}}, %[[R]] : f32
// POLY-COUNT-3: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"
// POLY-COUNT-3: math.fma %{{.*}} : f32
// POLY-NOT: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"
// POLY: vector.from_elements {{.*}} : vector<8xf32>
// CHECK-NEXT: %[[C:.*]] = math.fma %[[SM]], %[[HALF]], %[[B]] : vector<8xf32>
// CHECK-NEXT: %[[D:.*]] = arith.negf %[[C]] : vector<8xf32>
// CHECK-NEXT: %[[E:.*]] = math.exp %[[D]] : vector<8xf32>
// CHECK-NEXT: %[[F:.*]] = arith.divf %[[E]], %[[S2]] : vector<8xf32>
// CHECK-NEXT: %[[Z:.*]] = arith.cmpf oeq, %[[F]], %[[HALF]] : vector<8xf32>
// CHECK-NEXT: %[[G:.*]] = arith.select %[[Z]], %[[HALF]], %[[F]] : vector<8xi1>, vector<8xf32>
// CHECK-NEXT: %[[H:.*]] = arith.truncf %[[G]] : vector<8xf32> to vector<8xf16>
// CHECK: vector.shuffle %[[H]], %[[H]] [0, 1] : vector<8xf16>, vector<8xf16>
// CHECK-NOT: tensor
// CHECK: gpu.return
func.func @scores_math(%x: f32, %i: index, %j: index,
                       %o: !tile.view<?x?x?x16xf16>) {
  %c0 = arith.constant 0 : index
  %half = arith.constant dense<5.000000e-01> : tensor<16x16xf32>
  %ninf = arith.constant dense<0xFF800000> : tensor<16x16xf32>
  %s = tensor.splat %x : tensor<16x16xf32>
  %cm = tile.causal_mask %i, %j : tensor<16x16xi1>
  %sm = arith.select %cm, %s, %ninf : tensor<16x16xi1>, tensor<16x16xf32>
  %a = arith.mulf %sm, %half : tensor<16x16xf32>
  %b = math.exp2 %a : tensor<16x16xf32>
  %c = math.fma %sm, %half, %b : tensor<16x16xf32>
  %d = arith.negf %c : tensor<16x16xf32>
  %e = math.exp %d : tensor<16x16xf32>
  %f = arith.divf %e, %s : tensor<16x16xf32>
  %z = arith.cmpf oeq, %f, %half : tensor<16x16xf32>
  %g = arith.select %z, %half, %f : tensor<16x16xi1>, tensor<16x16xf32>
  %h = arith.truncf %g : tensor<16x16xf32> to tensor<16x16xf16>
  tile.store %h, %o[%c0, %c0, %c0, %c0]
      : tensor<16x16xf16>, !tile.view<?x?x?x16xf16>
  return
}

// -----

// Row statistics in a loop: the running max is a vector<2xf32> (rows g and
// g + 8) carried by scf.for.

// CHECK-LABEL: gpu.func @row_math_in_loop(
// CHECK-DAG: %[[NEG_INF:.*]] = arith.constant dense<0xFF800000> : vector<2xf32>
// CHECK-DAG: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : vector<2xf32>
// CHECK: %[[R:.*]] = scf.for %{{.*}} iter_args(%[[M:.*]] = %[[NEG_INF]]) -> (vector<2xf32>) {
// CHECK: %[[RMAX:.*]] = vector.from_elements %{{.*}}, %{{.*}} : vector<2xf32>
// CHECK-NEXT: %[[M1:.*]] = arith.maximumf %[[M]], %[[RMAX]] : vector<2xf32>
// CHECK-NEXT: %[[NONE:.*]] = arith.cmpf oeq, %[[M1]], %[[NEG_INF]] : vector<2xf32>
// CHECK-NEXT: %[[REF:.*]] = arith.select %[[NONE]], %[[ZERO]], %[[M1]] : vector<2xi1>, vector<2xf32>
// CHECK-NEXT: %[[R0:.*]] = vector.extract %[[REF]][0] : f32 from vector<2xf32>
// CHECK-NEXT: %[[E0:.*]] = llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"(%[[R0]]) : (f32) -> f32
// CHECK-NEXT: %[[R1:.*]] = vector.extract %[[REF]][1] : f32 from vector<2xf32>
// CHECK-NEXT: %[[E1:.*]] = llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"(%[[R1]]) : (f32) -> f32
// CHECK-NEXT: %[[A:.*]] = vector.from_elements %[[E0]], %[[E1]] : vector<2xf32>
// CHECK-NEXT: scf.yield %[[A]] : vector<2xf32>
// CHECK: vector.shuffle %[[R]], %[[R]] [0, 0, 1, 1, 0, 0, 1, 1] : vector<2xf32>, vector<2xf32>
func.func @row_math_in_loop(%x: f32, %n: index,
                            %o: !tile.view<?x?x?x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ninf = arith.constant dense<0xFF800000> : tensor<16xf32>
  %zero = arith.constant dense<0.0> : tensor<16xf32>
  %sneg = arith.constant dense<0xFF800000> : tensor<16x16xf32>
  %r = scf.for %j = %c0 to %n step %c1 iter_args(%m = %ninf)
      -> (tensor<16xf32>) {
    %s = tensor.splat %x : tensor<16x16xf32>
    %cm = tile.causal_mask %c0, %j : tensor<16x16xi1>
    %sm = arith.select %cm, %s, %sneg : tensor<16x16xi1>, tensor<16x16xf32>
    %rmax = tile.reduce max %sm along 1 : tensor<16x16xf32> -> tensor<16xf32>
    %m1 = arith.maximumf %m, %rmax : tensor<16xf32>
    %none = arith.cmpf oeq, %m1, %ninf : tensor<16xf32>
    %ref = arith.select %none, %zero, %m1 : tensor<16xi1>, tensor<16xf32>
    %a = math.exp2 %ref : tensor<16xf32>
    scf.yield %a : tensor<16xf32>
  }
  %b = tile.broadcast %r along 1 : tensor<16xf32> -> tensor<16x16xf32>
  tile.store %b, %o[%c0, %c0, %c0, %c0]
      : tensor<16x16xf32>, !tile.view<?x?x?x16xf32>
  return
}

// -----

// acc * broadcast(alpha) in a loop: by default a plain multiply; with
// skip-unit-row-scales a warp whose rows all have alpha == 1 skips it (the
// lane's rows compared with 1, OR-ed, then a warp vote). Outside a loop the
// multiply stays plain.

// CHECK-LABEL: gpu.func @rescale_in_loop
// CHECK-NOT:     nvvm.vote.sync
// CHECK:         arith.mulf %{{.*}} : vector<8xf32>

// SKIP-LABEL: gpu.func @rescale_in_loop
// SKIP:         %[[ONE:.*]] = arith.constant dense<1.000000e+00> : vector<2xf32>
// SKIP:         scf.for
// SKIP:           %[[NE:.*]] = arith.cmpf une, %[[ALPHA:.*]], %[[ONE]] : vector<2xf32>
// SKIP-NEXT:      %[[ANY:.*]] = vector.reduction <or>, %[[NE]] : vector<2xi1> into i1
// SKIP-NEXT:      %[[VOTE:.*]] = nvvm.vote.sync  any %{{.*}}, %[[ANY]] -> i1
// SKIP-NEXT:      %[[R:.*]] = scf.if %[[VOTE]] -> (vector<8xf32>) {
// SKIP-NEXT:        %[[M:.*]] = arith.mulf %[[ACC:.*]], %{{.*}} : vector<8xf32>
// SKIP-NEXT:        scf.yield %[[M]] : vector<8xf32>
// SKIP-NEXT:      } else {
// SKIP-NEXT:        scf.yield %[[ACC]] : vector<8xf32>
// SKIP-NEXT:      }
// SKIP:         scf.yield
// SKIP-NOT:     nvvm.vote.sync
// SKIP:         arith.mulf %{{.*}} : vector<8xf32>
// SKIP:         gpu.return
func.func @rescale_in_loop(%o: !tile.view<?x?x?x16xf16>, %alpha0: f32, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant dense<1.0> : tensor<16x16xf32>
  %a = tensor.splat %alpha0 : tensor<16xf32>
  %r = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %one) -> (tensor<16x16xf32>) {
    %b = tile.broadcast %a along 1 : tensor<16xf32> -> tensor<16x16xf32>
    %scaled = arith.mulf %acc, %b : tensor<16x16xf32>
    scf.yield %scaled : tensor<16x16xf32>
  }
  %b2 = tile.broadcast %a along 1 : tensor<16xf32> -> tensor<16x16xf32>
  %out = arith.mulf %r, %b2 : tensor<16x16xf32>
  %h = arith.truncf %out : tensor<16x16xf32> to tensor<16x16xf16>
  tile.store %h, %o[%c0, %c0, %c0, %c0] : tensor<16x16xf16>, !tile.view<?x?x?x16xf16>
  return
}

// -----

// tanh (a softcap's), per register: 1 - 2 / (2^(2 log2(e) x) + 1) on
// ex2.approx and rcp.approx, then an fma: eight registers, eight of each.
// CHECK-LABEL: gpu.func @tanh(
// CHECK-DAG: %[[TWO_LOG2E:.*]] = arith.constant 2.885390{{[0-9]*}}e+00 : f32
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG: %[[MINUS_TWO:.*]] = arith.constant -2.000000e+00 : f32
// CHECK: %[[Y:.*]] = arith.mulf %{{.*}}, %[[TWO_LOG2E]] : f32
// CHECK-NEXT: %[[E:.*]] = llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"(%[[Y]])
// CHECK-NEXT: %[[D:.*]] = arith.addf %[[E]], %[[ONE]] : f32
// CHECK-NEXT: %[[R:.*]] = llvm.call_intrinsic "llvm.nvvm.rcp.approx.ftz.f"(%[[D]])
// CHECK-NEXT: math.fma %[[R]], %[[MINUS_TWO]], %[[ONE]] : f32
// CHECK-COUNT-7: llvm.call_intrinsic "llvm.nvvm.rcp.approx.ftz.f"
// CHECK-NOT: math.tanh
// CHECK: gpu.return
func.func @tanh(%x: f32, %o: !tile.view<?x?x?x16xf32>) {
  %c0 = arith.constant 0 : index
  %s = tensor.splat %x : tensor<16x16xf32>
  %t = math.tanh %s : tensor<16x16xf32>
  tile.store %t, %o[%c0, %c0, %c0, %c0]
      : tensor<16x16xf32>, !tile.view<?x?x?x16xf32>
  return
}
