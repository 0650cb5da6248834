//===- tiled-attn-opt.cpp - The tiled-attn optimizer driver ---------------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Registers the tile dialect and its passes, the test passes of test/lib,
// plus only the upstream dialects and passes that tiled-attn's pipelines use.
//
//===----------------------------------------------------------------------===//

#include "tiled_attn/Conversion/Passes.h"
#include "tiled_attn/Dialect/Tile/IR/TileDialect.h"
#include "tiled_attn/Dialect/Tile/Transforms/Passes.h"
#include "tiled_attn/Dialect/TileGPU/Transforms/Passes.h"
#include "tiled_attn/Pipelines/Pipelines.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/Pipelines/Passes.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

namespace tiled_attn::test {
void registerTestTileGPULayoutsPass();
} // namespace tiled_attn::test

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  tiled_attn::registerTiledAttnDialects(registry);
  tiled_attn::initializeNVPTXToolchain();

  tiled_attn::tile::registerTilePasses();
  tiled_attn::tilegpu::registerTileGPUPasses();
  tiled_attn::registerTilePipelines();
  tiled_attn::registerTiledAttnConversionPasses();
  tiled_attn::test::registerTestTileGPULayoutsPass();
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  mlir::registerLoopInvariantCodeMotionPass();
  mlir::registerSymbolDCEPass();
  mlir::gpu::registerGPUToNVVMPipeline();

  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "tiled-attn optimizer driver\n", registry));
}
