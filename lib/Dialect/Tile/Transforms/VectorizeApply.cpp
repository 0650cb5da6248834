//===- VectorizeApply.cpp - Score and mask functions written on tiles -----===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// A score or mask function is written on scalars, one (query, key) at a time,
// as FlexAttention's score_mod and mask_mod are. Each tile.apply becomes the
// function's body on tiles: every value takes the shape of what it varies
// with (nothing, the rows, the keys, or both), so that a per-head or
// per-token input is read once per head, row or key and the broadcast to the
// score block comes as late as the body allows.
//
//===----------------------------------------------------------------------===//

#include "tiled_attn/Dialect/Tile/IR/TileOps.h"
#include "tiled_attn/Dialect/Tile/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"

namespace tiled_attn::tile {
#define GEN_PASS_DEF_TILEVECTORIZEAPPLYPASS
#include "tiled_attn/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace tiled_attn::tile

using namespace mlir;
using namespace tiled_attn::tile;

namespace {

/// What a value of the function varies with: nothing (a scalar), the
/// block's rows (a vector of block_m), its keys (a vector of block_n), or
/// both (a block_m x block_n tile). The order is the lattice's: the join of
/// Rows and Keys is Block.
enum class Varies { Nothing, Rows, Keys, Block };

Varies join(Varies a, Varies b) {
  if (a == b || b == Varies::Nothing)
    return a;
  if (a == Varies::Nothing)
    return b;
  return Varies::Block;
}

struct Vectorized {
  Value value;
  Varies varies = Varies::Nothing;
};

class Vectorizer {
public:
  Vectorizer(OpBuilder &b, ApplyOp apply, bool blockLoads)
      : b(b), apply(apply), loc(apply.getLoc()),
        rows(apply.getType().getDimSize(0)),
        keys(apply.getType().getDimSize(1)), blockLoads(blockLoads) {}

  /// The function's result on tiles, a block of the op's type; failure after
  /// reporting an op that has no tile form.
  FailureOr<Value> run(func::FuncOp fn);

private:
  /// The element type a scalar type takes in a tile: positions and index
  /// arithmetic are i32.
  Type tileElement(Type type) {
    return type.isIndex() ? Type(b.getI32Type()) : type;
  }
  Type typeFor(Varies varies, Type scalar) {
    Type element = tileElement(scalar);
    switch (varies) {
    case Varies::Nothing:
      return scalar;
    case Varies::Rows:
      return RankedTensorType::get({rows}, element);
    case Varies::Keys:
      return RankedTensorType::get({keys}, element);
    case Varies::Block:
      return RankedTensorType::get({rows, keys}, element);
    }
    llvm_unreachable("covered");
  }
  /// `v` as a value that varies with `to` (a join of its own).
  Value widen(Vectorized v, Varies to);
  LogicalResult vectorize(Operation *op);
  /// With blockLoads, a read at (..., q_idx, kv_idx) as the load of the
  /// score's block; null if it is not one.
  Value blockLoad(ReadOp read);

  OpBuilder &b;
  ApplyOp apply;
  Location loc;
  int64_t rows, keys;
  bool blockLoads;
  /// The function's query and key positions (its arguments).
  Value qArg, kvArg;
  llvm::DenseMap<Value, Vectorized> map;
};

Value Vectorizer::widen(Vectorized v, Varies to) {
  if (v.varies == to)
    return v.value;
  if (v.varies == Varies::Nothing) {
    Value scalar = v.value;
    if (scalar.getType().isIndex())
      scalar = arith::IndexCastOp::create(b, loc, b.getI32Type(), scalar);
    return tensor::SplatOp::create(
        b, loc, cast<RankedTensorType>(typeFor(to, scalar.getType())), scalar);
  }
  assert(to == Varies::Block && "a vector widens to the block only");
  auto type = RankedTensorType::get(
      {rows, keys}, cast<RankedTensorType>(v.value.getType()).getElementType());
  // A vector of the rows is copied along the keys (dimension 1), one of the
  // keys along the rows (dimension 0).
  return BroadcastOp::create(b, loc, type, v.value,
                             v.varies == Varies::Rows ? 1 : 0);
}

/// The block index of a block's first position `start`, for blocks of
/// `size`: x where start = x * size (a product by a multiple of size, or a
/// constant multiple); null when `start` is not visibly such a multiple.
static Value blockIndexOf(OpBuilder &b, Location loc, Value start,
                          int64_t size) {
  APInt value;
  if (matchPattern(start, m_ConstantInt(&value))) {
    int64_t c = value.getSExtValue();
    return c % size == 0 ? arith::ConstantIndexOp::create(b, loc, c / size)
                         : Value();
  }
  auto mul = start.getDefiningOp<arith::MulIOp>();
  if (!mul)
    return {};
  for (auto [x, factor] : {std::pair(mul.getLhs(), mul.getRhs()),
                           std::pair(mul.getRhs(), mul.getLhs())}) {
    if (!matchPattern(factor, m_ConstantInt(&value)))
      continue;
    int64_t c = value.getSExtValue();
    if (c <= 0 || c % size != 0)
      continue;
    if (c == size)
      return x;
    return arith::MulIOp::create(b, loc, x,
                                 arith::ConstantIndexOp::create(b, loc, c / size));
  }
  return {};
}

Value Vectorizer::blockLoad(ReadOp read) {
  OperandRange indices = read.getIndices();
  size_t rank = indices.size();
  // 32- or 16-bit elements (a bias in float32 or the kernel's dtype) or
  // bytes (a boolean mask): the GPU copies rows of S_k of them in 16-byte
  // pieces.
  unsigned bits = read.getType().getIntOrFloatBitWidth();
  // (A transposed block's reads at (q_idx, kv_idx) are gathers.)
  if (!blockLoads || apply.getTransposed() || rank < 2 ||
      indices[rank - 2] != qArg ||
      indices[rank - 1] != kvArg || (bits != 32 && bits != 16 && bits != 8))
    return {};
  SmallVector<Value> at;
  for (Value index : indices.drop_back(2)) {
    Vectorized v = map.lookup(index);
    if (v.varies != Varies::Nothing)
      return {};
    at.push_back(v.value);
  }
  Value qBlock = blockIndexOf(b, loc, apply.getQStart(), rows);
  Value kvBlock = blockIndexOf(b, loc, apply.getKvStart(), keys);
  if (!qBlock || !kvBlock)
    return {};
  at.append({qBlock, kvBlock});
  return LoadOp::create(b, loc,
                        RankedTensorType::get({rows, keys}, read.getType()),
                        map.lookup(read.getView()).value, at,
                        /*gather=*/ValueRange{}, /*pad=*/APFloat(0.0),
                        /*transpose=*/false);
}

LogicalResult Vectorizer::vectorize(Operation *op) {
  auto fail = [&]() {
    return op->emitOpError()
           << "has no tile form: a function of tile.apply (@"
           << apply.getCallee()
           << ") may use arith and math ops on scalars, tile.read and "
              "tile.dim";
  };
  if (op->getNumRegions() != 0 || op->getNumResults() != 1)
    return fail();
  Varies varies = Varies::Nothing;
  for (Value operand : op->getOperands())
    varies = join(varies, map.lookup(operand).varies);
  Value result = op->getResult(0);

  // Nothing varies: the op as it is, on scalars.
  if (varies == Varies::Nothing) {
    IRMapping mapping;
    for (Value operand : op->getOperands())
      mapping.map(operand, map.lookup(operand).value);
    Operation *clone = b.clone(*op, mapping);
    map[result] = {clone->getResult(0), Varies::Nothing};
    return success();
  }

  // A read at positions: a gather of the rows, the keys or the block it
  // varies with.
  if (auto read = dyn_cast<ReadOp>(op)) {
    if (!read.getType().isF32() && !read.getType().isInteger(32) &&
        !read.getType().isInteger(8) && !read.getType().isF16() &&
        !read.getType().isBF16())
      return fail();
    if (Value load = blockLoad(read)) {
      map[result] = {load, Varies::Block};
      return success();
    }
    SmallVector<Value> indices;
    for (Value index : read.getIndices()) {
      Vectorized v = map.lookup(index);
      indices.push_back(v.varies == Varies::Nothing ? v.value
                                                    : widen(v, varies));
    }
    auto gather = GatherOp::create(
        b, loc, cast<RankedTensorType>(typeFor(varies, read.getType())),
        map.lookup(read.getView()).value, indices, b.getF64FloatAttr(0.0));
    map[result] = {gather, varies};
    return success();
  }

  if (!op->hasTrait<OpTrait::Elementwise>() ||
      !isa<arith::ArithDialect, math::MathDialect>(op->getDialect()))
    return fail();
  SmallVector<Value> operands;
  for (Value operand : op->getOperands())
    operands.push_back(widen(map.lookup(operand), varies));
  Type resultType = typeFor(varies, result.getType());
  // Casts between index and i32 are nothing on tiles (index is i32 there);
  // other widths extend or truncate, signed as index_cast is.
  if (isa<arith::IndexCastOp, arith::IndexCastUIOp>(op)) {
    Type from = getElementTypeOrSelf(operands[0].getType());
    Type to = getElementTypeOrSelf(resultType);
    Value cast = operands[0];
    bool isUnsigned = isa<arith::IndexCastUIOp>(op);
    if (from.getIntOrFloatBitWidth() < to.getIntOrFloatBitWidth())
      cast = isUnsigned
                 ? arith::ExtUIOp::create(b, loc, resultType, cast).getResult()
                 : arith::ExtSIOp::create(b, loc, resultType, cast).getResult();
    else if (from.getIntOrFloatBitWidth() > to.getIntOrFloatBitWidth())
      cast = arith::TruncIOp::create(b, loc, resultType, cast);
    map[result] = {cast, varies};
    return success();
  }
  OperationState state(loc, op->getName(), operands, {resultType},
                       op->getAttrs());
  map[result] = {b.create(state)->getResult(0), varies};
  return success();
}

FailureOr<Value> Vectorizer::run(func::FuncOp fn) {
  Block &body = fn.getBody().front();
  unsigned next = 0;
  if (Value score = apply.getScore())
    map[body.getArgument(next++)] = {score, Varies::Block};
  map[body.getArgument(next++)] = {apply.getBatch(), Varies::Nothing};
  map[body.getArgument(next++)] = {apply.getHead(), Varies::Nothing};
  // The queries run along the block's rows (dimension 0) and the keys
  // along its columns; transposed, the other way round. (`Rows` and `Keys`
  // name the block's dimensions 0 and 1.)
  bool transposed = apply.getTransposed();
  Varies queryDim = transposed ? Varies::Keys : Varies::Rows;
  Varies keyDim = transposed ? Varies::Rows : Varies::Keys;
  Value q = IotaOp::create(
      b, loc,
      RankedTensorType::get({transposed ? keys : rows}, b.getI32Type()),
      apply.getQStart(), /*dim=*/0);
  Value kv = IotaOp::create(
      b, loc,
      RankedTensorType::get({transposed ? rows : keys}, b.getI32Type()),
      apply.getKvStart(), /*dim=*/0);
  qArg = body.getArgument(next);
  map[body.getArgument(next++)] = {q, queryDim};
  kvArg = body.getArgument(next);
  map[body.getArgument(next++)] = {kv, keyDim};
  for (Value capture : apply.getCaptures())
    map[body.getArgument(next++)] = {capture, Varies::Nothing};
  for (Operation &op : body.without_terminator())
    if (failed(vectorize(&op)))
      return failure();
  Value result = body.getTerminator()->getOperand(0);
  Value block = widen(map.lookup(result), Varies::Block);
  // (Positions the function does not read are not left behind: a GPU
  // level that lays out every tile would have to place them.)
  for (Value position : {q, kv})
    if (position.use_empty())
      position.getDefiningOp()->erase();
  return block;
}

struct TileVectorizeApplyPass
    : tiled_attn::tile::impl::TileVectorizeApplyPassBase<
          TileVectorizeApplyPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTableCollection symbols;
    llvm::SetVector<func::FuncOp> callees;
    SmallVector<ApplyOp> applies;
    module.walk([&](ApplyOp apply) { applies.push_back(apply); });
    for (ApplyOp apply : applies) {
      auto fn = symbols.lookupNearestSymbolFrom<func::FuncOp>(
          apply, apply.getCalleeAttr());
      OpBuilder b(apply);
      Vectorizer vectorizer(b, apply, blockLoads);
      FailureOr<Value> result = vectorizer.run(fn);
      if (failed(result))
        return signalPassFailure();
      apply.replaceAllUsesWith(*result);
      apply.erase();
      callees.insert(fn);
    }
    // The functions are inlined everywhere: nothing else may call them.
    for (func::FuncOp fn : callees)
      if (SymbolTable::symbolKnownUseEmpty(fn, module))
        fn.erase();
  }
};

} // namespace
