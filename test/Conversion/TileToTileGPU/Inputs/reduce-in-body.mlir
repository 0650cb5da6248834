// An adding store of a wgmma accumulator in the kernel's body, outside any
// loop (convert-tile-to-tilegpu-tma.mlir, prefix BODY).
func.func @reduce_in_body(%q: !tile.view<?x?x?x64xbf16> {tile.arg = #tile.arg<q>},
                          %k: !tile.view<?x?x?x64xbf16> {tile.arg = #tile.arg<k>},
                          %acc: !tile.view<?x?x?x64xf32> {tile.arg = #tile.arg<dq_accum>},
                          %i: index) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %a = tile.load %q[%i, %i, %i, %c0] pad(0.0) : !tile.view<?x?x?x64xbf16> -> tensor<64x64xbf16>
  %b = tile.load %k[%i, %i, %i, %c0] pad(0.0) transpose : !tile.view<?x?x?x64xbf16> -> tensor<64x64xbf16>
  %c = tile.mma %a, %b, %zero : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
  tile.store %c, %acc[%i, %i, %i, %c0] add : tensor<64x64xf32>, !tile.view<?x?x?x64xf32>
  return
}
