//===- Splits.h - Split-KV: how many chunks, and their workspace -*- C++
//-*-===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// A problem whose grid leaves most SMs idle (decode: a few query rows per
// head, few heads, small batch) splits its keys into chunks: program
// (m, h * s + c, b) attends to chunk c of s and writes a partial output (f32)
// and log-sum-exps into a workspace; a merge kernel combines the chunks
// (tile-generate-split-merge).
//
// The heuristic (chooseNumSplits), FlashAttention's in spirit, on the
// programs of the unsplit grid (`tiles`), the split kernel's key blocks and
// the device's SM count:
//   1. no split when the grid already fills 80% of the SMs, or when the
//      keys are too few to give two chunks of kMinBlocksPerSplit blocks
//      (the merge's launch and the partials' traffic would cost more than
//      the idle SMs);
//   2. otherwise, for s from 1 to the most splits (kMaxSplits, and
//      kMinBlocksPerSplit key blocks per chunk), the wave efficiency
//      tiles * s / (SMs * ceil(tiles * s / SMs)), the fraction of the last
//      wave's SMs that are busy; the fewest splits whose efficiency is at
//      least 85% of the best one win (fewer chunks: less to merge);
//   3. then balanced chunks: of the splits with as many waves and as many
//      merge steps (kMergeChunksPerStep chunks a step), the fewest whose
//      longest chunk is shortest (32 key blocks: 8 chunks of 4 blocks, not
//      7 of up to 5; H200, batch 1, 4k keys: 16.4 us against 17.5).
//
//===----------------------------------------------------------------------===//

#ifndef TILED_ATTN_LIB_RUNTIME_SPLITS_H
#define TILED_ATTN_LIB_RUNTIME_SPLITS_H

#include <cstdint>

namespace tiled_attn::runtime {

/// The most chunks the heuristic chooses.
constexpr int32_t kMaxSplits = 128;
/// The fewest key blocks of the split kernel a chunk gets from the
/// heuristic.
constexpr int64_t kMinBlocksPerSplit = 4;
/// The chunks a library merge reads a step (SplitMergeKernel.cpp: its
/// 16 x 16 blocks take 8); a mismatch costs time, not correctness.
constexpr int64_t kMergeChunksPerStep = 8;

/// The number of chunks (1: no split) for `tiles` programs of the unsplit
/// grid, `keyBlocks` key blocks of the split kernel, on `smCount` SMs.
int32_t chooseNumSplits(int64_t tiles, int64_t keyBlocks, int64_t smCount);

/// The workspace of `splits` chunks of a [batch, heads, rows, headDimV]
/// output: the partial outputs, f32 [batch, heads * splits, rows,
/// headDimV], then the partial log-sum-exps, f32 [batch, heads * splits,
/// rows], each starting 256-byte aligned. Returns false on overflow.
struct SplitWorkspace {
  uint64_t partialOutputOffset = 0, partialLseOffset = 0, bytes = 0;
};
bool splitWorkspace(int64_t batch, int64_t heads, int64_t rows,
                    int64_t headDimV, int64_t splits, SplitWorkspace &out);

} // namespace tiled_attn::runtime

#endif // TILED_ATTN_LIB_RUNTIME_SPLITS_H
