// Logit soft-capping (Gemma 2's attn_logit_softcapping, FlashAttention's
// softcap, FlexAttention's tanh soft-capping) written as a score function:
// the score the softmax sees is cap * tanh(score / cap), `score` already
// scaled. The cap is a captured f32 scalar (> 0). The library's `_softcap`
// kernels compute the same as a kernel feature, with the scale folded into
// the tanh's argument; docs/functions.md compares the two.
func.func @tanh_softcap(%score: f32, %b: index, %h: index, %q_idx: index,
                        %kv_idx: index,
                        %cap: f32 {tile.arg = #tile.arg<captured, "cap">}) -> f32 {
  %one = arith.constant 1.0 : f32
  // Approximate (afn: rcp.approx, within an ulp): a correctly rounded
  // reciprocal's slow path would cost the kernel's loop its uniform datapath.
  %inverse = arith.divf %one, %cap fastmath<afn> : f32
  %x = arith.mulf %score, %inverse : f32
  %t = math.tanh %x : f32
  %result = arith.mulf %cap, %t : f32
  return %result : f32
}
