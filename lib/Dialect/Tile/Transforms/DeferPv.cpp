//===- DeferPv.cpp - One block's softmax next to the last block's P.V -----===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// FlashAttention-3's intra-warpgroup overlap, as a loop rotation on tile IR.
// A K/V loop computes, per block j,
//
//   S_j = Q.K_jᵀ;  softmax(S_j) -> P_j, alpha_j;  O = O * alpha_j + P_j.V_j
//
// Its deferred part is every op on the way from the O iteration argument to
// the P.V mma that yields the new O. That part moves one iteration later,
// right after the next block's Q.Kᵀ:
//
//   if (lb < ub) {
//     S_lb = Q.K_lbᵀ;  softmax(S_lb)                     (prologue)
//     for j = lb + 1 ..< ub:
//       S_j = Q.K_jᵀ;  O = O * alpha_{j-1} + P_{j-1}.V_{j-1};  softmax(S_j)
//     O = O * alpha_last + P_last.V_last                  (epilogue)
//   }
//
// On a GPU whose mma is asynchronous (wgmma) the softmax of block j then
// runs while the tensor cores compute P_{j-1}.V_{j-1}. The loop carries
// what the deferred part reads from the iteration that produced it (P, the
// V block, alpha); a broadcast that only the deferred part reads moves with
// it, so that the loop carries the narrow vector. Every op computes what it
// computed before, on the same values: the output is bitwise the same.
//
// An innermost loop qualifies when one iteration argument (O) is yielded by a
// tile.mma of the body whose accumulator, and nothing else of it, depends on
// that argument, and no op outside that chain reads the chain. Other loops are
// left as they are; `tile.sdpa` records `defer_pv` when some loop was
// rotated.
//
//===----------------------------------------------------------------------===//

#include "tiled_attn/Dialect/Tile/IR/TileOps.h"
#include "tiled_attn/Dialect/Tile/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"

namespace tiled_attn::tile {
#define GEN_PASS_DEF_TILEDEFERPVPASS
#include "tiled_attn/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace tiled_attn::tile

using namespace mlir;
using namespace tiled_attn::tile;

namespace {

/// What one loop's rotation needs.
struct Deferral {
  unsigned accIndex;                     // O's iteration argument
  llvm::SetVector<Operation *> deferred; // top-level body ops, block order
  llvm::SetVector<Value> carried;        // what they read from the body
  Operation *anchor = nullptr;           // the Q.Kᵀ mma they follow
};

/// Whether `op` or an op nested in it reads one of `values`.
bool readsAny(Operation *op, const llvm::DenseSet<Value> &values) {
  return op
      ->walk([&](Operation *nested) {
        for (Value v : nested->getOperands())
          if (values.contains(v))
            return WalkResult::interrupt();
        return WalkResult::advance();
      })
      .wasInterrupted();
}

/// Whether every use of `op`'s results lies in (or under) an op of `set`.
bool usedOnlyIn(Operation *op, const llvm::SetVector<Operation *> &set,
                Block *body) {
  for (Value result : op->getResults())
    for (Operation *user : result.getUsers()) {
      Operation *top = body->findAncestorOpInBlock(*user);
      if (!top || !set.contains(top))
        return false;
    }
  return true;
}

std::optional<Deferral> analyze(scf::ForOp loop) {
  Block *body = loop.getBody();
  auto yield = cast<scf::YieldOp>(body->getTerminator());
  for (unsigned k = 0; k < loop.getNumRegionIterArgs(); ++k) {
    auto pv = yield.getOperand(k).getDefiningOp<MmaOp>();
    if (!pv || pv->getBlock() != body)
      continue;
    // Every top-level op that depends on O, in block order.
    BlockArgument acc = loop.getRegionIterArgs()[k];
    llvm::DenseSet<Value> dependent{acc};
    Deferral d{k, {}, {}, nullptr};
    for (Operation &op : body->without_terminator()) {
      if (!readsAny(&op, dependent))
        continue;
      d.deferred.insert(&op);
      dependent.insert(op.result_begin(), op.result_end());
    }
    if (!d.deferred.contains(pv) || dependent.contains(pv.getLhs()) ||
        dependent.contains(pv.getRhs()))
      continue;
    // The chain ends in the mma, which only the yield reads, at O's place.
    bool closed =
        pv->hasOneUse() && llvm::all_of(d.deferred, [&](Operation *op) {
          return op == pv.getOperation() || usedOnlyIn(op, d.deferred, body);
        });
    if (!closed)
      continue;
    // Broadcasts that only the chain reads move with it.
    for (bool grew = true; grew;) {
      grew = false;
      for (Operation &op : body->without_terminator())
        if (isa<BroadcastOp>(op) && !d.deferred.contains(&op) &&
            !op.use_empty() && usedOnlyIn(&op, d.deferred, body)) {
          d.deferred.insert(&op);
          grew = true;
        }
    }
    llvm::SmallVector<Operation *> ordered(d.deferred.begin(),
                                           d.deferred.end());
    llvm::sort(ordered, [](Operation *a, Operation *b) {
      return a->isBeforeInBlock(b);
    });
    d.deferred = llvm::SetVector<Operation *>(ordered.begin(), ordered.end());
    // What the chain reads from the body: values of the iteration that
    // produced them, which the loop now carries.
    for (Operation *op : d.deferred)
      op->walk([&](Operation *nested) {
        for (Value v : nested->getOperands()) {
          if (v == acc)
            continue;
          Operation *def = v.getDefiningOp();
          Block *owner =
              def ? def->getBlock() : cast<BlockArgument>(v).getOwner();
          Operation *top =
              body->findAncestorOpInBlock(def ? *def : *owner->getParentOp());
          bool inBody = def ? top != nullptr : owner == body;
          if (!inBody || (def && d.deferred.contains(top)))
            continue;
          d.carried.insert(v);
        }
      });
    for (Operation &op : body->without_terminator())
      if (isa<MmaOp>(op) && !d.deferred.contains(&op)) {
        d.anchor = &op;
        break;
      }
    return d;
  }
  return std::nullopt;
}

void cloneDeferred(OpBuilder &b, const Deferral &d, IRMapping &mapping) {
  for (Operation *op : d.deferred)
    b.clone(*op, mapping);
}

/// Rotates `loop` as the file comment shows.
void rotate(scf::ForOp loop, const Deferral &d) {
  Block *body = loop.getBody();
  auto yield = cast<scf::YieldOp>(body->getTerminator());
  Location loc = loop.getLoc();
  Value acc = loop.getRegionIterArgs()[d.accIndex];
  Value pvResult = yield.getOperand(d.accIndex);
  OpBuilder b(loop);
  Value runs =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                            loop.getLowerBound(), loop.getUpperBound());
  auto ifOp = scf::IfOp::create(b, loc, loop.getResultTypes(), runs,
                                /*withElseRegion=*/true);

  // Prologue: iteration lb without the deferred part.
  b.setInsertionPointToStart(ifOp.thenBlock());
  IRMapping pro;
  pro.map(loop.getInductionVar(), loop.getLowerBound());
  for (auto [arg, init] :
       llvm::zip_equal(loop.getRegionIterArgs(), loop.getInitArgs()))
    pro.map(arg, init);
  for (Operation &op : body->without_terminator())
    if (!d.deferred.contains(&op))
      b.clone(op, pro);
  SmallVector<Value> inits;
  for (auto [k, value] : llvm::enumerate(yield.getOperands()))
    inits.push_back(k == d.accIndex ? loop.getInitArgs()[k]
                                    : pro.lookupOrDefault(value));
  for (Value v : d.carried)
    inits.push_back(pro.lookupOrDefault(v));

  // The loop from lb + step: block j's ops with block j-1's deferred part
  // right after block j's Q.Kᵀ.
  Value next =
      arith::AddIOp::create(b, loc, loop.getLowerBound(), loop.getStep());
  auto rotated = scf::ForOp::create(b, loc, next, loop.getUpperBound(),
                                    loop.getStep(), inits);
  unsigned numOld = loop.getNumRegionIterArgs();
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(rotated.getBody());
    IRMapping cur, prev;
    cur.map(loop.getInductionVar(), rotated.getInductionVar());
    for (auto [arg, newArg] :
         llvm::zip(loop.getRegionIterArgs(), rotated.getRegionIterArgs()))
      cur.map(arg, newArg);
    prev.map(acc, rotated.getRegionIterArgs()[d.accIndex]);
    for (auto [i, v] : llvm::enumerate(d.carried))
      prev.map(v, rotated.getRegionIterArgs()[numOld + i]);
    if (!d.anchor)
      cloneDeferred(b, d, prev);
    for (Operation &op : body->without_terminator()) {
      if (d.deferred.contains(&op))
        continue;
      b.clone(op, cur);
      if (&op == d.anchor)
        cloneDeferred(b, d, prev);
    }
    SmallVector<Value> yields;
    for (auto [k, value] : llvm::enumerate(yield.getOperands()))
      yields.push_back(k == d.accIndex ? prev.lookup(pvResult)
                                       : cur.lookupOrDefault(value));
    for (Value v : d.carried)
      yields.push_back(cur.lookupOrDefault(v));
    scf::YieldOp::create(b, loc, yields);
  }

  // Epilogue: the last block's deferred part.
  IRMapping last;
  last.map(acc, rotated.getResult(d.accIndex));
  for (auto [i, v] : llvm::enumerate(d.carried))
    last.map(v, rotated.getResult(numOld + i));
  cloneDeferred(b, d, last);
  SmallVector<Value> results(rotated.getResults().take_front(numOld));
  results[d.accIndex] = last.lookup(pvResult);
  scf::YieldOp::create(b, loc, results);

  b.setInsertionPointToStart(ifOp.elseBlock());
  scf::YieldOp::create(b, loc, loop.getInitArgs());
  loop.replaceAllUsesWith(ifOp.getResults());
  loop.erase();
}

struct TileDeferPvPass final
    : tiled_attn::tile::impl::TileDeferPvPassBase<TileDeferPvPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    SmallVector<std::pair<scf::ForOp, Deferral>> work;
    func.walk([&](scf::ForOp loop) {
      bool innermost =
          !loop.getBody()
               ->walk([](scf::ForOp) { return WalkResult::interrupt(); })
               .wasInterrupted();
      if (!innermost)
        return;
      if (std::optional<Deferral> d = analyze(loop))
        work.emplace_back(loop, std::move(*d));
    });
    for (auto &[loop, d] : work)
      rotate(loop, d);
    if (work.empty())
      return;
    if (auto sdpa =
            func->getAttrOfType<SdpaAttr>(TileDialect::getSdpaAttrName()))
      func->setAttr(TileDialect::getSdpaAttrName(), sdpa.withDeferPv());
  }
};

} // namespace
