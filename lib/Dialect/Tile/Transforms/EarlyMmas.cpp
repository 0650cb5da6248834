//===- EarlyMmas.cpp - Issue a loop's independent products together -------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// On wgmma a product is issued and runs while the warpgroup computes; it is
// waited for where its result is first read. A loop body that issues a
// product, waits for it, computes on the result and only then issues the
// next product that did not need it leaves the matrix unit idle while it
// computes. The backward's step is such a body: Sᵀ = K Qᵀ, P = exp(Sᵀ - L),
// dV += Pᵀ dO, and only then dPᵀ = V dOᵀ, which needs neither. Moved up to
// just after Sᵀ (FlashAttention-3's order), dPᵀ runs while P is computed
// (the wait for Sᵀ leaves it in flight: tilegpu-resolve-async-waits), and
// the wait for dPᵀ leaves dV's product in flight.
//
// Each tile.mma after the body's first one moves, with the ops of the body
// it needs, to just after the first (after those moved before it, in
// order) when nothing it needs reads another product's result, has
// regions or writes memory, and no write comes between where a load it
// needs was and where it goes. Nothing else moves: no write changes place
// relative to any read. Both products' results are live at once:
// registers, which the configuration's ptxas report weighs.
//
//===----------------------------------------------------------------------===//

#include "tiled_attn/Dialect/Tile/IR/TileOps.h"
#include "tiled_attn/Dialect/Tile/Transforms/MemoryOrder.h"
#include "tiled_attn/Dialect/Tile/Transforms/Passes.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace tiled_attn::tile {
#define GEN_PASS_DEF_TILEEARLYMMASPASS
#include "tiled_attn/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace tiled_attn::tile

using namespace mlir;
using namespace tiled_attn::tile;

namespace {

/// Moves `mma` and the ops of `body` it depends on that come after `after`
/// to just after `after`, in their order, if none of them reads a product
/// (another tile.mma of the body, directly or through other ops), none has
/// regions, and each is free of memory effects or only reads memory that
/// nothing between `after` and it may write (a load of the step's block).
/// Returns the op the next mover goes after: `mma` if it moved, else
/// `after`.
Operation *moveAfter(MmaOp mma, Operation *after, Block *body) {
  SetVector<Operation *> slice;
  BackwardSliceOptions options;
  options.inclusive = true;
  options.omitBlockArguments = true;
  options.filter = [&](Operation *op) { return op->getBlock() == body; };
  if (failed(getBackwardSlice(mma.getOperation(), &slice, options)))
    return after;
  for (Operation *op : slice) {
    if (op != mma.getOperation() && isa<MmaOp>(op))
      return after;
    if (op->getNumRegions() != 0)
      return after;
    if (!isMemoryEffectFree(op) &&
        (!onlyReadsMemory(op) ||
         (after->isBeforeInBlock(op) && writesBetween(after, op))))
      return after;
  }
  SmallVector<Operation *> moving;
  for (Operation *op : slice)
    if (after->isBeforeInBlock(op))
      moving.push_back(op);
  llvm::sort(moving,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  for (Operation *op : moving) {
    op->moveAfter(after);
    after = op;
  }
  return mma.getOperation();
}

struct TileEarlyMmasPass final
    : tiled_attn::tile::impl::TileEarlyMmasPassBase<TileEarlyMmasPass> {
  void runOnOperation() override {
    getOperation().walk([&](scf::ForOp loop) {
      Block *body = loop.getBody();
      SmallVector<MmaOp> mmas;
      for (Operation &op : *body)
        if (auto mma = dyn_cast<MmaOp>(op))
          mmas.push_back(mma);
      if (mmas.size() < 2)
        return;
      Operation *after = mmas.front();
      for (MmaOp mma : llvm::drop_begin(mmas))
        after = moveAfter(mma, after, body);
    });
  }
};

} // namespace
