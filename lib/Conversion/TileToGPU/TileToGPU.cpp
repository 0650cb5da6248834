//===- TileToGPU.cpp - The convert-tile-to-gpu pass -----------------------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//

#include "tiled_attn/Conversion/Passes.h"
#include "tiled_attn/Conversion/TileToGPU/TileToGPU.h"
#include "tiled_attn/Dialect/Tile/IR/TileOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/Support/MathExtras.h"

namespace tiled_attn {
#define GEN_PASS_DEF_CONVERTTILETOGPUPASS
#include "tiled_attn/Conversion/Passes.h.inc"
} // namespace tiled_attn

using namespace mlir;
using namespace tiled_attn;
using namespace tiled_attn::tile;

namespace {

/// The warps of a kernel's layouts; fails when a tile has none.
FailureOr<int64_t> kernelWarps(func::FuncOp func) {
  int64_t warps = 0;
  WalkResult walk = func.walk([&](Operation *op) {
    for (Type type : llvm::concat<Type>(op->getOperandTypes(),
                                        op->getResultTypes())) {
      auto tensor = dyn_cast<RankedTensorType>(type);
      if (!tensor)
        continue;
      auto layout = dyn_cast_or_null<LayoutAttr>(tensor.getEncoding());
      if (!layout) {
        op->emitError() << "convert-tile-to-gpu: " << tensor
                        << " has no layout; run tile-assign-layouts first";
        return WalkResult::interrupt();
      }
      warps = layout.getWarps();
    }
    return WalkResult::advance();
  });
  if (walk.wasInterrupted() || warps == 0)
    return failure();
  return warps;
}

/// Gives each load its shared buffer (bytes from the start of dynamic shared
/// memory) and returns the total. Loads of the same view and block shape in
/// different blocks (the loops of a causal split) run one after the other,
/// so they share a buffer; each load waits for the CTA before it overwrites
/// the buffer.
int64_t assignSharedBuffers(func::FuncOp func) {
  struct Buffer {
    Value view;
    SmallVector<int64_t> shape;
    int64_t offset;
    SmallVector<Block *> users;
  };
  SmallVector<Buffer> buffers;
  int64_t total = 0;
  func.walk([&](LoadOp load) {
    SmallVector<int64_t> block = load.getBlockShape();
    Buffer *shared = nullptr;
    for (Buffer &buffer : buffers)
      if (buffer.view == load.getView() && buffer.shape == block &&
          !llvm::is_contained(buffer.users, load->getBlock()))
        shared = &buffer;
    if (!shared) {
      int64_t bytes = getSharedBufferType(block[0], block[1],
                                          load.getType().getElementType())
                          .getNumElements() *
                      load.getType().getElementTypeBitWidth() / 8;
      buffers.push_back({load.getView(), block, total, {}});
      shared = &buffers.back();
      total += llvm::alignTo(bytes, 128);
    }
    shared->users.push_back(load->getBlock());
    load->setAttr("tile.smem_offset",
                  IntegerAttr::get(IndexType::get(func.getContext()),
                                   shared->offset));
  });
  return total;
}

struct ReturnToGPU final : OpConversionPattern<func::ReturnOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(func::ReturnOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<gpu::ReturnOp>(op);
    return success();
  }
};

struct ConvertTileToGPUPass final
    : tiled_attn::impl::ConvertTileToGPUPassBase<ConvertTileToGPUPass> {
  void runOnOperation() override;
};

void ConvertTileToGPUPass::runOnOperation() {
  ModuleOp module = getOperation();
  MLIRContext *ctx = &getContext();
  TileToGPUTypeConverter converter;
  SmallVector<func::FuncOp> kernels;
  for (auto func : module.getOps<func::FuncOp>())
    if (!func.isExternal())
      kernels.push_back(func);
  if (kernels.empty())
    return;

  OpBuilder b(ctx);
  b.setInsertionPointToEnd(module.getBody());
  auto gpuModule = gpu::GPUModuleOp::create(b, module.getLoc(), "tiled_attn");
  module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                  b.getUnitAttr());

  for (func::FuncOp func : kernels) {
    FailureOr<int64_t> warps = kernelWarps(func);
    if (failed(warps))
      return signalPassFailure();
    int64_t sharedBytes = assignSharedBuffers(func);

    SmallVector<Type> inputs;
    if (failed(converter.convertTypes(func.getArgumentTypes(), inputs)))
      return signalPassFailure();
    b.setInsertionPointToEnd(gpuModule.getBody());
    auto kernel = gpu::GPUFuncOp::create(b, func.getLoc(), func.getName(),
                                         b.getFunctionType(inputs, {}));
    kernel->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
    kernel.setKnownBlockSizeAttr(
        b.getDenseI32ArrayAttr({static_cast<int32_t>(32 * *warps), 1, 1}));
    kernel->setAttr(TileDialect::getSharedBytesAttrName(),
                    b.getI64IntegerAttr(sharedBytes));
    if (Attribute sdpa = func->getAttr(TileDialect::getSdpaAttrName()))
      kernel->setAttr(TileDialect::getSdpaAttrName(), sdpa);

    // Move the body over and retype its arguments (views become memrefs).
    kernel.getBody().front().erase();
    kernel.getBody().takeBody(func.getBody());
    for (auto [arg, type] :
         llvm::zip_equal(kernel.getArguments(), inputs))
      arg.setType(type);
    func.erase();
  }

  RewritePatternSet patterns(ctx);
  populateTileMemoryToGPUPatterns(converter, patterns);
  populateTileMmaToGPUPatterns(converter, patterns);
  populateTileReduceToGPUPatterns(converter, patterns);
  populateTileElementwiseToGPUPatterns(converter, patterns);
  patterns.add<ReturnToGPU>(converter, ctx);
  ConversionTarget target(*ctx);
  target.addIllegalDialect<TileDialect>();
  target.addIllegalOp<func::ReturnOp>();
  target.addLegalOp<gpu::GPUModuleOp, gpu::GPUFuncOp>();
  target.markUnknownOpDynamicallyLegal(
      [&](Operation *op) { return converter.isLegal(op); });
  scf::populateSCFStructuralTypeConversionsAndLegality(converter, patterns,
                                                       target);
  if (failed(applyPartialConversion(gpuModule, target, std::move(patterns))))
    return signalPassFailure();
  // The shared buffer offsets served the conversion only.
  gpuModule.walk([](Operation *op) { op->removeAttr("tile.smem_offset"); });

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
