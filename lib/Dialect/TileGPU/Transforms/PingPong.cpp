//===- PingPong.cpp - Warpgroups take turns issuing wgmma -----------------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// FlashAttention-3's ping-pong between consumer warpgroups: each run of
// asynchronous products (Q.K^T, and P.V when it is deferred next to it) is
// issued in this warpgroup's turn, so that one warpgroup's products occupy
// the tensor cores while the other's softmax runs on the other units.
//
//===----------------------------------------------------------------------===//

#include "tiled_attn/Dialect/TileGPU/IR/TileGPUOps.h"
#include "tiled_attn/Dialect/TileGPU/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"

namespace tiled_attn::tilegpu {
#define GEN_PASS_DEF_TILEGPUPINGPONGPASS
#include "tiled_attn/Dialect/TileGPU/Transforms/Passes.h.inc"
} // namespace tiled_attn::tilegpu

using namespace mlir;
using namespace tiled_attn::tilegpu;

namespace {

bool isAsyncMma(Operation &op) {
  auto mma = dyn_cast<MmaOp>(op);
  return mma && isAsyncMmaResult(mma.getType());
}

struct TileGPUPingPongPass final
    : tiled_attn::tilegpu::impl::TileGPUPingPongPassBase<TileGPUPingPongPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    bool any = false;
    func.walk([&](Block *block) {
      Operation *first = nullptr, *last = nullptr;
      auto close = [&] {
        if (!first)
          return;
        OpBuilder b(first);
        TurnTakeOp::create(b, first->getLoc());
        b.setInsertionPointAfter(last);
        TurnPassOp::create(b, last->getLoc());
        first = last = nullptr;
        any = true;
      };
      for (Operation &op : *block) {
        if (isAsyncMma(op)) {
          if (!first)
            first = &op;
          last = &op;
        } else if (isa<MmaWaitOp>(op) || op.getNumRegions() != 0) {
          close();
        }
      }
      close();
    });
    if (!any)
      return;
    // The first turn: after the barrier that publishes the mbarriers (both
    // roles of a warp-specialized kernel start after it), else at the top.
    Block &entry = func.front();
    Operation *at = &entry.front();
    for (Operation &op : entry)
      if (isa<MBarrierInitOp>(op))
        at = op.getNextNode();
    while (at != entry.getTerminator() && isa<MBarrierInitOp>(at))
      at = at->getNextNode();
    if (isa<gpu::BarrierOp>(at))
      at = at->getNextNode();
    OpBuilder b(at);
    TurnStartOp::create(b, func.getLoc());
  }
};

} // namespace
