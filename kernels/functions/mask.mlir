// A boolean mask tensor (PyTorch's bool attn_mask): a query sees a key where
// mask[b, h, q_idx, kv_idx] is nonzero (True). The mask is a captured
// [B, H, S_q, S_k] view of one byte per element (a torch.bool, int8 or
// uint8 tensor) whose broadcast dimensions have stride 0 (tiled_attn.sdpa
// passes attn_mask expanded so): a quarter of the bytes the additive bias
// (bias.mlir, float32) reads. A read past the view's sizes gives 0 (hidden).
func.func @mask(%b: index, %h: index, %q_idx: index, %kv_idx: index,
                %mask: !tile.view<?x?x?x?xi8> {tile.arg = #tile.arg<captured, "mask">})
    -> i1 {
  %x = tile.read %mask[%b, %h, %q_idx, %kv_idx] : !tile.view<?x?x?x?xi8> -> i8
  %zero = arith.constant 0 : i8
  %keep = arith.cmpi ne, %x, %zero : i8
  return %keep : i1
}
