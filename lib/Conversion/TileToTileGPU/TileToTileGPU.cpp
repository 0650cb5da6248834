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
//===----------------------------------------------------------------------===//

#include "tiled_attn/Conversion/TileToTileGPU/TileToTileGPU.h"
#include "tiled_attn/Conversion/Passes.h"
#include "tiled_attn/Dialect/Tile/IR/TileOps.h"
#include "tiled_attn/Dialect/TileGPU/IR/TileGPUOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
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
  Value buffer; // the tilegpu.alloc
  bool operator==(const Stream &o) const {
    return view == o.view && type == o.type;
  }
};

class SharedMemoryMaterializer {
public:
  SharedMemoryMaterializer(func::FuncOp func, bool stagedStores)
      : func(func), stagedStores(stagedStores) {}
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
  void rewriteStore(tile::StoreOp store);

  func::FuncOp func;
  bool stagedStores;
  SmallVector<Stream> streams;
  /// Loads of views no loop streams (Q): a buffer each.
  llvm::MapVector<Operation *, Value> ownBuffers;
  llvm::SmallPtrSet<Value, 4> streamedViews;
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
          if (!reader || !reader->isBeforeInBlock(refill))
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
    if (Stream *stream = streamOf(load)) {
      if (!stream->buffer)
        stream->buffer = AllocOp::create(
            b, load.getLoc(), bufferTypeOf(stream->type, stream->slots),
            IntegerAttr());
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
  });
}

/// The buffer for `load`'s block: its own, or its stream's slot.
void SharedMemoryMaterializer::rewriteLoad(tile::LoadOp load) {
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
  Value copy =
      AsyncCopyOp::create(b, loc, buffer.getType(), load.getView(),
                          load.getIndices(), buffer, load.getInBounds());
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

/// Loops that carry shared tiles now carry their buffers.
void SharedMemoryMaterializer::retypeLoops() {
  func.walk([&](scf::ForOp loop) {
    for (auto [init, arg, result] : llvm::zip_equal(
             loop.getInitArgs(), loop.getRegionIterArgs(), loop.getResults()))
      if (isa<BufferType>(init.getType())) {
        arg.setType(init.getType());
        result.setType(init.getType());
      }
  });
}

/// Readers of a buffer whose copy may be in flight wait for it, in the
/// block where the buffer is defined, just before the first op that reads
/// it: the copies issued in between may stay in flight.
void SharedMemoryMaterializer::insertWaits(Value pending) {
  SmallVector<OpOperand *> uses = readers(pending);
  if (uses.empty())
    return;
  Block *block = isa<BlockArgument>(pending)
                     ? cast<BlockArgument>(pending).getOwner()
                     : pending.getDefiningOp()->getBlock();
  Operation *first = nullptr;
  for (OpOperand *use : uses) {
    Operation *reader = block->findAncestorOpInBlock(*use->getOwner());
    if (!first || reader->isBeforeInBlock(first))
      first = reader;
  }
  OpBuilder b(first);
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
  Value result = MmaOp::create(b, mma.getLoc(), mma.getType(), mma.getLhs(),
                               mma.getRhs(), mma.getAcc());
  mma.replaceAllUsesWith(result);
  mma.erase();
  return success();
}

/// A store of a tile its layout can stage goes through a staging buffer,
/// which may overlap the loads' buffers: every copy must have landed and
/// every thread be done reading them first.
void SharedMemoryMaterializer::rewriteStore(tile::StoreOp store) {
  auto type = cast<RankedTensorType>(store.getValue().getType());
  auto layout = dyn_cast_or_null<MmaSyncLayoutAttr>(type.getEncoding());
  if (!stagedStores || store.getMask() || !layout ||
      !layout.canStageStore(type.getShape(), type.getElementType()))
    return;
  OpBuilder b(store);
  Location loc = store.getLoc();
  auto bufferType =
      BufferType::get(b.getContext(), type.getShape(), type.getElementType(),
                      mmaSyncSharedEncoding(b.getContext()));
  Value staging = AllocOp::create(b, loc, bufferType, IntegerAttr());
  AsyncWaitAllOp::create(b, loc);
  gpu::BarrierOp::create(b, loc);
  StagedStoreOp::create(b, loc, store.getValue(), store.getView(),
                        store.getIndices(), staging);
  // Whatever comes after may reuse the buffer once every thread has read it.
  if (!store->getNextNode()->hasTrait<OpTrait::IsTerminator>())
    gpu::BarrierOp::create(b, loc);
  store.erase();
}

LogicalResult SharedMemoryMaterializer::run() {
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
    if (getSharedEncoding(load.getType()))
      continue;
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
  allocate();
  for (tile::LoadOp load : loads)
    rewriteLoad(load);
  retypeLoops();

  // Every buffer with a copy in flight: copies, and the loop-carried
  // buffers and loop results that hand them on.
  SmallVector<Value> pending;
  func.walk([&](Operation *op) {
    if (auto copy = dyn_cast<AsyncCopyOp>(op))
      pending.push_back(copy);
    if (auto loop = dyn_cast<scf::ForOp>(op))
      for (auto [arg, result] :
           llvm::zip_equal(loop.getRegionIterArgs(), loop.getResults()))
        if (isa<BufferType>(arg.getType())) {
          pending.push_back(arg);
          pending.push_back(result);
        }
  });
  for (Value value : pending)
    insertWaits(value);

  SmallVector<tile::MmaOp> mmas;
  func.walk([&](tile::MmaOp mma) { mmas.push_back(mma); });
  for (tile::MmaOp mma : mmas)
    if (failed(rewriteMma(mma)))
      return failure();
  SmallVector<tile::StoreOp> stores;
  func.walk([&](tile::StoreOp store) { stores.push_back(store); });
  for (tile::StoreOp store : stores)
    rewriteStore(store);
  return success();
}

struct ConvertTileToTileGPUPass final
    : tiled_attn::impl::ConvertTileToTileGPUPassBase<ConvertTileToTileGPUPass> {
  using Base::Base;
  void runOnOperation() override {
    if (failed(SharedMemoryMaterializer(getOperation(), stagedStores).run()))
      signalPassFailure();
  }
};

} // namespace
