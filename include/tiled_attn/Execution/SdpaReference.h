//===- SdpaReference.h - Float64 reference for SDPA -------------*- C++ -*-===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//

#ifndef TILED_ATTN_EXECUTION_SDPAREFERENCE_H
#define TILED_ATTN_EXECUTION_SDPAREFERENCE_H

#include "tiled_attn/Dialect/Tile/IR/TileDialect.h"
#include "tiled_attn/Execution/HostExecutor.h"

#include <functional>

namespace tiled_attn::exec {

/// softmax(scale * Q Kᵀ + mask) V in float64 for [B, H, S, D] tensors,
/// written into `out` (same shape as `q`). K and V may have fewer heads,
/// H_kv dividing H: query head h reads K/V head h / (H / H_kv). A query row
/// that sees no key gets an output of zero.
/// The keys each query sees: key j from query i iff lo <= j - i <= hi.
struct Band {
  int64_t lo, hi;
};

/// The band of a causal mode for S_q queries and S_k keys: every key (none),
/// j <= i (top_left) or j <= i + S_k - S_q (bottom_right). A `window` kernel
/// takes its band as arguments: see windowBand.
Band bandOf(tile::CausalMode causal, int64_t seqQ, int64_t seqK);

/// FlashAttention's `window_size = (left, right)` (-1: no bound on that
/// side): query i sees keys i + shift - left .. i + shift + right, shift =
/// S_k - S_q when `bottomRight` and 0 otherwise; with `causal`, intersected
/// with the causal mask of the same alignment (j <= i + shift). Clamped to
/// [1 - S_q, S_k - 1], the diagonals that exist, so that any left and right
/// give small numbers.
Band windowBand(int64_t left, int64_t right, bool causal, bool bottomRight,
                int64_t seqQ, int64_t seqK);

/// Attention in float64 with the keys of `band` visible (V and `out` may
/// have a head dim of their own, D_v); a query row that
/// sees no key has an output of 0. With `softcap` > 0 each score is
/// softcap * tanh(scale * s / softcap). With `lse` ([B, H_q, S_q]), each
/// row's log-sum-exp of its scores goes there (-inf for a row with no key).
/// A score function and a mask function of (batch, head, query, key), as
/// FlexAttention's score_mod and mask_mod: the score function takes the
/// scaled score (after the softcap, when there is one) and gives the score
/// the softmax sees; the mask function says whether the query sees the key
/// (within the band). Either may be empty.
struct ScoreFunctions {
  std::function<double(double score, int64_t b, int64_t h, int64_t q,
                       int64_t kv)>
      score;
  std::function<bool(int64_t b, int64_t h, int64_t q, int64_t kv)> mask;
};

void sdpaReference(HostTensor &q, HostTensor &k, HostTensor &v, HostTensor &out,
                   double scale, Band band, double softcap = 0.0,
                   HostTensor *lse = nullptr,
                   const ScoreFunctions *functions = nullptr);

/// The gradients of sdpaReference in float64: given dO (the output's
/// gradient, shaped as the output), writes dq, dk and dv (shaped as q, k,
/// v). With grouped KV heads, a K/V head's gradients sum over its query
/// heads. A row that sees no key has zero gradients. A score function's
/// derivative is its central difference (step 1e-4 of the score: exact to
/// about 1e-8 for a smooth function).
void sdpaBackwardReference(HostTensor &q, HostTensor &k, HostTensor &v,
                           HostTensor &dOut, HostTensor &dq, HostTensor &dk,
                           HostTensor &dv, double scale, Band band,
                           double softcap = 0.0,
                           const ScoreFunctions *functions = nullptr);

/// ||a - b|| / ||b|| over all elements (||a - b|| when b is all zero).
double relativeL2(HostTensor &a, HostTensor &b);

} // namespace tiled_attn::exec

#endif // TILED_ATTN_EXECUTION_SDPAREFERENCE_H
