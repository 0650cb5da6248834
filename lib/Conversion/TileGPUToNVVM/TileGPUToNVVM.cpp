//===- TileGPUToNVVM.cpp - The convert-tilegpu-to-nvvm pass ---------------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Moves each GPU-level kernel into a gpu.module as a gpu.func and converts
// its body with the memory patterns, the patterns of the module's
// matrix-unit family and the elementwise patterns. Every decision was made
// by earlier passes and is in the IR: layouts, buffers and their offsets,
// copies, waits and their counts, barriers.
//
//===----------------------------------------------------------------------===//

#include "tiled_attn/Conversion/TileGPUToNVVM/TileGPUToNVVM.h"
#include "tiled_attn/Conversion/Passes.h"
#include "tiled_attn/Dialect/Tile/IR/TileOps.h"
#include "tiled_attn/Dialect/TileGPU/IR/TileGPUOps.h"
#include "tiled_attn/Target/TargetInfo.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace tiled_attn {
#define GEN_PASS_DEF_CONVERTTILEGPUTONVVMPASS
#include "tiled_attn/Conversion/Passes.h.inc"
} // namespace tiled_attn

using namespace mlir;
using namespace tiled_attn;
using namespace tiled_attn::tilegpu;

namespace {

/// Checks that `func` is a GPU-level kernel: no results, its warps known.
FailureOr<int64_t> checkKernel(func::FuncOp func) {
  if (func.getNumResults() != 0)
    return func.emitError() << "convert-tilegpu-to-nvvm: a kernel returns "
                               "nothing, '"
                            << func.getName() << "' returns "
                            << func.getNumResults() << " values";
  int64_t warps = kernelWarps(func);
  if (warps == 0)
    return func.emitError() << "convert-tilegpu-to-nvvm: '" << func.getName()
                            << "' has no tilegpu.warps; run "
                               "tilegpu-assign-layouts first";
  if (!func->hasAttr(TileGPUDialect::getSharedBytesAttrName()))
    return func.emitError() << "convert-tilegpu-to-nvvm: '" << func.getName()
                            << "' has no tilegpu.shared_bytes; run "
                               "tilegpu-allocate-memory first";
  // Turns and group barriers both take the named barriers after the
  // roles'.
  Operation *turn = nullptr, *groupBarrier = nullptr;
  func.walk([&](Operation *op) {
    if (isa<TurnStartOp, TurnTakeOp, TurnPassOp>(op))
      turn = op;
    if (auto barrier = dyn_cast<GroupBarrierOp>(op);
        barrier && barrier.getGroups() > 1)
      groupBarrier = op;
  });
  if (turn && groupBarrier) {
    InFlightDiagnostic diag =
        groupBarrier->emitError()
        << "convert-tilegpu-to-nvvm: group barriers and warpgroup turns "
           "(ping-pong) in one kernel would share named barriers";
    diag.attachNote(turn->getLoc()) << "a turn";
    return diag;
  }
  WalkResult walk = func.walk([&](Operation *op) {
    for (Type type : op->getResultTypes())
      if (auto tensor = dyn_cast<RankedTensorType>(type);
          tensor && !getDistributedLayout(tensor)) {
        op->emitError() << "convert-tilegpu-to-nvvm: " << tensor
                        << " is not in registers; run "
                           "tilegpu-assign-layouts and "
                           "convert-tile-to-tilegpu first";
        return WalkResult::interrupt();
      }
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  return warps;
}

struct ConvertTileGPUToNVVMPass final
    : tiled_attn::impl::ConvertTileGPUToNVVMPassBase<ConvertTileGPUToNVVMPass> {
  using Base::Base;
  void runOnOperation() override;
};

void ConvertTileGPUToNVVMPass::runOnOperation() {
  ModuleOp module = getOperation();
  MLIRContext *ctx = &getContext();
  SmallVector<func::FuncOp> kernels;
  for (auto func : module.getOps<func::FuncOp>())
    if (!func.isExternal())
      kernels.push_back(func);
  if (exp2PolyEvery < 0) {
    module.emitError() << "convert-tilegpu-to-nvvm: exp2-poly-every must be "
                          "0 (off) or a positive register stride, got "
                       << int64_t{exp2PolyEvery};
    return signalPassFailure();
  }
  if (kernels.empty())
    return;
  TargetAttr target = getTarget(module);
  if (!target) {
    module.emitError() << "convert-tilegpu-to-nvvm: the module has no "
                          "#tilegpu.target; run tilegpu-attach-target first";
    return signalPassFailure();
  }

  TileGPUToNVVMTypeConverter converter;
  OpBuilder b(ctx);
  b.setInsertionPointToEnd(module.getBody());
  auto gpuModule = gpu::GPUModuleOp::create(b, module.getLoc(), "tiled_attn");
  module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                  b.getUnitAttr());
  for (func::FuncOp func : kernels) {
    FailureOr<int64_t> warps = checkKernel(func);
    if (failed(warps))
      return signalPassFailure();
    b.setInsertionPointToEnd(gpuModule.getBody());
    FailureOr<gpu::GPUFuncOp> kernel =
        createKernelWithExplicitParams(b, func, converter);
    if (failed(kernel))
      return signalPassFailure();
    (*kernel)->setAttr(gpu::GPUDialect::getKernelFuncAttrName(),
                       b.getUnitAttr());
    // The parameter list again as a function attribute, which outlives the
    // lowering to llvm.func (argument attributes do not).
    SmallVector<Attribute> params;
    for (unsigned i = 0, e = kernel->getNumArguments(); i < e; ++i)
      params.push_back(
          kernel->getArgAttr(i, TileGPUDialect::getParamAttrName()));
    (*kernel)->setAttr(TileGPUDialect::getParamsAttrName(),
                       b.getArrayAttr(params));
    kernel->setKnownBlockSizeAttr(
        b.getDenseI32ArrayAttr({static_cast<int32_t>(32 * *warps), 1, 1}));
    for (StringRef name : {TileGPUDialect::getSharedBytesAttrName(),
                           TileGPUDialect::getWarpsAttrName(),
                           tile::TileDialect::getSdpaAttrName()})
      if (Attribute attr = func->getAttr(name))
        (*kernel)->setAttr(name, attr);
    func.erase();
    if (failed(setUpTensorMemory(*kernel, gpuModule)))
      return signalPassFailure();
  }

  RewritePatternSet patterns(ctx);
  std::optional<TargetInfo> info = TargetInfo::lookup(target.getChip());
  populateTileGPUMemoryToNVVMPatterns(converter, patterns,
                                      info && info->hasGridDependencyControl());
  populateCtaReducePatterns(converter, patterns);
  switch (target.getFamily()) {
  case Family::MmaSync:
    populateMmaSyncToNVVMPatterns(converter, patterns);
    break;
  case Family::Wgmma:
    populateWgmmaToNVVMPatterns(converter, patterns, uniformWarpgroup);
    break;
  case Family::Tcgen05:
    populateTcgen05ToNVVMPatterns(converter, patterns, skipUnitRowScales);
    break;
  }
  populateElementwiseToNVVMPatterns(converter, patterns, skipUnitRowScales,
                                    exp2PolyEvery);
  ConversionTarget legality(*ctx);
  legality.addIllegalDialect<tile::TileDialect, TileGPUDialect>();
  // Converted in place first, lowered after (lowerWarpSpecialize).
  legality.addLegalOp<WarpSpecializeOp>();
  legality.addIllegalOp<func::ReturnOp>();
  legality.addLegalOp<gpu::GPUModuleOp, gpu::GPUFuncOp>();
  legality.markUnknownOpDynamicallyLegal(
      [&](Operation *op) { return converter.isLegal(op); });
  scf::populateSCFStructuralTypeConversionsAndLegality(converter, patterns,
                                                       legality);
  if (failed(applyPartialConversion(gpuModule, legality, std::move(patterns))))
    return signalPassFailure();
  for (auto kernel : gpuModule.getOps<gpu::GPUFuncOp>())
    if (failed(lowerWarpSpecialize(kernel, kernelWarps(kernel))))
      return signalPassFailure();

  // The mma.sync operands are 2-D vectors (vector<4x2xf16>); lower the shape
  // casts to and from the 1-D register vectors into element moves, which
  // the LLVM lowering of the vector dialect handles.
  RewritePatternSet castPatterns(ctx);
  vector::populateVectorShapeCastLoweringPatterns(castPatterns);
  vector::populateVectorInsertExtractStridedSliceTransforms(castPatterns);
  if (failed(applyPatternsGreedily(gpuModule, std::move(castPatterns))))
    return signalPassFailure();
}

} // namespace
