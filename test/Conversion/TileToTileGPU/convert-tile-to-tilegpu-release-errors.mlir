// RUN: tiled-attn-opt %s -split-input-file -verify-diagnostics \
// RUN:   --convert-tile-to-tilegpu="empty-barriers=1"

// With empty barriers every TMA buffer of a ring must be released exactly
// once on each path: a buffer that is read and also handed on (here to the
// next iteration) on the same path has no single point where its readers
// are done.

#acc = #tilegpu.wgmma<acc, warpgroups = 1>
#sw = #tilegpu.shared<swizzle = 128>
#swt = #tilegpu.shared<swizzle = 128, transposed = true>
module attributes {tilegpu.target = #tilegpu.target<chip = "sm_90a", family = wgmma>} {
func.func @negative_read_and_handed_on(%q: !tile.view<?x?x?x64xf16>, %k: !tile.view<?x?x?x64xf16>,
                                       %o: !tile.view<?x?x?x64xf32>, %n: index)
    attributes {tilegpu.warps = 4 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant dense<0.0> : tensor<64x64xf32, #acc>
  %qt = tile.load %q[%c0, %c0, %c0, %c0] pad(0.0) : !tile.view<?x?x?x64xf16> -> tensor<64x64xf16, #sw>
  %k0 = tile.load %k[%c0, %c0, %c0, %c0] pad(0.0) transpose : !tile.view<?x?x?x64xf16> -> tensor<64x64xf16, #swt>
  %r:2 = scf.for %j = %c0 to %n step %c1 iter_args(%kj = %k0, %acc = %zero)
      -> (tensor<64x64xf16, #swt>, tensor<64x64xf32, #acc>) {
    // expected-error @+1 {{convert-tile-to-tilegpu: a TMA buffer that is both read and handed on on one path cannot be released (empty-barriers)}}
    %next = tile.load %k[%c0, %c0, %j, %c0] pad(0.0) transpose : !tile.view<?x?x?x64xf16> -> tensor<64x64xf16, #swt>
    %s = tile.mma %qt, %next, %acc : tensor<64x64xf16, #sw>, tensor<64x64xf16, #swt> -> tensor<64x64xf32, #acc>
    scf.yield %next, %s : tensor<64x64xf16, #swt>, tensor<64x64xf32, #acc>
  }
  tile.store %r#1, %o[%c0, %c0, %c0, %c0] : tensor<64x64xf32, #acc>, !tile.view<?x?x?x64xf32>
  return
}
}

// -----

// A buffer read only when a branch without an else is taken: on the other
// path nothing would release it.

#acc = #tilegpu.wgmma<acc, warpgroups = 1>
#sw = #tilegpu.shared<swizzle = 128>
#swt = #tilegpu.shared<swizzle = 128, transposed = true>
module attributes {tilegpu.target = #tilegpu.target<chip = "sm_90a", family = wgmma>} {
func.func @negative_read_in_branch_without_else(%q: !tile.view<?x?x?x64xf16>, %k: !tile.view<?x?x?x64xf16>,
                                                %o: !tile.view<?x?x?x64xf32>, %n: index, %c: i1)
    attributes {tilegpu.warps = 4 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant dense<0.0> : tensor<64x64xf32, #acc>
  %qt = tile.load %q[%c0, %c0, %c0, %c0] pad(0.0) : !tile.view<?x?x?x64xf16> -> tensor<64x64xf16, #sw>
  scf.for %j = %c0 to %n step %c1 {
    %next = tile.load %k[%c0, %c0, %j, %c0] pad(0.0) transpose : !tile.view<?x?x?x64xf16> -> tensor<64x64xf16, #swt>
    // expected-error @+1 {{convert-tile-to-tilegpu: a TMA buffer read only when a branch without an else is taken cannot be released (empty-barriers)}}
    scf.if %c {
      %s = tile.mma %qt, %next, %zero : tensor<64x64xf16, #sw>, tensor<64x64xf16, #swt> -> tensor<64x64xf32, #acc>
      tile.store %s, %o[%c0, %c0, %j, %c0] : tensor<64x64xf32, #acc>, !tile.view<?x?x?x64xf32>
    }
  }
  return
}
}
