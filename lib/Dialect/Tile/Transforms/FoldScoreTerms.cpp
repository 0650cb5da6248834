//===- FoldScoreTerms.cpp - Row terms and the scale out of the scores -----===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// After tile-vectorize-apply, ALiBi's `score + slope * kv_idx - slope *
// q_idx` reaches the softmax of the K/V loop as
//
//   %x = arith.mulf %s, splat(%scale)              (the scaled score)
//   %y = arith.addf %x, broadcast(%key_terms along 0)
//   %e = arith.subf %y, broadcast(%row_terms along 1)
//   %m = arith.select %keep, %e, splat(-inf)
//   ... = tile.online_softmax %m, ... scale(1.0)
//
// The softmax of a row does not change when a constant is added to every
// score of the row, so a row term that is the same in every iteration is
// dropped (and added back to the rows' log-sum-exps after the loop), and
// the scale moves into the softmax: %e = %s + %key_terms' / %scale with the
// vector divided once per block, softmax scale(%scale), which tile-exp2
// then folds into exp2's multiply-add. The scale is finite and positive
// (the runtime refuses anything else), so dividing by it is exact up to
// rounding and keeps -inf where the masks put it.
//
// With `float-positions` (on by default), the key
// term's positions, `arith.sitofp` of an i32 `tile.iota`, become an f32
// `tile.iota`: the same numbers below 2^24, which a GPU computes as one
// conversion of the block's first position plus an f32 constant per
// register, instead of an integer add and a conversion per key; and f32
// positions times a scalar become positions with that step (ALiBi's
// `kv_idx * slope / scale`: one multiply-add per key on a GPU).
//
// Where the scale cannot move (a term that is a whole tile, such as a bias
// tensor's block), `contract` (on by default) makes the scaled score and
// the first term added to it one multiply-add, `math.fma(s, c, t)`: the
// lowering writes `mul.rn` and `add.rn`, which ptxas never fuses.
//
//===----------------------------------------------------------------------===//

#include "tiled_attn/Dialect/Tile/IR/TileOps.h"
#include "tiled_attn/Dialect/Tile/Transforms/Passes.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace tiled_attn::tile {
#define GEN_PASS_DEF_TILEFOLDSCORETERMSPASS
#include "tiled_attn/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace tiled_attn::tile

using namespace mlir;
using namespace tiled_attn::tile;

namespace {

/// One term of the scores' sum: `value`, subtracted when `negated`.
struct Term {
  Value value;
  bool negated;
};

/// The terms of the additions and subtractions that make `e`; `interior`
/// gets the adds and subs, which have no other use.
void collectTerms(Value e, bool negated, SmallVectorImpl<Term> &terms,
                  SmallVectorImpl<Operation *> &interior) {
  Operation *def = e.getDefiningOp();
  if (def && e.hasOneUse() && isa<arith::AddFOp, arith::SubFOp>(def)) {
    interior.push_back(def);
    collectTerms(def->getOperand(0), negated, terms, interior);
    collectTerms(def->getOperand(1), isa<arith::SubFOp>(def) != negated, terms,
                 interior);
    return;
  }
  terms.push_back({e, negated});
}

/// The scalar a `tensor.splat` splats, or null.
Value splatScalar(Value v) {
  auto splat = v.getDefiningOp<tensor::SplatOp>();
  return splat ? splat.getInput() : Value();
}

/// Whether `v` has the same value in every iteration of `loop`: defined
/// outside it, or computed in it by ops free of memory effects (or reads of
/// the kernel's captured inputs, which nothing writes) from such values.
bool isInvariant(Value v, scf::ForOp loop) {
  if (loop.isDefinedOutsideOfLoop(v))
    return true;
  Operation *def = v.getDefiningOp();
  if (!def || def->getNumRegions() != 0)
    return false;
  if (auto read = dyn_cast<ReadOp>(def)) {
    ArgAttr role = getArgAttrOf(read.getView());
    if (!role || role.getRole() != ArgRole::Captured)
      return false;
  } else if (!isMemoryEffectFree(def)) {
    return false;
  }
  return llvm::all_of(def->getOperands(), [&](Value operand) {
    return isInvariant(operand, loop);
  });
}

/// A copy of the loop-invariant `v` before `loop` (the ops of its slice in
/// the loop body, cloned in order).
Value cloneBeforeLoop(OpBuilder &b, Value v, scf::ForOp loop,
                      IRMapping &mapping) {
  if (loop.isDefinedOutsideOfLoop(v))
    return v;
  if (Value mapped = mapping.lookupOrNull(v))
    return mapped;
  Operation *def = v.getDefiningOp();
  for (Value operand : def->getOperands())
    cloneBeforeLoop(b, operand, loop, mapping);
  Operation *copy = b.clone(*def, mapping);
  return copy->getResult(cast<OpResult>(v).getResultNumber());
}

/// Erases `op` and then the ops that fed only it, while they are pure.
void eraseIfDead(Operation *op) {
  if (!op || !op->use_empty() || !isMemoryEffectFree(op))
    return;
  SmallVector<Operation *> operands;
  for (Value v : op->getOperands())
    if (Operation *def = v.getDefiningOp())
      operands.push_back(def);
  op->erase();
  for (Operation *def : operands)
    eraseIfDead(def);
}

/// `arith.sitofp` of i32 positions to f32 becomes f32 positions (equal
/// below 2^24): the GPU then adds each register's offset in f32 to one
/// conversion of the block's first position.
void convertPositionsToFloat(func::FuncOp func) {
  SmallVector<arith::SIToFPOp> casts;
  func.walk([&](arith::SIToFPOp cast) {
    auto iota = cast.getIn().getDefiningOp<IotaOp>();
    auto to = dyn_cast<RankedTensorType>(cast.getType());
    if (iota && iota.getType().getElementType().isInteger(32) && to &&
        to.getElementType().isF32())
      casts.push_back(cast);
  });
  for (arith::SIToFPOp cast : casts) {
    auto iota = cast.getIn().getDefiningOp<IotaOp>();
    OpBuilder b(cast);
    auto positions = IotaOp::create(b, iota.getLoc(), cast.getType(),
                                    iota.getOffset(), iota.getDimAttr());
    cast.replaceAllUsesWith(positions.getResult());
    cast.erase();
    if (iota->use_empty())
      iota.erase();
  }
}

/// f32 positions times a scalar become positions with that step (one
/// multiply-add per register on a GPU, where the product took an add and a
/// multiply): ALiBi's key term `kv_idx * (slope / scale)`.
void scalePositions(func::FuncOp func) {
  SmallVector<std::tuple<arith::MulFOp, IotaOp, Value>> products;
  func.walk([&](arith::MulFOp mul) {
    for (auto [v, other] : {std::pair(mul.getLhs(), mul.getRhs()),
                            std::pair(mul.getRhs(), mul.getLhs())}) {
      auto iota = v.getDefiningOp<IotaOp>();
      Value step = splatScalar(other);
      if (iota && !iota.getStep() && iota.getType().getElementType().isF32() &&
          step) {
        products.emplace_back(mul, iota, step);
        return;
      }
    }
  });
  for (auto [mul, iota, step] : products) {
    OpBuilder b(mul);
    auto scaled = IotaOp::create(b, mul.getLoc(), mul.getType(),
                                 iota.getOffset(), iota.getDimAttr(), step);
    mul.replaceAllUsesWith(scaled.getResult());
    eraseIfDead(mul);
  }
}

struct TileFoldScoreTermsPass final
    : tiled_attn::tile::impl::TileFoldScoreTermsPassBase<
          TileFoldScoreTermsPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (floatPositions)
      convertPositionsToFloat(func);
    foldTerms(func);
    if (floatPositions)
      scalePositions(func);
  }

  /// The row terms out of the loop and the scale into the softmax.
  void foldTerms(func::FuncOp func) {
    SmallVector<OnlineSoftmaxOp> softmaxes;
    func.walk([&](OnlineSoftmaxOp op) { softmaxes.push_back(op); });
    if (softmaxes.size() != 1)
      return;
    OnlineSoftmaxOp softmax = softmaxes.front();
    auto loop = dyn_cast<scf::ForOp>(softmax->getParentOp());
    if (!loop)
      return;
    // The loop's running max: it may feed only log-sum-exps (the output's
    // normalization takes the sum, which a row constant does not change).
    auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
    auto maxPos = llvm::find(yield.getOperands(), softmax.getNewMax());
    if (maxPos == yield.getOperands().end())
      return;
    Value loopMax = loop.getResult(maxPos - yield.getOperands().begin());
    SmallVector<LogSumExpOp> lses;
    for (Operation *user : loopMax.getUsers()) {
      auto lse = dyn_cast<LogSumExpOp>(user);
      if (!lse || lse.getMax() != loopMax)
        return;
      lses.push_back(lse);
    }

    // The scores before the masks' select, and their terms.
    Value scores = softmax.getScores();
    auto select = scores.getDefiningOp<arith::SelectOp>();
    OpOperand *slot = &softmax.getScoresMutable();
    if (select && scores.hasOneUse()) {
      slot = &select.getTrueValueMutable();
      scores = select.getTrueValue();
    }
    if (!scores.hasOneUse())
      return;
    SmallVector<Term> terms;
    SmallVector<Operation *> interior;
    collectTerms(scores, /*negated=*/false, terms, interior);
    if (terms.size() < 2)
      return;

    auto type = cast<RankedTensorType>(scores.getType());
    auto rowsOf = [](Value term) -> Value {
      auto b = term.getDefiningOp<BroadcastOp>();
      return b && b.getAxis() == 1 ? b.getInput() : Value();
    };
    auto keysOf = [](Value term) -> Value {
      auto b = term.getDefiningOp<BroadcastOp>();
      return b && b.getAxis() == 0 ? b.getInput() : Value();
    };
    bool changed = false;
    Location loc = softmax.getLoc();
    OpBuilder b(func.getContext());

    // Row terms the same in every iteration: dropped, then added back to
    // the log-sum-exps.
    if (rowTerms) {
      SmallVector<Term> kept;
      for (const Term &term : terms) {
        Value rows = rowsOf(term.value);
        Value scalar = splatScalar(term.value);
        if ((!rows || !isInvariant(rows, loop)) &&
            (!scalar || !isInvariant(scalar, loop))) {
          kept.push_back(term);
          continue;
        }
        changed = true;
        if (lses.empty())
          continue;
        b.setInsertionPoint(loop);
        IRMapping mapping;
        Value restored =
            cloneBeforeLoop(b, rows ? rows : scalar, loop, mapping);
        auto rowsTy = cast<RankedTensorType>(lses.front().getType());
        if (!rows)
          restored = tensor::SplatOp::create(b, loc, rowsTy, restored);
        for (LogSumExpOp lse : lses) {
          b.setInsertionPointAfter(lse);
          Value fixed =
              term.negated
                  ? arith::SubFOp::create(b, loc, lse, restored).getResult()
                  : arith::AddFOp::create(b, loc, lse, restored).getResult();
          lse.getResult().replaceAllUsesExcept(fixed, fixed.getDefiningOp());
        }
      }
      terms = std::move(kept);
    }

    // The scale into the softmax: one scaled score, and row or key vectors
    // (or scalars) besides.
    // A term `s * splat(c)` with c from outside the loop: s and c, or
    // nulls.
    auto scaledScore = [&](const Term &term) -> std::pair<Value, Value> {
      auto mul = term.value.getDefiningOp<arith::MulFOp>();
      if (term.negated || !mul)
        return {};
      for (auto [s, c] : {std::pair(mul.getLhs(), mul.getRhs()),
                          std::pair(mul.getRhs(), mul.getLhs())})
        if (Value scalar = splatScalar(c);
            scalar && loop.isDefinedOutsideOfLoop(scalar))
          return {s, scalar};
      return {};
    };
    const Term *scoreTerm = nullptr;
    int64_t scoreTerms = 0;
    bool vectorsOnly = true;
    for (const Term &term : terms) {
      if (scaledScore(term).first) {
        scoreTerm = &term;
        ++scoreTerms;
      } else {
        vectorsOnly &=
            rowsOf(term.value) || keysOf(term.value) || splatScalar(term.value);
      }
    }
    bool unitScale = matchPattern(softmax.getScale(), m_OneFloat());
    auto [scaled, scale] =
        scoreTerm ? scaledScore(*scoreTerm) : std::pair<Value, Value>();
    Value inverse;
    if (this->scale && unitScale && scoreTerms == 1 && vectorsOnly) {
      b.setInsertionPoint(loop);
      Value one = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(1.0f));
      // An approximate reciprocal (afn: rcp.approx on NVPTX, within an ulp):
      // a correctly rounded one has a slow path whose call makes ptxas keep
      // the loop's uniform work (the wgmma descriptors) in vector registers.
      inverse =
          arith::DivFOp::create(b, loc, one, scale, arith::FastMathFlags::afn);
      changed = true;
    }
    // Where the scale stays in the scores (a tile term, a bias read in the
    // scores' layout), the scaled score and a term added to it become one
    // multiply-add: s * c + t as fma(s, c, t).
    const Term *addend = nullptr;
    if (contract && !inverse && scoreTerm && scoreTerms == 1 &&
        scoreTerm->value.hasOneUse()) {
      for (const Term &term : terms)
        if (&term != scoreTerm && !term.negated) {
          addend = &term;
          break;
        }
      changed |= addend != nullptr;
    }
    if (!changed)
      return;

    // The scores again, from the terms kept (divided by the scale when it
    // moves into the softmax).
    b.setInsertionPoint(slot->getOwner());
    Value sum;
    SmallVector<Term> rest;
    if (addend) {
      Value factor = tensor::SplatOp::create(b, loc, type, scale);
      sum = math::FmaOp::create(b, loc, scaled, factor, addend->value);
    }
    for (const Term &term : terms) {
      if (inverse && &term == scoreTerm) {
        sum = scaled;
        continue;
      }
      if (addend && (&term == scoreTerm || &term == addend))
        continue;
      Value value = term.value;
      if (inverse) {
        Value vector = rowsOf(value) ? rowsOf(value) : keysOf(value);
        if (vector) {
          auto vectorTy = cast<RankedTensorType>(vector.getType());
          // a * w / c as (a / c) * w, one scalar product per block.
          Value factor = inverse;
          if (auto mul = vector.getDefiningOp<arith::MulFOp>()) {
            for (auto [a, w] : {std::pair(mul.getLhs(), mul.getRhs()),
                                std::pair(mul.getRhs(), mul.getLhs())})
              if (Value scalar = splatScalar(a)) {
                factor = arith::MulFOp::create(b, loc, scalar, inverse);
                vector = w;
                break;
              }
          }
          Value divided = arith::MulFOp::create(
              b, loc, vector,
              tensor::SplatOp::create(b, loc, vectorTy, factor));
          value = BroadcastOp::create(
              b, loc, type, divided,
              cast<BroadcastOp>(value.getDefiningOp()).getAxis());
        } else {
          Value scalar =
              arith::MulFOp::create(b, loc, splatScalar(value), inverse);
          value = tensor::SplatOp::create(b, loc, type, scalar);
        }
      }
      rest.push_back({value, term.negated});
    }
    for (const Term &term : rest) {
      if (!sum) {
        sum = term.negated
                  ? arith::NegFOp::create(b, loc, term.value).getResult()
                  : term.value;
        continue;
      }
      sum = term.negated
                ? arith::SubFOp::create(b, loc, sum, term.value).getResult()
                : arith::AddFOp::create(b, loc, sum, term.value).getResult();
    }
    Operation *old = slot->get().getDefiningOp();
    slot->set(sum);
    if (inverse) {
      softmax.getScaleMutable().assign(scale);
      for (LogSumExpOp lse : lses)
        lse.getScaleMutable().assign(scale);
    }
    eraseIfDead(old);
  }
};

} // namespace
