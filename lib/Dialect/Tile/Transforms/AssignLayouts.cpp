//===- AssignLayouts.cpp - Thread layouts for the mma.sync family ---------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Tiles that must share a layout (the operands and results of an elementwise
// op, the values a loop carries) form classes; the ops whose layout is fixed
// by the hardware (mma, row and column reductions and broadcasts, masks,
// stores) seed them. Every class must end with exactly one layout.
//
//===----------------------------------------------------------------------===//

#include "tiled_attn/Dialect/Tile/IR/TileOps.h"
#include "tiled_attn/Dialect/Tile/Transforms/Passes.h"
#include "tiled_attn/Dialect/Tile/Transforms/RegionTies.h"

#include "llvm/ADT/EquivalenceClasses.h"

namespace tiled_attn::tile {
#define GEN_PASS_DEF_TILEASSIGNLAYOUTSPASS
#include "tiled_attn/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace tiled_attn::tile

using namespace mlir;
using namespace tiled_attn::tile;

namespace {

/// The load that stages `value` in shared memory: its definition, or, for a
/// value a loop carries (software pipelining) or leaves (to the next loop of
/// the same pipeline), the load that starts it.
LoadOp stagingLoad(Value value) {
  if (auto load = value.getDefiningOp<LoadOp>())
    return load;
  if (auto loop = value.getDefiningOp<scf::ForOp>())
    return stagingLoad(
        loop.getInitArgs()[cast<OpResult>(value).getResultNumber()]);
  auto arg = dyn_cast<BlockArgument>(value);
  auto loop =
      arg ? dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp()) : nullptr;
  if (!loop || arg.getArgNumber() == 0)
    return nullptr;
  return stagingLoad(loop.getInitArgs()[arg.getArgNumber() - 1]);
}

class LayoutAssignment {
public:
  LayoutAssignment(func::FuncOp func, int64_t warps, bool smemLhs)
      : func(func), warps(warps), smemLhs(smemLhs) {}
  LogicalResult run();

private:
  LayoutAttr layout(LayoutKind kind, bool transposed = false) {
    return LayoutAttr::get(func.getContext(), kind, warps, transposed);
  }
  void unify(Value a, Value b) {
    if (isa<RankedTensorType>(a.getType()) &&
        isa<RankedTensorType>(b.getType()))
      classes.unionSets(a, b);
  }
  void seed(Value v, LayoutAttr l) {
    classes.insert(v);
    seeds.emplace_back(v, l);
  }
  LogicalResult visit(Operation *op);
  LogicalResult checkShape(Value v, LayoutAttr l);

  func::FuncOp func;
  int64_t warps;
  bool smemLhs;
  llvm::EquivalenceClasses<Value> classes;
  SmallVector<std::pair<Value, LayoutAttr>> seeds;
};

LogicalResult LayoutAssignment::visit(Operation *op) {
  for (Value v : op->getResults())
    if (isa<RankedTensorType>(v.getType()))
      classes.insert(v);
  if (isa<OnlineSoftmaxOp>(op))
    return op->emitError() << "tile-assign-layouts: decompose the online "
                              "softmax first (tile-decompose-online-softmax)";
  if (auto convert = dyn_cast<ConvertLayoutOp>(op))
    return success(); // A boundary: each side keeps its own class.
  if (auto mma = dyn_cast<MmaOp>(op)) {
    LoadOp rhs = stagingLoad(mma.getRhs());
    if (!rhs)
      return op->emitError() << "tile-assign-layouts: expects the rhs of "
                                "tile.mma to come from a tile.load, directly "
                                "or carried by a loop (it is staged in shared "
                                "memory)";
    // A loop-carried operand: the loads that refill it must stage it the same
    // way as the one that starts it.
    if (auto arg = dyn_cast<BlockArgument>(mma.getRhs())) {
      auto loop = cast<scf::ForOp>(arg.getOwner()->getParentOp());
      Value yielded = loop.getYieldedValues()[arg.getArgNumber() - 1];
      while (auto chained = dyn_cast<BlockArgument>(yielded)) {
        if (chained.getOwner() != loop.getBody() || chained.getArgNumber() == 0)
          break;
        yielded = loop.getYieldedValues()[chained.getArgNumber() - 1];
      }
      auto refill = yielded.getDefiningOp<LoadOp>();
      if (!refill || refill.getTranspose() != rhs.getTranspose() ||
          refill.getBlockShape() != rhs.getBlockShape())
        return op->emitError()
               << "tile-assign-layouts: the loads that start and refill this "
                  "loop-carried operand stage it differently";
    }
    // A lhs straight from memory may stay where its copy put it; ldmatrix
    // reads it at every k-step (untransposed only: ldmatrix.trans would be
    // needed otherwise).
    auto lhsLoad = mma.getLhs().getDefiningOp<LoadOp>();
    if (smemLhs && lhsLoad && !lhsLoad.getTranspose())
      seed(mma.getLhs(), layout(LayoutKind::Shared));
    else
      seed(mma.getLhs(), layout(LayoutKind::OperandA));
    seed(mma.getRhs(), layout(LayoutKind::Shared, rhs.getTranspose()));
    seed(mma.getAcc(), layout(LayoutKind::Acc));
    seed(mma.getResult(), layout(LayoutKind::Acc));
    return success();
  }
  if (auto reduce = dyn_cast<ReduceOp>(op)) {
    if (!isa<RankedTensorType>(reduce.getType()))
      return op->emitError() << "tile-assign-layouts: a reduction to a scalar "
                                "has no mma.sync layout yet";
    seed(reduce.getInput(), layout(LayoutKind::Acc));
    seed(reduce.getResult(),
         layout(reduce.getAxis() == 1 ? LayoutKind::Rows : LayoutKind::Cols));
    return success();
  }
  if (auto bcast = dyn_cast<BroadcastOp>(op)) {
    seed(bcast.getInput(),
         layout(bcast.getAxis() == 1 ? LayoutKind::Rows : LayoutKind::Cols));
    seed(bcast.getResult(), layout(LayoutKind::Acc));
    return success();
  }
  if (auto mask = dyn_cast<CausalMaskOp>(op)) {
    seed(mask, layout(LayoutKind::Acc));
    return success();
  }
  if (auto store = dyn_cast<StoreOp>(op)) {
    seed(store.getValue(), layout(LayoutKind::Acc));
    if (store.getMask())
      seed(store.getMask(), layout(LayoutKind::Acc));
    return success();
  }
  if (auto loop = dyn_cast<scf::ForOp>(op))
    for (BlockArgument arg : loop.getRegionIterArgs())
      classes.insert(arg);
  if (forEachRegionTie(op, [&](Value a, Value b) { unify(a, b); }))
    return success();
  if (op->hasTrait<OpTrait::Elementwise>()) {
    Value first;
    for (Value v : llvm::concat<Value>(op->getOperands(), op->getResults())) {
      if (!isa<RankedTensorType>(v.getType()))
        continue;
      if (first)
        unify(first, v);
      else
        first = v;
    }
  }
  return success();
}

LogicalResult LayoutAssignment::checkShape(Value v, LayoutAttr l) {
  auto type = cast<RankedTensorType>(v.getType());
  ArrayRef<int64_t> shape = type.getShape();
  int64_t rowQuantum = 16 * warps;
  auto fail = [&](StringRef what) {
    return emitError(v.getLoc())
           << "tile-assign-layouts: a tile of shape " << type << " in the '"
           << stringifyLayoutKind(l.getKind()) << "' layout with " << warps
           << " warps needs " << what;
  };
  switch (l.getKind()) {
  case LayoutKind::Acc:
  case LayoutKind::OperandA:
    if (shape.size() != 2 || shape[0] % rowQuantum ||
        shape[1] % (l.getKind() == LayoutKind::Acc ? 8 : 16))
      return fail("rows a multiple of 16 x warps and columns of 8 (16 for "
                  "an operand)");
    return success();
  case LayoutKind::Rows:
    if (shape.size() != 1 || shape[0] % rowQuantum)
      return fail("a length that is a multiple of 16 x warps");
    return success();
  case LayoutKind::Cols:
    if (shape.size() != 1 || shape[0] % 8)
      return fail("a length that is a multiple of 8");
    return success();
  case LayoutKind::Shared:
    if (shape.size() != 2 || shape[0] % 16 || shape[1] % 16)
      return fail("both dimensions multiples of 16");
    return success();
  }
  return success();
}

LogicalResult LayoutAssignment::run() {
  // An mma operand computed in registers (P) arrives in the accumulator
  // layout of the mma that produced it: make the move explicit.
  func.walk([&](MmaOp mma) {
    if (mma.getLhs().getDefiningOp<LoadOp>())
      return;
    OpBuilder b(mma);
    auto convert = ConvertLayoutOp::create(
        b, mma.getLoc(), mma.getLhs().getType(), mma.getLhs());
    mma.getLhsMutable().assign(convert);
  });

  WalkResult walk = func.walk([&](Operation *op) {
    return failed(visit(op)) ? WalkResult::interrupt() : WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();

  llvm::DenseMap<Value, LayoutAttr> chosen;
  for (auto [value, l] : seeds) {
    Value leader = classes.getLeaderValue(value);
    LayoutAttr &slot = chosen[leader];
    if (slot && slot != l)
      return emitError(value.getLoc())
             << "tile-assign-layouts: this tile needs both " << slot << " and "
             << l;
    slot = l;
  }

  SmallVector<Value> values;
  func.walk([&](Operation *op) {
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments())
          values.push_back(arg);
    for (Value result : op->getResults())
      values.push_back(result);
  });
  for (Value v : values) {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (!type)
      continue;
    LayoutAttr l = chosen.lookup(classes.getLeaderValue(v));
    if (!l)
      return emitError(v.getLoc())
             << "tile-assign-layouts: cannot tell how to spread " << type
             << " over the threads";
    if (failed(checkShape(v, l)))
      return failure();
    v.setType(RankedTensorType::get(type.getShape(), type.getElementType(), l));
  }

  // Constants must carry their result's encoding; conversions must map
  // layouts the registers allow.
  WalkResult fix = func.walk([&](Operation *op) {
    if (auto cst = dyn_cast<arith::ConstantOp>(op)) {
      if (auto dense = dyn_cast<DenseElementsAttr>(cst.getValue()))
        cst.setValueAttr(dense.reshape(cast<ShapedType>(cst.getType())));
      return WalkResult::advance();
    }
    if (isa<ConvertLayoutOp>(op)) {
      auto from = cast<LayoutAttr>(
          cast<RankedTensorType>(op->getOperand(0).getType()).getEncoding());
      auto to = cast<LayoutAttr>(
          cast<RankedTensorType>(op->getResult(0).getType()).getEncoding());
      bool sameRegs = from == to || (from.getKind() == LayoutKind::Acc &&
                                     to.getKind() == LayoutKind::OperandA);
      if (!sameRegs) {
        op->emitError() << "tile-assign-layouts: no register move from " << from
                        << " to " << to << " yet";
        return WalkResult::interrupt();
      }
    }
    return WalkResult::advance();
  });
  return failure(fix.wasInterrupted());
}

struct TileAssignLayoutsPass final
    : tiled_attn::tile::impl::TileAssignLayoutsPassBase<TileAssignLayoutsPass> {
  using Base::Base;
  void runOnOperation() override {
    if (warps != 1 && warps != 2 && warps != 4 && warps != 8) {
      getOperation().emitError()
          << "tile-assign-layouts: warps must be 1, 2, 4 or 8, got "
          << int64_t{warps};
      return signalPassFailure();
    }
    func::FuncOp func = getOperation();
    auto isTile = [](Type t) { return isa<RankedTensorType>(t); };
    if (llvm::any_of(func.getArgumentTypes(), isTile) ||
        llvm::any_of(func.getResultTypes(), isTile)) {
      func.emitError() << "tile-assign-layouts: expects a kernel whose "
                          "arguments and results are views and scalars, not "
                          "tiles";
      return signalPassFailure();
    }
    if (failed(LayoutAssignment(func, warps, smemLhs).run()))
      signalPassFailure();
  }
};

} // namespace
