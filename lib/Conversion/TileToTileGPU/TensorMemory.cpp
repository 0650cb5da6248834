//===- TensorMemory.cpp - Tensor memory for the tcgen05 family ------------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// After tilegpu-assign-layouts a tcgen05 kernel's accumulators are tiles
// with a #tilegpu.tensor_memory encoding. Here each becomes a buffer in
// tensor memory:
// - the tiles one accumulator is over time (what a loop carries or a branch
//   returns, the mma's accumulator and result) share one buffer: a move of
//   the corrected O back to tensor memory rewrites the buffer the
//   uncorrected one was read from;
// - tile.mma becomes tilegpu.tmem_mma into that buffer, after a CTA barrier
//   (every thread's tensor-memory stores, and its reads of what the mma
//   overwrites, come first), then tilegpu.mma_commit to the "done"
//   mbarrier of its accumulator: each accumulator (O, S) has its own
//   handshake, so that products of different kinds run ahead of their
//   readers independently;
// - the threads wait for a product where they next touch tensor memory
//   (a tcgen05.ld or .st, the correction of O, the end of the kernel) or
//   release shared memory that products read, not right after its commit:
//   the softmax of one block runs while its P.V does. The wait is for the
//   phase of the last commit, which holds every earlier product of the
//   kind; before the next product of a kind is let go, the last one is
//   waited for, so that no mbarrier runs two phases ahead of its waiters;
// - with two blocks of 128 rows (two Q tiles per CTA, a warpgroup each),
//   each warpgroup is a group on its own: its barrier, its products (of
//   its rows), its mbarriers, so that one warpgroup's softmax runs while
//   the other's products do;
// - with p-over-s, P (the packed lhs of P.V) takes no columns of its own:
//   its buffer is a tilegpu.tmem_alias over the first columns of each row
//   block of the S it is computed from (FlashAttention-4), which is safe
//   when S is read before P is stored and no product writes S between
//   P's store and P.V (checked);
// - with mma-warp, a group's barrier before a product becomes an arrival
//   of its warps on the group's "ready" mbarrier of the accumulator, and
//   each group's issuer waits there before it issues the group's rows and
//   commits them to the group's done mbarrier. tilegpu-warp-specialize
//   moves the issue to an MMA role whose warps are the groups' issuers
//   (FlashAttention-4's MMA warp, one per Q tile: each tile's products go
//   in its own order, S, P.V, the next S, whatever the other tile does).
//   With p-over-s, the next S is issued by the same thread right after the
//   P.V that reads P from S's columns, without waiting for it: tcgen05.mma
//   from one thread run in issue order, which FlashAttention-4 relies on in
//   the same place;
// - a zero accumulator is the mma's accumulate(false); any other constant
//   is stored into the buffer where it is defined;
// - the correction of O (moved to registers, scaled by a row broadcast,
//   moved back) is tilegpu.tmem_scale_rows, in place, a piece at a time;
// - with correction (and mma-warp), each correction of O is handed off
//   through shared memory: the group's warps write their row factors
//   (tilegpu.local_store) and arrive on the group's "factors" mbarrier,
//   then wait for that hand-off's phase, read the factors back and scale
//   O. tilegpu-warp-specialize with correction gives the second half to
//   correction warps (FlashAttention-4's correction warpgroup): the
//   softmax then goes on to its arrival for P.V without touching O;
// - any other move to registers is a tilegpu.tmem_load; a move from
//   registers (P) a tilegpu.tmem_store, placed right after the value is
//   computed, so that its registers are free before the mma.
// The k-th commit of an accumulator's products completes phase k mod 2 of
// its done mbarrier (and the k-th arrival of a group's warps phase k mod 2
// of its ready mbarrier): each accumulator's count of products is carried
// through loops and branches.
//
//===----------------------------------------------------------------------===//

#include "tiled_attn/Conversion/TileToTileGPU/TileToTileGPU.h"
#include "tiled_attn/Dialect/Tile/IR/TileOps.h"
#include "tiled_attn/Dialect/Tile/Transforms/RegionTies.h"
#include "tiled_attn/Dialect/TileGPU/IR/TileGPUOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/EquivalenceClasses.h"
#include "llvm/ADT/MapVector.h"

using namespace mlir;
using namespace tiled_attn;
using namespace tiled_attn::tilegpu;

namespace {

TensorMemoryEncodingAttr tensorMemoryOf(Type type) {
  auto tile = dyn_cast<RankedTensorType>(type);
  return tile ? dyn_cast_or_null<TensorMemoryEncodingAttr>(tile.getEncoding())
              : nullptr;
}

/// The register tile that tcgen05.ld gives for a tile in tensor memory: a
/// warpgroup per block of 128 rows.
RankedTensorType registerType(RankedTensorType tile) {
  int64_t rowBlocks = std::max<int64_t>(1, tile.getDimSize(0) / 128);
  return RankedTensorType::get(
      tile.getShape(), tile.getElementType(),
      TmemLanesLayoutAttr::get(tile.getContext(), TmemLanesKind::Acc,
                               /*warps=*/4 * rowBlocks, rowBlocks));
}

bool isZero(Value v) {
  auto cst = v.getDefiningOp<arith::ConstantOp>();
  auto dense = cst ? dyn_cast<DenseElementsAttr>(cst.getValue()) : nullptr;
  return dense && dense.isSplat() && dense.getSplatValue<APFloat>().isPosZero();
}

class TensorMemoryMaterializer {
public:
  TensorMemoryMaterializer(func::FuncOp func, bool mmaWarp, bool pOverS,
                           bool correction)
      : func(func), mmaWarp(mmaWarp), pOverS(pOverS), correction(correction) {}
  LogicalResult run();

private:
  /// The buffer of a tile in tensor memory (null for a zero that only
  /// starts an mma).
  Value bufferOf(Value tile) const { return bufferFor.lookup(tile); }
  void collect();
  LogicalResult findPOverS();
  void allocate();
  void fuseCorrections();
  LogicalResult checkInPlace();
  LogicalResult rewrite(Operation *op);
  void retype();
  LogicalResult insertWaits(Block &block, SmallVectorImpl<Value> &counts,
                            llvm::BitVector &pending, bool emit);
  void waitFor(OpBuilder &b, Location loc, unsigned kind, Value count);
  Value groupId(OpBuilder &b, Location loc);
  void fuseScaledStores();
  void handOff(Operation *op, OpOperand &scale, Value count);

  func::FuncOp func;
  bool mmaWarp, pOverS, correction;
  /// With correction: the row factors handed to the correction (one
  /// element per row of the accumulator) and the mbarriers (one per group)
  /// that each hand-off completes a phase of. Their count is carried
  /// through loops after the products' counts.
  Value factors, factorsFull;
  /// With pOverS: the moves of P to tensor memory and the tile of S each
  /// is computed from.
  llvm::MapVector<tile::ConvertLayoutOp, Value> pOverSOf;
  llvm::EquivalenceClasses<Value> classes;
  /// Each tile in tensor memory (of the IR before the rewrite) and its
  /// buffer.
  llvm::DenseMap<Value, Value> bufferFor;
  /// The groups of warps that issue their own products: one per block of
  /// 128 rows (two Q tiles per CTA: two).
  int64_t groups = 1;
  /// Each accumulator's handshake: the mbarriers its products complete on
  /// (one per group) and, with mmaWarp, those its groups arrive on when
  /// the next product may go.
  struct Handshake {
    Value acc, done, ready;
  };
  SmallVector<Handshake> handshakes;
  llvm::DenseMap<Value, unsigned> kindOfAcc, kindOfDone;
  /// The op that lets each product go (its group's barrier, or its ready
  /// arrival) and the product's kind.
  llvm::DenseMap<Operation *, unsigned> enables;
};

/// The tiles in tensor memory and the accumulators they are.
void TensorMemoryMaterializer::collect() {
  auto unify = [&](Value a, Value b) {
    if (tensorMemoryOf(a.getType()) && tensorMemoryOf(b.getType()))
      classes.unionSets(a, b);
  };
  func.walk([&](Operation *op) {
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments())
          if (tensorMemoryOf(arg.getType()))
            classes.insert(arg);
    for (Value result : op->getResults())
      if (tensorMemoryOf(result.getType()))
        classes.insert(result);
    tile::forEachRegionTie(op, unify);
    if (auto mma = dyn_cast<tile::MmaOp>(op); mma && !isZero(mma.getAcc()))
      unify(mma.getAcc(), mma.getResult());
  });
}

/// The S each P (a packed tile moved to tensor memory) is computed from:
/// the tile in tensor memory whose move to registers P's value derives
/// from, in P's block (of several, the last moved). P may lie over S if no read
/// of S follows P's store in its block and no product writes S between that
/// store and the first product that reads P.
LogicalResult TensorMemoryMaterializer::findPOverS() {
  SmallVector<tile::ConvertLayoutOp> stores;
  func.walk([&](tile::ConvertLayoutOp move) {
    auto memory = tensorMemoryOf(move.getType());
    if (memory && memory.getPacked())
      stores.push_back(move);
  });
  for (tile::ConvertLayoutOp store : stores) {
    Block *block = store->getBlock();
    // Backward through P's computation in its block.
    SmallVector<Value> worklist = {store.getInput()};
    llvm::SmallPtrSet<Operation *, 16> seen;
    llvm::SetVector<Value> sources;
    while (!worklist.empty()) {
      Operation *def = worklist.pop_back_val().getDefiningOp();
      if (!def || def->getBlock() != block || !seen.insert(def).second)
        continue;
      if (auto load = dyn_cast<tile::ConvertLayoutOp>(def);
          load && tensorMemoryOf(load.getInput().getType())) {
        sources.insert(load.getInput());
        continue;
      }
      llvm::append_range(worklist, def->getOperands());
    }
    if (sources.empty())
      return store.emitError()
             << "convert-tile-to-tilegpu: p-over-s puts P over a tile in "
                "tensor memory it is computed from, but it comes from none";
    // Of several (the backward's dSᵀ, from Pᵀ's S and from dPᵀ), the one
    // moved to registers last, which the checks below need free soonest.
    Value sTile = sources.front();
    Operation *lastMove = nullptr;
    for (Operation *op = &block->front(); op; op = op->getNextNode())
      if (auto move = dyn_cast<tile::ConvertLayoutOp>(op);
          move && sources.contains(move.getInput()) &&
          (!lastMove || lastMove->isBeforeInBlock(move))) {
        lastMove = move;
        sTile = move.getInput();
      }
    auto sType = cast<RankedTensorType>(sTile.getType());
    auto pType = cast<RankedTensorType>(store.getType());
    if (sType.getDimSize(0) != pType.getDimSize(0) ||
        sType.getDimSize(1) != pType.getDimSize(1))
      return store.emitError()
             << "convert-tile-to-tilegpu: p-over-s needs P of S's shape, got "
             << pType << " from " << sType;
    auto sameClass = [&](Value v) {
      return tensorMemoryOf(v.getType()) && classes.contains(v) &&
             classes.isEquivalent(v, sTile);
    };
    // P is stored right after it is computed (see rewrite).
    Operation *storedAt = store;
    if (Operation *def = store.getInput().getDefiningOp();
        def && def->getBlock() == block)
      storedAt = def;
    Operation *readsP = nullptr;
    for (Operation *op = storedAt->getNextNode(); op; op = op->getNextNode()) {
      bool conflict = false;
      op->walk([&](Operation *inner) {
        if (auto read = dyn_cast<tile::ConvertLayoutOp>(inner))
          conflict |= sameClass(read.getInput());
        if (auto mma = dyn_cast<tile::MmaOp>(inner)) {
          if (!readsP && mma.getLhs() == store.getResult())
            readsP = mma;
          else if (!readsP && sameClass(mma.getResult()))
            conflict = true;
        }
      });
      if (conflict) {
        InFlightDiagnostic diag =
            op->emitError() << "convert-tile-to-tilegpu: p-over-s would put "
                               "P over S, but S is read or written again "
                               "here, after P is stored";
        diag.attachNote(storedAt->getLoc()) << "P is stored here";
        return failure();
      }
      if (readsP)
        break;
    }
    pOverSOf[store] = sTile;
  }
  return success();
}

/// One buffer per accumulator, at the top of the kernel, and the mma
/// mbarrier; with p-over-s, P's buffers alias S's.
void TensorMemoryMaterializer::allocate() {
  OpBuilder b = OpBuilder::atBlockBegin(&func.front());
  Location loc = func.getLoc();
  auto isP = [&](Value leader) {
    return llvm::any_of(pOverSOf, [&](auto &entry) {
      return classes.isEquivalent(entry.first.getResult(), leader);
    });
  };
  for (auto it = classes.begin(); it != classes.end(); ++it) {
    if (!(*it)->isLeader())
      continue;
    Value leader = (*it)->getData();
    if (isP(leader))
      continue;
    auto tile = cast<RankedTensorType>(leader.getType());
    // A zero that only starts an mma needs no buffer.
    if (isZero(leader) &&
        std::next(classes.member_begin(**it)) == classes.member_end() &&
        llvm::all_of(leader.getUsers(),
                     [](Operation *u) { return isa<tile::MmaOp>(u); }))
      continue;
    auto type = BufferType::get(b.getContext(), tile.getShape(),
                                tile.getElementType(), tile.getEncoding());
    Value buffer = AllocOp::create(b, loc, type, IntegerAttr());
    for (auto member = classes.member_begin(**it);
         member != classes.member_end(); ++member)
      bufferFor[*member] = buffer;
  }
  for (auto &[store, sTile] : pOverSOf) {
    Value pTile = store.getResult();
    if (bufferFor.lookup(pTile))
      continue;
    Value sBuffer = bufferFor.lookup(sTile);
    BufferType sType = cast<BufferType>(sBuffer.getType());
    auto tile = cast<RankedTensorType>(pTile.getType());
    int64_t step = tile.getDimSize(0) > 128 ? sType.getRowBlockStep() : 0;
    auto type = BufferType::get(
        b.getContext(), tile.getShape(), tile.getElementType(),
        TensorMemoryEncodingAttr::get(b.getContext(), /*packed=*/true, step));
    OpBuilder after(sBuffer.getContext());
    after.setInsertionPointAfterValue(sBuffer);
    Value buffer = TmemAliasOp::create(after, loc, type, sBuffer);
    for (auto member = classes.findLeader(pTile);
         member != classes.member_end(); ++member)
      bufferFor[*member] = buffer;
  }
  // Each accumulator's mbarriers, one per group: done expects the commit,
  // ready one arrival per warp of the group.
  auto barrierType =
      BufferType::get(b.getContext(), {groups}, b.getI64Type(),
                      SharedEncodingAttr::get(b.getContext(), 0, 0, false));
  auto barriers = [&](int64_t arrivals) -> Value {
    Value buffer = AllocOp::create(b, loc, barrierType, IntegerAttr());
    for (int64_t g = 0; g < groups; ++g)
      MBarrierInitOp::create(b, loc, buffer,
                             arith::ConstantIndexOp::create(b, loc, g),
                             b.getI64IntegerAttr(arrivals));
    return buffer;
  };
  auto warps =
      func->getAttrOfType<IntegerAttr>(TileGPUDialect::getWarpsAttrName());
  func.walk([&](tile::MmaOp mma) {
    Value acc = bufferOf(mma.getResult());
    if (!acc || kindOfAcc.count(acc))
      return;
    Handshake handshake{acc, barriers(1), Value()};
    if (mmaWarp)
      handshake.ready = barriers(warps.getInt() / groups);
    kindOfAcc[acc] = handshakes.size();
    kindOfDone[handshake.done] = handshakes.size();
    handshakes.push_back(handshake);
  });
  if (correction) {
    // One f32 per row of the accumulators (all of them have groups x 128
    // rows); unused allocations go again after fuseCorrections.
    factors = AllocOp::create(
        b, loc,
        BufferType::get(b.getContext(), {groups * 128}, b.getF32Type(),
                        SharedEncodingAttr::get(b.getContext(), 0, 0, false)),
        IntegerAttr());
    factorsFull = barriers(warps.getInt() / groups);
  }
  gpu::BarrierOp::create(b, loc);
}

/// An accumulator moved to registers, scaled by a row broadcast and moved
/// back into its own buffer (the correction of O) is scaled in place, a
/// piece at a time: tilegpu.tmem_scale_rows.
void TensorMemoryMaterializer::fuseCorrections() {
  SmallVector<tile::ConvertLayoutOp> moves;
  func.walk([&](tile::ConvertLayoutOp move) {
    if (tensorMemoryOf(move.getType()))
      moves.push_back(move);
  });
  for (tile::ConvertLayoutOp store : moves) {
    auto mul = store.getInput().getDefiningOp<arith::MulFOp>();
    if (!mul || !mul->hasOneUse() ||
        !getElementTypeOrSelf(mul.getType()).isF32())
      continue;
    for (auto [tile, factor] : {std::pair(mul.getLhs(), mul.getRhs()),
                                std::pair(mul.getRhs(), mul.getLhs())}) {
      auto load = tile.getDefiningOp<tile::ConvertLayoutOp>();
      auto bcast = factor.getDefiningOp<tile::BroadcastOp>();
      if (!load || !load->hasOneUse() ||
          !tensorMemoryOf(load.getInput().getType()) || !bcast ||
          bcast.getAxis() != 1)
        continue;
      Value buffer = bufferOf(load.getInput());
      if (!buffer || buffer != bufferOf(store.getResult()))
        continue;
      OpBuilder b(store);
      TmemScaleRowsOp::create(b, store.getLoc(), buffer, bcast.getInput());
      store.getResult().replaceAllUsesWith(buffer);
      store.erase();
      mul.erase();
      load.erase();
      if (bcast->use_empty())
        bcast.erase();
      break;
    }
  }
}

/// A buffer holds one tile of its accumulator at a time: a tile may be read
/// (moved to registers) only before an op that writes its buffer again (an
/// mma into it, a move into it) after the tile was made. Tile IR whose SSA
/// values keep an older accumulator alive is refused, not miscompiled.
LogicalResult TensorMemoryMaterializer::checkInPlace() {
  SmallVector<Operation *> writes;
  func.walk([&](Operation *op) {
    if (isa<tile::MmaOp>(op) || (isa<tile::ConvertLayoutOp>(op) &&
                                 tensorMemoryOf(op->getResult(0).getType())))
      if (bufferOf(op->getResult(0)))
        writes.push_back(op);
  });
  WalkResult walk = func.walk([&](tile::ConvertLayoutOp read) {
    Value tile = read.getInput();
    if (!tensorMemoryOf(tile.getType()) || !bufferOf(tile))
      return WalkResult::advance();
    Block *block = read->getBlock();
    Operation *def = tile.getDefiningOp();
    Operation *defHere = def ? block->findAncestorOpInBlock(*def) : nullptr;
    for (Operation *write : writes) {
      if (bufferOf(write->getResult(0)) != bufferOf(tile))
        continue;
      Operation *writeHere = block->findAncestorOpInBlock(*write);
      if (!writeHere || writeHere == defHere ||
          !writeHere->isBeforeInBlock(read))
        continue;
      // A write before the tile is made is of an older tile.
      if (defHere && !defHere->isBeforeInBlock(writeHere))
        continue;
      // Named at the op that reads it (the move is at the tile's place).
      Operation *reader =
          read->use_empty() ? read.getOperation() : *read->user_begin();
      InFlightDiagnostic diag =
          reader->emitError() << "convert-tile-to-tilegpu: reads a tile in "
                                 "tensor memory after its buffer was written "
                                 "again (an accumulator is kept in place; keep "
                                 "no older value of it alive)";
      diag.attachNote(write->getLoc()) << "written again here";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

LogicalResult TensorMemoryMaterializer::rewrite(Operation *op) {
  Location loc = op->getLoc();
  OpBuilder b(op);
  if (auto cst = dyn_cast<arith::ConstantOp>(op)) {
    Value buffer = bufferOf(cst);
    if (!buffer)
      return success(); // a register constant, or accumulate(false)
    b.setInsertionPointAfter(cst);
    auto type = registerType(cast<RankedTensorType>(cst.getType()));
    auto value = arith::ConstantOp::create(
        b, loc, type, cast<DenseElementsAttr>(cst.getValue()).reshape(type));
    TmemStoreOp::create(b, loc, value, buffer);
    return success();
  }
  if (auto mma = dyn_cast<tile::MmaOp>(op)) {
    Value acc = bufferOf(mma.getResult());
    Value lhs = mma.getLhs();
    if (tensorMemoryOf(lhs.getType()))
      lhs = bufferOf(lhs);
    if (!isa<BufferType>(lhs.getType()) ||
        !isa<BufferType>(mma.getRhs().getType()))
      return mma.emitError() << "convert-tile-to-tilegpu: tcgen05 reads the "
                                "operands of tile.mma from shared or tensor "
                                "memory (run tilegpu-assign-layouts first)";
    Value accumulate = arith::ConstantIntOp::create(
        b, loc, b.getI1Type(), isZero(mma.getAcc()) ? 0 : 1);
    unsigned kind = kindOfAcc.lookup(acc);
    const Handshake &handshake = handshakes[kind];
    // Each group's threads, then its product: the groups' rows, tensor
    // memory and mbarriers are their own. With mmaWarp, the group's warps
    // arrive on its ready mbarrier instead of meeting at a barrier, and
    // each group's issuer waits there (insertWaits adds the wait).
    Operation *sync;
    if (mmaWarp) {
      sync = MBarrierArriveOp::create(b, loc, handshake.ready, groupId(b, loc));
    } else if (groups == 1) {
      sync = gpu::BarrierOp::create(b, loc);
    } else {
      sync = GroupBarrierOp::create(b, loc, groups);
    }
    enables[sync] = kind;
    TmemMmaOp::create(b, loc, lhs, mma.getRhs(), acc, accumulate,
                      IntegerAttr());
    MmaCommitOp::create(b, loc, handshake.done,
                        arith::ConstantIndexOp::create(b, loc, 0), groups);
    // Loops and branches hand the buffer on (retype gives them its type).
    mma.getResult().replaceAllUsesWith(acc);
    mma.erase();
    return success();
  }
  auto move = dyn_cast<tile::ConvertLayoutOp>(op);
  if (!move)
    return success();
  if (!tensorMemoryOf(move.getType())) {
    // The tile's buffer, or the buffer an mma before it was rewritten to.
    Value buffer = move.getInput();
    if (!isa<BufferType>(buffer.getType()))
      buffer = bufferOf(buffer);
    Value loaded = TmemLoadOp::create(b, loc, move.getType(), buffer);
    move.replaceAllUsesWith(loaded);
    move.erase();
    return success();
  }
  // To tensor memory, as soon as the value is computed in the same block.
  Operation *def = move.getInput().getDefiningOp();
  if (def && def->getBlock() == move->getBlock())
    b.setInsertionPointAfter(def);
  Value buffer = bufferOf(move.getResult());
  TmemStoreOp::create(b, loc, move.getInput(), buffer);
  move.getResult().replaceAllUsesWith(buffer);
  move.erase();
  return success();
}

/// Loops and branches that carried tiles in tensor memory carry their
/// buffers: every use now names the buffer itself.
void TensorMemoryMaterializer::retype() {
  func.walk([&](Operation *op) {
    auto swap = [&](Value v) {
      if (!tensorMemoryOf(v.getType()))
        return;
      Value buffer = bufferOf(v);
      v.setType(buffer.getType());
      v.replaceAllUsesWith(buffer);
    };
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments())
          swap(arg);
    if (isa<scf::ForOp, scf::IfOp>(op))
      for (Value result : op->getResults())
        swap(result);
  });
  // Constants that started an accumulator are stored; the tiles are gone.
  SmallVector<arith::ConstantOp> constants;
  func.walk([&](arith::ConstantOp cst) {
    if (tensorMemoryOf(cst.getType()))
      constants.push_back(cst);
  });
  for (arith::ConstantOp cst : constants) {
    if (Value buffer = bufferOf(cst))
      cst.replaceAllUsesWith(buffer);
    cst.erase();
  }
}

/// With correction: the epilogue (the accumulator moved to registers,
/// scaled by a row broadcast, truncated and stored) is a
/// tilegpu.tmem_scale_store, which moves a piece at a time, so that the
/// correction warps, with few registers, can run it.
void TensorMemoryMaterializer::fuseScaledStores() {
  SmallVector<tile::StoreOp> stores;
  func.walk([&](tile::StoreOp store) { stores.push_back(store); });
  for (tile::StoreOp store : stores) {
    if (store.getMask() || store.getAdd())
      continue;
    Value value = store.getValue();
    if (auto trunc = value.getDefiningOp<arith::TruncFOp>();
        trunc && trunc->hasOneUse())
      value = trunc.getIn();
    auto mul = value.getDefiningOp<arith::MulFOp>();
    if (!mul || !mul->hasOneUse() ||
        !getElementTypeOrSelf(mul.getType()).isF32())
      continue;
    for (auto [tile, factor] : {std::pair(mul.getLhs(), mul.getRhs()),
                                std::pair(mul.getRhs(), mul.getLhs())}) {
      auto load = tile.getDefiningOp<tile::ConvertLayoutOp>();
      auto bcast = factor.getDefiningOp<tile::BroadcastOp>();
      if (!load || !load->hasOneUse() ||
          !tensorMemoryOf(load.getInput().getType()) || !bcast ||
          bcast.getAxis() != 1)
        continue;
      Value buffer = bufferOf(load.getInput());
      if (!buffer)
        continue;
      OpBuilder b(store);
      TmemScaleStoreOp::create(b, store.getLoc(), buffer, bcast.getInput(),
                               store.getView(), store.getIndices());
      Operation *trunc = store.getValue().getDefiningOp();
      store.erase();
      if (trunc != mul.getOperation())
        trunc->erase();
      mul.erase();
      load.erase();
      if (bcast->use_empty())
        bcast.erase();
      break;
    }
  }
}

/// A wait for the last product of `kind` committed before (`count` of
/// them): the phase of that commit, (count - 1) mod 2. Before the first,
/// it is the phase before phase 0, which a fresh mbarrier reports
/// complete. The group's mbarrier is named where it is waited on: the
/// threads that run the wait (a warp role's, once roles split the kernel)
/// are the ones that form the groups.
void TensorMemoryMaterializer::waitFor(OpBuilder &b, Location loc,
                                       unsigned kind, Value count) {
  Value last = arith::AddIOp::create(b, loc, count,
                                     arith::ConstantIndexOp::create(b, loc, 1));
  Value phase = arith::TruncIOp::create(
      b, loc, b.getI1Type(),
      arith::IndexCastUIOp::create(b, loc, b.getI64Type(), last));
  MBarrierWaitOp::create(b, loc, handshakes[kind].done, groupId(b, loc), phase);
}

Value TensorMemoryMaterializer::groupId(OpBuilder &b, Location loc) {
  return groups == 1
             ? arith::ConstantIndexOp::create(b, loc, 0).getResult()
             : GroupIdOp::create(b, loc, b.getIndexType(), groups).getResult();
}

/// The `count`-th hand-off (from 0) of a correction of O, or of its final
/// scaling and store: the group's warps write the factors and arrive, then
/// wait for the phase the hand-off completes, count mod 2, and run `op`
/// with the factors read back.
void TensorMemoryMaterializer::handOff(Operation *op, OpOperand &scale,
                                       Value count) {
  OpBuilder b(op);
  Location loc = op->getLoc();
  Value group = groupId(b, loc);
  LocalStoreOp::create(b, loc, scale.get(), factors);
  MBarrierArriveOp::create(b, loc, factorsFull, group);
  Value phase = arith::TruncIOp::create(
      b, loc, b.getI1Type(),
      arith::IndexCastUIOp::create(b, loc, b.getI64Type(), count));
  MBarrierWaitOp::create(b, loc, factorsFull, group, phase);
  Value back = LocalLoadOp::create(b, loc, scale.get().getType(), factors);
  scale.set(back);
}

/// The waits for the products, in `block`: `pending` holds the kinds with a
/// commit not yet waited for on the way here, `counts` each kind's products
/// so far. A product is waited for
/// - before the threads next touch tensor memory (any buffer: columns are
///   shared among buffers that are not live together), release shared
///   memory the products read (an arrival on an empty mbarrier, or the CTA
///   barrier before a refill without one), and at the kernel's end (tensor
///   memory is freed there): every pending kind;
/// - before the op that lets the next product of its kind go (its group's
///   barrier or ready arrival): one phase in flight per mbarrier.
/// With mmaWarp, each group's issuer waits for the group's readiness,
/// phase `count` of its ready mbarrier. Loops and branches that commit carry
/// the counts; a loop's body starts with what is pending before the loop or at
/// the end of its body (to a fixed point). With `emit` false, only `pending`
/// moves: the IR stays as it is.
LogicalResult
TensorMemoryMaterializer::insertWaits(Block &block,
                                      SmallVectorImpl<Value> &counts,
                                      llvm::BitVector &pending, bool emit) {
  // Loops and branches that commit or hand off carry the counts.
  auto commits = [&](Operation *op) {
    return op
        ->walk([&](Operation *inner) {
          return isa<MmaCommitOp>(inner) ||
                         (correction &&
                          isa<TmemScaleRowsOp, TmemScaleStoreOp>(inner))
                     ? WalkResult::interrupt()
                     : WalkResult::advance();
        })
        .wasInterrupted();
  };
  auto waitPending = [&](Operation *op, const llvm::BitVector &kinds) {
    if (emit) {
      OpBuilder b(op);
      for (unsigned kind : kinds.set_bits())
        waitFor(b, op->getLoc(), kind, counts[kind]);
    }
    pending.reset(kinds);
  };
  auto touchesTensorMemory = [](Operation *op) {
    return isa<TmemLoadOp, TmemStoreOp, TmemScaleRowsOp, TmemScaleStoreOp>(op);
  };
  for (Operation &op : llvm::make_early_inc_range(block)) {
    Location loc = op.getLoc();
    if (auto issue = dyn_cast<TmemMmaOp>(op)) {
      if (mmaWarp && emit) {
        // The issuer of each group waits for the group's readiness.
        unsigned kind = kindOfAcc.lookup(issue.getAcc());
        OpBuilder b(&op);
        Value phase = arith::TruncIOp::create(
            b, loc, b.getI1Type(),
            arith::IndexCastUIOp::create(b, loc, b.getI64Type(), counts[kind]));
        MBarrierWaitOp::create(b, loc, handshakes[kind].ready, groupId(b, loc),
                               phase);
      }
      continue;
    }
    if (auto commit = dyn_cast<MmaCommitOp>(op)) {
      auto kind = kindOfDone.find(commit.getBarriers());
      if (kind == kindOfDone.end())
        continue; // a release of shared memory (by the issuing threads)
      pending.set(kind->second);
      if (emit) {
        OpBuilder b(op.getContext());
        b.setInsertionPointAfter(&op);
        counts[kind->second] =
            arith::AddIOp::create(b, loc, counts[kind->second],
                                  arith::ConstantIndexOp::create(b, loc, 1));
      }
      continue;
    }
    if (auto it = enables.find(&op); it != enables.end()) {
      if (pending.test(it->second)) {
        llvm::BitVector kind(handshakes.size());
        kind.set(it->second);
        waitPending(&op, kind);
      }
      continue;
    }
    if (touchesTensorMemory(&op) ||
        isa<MBarrierArriveOp, gpu::BarrierOp, GroupBarrierOp>(op) ||
        (isa<func::ReturnOp>(op) && op.getParentOp() == func)) {
      if (pending.any())
        waitPending(&op, llvm::BitVector(pending));
      if (isa<TmemScaleRowsOp, TmemScaleStoreOp>(op) && correction && emit) {
        // The hand-off comes after those waits: the factors are written
        // over the last ones only once the product that the last
        // correction let go is done (the final store's, after the last
        // P.V); in the loop, nothing is pending here.
        handOff(&op, op.getOpOperand(1), counts.back());
        OpBuilder b(op.getContext());
        b.setInsertionPointAfter(&op);
        counts.back() = arith::AddIOp::create(
            b, loc, counts.back(), arith::ConstantIndexOp::create(b, loc, 1));
      }
      continue;
    }
    if (op.getNumRegions() == 0)
      continue;
    bool counted = commits(&op);
    if (auto loop = dyn_cast<scf::ForOp>(op)) {
      // The body starts with what is pending before the loop or after a
      // trip through it.
      llvm::BitVector entry = pending;
      while (true) {
        llvm::BitVector end = entry;
        SmallVector<Value> none;
        if (failed(insertWaits(*loop.getBody(), none, end, /*emit=*/false)))
          return failure();
        end |= pending;
        if (end == entry)
          break;
        entry = end;
      }
      pending = entry;
      if (!emit)
        continue;
      llvm::BitVector bodyPending = entry;
      if (!counted) {
        if (failed(insertWaits(*loop.getBody(), counts, bodyPending, true)))
          return failure();
        continue;
      }
      // The loop carries the counts (upstream's replaceWithAdditionalYields):
      // its body is rewritten with the new iteration arguments and yields
      // the counts at its end.
      IRRewriter rewriter(loop.getContext());
      LogicalResult inner = success();
      FailureOr<LoopLikeOpInterface> carried = loop.replaceWithAdditionalYields(
          rewriter, counts, /*replaceInitOperandUsesInLoop=*/false,
          [&](OpBuilder &, Location, ArrayRef<BlockArgument> args) {
            // (The body is still the old loop's here; it moves after.)
            SmallVector<Value> bodyCounts(args.begin(), args.end());
            inner = insertWaits(*loop.getBody(), bodyCounts, bodyPending,
                                /*emit=*/true);
            return bodyCounts;
          });
      if (failed(carried) || failed(inner))
        return failure();
      auto results = *carried->getLoopResults();
      llvm::copy(results.take_back(counts.size()), counts.begin());
      continue;
    }
    auto branch = dyn_cast<scf::IfOp>(op);
    if (!branch) {
      if (!counted && !op.walk([&](Operation *inner) {
                           return touchesTensorMemory(inner)
                                      ? WalkResult::interrupt()
                                      : WalkResult::advance();
                         }).wasInterrupted())
        continue;
      return op.emitError()
             << "convert-tile-to-tilegpu: tensor memory inside " << op.getName()
             << "; only loops and branches may hold it";
    }
    SmallVector<Value> thenCounts(counts.begin(), counts.end()),
        elseCounts(counts.begin(), counts.end());
    llvm::BitVector thenPending = pending, elsePending = pending;
    if (failed(insertWaits(*branch.thenBlock(), thenCounts, thenPending, emit)))
      return failure();
    if (branch.elseBlock() &&
        failed(insertWaits(*branch.elseBlock(), elseCounts, elsePending, emit)))
      return failure();
    pending = thenPending;
    pending |= elsePending;
    if (!emit || !counted)
      continue;
    OpBuilder b(&op);
    SmallVector<Type> types(branch.getResultTypes());
    types.append(counts.size(), b.getIndexType());
    auto withCounts = scf::IfOp::create(b, loc, types, branch.getCondition(),
                                        /*addThenBlock=*/false,
                                        /*addElseBlock=*/false);
    withCounts.getThenRegion().takeBody(branch.getThenRegion());
    if (branch.getElseRegion().empty()) {
      OpBuilder eb(b.getContext());
      eb.createBlock(&withCounts.getElseRegion());
      scf::YieldOp::create(eb, loc);
    } else {
      withCounts.getElseRegion().takeBody(branch.getElseRegion());
    }
    Operation *thenYield = withCounts.thenYield();
    thenYield->insertOperands(thenYield->getNumOperands(), thenCounts);
    Operation *elseYield = withCounts.elseYield();
    elseYield->insertOperands(elseYield->getNumOperands(), elseCounts);
    unsigned old = branch.getNumResults();
    branch.replaceAllUsesWith(withCounts.getResults().take_front(old));
    branch.erase();
    llvm::copy(withCounts.getResults().drop_front(old), counts.begin());
  }
  return success();
}

LogicalResult TensorMemoryMaterializer::run() {
  collect();
  if (classes.empty())
    return success();
  for (auto it = classes.begin(); it != classes.end(); ++it)
    groups = std::max<int64_t>(
        groups,
        cast<RankedTensorType>((*it)->getData().getType()).getDimSize(0) / 128);
  if (pOverS && failed(findPOverS()))
    return failure();
  allocate();
  if (failed(checkInPlace()))
    return failure();
  fuseCorrections();
  if (correction)
    fuseScaledStores();
  if (correction) {
    bool scales = false;
    func.walk([&](Operation *op) {
      scales |= isa<TmemScaleRowsOp, TmemScaleStoreOp>(op);
    });
    if (!scales) {
      // Nothing to hand off: the factors' buffer and mbarriers go.
      for (Value buffer : {factorsFull, factors})
        for (Operation *user : llvm::make_early_inc_range(buffer.getUsers()))
          user->erase();
      factorsFull.getDefiningOp()->erase();
      factors.getDefiningOp()->erase();
      correction = false;
    }
  }
  SmallVector<Operation *> ops;
  func.walk([&](Operation *op) {
    if (isa<arith::ConstantOp, tile::MmaOp, tile::ConvertLayoutOp>(op))
      ops.push_back(op);
  });
  for (Operation *op : ops)
    if (failed(rewrite(op)))
      return failure();
  retype();
  OpBuilder b = OpBuilder::atBlockBegin(&func.front());
  // The products' counts, then the hand-offs'.
  SmallVector<Value> counts(
      handshakes.size() + (correction ? 1 : 0),
      arith::ConstantIndexOp::create(b, func.getLoc(), 0));
  llvm::BitVector pending(handshakes.size());
  return insertWaits(func.front(), counts, pending, /*emit=*/true);
}

} // namespace

LogicalResult tiled_attn::materializeTensorMemory(func::FuncOp func,
                                                  bool mmaWarp, bool pOverS,
                                                  bool correction) {
  return TensorMemoryMaterializer(func, mmaWarp, pOverS, correction).run();
}
