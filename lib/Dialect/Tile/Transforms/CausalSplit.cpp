//===- CausalSplit.cpp - Split a causal K/V loop by visibility ------------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// A program of a causal kernel sees its query rows row0 .. row0 + BM - 1
// (row0 already holds the bottom-right shift). Key block j, of columns
// j*BN .. j*BN + BN - 1:
//
//   - is seen entirely by every row iff (j + 1)*BN - 1 <= row0, that is
//     j < floor((row0 + 1) / BN); it also needs no bounds mask iff
//     j < floor(S_k / BN);
//   - is seen by some row iff j*BN <= row0 + BM - 1, that is
//     j < ceil((row0 + BM) / BN).
//
// The loop over [0, ub) becomes [0, n_full) without masks, then
// [n_full, n_visible) with them; the blocks past n_visible are all -inf for
// every row, which leaves the online softmax's state unchanged.
//
//===----------------------------------------------------------------------===//

#include "tiled_attn/Dialect/Tile/IR/TileOps.h"
#include "tiled_attn/Dialect/Tile/Transforms/Passes.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/MapVector.h"

namespace tiled_attn::tile {
#define GEN_PASS_DEF_TILECAUSALSPLITPASS
#include "tiled_attn/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace tiled_attn::tile

using namespace mlir;
using namespace tiled_attn::tile;

namespace {

/// A K/V loop in the form `tile-generate-sdpa` builds, with what the split
/// needs to know about it.
struct CausalLoop {
  scf::ForOp loop;
  CausalMaskOp mask;
  /// The rank-1 masks of the block's keys against S_k.
  SmallVector<BoundsMaskOp> keyBounds;
  int64_t blockM, blockN;
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

/// Checks that `mask`, in `loop`, has the canonical form; otherwise emits an
/// error naming what is not understood.
FailureOr<CausalLoop> matchCausalLoop(scf::ForOp loop, CausalMaskOp mask) {
  ArrayRef<int64_t> shape = mask.getType().getShape();
  CausalLoop c{loop, mask, {}, shape[0], shape[1]};
  if (!matchPattern(loop.getLowerBound(), m_Zero()) ||
      !matchPattern(loop.getStep(), m_One()))
    return loop.emitError()
           << "tile-causal-split: expects the loop around the causal mask to "
              "start at 0 with step 1";
  if (!loop.isDefinedOutsideOfLoop(mask.getRowOffset()))
    return mask.emitError()
           << "tile-causal-split: expects the row offset of the causal mask "
              "to be defined outside the loop";
  Value col = mask.getColOffset();
  if (!isIvTimes(col, loop.getInductionVar(), c.blockN))
    return mask.emitError()
           << "tile-causal-split: expects the column offset of the causal "
              "mask to be the induction variable times "
           << c.blockN;

  // Bounds masks that depend on the loop must be the keys' mask: rank 1,
  // over the same columns, with a loop-invariant limit (S_k).
  WalkResult walk = loop.getBody()->walk([&](BoundsMaskOp bounds) {
    if (llvm::all_of(bounds->getOperands(),
                     [&](Value v) { return loop.isDefinedOutsideOfLoop(v); }))
      return WalkResult::advance();
    if (bounds.getType().getRank() == 1 &&
        bounds.getType().getDimSize(0) == c.blockN &&
        bounds.getOffsets()[0] == col &&
        loop.isDefinedOutsideOfLoop(bounds.getLimits()[0])) {
      c.keyBounds.push_back(bounds);
      return WalkResult::advance();
    }
    bounds.emitError() << "tile-causal-split: expects a bounds mask in the "
                          "loop to be rank 1 over the "
                       << c.blockN
                       << " keys of the block, at the causal mask's column "
                          "offset, with a limit defined outside the loop";
    return WalkResult::interrupt();
  });
  if (walk.wasInterrupted())
    return failure();
  return c;
}

/// Splits the loop of `c` at n_full and stops it at n_visible.
void splitLoop(CausalLoop &c) {
  scf::ForOp loop = c.loop;
  OpBuilder b(loop);
  Location loc = loop.getLoc();
  auto index = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  Value row0 = c.mask.getRowOffset();
  Value zero = index(0), one = index(1), bn = index(c.blockN);
  Value bm = c.blockM == c.blockN ? bn : index(c.blockM);

  // Blocks some row sees: j < ceil((row0 + BM) / BN), within [0, ub].
  Value nVisible = arith::CeilDivSIOp::create(
      b, loc, arith::AddIOp::create(b, loc, row0, bm), bn);
  nVisible = arith::MinSIOp::create(b, loc, nVisible, loop.getUpperBound());
  nVisible = arith::MaxSIOp::create(b, loc, nVisible, zero);

  // Blocks every row sees entirely, inside S_k: within [0, n_visible].
  Value nFull = arith::FloorDivSIOp::create(
      b, loc, arith::AddIOp::create(b, loc, row0, one), bn);
  for (BoundsMaskOp bounds : c.keyBounds)
    nFull = arith::MinSIOp::create(
        b, loc, nFull,
        arith::FloorDivSIOp::create(b, loc, bounds.getLimits()[0], bn));
  nFull = arith::MinSIOp::create(b, loc, nFull, nVisible);
  nFull = arith::MaxSIOp::create(b, loc, nFull, zero);

  // The unmasked loop: a copy whose masks are all true.
  SmallVector<Operation *> masks(c.keyBounds.begin(), c.keyBounds.end());
  masks.push_back(c.mask);
  IRMapping mapping;
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

  // The masked loop takes over where the unmasked one stops.
  loop.setLowerBound(nFull);
  loop.setUpperBound(nVisible);
  loop.getInitArgsMutable().assign(unmasked.getResults());

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

struct TileCausalSplitPass final
    : tiled_attn::tile::impl::TileCausalSplitPassBase<TileCausalSplitPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    auto sdpa = func->getAttrOfType<SdpaAttr>(TileDialect::getSdpaAttrName());
    if (!sdpa || sdpa.getCausal() == CausalMode::None || sdpa.getCausalSplit())
      return;

    // The loop directly around each causal mask; at most one mask a loop.
    llvm::MapVector<Operation *, CausalMaskOp> loops;
    WalkResult walk = func.walk([&](CausalMaskOp mask) {
      auto loop = mask->getParentOfType<scf::ForOp>();
      if (!loop)
        return WalkResult::advance();
      if (loops.insert({loop, mask}).second)
        return WalkResult::advance();
      mask.emitError() << "tile-causal-split: expects one causal mask per "
                          "loop, found a second one";
      return WalkResult::interrupt();
    });
    if (walk.wasInterrupted())
      return signalPassFailure();

    SmallVector<CausalLoop> matched;
    for (auto [loop, mask] : loops) {
      FailureOr<CausalLoop> c = matchCausalLoop(cast<scf::ForOp>(loop), mask);
      if (failed(c))
        return signalPassFailure();
      matched.push_back(*c);
    }
    if (matched.empty())
      return;
    for (CausalLoop &c : matched)
      splitLoop(c);

    func->setAttr(TileDialect::getSdpaAttrName(), sdpa.withCausalSplit());
  }
};

} // namespace
