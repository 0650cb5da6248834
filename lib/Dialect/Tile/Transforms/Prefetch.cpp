//===- Prefetch.cpp - Software-pipeline block loads across iterations -----===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// With stages = 3, a loop that loads block %j of a view in iteration %j
//
//   scf.for %j = %lb to %ub step %st iter_args(%acc = %a0) {
//     %k = tile.load %kv[%b, %h, %j, %c0] ...
//     ... uses of %k ...
//   }
//
// keeps two blocks in flight:
//
//   %k0 = tile.load %kv[%b, %h, %lb, %c0] ...
//   %k1 = tile.load %kv[%b, %h, %lb + %st, %c0] ...
//   scf.for %j = ... iter_args(%acc = %a0, %cur = %k0, %next = %k1) {
//     %k2 = tile.load %kv[%b, %h, %j + 2 * %st, %c0] ...
//     ... uses of %cur ...
//     scf.yield ..., %next, %k2
//   }
//
// Blocks past the end read padding and are never used, so there are no
// guards, and loops shorter than the pipeline (empty ones included) compute
// the same results, bit for bit. With stages = 2 and refill-after-use, a
// load marked `in_bounds` (every block the loop reads lies inside the view)
// keeps its mark instead: in a step-1 loop its refill reads block
// min(%j + 1, %ub - 1), a block of the loop, so its copies check no bounds.
// The last iteration reloads the last block, which nobody uses, into the
// buffer it has just finished reading. (Not when a loop that continues the
// pipeline follows, see below: it starts with the block after the end.)
//
// Loops that run one after the other over the same blocks (the two loops of
// a mask split: the second starts where the first ends) form one pipeline:
// the blocks the first loop leaves in flight, which are the second loop's
// first blocks, start the second loop instead of a prologue that would load
// them again. Loops that do not chain (the second does not start where
// the first ends) each get a prologue; the GPU lowering waits for the first
// loop's copies before the second's prologue overwrites their buffers.
//
//===----------------------------------------------------------------------===//

#include "tiled_attn/Dialect/Tile/IR/TileOps.h"
#include "tiled_attn/Dialect/Tile/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

namespace tiled_attn::tile {
#define GEN_PASS_DEF_TILEPREFETCHPASS
#include "tiled_attn/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace tiled_attn::tile

using namespace mlir;
using namespace tiled_attn::tile;

namespace {

/// A load of `loop`'s body that reads one block of a fixed view per
/// iteration: every operand is defined outside the loop but the indices
/// that vary, the block index or, in a paged cache, the page and the block
/// in it (or the pages a block is gathered from, tile.load's `gather`),
/// which are the induction variable itself (one index) or computed
/// from it by `chain`: ops of the body free of memory effects and reads
/// (tile.read) of views defined outside the loop (a block-sparse kernel's
/// block lists, a paged kernel's block table).
struct BlockLoad {
  mutable LoadOp load;
  unsigned blockPos;              // the first index that varies (of the
                                  // indices, then the gather indices)
  SmallVector<Operation *> chain; // in body order
  bool readsMemory = false;
};

/// The ops of `loop`'s body that compute `values` from the induction
/// variable, in body order, or failure when one may write memory, has
/// regions or reads memory other than through a tile.read of a view from
/// outside the loop.
FailureOr<SmallVector<Operation *>>
blockIndexChain(scf::ForOp loop, ValueRange values, bool &readsMemory) {
  llvm::SetVector<Operation *> ops;
  SmallVector<Value> worklist(values.begin(), values.end());
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    if (loop.isDefinedOutsideOfLoop(v) || v == loop.getInductionVar())
      continue;
    // An iteration argument: the block depends on earlier iterations.
    Operation *def = v.getDefiningOp();
    if (!def)
      return failure();
    if (def->getBlock() != loop.getBody() || def->getNumRegions() != 0)
      return failure();
    if (auto read = dyn_cast<ReadOp>(def)) {
      if (!loop.isDefinedOutsideOfLoop(read.getView()))
        return failure();
      readsMemory = true;
    } else if (!isMemoryEffectFree(def)) {
      return failure();
    }
    if (ops.insert(def))
      llvm::append_range(worklist, def->getOperands());
  }
  SmallVector<Operation *> chain(ops.begin(), ops.end());
  llvm::sort(chain,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  return chain;
}

/// The block loads of `loop`'s body (see BlockLoad), in body order.
SmallVector<BlockLoad> findBlockLoads(scf::ForOp loop) {
  Value iv = loop.getInductionVar();
  SmallVector<BlockLoad> loads;
  for (LoadOp load : loop.getBody()->getOps<LoadOp>()) {
    if (!loop.isDefinedOutsideOfLoop(load.getView()))
      continue;
    SmallVector<unsigned> varying;
    SmallVector<Value> indices;
    for (auto [pos, index] : llvm::enumerate(
             llvm::concat<Value>(load.getIndices(), load.getGather())))
      if (!loop.isDefinedOutsideOfLoop(index)) {
        varying.push_back(pos);
        indices.push_back(index);
      }
    // (Two indices that vary: both computed from the induction variable,
    // a page and the block in it; the variable itself twice is not a
    // block.)
    if (varying.empty() ||
        (indices.size() > 1 && llvm::is_contained(indices, iv)))
      continue;
    BlockLoad block{load, varying.front(), {}, false};
    if (indices.size() != 1 || indices.front() != iv) {
      FailureOr<SmallVector<Operation *>> chain =
          blockIndexChain(loop, indices, block.readsMemory);
      // A chain that reads memory reads it at the iterations ahead, which
      // stay inside the loop's range only with step 1 (see cloneBlockLoad).
      if (failed(chain) ||
          (block.readsMemory && getConstantIntValue(loop.getStep()) != 1))
        continue;
      block.chain = std::move(*chain);
    }
    loads.push_back(std::move(block));
  }
  return loads;
}

/// Whether `loop` may write memory that `loads` read. A prefetched load
/// moves ahead of the iterations before it, so a loop that may write what it
/// loads is left alone. The kernel ABI makes one exception decidable: a
/// kernel argument that the kernel writes shares no memory with its other
/// arguments (the runtime refuses calls where an output overlaps another
/// view: docs/gpu-level.md, the kernel ABI), so a write to one argument
/// view does not reach the loads of another (the backward's dQ additions
/// while its Q and dO blocks stream).
bool mayWriteLoaded(scf::ForOp loop, ArrayRef<BlockLoad> loads) {
  std::optional<SmallVector<MemoryEffects::EffectInstance>> effects =
      getEffectsRecursively(loop);
  if (!effects)
    return true;
  // The kernel argument a view is (a varlen kernel's views are slices of
  // its arguments), or null.
  auto kernelArgument = [&](Value v) -> Value {
    while (auto slice = v ? v.getDefiningOp<SliceOp>() : SliceOp())
      v = slice.getView();
    auto arg = dyn_cast_if_present<BlockArgument>(v);
    if (arg && isa<FunctionOpInterface>(arg.getOwner()->getParentOp()) &&
        arg.getOwner()->isEntryBlock())
      return arg;
    return Value();
  };
  return llvm::any_of(*effects, [&](const MemoryEffects::EffectInstance &e) {
    if (!isa<MemoryEffects::Write>(e.getEffect()))
      return false;
    Value written = kernelArgument(e.getValue());
    if (!written)
      return true;
    return llvm::any_of(loads, [&](const BlockLoad &block) {
      Value read = kernelArgument(block.load.getView());
      return !read || read == written;
    });
  });
}

/// Returns `k * step`, as a constant when `step` is one.
Value scaleStep(OpBuilder &b, Location loc, Value step, int64_t k) {
  if (k == 1)
    return step;
  if (std::optional<int64_t> c = getConstantIntValue(step))
    return arith::ConstantIndexOp::create(b, loc, k * *c);
  return arith::MulIOp::create(b, loc, step,
                               arith::ConstantIndexOp::create(b, loc, k));
}

/// Returns `base + k * step`, folded when `base` is 0 or both are constants.
Value addSteps(OpBuilder &b, Location loc, Value base, Value step, int64_t k) {
  if (k == 0)
    return base;
  std::optional<int64_t> cBase = getConstantIntValue(base);
  std::optional<int64_t> cStep = getConstantIntValue(step);
  if (cBase == 0)
    return scaleStep(b, loc, step, k);
  if (cBase && cStep)
    return arith::ConstantIndexOp::create(b, loc, *cBase + k * *cStep);
  return arith::AddIOp::create(b, loc, base, scaleStep(b, loc, step, k));
}

/// Moves each refill of the new `loop` to just after the last op of the body
/// that reads the oldest block of its chain (the block whose buffer it may
/// reuse). Ops are only moved later, past ops that do not read the block.
void sinkRefills(scf::ForOp loop, ArrayRef<Value> refills, int64_t depth) {
  Block *body = loop.getBody();
  for (Value refill : refills) {
    auto load = refill.getDefiningOp<LoadOp>();
    // The oldest block of the chain: yield[arg_0] = arg_1, ...,
    // yield[arg_{depth-1}] = refill.
    Value oldest = refill;
    for (int64_t k = 0; k < depth; ++k) {
      auto yieldUse = llvm::find_if(oldest.getUses(), [&](OpOperand &use) {
        return isa<scf::YieldOp>(use.getOwner()) &&
               use.getOwner()->getParentOp() == loop;
      });
      if (yieldUse == oldest.getUses().end())
        return;
      oldest = loop.getRegionIterArgs()[yieldUse->getOperandNumber()];
    }
    Operation *lastReader = nullptr;
    for (Operation *user : oldest.getUsers()) {
      Operation *top = body->findAncestorOpInBlock(*user);
      if (!top || isa<scf::YieldOp>(top))
        continue;
      if (!lastReader || lastReader->isBeforeInBlock(top))
        lastReader = top;
    }
    if (lastReader && load->isBeforeInBlock(lastReader))
      load->moveAfter(lastReader);
  }
}

/// A copy of `load` (and of its block index's chain) for iteration `at` of
/// `loop`. The prologue loads blocks that a short loop never reaches and a
/// refill the block after the last iteration's: past the loop's range, so
/// the copy drops `in_bounds` and pads again. A chain that reads memory
/// (a block list) reads at `at` clamped to [lb, ub - 1]: inside the list,
/// whose entry lb exists even when the loop runs no iteration.
Value cloneOutOfPlace(RewriterBase &rewriter, scf::ForOp loop,
                      const BlockLoad &block, Value at) {
  Location loc = block.load.getLoc();
  IRMapping mapping;
  if (block.readsMemory) {
    Value last = arith::SubIOp::create(rewriter, loc, loop.getUpperBound(),
                                       loop.getStep());
    at = arith::MaxSIOp::create(rewriter, loc,
                                arith::MinSIOp::create(rewriter, loc, at, last),
                                loop.getLowerBound());
  }
  mapping.map(loop.getInductionVar(), at);
  for (Operation *op : block.chain)
    rewriter.clone(*op, mapping);
  auto copy = cast<LoadOp>(rewriter.clone(*block.load, mapping));
  copy.setInBounds(false);
  return copy.getResult();
}

/// Whether `load` is a copy of `ref` for block `block`: the same view, tile
/// type, transposition and padding; index `ivPos` is `block`, the others are
/// `ref`'s.
/// Whether two index values are the same value or equal constants.
bool sameIndex(Value a, Value b) { return isEqualConstantIntOrValue(a, b); }

bool isBlockOf(LoadOp load, LoadOp ref, unsigned ivPos, Value block) {
  if (load.getView() != ref.getView() || load.getType() != ref.getType() ||
      load.getTranspose() != ref.getTranspose() ||
      load.getPad() != ref.getPad())
    return false;
  for (auto [q, pair] :
       llvm::enumerate(llvm::zip_equal(load.getIndices(), ref.getIndices())))
    if (!sameIndex(std::get<0>(pair), q == ivPos ? block : std::get<1>(pair)))
      return false;
  return true;
}

/// The pipelined loop that runs just before `loop` and ends where `loop`
/// starts, if any: step 1 for both, nothing that writes memory in between,
/// and an end provably at or after its start (ub = max(x, lb)), so that the
/// blocks it leaves in flight are blocks ub, ub + 1, ..., even when it runs
/// no iteration.
scf::ForOp precedingPipeline(scf::ForOp loop) {
  if (getConstantIntValue(loop.getStep()) != 1)
    return nullptr;
  for (Operation *op = loop->getPrevNode(); op; op = op->getPrevNode()) {
    auto prev = dyn_cast<scf::ForOp>(op);
    if (!prev) {
      if (!isMemoryEffectFree(op) && !isa<LoadOp>(op))
        return nullptr;
      continue;
    }
    Value lb = prev.getLowerBound(), ub = prev.getUpperBound();
    auto max = ub.getDefiningOp<arith::MaxSIOp>();
    bool endsAfterStart =
        sameIndex(ub, lb) ||
        (max && (sameIndex(max.getLhs(), lb) || sameIndex(max.getRhs(), lb)));
    if (!sameIndex(ub, loop.getLowerBound()) || !endsAfterStart ||
        getConstantIntValue(prev.getStep()) != 1)
      return nullptr;
    return prev;
  }
  return nullptr;
}

/// Whether the next loop after `loop` continues its pipeline (see
/// `precedingPipeline`). Its blocks in flight must then be the blocks after
/// the end.
bool chainsToNextLoop(scf::ForOp loop) {
  for (Operation *op = loop->getNextNode(); op; op = op->getNextNode())
    if (auto next = dyn_cast<scf::ForOp>(op))
      return precedingPipeline(next) == loop;
  return false;
}

/// The result of `prev` (pipelined with the same depth) that holds block
/// `prev.ub + k` of `load`'s stream, or null when `prev` carries no such
/// chain: an iter_arg started with block `prev.lb` of the stream, shifted
/// through `depth` iter_args and refilled with block `iv + depth`.
Value carriedBlock(scf::ForOp prev, LoadOp load, unsigned ivPos, int64_t k,
                   int64_t depth) {
  auto inits = prev.getInitArgs();
  auto args = prev.getRegionIterArgs();
  auto yielded = prev.getYieldedValues();
  for (int64_t p = 0; p + depth <= static_cast<int64_t>(inits.size()); ++p) {
    auto first = inits[p].getDefiningOp<LoadOp>();
    if (!first || !isBlockOf(first, load, ivPos, prev.getLowerBound()))
      continue;
    bool chain = true;
    for (int64_t j = 0; j + 1 < depth; ++j)
      chain &= yielded[p + j] == args[p + j + 1];
    auto refill = yielded[p + depth - 1].getDefiningOp<LoadOp>();
    if (!chain || !refill)
      continue;
    auto ahead = refill.getIndices()[ivPos].getDefiningOp<arith::AddIOp>();
    if (!ahead || ahead.getLhs() != prev.getInductionVar() ||
        getConstantIntValue(ahead.getRhs()) != depth ||
        !isBlockOf(refill, load, ivPos, ahead))
      continue;
    return prev.getResult(p + k);
  }
  return Value();
}

/// Keeps `stages - 1` blocks of each of `loads` in flight, carried in new
/// iter_args of `loop` (oldest first, grouped by load). Blocks that a
/// preceding pipeline leaves in flight are taken from it.
LogicalResult pipelineLoads(RewriterBase &rewriter, scf::ForOp loop,
                            ArrayRef<BlockLoad> loads, int64_t stages,
                            bool refillAfterUse) {
  Location loc = loop.getLoc();
  Value iv = loop.getInductionVar();
  const int64_t depth = stages - 1;

  // Prologue: blocks lb .. lb + (depth - 1) * step, in the order the first
  // iterations use them.
  rewriter.setInsertionPoint(loop);
  scf::ForOp prev = precedingPipeline(loop);
  SmallVector<Value> inFlight(loads.size() * depth);
  for (int64_t k = 0; k < depth; ++k) {
    Value blockK =
        addSteps(rewriter, loc, loop.getLowerBound(), loop.getStep(), k);
    for (auto [i, block] : llvm::enumerate(loads)) {
      // A preceding pipeline carries the blocks of loads at the induction
      // variable itself.
      Value carried =
          prev && block.chain.empty()
              ? carriedBlock(prev, block.load, block.blockPos, k, depth)
              : Value();
      inFlight[i * depth + k] =
          carried ? carried : cloneOutOfPlace(rewriter, loop, block, blockK);
    }
  }
  Value distance = scaleStep(rewriter, loc, loop.getStep(), depth);
  // The last block of a step-1 loop: with one block in flight and refills
  // after use, an `in_bounds` load's refill reads min(iv + 1, last), inside
  // the loop's range, and so stays in bounds. The last iteration reloads
  // the last block, which nobody uses, into the buffer it has just read.
  // Not when a loop that continues the pipeline follows: that one starts
  // with the block after the end.
  Value last;
  if (depth == 1 && refillAfterUse && !chainsToNextLoop(loop) &&
      getConstantIntValue(loop.getStep()) == 1 &&
      llvm::any_of(loads, [](const BlockLoad &l) {
        return l.chain.empty() && l.load.getInBounds();
      }))
    last = arith::SubIOp::create(rewriter, loc, loop.getUpperBound(),
                                 loop.getStep());

  // Iteration iv uses the oldest block in flight and loads block
  // iv + depth * step where the original load was, to overlap the compute.
  // This runs before the body moves to the new loop, which then remaps `iv`.
  SmallVector<Value> refills;
  auto shiftBlocks = [&](OpBuilder &, Location,
                         ArrayRef<BlockArgument> carried) {
    rewriter.setInsertionPoint(loads.front().load);
    IRMapping clamped;
    Value aheadIv = arith::AddIOp::create(rewriter, loc, iv, distance);
    if (last)
      clamped.map(iv, arith::MinSIOp::create(rewriter, loc, aheadIv, last));
    SmallVector<Value> yielded;
    for (auto [i, block] : llvm::enumerate(loads)) {
      LoadOp load = block.load;
      ArrayRef<BlockArgument> blocks = carried.slice(i * depth, depth);
      rewriter.setInsertionPoint(load);
      Value next = last && block.chain.empty() && load.getInBounds()
                       ? rewriter.clone(*load, clamped)->getResult(0)
                       : cloneOutOfPlace(rewriter, loop, block, aheadIv);
      rewriter.replaceOp(load, blocks.front());
      llvm::append_range(yielded, blocks.drop_front());
      yielded.push_back(next);
      refills.push_back(next);
    }
    return yielded;
  };
  FailureOr<LoopLikeOpInterface> pipelined = loop.replaceWithAdditionalYields(
      rewriter, inFlight, /*replaceInitOperandUsesInLoop=*/false, shiftBlocks);
  if (failed(pipelined))
    return failure();
  // The chains of the loads replaced are left to the refills' copies (a
  // read of a block table or list has a memory effect, which folding
  // keeps).
  llvm::SetVector<Operation *> chains;
  for (const BlockLoad &block : loads)
    chains.insert(block.chain.begin(), block.chain.end());
  SmallVector<Operation *> chainOps = chains.takeVector();
  llvm::sort(chainOps,
             [](Operation *a, Operation *b) { return b->isBeforeInBlock(a); });
  for (Operation *op : chainOps)
    if (op->use_empty())
      rewriter.eraseOp(op);
  if (refillAfterUse)
    sinkRefills(cast<scf::ForOp>(pipelined->getOperation()), refills, depth);
  return success();
}

struct TilePrefetchPass final
    : tiled_attn::tile::impl::TilePrefetchPassBase<TilePrefetchPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (stages < 1 || stages > 4) {
      func.emitError() << "tile-prefetch: stages must be in [1, 4], got "
                       << int64_t{stages};
      return signalPassFailure();
    }
    if (streams < 0) {
      func.emitError() << "tile-prefetch: streams must be >= 0, got "
                       << int64_t{streams};
      return signalPassFailure();
    }
    StringRef sdpaName = TileDialect::getSdpaAttrName();
    if (auto sdpa = func->getAttrOfType<SdpaAttr>(sdpaName))
      func->setAttr(sdpaName,
                    sdpa.withStages(stages, stages > 1 && refillAfterUse));
    if (stages == 1)
      return;

    // Outer loops first, so that the prologue of an inner loop is not
    // pipelined again by the loop around it.
    SmallVector<scf::ForOp> loops;
    func.walk<WalkOrder::PreOrder>(
        [&](scf::ForOp loop) { loops.push_back(loop); });
    IRRewriter rewriter(&getContext());
    for (scf::ForOp loop : loops) {
      SmallVector<BlockLoad> loads = findBlockLoads(loop);
      if (streams > 0 && static_cast<int64_t>(loads.size()) > streams)
        loads.resize(streams);
      if (loads.empty() || mayWriteLoaded(loop, loads))
        continue;
      if (failed(pipelineLoads(rewriter, loop, loads, stages, refillAfterUse)))
        return signalPassFailure();
    }
  }
};

} // namespace
