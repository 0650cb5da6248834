// The wide backward's dSᵀ (64 keys x 64 queries, two warpgroups side by
// side on the columns): the lhs of dK's product, which moves it into
// shared memory, and, transposed, the lhs of dQ's product. Both would
// write the same bytes; the transpose reads the move's buffer instead.
func.func @shared_lhs_both_ways(%k: !tile.view<?x?x?x256xbf16>, %q: !tile.view<?x?x?x256xbf16>,
                                %dk: !tile.view<?x?x?x256xf32>, %dq: !tile.view<?x?x?x256xf32>) {
  %c0 = arith.constant 0 : index
  %kb = tile.load %k[%c0, %c0, %c0, %c0] pad(0.0) : !tile.view<?x?x?x256xbf16> -> tensor<64x256xbf16>
  %qb = tile.load %q[%c0, %c0, %c0, %c0] pad(0.0) : !tile.view<?x?x?x256xbf16> -> tensor<64x256xbf16>
  %qt = tile.transpose %qb : tensor<64x256xbf16> -> tensor<256x64xbf16>
  %z = arith.constant dense<0.0> : tensor<64x64xf32>
  %st = tile.mma %kb, %qt, %z : tensor<64x256xbf16>, tensor<256x64xbf16> -> tensor<64x64xf32>
  %dst = arith.truncf %st : tensor<64x64xf32> to tensor<64x64xbf16>
  %zd = arith.constant dense<0.0> : tensor<64x256xf32>
  %dkb = tile.mma %dst, %qb, %zd : tensor<64x64xbf16>, tensor<64x256xbf16> -> tensor<64x256xf32>
  %ds = tile.transpose %dst : tensor<64x64xbf16> -> tensor<64x64xbf16>
  %dqb = tile.mma %ds, %kb, %zd : tensor<64x64xbf16>, tensor<64x256xbf16> -> tensor<64x256xf32>
  tile.store %dkb, %dk[%c0, %c0, %c0, %c0] : tensor<64x256xf32>, !tile.view<?x?x?x256xf32>
  tile.store %dqb, %dq[%c0, %c0, %c0, %c0] add : tensor<64x256xf32>, !tile.view<?x?x?x256xf32>
  return
}
