//===- Pipelines.cpp - Named pass pipelines -------------------------------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//

#include "tiled_attn/Pipelines/Pipelines.h"
#include "tiled_attn/Dialect/Tile/Transforms/Passes.h"

#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace tiled_attn;

void tiled_attn::buildTileSchedulePipeline(OpPassManager &pm,
                                           const TileScheduleOptions &options) {
  OpPassManager &fpm = pm.nest<func::FuncOp>();
  // Retiling understands only the generator's canonical form, so it comes
  // first; the causal split must see the unpipelined loop.
  if (options.blockM || options.blockN)
    fpm.addPass(tile::createTileRetilePass(
        {/*blockM=*/options.blockM, /*blockN=*/options.blockN}));
  if (options.causalSplit)
    fpm.addPass(tile::createTileCausalSplitPass());
  if (options.exp2)
    fpm.addPass(tile::createTileExp2Pass());
  if (options.lazyRescale)
    fpm.addPass(tile::createTileLazyRescalePass({options.lazyRescale}));
  fpm.addPass(tile::createTileHoistInvariantsPass());
  if (options.stages != 1)
    fpm.addPass(tile::createTilePrefetchPass({options.stages}));
  if (options.decompose)
    fpm.addPass(tile::createTileDecomposeOnlineSoftmaxPass());
  fpm.addPass(createCSEPass());
}

void tiled_attn::registerTilePipelines() {
  PassPipelineRegistration<TileScheduleOptions>(
      "tile-schedule",
      "Apply an SDPA schedule (block sizes, causal split, exp2, lazy "
      "rescale, K/V prefetch) and decompose the online softmax",
      buildTileSchedulePipeline);
}
