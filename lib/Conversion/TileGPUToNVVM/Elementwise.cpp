//===- Elementwise.cpp - Elementwise math on register tiles ---------------===//
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

#include "tiled_attn/Conversion/TileGPUToNVVM/TileGPUToNVVM.h"
#include "tiled_attn/Dialect/Tile/IR/TileOps.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
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

/// exp2 of an f32 register tile: one ex2.approx.ftz.f32 per register (the
/// MUFU instruction alone). The default lowering, through libdevice, keeps
/// denormal results and wraps every MUFU.EX2 in a compare and two
/// multiplies. Flushing results below 2^-126 to zero cannot show in a
/// softmax whose probabilities are summed into a total of at least 1 and
/// rounded to f16 or bf16.
struct Exp2ToGPU final : OpConversionPattern<math::Exp2Op> {
  Exp2ToGPU(TypeConverter &converter, MLIRContext *ctx)
      : OpConversionPattern(converter, ctx, /*benefit=*/2) {}
  LogicalResult
  matchAndRewrite(math::Exp2Op op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = dyn_cast<VectorType>(adaptor.getOperand().getType());
    if (!type || !type.getElementType().isF32() || type.getRank() != 1)
      return rewriter.notifyMatchFailure(op, "not an f32 register tile");
    Location loc = op.getLoc();
    Type f32 = rewriter.getF32Type();
    SmallVector<Value> results;
    for (int64_t i = 0; i < type.getNumElements(); ++i) {
      Value x =
          vector::ExtractOp::create(rewriter, loc, adaptor.getOperand(), i);
      results.push_back(
          LLVM::CallIntrinsicOp::create(rewriter, loc, f32,
                                        rewriter.getStringAttr(kExp2Intrinsic),
                                        ValueRange{x})
              .getResult(0));
    }
    rewriter.replaceOpWithNewOp<vector::FromElementsOp>(op, type, results);
    return success();
  }
};

/// acc * broadcast(alpha) along rows in a loop, the rescale of the online
/// softmax's accumulator: a warp skips it when all of its rows have
/// alpha == 1 (their max did not move), which `x * 1 == x` makes exact. One
/// compare per row register, a warp vote and a uniform branch, against a
/// multiply per accumulator register on the path into the next mma.
struct SkipUnitRowScale final : OpConversionPattern<arith::MulFOp> {
  SkipUnitRowScale(TypeConverter &converter, MLIRContext *ctx)
      : OpConversionPattern(converter, ctx, /*benefit=*/2) {}
  LogicalResult
  matchAndRewrite(arith::MulFOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = dyn_cast<RankedTensorType>(op.getType());
    auto layout =
        type ? tilegpu::getQuadFragmentLayout(type.getEncoding()) : nullptr;
    if (!layout || layout.getKind() != tilegpu::MmaSyncKind::Acc ||
        !type.getElementType().isF32())
      return rewriter.notifyMatchFailure(op, "not an f32 accumulator");
    // Only a rescale that repeats (in a loop) is worth a vote.
    if (!op->getParentOfType<scf::ForOp>())
      return rewriter.notifyMatchFailure(op, "not in a loop");
    tile::BroadcastOp scale;
    Value acc, accRegs, scaleRegs;
    for (auto [operand, converted, other] :
         {std::tuple(op.getLhs(), adaptor.getLhs(), adaptor.getRhs()),
          std::tuple(op.getRhs(), adaptor.getRhs(), adaptor.getLhs())}) {
      auto bcast = operand.getDefiningOp<tile::BroadcastOp>();
      if (bcast && bcast.getAxis() == 1 && !scale) {
        scale = bcast;
        scaleRegs = converted;
        accRegs = other;
      }
    }
    if (!scale)
      return rewriter.notifyMatchFailure(op, "not a scale of rows");
    Value rows = rewriter.getRemappedValue(scale.getInput());
    auto rowsTy = dyn_cast_or_null<VectorType>(rows ? rows.getType() : Type());
    if (!rowsTy)
      return rewriter.notifyMatchFailure(op, "rows not converted yet");
    Location loc = op.getLoc();
    Value one = arith::ConstantOp::create(rewriter, loc, rowsTy,
                                          DenseElementsAttr::get(rowsTy, 1.0f));
    Value moved = arith::CmpFOp::create(rewriter, loc,
                                        arith::CmpFPredicate::UNE, rows, one);
    Value any = vector::ReductionOp::create(rewriter, loc,
                                            vector::CombiningKind::OR, moved);
    Value warpAny = NVVM::VoteSyncOp::create(
        rewriter, loc, rewriter.getI1Type(),
        arith::ConstantIntOp::create(rewriter, loc, -1, 32), any,
        NVVM::VoteSyncKindAttr::get(rewriter.getContext(),
                                    NVVM::VoteSyncKind::any));
    auto ifOp = scf::IfOp::create(rewriter, loc, accRegs.getType(), warpAny,
                                  /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointToStart(ifOp.thenBlock());
      Value product = arith::MulFOp::create(rewriter, loc, accRegs, scaleRegs);
      scf::YieldOp::create(rewriter, loc, product);
      rewriter.setInsertionPointToStart(ifOp.elseBlock());
      scf::YieldOp::create(rewriter, loc, accRegs);
    }
    rewriter.replaceOp(op, ifOp.getResults());
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

void tiled_attn::populateElementwiseToNVVMPatterns(
    TileGPUToNVVMTypeConverter &converter, RewritePatternSet &patterns,
    bool skipUnitRowScales) {
  patterns.add<ElementwiseToGPU, Exp2ToGPU, ConstantToGPU, SplatToGPU>(
      converter, patterns.getContext());
  if (skipUnitRowScales)
    patterns.add<SkipUnitRowScale>(converter, patterns.getContext());
}
