// Document masking (packed sequences in one row): a query sees the keys of
// its own document. The document ids are a captured [B, S] int32 tensor,
// one id per token of the row; queries and keys index the same row (S_q =
// S_k, as in self-attention over a packed row).
func.func @document(%b: index, %h: index, %q_idx: index, %kv_idx: index,
                    %document_ids: !tile.view<?x?xi32> {tile.arg = #tile.arg<captured, "document_ids">})
    -> i1 {
  %dq = tile.read %document_ids[%b, %q_idx] : !tile.view<?x?xi32> -> i32
  %dk = tile.read %document_ids[%b, %kv_idx] : !tile.view<?x?xi32> -> i32
  %same = arith.cmpi eq, %dq, %dk : i32
  return %same : i1
}
