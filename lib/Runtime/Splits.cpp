//===- Splits.cpp - Split-KV: how many chunks, and their workspace --------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//

#include "Splits.h"

#include <algorithm>

using namespace tiled_attn::runtime;

int32_t tiled_attn::runtime::chooseNumSplits(int64_t tiles, int64_t keyBlocks,
                                             int64_t smCount) {
  if (tiles <= 0 || keyBlocks <= 0 || smCount <= 0)
    return 1;
  // The grid fills the SMs already (10 * tiles >= 8 * SMs, exactly).
  if (tiles * 10 >= smCount * 8)
    return 1;
  const int64_t most =
      std::min<int64_t>(kMaxSplits, keyBlocks / kMinBlocksPerSplit);
  if (most < 2)
    return 1;
  auto efficiency = [&](int64_t splits) {
    int64_t programs = tiles * splits;
    int64_t waves = (programs + smCount - 1) / smCount;
    return static_cast<double>(programs) / static_cast<double>(waves * smCount);
  };
  auto waves = [&](int64_t splits) {
    return (tiles * splits + smCount - 1) / smCount;
  };
  auto longest = [&](int64_t splits) {
    return (keyBlocks + splits - 1) / splits;
  };
  auto mergeSteps = [&](int64_t splits) {
    return (splits + kMergeChunksPerStep - 1) / kMergeChunksPerStep;
  };
  double best = 0.0;
  for (int64_t s = 1; s <= most; ++s)
    best = std::max(best, efficiency(s));
  int64_t chosen = 1;
  for (int64_t s = 1; s <= most; ++s)
    if (efficiency(s) >= 0.85 * best) {
      chosen = s;
      break;
    }
  // Balanced chunks: the fewest chunks of the shortest longest chunk among
  // those of the same waves and merge steps (32 blocks: 8 chunks of 4, not
  // 7 of up to 5).
  int64_t balanced = chosen;
  for (int64_t s = chosen + 1; s <= most; ++s)
    if (waves(s) == waves(chosen) && mergeSteps(s) == mergeSteps(chosen) &&
        longest(s) < longest(balanced))
      balanced = s;
  return static_cast<int32_t>(balanced);
}

bool tiled_attn::runtime::splitWorkspace(int64_t batch, int64_t heads,
                                         int64_t rows, int64_t headDimV,
                                         int64_t splits, SplitWorkspace &out) {
  auto alignUp = [](uint64_t bytes) { return (bytes + 255) / 256 * 256; };
  int64_t rowsTotal = 0, outputElements = 0;
  if (batch < 0 || heads < 0 || rows < 0 || headDimV < 0 || splits < 1 ||
      __builtin_mul_overflow(batch, heads, &rowsTotal) ||
      __builtin_mul_overflow(rowsTotal, splits, &rowsTotal) ||
      __builtin_mul_overflow(rowsTotal, rows, &rowsTotal) ||
      __builtin_mul_overflow(rowsTotal, headDimV, &outputElements) ||
      outputElements > INT64_MAX / 8 || rowsTotal > INT64_MAX / 8)
    return false;
  out.partialOutputOffset = 0;
  out.partialLseOffset = alignUp(static_cast<uint64_t>(outputElements) * 4);
  out.bytes =
      out.partialLseOffset + alignUp(static_cast<uint64_t>(rowsTotal) * 4);
  return true;
}
