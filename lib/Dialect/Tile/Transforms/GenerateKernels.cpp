//===- GenerateKernels.cpp - Add kernels built from options ---------------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//

#include "tiled_attn/Dialect/Tile/Transforms/Passes.h"
#include "tiled_attn/Kernels/BlockMaskKernel.h"
#include "tiled_attn/Kernels/SdpaBackwardKernel.h"
#include "tiled_attn/Kernels/SdpaKernel.h"
#include "tiled_attn/Kernels/SplitMergeKernel.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "llvm/ADT/StringExtras.h"

namespace tiled_attn::tile {
#define GEN_PASS_DEF_TILEGENERATEBLOCKMASKPASS
#define GEN_PASS_DEF_TILEGENERATESDPABACKWARDPASS
#define GEN_PASS_DEF_TILEGENERATESDPAPASS
#define GEN_PASS_DEF_TILEGENERATESPLITMERGEPASS
#include "tiled_attn/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace tiled_attn::tile

using namespace mlir;
using namespace tiled_attn;
using namespace tiled_attn::tile;

namespace {

/// The name becomes a PTX entry point and a symbol the runtime looks up: a
/// C identifier the module does not have yet.
LogicalResult checkKernelName(ModuleOp module, StringRef pass,
                              StringRef kernelName) {
  auto identifierChar = [](char c) { return llvm::isAlnum(c) || c == '_'; };
  if (kernelName.empty() || llvm::isDigit(kernelName.front()) ||
      !llvm::all_of(kernelName, identifierChar))
    return module.emitError()
           << pass
           << ": name must be a C identifier (letters, digits and '_', not "
              "starting with a digit): it names the PTX entry point; got '"
           << kernelName << "'";
  if (module.lookupSymbol(kernelName))
    return module.emitError()
           << pass << ": the module already has a symbol named '" << kernelName
           << "'";
  return success();
}

/// The element type a generator's `dtype` option names (f16 or bf16), or
/// null after an error naming the pass.
Type elementTypeOf(ModuleOp module, StringRef pass, StringRef dtype) {
  MLIRContext *ctx = module.getContext();
  if (dtype == "f16")
    return Float16Type::get(ctx);
  if (dtype == "bf16")
    return BFloat16Type::get(ctx);
  module.emitError() << pass << ": dtype must be f16 or bf16, got '" << dtype
                     << "'";
  return Type();
}

struct TileGenerateBlockMaskPass final
    : tile::impl::TileGenerateBlockMaskPassBase<TileGenerateBlockMaskPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(checkKernelName(module, getArgument(), kernelName)))
      return signalPassFailure();
    BlockMaskKernelConfig config;
    config.maskFunction = maskFunction;
    config.name = kernelName;
    OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
    if (failed(buildBlockMaskKernel(builder, module.getLoc(), config)))
      return signalPassFailure();
  }
};

struct TileGenerateSplitMergePass final
    : tile::impl::TileGenerateSplitMergePassBase<TileGenerateSplitMergePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(checkKernelName(module, getArgument(), kernelName)))
      return signalPassFailure();
    SplitMergeKernelConfig config;
    config.headDimV = headDimV;
    config.blockM = blockM;
    config.blockD = blockD;
    config.chunksPerStep = chunksPerStep;
    config.name = kernelName;
    config.elementType = elementTypeOf(module, getArgument(), dtype);
    if (!config.elementType)
      return signalPassFailure();
    OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
    if (failed(buildSplitMergeKernel(builder, module.getLoc(), config)))
      return signalPassFailure();
  }
};

struct TileGenerateSdpaPass final
    : tile::impl::TileGenerateSdpaPassBase<TileGenerateSdpaPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SdpaKernelConfig config;
    config.headDim = headDim;
    config.headDimV = headDimV;
    config.blockM = blockM;
    config.blockN = blockN;
    config.pageSize = pageSize;
    config.name = kernelName;
    std::optional<KernelVariant> parsed = parseKernelVariant(variant);
    if (!parsed) {
      module.emitError() << "tile-generate-sdpa: variant must be "
                         << kernelVariantGrammar() << ", got '" << variant
                         << "'";
      return signalPassFailure();
    }
    config.variant = std::move(*parsed);

    config.elementType = elementTypeOf(module, getArgument(), dtype);
    if (!config.elementType)
      return signalPassFailure();

    if (failed(checkKernelName(module, getArgument(), kernelName)))
      return signalPassFailure();

    OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
    if (failed(buildSdpaKernel(builder, module.getLoc(), config)))
      return signalPassFailure();
  }
};

struct TileGenerateSdpaBackwardPass final
    : tile::impl::TileGenerateSdpaBackwardPassBase<
          TileGenerateSdpaBackwardPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (SdpaBackwardPhase phase :
         {SdpaBackwardPhase::Preprocess, SdpaBackwardPhase::Main,
          SdpaBackwardPhase::Postprocess, SdpaBackwardPhase::Dq})
      if (failed(checkKernelName(module, getArgument(),
                                 sdpaBackwardSymbol(kernelName, phase))))
        return signalPassFailure();
    SdpaBackwardKernelConfig config;
    config.headDim = headDim;
    config.headDimV = headDimV;
    config.blockM = blockM;
    config.blockN = blockN;
    config.name = kernelName;
    config.elementType = elementTypeOf(module, getArgument(), dtype);
    if (!config.elementType)
      return signalPassFailure();
    std::optional<CausalMode> mode = symbolizeCausalMode(causal);
    if (!mode) {
      module.emitError() << getArgument()
                         << ": causal must be none, top_left, bottom_right or "
                            "window, got '"
                         << causal << "'";
      return signalPassFailure();
    }
    config.causal = *mode;
    config.softcap = softcap;
    config.varlen = varlen;
    config.functions.assign(functions.begin(), functions.end());
    // A score function's gradient, from its body where the module does not
    // declare it beside the function.
    for (const std::string &name : config.functions) {
      auto fn = module.lookupSymbol<func::FuncOp>(name);
      if (fn && fn.getFunctionType().getNumResults() == 1 &&
          fn.getFunctionType().getResult(0).isF32() &&
          !module.lookupSymbol(name + "_grad") &&
          failed(tile::addScoreGradient(fn)))
        return signalPassFailure();
    }
    OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
    if (failed(buildSdpaBackwardKernels(builder, module.getLoc(), config)))
      return signalPassFailure();
  }
};

} // namespace
