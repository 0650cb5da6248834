// RUN: tiled-attn-opt %s | tiled-attn-opt | FileCheck %s
// RUN: tiled-attn-opt %s --mlir-print-op-generic | tiled-attn-opt | FileCheck %s

// Round trip of every op, type and attribute of the tile dialect, in the
// custom form and through the generic form.

// CHECK-LABEL: func.func @block_id
func.func @block_id() -> (index, index, index) {
  // CHECK: %[[X:.*]] = tile.block_id x
  // CHECK: %[[Y:.*]] = tile.block_id y
  // CHECK: %[[Z:.*]] = tile.block_id z
  // CHECK: return %[[X]], %[[Y]], %[[Z]]
  %x = tile.block_id x
  %y = tile.block_id y
  %z = tile.block_id z
  return %x, %y, %z : index, index, index
}

// CHECK-LABEL: func.func @grid_dependencies
func.func @grid_dependencies() {
  // CHECK-NEXT: tile.launch_dependent_grids
  // CHECK-NEXT: tile.wait_prior_grids
  tile.launch_dependent_grids
  tile.wait_prior_grids
  return
}

// CHECK-LABEL: func.func @view_types
// CHECK-SAME: %{{.*}}: !tile.view<?x?x?x64xf16>
// CHECK-SAME: %{{.*}}: !tile.view<2x4x?x128xbf16>
// CHECK-SAME: %{{.*}}: !tile.view<16xf32>
// CHECK-SAME: %{{.*}}: !tile.view<0x?xf32>
func.func @view_types(%a: !tile.view<?x?x?x64xf16>,
                      %b: !tile.view<2x4x?x128xbf16>,
                      %c: !tile.view<16xf32>,
                      %d: !tile.view<0x?xf32>) {
  return
}

// CHECK-LABEL: func.func @dim
// CHECK-SAME: (%[[V:.*]]: !tile.view<2x?x?x64xf16>)
func.func @dim(%v: !tile.view<2x?x?x64xf16>) -> (index, index) {
  // CHECK: %[[D0:.*]] = tile.dim %[[V]][0] : <2x?x?x64xf16>
  // CHECK: %[[D2:.*]] = tile.dim %[[V]][2] : <2x?x?x64xf16>
  // CHECK: return %[[D0]], %[[D2]]
  %d0 = tile.dim %v[0] : !tile.view<2x?x?x64xf16>
  %d2 = tile.dim %v[2] : !tile.view<2x?x?x64xf16>
  return %d0, %d2 : index, index
}

// CHECK-LABEL: func.func @slice_read
// CHECK-SAME: (%[[V:.*]]: !tile.view<1x?x?x64xf16>, %[[CU:.*]]: !tile.view<?xi32>, %[[I:.*]]: index)
func.func @slice_read(%v: !tile.view<1x?x?x64xf16>, %cu: !tile.view<?xi32>, %i: index)
    -> (!tile.view<1x?x?x64xf16>, i32) {
  // CHECK: %[[S:.*]] = tile.slice %[[V]][2] offset(%[[I]]) size(%[[I]]) : <1x?x?x64xf16>
  // CHECK: %[[R:.*]] = tile.read %[[CU]][%[[I]]] : <?xi32> -> i32
  // CHECK: return %[[S]], %[[R]]
  %s = tile.slice %v[2] offset(%i) size(%i) : !tile.view<1x?x?x64xf16>
  %r = tile.read %cu[%i] : !tile.view<?xi32> -> i32
  return %s, %r : !tile.view<1x?x?x64xf16>, i32
}

// A view of bytes (a boolean mask tensor) reads as i8.
// CHECK-LABEL: func.func @read_i8
// CHECK: tile.read %{{.*}}[%{{.*}}, %{{.*}}] : <?x?xi8> -> i8
func.func @read_i8(%m: !tile.view<?x?xi8>, %i: index) -> i8 {
  %r = tile.read %m[%i, %i] : !tile.view<?x?xi8> -> i8
  return %r : i8
}

// One element written (a block mask kernel's block kind).
// CHECK-LABEL: func.func @write
// CHECK: tile.write %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] : i8, <?x?xi8>
func.func @write(%m: !tile.view<?x?xi8>, %x: i8, %i: index) {
  tile.write %x, %m[%i, %i] : i8, !tile.view<?x?xi8>
  return
}

// CHECK-LABEL: func.func @load
// CHECK-SAME: (%[[K:.*]]: !tile.view<?x?x?x128xf16>, %[[I:.*]]: index, %[[J:.*]]: index)
func.func @load(%k: !tile.view<?x?x?x128xf16>, %i: index, %j: index)
    -> (tensor<64x128xf16>, tensor<128x64xf16>, tensor<128xf16>,
        tensor<64x128xf16>) {
  // CHECK: %[[A:.*]] = tile.load %[[K]][%[[I]], %[[I]], %[[J]], %[[I]]] pad(0.000000e+00) : <?x?x?x128xf16> -> tensor<64x128xf16>
  %a = tile.load %k[%i, %i, %j, %i] pad(0.0)
      : !tile.view<?x?x?x128xf16> -> tensor<64x128xf16>
  // CHECK: %[[KT:.*]] = tile.load %[[K]][%[[I]], %[[I]], %[[J]], %[[I]]] pad(0.000000e+00) transpose : <?x?x?x128xf16> -> tensor<128x64xf16>
  %kt = tile.load %k[%i, %i, %j, %i] pad(0.0) transpose
      : !tile.view<?x?x?x128xf16> -> tensor<128x64xf16>
  // CHECK: %[[ROW:.*]] = tile.load %[[K]][%[[I]], %[[I]], %[[J]], %[[I]]] pad(-1.500000e+00) : <?x?x?x128xf16> -> tensor<128xf16>
  %row = tile.load %k[%i, %i, %j, %i] pad(-1.5)
      : !tile.view<?x?x?x128xf16> -> tensor<128xf16>
  // -inf is written in hexadecimal.
  // CHECK: %[[NEG:.*]] = tile.load %[[K]][%[[I]], %[[I]], %[[J]], %[[I]]] pad(0xFFF0000000000000) : <?x?x?x128xf16> -> tensor<64x128xf16>
  %neg = tile.load %k[%i, %i, %j, %i] pad(0xFFF0000000000000)
      : !tile.view<?x?x?x128xf16> -> tensor<64x128xf16>
  // CHECK: return %[[A]], %[[KT]], %[[ROW]], %[[NEG]]
  return %a, %kt, %row, %neg
      : tensor<64x128xf16>, tensor<128x64xf16>, tensor<128xf16>,
        tensor<64x128xf16>
}

// A key block of 64 from four pages of 16: group g at page %pg.
// CHECK-LABEL: func.func @load_gather
// CHECK-SAME: (%[[K:.*]]: !tile.view<?x?x16x128xf16>, %[[I:.*]]: index, %[[P0:.*]]: index, %[[P1:.*]]: index)
func.func @load_gather(%k: !tile.view<?x?x16x128xf16>, %i: index, %p0: index,
                       %p1: index) -> tensor<128x64xf16> {
  // CHECK: tile.load %[[K]][%[[I]], %[[I]], %[[I]], %[[I]]] gather(%[[P0]], %[[P1]], %[[P0]], %[[P1]]) pad(0.000000e+00) transpose : <?x?x16x128xf16> -> tensor<128x64xf16>
  %kt = tile.load %k[%i, %i, %i, %i] gather(%p0, %p1, %p0, %p1) pad(0.0)
      transpose : !tile.view<?x?x16x128xf16> -> tensor<128x64xf16>
  return %kt : tensor<128x64xf16>
}

// CHECK-LABEL: func.func @store
// CHECK-SAME: (%[[T:.*]]: tensor<64x64xbf16>, %[[O:.*]]: !tile.view<?x?x?x64xbf16>, %[[I:.*]]: index, %[[M:.*]]: tensor<64x64xi1>)
func.func @store(%t: tensor<64x64xbf16>, %o: !tile.view<?x?x?x64xbf16>,
                 %i: index, %mask: tensor<64x64xi1>) {
  // CHECK: tile.store %[[T]], %[[O]][%[[I]], %[[I]], %[[I]], %[[I]]] : tensor<64x64xbf16>, <?x?x?x64xbf16>
  tile.store %t, %o[%i, %i, %i, %i]
      : tensor<64x64xbf16>, !tile.view<?x?x?x64xbf16>
  // CHECK: tile.store %[[T]], %[[O]][%[[I]], %[[I]], %[[I]], %[[I]]] mask(%[[M]] : tensor<64x64xi1>) : tensor<64x64xbf16>, <?x?x?x64xbf16>
  tile.store %t, %o[%i, %i, %i, %i] mask(%mask : tensor<64x64xi1>)
      : tensor<64x64xbf16>, !tile.view<?x?x?x64xbf16>
  return
}

// CHECK-LABEL: func.func @store_add
// CHECK-SAME: (%[[T:.*]]: tensor<64x64xf32>, %[[A:.*]]: !tile.view<?x?x?x64xf32>, %[[I:.*]]: index)
func.func @store_add(%t: tensor<64x64xf32>, %acc: !tile.view<?x?x?x64xf32>,
                     %i: index) {
  // CHECK: tile.store %[[T]], %[[A]][%[[I]], %[[I]], %[[I]], %[[I]]] add : tensor<64x64xf32>, <?x?x?x64xf32>
  tile.store %t, %acc[%i, %i, %i, %i] add
      : tensor<64x64xf32>, !tile.view<?x?x?x64xf32>
  return
}

// CHECK-LABEL: func.func @transpose
func.func @transpose(%t: tensor<64x32xbf16>) -> tensor<32x64xbf16> {
  // CHECK: tile.transpose %{{.*}} : tensor<64x32xbf16> -> tensor<32x64xbf16>
  %r = tile.transpose %t : tensor<64x32xbf16> -> tensor<32x64xbf16>
  return %r : tensor<32x64xbf16>
}

// CHECK-LABEL: func.func @mma
// CHECK-SAME: (%[[A:.*]]: tensor<128x64xf16>, %[[B:.*]]: tensor<64x32xf16>, %[[C:.*]]: tensor<128x32xf32>, %[[X:.*]]: tensor<16x32xbf16>, %[[Y:.*]]: tensor<32x16xbf16>, %[[Z:.*]]: tensor<16x16xf32>)
func.func @mma(%a: tensor<128x64xf16>, %b: tensor<64x32xf16>,
               %c: tensor<128x32xf32>, %x: tensor<16x32xbf16>,
               %y: tensor<32x16xbf16>, %z: tensor<16x16xf32>)
    -> (tensor<128x32xf32>, tensor<16x16xf32>) {
  // CHECK: %[[R0:.*]] = tile.mma %[[A]], %[[B]], %[[C]] : tensor<128x64xf16>, tensor<64x32xf16> -> tensor<128x32xf32>
  %0 = tile.mma %a, %b, %c
      : tensor<128x64xf16>, tensor<64x32xf16> -> tensor<128x32xf32>
  // CHECK: %[[R1:.*]] = tile.mma %[[X]], %[[Y]], %[[Z]] : tensor<16x32xbf16>, tensor<32x16xbf16> -> tensor<16x16xf32>
  %1 = tile.mma %x, %y, %z
      : tensor<16x32xbf16>, tensor<32x16xbf16> -> tensor<16x16xf32>
  // CHECK: return %[[R0]], %[[R1]]
  return %0, %1 : tensor<128x32xf32>, tensor<16x16xf32>
}

// CHECK-LABEL: func.func @reduce_broadcast
// CHECK-SAME: (%[[S:.*]]: tensor<128x64xf32>, %[[H:.*]]: tensor<16x32xf16>)
func.func @reduce_broadcast(%s: tensor<128x64xf32>, %h: tensor<16x32xf16>)
    -> (tensor<128x64xf32>, tensor<32xf16>) {
  // CHECK: %[[MAX:.*]] = tile.reduce max %[[S]] along 1 : tensor<128x64xf32> -> tensor<128xf32>
  %max = tile.reduce max %s along 1 : tensor<128x64xf32> -> tensor<128xf32>
  // CHECK: %[[SUM:.*]] = tile.reduce sum %[[H]] along 0 : tensor<16x32xf16> -> tensor<32xf16>
  %sum = tile.reduce sum %h along 0 : tensor<16x32xf16> -> tensor<32xf16>
  // CHECK: %[[B:.*]] = tile.broadcast %[[MAX]] along 1 : tensor<128xf32> -> tensor<128x64xf32>
  %b = tile.broadcast %max along 1 : tensor<128xf32> -> tensor<128x64xf32>
  // CHECK: return %[[B]], %[[SUM]]
  return %b, %sum : tensor<128x64xf32>, tensor<32xf16>
}

// CHECK-LABEL: func.func @iota
func.func @iota() -> (tensor<64xi32>, tensor<16xi64>, tensor<32xf32>) {
  // CHECK: %[[A:.*]] = tile.iota : tensor<64xi32>
  // CHECK: %[[B:.*]] = tile.iota : tensor<16xi64>
  // CHECK: %[[C:.*]] = tile.iota : tensor<32xf32>
  // CHECK: return %[[A]], %[[B]], %[[C]]
  %a = tile.iota : tensor<64xi32>
  %b = tile.iota : tensor<16xi64>
  %c = tile.iota : tensor<32xf32>
  return %a, %b, %c : tensor<64xi32>, tensor<16xi64>, tensor<32xf32>
}

// Positions over a score block: dim 0 (the default, not printed) is each
// element's row plus the offset, dim 1 its column plus the offset.
// CHECK-LABEL: func.func @positions
// CHECK-SAME: (%[[Q0:.*]]: index, %[[K0:.*]]: index)
func.func @positions(%q0: index, %k0: index)
    -> (tensor<64x32xi32>, tensor<64x32xi32>, tensor<32xi64>) {
  // CHECK: tile.iota offset(%[[Q0]]) : tensor<64x32xi32>
  // CHECK: tile.iota dim 1 offset(%[[K0]]) : tensor<64x32xi32>
  // CHECK: tile.iota offset(%[[K0]]) : tensor<32xi64>
  %q = tile.iota dim 0 offset(%q0) : tensor<64x32xi32>
  %k = tile.iota dim 1 offset(%k0) : tensor<64x32xi32>
  %keys = tile.iota offset(%k0) : tensor<32xi64>
  return %q, %k, %keys : tensor<64x32xi32>, tensor<64x32xi32>, tensor<32xi64>
}

// f32 positions times a step (ALiBi's slope * kv_idx).
// CHECK-LABEL: func.func @scaled_positions
// CHECK-SAME: (%[[K0:.*]]: index, %[[S:.*]]: f32)
func.func @scaled_positions(%k0: index, %slope: f32) -> tensor<32xf32> {
  // CHECK: tile.iota offset(%[[K0]]) step(%[[S]]) : tensor<32xf32>
  %keys = tile.iota offset(%k0) step(%slope) : tensor<32xf32>
  return %keys : tensor<32xf32>
}

// CHECK-LABEL: func.func @masks
// CHECK-SAME: (%[[R:.*]]: index, %[[C:.*]]: index, %[[N:.*]]: index)
func.func @masks(%r: index, %c: index, %n: index)
    -> (tensor<128x64xi1>, tensor<64xi1>, tensor<128x64xi1>) {
  // CHECK: %[[B2:.*]] = tile.bounds_mask offsets(%[[R]], %[[C]]) limits(%[[N]], %[[N]]) : tensor<128x64xi1>
  %b2 = tile.bounds_mask offsets(%r, %c) limits(%n, %n) : tensor<128x64xi1>
  // CHECK: %[[B1:.*]] = tile.bounds_mask offsets(%[[C]]) limits(%[[N]]) : tensor<64xi1>
  %b1 = tile.bounds_mask offsets(%c) limits(%n) : tensor<64xi1>
  // CHECK: %[[CM:.*]] = tile.causal_mask %[[R]], %[[C]] : tensor<128x64xi1>
  %cm = tile.causal_mask %r, %c : tensor<128x64xi1>
  // CHECK: return %[[B2]], %[[B1]], %[[CM]]
  return %b2, %b1, %cm : tensor<128x64xi1>, tensor<64xi1>, tensor<128x64xi1>
}

// CHECK-LABEL: func.func @window_mask
// CHECK-SAME: (%[[R:.*]]: index, %[[C:.*]]: index, %[[LO:.*]]: index, %[[HI:.*]]: index)
func.func @window_mask(%r: index, %c: index, %lo: index, %hi: index) -> tensor<128x64xi1> {
  // CHECK: tile.window_mask %[[R]], %[[C]] diagonals(%[[LO]], %[[HI]]) : tensor<128x64xi1>
  %w = tile.window_mask %r, %c diagonals(%lo, %hi) : tensor<128x64xi1>
  return %w : tensor<128x64xi1>
}


// CHECK-LABEL: func.func @online_softmax
// CHECK-SAME: (%[[S:.*]]: tensor<128x64xf32>, %[[M:.*]]: tensor<128xf32>, %[[L:.*]]: tensor<128xf32>, %[[SC:.*]]: f32)
func.func @online_softmax(%s: tensor<128x64xf32>, %m: tensor<128xf32>,
                          %l: tensor<128xf32>, %scale: f32)
    -> (tensor<128xf32>, tensor<128xf32>, tensor<128x64xf32>,
        tensor<128xf32>) {
  // CHECK: %[[NM:.*]], %[[NS:.*]], %[[P:.*]], %[[AL:.*]] = tile.online_softmax %[[S]], %[[M]], %[[L]] scale(%[[SC]]) : tensor<128x64xf32>, tensor<128xf32>
  %m1, %l1, %p, %alpha = tile.online_softmax %s, %m, %l scale(%scale)
      : tensor<128x64xf32>, tensor<128xf32>
  // CHECK: return %[[NM]], %[[NS]], %[[P]], %[[AL]] : tensor<128xf32>, tensor<128xf32>, tensor<128x64xf32>, tensor<128xf32>
  return %m1, %l1, %p, %alpha
      : tensor<128xf32>, tensor<128xf32>, tensor<128x64xf32>, tensor<128xf32>
}

// CHECK-LABEL: func.func @log_sum_exp
// CHECK-SAME: (%[[M:.*]]: tensor<128xf32>, %[[L:.*]]: tensor<128xf32>, %[[SC:.*]]: f32)
func.func @log_sum_exp(%m: tensor<128xf32>, %l: tensor<128xf32>, %scale: f32)
    -> (tensor<128xf32>, tensor<128xf32>) {
  // CHECK: tile.log_sum_exp %[[M]], %[[L]] scale(%[[SC]]) : tensor<128xf32>
  %a = tile.log_sum_exp %m, %l scale(%scale) : tensor<128xf32>
  // CHECK: tile.log_sum_exp %[[M]], %[[L]] scale(%[[SC]]) exp2 : tensor<128xf32>
  %b = tile.log_sum_exp %m, %l scale(%scale) exp2 : tensor<128xf32>
  return %a, %b : tensor<128xf32>, tensor<128xf32>
}

// An `lse` kernel writes the rows' log-sum-exps through a rank-3 f32 view.

// CHECK-LABEL: func.func @sdpa_lse_attr
// CHECK-SAME: features = [lse]
func.func @sdpa_lse_attr(%q: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<q>},
                         %k: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<k>},
                         %v: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<v>},
                         %o: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<o>}, %scale: f32 {tile.arg = #tile.arg<scale>},
                         %lse: !tile.view<?x?x?xf32> {tile.arg = #tile.arg<lse>})
    attributes {tile.sdpa = #tile.sdpa<head_dim = 64, element_type = f16, causal = none, block_m = 64, block_n = 64, features = [lse]>} {
  return
}

// CHECK-LABEL: func.func @sdpa_attr
// CHECK-SAME: attributes {tile.sdpa = #tile.sdpa<head_dim = 128, element_type = bf16, causal = bottom_right, block_m = 128, block_n = 64>}
func.func @sdpa_attr(%q: !tile.view<?x?x?x128xbf16> {tile.arg = #tile.arg<q>},
                     %k: !tile.view<?x?x?x128xbf16> {tile.arg = #tile.arg<k>},
                     %v: !tile.view<?x?x?x128xbf16> {tile.arg = #tile.arg<v>},
                     %o: !tile.view<?x?x?x128xbf16> {tile.arg = #tile.arg<o>}, %scale: f32 {tile.arg = #tile.arg<scale>})
    attributes {tile.sdpa = #tile.sdpa<head_dim = 128, element_type = bf16,
                causal = bottom_right, block_m = 128, block_n = 64>} {
  return
}

// DeepSeek's MLA: V and O have a head dim of their own (head_dim_v).

// CHECK-LABEL: func.func @sdpa_attr_head_dim_v
// CHECK-SAME: attributes {tile.sdpa = #tile.sdpa<head_dim = 192, head_dim_v = 128, element_type = bf16, causal = none, block_m = 64, block_n = 64>}
func.func @sdpa_attr_head_dim_v(%q: !tile.view<?x?x?x192xbf16> {tile.arg = #tile.arg<q>},
                                %k: !tile.view<?x?x?x192xbf16> {tile.arg = #tile.arg<k>},
                                %v: !tile.view<?x?x?x128xbf16> {tile.arg = #tile.arg<v>},
                                %o: !tile.view<?x?x?x128xbf16> {tile.arg = #tile.arg<o>}, %scale: f32 {tile.arg = #tile.arg<scale>})
    attributes {tile.sdpa = #tile.sdpa<head_dim = 192, head_dim_v = 128,
                element_type = bf16, causal = none, block_m = 64, block_n = 64>} {
  return
}

// A declaration carries the attribute too, with every causal mode.

// CHECK-LABEL: func.func private @sdpa_decl_none
// CHECK-SAME: attributes {tile.sdpa = #tile.sdpa<head_dim = 16, element_type = f16, causal = none, block_m = 16, block_n = 256>}
func.func private @sdpa_decl_none(!tile.view<1x2x?x16xf16> {tile.arg = #tile.arg<q>},
    !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<k>}, !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<v>},
    !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<o>}, f32 {tile.arg = #tile.arg<scale>})
    attributes {tile.sdpa = #tile.sdpa<head_dim = 16, element_type = f16,
                causal = none, block_m = 16, block_n = 256>}

// CHECK-LABEL: func.func @gather
// CHECK: tile.gather %{{.*}}[%{{.*}}, %{{.*}}] pad(-1.000000e+00) : <?x?xi32>, index, tensor<64xi32> -> tensor<64xi32>
// CHECK: tile.gather %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] pad(0.000000e+00) : <?x?x?x?xf32>, index, index, tensor<16x32xi32>, tensor<16x32xi32> -> tensor<16x32xf32>
// CHECK: tile.gather %{{.*}}[%{{.*}}, %{{.*}}] pad(0.000000e+00) in_bounds : <?x?xi32>, index, tensor<64xi32> -> tensor<64xi32>
func.func @gather(%doc: !tile.view<?x?xi32>, %bias: !tile.view<?x?x?x?xf32>,
                  %b: index, %kv: tensor<64xi32>, %qs: tensor<16x32xi32>,
                  %ks: tensor<16x32xi32>) -> (tensor<64xi32>, tensor<16x32xf32>, tensor<64xi32>) {
  %d = tile.gather %doc[%b, %kv] pad(-1.0) : !tile.view<?x?xi32>, index, tensor<64xi32> -> tensor<64xi32>
  %x = tile.gather %bias[%b, %b, %qs, %ks] pad(0.0)
      : !tile.view<?x?x?x?xf32>, index, index, tensor<16x32xi32>, tensor<16x32xi32> -> tensor<16x32xf32>
  %e = tile.gather %doc[%b, %kv] pad(0.0) in_bounds : !tile.view<?x?xi32>, index, tensor<64xi32> -> tensor<64xi32>
  return %d, %x, %e : tensor<64xi32>, tensor<16x32xf32>, tensor<64xi32>
}

func.func @softcap_fn(%s: f32, %b: index, %h: index, %q: index, %kv: index, %cap: f32) -> f32 {
  %x = arith.divf %s, %cap : f32
  %t = math.tanh %x : f32
  %r = arith.mulf %t, %cap : f32
  return %r : f32
}

func.func @causal_fn(%b: index, %h: index, %q: index, %kv: index) -> i1 {
  %r = arith.cmpi ule, %kv, %q : index
  return %r : i1
}

// CHECK-LABEL: func.func @apply
// CHECK: tile.apply @softcap_fn score(%{{.*}} : tensor<64x32xf32>) at(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) captures(%{{.*}} : f32) : tensor<64x32xf32>
// CHECK: tile.apply @causal_fn at(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : tensor<64x32xi1>
func.func @apply(%s: tensor<64x32xf32>, %i: index, %cap: f32) -> (tensor<64x32xf32>, tensor<64x32xi1>) {
  %r = tile.apply @softcap_fn score(%s : tensor<64x32xf32>) at(%i, %i, %i, %i)
      captures(%cap : f32) : tensor<64x32xf32>
  %m = tile.apply @causal_fn at(%i, %i, %i, %i) : tensor<64x32xi1>
  return %r, %m : tensor<64x32xf32>, tensor<64x32xi1>
}

// The roles, not the positions, say what each argument is: here the
// scale first, and two captured inputs (a score function's per-head slopes
// and a mask function's per-token document ids) between the tensors.
// CHECK-LABEL: func.func private @sdpa_decl_roles
// CHECK-SAME: (f32 {tile.arg = #tile.arg<scale>}, !tile.view<?xf32> {tile.arg = #tile.arg<captured, "slopes">}, !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<q>}
// CHECK-SAME: !tile.view<?x?xi32> {tile.arg = #tile.arg<captured, "doc_ids">}, i32 {tile.arg = #tile.arg<captured, "prefix">}, !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<v>}, !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<o>})
func.func private @sdpa_decl_roles(f32 {tile.arg = #tile.arg<scale>},
    !tile.view<?xf32> {tile.arg = #tile.arg<captured, "slopes">},
    !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<q>},
    !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<k>},
    !tile.view<?x?xi32> {tile.arg = #tile.arg<captured, "doc_ids">},
    i32 {tile.arg = #tile.arg<captured, "prefix">},
    !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<v>},
    !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<o>})
    attributes {tile.sdpa = #tile.sdpa<head_dim = 16, element_type = f16,
                causal = none, block_m = 16, block_n = 16>}

// CHECK-LABEL: func.func private @sdpa_decl_top_left
// CHECK-SAME: attributes {tile.sdpa = #tile.sdpa<head_dim = 256, element_type = f16, causal = top_left, block_m = 256, block_n = 16>}
func.func private @sdpa_decl_top_left(!tile.view<?x?x?x256xf16> {tile.arg = #tile.arg<q>},
    !tile.view<?x?x?x256xf16> {tile.arg = #tile.arg<k>}, !tile.view<?x?x?x256xf16> {tile.arg = #tile.arg<v>},
    !tile.view<?x?x?x256xf16> {tile.arg = #tile.arg<o>}, f32 {tile.arg = #tile.arg<scale>})
    attributes {tile.sdpa = #tile.sdpa<head_dim = 256, element_type = f16,
                causal = top_left, block_m = 256, block_n = 16>}
