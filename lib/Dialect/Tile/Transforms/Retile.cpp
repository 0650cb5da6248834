//===- Retile.cpp - Change the block sizes of an SDPA kernel --------------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// BLOCK_M and BLOCK_N appear in a kernel in two ways:
//
// - as tile dimensions: a dataflow analysis gives every dimension of every
//   tile value a class (union-find over shape relations: mma, reduce,
//   broadcast, elementwise ops, loop-carried values) and seeds the classes
//   from the loads and stores of Q, K, V and O, whose sequence dimension is
//   BLOCK_M (Q, O) or BLOCK_N (K, V);
// - as index arithmetic on block indices: `block * BLOCK` (an element
//   offset) and `ceildiv(S_k, BLOCK_N)` (the K/V loop trip count).
//
// Loads and stores take tile indices, so they need no change. Any other use
// of a block index is reported, never silently left at the old size.
//
//===----------------------------------------------------------------------===//

#include "tiled_attn/Dialect/Tile/IR/TileOps.h"
#include "tiled_attn/Dialect/Tile/Transforms/Passes.h"
#include "tiled_attn/Dialect/Tile/Transforms/RegionTies.h"

#include "mlir/IR/Matchers.h"
#include "llvm/ADT/EquivalenceClasses.h"
#include "llvm/Support/MathExtras.h"

namespace tiled_attn::tile {
#define GEN_PASS_DEF_TILERETILEPASS
#include "tiled_attn/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace tiled_attn::tile

using namespace mlir;
using namespace tiled_attn::tile;

namespace {

/// The dimensions a tile can stand for: the query block, the key block, and
/// the head dim (which never changes, but must not be confused with them).
enum class Role { None, M, N, D };

/// One dimension of one tile value.
using DimKey = std::pair<Value, unsigned>;

class RetileAnalysis {
public:
  explicit RetileAnalysis(func::FuncOp func) : func(func) {}

  /// Builds the classes and their roles; fails on a conflict or an op it
  /// cannot see through.
  LogicalResult run();

  Role roleOf(Value value, unsigned dim) const {
    auto it = roles.find(classes.getLeaderValue({value, dim}));
    return it == roles.end() ? Role::None : it->second;
  }
  Role blockIndexRole(Value index) const { return blockIndices.lookup(index); }
  const llvm::DenseMap<Value, Role> &getBlockIndices() const {
    return blockIndices;
  }

private:
  void unify(Value a, unsigned da, Value b, unsigned db) {
    classes.unionSets({a, da}, {b, db});
  }
  void unifyAll(Value a, Value b) {
    auto ta = dyn_cast<ShapedType>(a.getType());
    auto tb = dyn_cast<ShapedType>(b.getType());
    if (!ta || !tb)
      return;
    for (unsigned d = 0; d < ta.getRank() && d < tb.getRank(); ++d)
      unify(a, d, b, d);
  }
  void addValue(Value v) {
    if (auto t = dyn_cast<ShapedType>(v.getType()))
      for (unsigned d = 0; d < t.getRank(); ++d)
        classes.insert({v, d});
  }
  LogicalResult visit(Operation *op);
  LogicalResult seedAccess(Operation *op, Value view, ValueRange indices,
                           Value tile, bool transpose);

  func::FuncOp func;
  llvm::EquivalenceClasses<DimKey> classes;
  SmallVector<std::pair<DimKey, Role>> seeds;
  llvm::DenseMap<DimKey, Role> roles;
  llvm::DenseMap<Value, Role> blockIndices;
};

LogicalResult RetileAnalysis::seedAccess(Operation *op, Value view,
                                         ValueRange indices, Value tile,
                                         bool transpose) {
  // Q, O and the log-sum-exps are blocked by BLOCK_M along the sequence; K
  // and V by BLOCK_N.
  Role role;
  std::optional<ArgRole> argRole =
      isa<BlockArgument>(view) ? getArgRole(view) : std::nullopt;
  switch (argRole.value_or(ArgRole::Captured)) {
  case ArgRole::Q:
  case ArgRole::O:
  case ArgRole::Lse:
    role = Role::M;
    break;
  case ArgRole::K:
  case ArgRole::V:
    role = Role::N;
    break;
  default:
    return op->emitError() << "tile-retile: expects loads and stores of the "
                              "kernel's q, k, v, o and lse arguments";
  }
  auto tileTy = cast<ShapedType>(tile.getType());
  int64_t rank = tileTy.getRank(), viewRank = indices.size();
  const int64_t seqDim = 2;
  int64_t blockDim = seqDim - (viewRank - rank);
  if (blockDim < 0)
    return op->emitError() << "tile-retile: expects the tile to span the "
                              "sequence dimension";
  auto toTileDim = [&](int64_t blockDimension) {
    return static_cast<unsigned>(transpose ? rank - 1 - blockDimension
                                           : blockDimension);
  };
  seeds.push_back({{tile, toTileDim(blockDim)}, role});
  // The head dim (the view's last dimension) is a role of its own, so that a
  // value that mixes it with a block dimension is caught.
  if (viewRank - rank <= viewRank - 1 && rank >= 2)
    seeds.push_back({{tile, toTileDim(rank - 1)}, Role::D});
  Role &indexRole = blockIndices[indices[seqDim]];
  if (indexRole != Role::None && indexRole != role)
    return op->emitError() << "tile-retile: a block index is used for both "
                              "query and key blocks";
  indexRole = role;
  return success();
}

LogicalResult RetileAnalysis::visit(Operation *op) {
  for (Value result : op->getResults())
    addValue(result);
  for (Region &region : op->getRegions())
    for (Block &block : region)
      for (BlockArgument arg : block.getArguments())
        addValue(arg);

  if (auto load = dyn_cast<LoadOp>(op))
    return seedAccess(op, load.getView(), load.getIndices(), load,
                      load.getTranspose());
  if (auto store = dyn_cast<StoreOp>(op)) {
    if (store.getMask())
      unifyAll(store.getValue(), store.getMask());
    return seedAccess(op, store.getView(), store.getIndices(), store.getValue(),
                      false);
  }
  if (auto mma = dyn_cast<MmaOp>(op)) {
    unify(mma.getLhs(), 0, mma.getResult(), 0);
    unify(mma.getLhs(), 1, mma.getRhs(), 0);
    unify(mma.getRhs(), 1, mma.getResult(), 1);
    unifyAll(mma.getAcc(), mma.getResult());
    return success();
  }
  if (auto reduce = dyn_cast<ReduceOp>(op)) {
    unsigned axis = reduce.getAxis(),
             rank = cast<ShapedType>(reduce.getInput().getType()).getRank();
    for (unsigned d = 0, r = 0; d < rank; ++d)
      if (d != axis && isa<ShapedType>(reduce.getType()))
        unify(reduce.getInput(), d, reduce.getResult(), r++);
    return success();
  }
  if (auto bcast = dyn_cast<BroadcastOp>(op)) {
    unsigned axis = bcast.getAxis(),
             rank = cast<ShapedType>(bcast.getType()).getRank();
    for (unsigned d = 0, i = 0; d < rank; ++d)
      if (d != axis)
        unify(bcast.getInput(), i++, bcast.getResult(), d);
    return success();
  }
  if (auto softmax = dyn_cast<OnlineSoftmaxOp>(op)) {
    unifyAll(softmax.getScores(), softmax.getProbs());
    for (Value row :
         {softmax.getRunningMax(), softmax.getRunningSum(), softmax.getNewMax(),
          softmax.getNewSum(), softmax.getAlpha()})
      unify(softmax.getScores(), 0, row, 0);
    return success();
  }
  if (auto lse = dyn_cast<LogSumExpOp>(op)) {
    for (Value row : {lse.getMax(), lse.getSum()})
      unify(row, 0, lse.getResult(), 0);
    return success();
  }
  if (auto gather = dyn_cast<GatherOp>(op)) {
    for (Value index : gather.getIndices())
      if (isa<ShapedType>(index.getType()))
        unifyAll(index, gather.getResult());
    return success();
  }
  if (forEachRegionTie(op, [&](Value a, Value b) { unifyAll(a, b); }))
    return success();
  if (isa<BlockIdOp, DimOp, IotaOp, BoundsMaskOp, CausalMaskOp, WindowMaskOp,
          arith::ConstantOp, tensor::SplatOp, scf::YieldOp, func::ReturnOp>(op))
    return success();
  if (op->hasTrait<OpTrait::Elementwise>()) {
    Value first;
    for (Value v : llvm::concat<Value>(op->getOperands(), op->getResults())) {
      if (!isa<ShapedType>(v.getType()))
        continue;
      if (first)
        unifyAll(first, v);
      else
        first = v;
    }
    return success();
  }
  bool touchesTiles =
      llvm::any_of(llvm::concat<Value>(op->getOperands(), op->getResults()),
                   [](Value v) { return isa<ShapedType>(v.getType()); });
  if (touchesTiles)
    return op->emitError() << "tile-retile: does not know how '"
                           << op->getName() << "' relates tile shapes";
  return success();
}

LogicalResult RetileAnalysis::run() {
  WalkResult walk = func.walk([&](Operation *op) {
    return failed(visit(op)) ? WalkResult::interrupt() : WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  for (auto [key, role] : seeds) {
    Role &r = roles[classes.getLeaderValue(key)];
    if (r != Role::None && r != role)
      return emitError(key.first.getLoc())
             << "tile-retile: a tile dimension here stands for two of the "
                "query block, the key block and the head dim";
    r = role;
  }
  return success();
}

struct TileRetilePass final
    : tiled_attn::tile::impl::TileRetilePassBase<TileRetilePass> {
  using Base::Base;
  void runOnOperation() override;
};

void TileRetilePass::runOnOperation() {
  func::FuncOp func = getOperation();
  // The options first, whether or not the kernel is one to retile.
  for (int64_t size : {int64_t(blockM), int64_t(blockN)})
    if (size != 0 && !isBlockSize(size)) {
      func.emitError() << "tile-retile: block sizes must be multiples of 16 "
                          "in [16, 256], got "
                       << size;
      return signalPassFailure();
    }
  auto sdpa = func->getAttrOfType<SdpaAttr>(TileDialect::getSdpaAttrName());
  if (!sdpa)
    return; // Not an SDPA kernel: nothing to retile.
  if (sdpa.getFeatures().varlen) {
    func.emitError() << "tile-retile: varlen kernels are not supported (their "
                        "views are slices, not the kernel's arguments)";
    return signalPassFailure();
  }
  int64_t oldM = sdpa.getBlockM(), oldN = sdpa.getBlockN();
  int64_t newM = blockM ? blockM : oldM, newN = blockN ? blockN : oldN;
  if (sdpa.getStages() != 1 || sdpa.getMaskSplit()) {
    func.emitError() << "tile-retile: run it before tile-prefetch and "
                        "tile-mask-split";
    return signalPassFailure();
  }
  // A gathered load's groups are its rows split among its gather indices,
  // each the size of what it reads from (a page): another block size would
  // need other indices.
  if (newN != oldN) {
    WalkResult gathered = func.walk([](LoadOp load) {
      return load.getGather().empty() ? WalkResult::advance()
                                      : WalkResult::interrupt();
    });
    if (gathered.wasInterrupted()) {
      func.emitError() << "tile-retile: the kernel gathers its key blocks "
                          "(tile.load's gather), whose groups fix block_n";
      return signalPassFailure();
    }
  }

  // A constant tile used in several places (CSE merges equal splats) carries
  // no dataflow: give each use its own copy, so that each can take the shape
  // of its role.
  func.walk([](Operation *op) {
    // (An unused one has no first use to keep: drop_begin would step past
    // the end, found by test/Fuzz.)
    if (!isa<arith::ConstantOp, tensor::SplatOp>(op) ||
        !isa<RankedTensorType>(op->getResult(0).getType()) ||
        op->getResult(0).use_empty())
      return;
    for (OpOperand &use : llvm::make_early_inc_range(
             llvm::drop_begin(op->getResult(0).getUses()))) {
      OpBuilder b(op);
      use.set(b.clone(*op)->getResult(0));
    }
  });

  RetileAnalysis analysis(func);
  if (failed(analysis.run()))
    return signalPassFailure();
  auto sizeOf = [&](Role role, int64_t old) {
    return role == Role::M ? newM : role == Role::N ? newN : old;
  };

  auto oldSizeOf = [&](Role role) { return role == Role::M ? oldM : oldN; };

  // 1. Index arithmetic on block indices.
  OpBuilder b(func.getContext());
  for (auto [index, role] : analysis.getBlockIndices()) {
    for (OpOperand &use : llvm::make_early_inc_range(index.getUses())) {
      Operation *user = use.getOwner();
      if (isa<LoadOp, StoreOp>(user))
        continue;
      auto mul = dyn_cast<arith::MulIOp>(user);
      APInt factor;
      Value other = mul ? mul->getOperand(1 - use.getOperandNumber()) : Value();
      if (!mul || !matchPattern(other, m_ConstantInt(&factor)) ||
          factor.getSExtValue() != oldSizeOf(role)) {
        user->emitError() << "tile-retile: cannot rescale this use of a "
                             "block index (expects `index * "
                          << oldSizeOf(role) << "`)";
        return signalPassFailure();
      }
      b.setInsertionPoint(mul);
      mul->setOperand(
          1 - use.getOperandNumber(),
          arith::ConstantIndexOp::create(b, mul.getLoc(), sizeOf(role, 0)));
    }
    // The K/V loop counts blocks of BLOCK_N: ub = ceildiv(S_k, BLOCK_N).
    auto iv = dyn_cast<BlockArgument>(index);
    auto loop =
        iv ? dyn_cast<scf::ForOp>(iv.getOwner()->getParentOp()) : scf::ForOp();
    if (!loop)
      continue;
    auto count = loop.getUpperBound().getDefiningOp<arith::CeilDivUIOp>();
    APInt divisor;
    if (!count || !matchPattern(count.getRhs(), m_ConstantInt(&divisor)) ||
        divisor.getSExtValue() != oldSizeOf(role)) {
      loop.emitError() << "tile-retile: expects the block loop to run to "
                          "ceildiv(length, "
                       << oldSizeOf(role) << ")";
      return signalPassFailure();
    }
    b.setInsertionPoint(count);
    count->setOperand(
        1, arith::ConstantIndexOp::create(b, count.getLoc(), sizeOf(role, 0)));
  }

  // 2. Tile shapes: every value, then the constants that must match them.
  auto retype = [&](Value v) {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (!type)
      return;
    SmallVector<int64_t> shape(type.getShape());
    for (unsigned d = 0; d < shape.size(); ++d) {
      Role role = analysis.roleOf(v, d);
      if (role != Role::None)
        shape[d] = sizeOf(role, shape[d]);
    }
    v.setType(type.clone(shape));
  };
  WalkResult walk = func.walk([&](Operation *op) {
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments())
          retype(arg);
    for (Value result : op->getResults())
      retype(result);
    if (auto cst = dyn_cast<arith::ConstantOp>(op)) {
      auto dense = dyn_cast<DenseElementsAttr>(cst.getValue());
      if (dense && dense.getType() != cst.getType()) {
        if (!dense.isSplat()) {
          cst.emitError() << "tile-retile: cannot resize a non-splat "
                             "constant tile";
          return WalkResult::interrupt();
        }
        cst.setValueAttr(dense.resizeSplat(cast<ShapedType>(cst.getType())));
      }
    }
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return signalPassFailure();

  func->setAttr(TileDialect::getSdpaAttrName(), sdpa.withBlocks(newM, newN));
}

} // namespace
