//===- MemoryOpsToGPU.cpp - Loads, stores, block ids and sizes ------------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// A tile load is a cooperative copy of a block into shared memory: every
// thread issues 16-byte cp.async copies, with zero fill for the rows past the
// view's end (the load's padding). A tile in the A-operand layout is then
// read into registers with ldmatrix; a shared tile stays in shared memory
// for the mma that uses it, and its copy is waited for only just before that
// use, so that the copies of loads issued together overlap the work between. A
// store with a staging buffer goes through shared memory and leaves in 16-byte
// row pieces; one without writes each lane's accumulator pairs directly. Both
// check the view's bounds.
//
//===----------------------------------------------------------------------===//

#include "tiled_attn/Conversion/TileToGPU/TileToGPU.h"
#include "tiled_attn/Dialect/Tile/IR/TileOps.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace tiled_attn;
using namespace tiled_attn::tile;

namespace {

/// Issues the copy of the `rows x cols` block of `view` at tile indices
/// `indices` into `buffer`, all threads together, as one cp.async group;
/// returns the group's token. Nobody waits here. Unless the block is known
/// to be `inBounds`, each 16-byte copy checks its row and columns against
/// the view's sizes and reads nothing (zero fill) outside.
Value copyBlockToShared(OpBuilder &b, Location loc, Value view,
                        ValueRange indices, Value buffer, int64_t rows,
                        int64_t cols, int64_t threads, bool inBounds) {
  LaneCoords lc(b, loc);
  const int64_t vec = 8; // 16 bytes of f16 or bf16
  int64_t chunksPerRow = cols / vec, chunks = rows * chunksPerRow;
  Value seqLen = memref::DimOp::create(b, loc, view, 2);
  Value colLen = memref::DimOp::create(b, loc, view, 3);
  Value row0 = arith::MulIOp::create(b, loc, indices[2], cIdx(b, loc, rows));
  Value col0 = arith::MulIOp::create(b, loc, indices[3], cIdx(b, loc, cols));
  Value zero = cIdx(b, loc, 0), full = cIdx(b, loc, vec);

  // Nobody may still be reading the buffer from the previous iteration. A
  // barrier since the last shared-memory read in this block serves (several
  // loads issued together need one).
  bool synced = false;
  Block *block = b.getInsertionBlock();
  for (auto it = b.getInsertionPoint(); it != block->begin();) {
    Operation &prev = *--it;
    if (isa<gpu::BarrierOp>(prev)) {
      synced = true;
      break;
    }
    if (isa<nvgpu::LdMatrixOp>(prev) || prev.getNumRegions() != 0 ||
        isa<MmaOp>(prev))
      break;
  }
  if (!synced)
    gpu::BarrierOp::create(b, loc);
  SmallVector<Value> tokens;
  for (int64_t i = 0; i < chunks / threads; ++i) {
    Value chunk =
        arith::AddIOp::create(b, loc, lc.tid, cIdx(b, loc, i * threads));
    Value r = arith::DivUIOp::create(b, loc, chunk, cIdx(b, loc, chunksPerRow));
    Value c = arith::MulIOp::create(
        b, loc,
        arith::RemUIOp::create(b, loc, chunk, cIdx(b, loc, chunksPerRow)),
        full);
    Value seq = arith::AddIOp::create(b, loc, row0, r);
    Value col = arith::AddIOp::create(b, loc, col0, c);
    if (inBounds) {
      tokens.push_back(nvgpu::DeviceAsyncCopyOp::create(
          b, loc, nvgpu::DeviceAsyncTokenType::get(b.getContext()), buffer,
          ValueRange{r, c}, view, ValueRange{indices[0], indices[1], seq, col},
          b.getIndexAttr(vec), /*srcElements=*/Value(),
          /*bypassL1=*/b.getUnitAttr()));
      continue;
    }
    Value inRows =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, seq, seqLen);
    Value inCols =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle,
                              arith::AddIOp::create(b, loc, col, full), colLen);
    Value inBounds = arith::AndIOp::create(b, loc, inRows, inCols);
    // Out of bounds: read nothing (zero fill) from a valid address.
    Value srcElements = arith::SelectOp::create(b, loc, inBounds, full, zero);
    Value srcSeq = arith::SelectOp::create(b, loc, inBounds, seq, zero);
    Value srcCol = arith::SelectOp::create(b, loc, inBounds, col, zero);
    tokens.push_back(nvgpu::DeviceAsyncCopyOp::create(
        b, loc, nvgpu::DeviceAsyncTokenType::get(b.getContext()), buffer,
        ValueRange{r, c}, view,
        ValueRange{indices[0], indices[1], srcSeq, srcCol}, b.getIndexAttr(vec),
        srcElements, /*bypassL1=*/b.getUnitAttr()));
  }
  return nvgpu::DeviceAsyncCreateGroupOp::create(
      b, loc, nvgpu::DeviceAsyncTokenType::get(b.getContext()), tokens);
}

/// Waits for the copy group `group` of `load` just before the first op of
/// the block that uses the loaded tile, letting the groups of the shared
/// loads issued in between stay in flight; then synchronizes the CTA.
void waitBeforeFirstUse(OpBuilder &b, Location loc, LoadOp load, Value group) {
  // Handing the tile to a loop (as a start value or a yield) reads nothing.
  SmallVector<Operation *> readers;
  for (Operation *user : load->getUsers())
    if (!isa<scf::YieldOp, scf::ForOp>(user))
      readers.push_back(user);
  Operation *firstUse = nullptr;
  for (Operation *op = load->getNextNode(); op && !firstUse;
       op = op->getNextNode())
    if (llvm::any_of(readers,
                     [&](Operation *user) { return op->isAncestor(user); }))
      firstUse = op;
  int64_t later = 0;
  for (Operation *op = load->getNextNode(); op && op != firstUse;
       op = op->getNextNode())
    if (isa<LoadOp>(op))
      ++later;
  // No use in this block: the tile is for a later iteration of a pipelined
  // loop, whose mma waits for it (see tile.wait_groups).
  if (!firstUse)
    return;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(firstUse);
  nvgpu::DeviceAsyncWaitOp::create(b, loc, group, b.getI32IntegerAttr(later));
  gpu::BarrierOp::create(b, loc);
}

/// The shared buffer a load was given by the pass: `tile.smem_offset`, plus,
/// for a stream with a ring of buffers (`tile.smem_ring = [stages, bytes]`),
/// the slot of its block: block mod stages.
Value sharedBuffer(OpBuilder &b, Location loc, Operation *op, Value block,
                   MemRefType type) {
  auto offset = op->getAttrOfType<IntegerAttr>("tile.smem_offset");
  auto space =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  auto bytesTy = MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                                 MemRefLayoutAttrInterface(), space);
  Value base = gpu::DynamicSharedMemoryOp::create(b, loc, bytesTy);
  Value byteOffset = cIdx(b, loc, offset.getInt());
  if (auto ring = op->getAttrOfType<DenseI64ArrayAttr>("tile.smem_ring");
      ring && ring[0] > 1) {
    Value slot = arith::RemUIOp::create(b, loc, block, cIdx(b, loc, ring[0]));
    byteOffset = arith::AddIOp::create(
        b, loc, byteOffset,
        arith::MulIOp::create(b, loc, slot, cIdx(b, loc, ring[1])));
  }
  return memref::ViewOp::create(b, loc, type, base, byteOffset, ValueRange{});
}

struct LoadToGPU final : OpConversionPattern<LoadOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(LoadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = op.getType();
    auto layout = dyn_cast_or_null<LayoutAttr>(type.getEncoding());
    if (!layout)
      return rewriter.notifyMatchFailure(op, "no layout");
    if (!op.getPad().isZero())
      return op.emitError() << "GPU lowering: loads pad with zero only";
    if (type.getRank() != 2 || op.getIndices().size() != 4)
      return op.emitError() << "GPU lowering: expects rank-2 tiles of rank-4 "
                               "views";
    if (!op->hasAttr("tile.smem_offset"))
      return op.emitError() << "GPU lowering: the load has no shared buffer";
    SmallVector<int64_t> block = op.getBlockShape();
    int64_t threads = 32 * layout.getWarps();
    if ((block[0] * block[1] / 8) % threads || block[1] % 8)
      return op.emitError() << "GPU lowering: a " << block[0] << "x" << block[1]
                            << " block does not split into " << threads
                            << " threads' 16-byte copies";
    MemRefType bufferTy =
        getSharedBufferType(block[0], block[1], type.getElementType());
    Value buffer =
        sharedBuffer(rewriter, loc, op, adaptor.getIndices()[2], bufferTy);
    Value group = copyBlockToShared(rewriter, loc, adaptor.getView(),
                                    adaptor.getIndices(), buffer, block[0],
                                    block[1], threads, op.getInBounds());

    if (layout.getKind() == LayoutKind::Shared) {
      waitBeforeFirstUse(rewriter, loc, op, group);
      rewriter.replaceOp(op, buffer);
      return success();
    }
    nvgpu::DeviceAsyncWaitOp::create(rewriter, loc, group,
                                     rewriter.getI32IntegerAttr(0));
    gpu::BarrierOp::create(rewriter, loc);
    if (layout.getKind() != LayoutKind::OperandA || op.getTranspose())
      return op.emitError() << "GPU lowering: loads produce shared tiles or "
                               "untransposed A operands";
    // A operand: ldmatrix.x4 per (m-tile, k-step).
    Fragment frag = Fragment::get(type);
    Type elt = type.getElementType();
    auto fragTy = VectorType::get({frag.size()}, elt);
    Value result = arith::ConstantOp::create(rewriter, loc, fragTy,
                                             rewriter.getZeroAttr(fragTy));
    for (int64_t mt = 0; mt < frag.mTiles; ++mt)
      for (int64_t kt = 0; kt < frag.nTiles; ++kt)
        result = insertRegisters(
            rewriter, loc,
            loadOperandA(rewriter, loc, buffer, frag, elt, mt, kt), result,
            (mt * frag.nTiles + kt) * 8);
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct StoreToGPU final : OpConversionPattern<StoreOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(StoreOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getValue().getType());
    auto layout = dyn_cast_or_null<LayoutAttr>(type.getEncoding());
    if (!layout || layout.getKind() != LayoutKind::Acc || op.getMask() ||
        op.getIndices().size() != 4)
      return op.emitError() << "GPU lowering: stores take an unmasked "
                               "accumulator tile into a rank-4 view";
    if (op->hasAttr("tile.smem_offset"))
      return storeThroughShared(op, adaptor, rewriter);
    Fragment frag = Fragment::get(type);
    LaneCoords lc(rewriter, loc);
    Value view = adaptor.getView();
    ValueRange idx = adaptor.getIndices();
    Value seqLen = memref::DimOp::create(rewriter, loc, view, 2);
    Value colLen = memref::DimOp::create(rewriter, loc, view, 3);
    Value rowBase = lc.firstRow(
        rewriter, loc, frag,
        arith::MulIOp::create(rewriter, loc, idx[2],
                              cIdx(rewriter, loc, type.getDimSize(0))));
    Value colBase = lc.firstCol(
        rewriter, loc,
        arith::MulIOp::create(rewriter, loc, idx[3],
                              cIdx(rewriter, loc, type.getDimSize(1))));
    for (int64_t e = 0; e < frag.size(); e += 2) {
      Value row = arith::AddIOp::create(rewriter, loc, rowBase,
                                        cIdx(rewriter, loc, frag.rowOffset[e]));
      Value col = arith::AddIOp::create(rewriter, loc, colBase,
                                        cIdx(rewriter, loc, frag.colOffset[e]));
      Value inRows = arith::CmpIOp::create(
          rewriter, loc, arith::CmpIPredicate::slt, row, seqLen);
      Value inCols = arith::CmpIOp::create(
          rewriter, loc, arith::CmpIPredicate::sle,
          arith::AddIOp::create(rewriter, loc, col, cIdx(rewriter, loc, 2)),
          colLen);
      Value inBounds = arith::AndIOp::create(rewriter, loc, inRows, inCols);
      Value pair = extractRegisters(rewriter, loc, adaptor.getValue(), e, 2);
      auto ifOp = scf::IfOp::create(rewriter, loc, inBounds,
                                    /*withElseRegion=*/false);
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointToStart(ifOp.thenBlock());
      vector::StoreOp::create(rewriter, loc, pair, view,
                              ValueRange{idx[0], idx[1], row, col});
    }
    rewriter.eraseOp(op);
    return success();
  }

  /// The store of a tile that `convert-tile-to-gpu` gave a staging buffer:
  /// each lane writes its accumulator pairs to shared memory, then each warp
  /// copies its own rows out in 16-byte vectors (the kernels' 16-byte row
  /// alignment, as for the cp.async loads), each checked against the view's
  /// bounds: coalesced 128-bit stores instead of one 32-bit (or, for an
  /// unknown alignment, two 16-bit) store per pair. A warp reads back only
  /// what it wrote, so a warp barrier orders the two. (The copy-out is
  /// indexed by warp and lane, not by thread as the loads' copies are: LLVM
  /// would otherwise reuse the Q copy's addresses and keep them live through
  /// the K/V loop.)
  LogicalResult storeThroughShared(StoreOp op, OpAdaptor adaptor,
                                   ConversionPatternRewriter &rewriter) const {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getValue().getType());
    int64_t rows = type.getDimSize(0), cols = type.getDimSize(1);
    const int64_t vec = 8; // 16 bytes of f16 or bf16
    Fragment frag = Fragment::get(type);
    int64_t chunksPerRow = cols / vec;
    if (!canStageStore(type))
      return op.emitError() << "GPU lowering: a staged store takes a 16-bit "
                               "tile whose warps' rows split into 16-byte "
                               "pieces, a whole number per lane";
    MemRefType bufferTy =
        getSharedBufferType(rows, cols, type.getElementType());
    Value buffer = sharedBuffer(rewriter, loc, op, Value(), bufferTy);
    // The buffer may overlap the loads' buffers: let every copy land and
    // every thread finish reading them.
    NVVM::CpAsyncWaitGroupOp::create(rewriter, loc, 0);
    gpu::BarrierOp::create(rewriter, loc);
    LaneCoords lc(rewriter, loc);
    Value row0 = lc.firstRow(rewriter, loc, frag, cIdx(rewriter, loc, 0));
    Value col0 = lc.firstCol(rewriter, loc, cIdx(rewriter, loc, 0));
    for (int64_t e = 0; e < frag.size(); e += 2) {
      Value row = arith::AddIOp::create(rewriter, loc, row0,
                                        cIdx(rewriter, loc, frag.rowOffset[e]));
      Value col = arith::AddIOp::create(rewriter, loc, col0,
                                        cIdx(rewriter, loc, frag.colOffset[e]));
      vector::StoreOp::create(
          rewriter, loc,
          extractRegisters(rewriter, loc, adaptor.getValue(), e, 2), buffer,
          ValueRange{row, col}, /*nontemporal=*/false, llvm::MaybeAlign(4));
    }
    NVVM::SyncWarpOp::create(
        rewriter, loc, arith::ConstantIntOp::create(rewriter, loc, -1, 32));

    Value view = adaptor.getView();
    ValueRange idx = adaptor.getIndices();
    Value seqLen = memref::DimOp::create(rewriter, loc, view, 2);
    Value colLen = memref::DimOp::create(rewriter, loc, view, 3);
    Value seq0 =
        arith::MulIOp::create(rewriter, loc, idx[2], cIdx(rewriter, loc, rows));
    Value colOrigin =
        arith::MulIOp::create(rewriter, loc, idx[3], cIdx(rewriter, loc, cols));
    auto vecTy = VectorType::get({vec}, type.getElementType());
    Value warpRow0 = arith::MulIOp::create(
        rewriter, loc, lc.warp, cIdx(rewriter, loc, frag.rowsPerWarp));
    for (int64_t i = 0; i < frag.rowsPerWarp * chunksPerRow / 32; ++i) {
      Value chunk = arith::AddIOp::create(rewriter, loc, lc.lane,
                                          cIdx(rewriter, loc, i * 32));
      Value r = arith::AddIOp::create(
          rewriter, loc, warpRow0,
          arith::DivUIOp::create(rewriter, loc, chunk,
                                 cIdx(rewriter, loc, chunksPerRow)));
      Value c = arith::MulIOp::create(
          rewriter, loc,
          arith::RemUIOp::create(rewriter, loc, chunk,
                                 cIdx(rewriter, loc, chunksPerRow)),
          cIdx(rewriter, loc, vec));
      Value piece =
          vector::LoadOp::create(rewriter, loc, vecTy, buffer, ValueRange{r, c},
                                 /*nontemporal=*/false, llvm::MaybeAlign(16));
      Value seq = arith::AddIOp::create(rewriter, loc, seq0, r);
      Value col = arith::AddIOp::create(rewriter, loc, colOrigin, c);
      Value inRows = arith::CmpIOp::create(
          rewriter, loc, arith::CmpIPredicate::slt, seq, seqLen);
      Value inCols = arith::CmpIOp::create(
          rewriter, loc, arith::CmpIPredicate::sle,
          arith::AddIOp::create(rewriter, loc, col, cIdx(rewriter, loc, vec)),
          colLen);
      auto ifOp = scf::IfOp::create(
          rewriter, loc, arith::AndIOp::create(rewriter, loc, inRows, inCols),
          /*withElseRegion=*/false);
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointToStart(ifOp.thenBlock());
      vector::StoreOp::create(rewriter, loc, piece, view,
                              ValueRange{idx[0], idx[1], seq, col},
                              /*nontemporal=*/false, llvm::MaybeAlign(16));
    }
    // Whatever comes after may reuse the buffer once every thread has read it.
    if (!op->getNextNode()->hasTrait<OpTrait::IsTerminator>())
      gpu::BarrierOp::create(rewriter, loc);
    rewriter.eraseOp(op);
    return success();
  }
};

struct BlockIdToGPU final : OpConversionPattern<BlockIdOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(BlockIdOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    gpu::Dimension dim = op.getDim() == Dim::X   ? gpu::Dimension::x
                         : op.getDim() == Dim::Y ? gpu::Dimension::y
                                                 : gpu::Dimension::z;
    rewriter.replaceOpWithNewOp<gpu::BlockIdOp>(op, dim);
    return success();
  }
};

struct DimToGPU final : OpConversionPattern<DimOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(DimOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<memref::DimOp>(op, adaptor.getView(),
                                               op.getIndex());
    return success();
  }
};

} // namespace

void tiled_attn::populateTileMemoryToGPUPatterns(
    TileToGPUTypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<LoadToGPU, StoreToGPU, BlockIdToGPU, DimToGPU>(
      converter, patterns.getContext());
}
