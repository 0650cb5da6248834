// RUN: tiled-attn-opt %s -verify-diagnostics --tile-mask-split="guard=1 masked-first=1"

// `guard` keeps one loop, so asking for the masked loop first is an error,
// not a silent no-op.

// expected-error @+1 {{tile-mask-split: `guard` keeps one loop, so `masked-first` has no loops to order}}
func.func @guard_and_masked_first(%q: !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<q>}, %k: !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<k>},
                                  %v: !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<v>}, %o: !tile.view<?x?x?x16xf16> {tile.arg = #tile.arg<o>},
                                  %scale: f32 {tile.arg = #tile.arg<scale>})
    attributes {tile.sdpa = #tile.sdpa<head_dim = 16, element_type = f16, causal = none, block_m = 16, block_n = 16>} {
  return
}
