// RUN: tiled-attn-opt %s -split-input-file -verify-diagnostics --convert-tile-to-gpu
// RUN: not tiled-attn-opt %s -split-input-file --convert-tile-to-gpu 2>&1 | FileCheck %s

// What convert-tile-to-gpu refuses. The layouts are written out, as
// tile-assign-layouts would (or, for the cases it never produces, would
// not) set them. Each pattern's error is followed by the conversion's own.

// CHECK: error: convert-tile-to-gpu: 'tensor<16x16xf16>' has no layout; run tile-assign-layouts first
func.func @negative_no_layout(%q: !tile.view<?x?x?x16xf16>) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{convert-tile-to-gpu: 'tensor<16x16xf16>' has no layout; run tile-assign-layouts first}}
  %qt = tile.load %q[%c0, %c0, %c0, %c0] pad(0.0)
      : !tile.view<?x?x?x16xf16> -> tensor<16x16xf16>
  return
}

// -----

// cp.async zero-fills: a load can only pad with zero.

// CHECK: error: GPU lowering: loads pad with zero only
// CHECK: error: failed to legalize operation 'tile.load'
#opa = #tile.layout<opa, warps = 1>
func.func @negative_pad(%q: !tile.view<?x?x?x16xf16>) {
  %c0 = arith.constant 0 : index
  // expected-error @+2 {{GPU lowering: loads pad with zero only}}
  // expected-error @+1 {{failed to legalize operation 'tile.load'}}
  %qt = tile.load %q[%c0, %c0, %c0, %c0] pad(0xFFF0000000000000)
      : !tile.view<?x?x?x16xf16> -> tensor<16x16xf16, #opa>
  return
}

// -----

// CHECK: error: GPU lowering: stores take an unmasked accumulator tile into a rank-4 view
#acc = #tile.layout<acc, warps = 1>
func.func @negative_masked_store(%x: f16, %o: !tile.view<?x?x?x16xf16>,
                                 %n: index) {
  %c0 = arith.constant 0 : index
  %s = tensor.splat %x : tensor<16x16xf16, #acc>
  %m = tile.causal_mask %c0, %n : tensor<16x16xi1, #acc>
  // expected-error @+2 {{GPU lowering: stores take an unmasked accumulator tile into a rank-4 view}}
  // expected-error @+1 {{failed to legalize operation 'tile.store'}}
  tile.store %s, %o[%c0, %c0, %c0, %c0] mask(%m : tensor<16x16xi1, #acc>)
      : tensor<16x16xf16, #acc>, !tile.view<?x?x?x16xf16>
  return
}

// -----

// 4 warps are 128 threads; a 16x16 f16 block is 32 copies of 16 bytes.

// CHECK: error: GPU lowering: a 16x16 block does not split into 128 threads' 16-byte copies
#smem = #tile.layout<smem, warps = 4, transposed = true>
func.func @negative_copy_split(%k: !tile.view<?x?x?x16xf16>) {
  %c0 = arith.constant 0 : index
  // expected-error @+2 {{GPU lowering: a 16x16 block does not split into 128 threads' 16-byte copies}}
  // expected-error @+1 {{failed to legalize operation 'tile.load'}}
  %kt = tile.load %k[%c0, %c0, %c0, %c0] pad(0.0) transpose
      : !tile.view<?x?x?x16xf16> -> tensor<16x16xf16, #smem>
  return
}

// -----

// CHECK: error: GPU lowering: only splat tile constants
#rows = #tile.layout<rows, warps = 1>
func.func @negative_dense_constant() {
  // expected-error @+2 {{GPU lowering: only splat tile constants}}
  // expected-error @+1 {{failed to legalize operation 'arith.constant'}}
  %cst = arith.constant dense<[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0]> : tensor<16xf32, #rows>
  return
}

// -----

// A column reduction (which tile-assign-layouts accepts, giving cols) has
// no lowering yet.

// CHECK: error: GPU lowering: only row reductions of an accumulator (along 1) are supported
#acc = #tile.layout<acc, warps = 1>
#cols = #tile.layout<cols, warps = 1>
func.func @negative_column_reduction(%x: f32, %o: !tile.view<?x?x?x16xf32>) {
  %c0 = arith.constant 0 : index
  %s = tensor.splat %x : tensor<16x16xf32, #acc>
  // expected-error @+2 {{GPU lowering: only row reductions of an accumulator (along 1) are supported}}
  // expected-error @+1 {{failed to legalize operation 'tile.reduce'}}
  %r = tile.reduce max %s along 0
      : tensor<16x16xf32, #acc> -> tensor<16xf32, #cols>
  %b = tile.broadcast %r along 0
      : tensor<16xf32, #cols> -> tensor<16x16xf32, #acc>
  tile.store %b, %o[%c0, %c0, %c0, %c0]
      : tensor<16x16xf32, #acc>, !tile.view<?x?x?x16xf32>
  return
}

// -----

// CHECK: error: GPU lowering: loads produce shared tiles or untransposed A operands
#acc = #tile.layout<acc, warps = 1>
func.func @negative_load_to_acc(%q: !tile.view<?x?x?x16xf16>,
                                %o: !tile.view<?x?x?x16xf16>) {
  %c0 = arith.constant 0 : index
  // expected-error @+2 {{GPU lowering: loads produce shared tiles or untransposed A operands}}
  // expected-error @+1 {{failed to legalize operation 'tile.load'}}
  %qt = tile.load %q[%c0, %c0, %c0, %c0] pad(0.0)
      : !tile.view<?x?x?x16xf16> -> tensor<16x16xf16, #acc>
  tile.store %qt, %o[%c0, %c0, %c0, %c0]
      : tensor<16x16xf16, #acc>, !tile.view<?x?x?x16xf16>
  return
}

// -----

// CHECK: error: GPU lowering: no register move from #tile.layout<opa, warps = 1> to #tile.layout<acc, warps = 1>
#acc = #tile.layout<acc, warps = 1>
#opa = #tile.layout<opa, warps = 1>
func.func @negative_convert_opa_to_acc(%q: !tile.view<?x?x?x16xf16>,
                                       %o: !tile.view<?x?x?x16xf16>) {
  %c0 = arith.constant 0 : index
  %qt = tile.load %q[%c0, %c0, %c0, %c0] pad(0.0)
      : !tile.view<?x?x?x16xf16> -> tensor<16x16xf16, #opa>
  // expected-error @+2 {{GPU lowering: no register move from #tile.layout<opa, warps = 1> to #tile.layout<acc, warps = 1>}}
  // expected-error @+1 {{failed to legalize operation 'tile.convert_layout'}}
  %qa = tile.convert_layout %qt
      : tensor<16x16xf16, #opa> -> tensor<16x16xf16, #acc>
  tile.store %qa, %o[%c0, %c0, %c0, %c0]
      : tensor<16x16xf16, #acc>, !tile.view<?x?x?x16xf16>
  return
}

// -----

// CHECK: error: GPU lowering: bounds masks are over columns
#acc = #tile.layout<acc, warps = 1>
func.func @negative_bounds_mask_2d(%x: f32, %n: index,
                                   %o: !tile.view<?x?x?x16xf32>) {
  %c0 = arith.constant 0 : index
  %ninf = arith.constant dense<0xFF800000> : tensor<16x16xf32, #acc>
  %s = tensor.splat %x : tensor<16x16xf32, #acc>
  // expected-error @+2 {{GPU lowering: bounds masks are over columns}}
  // expected-error @+1 {{failed to legalize operation 'tile.bounds_mask'}}
  %m = tile.bounds_mask offsets(%c0, %c0) limits(%n, %n)
      : tensor<16x16xi1, #acc>
  %sm = arith.select %m, %s, %ninf
      : tensor<16x16xi1, #acc>, tensor<16x16xf32, #acc>
  tile.store %sm, %o[%c0, %c0, %c0, %c0]
      : tensor<16x16xf32, #acc>, !tile.view<?x?x?x16xf32>
  return
}

// -----

// CHECK: error: convert-tile-to-gpu: 'negative_no_tiles' has no tiles
// expected-error @+1 {{convert-tile-to-gpu: 'negative_no_tiles' has no tiles; nothing tells its launch shape}}
func.func @negative_no_tiles(%x: index) {
  return
}
