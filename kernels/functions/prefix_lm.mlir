// Prefix-LM masking (T5's and PaLM's prefix language models): the first
// prefix_lengths[b] tokens of a row are a prefix every query sees in full;
// after it, a query sees the keys up to itself. The prefix lengths are a
// captured [B] int32 tensor. Use it without a causal mask (the function is
// the whole mask; with one, the prefix would be cut to the causal part).
func.func @prefix_lm(%b: index, %h: index, %q_idx: index, %kv_idx: index,
                     %prefix_lengths: !tile.view<?xi32> {tile.arg = #tile.arg<captured, "prefix_lengths">})
    -> i1 {
  %length = tile.read %prefix_lengths[%b] : !tile.view<?xi32> -> i32
  %kv = arith.index_cast %kv_idx : index to i32
  %in_prefix = arith.cmpi slt, %kv, %length : i32
  %causal = arith.cmpi ule, %kv_idx, %q_idx : index
  %visible = arith.ori %in_prefix, %causal : i1
  return %visible : i1
}
