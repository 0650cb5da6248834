//===- SdpaReference.cpp - Float64 reference for SDPA ---------------------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//

#include "tiled_attn/Execution/SdpaReference.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace tiled_attn;
using namespace tiled_attn::exec;

Band tiled_attn::exec::bandOf(tile::CausalMode causal, int64_t seqQ,
                              int64_t seqK) {
  switch (causal) {
  case tile::CausalMode::TopLeft:
    return windowBand(-1, -1, /*causal=*/true, /*bottomRight=*/false, seqQ,
                      seqK);
  case tile::CausalMode::BottomRight:
    return windowBand(-1, -1, /*causal=*/true, /*bottomRight=*/true, seqQ,
                      seqK);
  default:
    return windowBand(-1, -1, /*causal=*/false, /*bottomRight=*/false, seqQ,
                      seqK);
  }
}

Band tiled_attn::exec::windowBand(int64_t left, int64_t right, bool causal,
                                  bool bottomRight, int64_t seqQ,
                                  int64_t seqK) {
  int64_t shift = bottomRight ? seqK - seqQ : 0;
  int64_t first = 1 - seqQ, last = seqK - 1; // the diagonals that exist
  // A side past every diagonal is no bound at all; checking that first
  // keeps huge values from overflowing.
  Band band{first, last};
  if (left >= 0 && left <= seqQ + seqK)
    band.lo = std::max(first, shift - left);
  if (right >= 0 && right <= seqQ + seqK)
    band.hi = std::min(last, shift + right);
  if (causal)
    band.hi = std::min(band.hi, shift);
  return band;
}

void tiled_attn::exec::sdpaReference(HostTensor &q, HostTensor &k,
                                     HostTensor &v, HostTensor &out,
                                     double scale, Band band, double softcap,
                                     HostTensor *lse,
                                     const ScoreFunctions *functions) {
  int64_t batch = q.sizes[0], heads = q.sizes[1], seqQ = q.sizes[2],
          seqK = k.sizes[2], dim = q.sizes[3], dimV = v.sizes[3];
  // Grouped KV heads: query head h reads K/V head h / (H_q / H_kv).
  int64_t group = heads / k.sizes[1];
  std::vector<double> scores(seqK);
  const double minusInf = -std::numeric_limits<double>::infinity();
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t i = 0; i < seqQ; ++i) {
        // Query i sees keys [i + lo, i + hi] within [0, S_k).
        int64_t first = std::clamp<int64_t>(i + band.lo, 0, seqK);
        int64_t end = std::clamp<int64_t>(i + band.hi + 1, first, seqK);
        double maxScore = -std::numeric_limits<double>::infinity();
        for (int64_t j = first; j < end; ++j) {
          double s = 0.0;
          for (int64_t d = 0; d < dim; ++d)
            s += q.at({b, h, i, d}) * k.at({b, h / group, j, d});
          scores[j] = softcap > 0.0 ? softcap * std::tanh(s * scale / softcap)
                                    : s * scale;
          if (functions && functions->score)
            scores[j] = functions->score(scores[j], b, h, i, j);
          if (functions && functions->mask && !functions->mask(b, h, i, j))
            scores[j] = minusInf;
          maxScore = std::max(maxScore, scores[j]);
        }
        // A row whose every key is masked sees no key.
        if (maxScore == minusInf)
          end = first;
        double sum = 0.0;
        for (int64_t j = first; j < end; ++j) {
          scores[j] = std::exp(scores[j] - maxScore);
          sum += scores[j];
        }
        for (int64_t d = 0; d < dimV; ++d) {
          double acc = 0.0;
          for (int64_t j = first; j < end; ++j)
            acc += scores[j] * v.at({b, h / group, j, d});
          out.at({b, h, i, d}) = end == first ? 0.0 : acc / sum;
        }
        if (lse)
          lse->at({b, h, i}) = end == first
                                   ? -std::numeric_limits<double>::infinity()
                                   : maxScore + std::log(sum);
      }
}

void tiled_attn::exec::sdpaBackwardReference(HostTensor &q, HostTensor &k,
                                             HostTensor &v, HostTensor &dOut,
                                             HostTensor &dq, HostTensor &dk,
                                             HostTensor &dv, double scale,
                                             Band band, double softcap,
                                             const ScoreFunctions *functions) {
  int64_t batch = q.sizes[0], heads = q.sizes[1], seqQ = q.sizes[2],
          seqK = k.sizes[2], dim = q.sizes[3], dimV = v.sizes[3];
  int64_t group = heads / k.sizes[1];
  std::fill(dq.data.begin(), dq.data.end(), 0.0);
  std::fill(dk.data.begin(), dk.data.end(), 0.0);
  std::fill(dv.data.begin(), dv.data.end(), 0.0);
  std::vector<double> p(seqK), dp(seqK), capSlope(seqK, 1.0),
      fnSlope(seqK, 1.0);
  std::vector<bool> seen(seqK, true);
  const double minusInf = -std::numeric_limits<double>::infinity();
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t i = 0; i < seqQ; ++i) {
        int64_t first = std::clamp<int64_t>(i + band.lo, 0, seqK);
        int64_t end = std::clamp<int64_t>(i + band.hi + 1, first, seqK);
        if (end == first)
          continue;
        const int64_t hk = h / group;
        // P = softmax(scale * q_i K^T) over the keys the row sees.
        double top = -std::numeric_limits<double>::infinity();
        for (int64_t j = first; j < end; ++j) {
          double s = 0.0;
          for (int64_t d = 0; d < dim; ++d)
            s += q.at({b, h, i, d}) * k.at({b, hk, j, d});
          p[j] = s * scale;
          if (softcap > 0.0) {
            // softcap * tanh(x / softcap), whose slope is 1 - tanh^2.
            double t = std::tanh(p[j] / softcap);
            p[j] = softcap * t;
            capSlope[j] = 1.0 - t * t;
          }
          if (functions && functions->score) {
            const double x = p[j], step = 1e-4;
            p[j] = functions->score(x, b, h, i, j);
            fnSlope[j] = (functions->score(x + step, b, h, i, j) -
                          functions->score(x - step, b, h, i, j)) /
                         (2 * step);
          }
          seen[j] = !functions || !functions->mask ||
                    functions->mask(b, h, i, j);
          if (!seen[j])
            p[j] = minusInf;
          top = std::max(top, p[j]);
        }
        // (A row whose every key is masked sees no key.)
        if (top == minusInf)
          continue;
        double sum = 0.0;
        for (int64_t j = first; j < end; ++j)
          sum += p[j] = seen[j] ? std::exp(p[j] - top) : 0.0;
        for (int64_t j = first; j < end; ++j)
          p[j] /= sum;
        // dP = dO_i V^T; delta = sum_j P_j dP_j (= dO_i . O_i).
        double delta = 0.0;
        for (int64_t j = first; j < end; ++j) {
          double x = 0.0;
          for (int64_t d = 0; d < dimV; ++d)
            x += dOut.at({b, h, i, d}) * v.at({b, hk, j, d});
          dp[j] = x;
          delta += p[j] * x;
        }
        for (int64_t j = first; j < end; ++j) {
          // dS = P (dP - delta); the scores' gradient is scale * dS.
          double ds =
              p[j] * (dp[j] - delta) * fnSlope[j] * capSlope[j] * scale;
          for (int64_t d = 0; d < dim; ++d) {
            dq.at({b, h, i, d}) += ds * k.at({b, hk, j, d});
            dk.at({b, hk, j, d}) += ds * q.at({b, h, i, d});
          }
          for (int64_t d = 0; d < dimV; ++d)
            dv.at({b, hk, j, d}) += p[j] * dOut.at({b, h, i, d});
        }
      }
}

double tiled_attn::exec::relativeL2(HostTensor &a, HostTensor &b) {
  double diff = 0.0, norm = 0.0;
  int64_t batch = b.sizes[0], heads = b.sizes[1], seq = b.sizes[2],
          dim = b.sizes[3];
  for (int64_t i0 = 0; i0 < batch; ++i0)
    for (int64_t i1 = 0; i1 < heads; ++i1)
      for (int64_t i2 = 0; i2 < seq; ++i2)
        for (int64_t i3 = 0; i3 < dim; ++i3) {
          double x = a.at({i0, i1, i2, i3}), y = b.at({i0, i1, i2, i3});
          diff += (x - y) * (x - y);
          norm += y * y;
        }
  return norm == 0.0 ? std::sqrt(diff) : std::sqrt(diff / norm);
}
