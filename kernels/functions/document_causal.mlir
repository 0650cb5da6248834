// Causal document masking (packed sequences in one row, each causal): a
// query sees the keys of its own document up to itself. The document ids
// are a captured [B, S] int32 tensor, one id per token of the row, as for
// `document`. With a block mask (create_block_mask of the same mask) the
// block-sparse kernel visits only the blocks on and below each document's
// diagonal.
func.func @document_causal(%b: index, %h: index, %q_idx: index, %kv_idx: index,
                           %document_ids: !tile.view<?x?xi32> {tile.arg = #tile.arg<captured, "document_ids">})
    -> i1 {
  %dq = tile.read %document_ids[%b, %q_idx] : !tile.view<?x?xi32> -> i32
  %dk = tile.read %document_ids[%b, %kv_idx] : !tile.view<?x?xi32> -> i32
  %same = arith.cmpi eq, %dq, %dk : i32
  %causal = arith.cmpi ule, %kv_idx, %q_idx : index
  %visible = arith.andi %same, %causal : i1
  return %visible : i1
}
