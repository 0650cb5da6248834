//===- ResolveAsyncWaits.cpp - Copy groups each wait leaves in flight -----===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// A thread's cp.async groups complete in the order it committed them, so a
// wait for one copy is `cp.async.wait_group N` with N the groups committed
// after it. Through a loop, a buffer comes from two places: the loop's
// initial value (first iteration) and its yield (the others); a loop result
// is the yield, or the initial value when the loop runs no iteration. The
// count is the minimum over every such path, and copies in nested regions
// are not counted: a lower bound, so a wait is never too short.
//
// wgmma groups complete in order too: a tilegpu.mma_wait is
// `wgmma.wait_group N` with N the wgmma products issued after its mma and
// before it in the same block (its mma's block; nested ones are not
// counted, and a wait elsewhere leaves none in flight).
//
//===----------------------------------------------------------------------===//

#include "tiled_attn/Dialect/TileGPU/IR/TileGPUOps.h"
#include "tiled_attn/Dialect/TileGPU/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "llvm/ADT/DenseSet.h"

namespace tiled_attn::tilegpu {
#define GEN_PASS_DEF_TILEGPURESOLVEASYNCWAITSPASS
#include "tiled_attn/Dialect/TileGPU/Transforms/Passes.h.inc"
} // namespace tiled_attn::tilegpu

using namespace mlir;
using namespace tiled_attn::tilegpu;

namespace {

/// No copy on this path (a cycle through a loop that hands a buffer on
/// unchanged): it bounds nothing.
constexpr int64_t kNoCopy = std::numeric_limits<int64_t>::max() / 4;

/// Copies issued by ops [from, to) of one block, not counting nested ones.
int64_t copiesBetween(Block::iterator from, Block::iterator to) {
  int64_t n = 0;
  for (; from != to; ++from)
    n += isa<AsyncCopyOp>(*from);
  return n;
}

class GroupCounter {
public:
  /// The fewest groups committed after the copy that produced `value`, up
  /// to (not including) `at`, an op of a block where `value` is visible:
  /// its own block or a block nested in it.
  int64_t groupsAfter(Value value, Operation *at);

private:
  int64_t viaLoopArg(BlockArgument arg, scf::ForOp loop, Operation *at);
  int64_t viaLoopResult(OpResult result, scf::ForOp loop, Operation *at);
  llvm::DenseSet<std::pair<Value, Operation *>> visiting;
};

int64_t GroupCounter::groupsAfter(Value value, Operation *at) {
  if (!visiting.insert({value, at}).second)
    return kNoCopy;
  int64_t n = 0;
  if (auto copy = value.getDefiningOp<AsyncCopyOp>()) {
    Operation *end = copy->getBlock()->findAncestorOpInBlock(*at);
    n = end ? copiesBetween(std::next(copy->getIterator()), end->getIterator())
            : 0;
  } else if (auto arg = dyn_cast<BlockArgument>(value)) {
    auto loop = dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp());
    n = loop && arg.getArgNumber() > 0 ? viaLoopArg(arg, loop, at) : 0;
  } else if (auto loop = value.getDefiningOp<scf::ForOp>()) {
    n = viaLoopResult(cast<OpResult>(value), loop, at);
  }
  visiting.erase({value, at});
  return n;
}

int64_t GroupCounter::viaLoopArg(BlockArgument arg, scf::ForOp loop,
                                 Operation *at) {
  Block *body = loop.getBody();
  Operation *end = body->findAncestorOpInBlock(*at);
  int64_t inBody = end ? copiesBetween(body->begin(), end->getIterator()) : 0;
  unsigned i = arg.getArgNumber() - 1;
  auto yield = cast<scf::YieldOp>(body->getTerminator());
  int64_t entry = groupsAfter(loop.getInitArgs()[i], loop);
  int64_t backedge = groupsAfter(yield.getOperand(i), yield);
  return std::min(entry, backedge) + inBody;
}

int64_t GroupCounter::viaLoopResult(OpResult result, scf::ForOp loop,
                                    Operation *at) {
  Operation *end = loop->getBlock()->findAncestorOpInBlock(*at);
  int64_t after =
      end ? copiesBetween(std::next(loop->getIterator()), end->getIterator())
          : 0;
  unsigned i = result.getResultNumber();
  auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
  int64_t noTrip = groupsAfter(loop.getInitArgs()[i], loop);
  int64_t last = groupsAfter(yield.getOperand(i), yield);
  return std::min(noTrip, last) + after;
}

/// After a loop whose buffers in flight nobody takes over, a later copy may
/// reuse their buffers: every thread first waits for all its copies.
void drainUnusedPrefetches(Operation *root) {
  root->walk([&](scf::ForOp loop) {
    bool inFlight = llvm::any_of(loop.getResults(), [](OpResult r) {
      return isa<BufferType>(r.getType()) && r.use_empty();
    });
    if (!inFlight)
      return;
    // A copy may come later in any enclosing block, or in the next
    // iteration of an enclosing loop.
    auto hasCopy = [](Operation *op) {
      return op->walk([](AsyncCopyOp) { return WalkResult::interrupt(); })
          .wasInterrupted();
    };
    bool copyFollows = false;
    for (Operation *at = loop; at && !copyFollows && !isa<func::FuncOp>(at);
         at = at->getParentOp()) {
      for (Operation *op = at->getNextNode(); op && !copyFollows;
           op = op->getNextNode())
        copyFollows = hasCopy(op);
      Operation *parent = at->getParentOp();
      if (!copyFollows && parent && isa<LoopLikeOpInterface>(parent))
        copyFollows = hasCopy(parent);
    }
    if (!copyFollows)
      return;
    OpBuilder b(loop->getContext());
    b.setInsertionPointAfter(loop);
    AsyncWaitAllOp::create(b, loop.getLoc());
  });
}

/// wgmma products issued after `wait`'s mma and before `wait`.
int64_t mmaGroupsBefore(MmaWaitOp wait) {
  auto mma = wait.getAcc().getDefiningOp<MmaOp>();
  if (!mma || mma->getBlock() != wait->getBlock())
    return 0;
  int64_t n = 0;
  for (Operation *op = mma->getNextNode(); op != wait; op = op->getNextNode())
    if (auto other = dyn_cast<MmaOp>(op))
      n += isAsyncMmaResult(other.getType());
  return n;
}

struct TileGPUResolveAsyncWaitsPass final
    : tiled_attn::tilegpu::impl::TileGPUResolveAsyncWaitsPassBase<
          TileGPUResolveAsyncWaitsPass> {
  void runOnOperation() override {
    GroupCounter counter;
    getOperation()->walk([&](AsyncWaitOp wait) {
      int64_t n = counter.groupsAfter(wait.getCopy(), wait);
      if (n >= kNoCopy)
        n = 0;
      wait.setPending(n);
    });
    getOperation()->walk(
        [&](MmaWaitOp wait) { wait.setPending(mmaGroupsBefore(wait)); });
    drainUnusedPrefetches(getOperation());
  }
};

} // namespace
