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
// softmax's state unchanged.
//
// A window mask keeps the keys whose diagonal c - r lies in [lo, hi] (lo and
// hi known at run time). Row r = row0 + i sees block j at all iff some
// column of it lies in [r + lo, r + hi] for some row:
//   (j + 1)*BN - 1 >= row0 + lo       j >= floor((row0 + lo) / BN) = n_first
//   j*BN <= row0 + BM - 1 + hi        j < ceil((row0 + BM + hi) / BN)
//                                       = n_visible
// and entirely, for every row, iff
//   j*BN >= row0 + BM - 1 + lo        j >= ceil((row0 + BM - 1 + lo) / BN)
//                                       = n_lo
//   (j + 1)*BN - 1 <= row0 + hi       j < floor((row0 + hi + 1) / BN)
//                                       = n_full (a causal mask's, hi = 0)
// clamped so that 0 <= n_first <= n_lo <= n_full <= n_visible <= ub. The
// loop becomes [n_first, n_lo) masked (the band's left edge), [n_lo,
// n_full) unmasked and [n_full, n_visible) masked; a sliding window's
// programs visit about (window + BM) / BN blocks whatever S_k is. With
// `masked-first` the two loops swap places: the online softmax may take the
// blocks in any order, and every block the unmasked loop then prefetches (block
// j + 1 while it works on block j) still lies below n_full.
//
// The blocks the unmasked loop loads at row block j (K and V) lie inside
// their views too: n_full also stays below floor(S / rows) of each such
// view, and those loads are marked `in_bounds`.
//
// A loop that reads the blocks it visits from a list (a block-sparse
// kernel's, whose block mask lists the partial and the full blocks apart)
// and has no causal or window mask is left as it is.
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
  /// The causal or window mask (`tile.causal_mask`, `tile.window_mask`),
  /// null in a kernel without one.
  Operation *band = nullptr;
  /// The rank-1 masks of the block's keys against S_k.
  SmallVector<BoundsMaskOp> keyBounds;
  /// Loads of whole row blocks at block index j (K and V).
  SmallVector<LoadOp> rowBlockLoads;
  int64_t blockM = 0, blockN = 0;

  Value rowOffset() const {
    if (auto window = dyn_cast<WindowMaskOp>(band))
      return window.getRowOffset();
    return cast<CausalMaskOp>(band).getRowOffset();
  }
  Value colOffset() const {
    if (auto window = dyn_cast<WindowMaskOp>(band))
      return window.getColOffset();
    return cast<CausalMaskOp>(band).getColOffset();
  }
  /// The band's diagonals: a window's, or a causal mask's (-inf, 0] (lo
  /// null).
  WindowMaskOp window() const { return dyn_cast_or_null<WindowMaskOp>(band); }
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

/// Whether `loop` reads the blocks it visits from memory: a tile.read in its
/// body at an index that depends on the loop (the block-sparse kernel's
/// loops over the block mask's lists).
bool readsBlockList(scf::ForOp loop) {
  return llvm::any_of(loop.getBody()->getOps<ReadOp>(), [&](ReadOp read) {
    return !llvm::all_of(read.getIndices(), [&](Value index) {
      return loop.isDefinedOutsideOfLoop(index);
    });
  });
}

/// Checks that the masks of `loop` have the canonical form; otherwise emits
/// an error naming what is not understood.
FailureOr<MaskedLoop> matchMaskedLoop(scf::ForOp loop, Operation *band) {
  MaskedLoop m{loop, band, {}, {}};
  Value iv = loop.getInductionVar();
  if (!matchPattern(loop.getLowerBound(), m_Zero()) ||
      !matchPattern(loop.getStep(), m_One()))
    return loop.emitError()
           << "tile-mask-split: expects the masked K/V loop to start at 0 "
              "with step 1";

  // The column offset of the block's keys: the causal or window mask's, or
  // else the first loop-dependent bounds mask's.
  Value col;
  if (band) {
    ArrayRef<int64_t> shape =
        cast<RankedTensorType>(band->getResult(0).getType()).getShape();
    m.blockM = shape[0];
    m.blockN = shape[1];
    col = m.colOffset();
    StringRef what = m.window() ? "window" : "causal";
    if (!loop.isDefinedOutsideOfLoop(m.rowOffset()))
      return band->emitError()
             << "tile-mask-split: expects the row offset of "
                "the "
             << what << " mask to be defined outside the loop";
    if (WindowMaskOp window = m.window();
        window && (!loop.isDefinedOutsideOfLoop(window.getLo()) ||
                   !loop.isDefinedOutsideOfLoop(window.getHi())))
      return band->emitError() << "tile-mask-split: expects the diagonals of "
                                  "the window mask to be defined outside the "
                                  "loop";
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
    Operation *user = band ? band : m.keyBounds.front().getOperation();
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

/// The block ranges of the loop of `m` (see the file comment): n_first and
/// n_lo are null without a window mask (the loop starts unmasked at 0).
struct BlockBounds {
  Value first, lo, full, visible;
};

/// The block ranges of the loop of `m`, built before the loop.
BlockBounds blockBounds(MaskedLoop &m) {
  scf::ForOp loop = m.loop;
  OpBuilder b(loop);
  Location loc = loop.getLoc();
  auto index = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  Value zero = index(0), one = index(1), bn = index(m.blockN);

  auto add = [&](Value x, Value y) -> Value {
    return arith::AddIOp::create(b, loc, x, y);
  };
  auto clamp = [&](Value x, Value lower, Value upper) -> Value {
    Value high = arith::MinSIOp::create(b, loc, x, upper);
    return arith::MaxSIOp::create(b, loc, high, lower);
  };
  Value nVisible = loop.getUpperBound(), nFull, nFirst, nLo;
  if (m.band) {
    // Blocks some row sees: j < ceil((row0 + BM + hi) / BN), within [0, ub]
    // (hi = 0 for a causal mask).
    Value row0 = m.rowOffset();
    WindowMaskOp window = m.window();
    Value bm = m.blockM == m.blockN ? bn : index(m.blockM);
    Value last = add(row0, bm); // row0 + BM + hi
    if (window)
      last = add(last, window.getHi());
    nVisible = clamp(arith::CeilDivSIOp::create(b, loc, last, bn), zero,
                     loop.getUpperBound());
    // Blocks every row sees entirely, on the right.
    Value right = add(row0, one); // row0 + 1 + hi
    if (window)
      right = add(right, window.getHi());
    nFull = arith::FloorDivSIOp::create(b, loc, right, bn);
    if (window) {
      // ... and on the left; and the first block some row sees.
      Value lo = add(row0, window.getLo());
      nFirst =
          clamp(arith::FloorDivSIOp::create(b, loc, lo, bn), zero, nVisible);
      Value edge = add(lo, index(m.blockM - 1));
      nLo =
          clamp(arith::CeilDivSIOp::create(b, loc, edge, bn), nFirst, nVisible);
    }
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
  nFull = clamp(nFull, nLo ? nLo : zero, nVisible);
  return {nFirst, nLo, nFull, nVisible};
}

/// Splits the loop of `m` at n_full and, with a causal or window mask, stops
/// it at n_visible (with a window mask, also starts it at n_first, masked up
/// to n_lo); `markInBounds` marks the unmasked loop's K/V loads, and
/// `maskedFirst` runs the masked loops before the unmasked one.
void splitLoop(MaskedLoop &m, bool markInBounds, bool maskedFirst) {
  BlockBounds bounds = blockBounds(m);
  Value nFull = bounds.full, nVisible = bounds.visible;
  scf::ForOp loop = m.loop;
  OpBuilder b(loop);
  Location loc = loop.getLoc();

  // A window's left edge: a masked copy over [n_first, n_lo), which runs
  // first and hands its results to the loop that came first.
  scf::ForOp left;
  if (bounds.first) {
    left = cast<scf::ForOp>(b.clone(*loop));
    left.setLowerBound(bounds.first);
    left.setUpperBound(bounds.lo);
  }

  // The unmasked loop: a copy whose masks are all true and whose row-block
  // loads are in bounds.
  SmallVector<Operation *> masks(m.keyBounds.begin(), m.keyBounds.end());
  if (m.band)
    masks.push_back(m.band);
  IRMapping mapping;
  if (maskedFirst)
    b.setInsertionPointAfter(loop);
  auto unmasked = cast<scf::ForOp>(b.clone(*loop, mapping));
  unmasked.setUpperBound(nFull);
  if (bounds.lo)
    unmasked.setLowerBound(bounds.lo);
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
  if (left)
    (maskedFirst ? loop : unmasked)
        .getInitArgsMutable()
        .assign(left.getResults());

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
    if (isa<BoundsMaskOp, CausalMaskOp, WindowMaskOp>(def)) {
      sawMask |= llvm::is_contained(m.keyBounds, def) || def == m.band;
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
  BlockBounds bounds = blockBounds(m);
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
  if (m.band)
    masks.push_back(m.band);
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

  loop.setUpperBound(bounds.visible);
  if (bounds.first)
    loop.setLowerBound(bounds.first);
  for (auto &[select, cond] : guarded) {
    OpBuilder b(select);
    Location loc = select.getLoc();
    Value j = loop.getInductionVar();
    Value partial = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, j,
                                          bounds.full);
    if (bounds.lo) // a window's left edge
      partial = arith::OrIOp::create(
          b, loc, partial,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, j,
                                bounds.lo));
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
    // causal or window mask a loop.
    llvm::MapVector<Operation *, Operation *> loops;
    WalkResult walk = func.walk([&](Operation *op) {
      auto loop = op->getParentOfType<scf::ForOp>();
      if (!loop)
        return WalkResult::advance();
      if (isa<CausalMaskOp, WindowMaskOp>(op)) {
        auto [it, inserted] = loops.insert({loop, op});
        if (inserted || !it->second) {
          it->second = op;
          return WalkResult::advance();
        }
        op->emitError() << "tile-mask-split: expects one causal or window "
                           "mask per loop, found a second one";
        return WalkResult::interrupt();
      }
      if (isa<BoundsMaskOp>(op) &&
          !llvm::all_of(op->getOperands(), [&](Value v) {
            return loop.isDefinedOutsideOfLoop(v);
          }))
        loops.insert({loop, nullptr});
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return signalPassFailure();

    SmallVector<MaskedLoop> matched;
    for (auto [loop, band] : loops) {
      // A loop over a list of key blocks (a block-sparse kernel's) is split
      // already: its block mask lists the partial and the full blocks apart.
      if (!band && readsBlockList(cast<scf::ForOp>(loop)))
        continue;
      FailureOr<MaskedLoop> m = matchMaskedLoop(cast<scf::ForOp>(loop), band);
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
