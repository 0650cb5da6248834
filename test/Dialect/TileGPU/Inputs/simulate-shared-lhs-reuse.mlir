// Two moves of one type into shared memory for an mma's lhs (share-transposes:
// one buffer), the first tile read again after the second is written: the
// second write lands while a product still reads the first.
func.func @two_live(%k: !tile.view<?x?x?x256xbf16>, %q: !tile.view<?x?x?x256xbf16>, %o: !tile.view<?x?x?x256xf32>) {
  %c0 = arith.constant 0 : index
  %kb = tile.load %k[%c0, %c0, %c0, %c0] pad(0.0) : !tile.view<?x?x?x256xbf16> -> tensor<64x256xbf16>
  %qb = tile.load %q[%c0, %c0, %c0, %c0] pad(0.0) : !tile.view<?x?x?x256xbf16> -> tensor<64x256xbf16>
  %qt = tile.transpose %qb : tensor<64x256xbf16> -> tensor<256x64xbf16>
  %z = arith.constant dense<0.0> : tensor<64x64xf32>
  %st = tile.mma %kb, %qt, %z : tensor<64x256xbf16>, tensor<256x64xbf16> -> tensor<64x64xf32>
  %pa = arith.truncf %st : tensor<64x64xf32> to tensor<64x64xbf16>
  %sq = arith.mulf %st, %st : tensor<64x64xf32>
  %pb = arith.truncf %sq : tensor<64x64xf32> to tensor<64x64xbf16>
  %zd = arith.constant dense<0.0> : tensor<64x256xf32>
  %x = tile.mma %pa, %qb, %zd : tensor<64x64xbf16>, tensor<64x256xbf16> -> tensor<64x256xf32>
  %y = tile.mma %pb, %qb, %x : tensor<64x64xbf16>, tensor<64x256xbf16> -> tensor<64x256xf32>
  %w = tile.mma %pa, %kb, %y : tensor<64x64xbf16>, tensor<64x256xbf16> -> tensor<64x256xf32>
  tile.store %w, %o[%c0, %c0, %c0, %c0] : tensor<64x256xf32>, !tile.view<?x?x?x256xf32>
  return
}
