//===- SdpaReference.cpp - Float64 reference for SDPA ---------------------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//

#include "tiled_attn/Execution/SdpaReference.h"

#include <cmath>
#include <limits>

using namespace tiled_attn;
using namespace tiled_attn::exec;

void tiled_attn::exec::sdpaReference(HostTensor &q, HostTensor &k,
                                     HostTensor &v, HostTensor &out,
                                     double scale, tile::CausalMode causal) {
  int64_t batch = q.sizes[0], heads = q.sizes[1], seqQ = q.sizes[2],
          seqK = k.sizes[2], dim = q.sizes[3];
  // Grouped KV heads: query head h reads K/V head h / (H_q / H_kv).
  int64_t group = heads / k.sizes[1];
  // Query i sees key j when j <= i + shift.
  int64_t shift = causal == tile::CausalMode::BottomRight ? seqK - seqQ : 0;
  std::vector<double> scores(seqK);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t i = 0; i < seqQ; ++i) {
        int64_t visible = seqK;
        if (causal != tile::CausalMode::None)
          visible = std::clamp<int64_t>(i + shift + 1, 0, seqK);
        double maxScore = -std::numeric_limits<double>::infinity();
        for (int64_t j = 0; j < visible; ++j) {
          double s = 0.0;
          for (int64_t d = 0; d < dim; ++d)
            s += q.at({b, h, i, d}) * k.at({b, h / group, j, d});
          scores[j] = s * scale;
          maxScore = std::max(maxScore, scores[j]);
        }
        double sum = 0.0;
        for (int64_t j = 0; j < visible; ++j) {
          scores[j] = std::exp(scores[j] - maxScore);
          sum += scores[j];
        }
        for (int64_t d = 0; d < dim; ++d) {
          double acc = 0.0;
          for (int64_t j = 0; j < visible; ++j)
            acc += scores[j] * v.at({b, h / group, j, d});
          out.at({b, h, i, d}) = visible == 0 ? 0.0 : acc / sum;
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
