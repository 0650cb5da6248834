//===- DecomposeOnlineSoftmax.cpp - Expand tile.online_softmax ------------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//

#include "tiled_attn/Dialect/Tile/IR/TileOps.h"
#include "tiled_attn/Dialect/Tile/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>
#include <limits>

namespace tiled_attn::tile {
#define GEN_PASS_DEF_TILEDECOMPOSEONLINESOFTMAXPASS
#include "tiled_attn/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace tiled_attn::tile

using namespace mlir;
using namespace tiled_attn::tile;

namespace {

/// Rewrites one online-softmax step into reductions, broadcasts and
/// elementwise math, in the order FlashAttention-2 computes it.
struct DecomposeOnlineSoftmax final : OpRewritePattern<OnlineSoftmaxOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(OnlineSoftmaxOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto scoresTy = cast<RankedTensorType>(op.getScores().getType());
    auto rowsTy = cast<RankedTensorType>(op.getRunningMax().getType());
    auto rowsMaskTy = rowsTy.clone(rewriter.getI1Type());
    Value m0 = op.getRunningMax();
    bool exp2 = op.getExp2();
    auto rowConst = [&](double value) -> Value {
      return arith::ConstantOp::create(
          rewriter, loc,
          DenseElementsAttr::get(rowsTy, rewriter.getF32FloatAttr(value)));
    };
    auto splat = [&](RankedTensorType type, Value scalar) -> Value {
      return tensor::SplatOp::create(rewriter, loc, type, scalar);
    };
    auto toRows = [&](Value row) -> Value {
      return BroadcastOp::create(rewriter, loc, scoresTy, row, 1);
    };

    // The values whose max is taken: the scaled scores, or with exp2 the
    // raw scores (the scale is folded into the exponent below).
    Value x = op.getScores();
    if (!exp2)
      x = arith::MulFOp::create(rewriter, loc, x,
                                splat(scoresTy, op.getScale()));
    // c = scale * log2(e), the factor that turns scores into log2 units.
    Value c;
    if (exp2)
      c = arith::MulFOp::create(
          rewriter, loc, op.getScale(),
          arith::ConstantOp::create(rewriter, loc,
                                    rewriter.getF32FloatAttr(M_LOG2E)));

    // new_max = max(running_max, rowmax(x))
    Value blockMax =
        ReduceOp::create(rewriter, loc, rowsTy, x, ReduceKind::Max, 1);
    Value newMax = arith::MaximumFOp::create(rewriter, loc, m0, blockMax);

    // Lazy rescale: keep the old max unless P would exceed 2^threshold.
    if (auto threshold = op.getRescaleThresholdAttr()) {
      double t = threshold.getValueAsDouble();
      Value grow = arith::SubFOp::create(rewriter, loc, newMax, m0);
      Value limit = rowConst(exp2 ? t : t * M_LN2);
      if (exp2)
        grow = arith::MulFOp::create(rewriter, loc, grow, splat(rowsTy, c));
      Value move = arith::CmpFOp::create(
          rewriter, loc, rowsMaskTy, arith::CmpFPredicate::OGT, grow, limit);
      newMax = arith::SelectOp::create(rewriter, loc, move, newMax, m0);
    }

    // A row that has seen only -inf subtracts 0 instead, so that its
    // probabilities and alpha come out 0 rather than NaN.
    Value negInf = rowConst(-std::numeric_limits<double>::infinity());
    Value noKey = arith::CmpFOp::create(
        rewriter, loc, rowsMaskTy, arith::CmpFPredicate::OEQ, newMax, negInf);
    Value ref =
        arith::SelectOp::create(rewriter, loc, noKey, rowConst(0.0), newMax);

    Value probs, alpha;
    if (exp2) {
      // probs = exp2(x * c - ref * c): one fused multiply-add per score.
      Value rowsC = splat(rowsTy, c);
      Value negRefC = arith::NegFOp::create(
          rewriter, loc, arith::MulFOp::create(rewriter, loc, ref, rowsC));
      probs = math::Exp2Op::create(rewriter, loc,
                                   math::FmaOp::create(rewriter, loc, x,
                                                       splat(scoresTy, c),
                                                       toRows(negRefC)));
      // alpha = exp2((running_max - ref) * c): exactly 1 when the max did not
      // move, which lazy rescaling relies on.
      alpha = math::Exp2Op::create(
          rewriter, loc,
          arith::MulFOp::create(rewriter, loc,
                                arith::SubFOp::create(rewriter, loc, m0, ref),
                                rowsC));
    } else {
      // probs = exp(x - ref), alpha = exp(running_max - ref)
      probs = math::ExpOp::create(
          rewriter, loc, arith::SubFOp::create(rewriter, loc, x, toRows(ref)));
      alpha = math::ExpOp::create(
          rewriter, loc, arith::SubFOp::create(rewriter, loc, m0, ref));
    }

    // new_sum = running_sum * alpha + rowsum(probs)
    Value blockSum =
        ReduceOp::create(rewriter, loc, rowsTy, probs, ReduceKind::Sum, 1);
    Value newSum = arith::AddFOp::create(
        rewriter, loc,
        arith::MulFOp::create(rewriter, loc, op.getRunningSum(), alpha),
        blockSum);

    rewriter.replaceOp(op, ValueRange{newMax, newSum, probs, alpha});
    return success();
  }
};

/// lse = max + log(sum), or with exp2 (a max of unscaled scores)
/// max * scale + log(sum). A row that saw no key gets -inf + log(0) = -inf.
struct DecomposeLogSumExp final : OpRewritePattern<LogSumExpOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(LogSumExpOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value max = op.getMax();
    if (op.getExp2())
      max = arith::MulFOp::create(
          rewriter, loc, max,
          tensor::SplatOp::create(rewriter, loc, op.getType(), op.getScale()));
    Value log = math::LogOp::create(rewriter, loc, op.getSum());
    rewriter.replaceOpWithNewOp<arith::AddFOp>(op, max, log);
    return success();
  }
};

struct TileDecomposeOnlineSoftmaxPass final
    : tiled_attn::tile::impl::TileDecomposeOnlineSoftmaxPassBase<
          TileDecomposeOnlineSoftmaxPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<DecomposeOnlineSoftmax, DecomposeLogSumExp>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
