//===- Window.h - Masks as bands of diagonals -------------------*- C++ -*-===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Every mask the kernels compute is a band of diagonals: query row i sees
// key j iff lo <= j - i <= hi (0-based positions). With
//
//   shift = S_k - S_q  for bottom-right alignment (FlashAttention's),
//           0          for top-left (PyTorch's is_causal),
//
// FlashAttention's window_size = (left, right), -1 meaning no bound on that
// side, and a causal mask give
//
//   lo = shift - left                      (unbounded if left < 0)
//   hi = shift + right                     (unbounded if right < 0)
//   hi = min(hi, shift)                    (causal)
//
// so that causal and a window is their intersection (FlashAttention and
// transformers pass window_size = (w, w) with causal: the right side is
// then capped at the diagonal). Since j - i always lies in
// [1 - S_q, S_k - 1], the band is clamped to that range: a bound at or past
// it is no bound at all, and a very large left or right (even INT64_MAX)
// is the same as -1. Computed as visibleDiagonals does, nothing overflows:
// every intermediate value lies between -S_q and S_k. With S_q, S_k >= 1
// the clamped band is never empty (lo <= hi), though rows may see no key.
//
// A band is what the kernels of a mask compute when it is
//   none:          lo <= 1 - S_q and hi >= S_k - 1,
//   top_left:      lo <= 1 - S_q and hi == 0,
//   bottom_right:  lo <= 1 - S_q and hi == S_k - S_q,
// and otherwise a `window` kernel, which takes lo and hi as parameters
// (window_lo, window_hi) and computes any band, the three above included.
// A row whose band holds no key (and every row when lo > hi) produces 0.
//
// A variable-length batch (ta_varlen) has one S_q, S_k and shift per
// sequence b, unknown to the host, which knows only the longest lengths
// M_q >= S_q and M_k >= S_k. Its window kernels take the band relative to
// the top-left diagonal, d' = j - i - window_align * shift_b, and add the
// shift themselves. Top-left, d' = d lies in [1 - S_q, S_k - 1]; aligned
// bottom-right, d' lies in [1 - S_k, S_q - 1], the range of a top-left
// problem of S_k queries and S_q keys. So the band is visibleDiagonals'
// without a shift, on (M_q, M_k) top-left and (M_k, M_q) bottom-right: a
// bound kept is exact in every sequence, and a bound clamped away bounds
// nothing in any (its range holds every sequence's). Its mask is read the
// same way, except that the causal diagonal (hi == 0) is the alignment's:
// top_left or bottom_right, per sequence.
//
//===----------------------------------------------------------------------===//

#ifndef TILED_ATTN_LIB_RUNTIME_WINDOW_H
#define TILED_ATTN_LIB_RUNTIME_WINDOW_H

#include "tiled_attn/Kernels/KernelVariant.h"
#include "tiled_attn/Runtime/TiledAttn.h"

#include <algorithm>
#include <cstdint>

namespace tiled_attn::runtime {

/// The mask a kernel computes (its manifest entry's "causal";
/// KernelVariant.def). The first three have ta_mask's values.
using tiled_attn::KernelMask;
using tiled_attn::kernelMaskName;
static_assert(static_cast<int>(KernelMask::None) == TA_MASK_NONE &&
                  static_cast<int>(KernelMask::TopLeft) ==
                      TA_MASK_CAUSAL_TOP_LEFT &&
                  static_cast<int>(KernelMask::BottomRight) ==
                      TA_MASK_CAUSAL_BOTTOM_RIGHT,
              "KernelVariant.def's masks have ta_mask's values");

/// The diagonals d = j - i (key j, query i) a query row sees: lo <= d <= hi.
struct Diagonals {
  int64_t lo = 0;
  int64_t hi = 0;

  bool operator==(const Diagonals &other) const {
    return lo == other.lo && hi == other.hi;
  }
};

/// The band of a causal mask and/or a window on a problem of `seqQ` queries
/// and `seqK >= 1` keys, clamped to [1 - seqQ, seqK - 1]: see the file
/// comment. `left` and `right` are FlashAttention's window_size, a negative
/// one meaning no bound on that side (both negative: no window).
/// `bottomRight` aligns both the causal diagonal and the window.
inline Diagonals visibleDiagonals(int64_t seqQ, int64_t seqK, bool causal,
                                  bool bottomRight, int64_t left,
                                  int64_t right) {
  const int64_t shift = bottomRight ? seqK - seqQ : 0;
  // lo = shift - left is a bound only while it is >= 1 - seqQ, that is,
  // left <= shift + seqQ - 1; then shift - left = (shift + seqQ - left) -
  // seqQ, the parenthesis in [1, seqK].
  Diagonals band{1 - seqQ, seqK - 1};
  const int64_t maxLeft = (bottomRight ? seqK : seqQ) - 1;
  if (left >= 0 && left <= maxLeft)
    band.lo = ((maxLeft + 1) - left) - seqQ;
  // hi = shift + right is a bound only while it is <= seqK - 1, that is,
  // right <= seqK - 1 - shift; then shift + right = (seqK - 1) - (maxRight
  // - right).
  const int64_t maxRight = (bottomRight ? seqQ : seqK) - 1;
  if (right >= 0 && right <= maxRight)
    band.hi = (seqK - 1) - (maxRight - right);
  if (causal)
    band.hi = std::min(band.hi, shift);
  return band;
}

/// The mask of the kernels that compute `band` (clamped, as
/// visibleDiagonals gives it) on `seqQ` queries and `seqK` keys.
inline KernelMask neededMask(const Diagonals &band, int64_t seqQ,
                             int64_t seqK) {
  if (band.lo > 1 - seqQ)
    return KernelMask::Window;
  if (band.hi >= seqK - 1)
    return KernelMask::None;
  if (band.hi == 0)
    return KernelMask::TopLeft;
  if (band.hi == seqK - seqQ)
    return KernelMask::BottomRight;
  return KernelMask::Window;
}

/// The band of a variable-length batch whose sequences are at most `maxQ`
/// queries and `maxK >= 1` keys long, relative to each sequence's top-left
/// diagonal (see the file comment); visibleDiagonals' other arguments.
inline Diagonals varlenDiagonals(int64_t maxQ, int64_t maxK, bool causal,
                                 bool bottomRight, int64_t left,
                                 int64_t right) {
  return bottomRight ? visibleDiagonals(maxK, maxQ, causal, false, left, right)
                     : visibleDiagonals(maxQ, maxK, causal, false, left, right);
}

/// The mask of the kernels that compute `band` (as varlenDiagonals gives
/// it) on every sequence of such a batch.
inline KernelMask neededVarlenMask(const Diagonals &band, int64_t maxQ,
                                   int64_t maxK, bool bottomRight) {
  const int64_t rows = bottomRight ? maxK : maxQ;
  const int64_t keys = bottomRight ? maxQ : maxK;
  if (band.lo > 1 - rows)
    return KernelMask::Window;
  if (band.hi >= keys - 1)
    return KernelMask::None;
  if (band.hi == 0)
    return bottomRight ? KernelMask::BottomRight : KernelMask::TopLeft;
  return KernelMask::Window;
}

} // namespace tiled_attn::runtime

#endif // TILED_ATTN_LIB_RUNTIME_WINDOW_H
