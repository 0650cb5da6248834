// RUN: tiled-attn-opt %s --split-input-file --verify-diagnostics --tile-retile="block-m=128 block-n=32" | FileCheck %s
// RUN: tiled-attn-opt %s --split-input-file --verify-diagnostics --tile-retile="block-n=16" | FileCheck %s --check-prefix=ONLY-N
// RUN: tiled-attn-opt %s --split-input-file --tile-retile="block-m=128" --verify-diagnostics -o /dev/null
// RUN: not tiled-attn-opt %s --split-input-file --tile-retile="block-m=40" 2>&1 | FileCheck %s --check-prefix=BAD-M
// RUN: not tiled-attn-opt %s --split-input-file --tile-retile="block-n=512" 2>&1 | FileCheck %s --check-prefix=BAD-N
// Block sizes are checked even where there is nothing to retile (a
// function without tile.sdpa).
// RUN: echo 'func.func @f() { return }' | not tiled-attn-opt --tile-retile="block-m=40" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BAD-M
// A constant tile that nothing uses (a segfault before: the pass gave
// each use but the first its own copy, and there was no first; found by
// test/Fuzz):
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa \
// RUN:   | sed -e 's/^\( *\)\(%c0 = arith.constant 0 : index\)$/\1\2\n\1%unused = arith.constant dense<0xFF800000> : tensor<64x64xf32>/' \
// RUN:   | tiled-attn-opt --tile-retile=block-n=16 | FileCheck %s --check-prefix=UNUSED
// UNUSED: block_m = 64, block_n = 16
// UNUSED: %{{.*}} = arith.constant dense<0xFF800000> : tensor<64x64xf32>

// BAD-M: tile-retile: block sizes must be multiples of 16 in [16, 256], got 40
// BAD-N: tile-retile: block sizes must be multiples of 16 in [16, 256], got 512

// A kernel whose BLOCK_M, BLOCK_N and D are all 64: only the analysis of
// which dimension is which tells them apart.
// CHECK-LABEL: func.func @square
// CHECK-SAME:    block_m = 128, block_n = 32
// CHECK:         %[[Q:.*]] = tile.load %{{.*}} -> tensor<128x64xf16>
// CHECK:         %[[NB:.*]] = arith.ceildivui %{{.*}}, %[[C32:.*]] : index
// CHECK:         scf.for %[[J:.*]] = %{{.*}} to %[[NB]]
// CHECK-SAME:      -> (tensor<128xf32>, tensor<128xf32>, tensor<128x64xf32>)
// CHECK:           tile.load %{{.*}} transpose : {{.*}} -> tensor<64x32xf16>
// CHECK:           tile.load %{{.*}} -> tensor<32x64xf16>
// CHECK:           tile.mma {{.*}} : tensor<128x64xf16>, tensor<64x32xf16> -> tensor<128x32xf32>
// CHECK:           %[[COL:.*]] = arith.muli %[[J]], %{{.*}} : index
// CHECK:           tile.bounds_mask offsets(%[[COL]]) {{.*}} : tensor<32xi1>
// CHECK:           tile.causal_mask {{.*}} : tensor<128x32xi1>
// CHECK:           tile.online_softmax {{.*}} : tensor<128x32xf32>, tensor<128xf32>
// CHECK:           tile.mma {{.*}} : tensor<128x32xf16>, tensor<32x64xf16> -> tensor<128x64xf32>
// CHECK:         tile.store {{.*}} : tensor<128x64xf16>
// ONLY-N-LABEL: func.func @square
// ONLY-N-SAME:    block_m = 64, block_n = 16
// ONLY-N:         tile.mma {{.*}} : tensor<64x64xf16>, tensor<64x16xf16> -> tensor<64x16xf32>
func.func @square(%q: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<q>}, %k: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<k>},
                  %v: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<v>}, %o: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<o>},
                  %scale: f32 {tile.arg = #tile.arg<scale>})
    attributes {tile.sdpa = #tile.sdpa<head_dim = 64, element_type = f16,
                                       causal = top_left,
                                       block_m = 64, block_n = 64>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %m = tile.block_id x
  %h = tile.block_id y
  %b = tile.block_id z
  %seq_k = tile.dim %k[2] : !tile.view<?x?x?x64xf16>
  %qt = tile.load %q[%b, %h, %m, %c0] pad(0.0) : !tile.view<?x?x?x64xf16> -> tensor<64x64xf16>
  %m0 = arith.constant dense<0xFF800000> : tensor<64xf32>
  %l0 = arith.constant dense<0.0> : tensor<64xf32>
  %a0 = arith.constant dense<0.0> : tensor<64x64xf32>
  %ninf = arith.constant dense<0xFF800000> : tensor<64x64xf32>
  %n = arith.ceildivui %seq_k, %c64 : index
  %row = arith.muli %m, %c64 : index
  %r:3 = scf.for %j = %c0 to %n step %c1 iter_args(%mi = %m0, %li = %l0, %acc = %a0)
      -> (tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>) {
    %kt = tile.load %k[%b, %h, %j, %c0] pad(0.0) transpose : !tile.view<?x?x?x64xf16> -> tensor<64x64xf16>
    %vt = tile.load %v[%b, %h, %j, %c0] pad(0.0) : !tile.view<?x?x?x64xf16> -> tensor<64x64xf16>
    %s = tile.mma %qt, %kt, %a0 : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf32>
    %col = arith.muli %j, %c64 : index
    %in = tile.bounds_mask offsets(%col) limits(%seq_k) : tensor<64xi1>
    %inb = tile.broadcast %in along 0 : tensor<64xi1> -> tensor<64x64xi1>
    %vis = tile.causal_mask %row, %col : tensor<64x64xi1>
    %keep = arith.andi %inb, %vis : tensor<64x64xi1>
    %sm = arith.select %keep, %s, %ninf : tensor<64x64xi1>, tensor<64x64xf32>
    %m1, %l1, %p, %al = tile.online_softmax %sm, %mi, %li scale(%scale) : tensor<64x64xf32>, tensor<64xf32>
    %p16 = arith.truncf %p : tensor<64x64xf32> to tensor<64x64xf16>
    %alb = tile.broadcast %al along 1 : tensor<64xf32> -> tensor<64x64xf32>
    %as = arith.mulf %acc, %alb : tensor<64x64xf32>
    %a1 = tile.mma %p16, %vt, %as : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf32>
    scf.yield %m1, %l1, %a1 : tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>
  }
  %lb = tile.broadcast %r#1 along 1 : tensor<64xf32> -> tensor<64x64xf32>
  %out = arith.divf %r#2, %lb : tensor<64x64xf32>
  %o16 = arith.truncf %out : tensor<64x64xf32> to tensor<64x64xf16>
  tile.store %o16, %o[%b, %h, %m, %c0] : tensor<64x64xf16>, !tile.view<?x?x?x64xf16>
  return
}

// -----

// A function without tile.sdpa is not an SDPA kernel: left alone.
// CHECK-LABEL: func.func @negative_not_a_kernel
// CHECK:         tile.iota : tensor<64xi32>
// ONLY-N-LABEL: func.func @negative_not_a_kernel
func.func @negative_not_a_kernel() -> tensor<64xi32> {
  %i = tile.iota : tensor<64xi32>
  return %i : tensor<64xi32>
}

// -----

// A block index used in a way the pass cannot rescale is an error, not a
// silent change.
func.func @negative_unknown_use(%q: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<q>}, %k: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<k>},
                                %v: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<v>}, %o: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<o>},
                                %scale: f32 {tile.arg = #tile.arg<scale>})
    attributes {tile.sdpa = #tile.sdpa<head_dim = 64, element_type = f16,
                                       causal = none, block_m = 64, block_n = 64>} {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %m = tile.block_id x
  %qt = tile.load %q[%c0, %c0, %m, %c0] pad(0.0) : !tile.view<?x?x?x64xf16> -> tensor<64x64xf16>
  // expected-error @+1 {{tile-retile: cannot rescale this use of a block index (expects `index * 64`)}}
  %x = arith.muli %m, %c3 : index
  tile.store %qt, %o[%c0, %c0, %m, %c0] : tensor<64x64xf16>, !tile.view<?x?x?x64xf16>
  return
}
