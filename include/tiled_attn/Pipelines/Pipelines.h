//===- Pipelines.h - Named pass pipelines -----------------------*- C++ -*-===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//

#ifndef TILED_ATTN_PIPELINES_PIPELINES_H
#define TILED_ATTN_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace tiled_attn {

/// Every schedule knob of an SDPA kernel, as one option string:
///   tile-schedule{block-m=128 block-n=64 causal-split=1 exp2=1
///                 lazy-rescale=8 stages=2}
struct TileScheduleOptions
    : public mlir::PassPipelineOptions<TileScheduleOptions> {
  Option<int64_t> blockM{*this, "block-m",
                         llvm::cl::desc("BLOCK_M (0 keeps the kernel's)"),
                         llvm::cl::init(0)};
  Option<int64_t> blockN{*this, "block-n",
                         llvm::cl::desc("BLOCK_N (0 keeps the kernel's)"),
                         llvm::cl::init(0)};
  Option<bool> causalSplit{
      *this, "causal-split",
      llvm::cl::desc("Split causal K/V loops into unmasked and diagonal "
                     "blocks and skip hidden ones"),
      llvm::cl::init(false)};
  Option<bool> exp2{*this, "exp2",
                    llvm::cl::desc("exp2 with the scale folded into an FMA"),
                    llvm::cl::init(false)};
  Option<int64_t> lazyRescale{
      *this, "lazy-rescale",
      llvm::cl::desc("Lazy rescale threshold in log2 units (0: off)"),
      llvm::cl::init(0)};
  Option<int64_t> stages{*this, "stages",
                         llvm::cl::desc("K/V blocks in flight (1: none)"),
                         llvm::cl::init(1)};
  Option<bool> decompose{
      *this, "decompose",
      llvm::cl::desc("Decompose the online softmax at the end"),
      llvm::cl::init(true)};
};

/// retile -> causal split -> exp2 -> lazy rescale -> hoist -> prefetch ->
/// decompose, each step only where its knob asks for it.
void buildTileSchedulePipeline(mlir::OpPassManager &pm,
                               const TileScheduleOptions &options);

/// Registers `tile-schedule` with the pass registry.
void registerTilePipelines();

} // namespace tiled_attn

#endif // TILED_ATTN_PIPELINES_PIPELINES_H
