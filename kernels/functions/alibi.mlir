// ALiBi (Press et al., 2022): each head adds a linear penalty of its key's
// distance, score + slopes[h] * (kv_idx - q_idx). The slopes are a captured
// [H] float32 tensor (for H a power of two, slope h = 2^(-8 (h + 1) / H)).
func.func @alibi(%score: f32, %b: index, %h: index, %q_idx: index,
                 %kv_idx: index,
                 %slopes: !tile.view<?xf32> {tile.arg = #tile.arg<captured, "slopes">})
    -> f32 {
  %slope = tile.read %slopes[%h] : !tile.view<?xf32> -> f32
  %distance = arith.subi %kv_idx, %q_idx : index
  %d = arith.index_cast %distance : index to i32
  %df = arith.sitofp %d : i32 to f32
  %bias = arith.mulf %slope, %df : f32
  %result = arith.addf %score, %bias : f32
  return %result : f32
}
