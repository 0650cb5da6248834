// RUN: tiled-attn-opt %repo/kernels/functions/tanh_softcap.mlir --tile-differentiate-score=function=tanh_softcap --canonicalize | FileCheck %s --check-prefix=SOFTCAP
// RUN: tiled-attn-opt %repo/kernels/functions/alibi.mlir --tile-differentiate-score=function=alibi --canonicalize | FileCheck %s --check-prefix=ALIBI
// RUN: tiled-attn-opt %s -split-input-file --tile-differentiate-score=function=mix --canonicalize | FileCheck %s --check-prefix=MIX

// tile-differentiate-score: a score function's gradient from its body
// (forward mode, op by op), %grad * df/dscore.

// Soft-capping, cap * tanh(score / cap): (1 - tanh^2) times the inner
// derivative 1 / cap, times cap.
// SOFTCAP-LABEL: func.func @tanh_softcap_grad(
// SOFTCAP-SAME: %[[S:[^:]*]]: f32, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index,
// SOFTCAP-SAME: %[[CAP:[^:]*]]: f32 {tile.arg = #tile.arg<captured, "cap">}, %[[GRAD:[^:]*]]: f32) -> f32
// SOFTCAP: %[[INV:.*]] = arith.divf %{{.*}}, %[[CAP]] fastmath<afn> : f32
// SOFTCAP: %[[X:.*]] = arith.mulf %[[S]], %[[INV]] : f32
// SOFTCAP: %[[T:.*]] = math.tanh %[[X]] : f32
// SOFTCAP: %[[T2:.*]] = arith.mulf %[[T]], %[[T]] : f32
// SOFTCAP: %[[ONEMINUS:.*]] = arith.subf %{{.*}}, %[[T2]] : f32
// SOFTCAP: %[[INNER:.*]] = arith.mulf %[[ONEMINUS]], %[[INV]] : f32
// SOFTCAP: %[[D:.*]] = arith.mulf %[[CAP]], %[[INNER]] : f32
// SOFTCAP: %[[R:.*]] = arith.mulf %[[GRAD]], %[[D]] : f32
// SOFTCAP: return %[[R]] : f32

// ALiBi adds terms that do not depend on the score: its gradient passes
// through.
// ALIBI-LABEL: func.func @alibi_grad(
// ALIBI-SAME: %{{.*}}: !tile.view<?xf32> {tile.arg = #tile.arg<captured, "slopes">}, %[[GRAD:[^:]*]]: f32) -> f32
// ALIBI-NEXT: return %[[GRAD]] : f32

// exp2, log, divf, maximumf, sqrt: sqrt(max(log(2^s) / c, c)) has the
// derivative [s ln2 / c >= c] (ln2 / c) / (2 sqrt(...)).
// MIX-LABEL: func.func @mix_grad(
// MIX-SAME: %[[S:[^:]*]]: f32, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %[[C:[^:]*]]: f32 {{.*}}, %[[GRAD:[^:]*]]: f32)
// MIX-DAG: %[[TWO:.*]] = arith.constant 2.000000e+00 : f32
// MIX-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// MIX-DAG: %[[LN2:.*]] = arith.constant 0.693147182 : f32
// MIX: %[[E:.*]] = math.exp2 %[[S]] : f32
// MIX: %[[DE:.*]] = arith.mulf %[[E]], %[[LN2]] : f32
// MIX: %[[DL:.*]] = arith.divf %[[DE]], %[[E]] : f32
// MIX: %[[DD:.*]] = arith.divf %[[DL]], %[[C]] : f32
// MIX: %[[TAKEN:.*]] = arith.cmpf oge, %{{.*}}, %[[C]] : f32
// MIX: %[[DM:.*]] = arith.select %[[TAKEN]], %[[DD]], %[[ZERO]] : f32
// MIX: %[[SQ:.*]] = math.sqrt %{{.*}} : f32
// MIX: %[[TWOSQ:.*]] = arith.mulf %[[SQ]], %[[TWO]] : f32
// MIX: %[[DS:.*]] = arith.divf %[[DM]], %[[TWOSQ]] : f32
// MIX: %[[R:.*]] = arith.mulf %[[GRAD]], %[[DS]] : f32
// MIX: return %[[R]]
func.func @mix(%score: f32, %b: index, %h: index, %q_idx: index, %kv_idx: index,
               %c: f32 {tile.arg = #tile.arg<captured, "c">}) -> f32 {
  %e = math.exp2 %score : f32
  %l = math.log %e : f32
  %d = arith.divf %l, %c : f32
  %m = arith.maximumf %d, %c : f32
  %s = math.sqrt %m : f32
  return %s : f32
}

// -----

// (A rule-less op on what does not depend on the score is f's own.)
// MIX-LABEL: func.func @mix_grad(
// MIX: return %{{.*}} : f32
func.func @mix(%score: f32, %b: index, %h: index, %q_idx: index, %kv_idx: index,
               %c: f32 {tile.arg = #tile.arg<captured, "c">}) -> f32 {
  %s = math.sin %c : f32
  %r = arith.addf %score, %s : f32
  return %r : f32
}

