// A user's score function: a learned relative-position bias (T5's and
// others'), read from a table of one row per head and one column per
// distance, [H, 2*S_max - 1], column (kv_idx - q_idx) + S_max - 1. A
// distance past S_max - 1 reads outside the table, which gives 0.
//
// Build kernels with it: copy this file into kernels/functions/, add a
// variant "none+relpos" (or "top_left+relpos", ...) to a configuration of
// kernels/library.json, and run scripts/build_kernels.sh; then
//   tiled_attn.sdpa(q, k, v, score_mod="relpos", score_mod_args=(table,))
// with table a [H, 2*S_max - 1] float32 CUDA tensor. docs/functions.md says
// more; test/Pipelines/user-function.test runs this file.
func.func @relpos(%score: f32, %b: index, %h: index, %q_idx: index,
                  %kv_idx: index,
                  %table: !tile.view<?x?xf32> {tile.arg = #tile.arg<captured, "table">})
    -> f32 {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %width = tile.dim %table[1] : !tile.view<?x?xf32>
  %widthm1 = arith.subi %width, %c1 : index
  %center = arith.divui %widthm1, %c2 : index       // S_max - 1
  %distance = arith.subi %kv_idx, %q_idx : index
  %column = arith.addi %distance, %center : index
  %bias = tile.read %table[%h, %column] : !tile.view<?x?xf32> -> f32
  %result = arith.addf %score, %bias : f32
  return %result : f32
}
