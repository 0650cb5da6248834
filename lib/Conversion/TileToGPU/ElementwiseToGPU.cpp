//===- ElementwiseToGPU.cpp - Elementwise math on register tiles ----------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Elementwise arith and math ops apply to each lane's registers as they are:
// the same op on the converted vector types. Constants and splats become
// vector constants and broadcasts.
//
//===----------------------------------------------------------------------===//

#include "tiled_attn/Conversion/TileToGPU/TileToGPU.h"
#include "tiled_attn/Dialect/Tile/IR/TileOps.h"

#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace tiled_attn;

namespace {

struct ElementwiseToGPU final : ConversionPattern {
  ElementwiseToGPU(TypeConverter &converter, MLIRContext *ctx)
      : ConversionPattern(converter, MatchAnyOpTypeTag(), /*benefit=*/1, ctx) {}
  LogicalResult
  matchAndRewrite(Operation *op, ArrayRef<Value> operands,
                  ConversionPatternRewriter &rewriter) const override {
    if (!op->hasTrait<OpTrait::Elementwise>() || op->getNumRegions() != 0)
      return rewriter.notifyMatchFailure(op, "not elementwise");
    SmallVector<Type> resultTypes;
    if (failed(getTypeConverter()->convertTypes(op->getResultTypes(),
                                                resultTypes)))
      return rewriter.notifyMatchFailure(op, "unconvertible result");
    OperationState state(op->getLoc(), op->getName(), operands, resultTypes,
                         op->getAttrs());
    rewriter.replaceOp(op, rewriter.create(state)->getResults());
    return success();
  }
};

struct ConstantToGPU final : OpConversionPattern<arith::ConstantOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(arith::ConstantOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto dense = dyn_cast<DenseElementsAttr>(op.getValue());
    auto type = dyn_cast_or_null<VectorType>(
        getTypeConverter()->convertType(op.getType()));
    if (!dense || !type)
      return rewriter.notifyMatchFailure(op, "not a register tile constant");
    if (!dense.isSplat())
      return op.emitError() << "GPU lowering: only splat tile constants";
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(op, type,
                                                   dense.resizeSplat(type));
    return success();
  }
};

struct SplatToGPU final : OpConversionPattern<tensor::SplatOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(tensor::SplatOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Type type = getTypeConverter()->convertType(op.getType());
    if (!isa_and_nonnull<VectorType>(type))
      return rewriter.notifyMatchFailure(op, "not a register tile");
    rewriter.replaceOpWithNewOp<vector::BroadcastOp>(op, type,
                                                     adaptor.getInput());
    return success();
  }
};

} // namespace

void tiled_attn::populateTileElementwiseToGPUPatterns(
    TileToGPUTypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<ElementwiseToGPU, ConstantToGPU, SplatToGPU>(
      converter, patterns.getContext());
}
