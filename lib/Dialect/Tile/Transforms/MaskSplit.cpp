//===- MaskSplit.cpp - Split a K/V loop into unmasked and masked blocks ---===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Key block j holds columns j*BN .. j*BN + BN - 1. It needs no mask iff it
// lies inside S_k, j < floor(S_k / BN), and, in a causal kernel whose
// program sees query rows row0 .. row0 + BM - 1 (row0 already holds the
// bottom-right shift), every row sees it entirely: (j + 1)*BN - 1 <= row0,
// that is j < floor((row0 + 1) / BN). A causal program sees block j at all
// iff j*BN <= row0 + BM - 1, that is j < ceil((row0 + BM) / BN).
//
// The loop over [0, ub) becomes [0, n_full) without masks, then
// [n_full, n_visible) with them (n_visible = ub without a causal mask); the
// blocks past n_visible are all -inf for every row, which leaves the online
// softmax's state unchanged. With `masked-first` the two loops swap places:
// the online softmax may take the blocks in any order, and every block the
// unmasked loop then prefetches (block j + 1 while it works on block j)
// still lies below n_full.
//
// The blocks the unmasked loop loads at row block j (K and V) lie inside
// their views too: n_full also stays below floor(S / rows) of each such
// view, and those loads are marked `in_bounds`.
//
// With `guard`, the loop stays one loop over [0, n_visible), and each
// select that applies the masks runs only for j >= n_full, under an scf.if
// (a uniform branch on the GPU); below n_full the scores pass unchanged.
// The loop's code is not duplicated, but its loads keep their checks.
//
//===----------------------------------------------------------------------===//

#include "tiled_attn/Dialect/Tile/IR/TileOps.h"
#include "tiled_attn/Dialect/Tile/Transforms/Passes.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/MapVector.h"

namespace tiled_attn::tile {
#define GEN_PASS_DEF_TILEMASKSPLITPASS
#include "tiled_attn/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace tiled_attn::tile

using namespace mlir;
using namespace tiled_attn::tile;

namespace {

/// A K/V loop in the form `tile-generate-sdpa` builds, with what the split
/// needs to know about it.
struct MaskedLoop {
  scf::ForOp loop;
  /// The causal mask, null in a kernel without one.
  CausalMaskOp causal;
  /// The rank-1 masks of the block's keys against S_k.
  SmallVector<BoundsMaskOp> keyBounds;
  /// Loads of whole row blocks at block index j (K and V).
  SmallVector<LoadOp> rowBlockLoads;
  int64_t blockM = 0, blockN = 0;
};

/// True when `value` is `iv * factor` (in either operand order).
bool isIvTimes(Value value, Value iv, int64_t factor) {
  auto mul = value.getDefiningOp<arith::MulIOp>();
  if (!mul)
    return false;
  for (auto [a, b] : {std::pair(mul.getLhs(), mul.getRhs()),
                      std::pair(mul.getRhs(), mul.getLhs())}) {
    APInt c;
    if (a == iv && matchPattern(b, m_ConstantInt(&c)) && c == factor)
      return true;
  }
  return false;
}

/// True when `load` reads row block `iv` of a rank-4 view, all of its
/// (static) columns: [.., .., iv, 0] with a block as wide as the view.
bool isRowBlockLoad(LoadOp load, Value iv) {
  ViewType view = load.getView().getType();
  SmallVector<int64_t> block = load.getBlockShape();
  return view.getRank() == 4 && block.size() == 2 &&
         load.getIndices()[2] == iv &&
         matchPattern(load.getIndices()[3], m_Zero()) &&
         !ShapedType::isDynamic(view.getShape()[3]) &&
         block[1] == view.getShape()[3];
}

/// Checks that the masks of `loop` have the canonical form; otherwise emits
/// an error naming what is not understood.
FailureOr<MaskedLoop> matchMaskedLoop(scf::ForOp loop, CausalMaskOp causal) {
  MaskedLoop m{loop, causal, {}, {}};
  Value iv = loop.getInductionVar();
  if (!matchPattern(loop.getLowerBound(), m_Zero()) ||
      !matchPattern(loop.getStep(), m_One()))
    return loop.emitError()
           << "tile-mask-split: expects the masked K/V loop to start at 0 "
              "with step 1";

  // The column offset of the block's keys: the causal mask's, or else the
  // first loop-dependent bounds mask's.
  Value col;
  if (causal) {
    ArrayRef<int64_t> shape = causal.getType().getShape();
    m.blockM = shape[0];
    m.blockN = shape[1];
    col = causal.getColOffset();
    if (!loop.isDefinedOutsideOfLoop(causal.getRowOffset()))
      return causal.emitError()
             << "tile-mask-split: expects the row offset of the causal mask "
                "to be defined outside the loop";
  }

  // Bounds masks that depend on the loop must be the keys' mask: rank 1,
  // over the block's columns, with a loop-invariant limit (S_k).
  WalkResult walk = loop.getBody()->walk([&](BoundsMaskOp bounds) {
    if (llvm::all_of(bounds->getOperands(),
                     [&](Value v) { return loop.isDefinedOutsideOfLoop(v); }))
      return WalkResult::advance();
    if (!col && bounds.getType().getRank() == 1) {
      col = bounds.getOffsets()[0];
      m.blockN = bounds.getType().getDimSize(0);
    }
    if (bounds.getType().getRank() == 1 &&
        bounds.getType().getDimSize(0) == m.blockN &&
        bounds.getOffsets()[0] == col &&
        loop.isDefinedOutsideOfLoop(bounds.getLimits()[0])) {
      m.keyBounds.push_back(bounds);
      return WalkResult::advance();
    }
    bounds.emitError() << "tile-mask-split: expects a bounds mask in the "
                          "loop to be rank 1 over the "
                       << m.blockN
                       << " keys of the block, at the keys' column offset, "
                          "with a limit defined outside the loop";
    return WalkResult::interrupt();
  });
  if (walk.wasInterrupted())
    return failure();
  if (!isIvTimes(col, iv, m.blockN)) {
    Operation *user =
        causal ? causal.getOperation() : m.keyBounds.front().getOperation();
    return user->emitError()
           << "tile-mask-split: expects the column offset of the keys to be "
              "the induction variable times "
           << m.blockN;
  }
  loop.getBody()->walk([&](LoadOp load) {
    if (isRowBlockLoad(load, iv))
      m.rowBlockLoads.push_back(load);
  });
  return m;
}

/// n_full and n_visible of the loop of `m`, built before the loop.
std::pair<Value, Value> blockBounds(MaskedLoop &m) {
  scf::ForOp loop = m.loop;
  OpBuilder b(loop);
  Location loc = loop.getLoc();
  auto index = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  Value zero = index(0), one = index(1), bn = index(m.blockN);

  Value nVisible = loop.getUpperBound(), nFull;
  if (m.causal) {
    // Blocks some row sees: j < ceil((row0 + BM) / BN), within [0, ub].
    Value row0 = m.causal.getRowOffset();
    Value bm = m.blockM == m.blockN ? bn : index(m.blockM);
    nVisible = arith::CeilDivSIOp::create(
        b, loc, arith::AddIOp::create(b, loc, row0, bm), bn);
    nVisible = arith::MinSIOp::create(b, loc, nVisible, loop.getUpperBound());
    nVisible = arith::MaxSIOp::create(b, loc, nVisible, zero);
    // Blocks every row sees entirely.
    nFull = arith::FloorDivSIOp::create(
        b, loc, arith::AddIOp::create(b, loc, row0, one), bn);
  }
  auto bound = [&](Value limit) {
    nFull = nFull ? arith::MinSIOp::create(b, loc, nFull, limit).getResult()
                  : limit;
  };
  // ... inside S_k ...
  for (BoundsMaskOp bounds : m.keyBounds)
    bound(arith::FloorDivSIOp::create(b, loc, bounds.getLimits()[0], bn));
  // ... and whose row blocks lie inside their views.
  for (LoadOp load : m.rowBlockLoads) {
    Value rows = DimOp::create(b, loc, load.getView(), 2);
    int64_t blockRows = load.getBlockShape()[0];
    bound(arith::FloorDivSIOp::create(
        b, loc, rows, blockRows == m.blockN ? bn : index(blockRows)));
  }
  nFull = arith::MinSIOp::create(b, loc, nFull, nVisible);
  nFull = arith::MaxSIOp::create(b, loc, nFull, zero);
  return {nFull, nVisible};
}

/// Splits the loop of `m` at n_full and, with a causal mask, stops it at
/// n_visible; `markInBounds` marks the unmasked loop's K/V loads, and
/// `maskedFirst` runs the masked loop before the unmasked one.
void splitLoop(MaskedLoop &m, bool markInBounds, bool maskedFirst) {
  auto [nFull, nVisible] = blockBounds(m);
  scf::ForOp loop = m.loop;
  OpBuilder b(loop);
  Location loc = loop.getLoc();

  // The unmasked loop: a copy whose masks are all true and whose row-block
  // loads are in bounds.
  SmallVector<Operation *> masks(m.keyBounds.begin(), m.keyBounds.end());
  if (m.causal)
    masks.push_back(m.causal);
  IRMapping mapping;
  if (maskedFirst)
    b.setInsertionPointAfter(loop);
  auto unmasked = cast<scf::ForOp>(b.clone(*loop, mapping));
  unmasked.setUpperBound(nFull);
  b.setInsertionPoint(unmasked);
  SmallVector<Operation *> allTrue;
  for (Operation *mask : masks) {
    Value copy = mapping.lookup(mask->getResult(0));
    auto type = cast<RankedTensorType>(copy.getType());
    allTrue.push_back(
        arith::ConstantOp::create(b, loc, DenseElementsAttr::get(type, true)));
    copy.replaceAllUsesWith(allTrue.back()->getResult(0));
    copy.getDefiningOp()->erase();
  }
  if (markInBounds)
    for (LoadOp load : m.rowBlockLoads)
      cast<LoadOp>(mapping.lookup(load.getOperation())).setInBounds(true);

  // The masked loop takes over where the unmasked one stops, or, masked
  // first, hands its results to the unmasked one.
  loop.setLowerBound(nFull);
  loop.setUpperBound(nVisible);
  if (maskedFirst) {
    loop->replaceUsesWithIf(unmasked.getResults(), [&](OpOperand &use) {
      return use.getOwner() != unmasked.getOperation();
    });
    unmasked.getInitArgsMutable().assign(loop.getResults());
  } else {
    loop.getInitArgsMutable().assign(unmasked.getResults());
  }

  // Let the folds remove what the true masks made trivial: broadcasts of
  // splats, `andi` with true and `select` on true. Whether or not it
  // converges, the loop computes the same thing.
  GreedyRewriteConfig config;
  config.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
  (void)applyPatternsGreedily(unmasked.getRegion(),
                              RewritePatternSet(b.getContext()), config);
  for (Operation *constant : allTrue)
    if (constant->use_empty())
      constant->erase();
}

/// The ops of `body` that compute the condition `cond` of a masking select
/// from the masks of `m`, in body order; empty unless the condition is made
/// of masks, broadcasts and `andi` alone (then it is all true wherever the
/// masks are, and the select returns its true value).
SmallVector<Operation *> maskCondition(MaskedLoop &m, Value cond) {
  Block *body = m.loop.getBody();
  llvm::SetVector<Operation *> slice;
  SmallVector<Value> work{cond};
  bool sawMask = false;
  while (!work.empty()) {
    Value v = work.pop_back_val();
    Operation *def = v.getDefiningOp();
    if (!def || def->getBlock() != body || slice.contains(def))
      continue;
    if (isa<BoundsMaskOp, CausalMaskOp>(def)) {
      sawMask |= llvm::is_contained(m.keyBounds, def) ||
                 def == m.causal.getOperation();
      slice.insert(def);
      continue;
    }
    if (!isa<BroadcastOp, arith::AndIOp>(def))
      return {};
    slice.insert(def);
    llvm::append_range(work, def->getOperands());
  }
  if (!sawMask)
    return {};
  SmallVector<Operation *> ordered(slice.begin(), slice.end());
  llvm::sort(ordered,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  return ordered;
}

/// Keeps the loop of `m` whole, stops it at n_visible, and moves each select
/// that applies the masks, with the ops that compute its condition, under
/// `scf.if j >= n_full`; below n_full the if yields the unmasked scores.
LogicalResult guardMasks(MaskedLoop &m) {
  auto [nFull, nVisible] = blockBounds(m);
  scf::ForOp loop = m.loop;
  SmallVector<std::pair<arith::SelectOp, SmallVector<Operation *>>> guarded;
  for (auto select : loop.getBody()->getOps<arith::SelectOp>()) {
    SmallVector<Operation *> cond = maskCondition(m, select.getCondition());
    if (!cond.empty())
      guarded.emplace_back(select, std::move(cond));
  }
  // Every mask must end in such a select: its ops may have no other user.
  llvm::SmallPtrSet<Operation *, 8> moved;
  for (auto &[select, cond] : guarded) {
    moved.insert(select);
    moved.insert(cond.begin(), cond.end());
  }
  SmallVector<Operation *> masks(m.keyBounds.begin(), m.keyBounds.end());
  if (m.causal)
    masks.push_back(m.causal);
  for (Operation *op : moved)
    for (Operation *user : op->getUsers())
      if (!moved.contains(user) && !isa<arith::SelectOp>(op))
        return user->emitError()
               << "tile-mask-split{guard}: expects the masks to be used only "
                  "by selects that apply them";
  for (Operation *mask : masks)
    if (!moved.contains(mask))
      return mask->emitError()
             << "tile-mask-split{guard}: expects every mask to reach a select "
                "through broadcasts and andi only";

  loop.setUpperBound(nVisible);
  for (auto &[select, cond] : guarded) {
    OpBuilder b(select);
    Location loc = select.getLoc();
    Value partial = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge,
                                          loop.getInductionVar(), nFull);
    auto ifOp = scf::IfOp::create(b, loc, select.getType(), partial,
                                  /*withElseRegion=*/true);
    Value unmasked = select.getTrueValue();
    select.getResult().replaceAllUsesWith(ifOp.getResult(0));
    OpBuilder thenB = ifOp.getThenBodyBuilder();
    auto yield = scf::YieldOp::create(thenB, loc, select.getResult());
    for (Operation *op : cond)
      op->moveBefore(yield);
    select->moveBefore(yield);
    OpBuilder elseB = ifOp.getElseBodyBuilder();
    scf::YieldOp::create(elseB, loc, unmasked);
  }
  return success();
}

struct TileMaskSplitPass final
    : tiled_attn::tile::impl::TileMaskSplitPassBase<TileMaskSplitPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    auto sdpa = func->getAttrOfType<SdpaAttr>(TileDialect::getSdpaAttrName());
    if (!sdpa || sdpa.getMaskSplit())
      return;
    if (guard && maskedFirst) {
      func.emitError() << "tile-mask-split: `guard` keeps one loop, so "
                          "`masked-first` has no loops to order";
      return signalPassFailure();
    }

    // The loops directly around a mask that depends on them: at most one
    // causal mask a loop.
    llvm::MapVector<Operation *, CausalMaskOp> loops;
    WalkResult walk = func.walk([&](Operation *op) {
      auto loop = op->getParentOfType<scf::ForOp>();
      if (!loop)
        return WalkResult::advance();
      if (auto causal = dyn_cast<CausalMaskOp>(op)) {
        auto [it, inserted] = loops.insert({loop, causal});
        if (inserted || !it->second) {
          it->second = causal;
          return WalkResult::advance();
        }
        causal.emitError() << "tile-mask-split: expects one causal mask per "
                              "loop, found a second one";
        return WalkResult::interrupt();
      }
      if (isa<BoundsMaskOp>(op) &&
          !llvm::all_of(op->getOperands(), [&](Value v) {
            return loop.isDefinedOutsideOfLoop(v);
          }))
        loops.insert({loop, CausalMaskOp()});
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return signalPassFailure();

    SmallVector<MaskedLoop> matched;
    for (auto [loop, causal] : loops) {
      FailureOr<MaskedLoop> m = matchMaskedLoop(cast<scf::ForOp>(loop), causal);
      if (failed(m))
        return signalPassFailure();
      matched.push_back(*m);
    }
    if (matched.empty())
      return;
    for (MaskedLoop &m : matched) {
      if (!guard) {
        splitLoop(m, inBoundsLoads, maskedFirst);
        continue;
      }
      if (failed(guardMasks(m)))
        return signalPassFailure();
    }

    func->setAttr(TileDialect::getSdpaAttrName(), sdpa.withMaskSplit());
  }
};

} // namespace
