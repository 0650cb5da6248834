//===- DifferentiateScore.cpp - A score function's gradient ---------------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// For a score function
//
//   func.func @f(%score: f32, %b: index, %h: index, %q_idx: index,
//                %kv_idx: index, captures...) -> f32
//
// adds @f_grad(%score, %b, %h, %q_idx, %kv_idx, captures..., %grad: f32)
// -> f32, which returns %grad * df/dscore: f's body, each op followed by
// its tangent (the derivative of its result with respect to %score,
// forward mode), and the product of %grad with the tangent of the value f
// returns. A value that does not depend on the score has no tangent (none
// is built), so the positions' and captures' arithmetic is f's own.
//
//===----------------------------------------------------------------------===//

#include "tiled_attn/Dialect/Tile/IR/TileOps.h"
#include "tiled_attn/Dialect/Tile/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/IRMapping.h"

#include <cmath>

namespace tiled_attn::tile {
#define GEN_PASS_DEF_TILEDIFFERENTIATESCOREPASS
#include "tiled_attn/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace tiled_attn::tile

using namespace mlir;

namespace {

/// Builds the tangents of f's ops in a clone of its body.
class Tangents {
public:
  Tangents(OpBuilder &b) : b(b) {}

  /// The tangent of `v` (null: zero, `v` does not depend on the score).
  Value of(Value v) const { return tangents.lookup(v); }
  void set(Value v, Value t) {
    if (t)
      tangents[v] = t;
  }

  /// Sets the tangent of `op`'s result (a clone of f's op) from its
  /// operands', or fails on an op that depends on the score and has no rule.
  LogicalResult derive(Operation *op) {
    bool depends =
        llvm::any_of(op->getOperands(), [&](Value v) { return bool(of(v)); });
    if (!depends)
      return success();
    Location loc = op->getLoc();
    auto x = [&](unsigned i) { return op->getOperand(i); };
    auto t = [&](unsigned i) { return of(op->getOperand(i)); };
    Value y = op->getNumResults() == 1 ? op->getResult(0) : Value();
    if (isa<arith::CmpFOp>(op))
      return success(); // (a predicate: no tangent)
    if (isa<arith::AddFOp>(op))
      return set(y, add(t(0), t(1))), success();
    if (isa<arith::SubFOp>(op))
      return set(y, sub(t(0), t(1))), success();
    if (isa<arith::NegFOp>(op))
      return set(y, arith::NegFOp::create(b, loc, t(0))), success();
    if (isa<arith::MulFOp>(op))
      return set(y, add(mul(t(0), x(1)), mul(x(0), t(1)))), success();
    if (isa<arith::DivFOp>(op)) {
      // (a / c)' = a' / c - (a / c) c' / c
      Value lhs = t(0) ? arith::DivFOp::create(b, loc, t(0), x(1)) : Value();
      Value rhs =
          t(1) ? arith::DivFOp::create(b, loc, mul(y, t(1)), x(1)) : Value();
      return set(y, sub(lhs, rhs)), success();
    }
    if (isa<arith::MaximumFOp, arith::MinimumFOp>(op)) {
      // The tangent of the operand that is taken (the lhs on a tie).
      auto pred = isa<arith::MaximumFOp>(op) ? arith::CmpFPredicate::OGE
                                             : arith::CmpFPredicate::OLE;
      Value first = arith::CmpFOp::create(b, loc, pred, x(0), x(1));
      return set(y, arith::SelectOp::create(b, loc, first, orZero(t(0), y),
                                            orZero(t(1), y))),
             success();
    }
    // (A condition never has a tangent: a comparison's result has none,
    // and any other op on the score's i1 values has no rule.)
    if (auto select = dyn_cast<arith::SelectOp>(op))
      return set(y, arith::SelectOp::create(b, loc, select.getCondition(),
                                            orZero(t(1), y), orZero(t(2), y))),
             success();
    if (isa<arith::ExtFOp, arith::TruncFOp>(op)) {
      OperationState state(loc, op->getName(), ValueRange{t(0)},
                           TypeRange{y.getType()}, op->getAttrs());
      return set(y, b.create(state)->getResult(0)), success();
    }
    if (isa<math::ExpOp>(op))
      return set(y, mul(y, t(0))), success();
    if (isa<math::Exp2Op>(op))
      return set(y, mul(mul(y, constant(y, M_LN2)), t(0))), success();
    if (isa<math::LogOp>(op))
      return set(y, arith::DivFOp::create(b, loc, t(0), x(0))), success();
    if (isa<math::SqrtOp>(op))
      // sqrt(a)' = a' / (2 sqrt(a))
      return set(y,
                 arith::DivFOp::create(b, loc, t(0), mul(constant(y, 2.0), y))),
             success();
    if (isa<math::TanhOp>(op))
      // tanh(a)' = (1 - tanh(a)^2) a'
      return set(y, mul(sub(constant(y, 1.0), mul(y, y)), t(0))), success();
    return op->emitError()
           << "tile-differentiate-score: no derivative for '" << op->getName()
           << "' of a value that depends on the score; declare the "
              "function's gradient beside it instead";
  }

  Value constant(Value like, double value) {
    return arith::ConstantOp::create(b, like.getLoc(),
                                     FloatAttr::get(like.getType(), value));
  }

private:
  Value orZero(Value t, Value like) { return t ? t : constant(like, 0.0); }
  Value add(Value x, Value y) {
    if (!x || !y)
      return x ? x : y;
    return arith::AddFOp::create(b, x.getLoc(), x, y);
  }
  Value sub(Value x, Value y) {
    if (!y)
      return x;
    if (!x)
      return arith::NegFOp::create(b, y.getLoc(), y);
    return arith::SubFOp::create(b, x.getLoc(), x, y);
  }
  // (A null factor is a zero tangent: the product is zero.)
  Value mul(Value x, Value y) {
    if (!x || !y)
      return Value();
    return arith::MulFOp::create(b, x.getLoc(), x, y);
  }

  OpBuilder &b;
  llvm::DenseMap<Value, Value> tangents;
};

} // namespace

FailureOr<func::FuncOp> tiled_attn::tile::addScoreGradient(func::FuncOp f) {
  auto module = f->getParentOfType<ModuleOp>();
  FunctionType type = f.getFunctionType();
  Type f32 = Float32Type::get(f.getContext());
  if (f.isExternal() || !f.getBody().hasOneBlock() || type.getNumInputs() < 5 ||
      type.getInput(0) != f32 || type.getNumResults() != 1 ||
      type.getResult(0) != f32)
    return f.emitError() << "tile-differentiate-score: a score function takes "
                            "(score: f32, b, h, q_idx, kv_idx, captures...) "
                            "and returns f32, in one block";
  std::string name = (f.getName() + "_grad").str();
  if (module.lookupSymbol(name))
    return f.emitError() << "tile-differentiate-score: the module already has '"
                         << name << "'";

  SmallVector<Type> inputs(type.getInputs());
  inputs.push_back(f32);
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  b.setInsertionPointAfter(f);
  auto grad = func::FuncOp::create(b, f.getLoc(), name,
                                   b.getFunctionType(inputs, {f32}));
  // The captures' roles (tile.arg) are the function's.
  for (unsigned i = 0, e = type.getNumInputs(); i < e; ++i)
    grad.setArgAttrs(i, f.getArgAttrDict(i));
  Block *body = grad.addEntryBlock();
  b.setInsertionPointToStart(body);
  IRMapping mapping;
  for (unsigned i = 0, e = type.getNumInputs(); i < e; ++i)
    mapping.map(f.getArgument(i), body->getArgument(i));

  Tangents tangents(b);
  Value score = body->getArgument(0);
  tangents.set(score, tangents.constant(score, 1.0));
  for (Operation &op : f.getBody().front()) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      Value result = mapping.lookup(ret.getOperand(0));
      Value t = tangents.of(result);
      Value product = t ? arith::MulFOp::create(b, ret.getLoc(),
                                                body->getArguments().back(), t)
                              .getResult()
                        : tangents.constant(result, 0.0);
      func::ReturnOp::create(b, ret.getLoc(), product);
      return grad;
    }
    if (op.getNumRegions() != 0) {
      grad.erase();
      return op.emitError() << "tile-differentiate-score: ops with regions are "
                               "not differentiated; declare the function's "
                               "gradient beside it instead";
    }
    Operation *copy = b.clone(op, mapping);
    if (failed(tangents.derive(copy))) {
      grad.erase();
      return failure();
    }
  }
  grad.erase();
  return f.emitError() << "tile-differentiate-score: no return";
}

namespace {

struct TileDifferentiateScorePass final
    : tiled_attn::tile::impl::TileDifferentiateScorePassBase<
          TileDifferentiateScorePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto f = module.lookupSymbol<func::FuncOp>(function);
    if (!f) {
      module.emitError() << "tile-differentiate-score: no function '"
                         << function << "' in the module";
      return signalPassFailure();
    }
    if (failed(tiled_attn::tile::addScoreGradient(f)))
      return signalPassFailure();
  }
};

} // namespace
