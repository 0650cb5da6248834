// An additive bias tensor (PyTorch's float attn_mask): the score plus
// bias[b, h, q_idx, kv_idx], the bias a captured [B, H, S_q, S_k] float32
// view whose broadcast dimensions have stride 0 (tiled_attn.sdpa passes
// attn_mask expanded so; a bool attn_mask as 0 where True, -inf where
// False). A read past the view's sizes (keys past S_k) gives 0.
func.func @bias(%score: f32, %b: index, %h: index, %q_idx: index,
                %kv_idx: index,
                %bias: !tile.view<?x?x?x?xf32> {tile.arg = #tile.arg<captured, "bias">})
    -> f32 {
  %x = tile.read %bias[%b, %h, %q_idx, %kv_idx] : !tile.view<?x?x?x?xf32> -> f32
  %result = arith.addf %score, %x : f32
  return %result : f32
}
