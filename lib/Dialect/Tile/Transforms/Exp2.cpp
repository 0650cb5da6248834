//===- Exp2.cpp - exp2 with the softmax scale folded in -------------------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//

#include "tiled_attn/Dialect/Tile/IR/TileOps.h"
#include "tiled_attn/Dialect/Tile/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
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

/// True when `value` may start or carry a running max: -inf, or a value that
/// loops carry from one online-softmax step to the next (the mask split
/// chains two loops).
bool isChainedMax(Value value) {
  if (isNegInfSplat(value))
    return true;
  if (auto arg = dyn_cast<BlockArgument>(value)) {
    auto loop = dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp());
    return loop && arg.getArgNumber() > 0 &&
           isChainedMax(loop.getInitArgs()[arg.getArgNumber() - 1]);
  }
  if (auto step = value.getDefiningOp<OnlineSoftmaxOp>())
    return value == step.getNewMax() && isChainedMax(step.getRunningMax());
  if (auto loop = value.getDefiningOp<scf::ForOp>())
    return isChainedMax(
        loop.getYieldedValues()[cast<OpResult>(value).getResultNumber()]);
  return false;
}

/// True when every use of `value`, a running max, stays in the chain: the
/// next step's running max, a yield, the start of the next loop, or the
/// log-sum-exp at its end (which tile-exp2 switches to the same units).
bool staysInChain(Value value) {
  for (OpOperand &use : value.getUses()) {
    Operation *user = use.getOwner();
    if (auto lse = dyn_cast<LogSumExpOp>(user)) {
      if (use.get() != lse.getMax())
        return false;
      continue;
    }
    if (auto next = dyn_cast<OnlineSoftmaxOp>(user)) {
      if (use.get() != next.getRunningMax())
        return false;
      continue;
    }
    if (auto yield = dyn_cast<scf::YieldOp>(user)) {
      auto loop = dyn_cast<scf::ForOp>(yield->getParentOp());
      if (!loop || !staysInChain(loop.getResult(use.getOperandNumber())))
        return false;
      continue;
    }
    if (auto loop = dyn_cast<scf::ForOp>(user)) {
      unsigned numControl = loop.getNumControlOperands();
      if (use.getOperandNumber() < numControl ||
          !staysInChain(
              loop.getRegionIterArgs()[use.getOperandNumber() - numControl]))
        return false;
      continue;
    }
    return false;
  }
  return true;
}

/// Checks that the running max of `op` lives only inside its softmax chain:
/// it starts at -inf and feeds only online-softmax steps. With exp2 its
/// units change, so a use outside the chain (say, to write a log-sum-exp)
/// would silently change meaning.
LogicalResult verifyMaxStaysInChain(OnlineSoftmaxOp op) {
  if (!isChainedMax(op.getRunningMax()))
    return op.emitError() << "tile-exp2: the running max does not start at "
                             "-inf; exp2 would change its units";
  if (!staysInChain(op.getNewMax()) || !staysInChain(op.getRunningMax()))
    return op.emitError() << "tile-exp2: the running max is used outside the "
                             "online-softmax chain; exp2 would change its "
                             "units";
  return success();
}

/// `value` times log2(e), where it is a splat: a splat of the scalar times
/// log2(e) (a constant folded, an SSA scalar multiplied once where the
/// splat is made); null otherwise.
Value splatTimesLog2eOnce(OpBuilder &b, Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  DenseElementsAttr attr;
  // (Made where the splat is, so that it dominates each of its users.)
  OpBuilder::InsertionGuard guard(b);
  if (Operation *def = value.getDefiningOp())
    b.setInsertionPoint(def);
  if (matchPattern(value, m_Constant(&attr)) && attr.isSplat()) {
    double v = attr.getSplatValue<APFloat>().convertToDouble();
    return arith::ConstantOp::create(
        b, value.getLoc(),
        DenseElementsAttr::get(
            type, b.getFloatAttr(type.getElementType(), v * M_LOG2E)));
  }
  auto splat = value.getDefiningOp<tensor::SplatOp>();
  if (!splat)
    return Value();
  Location loc = splat.getLoc();
  Value scalar = arith::MulFOp::create(
      b, loc, splat.getInput(),
      arith::ConstantOp::create(
          b, loc, b.getFloatAttr(type.getElementType(), M_LOG2E)));
  return tensor::SplatOp::create(b, loc, type, scalar);
}

/// splatTimesLog2eOnce, made once per splat (the backward's loops share
/// their scale).
Value splatTimesLog2e(OpBuilder &b, Value value,
                      llvm::DenseMap<Value, Value> &made) {
  if (Value done = made.lookup(value))
    return done;
  Value result = splatTimesLog2eOnce(b, value);
  if (result)
    made[value] = result;
  return result;
}

/// `exp(x - broadcast(v))` (the backward's Pᵀ = exp(scale Sᵀ - lse)) as
/// `exp2(fma(x, log2(e), broadcast(-log2(e) v)))`: the vector is scaled
/// once before its broadcast, and where x is a product with a splat
/// (`scale * s`) log2(e) folds into that splat, so that each element costs
/// one FMA and one exp2. False where `exp` is not of that form.
bool rewritePlainExp(math::ExpOp exp, llvm::DenseMap<Value, Value> &made) {
  auto type = dyn_cast<RankedTensorType>(exp.getType());
  if (!type || !type.getElementType().isF32())
    return false;
  auto sub = exp.getOperand().getDefiningOp<arith::SubFOp>();
  if (!sub)
    return false;
  auto bcast = sub.getRhs().getDefiningOp<BroadcastOp>();
  if (!bcast)
    return false;
  OpBuilder b(exp);
  Location loc = exp.getLoc();
  Value x = sub.getLhs(), factor;
  auto mul = x.getDefiningOp<arith::MulFOp>();
  if (mul && x.hasOneUse() && sub->hasOneUse()) {
    for (auto [tile, other] : {std::pair{mul.getRhs(), mul.getLhs()},
                               {mul.getLhs(), mul.getRhs()}})
      if ((factor = splatTimesLog2e(b, tile, made))) {
        x = other;
        break;
      }
  }
  if (!factor)
    factor = arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(type, b.getF32FloatAttr(M_LOG2E)));
  Value v = bcast.getInput();
  auto vType = cast<RankedTensorType>(v.getType());
  Value scaled = arith::MulFOp::create(
      b, loc, v,
      arith::ConstantOp::create(
          b, loc, DenseElementsAttr::get(vType, b.getF32FloatAttr(-M_LOG2E))));
  Value offset = BroadcastOp::create(b, loc, bcast.getType(), scaled,
                                     bcast.getAxis());
  Value p = math::Exp2Op::create(
      b, loc, math::FmaOp::create(b, loc, x, factor, offset));
  exp.replaceAllUsesWith(p);
  exp.erase();
  // What only the exp read: the subtraction, its broadcast, the product
  // and its splat.
  for (Operation *op : {sub.getOperation(), bcast.getOperation(),
                        mul ? mul.getOperation() : nullptr}) {
    if (!op || !op->use_empty())
      continue;
    SmallVector<Value> operands(op->getOperands());
    op->erase();
    for (Value operand : operands)
      if (Operation *def = operand.getDefiningOp();
          def && def->use_empty() && isa<tensor::SplatOp>(def)) {
        made.erase(operand);
        def->erase();
      }
  }
  return true;
}

struct TileExp2Pass final
    : tiled_attn::tile::impl::TileExp2PassBase<TileExp2Pass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    // The backward's exps of the forward's log-sum-exps.
    SmallVector<math::ExpOp> exps;
    func.walk([&](math::ExpOp exp) { exps.push_back(exp); });
    llvm::DenseMap<Value, Value> made;
    for (math::ExpOp exp : exps)
      rewritePlainExp(exp, made);
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
    // A log-sum-exp of the chain reads its max in the new units.
    result = func.walk([&](LogSumExpOp op) {
      // With exp2 it scales the max by its own scale: the chain's.
      if (llvm::any_of(steps, [&](OnlineSoftmaxOp step) {
            return step.getScale() != op.getScale();
          })) {
        op.emitError() << "tile-exp2: the log-sum-exp's scale is not its "
                          "online-softmax chain's; with exp2 it would "
                          "scale the chain's max by another factor";
        return WalkResult::interrupt();
      }
      if (!isChainedMax(op.getMax())) {
        op.emitError() << "tile-exp2: the log-sum-exp's max does not come "
                          "from an online-softmax chain; exp2 would change "
                          "the chain's units but not its";
        return WalkResult::interrupt();
      }
      op.setExp2(true);
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      return signalPassFailure();
    if (auto sdpa =
            func->getAttrOfType<SdpaAttr>(TileDialect::getSdpaAttrName()))
      func->setAttr(TileDialect::getSdpaAttrName(), sdpa.withExp2());
  }
};

} // namespace
