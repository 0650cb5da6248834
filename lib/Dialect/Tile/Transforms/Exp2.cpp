//===- Exp2.cpp - exp2 with the softmax scale folded in -------------------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//

#include "tiled_attn/Dialect/Tile/IR/TileOps.h"
#include "tiled_attn/Dialect/Tile/Transforms/Passes.h"

#include "mlir/IR/Matchers.h"

namespace tiled_attn::tile {
#define GEN_PASS_DEF_TILEEXP2PASS
#include "tiled_attn/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace tiled_attn::tile

using namespace mlir;
using namespace tiled_attn::tile;

namespace {

/// True when `value` is a splat of -inf: the only running max whose units do
/// not matter.
bool isNegInfSplat(Value value) {
  DenseElementsAttr attr;
  if (!matchPattern(value, m_Constant(&attr)) || !attr.isSplat())
    return false;
  APFloat v = attr.getSplatValue<APFloat>();
  return v.isInfinity() && v.isNegative();
}

/// Checks that the running max of `op` lives only inside its softmax chain:
/// it starts at -inf and, carried by an scf.for, feeds only online-softmax
/// steps. With exp2 its units change, so a use outside the chain (say, to
/// write a log-sum-exp) would silently change meaning.
LogicalResult verifyMaxStaysInChain(OnlineSoftmaxOp op) {
  auto fail = [&](const Twine &why) {
    return op.emitError() << "tile-exp2: the running max " << why
                          << "; exp2 would change its units";
  };
  Value runningMax = op.getRunningMax();
  if (auto arg = dyn_cast<BlockArgument>(runningMax)) {
    auto loop = dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp());
    if (!loop || arg.getArgNumber() == 0)
      return fail("is not carried by an scf.for");
    unsigned idx = arg.getArgNumber() - 1;
    if (!isNegInfSplat(loop.getInitArgs()[idx]))
      return fail("does not start at -inf");
    if (!loop.getResult(idx).use_empty())
      return fail("is used after the loop");
  } else if (!isNegInfSplat(runningMax)) {
    return fail("does not start at -inf");
  }
  for (OpOperand &use : op.getNewMax().getUses()) {
    Operation *user = use.getOwner();
    if (auto next = dyn_cast<OnlineSoftmaxOp>(user);
        next && use.get() == next.getRunningMax())
      continue;
    if (isa<scf::YieldOp>(user))
      continue;
    return fail("is used by '" + user->getName().getStringRef() + "'");
  }
  return success();
}

struct TileExp2Pass final
    : tiled_attn::tile::impl::TileExp2PassBase<TileExp2Pass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    SmallVector<OnlineSoftmaxOp> steps;
    WalkResult result = func.walk([&](OnlineSoftmaxOp op) {
      if (failed(verifyMaxStaysInChain(op)))
        return WalkResult::interrupt();
      steps.push_back(op);
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      return signalPassFailure();
    if (steps.empty())
      return;
    for (OnlineSoftmaxOp op : steps)
      op.setExp2(true);
    if (auto sdpa = func->getAttrOfType<SdpaAttr>(
            TileDialect::getSdpaAttrName()))
      func->setAttr(TileDialect::getSdpaAttrName(),
                    SdpaAttr::get(func.getContext(), sdpa.getHeadDim(),
                                  sdpa.getElementType(), sdpa.getCausal(),
                                  sdpa.getBlockM(), sdpa.getBlockN(),
                                  sdpa.getStages(), sdpa.getCausalSplit(),
                                  /*exp2=*/true, sdpa.getRescaleThreshold()));
  }
};

} // namespace
