// ALiBi (Press et al., 2022): each head adds a linear penalty of its key's
// distance, score + slopes[h] * (kv_idx - q_idx). The slopes are a captured
// [H] float32 tensor (for H a power of two, slope h = 2^(-8 (h + 1) / H)).
//
// Written as score + slope * kv_idx - slope * q_idx, so that the compiler
// computes slope * kv_idx once per key of a block and slope * q_idx once per
// query row (vectors), leaving two additions per score.
func.func @alibi(%score: f32, %b: index, %h: index, %q_idx: index,
                 %kv_idx: index,
                 %slopes: !tile.view<?xf32> {tile.arg = #tile.arg<captured, "slopes">})
    -> f32 {
  %slope = tile.read %slopes[%h] : !tile.view<?xf32> -> f32
  %kv = arith.index_cast %kv_idx : index to i32
  %q = arith.index_cast %q_idx : index to i32
  %kvf = arith.sitofp %kv : i32 to f32
  %qf = arith.sitofp %q : i32 to f32
  %key_term = arith.mulf %slope, %kvf : f32
  %query_term = arith.mulf %slope, %qf : f32
  %with_key = arith.addf %score, %key_term : f32
  %result = arith.subf %with_key, %query_term : f32
  return %result : f32
}
