// An additive bias tensor in f16 (PyTorch's f16 attn_mask, as transformers
// builds it in a f16 model): bias.mlir's function on a [B, H, S_q, S_k]
// f16 view, half the bytes of float32 and no float32 copy of the mask;
// added to the score in float32. A read past the view's sizes gives 0.
func.func @bias_f16(%score: f32, %b: index, %h: index, %q_idx: index,
                %kv_idx: index,
                %bias: !tile.view<?x?x?x?xf16> {tile.arg = #tile.arg<captured, "bias">})
    -> f32 {
  %x = tile.read %bias[%b, %h, %q_idx, %kv_idx] : !tile.view<?x?x?x?xf16> -> f16
  %wide = arith.extf %x : f16 to f32
  %result = arith.addf %score, %wide : f32
  return %result : f32
}
