//===- Elementwise.cpp - Elementwise math on register tiles ---------------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Elementwise arith and math ops apply to each lane's registers as they are:
// the same op on the converted vector types. Constants and splats become
// vector constants and broadcasts; exp2 is the MUFU instruction, or, for
// some registers, a polynomial on the FMA units.
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

/// 2^x on the FMA units (FlashAttention-4's exp2 emulation, for registers
/// the MUFU unit would otherwise queue up): with x clamped to [-127, 127],
/// j = floor(x) and f = x - j in [0, 1), 2^f is the degree-3 polynomial
/// 1 + f (c1 + f (c2 + f c3)) (coefficients fitted here for the least
/// maximum relative error over [0, 1), 8.7e-5), and 2^j is added to its
/// exponent field as an integer. Results below 2^-126 are flushed to zero,
/// as ex2.approx.ftz does; -inf gives 0.
Value exp2Polynomial(OpBuilder &b, Location loc, Value x) {
  Type f32 = b.getF32Type(), i32 = b.getI32Type();
  auto cst = [&](float v) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
  };
  Value clamped = arith::MinimumFOp::create(
      b, loc, arith::MaximumFOp::create(b, loc, x, cst(-127.0f)), cst(127.0f));
  Value j = math::FloorOp::create(b, loc, clamped);
  Value f = arith::SubFOp::create(b, loc, clamped, j);
  Value p =
      math::FmaOp::create(b, loc, cst(0.07704833499f), f, cst(0.2276653398f));
  p = math::FmaOp::create(b, loc, p, f, cst(0.6951123327f));
  p = math::FmaOp::create(b, loc, p, f, cst(1.0f));
  Value exponent =
      arith::ShLIOp::create(b, loc, arith::FPToSIOp::create(b, loc, i32, j),
                            arith::ConstantIntOp::create(b, loc, i32, 23));
  Value bits = arith::AddIOp::create(
      b, loc, arith::BitcastOp::create(b, loc, i32, p), exponent);
  Value result = arith::BitcastOp::create(b, loc, f32, bits);
  Value tiny =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, x, cst(-126.0f));
  return arith::SelectOp::create(b, loc, tiny, cst(0.0f), result);
}

/// Whether `value` (a converted operand) is an f32 register tile, the only
/// kind the per-register math below takes.
bool isF32RegisterTile(Value value) {
  auto type = dyn_cast<VectorType>(value.getType());
  return type && type.getElementType().isF32() && type.getRank() == 1;
}

/// Replaces `op` by `perRegister(i, x)` for each register x (at i) of the
/// f32 register tile `operand`.
template <typename Fn>
void rewritePerRegister(Operation *op, Value operand,
                        ConversionPatternRewriter &rewriter, Fn perRegister) {
  auto type = cast<VectorType>(operand.getType());
  SmallVector<Value> results;
  for (int64_t i = 0; i < type.getNumElements(); ++i)
    results.push_back(perRegister(
        i, vector::ExtractOp::create(rewriter, op->getLoc(), operand, i)));
  rewriter.replaceOpWithNewOp<vector::FromElementsOp>(op, type, results);
}

/// One f32 NVVM intrinsic (a MUFU instruction) of `x`.
Value f32Intrinsic(OpBuilder &b, Location loc, StringRef name, Value x) {
  return LLVM::CallIntrinsicOp::create(b, loc, b.getF32Type(),
                                       b.getStringAttr(name), ValueRange{x})
      .getResult(0);
}

/// exp2 of an f32 register tile: one ex2.approx.ftz.f32 per register (the
/// MUFU instruction alone), or with `polyEvery` = N, the polynomial for
/// every N-th register. The default lowering, through libdevice, keeps
/// denormal results and wraps every MUFU.EX2 in a compare and two
/// multiplies. Flushing results below 2^-126 to zero cannot show in a
/// softmax whose probabilities are summed into a total of at least 1 and
/// rounded to f16 or bf16.
struct Exp2ToGPU final : OpConversionPattern<math::Exp2Op> {
  Exp2ToGPU(TypeConverter &converter, MLIRContext *ctx, int64_t polyEvery)
      : OpConversionPattern(converter, ctx, /*benefit=*/2),
        polyEvery(polyEvery) {}
  LogicalResult
  matchAndRewrite(math::Exp2Op op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!isF32RegisterTile(adaptor.getOperand()))
      return rewriter.notifyMatchFailure(op, "not an f32 register tile");
    Location loc = op.getLoc();
    rewritePerRegister(op, adaptor.getOperand(), rewriter,
                       [&](int64_t i, Value x) {
                         if (polyEvery > 0 && i % polyEvery == polyEvery - 1)
                           return exp2Polynomial(rewriter, loc, x);
                         return f32Intrinsic(rewriter, loc, kExp2Intrinsic, x);
                       });
    return success();
  }

private:
  int64_t polyEvery;
};

/// tanh of an f32 register tile (a softcap's), per register
///   tanh(x) = 1 - 2 / (2^(2 log2(e) x) + 1)
/// on two MUFU instructions (ex2.approx.ftz, rcp.approx.ftz) and three FMA
/// ones: its absolute error stays near 2^-21 (it saturates to +-1 through
/// 2^x = inf or 0), where tanh.approx.f32's relative error of 2^-11 would
/// move a logit capped at 50 by 0.02. The scores it caps are then scaled
/// by the cap, so their absolute error is what the softmax sees.
struct TanhToGPU final : OpConversionPattern<math::TanhOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(math::TanhOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!isF32RegisterTile(adaptor.getOperand()))
      return rewriter.notifyMatchFailure(op, "not an f32 register tile");
    Location loc = op.getLoc();
    auto cst = [&](float v) -> Value {
      return arith::ConstantOp::create(rewriter, loc,
                                       rewriter.getF32FloatAttr(v));
    };
    Value twoLog2e = cst(2.0f * 1.4426950408889634f), one = cst(1.0f),
          minusTwo = cst(-2.0f);
    rewritePerRegister(
        op, adaptor.getOperand(), rewriter, [&](int64_t, Value x) -> Value {
          Value e =
              f32Intrinsic(rewriter, loc, kExp2Intrinsic,
                           arith::MulFOp::create(rewriter, loc, x, twoLog2e));
          Value r = f32Intrinsic(rewriter, loc, kRcpIntrinsic,
                                 arith::AddFOp::create(rewriter, loc, e, one));
          return math::FmaOp::create(rewriter, loc, r, minusTwo, one);
        });
    return success();
  }
};

/// The natural log of an f32 register tile (the log-sum-exps' log of the
/// row sums), per register: lg2.approx.ftz (relative error near 2^-22)
/// times ln 2. log(0) = -inf (a row that saw no key), and the sums it
/// takes are at least 1 otherwise, so flushing denormals cannot show.
struct LogToGPU final : OpConversionPattern<math::LogOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(math::LogOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!isF32RegisterTile(adaptor.getOperand()))
      return rewriter.notifyMatchFailure(op, "not an f32 register tile");
    Location loc = op.getLoc();
    Value ln2 = arith::ConstantOp::create(
        rewriter, loc, rewriter.getF32FloatAttr(0.69314718055994531f));
    rewritePerRegister(
        op, adaptor.getOperand(), rewriter, [&](int64_t, Value x) -> Value {
          return arith::MulFOp::create(
              rewriter, loc, f32Intrinsic(rewriter, loc, kLog2Intrinsic, x),
              ln2);
        });
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
    Value warpAny = warpVoteAny(rewriter, loc, any);
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
    bool skipUnitRowScales, int64_t exp2PolyEvery) {
  patterns.add<ElementwiseToGPU, ConstantToGPU, SplatToGPU>(
      converter, patterns.getContext());
  patterns.add<Exp2ToGPU>(converter, patterns.getContext(), exp2PolyEvery);
  patterns.add<TanhToGPU, LogToGPU>(converter, patterns.getContext(),
                                    /*benefit=*/2);
  if (skipUnitRowScales)
    patterns.add<SkipUnitRowScale>(converter, patterns.getContext());
}
