// RUN: tiled-attn-opt %s -split-input-file --tile-early-mmas | FileCheck %s

// The backward's step: dPᵀ = V dOᵀ needs no product, so it moves with the
// transpose it reads to just after Sᵀ, ahead of P and of dV's product; dV
// (from P) and dK (from dS) stay where they are, as do the softmax's ops.

// CHECK-LABEL: func.func @backward_step
// CHECK:         scf.for
// CHECK:           %[[QT:.*]] = tile.transpose %[[Q:[^ ]*]] :
// CHECK-NEXT:      %[[ST:.*]] = tile.mma %{{.*}}, %[[QT]], %{{.*}} :
// CHECK-NEXT:      %[[DOT:.*]] = tile.transpose %[[DO:[^ ]*]] :
// CHECK-NEXT:      %[[DPT:.*]] = tile.mma %{{.*}}, %[[DOT]], %{{.*}} :
// CHECK-NEXT:      %[[P:.*]] = math.exp %[[ST]]
// CHECK-NEXT:      %[[PB:.*]] = arith.truncf %[[P]]
// CHECK-NEXT:      %[[DV:.*]] = tile.mma %[[PB]], %[[DO]], %{{.*}} :
// CHECK-NEXT:      %[[DS:.*]] = arith.mulf %[[P]], %[[DPT]]
// CHECK-NEXT:      %[[DSB:.*]] = arith.truncf %[[DS]]
// CHECK-NEXT:      %[[DK:.*]] = tile.mma %[[DSB]], %[[Q]], %{{.*}} :
// CHECK-NEXT:      scf.yield %[[DK]], %[[DV]]
func.func @backward_step(%k: tensor<32x16xf16>, %v: tensor<32x16xf16>,
                         %q: tensor<16x16xf16>, %do: tensor<16x16xf16>,
                         %n: index) -> (tensor<32x16xf32>, tensor<32x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant dense<0.0> : tensor<32x16xf32>
  %r:2 = scf.for %j = %c0 to %n step %c1 iter_args(%dk = %zero, %dv = %zero)
      -> (tensor<32x16xf32>, tensor<32x16xf32>) {
    %qt = tile.transpose %q : tensor<16x16xf16> -> tensor<16x16xf16>
    %st = tile.mma %k, %qt, %zero : tensor<32x16xf16>, tensor<16x16xf16> -> tensor<32x16xf32>
    %p = math.exp %st : tensor<32x16xf32>
    %pb = arith.truncf %p : tensor<32x16xf32> to tensor<32x16xf16>
    %dv1 = tile.mma %pb, %do, %dv : tensor<32x16xf16>, tensor<16x16xf16> -> tensor<32x16xf32>
    %dot = tile.transpose %do : tensor<16x16xf16> -> tensor<16x16xf16>
    %dpt = tile.mma %v, %dot, %zero : tensor<32x16xf16>, tensor<16x16xf16> -> tensor<32x16xf32>
    %ds = arith.mulf %p, %dpt : tensor<32x16xf32>
    %dsb = arith.truncf %ds : tensor<32x16xf32> to tensor<32x16xf16>
    %dk1 = tile.mma %dsb, %q, %dk : tensor<32x16xf16>, tensor<16x16xf16> -> tensor<32x16xf32>
    scf.yield %dk1, %dv1 : tensor<32x16xf32>, tensor<32x16xf32>
  }
  return %r#0, %r#1 : tensor<32x16xf32>, tensor<32x16xf32>
}

// -----

// Two independent products after the first keep their order behind it; a
// product of a load moves with the load when no write comes between, and
// stays behind a write (the store); every op that is not a product's
// slice stays.

// CHECK-LABEL: func.func @order_and_effects
// CHECK:         scf.for
// CHECK-NEXT:      %[[A:.*]] = tile.mma
// CHECK-NEXT:      %[[L:.*]] = tile.load
// CHECK-NEXT:      %[[D:.*]] = tile.mma %[[L]], %[[L]], %[[Z:[^ ]*]]
// CHECK-NEXT:      %[[B:.*]] = tile.mma %[[X:[^,]*]], %[[X]]
// CHECK-NEXT:      %[[E:.*]] = math.exp %[[A]]
// CHECK-NEXT:      tile.store %[[E]]
// CHECK-NEXT:      %[[L2:.*]] = tile.load
// CHECK-NEXT:      %[[C:.*]] = tile.mma %[[L2]], %[[L2]]
func.func @order_and_effects(%x: tensor<16x16xf16>, %y: tensor<16x16xf16>,
                             %view: !tile.view<?x16xf16>, %out: !tile.view<?x16xf32>,
                             %n: index) -> tensor<16x16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant dense<0.0> : tensor<16x16xf32>
  %r = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %zero) -> tensor<16x16xf32> {
    %a = tile.mma %x, %y, %acc : tensor<16x16xf16>, tensor<16x16xf16> -> tensor<16x16xf32>
    %e = math.exp %a : tensor<16x16xf32>
    %l = tile.load %view[%j, %c0] pad(0.0) : !tile.view<?x16xf16> -> tensor<16x16xf16>
    %d = tile.mma %l, %l, %zero : tensor<16x16xf16>, tensor<16x16xf16> -> tensor<16x16xf32>
    %b = tile.mma %x, %x, %zero : tensor<16x16xf16>, tensor<16x16xf16> -> tensor<16x16xf32>
    tile.store %e, %out[%j, %c0] : tensor<16x16xf32>, !tile.view<?x16xf32>
    %l2 = tile.load %view[%j, %c1] pad(0.0) : !tile.view<?x16xf16> -> tensor<16x16xf16>
    %c = tile.mma %l2, %l2, %zero : tensor<16x16xf16>, tensor<16x16xf16> -> tensor<16x16xf32>
    %s1 = arith.addf %d, %b : tensor<16x16xf32>
    %s2 = arith.addf %s1, %c : tensor<16x16xf32>
    scf.yield %s2 : tensor<16x16xf32>
  }
  return %r : tensor<16x16xf32>
}

// -----

// A body with one product is left as it is.

// CHECK-LABEL: func.func @one_product
// CHECK:         math.exp
// CHECK-NEXT:    arith.truncf
// CHECK-NEXT:    tile.mma
func.func @one_product(%x: tensor<16x16xf16>, %n: index) -> tensor<16x16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant dense<0.0> : tensor<16x16xf32>
  %r = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %zero) -> tensor<16x16xf32> {
    %e = math.exp %acc : tensor<16x16xf32>
    %h = arith.truncf %e : tensor<16x16xf32> to tensor<16x16xf16>
    %a = tile.mma %h, %x, %zero : tensor<16x16xf16>, tensor<16x16xf16> -> tensor<16x16xf32>
    scf.yield %a : tensor<16x16xf32>
  }
  return %r : tensor<16x16xf32>
}
