//===- LazyRescale.cpp - Conditional accumulator rescaling ----------------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// FlashAttention-4 rescales the output accumulator only when a row's running
// max grows by more than a threshold. Two steps:
//
// 1. every tile.online_softmax gets `lazy_rescale(T)`, so that its alpha is
//    exactly 1 for rows whose max did not move;
// 2. every `acc * broadcast(alpha)` is wrapped in an scf.if that skips the
//    multiply when no row's alpha is below 1 (acc * 1 == acc bitwise, so the
//    skip changes nothing). With `guard=0` this is left to the GPU lowering,
//    which skips per warp.
//
//===----------------------------------------------------------------------===//

#include "tiled_attn/Dialect/Tile/IR/TileOps.h"
#include "tiled_attn/Dialect/Tile/Transforms/Passes.h"

namespace tiled_attn::tile {
#define GEN_PASS_DEF_TILELAZYRESCALEPASS
#include "tiled_attn/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace tiled_attn::tile

using namespace mlir;
using namespace tiled_attn::tile;

namespace {

/// Wraps `mul = arith.mulf %acc, (tile.broadcast %alpha)` in
/// `scf.if (min(alpha) < 1 or NaN) { mul } else { acc }`.
void guardRescale(arith::MulFOp mul, BroadcastOp scale, Value acc,
                  Value alpha) {
  OpBuilder b(mul);
  Location loc = mul.getLoc();
  Type f32 = b.getF32Type();
  Value minAlpha = ReduceOp::create(b, loc, f32, alpha, ReduceKind::Min, 0);
  Value one = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(1.0));
  // Unordered, so that a NaN alpha still reaches the accumulator.
  Value needed =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::ULT, minAlpha, one);
  auto ifOp = scf::IfOp::create(b, loc, mul.getType(), needed,
                                /*withElseRegion=*/true);
  mul.getResult().replaceAllUsesWith(ifOp.getResult(0));
  // The broadcast moves into the branch when the multiply is its only user.
  Block *thenBlock = ifOp.thenBlock();
  b.setInsertionPointToEnd(thenBlock);
  auto yield = scf::YieldOp::create(b, loc, mul.getResult());
  mul->moveBefore(yield);
  if (scale->hasOneUse())
    scale->moveBefore(mul);
  b.setInsertionPointToEnd(ifOp.elseBlock());
  scf::YieldOp::create(b, loc, acc);
}

struct TileLazyRescalePass final
    : tiled_attn::tile::impl::TileLazyRescalePassBase<TileLazyRescalePass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (threshold < 1 || threshold > 16) {
      func.emitError() << "tile-lazy-rescale: threshold must be in [1, 16], "
                          "got "
                       << int64_t{threshold};
      return signalPassFailure();
    }
    SmallVector<OnlineSoftmaxOp> steps;
    func.walk([&](OnlineSoftmaxOp op) { steps.push_back(op); });
    if (steps.empty())
      return;

    Builder b(func.getContext());
    for (OnlineSoftmaxOp op : steps) {
      op.setRescaleThresholdAttr(
          b.getF64FloatAttr(static_cast<double>(threshold)));
      // Find acc * broadcast(alpha) among the users of alpha.
      SmallVector<std::tuple<arith::MulFOp, BroadcastOp, Value>> rescales;
      for (Operation *user : op.getAlpha().getUsers()) {
        auto scale = dyn_cast<BroadcastOp>(user);
        if (!scale)
          continue;
        for (Operation *scaleUser : scale->getUsers()) {
          auto mul = dyn_cast<arith::MulFOp>(scaleUser);
          if (!mul)
            continue;
          Value acc =
              mul.getLhs() == scale.getResult() ? mul.getRhs() : mul.getLhs();
          rescales.emplace_back(mul, scale, acc);
        }
      }
      if (guard)
        for (auto [mul, scale, acc] : rescales)
          guardRescale(mul, scale, acc, op.getAlpha());
    }

    if (auto sdpa =
            func->getAttrOfType<SdpaAttr>(TileDialect::getSdpaAttrName()))
      func->setAttr(TileDialect::getSdpaAttrName(),
                    sdpa.withRescaleThreshold(threshold));
  }
};

} // namespace
