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
    auto rowConst = [&](double value) -> Value {
      return arith::ConstantOp::create(
          rewriter, loc,
          DenseElementsAttr::get(rowsTy, rewriter.getF32FloatAttr(value)));
    };
    auto toRows = [&](Value row) -> Value {
      return BroadcastOp::create(rewriter, loc, scoresTy, row, 1);
    };

    // x = scores * scale
    Value scale = tensor::SplatOp::create(rewriter, loc, scoresTy,
                                          op.getScale());
    Value x = arith::MulFOp::create(rewriter, loc, op.getScores(), scale);

    // new_max = max(running_max, rowmax(x))
    Value blockMax = ReduceOp::create(rewriter, loc, rowsTy, x,
                                      ReduceKind::Max, 1);
    Value newMax =
        arith::MaximumFOp::create(rewriter, loc, op.getRunningMax(), blockMax);

    // A row that has seen only -inf subtracts 0 instead, so that its
    // probabilities and alpha come out 0 rather than NaN.
    Value negInf = rowConst(-std::numeric_limits<double>::infinity());
    Value noKey = arith::CmpFOp::create(rewriter, loc, rowsMaskTy,
                                        arith::CmpFPredicate::OEQ, newMax,
                                        negInf);
    Value ref = arith::SelectOp::create(rewriter, loc, noKey, rowConst(0.0),
                                        newMax);

    // probs = exp(x - ref), alpha = exp(running_max - ref)
    Value shifted = arith::SubFOp::create(rewriter, loc, x, toRows(ref));
    Value probs = math::ExpOp::create(rewriter, loc, shifted);
    Value alpha = math::ExpOp::create(
        rewriter, loc,
        arith::SubFOp::create(rewriter, loc, op.getRunningMax(), ref));

    // new_sum = running_sum * alpha + rowsum(probs)
    Value blockSum = ReduceOp::create(rewriter, loc, rowsTy, probs,
                                      ReduceKind::Sum, 1);
    Value newSum = arith::AddFOp::create(
        rewriter, loc,
        arith::MulFOp::create(rewriter, loc, op.getRunningSum(), alpha),
        blockSum);

    rewriter.replaceOp(op, ValueRange{newMax, newSum, probs, alpha});
    return success();
  }
};

struct TileDecomposeOnlineSoftmaxPass final
    : tiled_attn::tile::impl::TileDecomposeOnlineSoftmaxPassBase<
          TileDecomposeOnlineSoftmaxPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<DecomposeOnlineSoftmax>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
