// The SDPA forward kernel, written by hand in the tile dialect, to be read
// line by line against FlashAttention-2's forward pass (Dao, 2023,
// Algorithm 1). It computes, for every batch b and head h,
//
//   O = softmax(scale * Q Kᵀ + causal mask) V
//
// with Q, K, V, O of shape [B, H, S, 64] in f16, causal with PyTorch's
// (top-left) alignment: query i sees keys j <= i.
//
// One program instance computes one block of 64 query rows of one (b, h); the
// launch grid is (ceil(S_q / 64), H, B). Keys and values stream through in
// blocks of 32, while an online softmax keeps, for each query row, the
// running max m and the running sum l of exp(score - m).
//
// Run it on the host against a float64 reference:
//   tiled-attn-run examples/sdpa_fwd.mlir --shapes=17x17,100x37

// Each argument carries its role (#tile.arg): the passes, the kernel ABI
// and the runtime know arguments by it, not by their position.
func.func @sdpa_fwd(
    %q: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<q>},  // [B, H, S_q, 64]
    %k: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<k>},  // [B, H, S_k, 64]
    %v: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<v>},  // [B, H, S_k, 64]
    %o: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<o>},  // [B, H, S_q, 64]
    %scale: f32 {tile.arg = #tile.arg<scale>})               // usually 1/sqrt(64)
    attributes {tile.sdpa = #tile.sdpa<head_dim = 64, element_type = f16,
                                       causal = top_left,
                                       block_m = 64, block_n = 32>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index                  // block_n
  %c64 = arith.constant 64 : index                  // block_m

  // Which block of query rows, which head, which batch entry.
  %m_blk = tile.block_id x
  %h = tile.block_id y
  %b = tile.block_id z
  %seq_k = tile.dim %k[2] : !tile.view<?x?x?x64xf16>

  // Algorithm 1, line 4: load Q_i, the 64 query rows of this block, once.
  // Rows past S_q read as zero; their results are never stored.
  %q_i = tile.load %q[%b, %h, %m_blk, %c0] pad(0.0)
      : !tile.view<?x?x?x64xf16> -> tensor<64x64xf16>

  // Line 5: the running statistics and the output accumulator.
  //   m = -inf, l = 0, acc = 0 (acc in f32, as the matrix units accumulate)
  %m_init = arith.constant dense<0xFF800000> : tensor<64xf32>
  %l_init = arith.constant dense<0.0> : tensor<64xf32>
  %acc_init = arith.constant dense<0.0> : tensor<64x64xf32>
  %s_zero = arith.constant dense<0.0> : tensor<64x32xf32>
  %s_masked = arith.constant dense<0xFF800000> : tensor<64x32xf32>

  // Line 6: loop over the key blocks j = 0 .. ceil(S_k / 32) - 1.
  %n_blocks = arith.ceildivui %seq_k, %c32 : index
  %q_row0 = arith.muli %m_blk, %c64 : index          // first query of the block
  %res:3 = scf.for %j = %c0 to %n_blocks step %c1
      iter_args(%m = %m_init, %l = %l_init, %acc = %acc_init)
      -> (tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>) {
    // Line 7: load K_j, transposed on the way in, so that Q_i K_jᵀ is a
    // plain 64x64 times 64x32 product. Keys past S_k read as zero.
    %kt = tile.load %k[%b, %h, %j, %c0] pad(0.0) transpose
        : !tile.view<?x?x?x64xf16> -> tensor<64x32xf16>

    // Line 8: S_ij = Q_i K_jᵀ, accumulated in f32. (The scale is applied
    // inside the online softmax below.)
    %s = tile.mma %q_i, %kt, %s_zero
        : tensor<64x64xf16>, tensor<64x32xf16> -> tensor<64x32xf32>

    // Masks: keys past S_k do not exist; keys after the query are hidden by
    // the causal mask. Both become -inf, which the softmax turns into 0.
    %k_col0 = arith.muli %j, %c32 : index           // first key of the block
    %key_exists = tile.bounds_mask offsets(%k_col0) limits(%seq_k) : tensor<32xi1>
    %in_bounds = tile.broadcast %key_exists along 0 : tensor<32xi1> -> tensor<64x32xi1>
    %visible = tile.causal_mask %q_row0, %k_col0 : tensor<64x32xi1>
    %keep = arith.andi %in_bounds, %visible : tensor<64x32xi1>
    %s_m = arith.select %keep, %s, %s_masked : tensor<64x32xi1>, tensor<64x32xf32>

    // Lines 9-10: the online softmax step.
    //   m_new = max(m, rowmax(scale * S))
    //   P     = exp(scale * S - m_new)
    //   alpha = exp(m - m_new)            (how much the old max was too small)
    //   l_new = alpha * l + rowsum(P)
    %m_new, %l_new, %p, %alpha = tile.online_softmax %s_m, %m, %l scale(%scale)
        : tensor<64x32xf32>, tensor<64xf32>

    // Line 10 (continued): acc = diag(alpha) acc + P V_j, with P rounded to
    // f16 for the matrix unit, as FlashAttention does.
    %v_j = tile.load %v[%b, %h, %j, %c0] pad(0.0)
        : !tile.view<?x?x?x64xf16> -> tensor<32x64xf16>
    %p16 = arith.truncf %p : tensor<64x32xf32> to tensor<64x32xf16>
    %alpha_b = tile.broadcast %alpha along 1 : tensor<64xf32> -> tensor<64x64xf32>
    %acc_scaled = arith.mulf %acc, %alpha_b : tensor<64x64xf32>
    %acc_new = tile.mma %p16, %v_j, %acc_scaled
        : tensor<64x32xf16>, tensor<32x64xf16> -> tensor<64x64xf32>
    scf.yield %m_new, %l_new, %acc_new
        : tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>
  }

  // Line 12: O_i = diag(l)^-1 acc. A row that saw no key at all (l = 0)
  // would divide 0 by 0; its output is defined as 0.
  %l_b = tile.broadcast %res#1 along 1 : tensor<64xf32> -> tensor<64x64xf32>
  %o_f32 = arith.divf %res#2, %l_b : tensor<64x64xf32>
  %no_key = arith.cmpf oeq, %l_b, %acc_init : tensor<64x64xf32>
  %o_safe = arith.select %no_key, %acc_init, %o_f32 : tensor<64x64xi1>, tensor<64x64xf32>
  %o_i = arith.truncf %o_safe : tensor<64x64xf32> to tensor<64x64xf16>

  // Line 14: write O_i. Rows past S_q fall outside the view and are not
  // written.
  tile.store %o_i, %o[%b, %h, %m_blk, %c0]
      : tensor<64x64xf16>, !tile.view<?x?x?x64xf16>
  return
}
