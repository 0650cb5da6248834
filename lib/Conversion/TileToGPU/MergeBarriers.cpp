//===- MergeBarriers.cpp - Merge CTA barriers with nothing between --------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The GPU lowering places barriers one load at a time: one before a copy
// refills a buffer (everyone is done reading it) and one after a wait (the
// copy has landed, for everyone). In a software-pipelined loop the two often
// meet with only register work between:
//
//   gpu.barrier                       // K buffer free
//   nvgpu.device_async_copy ...       // refill K
//   ... softmax: registers, shuffles, votes ...
//   nvvm.cp.async.wait.group 1        // V has landed (K may stay in flight)
//   gpu.barrier                       // ... for everyone
//
// becomes
//
//   nvvm.cp.async.wait.group 0        // V has landed
//   gpu.barrier
//   nvgpu.device_async_copy ...
//   ... softmax ...
//
//===----------------------------------------------------------------------===//

#include "tiled_attn/Conversion/Passes.h"
#include "tiled_attn/Conversion/TileToGPU/TileToGPU.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace tiled_attn {
#define GEN_PASS_DEF_MERGEBARRIERSPASS
#include "tiled_attn/Conversion/Passes.h.inc"
} // namespace tiled_attn

using namespace mlir;

namespace {

bool isCopyIssue(Operation *op) {
  return isa<nvgpu::DeviceAsyncCopyOp, nvgpu::DeviceAsyncCreateGroupOp>(op);
}

bool isWait(Operation *op) {
  return isa<nvgpu::DeviceAsyncWaitOp, NVVM::CpAsyncWaitGroupOp>(op);
}

/// Whether `op` leaves shared (and any other) memory alone. Warp votes
/// synchronize a warp's lanes but touch no memory; neither does the MUFU
/// exp2 that the lowering calls by name.
bool touchesNoMemory(Operation *op) {
  if (auto call = dyn_cast<LLVM::CallIntrinsicOp>(op))
    return call.getIntrin() == tiled_attn::kExp2Intrinsic;
  return isa<NVVM::VoteSyncOp>(op) || isMemoryEffectFree(op);
}

/// The number of newer groups that `wait` lets stay in flight.
int64_t groupsInFlight(Operation *wait) {
  if (auto w = dyn_cast<NVVM::CpAsyncWaitGroupOp>(wait))
    return w.getN();
  auto w = cast<nvgpu::DeviceAsyncWaitOp>(wait);
  return w.getNumGroups() ? static_cast<int64_t>(*w.getNumGroups()) : 0;
}

void setGroupsInFlight(Operation *wait, int64_t n) {
  if (auto w = dyn_cast<NVVM::CpAsyncWaitGroupOp>(wait))
    return w.setN(static_cast<int32_t>(n));
  cast<nvgpu::DeviceAsyncWaitOp>(wait).setNumGroups(static_cast<uint32_t>(n));
}

/// Merges `second` into the barrier before it in its block, if nothing but
/// copy issues, waits and memory-free ops lie between. Returns whether it
/// did.
bool mergeIntoPrevious(gpu::BarrierOp second) {
  SmallVector<Operation *> waits;
  SmallVector<int64_t> newCounts;
  int64_t committed = 0; // groups committed between the previous barrier
                         // and the op being looked at, counted backwards
  SmallVector<std::pair<Operation *, int64_t>> pending;
  Operation *first = nullptr;
  for (Operation *op = second->getPrevNode(); op; op = op->getPrevNode()) {
    if (isa<gpu::BarrierOp>(op)) {
      first = op;
      break;
    }
    if (isWait(op)) {
      pending.push_back({op, committed});
      continue;
    }
    if (isa<nvgpu::DeviceAsyncCreateGroupOp>(op)) {
      ++committed;
      continue;
    }
    if (!isCopyIssue(op) && !touchesNoMemory(op))
      return false;
  }
  if (!first)
    return false;
  // `committed` now counts every group committed between the barriers; a
  // wait saw `committed - after` of them behind it, `after` being those
  // committed after it.
  for (auto [wait, after] : pending) {
    int64_t before = committed - after;
    int64_t n = groupsInFlight(wait) - before;
    if (n < 0)
      return false; // it waits for a copy issued after the first barrier
    // An nvgpu wait names its group: that token must exist before `first`.
    if (auto w = dyn_cast<nvgpu::DeviceAsyncWaitOp>(wait))
      if (Operation *def = w.getAsyncDependencies().getDefiningOp();
          def && def->getBlock() == first->getBlock() &&
          !def->isBeforeInBlock(first))
        return false;
    waits.push_back(wait);
    newCounts.push_back(n);
  }
  // `pending` went backwards: move the waits in their original order.
  for (int64_t i = static_cast<int64_t>(waits.size()) - 1; i >= 0; --i) {
    setGroupsInFlight(waits[i], newCounts[i]);
    waits[i]->moveBefore(first);
  }
  second->erase();
  return true;
}

struct MergeBarriersPass final
    : tiled_attn::impl::MergeBarriersPassBase<MergeBarriersPass> {
  void runOnOperation() override {
    SmallVector<gpu::BarrierOp> barriers;
    getOperation()->walk([&](gpu::BarrierOp b) { barriers.push_back(b); });
    for (gpu::BarrierOp barrier : barriers)
      mergeIntoPrevious(barrier);
  }
};

} // namespace
