//===- MergeBarriers.cpp - Drop barriers nothing separates ----------------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// A CTA barrier orders the shared-memory accesses before it against those
// after it. Between two barriers B0 and B1 of a block where no thread
// touches shared memory (copy issues aside: their completion is ordered by
// waits, not barriers), B1 orders nothing B0 does not: it goes.
//
// With hoist-waits, a wait between them moves above B0 first. That is sound
// when the copy it waits for was issued before B0: the wait then still
// follows that copy, and B0 publishes what it waited for as B1 did.
//
//===----------------------------------------------------------------------===//

#include "tiled_attn/Dialect/TileGPU/IR/TileGPUOps.h"
#include "tiled_attn/Dialect/TileGPU/Transforms/Passes.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace tiled_attn::tilegpu {
#define GEN_PASS_DEF_TILEGPUMERGEBARRIERSPASS
#include "tiled_attn/Dialect/TileGPU/Transforms/Passes.h.inc"
} // namespace tiled_attn::tilegpu

using namespace mlir;
using namespace tiled_attn::tilegpu;

namespace {

/// Whether `value` is available before `op` (defined in an enclosing block,
/// or earlier in op's block).
bool availableBefore(Value value, Operation *op) {
  Operation *def = value.getDefiningOp();
  Block *block = def ? def->getBlock() : cast<BlockArgument>(value).getOwner();
  if (block != op->getBlock())
    return block->getParentOp()->isProperAncestor(op);
  return !def || def->isBeforeInBlock(op);
}

/// Merges `second` into the previous barrier of its block if nothing but
/// copy issues, memory-free ops and (with `hoistWaits`) movable waits lie
/// between. Returns whether it did.
bool mergeIntoPrevious(gpu::BarrierOp second, bool hoistWaits) {
  SmallVector<AsyncWaitOp> waits;
  Operation *first = nullptr;
  for (Operation *op = second->getPrevNode(); op; op = op->getPrevNode()) {
    if (isa<gpu::BarrierOp>(op)) {
      first = op;
      break;
    }
    if (isa<AsyncCopyOp, SlotOp>(op) || isMemoryEffectFree(op))
      continue;
    auto wait = dyn_cast<AsyncWaitOp>(op);
    if (!hoistWaits || !wait)
      return false;
    waits.push_back(wait);
  }
  if (!first)
    return false;
  for (AsyncWaitOp wait : waits)
    if (!availableBefore(wait.getCopy(), first))
      return false; // it waits for a copy issued after the first barrier
  // `waits` went backwards: move them in their original order.
  for (AsyncWaitOp wait : llvm::reverse(waits))
    wait->moveBefore(first);
  second->erase();
  return true;
}

struct TileGPUMergeBarriersPass final
    : tiled_attn::tilegpu::impl::TileGPUMergeBarriersPassBase<
          TileGPUMergeBarriersPass> {
  using Base::Base;
  void runOnOperation() override {
    SmallVector<gpu::BarrierOp> barriers;
    getOperation()->walk([&](gpu::BarrierOp b) { barriers.push_back(b); });
    for (gpu::BarrierOp barrier : barriers)
      mergeIntoPrevious(barrier, hoistWaits);
  }
};

} // namespace
