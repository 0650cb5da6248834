//===- TileToTileGPU.cpp - The convert-tile-to-tilegpu pass ---------------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Makes shared memory explicit. After tilegpu-assign-layouts a tile that
// lives in shared memory is a tensor with a #tilegpu.shared encoding; here it
// becomes a !tilegpu.buffer, its load a tilegpu.async_copy into that buffer,
// and its readers wait for the copy.
//
// How many buffers a stream needs is read from the loops that stream it. A
// loop carrying c blocks of a stream (tile-prefetch's pipeline) has c blocks
// to read and one refill in flight: c + 1 buffers, or c when the refill is
// issued after the last read of the oldest block and may take its buffer.
// Block j of the stream goes to slot j mod slots, which keeps the blocks in
// flight apart.
//
// The wgmma family's tiles live in 128-byte swizzled panels, which TMA
// writes: such a load becomes a tilegpu.tma_load through a tensor map (a
// new kernel argument, tagged with the kernel parameter it is) that signals
// an mbarrier of its stream, one per slot. A stream counts its loads in
// issue order (an index that loops carry): load n goes to slot n mod slots
// and completes phase (n / slots) mod 2 of that slot's mbarrier, and every
// buffer a loop carries travels with the count of the load that fills it,
// so that its readers wait on the right mbarrier and phase.
//
//===----------------------------------------------------------------------===//

#include "tiled_attn/Conversion/TileToTileGPU/TileToTileGPU.h"
#include "tiled_attn/Conversion/Passes.h"
#include "tiled_attn/Dialect/Tile/IR/TileOps.h"
#include "tiled_attn/Dialect/TileGPU/IR/TileGPUOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/MapVector.h"

namespace tiled_attn {
#define GEN_PASS_DEF_CONVERTTILETOTILEGPUPASS
#include "tiled_attn/Conversion/Passes.h.inc"
} // namespace tiled_attn

using namespace mlir;
using namespace tiled_attn;
using namespace tiled_attn::tilegpu;

namespace {

/// The buffer type of a tile with a shared encoding.
BufferType bufferTypeOf(RankedTensorType tile, int64_t slots = 1) {
  SmallVector<int64_t> shape;
  if (slots > 1)
    shape.push_back(slots);
  llvm::append_range(shape, tile.getShape());
  return BufferType::get(tile.getContext(), shape, tile.getElementType(),
                         tile.getEncoding());
}

/// Uses that read a shared tile (not handing it on to a loop).
SmallVector<OpOperand *> readers(Value value) {
  SmallVector<OpOperand *> uses;
  for (OpOperand &use : value.getUses())
    if (!isa<scf::YieldOp, scf::ForOp>(use.getOwner()))
      uses.push_back(&use);
  return uses;
}

/// A stream: the blocks of one view and tile type, which loops load one
/// after the other into a ring.
struct Stream {
  Value view;
  RankedTensorType type;
  int64_t slots = 1;
  Value buffer;   // the tilegpu.alloc
  Value barriers; // TMA streams: one mbarrier per slot ("full")
  Value empty;    // with empty-barriers: one per slot, released by readers
  bool operator==(const Stream &o) const {
    return view == o.view && type == o.type;
  }
};

/// Whether an mma runs asynchronously (wgmma): its operands stay in use
/// after it is issued, until its tilegpu.mma_wait.
bool isAsyncMma(Operation *mma) {
  return isAsyncMmaResult(mma->getResult(0).getType());
}

/// Whether a load is TMA's: its tile lives in swizzled panels.
bool isTmaLoad(tile::LoadOp load) {
  SharedEncodingAttr encoding = getSharedEncoding(load.getType());
  return encoding && encoding.getSwizzle();
}

/// What a reader of a buffer filled by TMA waits for: the count of the load
/// that fills it in its stream, and that stream's mbarriers.
struct Ticket {
  Value count;
  Value barriers;
  int64_t slots = 1;
  Value empty; // the stream's "empty" mbarriers, if its readers release
};

/// Waits for load `count` of a TMA stream of `slots` slots: on its slot's
/// mbarrier in `barriers`, for the parity of its round (count / slots), or
/// with `previous` of the round before (an empty mbarrier's phase that
/// frees the slot; before the first round it has passed already). Returns
/// the slot (count mod slots, unless the caller has it already).
Value waitForLoad(OpBuilder &b, Location loc, Value barriers, Value count,
                  int64_t slots, bool previous = false, Value slot = {}) {
  Value n = arith::ConstantIndexOp::create(b, loc, slots);
  if (!slot)
    slot = arith::RemUIOp::create(b, loc, count, n);
  Value round = arith::DivUIOp::create(b, loc, count, n);
  Value phase = arith::TruncIOp::create(
      b, loc, b.getI1Type(),
      arith::IndexCastUIOp::create(b, loc, b.getI64Type(), round));
  if (previous)
    phase = arith::XOrIOp::create(
        b, loc, phase, arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1));
  MBarrierWaitOp::create(b, loc, barriers, slot, phase);
  return slot;
}

class SharedMemoryMaterializer {
public:
  SharedMemoryMaterializer(func::FuncOp func, bool stagedStores,
                           bool emptyBarriers, int64_t ringSlots, bool mmaWarp,
                           bool pOverS, bool correction, bool tmaReduce,
                           bool mergeBarriers, bool shareTransposes)
      : func(func), stagedStores(stagedStores), emptyBarriers(emptyBarriers),
        ringSlots(ringSlots), mmaWarp(mmaWarp), pOverS(pOverS),
        correction(correction), tmaReduce(tmaReduce),
        mergeBarriers(mergeBarriers), shareTransposes(shareTransposes) {}
  LogicalResult run();

private:
  /// The stream of `load`, if a loop streams its view; with `create`, a
  /// new one when none matches (only while collecting, so that pointers to
  /// streams stay valid).
  Stream *streamOf(tile::LoadOp load, bool create = false);
  void countSlots();
  void allocate();
  void rewriteLoad(tile::LoadOp load);
  void retypeLoops();
  void insertWaits(Value pending);
  LogicalResult rewriteMma(tile::MmaOp mma);
  void insertMmaWait(MmaOp mma);
  void rewriteStore(tile::StoreOp store);
  /// With tmaReduce, an adding store of a wgmma accumulator into a kernel
  /// argument: through a swizzled f32 buffer and tilegpu.tma_reduce.
  bool rewriteAddingStore(tile::StoreOp store);
  void rewriteTranspose(tile::TransposeOp transpose);
  /// A register tile moved into shared memory for an mma's lhs (a
  /// tile.convert_layout to a shared encoding): written as the buffer's
  /// rows between barriers, as a transpose's input is.
  /// Returns the buffer.
  Value rewriteSharedLhs(tile::ConvertLayoutOp move);
  /// The move among `moves` that writes `transpose`'s input into shared
  /// memory earlier in its block, in the bytes the transpose would write
  /// (the same stored rows, the buffer's transposed view is the
  /// transpose's type), with no other write into that buffer between: the
  /// transpose can read that buffer through a tilegpu.transpose_view
  /// instead of writing its own copy (the wide backward's dSᵀ, the lhs of
  /// dK's product and, transposed, of dQ's). Null if none.
  tile::ConvertLayoutOp sharedLhsWriting(tile::TransposeOp transpose,
                                         ArrayRef<tile::ConvertLayoutOp> moves);
  /// `op`'s result (a transpose's or a move's) replaced by a shared buffer
  /// into which `input` is written between barriers: `*shared` where it is
  /// set (a buffer shared with other such writes, which it then names),
  /// else a buffer of its own.
  /// Returns the buffer.
  Value writeThroughShared(Operation *op, Value input, Value *shared);
  /// Each transpose of a staged block (now a buffer, awaited before it) a
  /// tilegpu.transpose_view of that buffer.
  void rewriteTransposedViews();
  void hoistTransposeBarriers();
  LogicalResult rewriteScalarReduction(tile::ReduceOp reduce);
  // TMA.
  LogicalResult materializeTma();
  Value tensorMapFor(Value view, BufferType buffer, int64_t groups,
                     Location loc);
  LogicalResult rewriteTmaLoads(Block &block,
                                llvm::DenseMap<Value, Value> &counts);
  llvm::SetVector<Value> tmaStreamsIn(Operation *op);
  LogicalResult rewriteTmaBranch(scf::IfOp branch,
                                 llvm::DenseMap<Value, Value> &counts);
  void insertTmaWait(Value pending, const Ticket &ticket);
  LogicalResult insertReleases();
  LogicalResult releaseIn(Value value, const Ticket &ticket, Block *block,
                          bool byCommit);
  void drainTma(OpBuilder &b, Location loc);

  func::FuncOp func;
  bool stagedStores;
  bool emptyBarriers;
  int64_t ringSlots;
  bool mmaWarp;
  bool pOverS;
  bool correction;
  bool tmaReduce;
  /// Barriers that another barrier already provides are not emitted (a
  /// reduction's wait published by an earlier barrier, a transpose's first
  /// barrier before its loop).
  bool mergeBarriers;
  /// Transposes of one type share one buffer.
  bool shareTransposes;
  llvm::DenseMap<Type, Value> transposeBuffers;
  /// Whether some store became a tilegpu.tma_reduce (whose completion the
  /// kernel's end waits for).
  llvm::MapVector<std::pair<Value, Type>, Value> reduceBuffers;
  /// Each reduction buffer's last kernel-level op with a store into it.
  llvm::MapVector<Value, Operation *> reduceEnds;
  /// Each transpose's buffer and the barrier before its write.
  SmallVector<std::pair<gpu::BarrierOp, Value>> transposeBarriers;
  /// With share-transposes: the buffer of the moves into shared memory
  /// for an mma's lhs, by type (rewriteSharedLhs).
  llvm::DenseMap<Type, Value> sharedLhsBuffers;
  /// With mmaWarp: the threads that issue tcgen05 products, one per group
  /// of 128 rows.
  int64_t issuers = 1;
  SmallVector<Stream> streams;
  /// Loads of views no loop streams (Q): a buffer each.
  llvm::MapVector<Operation *, Value> ownBuffers;
  /// (In load order, as the buffers: their mbarrier_inits are emitted in
  /// this order, which must not depend on pointers.)
  llvm::MapVector<Operation *, Value> ownBarriers;
  llvm::SmallPtrSet<Value, 4> streamedViews;
  // TMA: each load's stream key (the view and tile type, a stream of its
  // own for a load no loop streams), the tensor maps made so far, the
  // tickets of buffers with a copy in flight and each stream's final count.
  llvm::MapVector<std::pair<Value, Type>, Value> tensorMaps;
  llvm::MapVector<Value, Ticket> tickets;
  bool drained = false;
  llvm::MapVector<Value, Ticket> finalCounts; // by the stream's barriers
};

Stream *SharedMemoryMaterializer::streamOf(tile::LoadOp load, bool create) {
  if (!getSharedEncoding(load.getType()) ||
      !streamedViews.contains(load.getView()))
    return nullptr;
  Stream key{load.getView(), load.getType()};
  for (Stream &s : streams)
    if (s == key)
      return &s;
  if (!create)
    return nullptr;
  streams.push_back(key);
  return &streams.back();
}

/// Sets each stream's slots from the loops that load it.
void SharedMemoryMaterializer::countSlots() {
  func.walk([&](scf::ForOp loop) {
    for (tile::LoadOp refill : loop.getBody()->getOps<tile::LoadOp>()) {
      Stream *stream = streamOf(refill);
      if (!stream)
        continue;
      // The blocks of this stream the loop carries, and whether every read
      // of them comes before the refill.
      int64_t carried = 0;
      bool readBeforeRefill = true;
      for (BlockArgument arg : loop.getRegionIterArgs()) {
        tile::LoadOp start = stagingLoad(arg);
        if (!start || streamOf(start) != stream)
          continue;
        ++carried;
        for (OpOperand *use : readers(arg)) {
          Operation *reader =
              loop.getBody()->findAncestorOpInBlock(*use->getOwner());
          // An asynchronous mma may still read after the refill is issued.
          if (!reader || !reader->isBeforeInBlock(refill) ||
              (isa<tile::MmaOp>(use->getOwner()) &&
               isAsyncMma(use->getOwner())))
            readBeforeRefill = false;
        }
      }
      int64_t slots =
          carried == 0 ? 1 : carried + 1 - (readBeforeRefill ? 1 : 0);
      stream->slots = std::max(stream->slots, slots);
    }
  });
}

/// One tilegpu.alloc per stream and per other load, at the top of the
/// kernel, in the order of the loads.
void SharedMemoryMaterializer::allocate() {
  OpBuilder b = OpBuilder::atBlockBegin(&func.getBody().front());
  func.walk([&](tile::LoadOp load) {
    auto barriersOf = [&](int64_t slots) -> Value {
      if (!isTmaLoad(load))
        return nullptr;
      auto type =
          BufferType::get(b.getContext(), {slots}, b.getI64Type(),
                          SharedEncodingAttr::get(b.getContext(), 0, 0, false));
      return AllocOp::create(b, load.getLoc(), type, IntegerAttr());
    };
    if (Stream *stream = streamOf(load)) {
      if (!stream->buffer) {
        stream->buffer = AllocOp::create(
            b, load.getLoc(), bufferTypeOf(stream->type, stream->slots),
            IntegerAttr());
        stream->barriers = barriersOf(stream->slots);
        if (emptyBarriers)
          stream->empty = barriersOf(stream->slots);
      }
      return;
    }
    auto type = load.getType();
    Attribute encoding = getSharedEncoding(type);
    if (!encoding) // A register tile: staged in an untransposed buffer.
      encoding = mmaSyncSharedEncoding(b.getContext());
    auto bufferType = BufferType::get(b.getContext(), type.getShape(),
                                      type.getElementType(), encoding);
    ownBuffers[load] =
        AllocOp::create(b, load.getLoc(), bufferType, IntegerAttr());
    if (Value barriers = barriersOf(1))
      ownBarriers[load] = barriers;
  });
}

/// The buffer for `load`'s block: its own, or its stream's slot.
void SharedMemoryMaterializer::rewriteLoad(tile::LoadOp load) {
  if (isTmaLoad(load))
    return; // materializeTma's
  OpBuilder b(load);
  Location loc = load.getLoc();
  Value buffer = ownBuffers.lookup(load);
  if (Stream *stream = streamOf(load)) {
    buffer = stream->buffer;
    if (stream->slots > 1) {
      Value block = load.getIndices()[load.getIndices().size() - 2];
      Value slot = arith::RemUIOp::create(
          b, loc, block, arith::ConstantIndexOp::create(b, loc, stream->slots));
      buffer = SlotOp::create(b, loc, buffer, slot);
    }
  }
  // Nobody may still be reading the buffer.
  gpu::BarrierOp::create(b, loc);
  Value copy = AsyncCopyOp::create(b, loc, buffer.getType(), load.getView(),
                                   load.getIndices(), load.getGather(), buffer,
                                   load.getInBounds());
  if (getSharedEncoding(load.getType())) {
    load.getResult().replaceAllUsesWith(copy);
    load.erase();
    return;
  }
  // A register tile: read in its layout (insertWaits puts the wait first).
  Value tile = LocalLoadOp::create(b, loc, load.getType(), copy);
  load.getResult().replaceAllUsesWith(tile);
  load.erase();
}

/// Loops and branches that carry shared tiles now carry their buffers (in
/// program order, so that a branch's result is a buffer before a later loop
/// starts from it).
void SharedMemoryMaterializer::retypeLoops() {
  func.walk([&](Operation *op) {
    if (auto loop = dyn_cast<scf::ForOp>(op)) {
      for (auto [init, arg, result] : llvm::zip_equal(
               loop.getInitArgs(), loop.getRegionIterArgs(), loop.getResults()))
        if (isa<BufferType>(init.getType())) {
          arg.setType(init.getType());
          result.setType(init.getType());
        }
    }
    if (auto branch = dyn_cast<scf::IfOp>(op))
      for (auto [yielded, result] : llvm::zip_equal(
               branch.thenYield().getOperands(), branch.getResults()))
        if (isa<BufferType>(yielded.getType()))
          result.setType(yielded.getType());
  });
}

/// Readers of a buffer whose copy may be in flight wait for it, in the
/// block where the buffer is defined, just before the first op that reads
/// it: the copies issued in between may stay in flight.
void SharedMemoryMaterializer::insertWaits(Value pending) {
  SmallVector<OpOperand *> uses = readers(pending);
  if (uses.empty())
    return;
  OpBuilder b(firstReader(pending, uses));
  Value ready = AsyncWaitOp::create(b, pending.getLoc(), pending.getType(),
                                    pending, IntegerAttr());
  gpu::BarrierOp::create(b, pending.getLoc());
  for (OpOperand *use : uses)
    use->set(ready);
}

LogicalResult SharedMemoryMaterializer::rewriteMma(tile::MmaOp mma) {
  if (!isa<BufferType>(mma.getRhs().getType()))
    return mma.emitError() << "convert-tile-to-tilegpu: expects the rhs of "
                              "tile.mma in shared memory (run "
                              "tilegpu-assign-layouts first)";
  OpBuilder b(mma);
  auto result = MmaOp::create(b, mma.getLoc(), mma.getType(), mma.getLhs(),
                              mma.getRhs(), mma.getAcc());
  mma.replaceAllUsesWith(result.getResult());
  mma.erase();
  if (isAsyncMma(result))
    insertMmaWait(result);
  return success();
}

/// The wait goes before the first op that reads the result (a yield
/// included), and before any op that defines the value a register operand
/// of the mma is replaced with on the loop's back edge: LLVM may give that
/// value the operand's registers, which wgmma still reads.
void SharedMemoryMaterializer::insertMmaWait(MmaOp mma) {
  Block *block = mma->getBlock();
  Value result = mma.getResult();
  SmallVector<OpOperand *> uses;
  for (OpOperand &use : result.getUses())
    uses.push_back(&use);
  Operation *at =
      uses.empty() ? block->getTerminator() : firstReader(result, uses);
  auto loop = dyn_cast<scf::ForOp>(block->getParentOp());
  for (Value operand : {Value(mma.getLhs()), Value(mma.getAcc())}) {
    while (auto convert = operand.getDefiningOp<tile::ConvertLayoutOp>())
      operand = convert.getInput();
    auto arg = dyn_cast<BlockArgument>(operand);
    if (!loop || !arg || arg.getOwner() != block || arg.getArgNumber() == 0)
      continue;
    Value next = loop.getYieldedValues()[arg.getArgNumber() - 1];
    Operation *def = next.getDefiningOp();
    Operation *top = def ? block->findAncestorOpInBlock(*def) : nullptr;
    if (top && mma->isBeforeInBlock(top) && top->isBeforeInBlock(at))
      at = top;
  }
  OpBuilder b(at);
  auto wait = MmaWaitOp::create(b, mma.getLoc(), result.getType(), result,
                                IntegerAttr());
  result.replaceAllUsesExcept(wait.getResult(), wait);
}

/// A store of a tile its layout can stage goes through a staging buffer,
/// which may overlap the loads' buffers: every copy must have landed and
/// every thread be done reading them first.
void SharedMemoryMaterializer::rewriteStore(tile::StoreOp store) {
  if (store.getAdd() && rewriteAddingStore(store))
    return;
  auto type = cast<RankedTensorType>(store.getValue().getType());
  MmaSyncLayoutAttr layout = getQuadFragmentLayout(type.getEncoding());
  if (!stagedStores || store.getMask() || store.getAdd() || !layout ||
      !layout.canStageStore(type.getShape(), type.getElementType()))
    return;
  OpBuilder b(store);
  Location loc = store.getLoc();
  auto bufferType =
      BufferType::get(b.getContext(), type.getShape(), type.getElementType(),
                      mmaSyncSharedEncoding(b.getContext()));
  Value staging = AllocOp::create(b, loc, bufferType, IntegerAttr());
  AsyncWaitAllOp::create(b, loc);
  drainTma(b, loc);
  gpu::BarrierOp::create(b, loc);
  StagedStoreOp::create(b, loc, store.getValue(), store.getView(),
                        store.getIndices(), staging);
  // Whatever comes after may reuse the buffer once every thread has read it.
  if (!store->getNextNode()->hasTrait<OpTrait::IsTerminator>())
    gpu::BarrierOp::create(b, loc);
  store.erase();
}

/// An adding store of an f32 accumulator (wgmma, or tcgen05 moved to
/// registers) into a kernel argument (the
/// backward's dQ part into dq_accum), FlashAttention-3's way: the tile goes
/// into a swizzled buffer of its own and one thread adds it to the block
/// with TMA, instead of an atomic addition per element:
///
///   tilegpu.tma_reduce_wait {read}   the previous reduction has read it
///   gpu.barrier
///   tilegpu.local_store              (ends with the async-proxy fence)
///   gpu.barrier
///   tilegpu.tma_reduce
///
/// With merge-barriers, where a barrier already comes earlier in the
/// store's block with no use of the buffer after it (the backward's, after dSᵀ
/// is written: the transposes are rewritten first), the wait goes before that
/// barrier, which then publishes it, and the first barrier above is not
/// emitted: the buffer is the reductions' alone, so nothing else it orders.
///
/// The reduction runs on while the threads go on; after the loop that
/// holds the store, one wait for the last (so that the epilogue may reuse
/// the buffer's memory). A store into a slice of a view (a varlen sequence)
/// keeps the atomics: TMA's bounds are the whole view's, and the block's rows
/// past the sequence belong to the next one.
bool SharedMemoryMaterializer::rewriteAddingStore(tile::StoreOp store) {
  auto type = cast<RankedTensorType>(store.getValue().getType());
  // A wgmma accumulator, or a tcgen05 one moved to registers.
  auto lanes = dyn_cast_or_null<TmemLanesLayoutAttr>(type.getEncoding());
  bool layout = isa_and_nonnull<WgmmaLayoutAttr>(type.getEncoding()) ||
                (lanes && lanes.getKind() == TmemLanesKind::Acc);
  if (!tmaReduce || !layout || store.getMask() ||
      !type.getElementType().isF32() || store.getIndices().size() != 4 ||
      !isa<BlockArgument>(store.getView()) ||
      cast<BlockArgument>(store.getView()).getOwner() != &func.front())
    return false;
  auto encoding = tmaSharedEncoding(type.getContext(), type.getShape(),
                                    type.getElementType(), false);
  if (!encoding || encoding.getSwizzle() != 128)
    return false;
  Location loc = store.getLoc();
  auto bufferType = BufferType::get(type.getContext(), type.getShape(),
                                    type.getElementType(), encoding);
  // (One buffer for all the adding stores of a view: the loops of the mask
  // split each have one, and each waits for the previous reduction.)
  Value &buffer = reduceBuffers[{store.getView(), bufferType}];
  if (!buffer) {
    OpBuilder top = OpBuilder::atBlockBegin(&func.getBody().front());
    buffer = AllocOp::create(top, loc, bufferType, IntegerAttr());
  }
  Value map = tensorMapFor(store.getView(), bufferType, 1, loc);
  OpBuilder b(store);
  // The nearest barrier before the store in its block, if the buffer has
  // no use between them (its previous reduction is issued before it).
  gpu::BarrierOp earlier;
  for (Operation *op = mergeBarriers ? store->getPrevNode() : nullptr; op;
       op = op->getPrevNode()) {
    if (auto barrier = dyn_cast<gpu::BarrierOp>(op)) {
      earlier = barrier;
      break;
    }
    bool uses = false;
    op->walk([&](Operation *inner) {
      uses |= llvm::is_contained(inner->getOperands(), buffer);
    });
    if (uses)
      break;
  }
  if (earlier) {
    OpBuilder before(earlier);
    TmaReduceWaitOp::create(before, loc, buffer, /*read=*/true);
  } else {
    TmaReduceWaitOp::create(b, loc, buffer, /*read=*/true);
    gpu::BarrierOp::create(b, loc);
  }
  LocalStoreOp::create(b, loc, store.getValue(), buffer);
  gpu::BarrierOp::create(b, loc);
  auto reduce = TmaReduceOp::create(b, loc, buffer, map, store.getIndices());
  // After the kernel-level op that holds the store (its loop, or the
  // reduction itself in the kernel's body), the last reduction must have
  // completed before the buffer's memory is reused (the epilogue's staging
  // buffers may overlap it) or the kernel ends.
  Operation *top = func.front().findAncestorOpInBlock(*store);
  if (top == store.getOperation())
    top = reduce;
  Operation *&last = reduceEnds[buffer];
  if (!last || last->isBeforeInBlock(top))
    last = top;
  store.erase();
  return true;
}

/// A reduction to a scalar combines across the warps through a scratch
/// buffer of one f32 per warp where they hold different elements. The
/// buffer is allocated before the reduction's op in the kernel's body (a
/// loop around it reuses it: the reduction's barriers order the uses).
LogicalResult
SharedMemoryMaterializer::rewriteScalarReduction(tile::ReduceOp reduce) {
  auto input = cast<RankedTensorType>(reduce.getInput().getType());
  auto layout =
      dyn_cast_or_null<DistributedLayoutAttrInterface>(input.getEncoding());
  if (!layout)
    return reduce.emitError() << "convert-tile-to-tilegpu: a reduction to a "
                                 "scalar takes a register tile, not "
                              << input;
  if (!reduce.getType().isF32())
    return reduce.emitError() << "convert-tile-to-tilegpu: a reduction to a "
                                 "scalar reduces f32 tiles on the GPU, not "
                              << input;
  FailureOr<ReductionSpread> spread =
      getReductionSpread(layout, input.getShape(), [&] {
        return reduce.emitError()
               << "convert-tile-to-tilegpu: cannot reduce " << input << ": ";
      });
  if (failed(spread))
    return failure();
  OpBuilder b(reduce);
  Location loc = reduce.getLoc();
  Value scratch;
  if (spread->warps.size() > 1) {
    OpBuilder top(func.getContext());
    top.setInsertionPoint(func.front().findAncestorOpInBlock(*reduce));
    auto type = BufferType::get(
        b.getContext(), {1, layout.getWarpCount()}, b.getF32Type(),
        SharedEncodingAttr::get(b.getContext(), /*swizzle=*/0, /*pad=*/0,
                                /*transposed=*/false));
    scratch = AllocOp::create(top, loc, type, IntegerAttr());
  }
  Value result = CtaReduceOp::create(b, loc, b.getF32Type(), reduce.getInput(),
                                     reduce.getKind(), scratch);
  reduce.replaceAllUsesWith(result);
  reduce.erase();
  return success();
}

//===----------------------------------------------------------------------===//
// TMA
//===----------------------------------------------------------------------===//

/// The tensor map (a kernel argument, made on first use) that copies the
/// panels of `buffer` out of `view`, or of one of its `groups` groups of
/// rows (a gathered load's).
Value SharedMemoryMaterializer::tensorMapFor(Value view, BufferType buffer,
                                             int64_t groups, Location loc) {
  auto encoding = cast<SharedEncodingAttr>(buffer.getEncoding());
  Type elt = buffer.getElementType();
  int64_t rows = encoding.getStoredShape(buffer.getTileShape())[0] / groups;
  auto type = TensorMapType::get(buffer.getContext(),
                                 {rows, encoding.getPanelColumns(elt)}, elt,
                                 encoding.getSwizzle());
  Value &map = tensorMaps[{view, type}];
  if (map)
    return map;
  // Named after the view it describes, as the kernel ABI names parameters.
  auto arg = cast<BlockArgument>(view);
  std::string name = tile::getArgumentName(func, arg.getArgNumber());
  MLIRContext *ctx = buffer.getContext();
  auto attrs = DictionaryAttr::get(
      ctx, {NamedAttribute(TileGPUDialect::getParamAttrName(),
                           KernelParamAttr::get(ctx, ParamKind::TensorMap, name,
                                                -1, type))});
  unsigned index = func.getNumArguments();
  (void)func.insertArgument(index, type, attrs, loc);
  map = func.getArgument(index);
  return map;
}

/// Rewrites the TMA loads of `block` in program order, `counts` holding each
/// stream's count of loads issued so far (keyed by the stream's mbarriers);
/// a loop that loads gets the counts of the streams it loads, and the
/// tickets of the buffers it carries, as iteration arguments.
LogicalResult SharedMemoryMaterializer::rewriteTmaLoads(
    Block &block, llvm::DenseMap<Value, Value> &counts) {
  for (Operation &op : llvm::make_early_inc_range(block)) {
    if (auto load = dyn_cast<tile::LoadOp>(op)) {
      if (!isTmaLoad(load))
        continue;
      OpBuilder b(load);
      Location loc = load.getLoc();
      Value buffer = ownBuffers.lookup(load), barriers, empty;
      int64_t slots = 1;
      if (Stream *stream = streamOf(load)) {
        buffer = stream->buffer;
        barriers = stream->barriers;
        empty = stream->empty;
        slots = stream->slots;
      } else {
        barriers = ownBarriers.lookup(load);
      }
      Value count = counts.lookup(barriers);
      if (!count)
        count = arith::ConstantIndexOp::create(b, loc, 0);
      Value slot = arith::RemUIOp::create(
          b, loc, count, arith::ConstantIndexOp::create(b, loc, slots));
      if (slots > 1)
        buffer = SlotOp::create(b, loc, buffer, slot);
      auto type = cast<BufferType>(buffer.getType());
      // A slice of the sequence dimension reads through its view's map,
      // its rows offset.
      Value view = load.getView(), rowOffset;
      if (auto slice = view.getDefiningOp<tile::SliceOp>()) {
        view = slice.getView();
        rowOffset = slice.getOffset();
      }
      Value map = tensorMapFor(
          view, type, std::max<int64_t>(load.getGather().size(), 1), loc);
      // Nobody may still be reading the slot: with empty barriers, the
      // readers of the load `slots` before this one have released it (the
      // wait for the phase before the first passes at once); a buffer of
      // its own is loaded once.
      if (empty) {
        waitForLoad(b, loc, empty, count, slots, /*previous=*/true, slot);
      } else if (!emptyBarriers) {
        // Without empty barriers a refill inside a loop follows the wait of
        // every reader of the load it replaces. Outside loops, any of the
        // `slots` loads before it (the latest of each slot) may be a
        // prefetch no loop read (the last refill of a loop whose successor
        // starts from another block, as the mask split's loops do): each
        // must complete before its slot's mbarrier is armed again and its
        // buffer rewritten, by this load or by the next loop's first
        // refill, which waits for nothing. Load count - k is waited for as
        // the round before that of count - k + slots (before the first
        // round, a fresh mbarrier's, which has passed).
        if (!load->getParentOfType<scf::ForOp>() &&
            !matchPattern(count, m_Zero()))
          for (int64_t back = 1; back <= slots; ++back) {
            Value later =
                back == slots
                    ? count
                    : arith::AddIOp::create(
                          b, loc, count,
                          arith::ConstantIndexOp::create(b, loc, slots - back));
            waitForLoad(b, loc, barriers, later, slots, /*previous=*/true,
                        back == slots ? slot : Value());
          }
        gpu::BarrierOp::create(b, loc);
      }
      Value copy = TmaLoadOp::create(b, loc, type, map, load.getIndices(),
                                     load.getGather(), rowOffset, buffer,
                                     barriers, slot);
      tickets[copy] = Ticket{count, barriers, slots, empty};
      counts[barriers] = arith::AddIOp::create(
          b, loc, count, arith::ConstantIndexOp::create(b, loc, 1));
      finalCounts[barriers] = Ticket{counts[barriers], barriers, slots};
      load.getResult().replaceAllUsesWith(copy);
      load.erase();
      continue;
    }
    if (auto branch = dyn_cast<scf::IfOp>(op)) {
      if (failed(rewriteTmaBranch(branch, counts)))
        return failure();
      continue;
    }
    auto loop = dyn_cast<scf::ForOp>(op);
    if (!loop)
      continue;
    llvm::SetVector<Value> streamsHere = tmaStreamsIn(loop);
    if (streamsHere.empty())
      continue;
    // Buffers the loop carries whose copy is in flight.
    SmallVector<unsigned> carried;
    for (auto [i, init] : llvm::enumerate(loop.getInitArgs()))
      if (tickets.count(init))
        carried.push_back(i);
    SmallVector<Value> inits;
    OpBuilder b(loop);
    for (Value barriers : streamsHere) {
      Value count = counts.lookup(barriers);
      if (!count)
        count = arith::ConstantIndexOp::create(b, loop.getLoc(), 0);
      inits.push_back(count);
    }
    SmallVector<Ticket> carriedTickets;
    for (unsigned i : carried) {
      carriedTickets.push_back(tickets.lookup(loop.getInitArgs()[i]));
      inits.push_back(carriedTickets.back().count);
    }
    unsigned numStreams = streamsHere.size();
    unsigned numOld = loop.getNumRegionIterArgs();
    // The body gets the new iteration arguments first, is rewritten with
    // them, and then moves into a loop that carries them.
    Block *body = loop.getBody();
    SmallVector<Value> newArgs;
    for (Value init : inits)
      newArgs.push_back(body->addArgument(init.getType(), loop.getLoc()));
    llvm::DenseMap<Value, Value> inner = counts;
    for (auto [i, barriers] : llvm::enumerate(streamsHere))
      inner[barriers] = newArgs[i];
    // Block argument 0 is the induction variable.
    for (auto [k, i] : llvm::enumerate(carried)) {
      Ticket t = carriedTickets[k];
      t.count = newArgs[numStreams + k];
      tickets[body->getArgument(1 + i)] = t;
    }
    if (failed(rewriteTmaLoads(*body, inner)))
      return failure();
    SmallVector<Value> yields;
    for (Value barriers : streamsHere)
      yields.push_back(inner[barriers]);
    Operation *yield = body->getTerminator();
    for (auto [k, i] : llvm::enumerate(carried)) {
      Value count = tickets.lookup(yield->getOperand(i)).count;
      // A buffer that comes back unchanged keeps the count it came with.
      yields.push_back(count ? count : newArgs[numStreams + k]);
    }
    yield->insertOperands(yield->getNumOperands(), yields);
    SmallVector<Value> allInits(loop.getInitArgs());
    llvm::append_range(allInits, inits);
    auto newLoop =
        scf::ForOp::create(b, loop.getLoc(), loop.getLowerBound(),
                           loop.getUpperBound(), loop.getStep(), allInits);
    newLoop.getRegion().takeBody(loop.getRegion());
    loop.replaceAllUsesWith(newLoop.getResults().take_front(numOld));
    loop.erase();
    for (auto [i, barriers] : llvm::enumerate(streamsHere))
      counts[barriers] = newLoop.getResult(numOld + i);
    for (auto [k, i] : llvm::enumerate(carried)) {
      Ticket t = carriedTickets[k];
      t.count = newLoop.getResult(numOld + numStreams + k);
      tickets[newLoop.getResult(i)] = t;
    }
    for (Value barriers : streamsHere) {
      Ticket &t = finalCounts[barriers];
      t.count = counts[barriers];
    }
  }
  return success();
}

/// The TMA streams `op` loads (by their mbarriers), in a fixed order.
llvm::SetVector<Value> SharedMemoryMaterializer::tmaStreamsIn(Operation *op) {
  llvm::SetVector<Value> streamsHere;
  op->walk([&](tile::LoadOp load) {
    if (!isTmaLoad(load))
      return;
    Stream *stream = streamOf(load);
    streamsHere.insert(stream ? stream->barriers : ownBarriers.lookup(load));
  });
  return streamsHere;
}

/// A branch: each side starts from the counts before it, and the branch
/// returns the count of each stream it loads and of each buffer in flight
/// it returns (a buffer a side hands on from before the branch keeps its
/// count).
LogicalResult SharedMemoryMaterializer::rewriteTmaBranch(
    scf::IfOp branch, llvm::DenseMap<Value, Value> &counts) {
  llvm::SetVector<Value> streamsHere = tmaStreamsIn(branch);
  OpBuilder b(branch);
  Location loc = branch.getLoc();
  llvm::DenseMap<Value, Value> before = counts;
  for (Value barriers : streamsHere)
    if (!before.lookup(barriers))
      before[barriers] = arith::ConstantIndexOp::create(b, loc, 0);
  llvm::DenseMap<Value, Value> thenCounts = before, elseCounts = before;
  if (failed(rewriteTmaLoads(*branch.thenBlock(), thenCounts)))
    return failure();
  if (branch.elseBlock() &&
      failed(rewriteTmaLoads(*branch.elseBlock(), elseCounts)))
    return failure();
  // Results that are buffers in flight: both sides give one of the same
  // stream.
  SmallVector<unsigned> inFlight;
  for (unsigned i = 0; i < branch.getNumResults(); ++i) {
    Value fromThen = branch.thenYield().getOperand(i);
    Value fromElse = branch.elseYield().getOperand(i);
    bool thenFlies = tickets.count(fromThen),
         elseFlies = tickets.count(fromElse);
    if (!thenFlies && !elseFlies)
      continue;
    if (!thenFlies || !elseFlies ||
        tickets.lookup(fromThen).barriers != tickets.lookup(fromElse).barriers)
      return branch.emitError()
             << "convert-tile-to-tilegpu: result " << i
             << " of this branch is a TMA buffer in flight on one side and "
                "not the same stream's on the other";
    inFlight.push_back(i);
  }
  if (streamsHere.empty() && inFlight.empty())
    return success();

  unsigned numOld = branch.getNumResults();
  SmallVector<Type> types(branch.getResultTypes());
  types.append(streamsHere.size() + inFlight.size(), b.getIndexType());
  auto newBranch = scf::IfOp::create(b, loc, types, branch.getCondition(),
                                     /*addThenBlock=*/false,
                                     /*addElseBlock=*/false);
  newBranch.getThenRegion().takeBody(branch.getThenRegion());
  if (branch.getElseRegion().empty()) {
    OpBuilder eb(b.getContext());
    eb.createBlock(&newBranch.getElseRegion());
    scf::YieldOp::create(eb, loc);
  } else {
    newBranch.getElseRegion().takeBody(branch.getElseRegion());
  }
  for (auto [side, sideCounts] :
       {std::make_pair(newBranch.thenBlock(), &thenCounts),
        std::make_pair(newBranch.elseBlock(), &elseCounts)}) {
    Operation *yield = side->getTerminator();
    SmallVector<Value> extra;
    for (Value barriers : streamsHere)
      extra.push_back(sideCounts->lookup(barriers));
    for (unsigned i : inFlight)
      extra.push_back(tickets.lookup(yield->getOperand(i)).count);
    yield->insertOperands(yield->getNumOperands(), extra);
  }
  branch.replaceAllUsesWith(newBranch.getResults().take_front(numOld));
  branch.erase();
  for (auto [k, barriers] : llvm::enumerate(streamsHere)) {
    counts[barriers] = newBranch.getResult(numOld + k);
    finalCounts[barriers].count = counts[barriers];
  }
  for (auto [k, i] : llvm::enumerate(inFlight)) {
    Ticket t = tickets.lookup(newBranch.thenYield().getOperand(i));
    t.count = newBranch.getResult(numOld + streamsHere.size() + k);
    tickets[newBranch.getResult(i)] = t;
  }
  return success();
}

LogicalResult SharedMemoryMaterializer::materializeTma() {
  bool any = false;
  WalkResult walk = func.walk([&](tile::LoadOp load) {
    if (!isTmaLoad(load))
      return WalkResult::advance();
    any = true;
    Operation *parent = load->getParentOp();
    if (parent != func && !isa<scf::ForOp, scf::IfOp>(parent)) {
      load.emitError() << "convert-tile-to-tilegpu: a TMA load sits in the "
                          "kernel, a loop or a branch, not in "
                       << parent->getName();
      return WalkResult::interrupt();
    }
    // A kernel argument, or a slice of its sequence dimension (its rows
    // offset in the argument's tensor map).
    Value view = load.getView();
    if (auto slice = view.getDefiningOp<tile::SliceOp>();
        slice && slice.getDim() == 2)
      view = slice.getView();
    if (!isa<BlockArgument>(view) ||
        cast<BlockArgument>(view).getOwner() != &func.front()) {
      load.emitError() << "convert-tile-to-tilegpu: TMA loads from a kernel "
                          "argument or a slice of its dimension 2 (its "
                          "tensor map is another)";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  if (!any)
    return success();
  // Every mbarrier starts expecting one arrival (the thread that issues the
  // copies); the CTA waits until they are initialized.
  OpBuilder b = OpBuilder::atBlockBegin(&func.front());
  Operation *lastAlloc = nullptr;
  for (Operation &op : func.front())
    if (isa<AllocOp>(op))
      lastAlloc = &op;
  if (lastAlloc)
    b.setInsertionPointAfter(lastAlloc);
  Location loc = func.getLoc();
  // An "empty" mbarrier expects one arrival per warp that reads its slot.
  SmallVector<std::pair<Value, int64_t>> allBarriers;
  int64_t warps = 1;
  if (auto attr =
          func->getAttrOfType<IntegerAttr>(TileGPUDialect::getWarpsAttrName()))
    warps = attr.getInt();
  for (Stream &stream : streams)
    if (stream.barriers)
      allBarriers.push_back({stream.barriers, 1});
  for (auto &[load, barriers] : ownBarriers)
    allBarriers.push_back({barriers, 1});
  for (Stream &stream : streams)
    if (stream.empty)
      allBarriers.push_back({stream.empty, warps});
  for (auto [barriers, arrivals] : allBarriers) {
    auto type = cast<BufferType>(barriers.getType());
    for (int64_t i = 0; i < type.getShape()[0]; ++i)
      MBarrierInitOp::create(b, loc, barriers,
                             arith::ConstantIndexOp::create(b, loc, i),
                             b.getI64IntegerAttr(arrivals));
  }
  gpu::BarrierOp::create(b, loc);
  llvm::DenseMap<Value, Value> counts;
  return rewriteTmaLoads(func.front(), counts);
}

/// Readers of a buffer filled by TMA wait on the mbarrier of its slot, for
/// the phase of its load, just before the first op (in the buffer's block)
/// that reads it.
void SharedMemoryMaterializer::insertTmaWait(Value pending,
                                             const Ticket &ticket) {
  SmallVector<OpOperand *> uses = readers(pending);
  if (uses.empty())
    return;
  OpBuilder b(firstReader(pending, uses));
  waitForLoad(b, pending.getLoc(), ticket.barriers, ticket.count, ticket.slots);
}

/// With empty barriers, the readers of each buffer of a ring release its
/// slot: every warp arrives on the slot's "empty" mbarrier once the buffer's
/// last reader is done (see releaseIn). With an MMA warp, a ring that only
/// tcgen05 products read is released by the threads that issue them: a
/// tcgen05.commit to the slot's empty mbarrier after the last product that
/// reads it arrives once they have completed (FlashAttention-4's), and the
/// mbarrier expects one arrival per issuer (a Q tile's: a group of 128
/// rows).
LogicalResult SharedMemoryMaterializer::insertReleases() {
  llvm::SmallPtrSet<Value, 4> byCommit;
  if (mmaWarp) {
    func.walk([&](tile::MmaOp mma) {
      issuers = std::max<int64_t>(
          issuers, cast<RankedTensorType>(mma.getType()).getDimSize(0) / 128);
    });
    for (auto &[value, ticket] : tickets)
      if (ticket.empty)
        byCommit.insert(ticket.empty);
    for (auto &[value, ticket] : tickets)
      if (ticket.empty && !llvm::all_of(readers(value), [](OpOperand *use) {
            return isa<tile::MmaOp>(use->getOwner());
          }))
        byCommit.erase(ticket.empty);
  }
  for (auto &[value, ticket] : tickets) {
    if (!ticket.empty)
      continue;
    Block *block = isa<BlockArgument>(value)
                       ? cast<BlockArgument>(value).getOwner()
                       : value.getDefiningOp()->getBlock();
    if (failed(
            releaseIn(value, ticket, block, byCommit.contains(ticket.empty))))
      return failure();
  }
  func.walk([&](MBarrierInitOp init) {
    if (byCommit.contains(init.getBarriers()))
      init.setCount(issuers);
  });
  return success();
}

/// Releases `value`'s slot on the paths through `block`:
/// - handed on (yielded, or a loop's initial value): released where the
///   value it becomes is read;
/// - read: after the last op that reads it, or after that op's wait when it
///   is an asynchronous mma;
/// - used only inside one branch: on each side of it;
/// - not used at all (a prefetch nobody reads): its copy lands and the slot
///   is released at once, so that the ring's next refill of it may go.
LogicalResult SharedMemoryMaterializer::releaseIn(Value value,
                                                  const Ticket &ticket,
                                                  Block *block, bool byCommit) {
  llvm::SetVector<Operation *> users;
  bool handedOn = false, read = false;
  for (OpOperand &use : value.getUses()) {
    Operation *user = block->findAncestorOpInBlock(*use.getOwner());
    if (!user)
      continue;
    users.insert(user);
    bool passes = use.getOwner() == user &&
                  (isa<scf::YieldOp>(user) ||
                   (isa<scf::ForOp>(user) &&
                    use.getOperandNumber() >= 3)); // an initial value
    (passes ? handedOn : read) = true;
  }
  Location loc = value.getLoc();
  if (handedOn && read)
    return emitError(loc) << "convert-tile-to-tilegpu: a TMA buffer that is "
                             "both read and handed on on one path cannot be "
                             "released (empty-barriers)";
  if (handedOn)
    return success();
  OpBuilder b(func.getContext());
  bool predicated = true;
  if (users.size() == 1 && isa<scf::IfOp>(users.front())) {
    auto branch = cast<scf::IfOp>(users.front());
    if (!branch.elseBlock())
      return branch.emitError() << "convert-tile-to-tilegpu: a TMA buffer "
                                   "read only when a branch without an else "
                                   "is taken cannot be released "
                                   "(empty-barriers)";
    if (failed(releaseIn(value, ticket, branch.thenBlock(), byCommit)))
      return failure();
    return releaseIn(value, ticket, branch.elseBlock(), byCommit);
  }
  if (users.empty()) {
    Operation *def = value.getDefiningOp();
    if (def && def->getBlock() == block)
      b.setInsertionPointAfter(def);
    else
      b.setInsertionPointToStart(block);
  } else {
    Operation *last = users.front();
    for (Operation *user : users)
      if (last->isBeforeInBlock(user))
        last = user;
    if (auto mma = dyn_cast<MmaOp>(last); mma && isAsyncMma(mma)) {
      auto waits = llvm::make_filter_range(
          mma->getUsers(), [](Operation *u) { return isa<MmaWaitOp>(u); });
      if (waits.empty())
        return mma.emitError() << "convert-tile-to-tilegpu: an asynchronous "
                                  "mma without its wait";
      last = *waits.begin();
    }
    // One predicated arrive, but after a read into registers (see
    // tilegpu.mbarrier_arrive).
    predicated = !isa<LocalLoadOp>(last);
    b.setInsertionPointAfter(last);
  }
  Value slot =
      users.empty()
          ? waitForLoad(b, loc, ticket.barriers, ticket.count, ticket.slots)
          : arith::RemUIOp::create(
                b, loc, ticket.count,
                arith::ConstantIndexOp::create(b, loc, ticket.slots));
  if (byCommit)
    MmaCommitOp::create(b, loc, ticket.empty, slot, issuers,
                        /*joint=*/issuers > 1);
  else
    MBarrierArriveOp::create(b, loc, ticket.empty, slot, predicated);
  return success();
}

/// Waits for every TMA copy that may still be in flight (the last `slots`
/// loads of each stream; no slot is reused among them), before a buffer
/// over the streams' slots is written or the kernel ends.
void SharedMemoryMaterializer::drainTma(OpBuilder &b, Location loc) {
  drained = true;
  for (auto &[barriers, last] : finalCounts) {
    for (int64_t back = 1; back <= last.slots; ++back) {
      Value c = arith::ConstantIndexOp::create(b, loc, back);
      Value issued = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge,
                                           last.count, c);
      auto guard = scf::IfOp::create(b, loc, issued, /*withElse=*/false);
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(guard.thenBlock());
      Value count = arith::SubIOp::create(b, loc, last.count, c);
      waitForLoad(b, loc, barriers, count, last.slots);
    }
  }
}

/// A transpose whose result lives in shared memory (tilegpu-assign-layouts
/// gives it a transposed encoding): its input is written as the buffer's
/// stored rows, between barriers (every thread done reading the buffer's
/// previous contents; every write landed before the readers' ldmatrix).
/// With share-transposes, one buffer for every transpose of its type (the
/// mask split's loops run one after the other; the first barrier orders
/// the previous loop's readers as it does the previous iteration's).
void SharedMemoryMaterializer::rewriteTranspose(tile::TransposeOp transpose) {
  auto type = cast<RankedTensorType>(transpose.getType());
  writeThroughShared(transpose, transpose.getInput(),
                     shareTransposes ? &transposeBuffers[type] : nullptr);
}

Value SharedMemoryMaterializer::writeThroughShared(Operation *op, Value input,
                                                   Value *shared) {
  Value result = op->getResult(0);
  Location loc = op->getLoc();
  Value buffer = shared ? *shared : Value();
  if (!buffer) {
    OpBuilder top = OpBuilder::atBlockBegin(&func.getBody().front());
    buffer = AllocOp::create(
        top, loc, bufferTypeOf(cast<RankedTensorType>(result.getType())),
        IntegerAttr());
  }
  if (shared)
    *shared = buffer;
  OpBuilder b(op);
  transposeBarriers.emplace_back(gpu::BarrierOp::create(b, loc), buffer);
  LocalStoreOp::create(b, loc, input, buffer);
  gpu::BarrierOp::create(b, loc);
  result.replaceAllUsesWith(buffer);
  op->erase();
  return buffer;
}

Value SharedMemoryMaterializer::rewriteSharedLhs(tile::ConvertLayoutOp move) {
  // With share-transposes, every move of its type shares one buffer: each
  // move (tilegpu-assign-layouts makes one per reading mma) is read before
  // the next is written, and that write waits at its first barrier for the
  // threads, and behind the waits for later products for the products, that
  // read it (the backward's Pᵀ and dSᵀ in each step and in the mask split's
  // three loops). tilegpu-simulate-roles checks this in every library
  // kernel: a product still reading the buffer when it is written again is
  // its "writes shared memory that a product still reads".
  auto type = cast<RankedTensorType>(move.getType());
  return writeThroughShared(
      move, move.getInput(),
      shareTransposes ? &sharedLhsBuffers[type] : nullptr);
}

tile::ConvertLayoutOp SharedMemoryMaterializer::sharedLhsWriting(
    tile::TransposeOp transpose, ArrayRef<tile::ConvertLayoutOp> moves) {
  BufferType wanted = bufferTypeOf(transpose.getType());
  for (tile::ConvertLayoutOp move : moves) {
    if (move.getInput() != transpose.getInput() ||
        move->getBlock() != transpose->getBlock() ||
        !move->isBeforeInBlock(transpose) ||
        bufferTypeOf(move.getType()).getTransposedView() != wanted)
      continue;
    // With share-transposes, a later move of its type writes the same
    // buffer.
    bool overwritten = llvm::any_of(moves, [&](tile::ConvertLayoutOp other) {
      return other != move && other->getBlock() == move->getBlock() &&
             other.getType() == move.getType() &&
             move->isBeforeInBlock(other) && other->isBeforeInBlock(transpose);
    });
    if (!overwritten)
      return move;
  }
  return {};
}

/// With merge-barriers, a transpose's first barrier (every thread done
/// reading the buffer's previous contents) moves out of its loop, to just
/// before it, when the
/// buffer's only readers are products in the loop's body that are waited
/// for before a later barrier of the body: that barrier has ordered the
/// previous iteration's reads before this one's write, and only the
/// loop's first write (after whatever came before the loop) needs one.
/// The backward's dSᵀ: its barrier before each step's write is the dQ
/// reduction's, after dQ's product (two consumer barriers a step, as
/// FlashAttention-3's).
void SharedMemoryMaterializer::hoistTransposeBarriers() {
  for (auto [barrier, buffer] : transposeBarriers) {
    auto loop = dyn_cast<scf::ForOp>(barrier->getParentOp());
    if (!loop)
      continue;
    Block *body = barrier->getBlock();
    Operation *lastWait = nullptr;
    bool movable = true;
    // The buffer's users, and those of its transposed views.
    SmallVector<Operation *> users;
    for (Operation *user : buffer.getUsers()) {
      if (!isa<TransposeViewOp>(user)) {
        users.push_back(user);
        continue;
      }
      llvm::append_range(users, user->getResult(0).getUsers());
    }
    for (Operation *user : users) {
      if (user->getBlock() != body) {
        movable = false;
        break;
      }
      if (isa<LocalStoreOp>(user)) {
        movable &= barrier->isBeforeInBlock(user);
        continue;
      }
      auto mma = dyn_cast<MmaOp>(user);
      if (!mma || !mma->hasOneUse() ||
          !isa<MmaWaitOp>(*mma->getUsers().begin()) ||
          (*mma->getUsers().begin())->getBlock() != body) {
        movable = false;
        break;
      }
      Operation *wait = *mma->getUsers().begin();
      if (!lastWait || lastWait->isBeforeInBlock(wait))
        lastWait = wait;
    }
    if (!movable || !lastWait)
      continue;
    bool later = false;
    for (Operation *op = lastWait->getNextNode(); op && !later;
         op = op->getNextNode())
      later = isa<gpu::BarrierOp>(op);
    if (later)
      barrier->moveBefore(loop);
  }
}

void SharedMemoryMaterializer::rewriteTransposedViews() {
  SmallVector<tile::TransposeOp> views;
  func.walk([&](tile::TransposeOp t) {
    if (isa<BufferType>(t.getInput().getType()))
      views.push_back(t);
  });
  for (tile::TransposeOp transpose : views) {
    OpBuilder b(transpose);
    Value view = TransposeViewOp::create(b, transpose.getLoc(),
                                         bufferTypeOf(transpose.getType()),
                                         transpose.getInput());
    transpose.getResult().replaceAllUsesWith(view);
    transpose.erase();
  }
}

LogicalResult SharedMemoryMaterializer::run() {
  // (A transpose of a staged block becomes a view of its buffer once the
  // block is one: rewriteTransposedViews.)
  SmallVector<tile::ConvertLayoutOp> sharedLhs;
  func.walk([&](tile::ConvertLayoutOp move) {
    if (getSharedEncoding(move.getType()) &&
        !getSharedEncoding(move.getInput().getType()) &&
        !isa<BufferType>(move.getInput().getType()))
      sharedLhs.push_back(move);
  });
  SmallVector<tile::TransposeOp> transposes;
  func.walk([&](tile::TransposeOp t) {
    if (!stagingLoad(t.getInput()))
      transposes.push_back(t);
  });
  // A transpose of a tile that a move has just written into shared memory
  // in the same bytes reads the move's buffer transposed (once the moves
  // have their buffers, below).
  SmallVector<std::pair<tile::TransposeOp, tile::ConvertLayoutOp>> viewed;
  for (tile::TransposeOp transpose : transposes) {
    if (tile::ConvertLayoutOp move = sharedLhsWriting(transpose, sharedLhs)) {
      viewed.emplace_back(transpose, move);
      continue;
    }
    auto encoding = getSharedEncoding(transpose.getType());
    if (!encoding || !encoding.getTransposed())
      return transpose.emitError()
             << "convert-tile-to-tilegpu: a transpose goes through a "
                "transposed shared buffer (run tilegpu-assign-layouts "
                "first), not "
             << transpose.getType();
    rewriteTranspose(transpose);
  }
  llvm::DenseMap<Operation *, Value> movedInto;
  for (tile::ConvertLayoutOp move : sharedLhs) {
    Operation *op = move;
    movedInto[op] = rewriteSharedLhs(move);
  }
  for (auto [transpose, move] : viewed) {
    OpBuilder b(transpose);
    Value view = TransposeViewOp::create(b, transpose.getLoc(),
                                         bufferTypeOf(transpose.getType()),
                                         movedInto.lookup(move));
    transpose.getResult().replaceAllUsesWith(view);
    transpose.erase();
  }
  func.walk([&](tile::LoadOp load) {
    if (load->getParentOfType<scf::ForOp>())
      streamedViews.insert(load.getView());
  });
  SmallVector<tile::LoadOp> loads;
  func.walk([&](tile::LoadOp load) { loads.push_back(load); });
  for (tile::LoadOp load : loads) {
    // cp.async fills what lies outside the view with zeros.
    if (!load.getPad().isZero())
      return load.emitError() << "convert-tile-to-tilegpu: loads pad with "
                                 "zero only (cp.async zero-fills), not "
                              << load.getPad().convertToDouble();
    if (getSharedEncoding(load.getType())) {
      if (isTmaLoad(load) &&
          load.getTranspose() !=
              getSharedEncoding(load.getType()).getTransposed())
        return load.emitError() << "convert-tile-to-tilegpu: TMA copies a "
                                   "block as it lies in memory; this load's "
                                   "transpose flag and its tile's encoding "
                                   "disagree";
      continue;
    }
    auto layout =
        dyn_cast_or_null<MmaSyncLayoutAttr>(load.getType().getEncoding());
    if (!layout || layout.getKind() != MmaSyncKind::OperandA ||
        load.getTranspose())
      return load.emitError()
             << "convert-tile-to-tilegpu: a load gives a shared tile or an "
                "untransposed A operand, not "
             << load.getType() << (load.getTranspose() ? " transposed" : "");
  }
  for (tile::LoadOp load : loads)
    streamOf(load, /*create=*/true);
  countSlots();
  // A producer warp refills a slot as soon as its readers release it, so
  // its rings need no more slots than the loads it runs ahead by.
  if (ringSlots > 0)
    for (tile::LoadOp load : loads)
      if (Stream *stream = streamOf(load); stream && isTmaLoad(load))
        stream->slots = ringSlots;
  // A cp.async ring of more than one slot picks a block's slot by its
  // block index (rewriteLoad), which then must follow the loop: the
  // induction variable plus a constant, so that the blocks in flight sit
  // in different slots. A block index read from memory (a paged cache's)
  // does not; such a load needs one slot (refills after use) or TMA, whose
  // slots follow a count of the loads issued.
  for (tile::LoadOp load : loads) {
    Stream *stream = streamOf(load);
    auto loop = load->getParentOfType<scf::ForOp>();
    if (!stream || stream->slots < 2 || isTmaLoad(load) || !loop)
      continue;
    Value block = load.getIndices()[load.getIndices().size() - 2];
    // A block the loop does not move (an inner pipeline's prologue, inside
    // a loop over heads): the pipeline it starts moves its blocks.
    if (loop.isDefinedOutsideOfLoop(block))
      continue;
    Value iv = loop.getInductionVar();
    auto add = block.getDefiningOp<arith::AddIOp>();
    bool follows =
        block == iv ||
        (add &&
         ((add.getLhs() == iv && matchPattern(add.getRhs(), m_Constant())) ||
          (add.getRhs() == iv && matchPattern(add.getLhs(), m_Constant()))));
    if (!follows)
      return load.emitError()
             << "convert-tile-to-tilegpu: a cp.async ring of " << stream->slots
             << " slots picks each block's slot by its block index, which "
                "here is not the loop's induction variable plus a constant "
                "(a block read through a table); refill after use (one "
                "slot) or load with TMA";
  }
  allocate();
  for (tile::LoadOp load : loads)
    rewriteLoad(load);
  if (failed(materializeTma()))
    return failure();
  retypeLoops();
  // A staged block read into registers (tilegpu-assign-layouts'
  // convert_layout from its shared encoding).
  SmallVector<tile::ConvertLayoutOp> blockReads;
  func.walk([&](tile::ConvertLayoutOp read) {
    if (isa<BufferType>(read.getInput().getType()))
      blockReads.push_back(read);
  });
  for (tile::ConvertLayoutOp read : blockReads) {
    OpBuilder b(read);
    Value tile =
        LocalLoadOp::create(b, read.getLoc(), read.getType(), read.getInput());
    read.replaceAllUsesWith(tile);
    read.erase();
  }

  // Every buffer with a copy in flight: copies, and the loop-carried
  // buffers and loop results that hand them on.
  SmallVector<Value> pending;
  func.walk([&](Operation *op) {
    if (auto copy = dyn_cast<AsyncCopyOp>(op))
      pending.push_back(copy);
    if (auto loop = dyn_cast<scf::ForOp>(op))
      for (auto [arg, result] :
           llvm::zip_equal(loop.getRegionIterArgs(), loop.getResults()))
        if (isa<BufferType>(arg.getType()) && !tickets.count(arg)) {
          pending.push_back(arg);
          pending.push_back(result);
        }
  });
  for (Value value : pending)
    insertWaits(value);
  for (auto &[value, ticket] : tickets)
    insertTmaWait(value, ticket);
  rewriteTransposedViews();

  // (tcgen05's mma, which accumulates in tensor memory, is
  // materializeTensorMemory's.)
  SmallVector<tile::MmaOp> mmas;
  func.walk([&](tile::MmaOp mma) {
    if (!isa<TensorMemoryEncodingAttr>(mma.getType().getEncoding()))
      mmas.push_back(mma);
  });
  for (tile::MmaOp mma : mmas)
    if (failed(rewriteMma(mma)))
      return failure();
  if (failed(insertReleases()))
    return failure();
  SmallVector<tile::StoreOp> stores;
  func.walk([&](tile::StoreOp store) { stores.push_back(store); });
  for (tile::StoreOp store : stores)
    rewriteStore(store);
  SmallVector<tile::ReduceOp> scalarReductions;
  func.walk([&](tile::ReduceOp reduce) {
    if (!isa<RankedTensorType>(reduce.getType()))
      scalarReductions.push_back(reduce);
  });
  for (tile::ReduceOp reduce : scalarReductions)
    if (failed(rewriteScalarReduction(reduce)))
      return failure();
  if (!drained && !finalCounts.empty()) {
    OpBuilder b(func.front().getTerminator());
    drainTma(b, func.getLoc());
  }
  for (auto [buffer, last] : reduceEnds) {
    OpBuilder b(last->getBlock(), std::next(last->getIterator()));
    TmaReduceWaitOp::create(b, last->getLoc(), buffer, /*read=*/false);
  }
  if (mergeBarriers)
    hoistTransposeBarriers();
  // tcgen05: the accumulators and P move to tensor memory, and the mma
  // with them (last: it rebuilds the loops that carry the mma's count).
  return materializeTensorMemory(func, mmaWarp, pOverS, correction);
}

struct ConvertTileToTileGPUPass final
    : tiled_attn::impl::ConvertTileToTileGPUPassBase<ConvertTileToTileGPUPass> {
  using Base::Base;
  void runOnOperation() override {
    if (ringSlots != 0 && (ringSlots < 1 || !emptyBarriers)) {
      getOperation().emitError()
          << "convert-tile-to-tilegpu: ring-slots (" << int64_t(ringSlots)
          << ") needs empty-barriers and at least one slot";
      return signalPassFailure();
    }
    // Options are checked whether or not the kernel has work for them.
    if (correction && !mmaWarp) {
      getOperation().emitError()
          << "convert-tile-to-tilegpu: correction hands the corrections of O "
             "to the threads beside the issuing ones; it needs mma-warp";
      return signalPassFailure();
    }
    if (mmaWarp || pOverS) {
      TargetAttr target = getTarget(getOperation());
      if (!target || target.getFamily() != Family::Tcgen05) {
        getOperation().emitError()
            << "convert-tile-to-tilegpu: "
            << (mmaWarp ? "mma-warp" : "p-over-s")
            << " is for tcgen05 kernels (sm_100a, sm_100f), not "
            << (target ? target.getChip()
                       : StringRef("a kernel with no "
                                   "#tilegpu.target"));
        return signalPassFailure();
      }
    }
    if (failed(SharedMemoryMaterializer(getOperation(), stagedStores,
                                        emptyBarriers, ringSlots, mmaWarp,
                                        pOverS, correction, tmaReduce,
                                        mergeBarriers, shareTransposes)
                   .run()))
      signalPassFailure();
  }
};

} // namespace
