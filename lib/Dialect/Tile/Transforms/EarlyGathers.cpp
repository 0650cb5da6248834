//===- EarlyGathers.cpp - Issue a loop's gathers before its mmas ----------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// A score or mask function that reads a tensor at every (query, key) (a bias
// or a boolean mask: tile.gather of a block) needs its elements right after
// the block's Q.K^T. Left there, each thread's loads wait out their latency
// with nothing to overlap. Moved with the index arithmetic they need to the
// top of the loop body, before the body's first tile.mma, they are in flight
// while the matrix unit computes (Q.K^T, and with tile-defer-pv the previous
// block's P.V). The gathered block lives through the mmas: a block of
// registers more for the length of them.
//
//===----------------------------------------------------------------------===//

#include "tiled_attn/Dialect/Tile/IR/TileOps.h"
#include "tiled_attn/Dialect/Tile/Transforms/MemoryOrder.h"
#include "tiled_attn/Dialect/Tile/Transforms/Passes.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace tiled_attn::tile {
#define GEN_PASS_DEF_TILEEARLYGATHERSPASS
#include "tiled_attn/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace tiled_attn::tile

using namespace mlir;
using namespace tiled_attn::tile;

namespace {

/// Moves `gather` and the ops of `body` it depends on that come after
/// `firstMma` to just before `firstMma`, if all of them are pure, none is
/// an mma (whose result the gather would then need) and nothing between
/// the mma and the gather may write memory. Returns whether it moved.
bool moveBefore(GatherOp gather, Operation *firstMma, Block *body) {
  if (writesBetween(firstMma, gather))
    return false;
  SetVector<Operation *> slice;
  BackwardSliceOptions options;
  options.inclusive = true;
  options.omitBlockArguments = true;
  options.filter = [&](Operation *op) {
    return op->getBlock() == body && firstMma->isBeforeInBlock(op);
  };
  if (failed(getBackwardSlice(gather.getOperation(), &slice, options)))
    return false;
  for (Operation *op : slice) {
    if (op == gather.getOperation())
      continue;
    if (isa<MmaOp>(op) || op->getNumRegions() != 0 || !isMemoryEffectFree(op))
      return false;
  }
  // An operand defined in the body by an op the slice does not move must
  // already come before the mma (the filter leaves out the rest of the
  // body, and the mma itself).
  for (Operation *op : slice)
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp();
          def && def->getBlock() == body && !slice.contains(def) &&
          !def->isBeforeInBlock(firstMma))
        return false;
  SmallVector<Operation *> ordered(slice.begin(), slice.end());
  llvm::sort(ordered,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  for (Operation *op : ordered)
    op->moveBefore(firstMma);
  return true;
}

struct TileEarlyGathersPass final
    : tiled_attn::tile::impl::TileEarlyGathersPassBase<TileEarlyGathersPass> {
  void runOnOperation() override {
    // Views the function writes (directly): a gather of one keeps its
    // place; writes through anything else between the mma and a gather
    // keep it too (writesBetween).
    llvm::SmallDenseSet<Value> written;
    getOperation().walk(
        [&](StoreOp store) { written.insert(store.getView()); });
    getOperation().walk(
        [&](WriteOp write) { written.insert(write.getView()); });
    getOperation().walk([&](scf::ForOp loop) {
      Block *body = loop.getBody();
      Operation *firstMma = nullptr;
      for (Operation &op : *body)
        if (isa<MmaOp>(op)) {
          firstMma = &op;
          break;
        }
      if (!firstMma)
        return;
      SmallVector<GatherOp> gathers;
      for (Operation &op : *body)
        if (auto gather = dyn_cast<GatherOp>(op);
            gather && firstMma->isBeforeInBlock(gather) &&
            !written.contains(gather.getView()))
          gathers.push_back(gather);
      for (GatherOp gather : gathers)
        (void)moveBefore(gather, firstMma, body);
    });
  }
};

} // namespace
