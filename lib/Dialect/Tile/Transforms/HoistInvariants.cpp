//===- HoistInvariants.cpp - Hoist loop-invariant tile ops ----------------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//

#include "tiled_attn/Dialect/Tile/IR/TileOps.h"
#include "tiled_attn/Dialect/Tile/Transforms/Passes.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"

namespace tiled_attn::tile {
#define GEN_PASS_DEF_TILEHOISTINVARIANTSPASS
#include "tiled_attn/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace tiled_attn::tile

using namespace mlir;
using namespace tiled_attn::tile;

namespace {

struct TileHoistInvariantsPass final
    : tiled_attn::tile::impl::TileHoistInvariantsPassBase<
          TileHoistInvariantsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();

    // Views the function writes: loads from them must stay where they are.
    llvm::SmallDenseSet<Value> written;
    func.walk([&](StoreOp store) { written.insert(store.getView()); });
    func.walk([&](WriteOp write) { written.insert(write.getView()); });

    // A tile.load never faults (out-of-bounds elements read the pad value),
    // so one from a read-only view may move out of a loop that might not
    // run, like any pure op.
    auto canHoist = [&](Operation *op) {
      if (auto load = dyn_cast<LoadOp>(op))
        return !written.contains(load.getView());
      // A scalar read of a captured input (ALiBi's slope of the head): the
      // caller gives one for every position its function sees, nothing
      // writes it, so it moves out like a load (a program whose loop runs
      // no step reads one element it does not use).
      if (auto read = dyn_cast<ReadOp>(op)) {
        ArgAttr role = getArgAttrOf(read.getView());
        return role && role.getRole() == ArgRole::Captured &&
               !written.contains(read.getView());
      }
      // A broadcast costs nothing in the loop (each thread reuses the
      // registers of its rows or columns) but a whole block of registers
      // live through it when hoisted: a vector of positions or per-token
      // values broadcast to a score block (score and mask functions) stays.
      // (A splat of a scalar lowers to one register wherever it is.)
      if (isa<BroadcastOp>(op))
        return false;
      return isMemoryEffectFree(op) && isSpeculatable(op) &&
             op->getNumRegions() == 0;
    };
    func.walk([&](LoopLikeOpInterface loop) {
      moveLoopInvariantCode(
          loop.getLoopRegions(),
          [&](Value value, Region *region) {
            return !region->isAncestor(value.getParentRegion());
          },
          [&](Operation *op, Region *) { return canHoist(op); },
          [&](Operation *op, Region *) { loop.moveOutOfLoop(op); });
    });

    // Fold what became constant: broadcasts of splats, masks with constant
    // operands, selects and ands with constant masks.
    RewritePatternSet patterns(&getContext());
    for (Dialect *dialect : getContext().getLoadedDialects())
      dialect->getCanonicalizationPatterns(patterns);
    for (RegisteredOperationName op : getContext().getRegisteredOperations())
      op.getCanonicalizationPatterns(patterns, &getContext());
    if (failed(applyPatternsGreedily(func, std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
