// The backward's step at D = 256 on two warpgroups (64 keys, 64 queries):
// every product's accumulator has the warpgroups side by side on its
// columns. The scores' column vector (a gathered log-sum-exp) is split
// the same way, and Pᵀ, the lhs of dV's product, which each warpgroup
// needs whole, moves into shared memory (a convert_layout to its panels).
func.func @column_blocks_lhs(%k: !tile.view<?x?x?x256xf16>, %q: !tile.view<?x?x?x256xf16>,
                             %lse: !tile.view<?x?x?xf32>, %o: !tile.view<?x?x?x256xf32>) {
  %c0 = arith.constant 0 : index
  %kb = tile.load %k[%c0, %c0, %c0, %c0] pad(0.0) : !tile.view<?x?x?x256xf16> -> tensor<64x256xf16>
  %qb = tile.load %q[%c0, %c0, %c0, %c0] pad(0.0) : !tile.view<?x?x?x256xf16> -> tensor<64x256xf16>
  %qt = tile.transpose %qb : tensor<64x256xf16> -> tensor<256x64xf16>
  %z = arith.constant dense<0.0> : tensor<64x64xf32>
  %st = tile.mma %kb, %qt, %z : tensor<64x256xf16>, tensor<256x64xf16> -> tensor<64x64xf32>
  %rows = tile.iota offset(%c0) : tensor<64xi32>
  %l = tile.gather %lse[%c0, %c0, %rows] pad(0.0) : <?x?x?xf32>, index, index, tensor<64xi32> -> tensor<64xf32>
  %lb = tile.broadcast %l along 0 : tensor<64xf32> -> tensor<64x64xf32>
  %pt = arith.subf %st, %lb : tensor<64x64xf32>
  %p16 = arith.truncf %pt : tensor<64x64xf32> to tensor<64x64xf16>
  %zd = arith.constant dense<0.0> : tensor<64x256xf32>
  %dv = tile.mma %p16, %qb, %zd : tensor<64x64xf16>, tensor<64x256xf16> -> tensor<64x256xf32>
  tile.store %dv, %o[%c0, %c0, %c0, %c0] : tensor<64x256xf32>, !tile.view<?x?x?x256xf32>
  return
}
