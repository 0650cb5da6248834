// RUN: tiled-attn-opt %s -split-input-file -verify-diagnostics --tile-mask-split=guard=1

// The diagnostics of tile-mask-split{guard} (its output is checked in
// tile-mask-split.mlir). Guard mode needs every mask to end in a select through broadcasts and
// andi only (then it is all true below n_full).

func.func @guard_mask_through_or(%q: !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<q>}, %k: !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<k>},
                                 %v: !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<v>}, %o: !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<o>},
                                 %scale: f32 {tile.arg = #tile.arg<scale>})
    attributes {tile.sdpa = #tile.sdpa<head_dim = 16, element_type = f16, causal = none, block_m = 16, block_n = 16>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %masked = arith.constant dense<0xFF800000> : tensor<16x16xf32>
  %s = arith.constant dense<1.0> : tensor<16x16xf32>
  %extra = arith.constant dense<true> : tensor<16x16xi1>
  %seq_k = tile.dim %k[2] : !tile.view<?x?x?x16xf16>
  %n = arith.ceildivui %seq_k, %c16 : index
  scf.for %j = %c0 to %n step %c1 {
    %col = arith.muli %j, %c16 : index
    // expected-error @+1 {{tile-mask-split{guard}: expects every mask to reach a select through broadcasts and andi only}}
    %in = tile.bounds_mask offsets(%col) limits(%seq_k) : tensor<16xi1>
    %in_b = tile.broadcast %in along 0 : tensor<16xi1> -> tensor<16x16xi1>
    %keep = arith.ori %in_b, %extra : tensor<16x16xi1>
    %x = arith.select %keep, %s, %masked : tensor<16x16xi1>, tensor<16x16xf32>
  }
  return
}

// -----

func.func @guard_mask_used_elsewhere(%q: !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<q>}, %k: !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<k>},
                                     %v: !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<v>}, %o: !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<o>},
                                     %scale: f32 {tile.arg = #tile.arg<scale>})
    attributes {tile.sdpa = #tile.sdpa<head_dim = 16, element_type = f16, causal = none, block_m = 16, block_n = 16>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %masked = arith.constant dense<0xFF800000> : tensor<16x16xf32>
  %s = arith.constant dense<1.0> : tensor<16x16xf32>
  %extra = arith.constant dense<true> : tensor<16x16xi1>
  %seq_k = tile.dim %k[2] : !tile.view<?x?x?x16xf16>
  %n = arith.ceildivui %seq_k, %c16 : index
  scf.for %j = %c0 to %n step %c1 {
    %col = arith.muli %j, %c16 : index
    %in = tile.bounds_mask offsets(%col) limits(%seq_k) : tensor<16xi1>
    %in_b = tile.broadcast %in along 0 : tensor<16xi1> -> tensor<16x16xi1>
    %x = arith.select %in_b, %s, %masked : tensor<16x16xi1>, tensor<16x16xf32>
    // expected-error @+1 {{tile-mask-split{guard}: expects the masks to be used only by selects that apply them}}
    %flip = arith.xori %in_b, %in_b : tensor<16x16xi1>
  }
  return
}
