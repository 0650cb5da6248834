//===- MmaSyncStore.cpp - Stores of mma.sync accumulators -----------------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// A staged store goes through shared memory and leaves in 16-byte row
// pieces; a direct one writes each lane's accumulator pairs (with a mask,
// each element whose mask bit is set), or a quad's first lane its rows of a
// row vector. All check the view's bounds. An adding store adds each
// element atomically. A local store writes an accumulator into a shared
// buffer (a transpose on its way to an mma's operand); into swizzled
// panels, which wgmma reads through the async proxy, followed by
// fence.proxy.async.shared::cta.
//
//===----------------------------------------------------------------------===//

#include "tiled_attn/Conversion/TileGPUToNVVM/TileGPUToNVVM.h"
#include "tiled_attn/Dialect/Tile/IR/TileOps.h"
#include "tiled_attn/Dialect/TileGPU/IR/TileGPUOps.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace tiled_attn;
using namespace tiled_attn::tilegpu;

namespace {

/// Each lane writes its accumulator pairs (4 or 8 bytes each) into a
/// shared buffer (`bufferType`) at their rows and columns of the stored
/// matrix: the first half of a staged store, and a local store. In
/// swizzled panels a pair, 4 bytes of one 16-byte chunk, goes to its
/// swizzled place.
void writeAccumulatorPairs(OpBuilder &b, Location loc, const Fragment &frag,
                           LaneCoords &lc, Value value, Value buffer,
                           BufferType bufferType) {
  const bool swizzled =
      cast<SharedEncodingAttr>(bufferType.getEncoding()).getSwizzle();
  if (swizzled)
    buffer = memref::CollapseShapeOp::create(
        b, loc, buffer, ArrayRef<ReassociationIndices>{{0, 1}});
  const uint64_t pairBytes =
      2 * bufferType.getElementType().getIntOrFloatBitWidth() / 8;
  Value row0 = lc.firstRow(b, loc, frag, cIdx(b, loc, 0));
  Value col0 = lc.firstCol(b, loc, frag, cIdx(b, loc, 0));
  for (int64_t e = 0; e < frag.size(); e += 2) {
    Value row =
        arith::AddIOp::create(b, loc, row0, cIdx(b, loc, frag.rowOffset[e]));
    Value col =
        arith::AddIOp::create(b, loc, col0, cIdx(b, loc, frag.colOffset[e]));
    SmallVector<Value, 2> at = {row, col};
    if (swizzled)
      at = {swizzledIndex(b, loc, bufferType, row, col)};
    vector::StoreOp::create(b, loc, extractRegisters(b, loc, value, e, 2),
                            buffer, at,
                            /*nontemporal=*/false, llvm::MaybeAlign(pairBytes));
  }
}

/// Each lane writes its accumulator pairs directly, each within the view's
/// bounds.
struct StoreToNVVM final : OpConversionPattern<tile::StoreOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(tile::StoreOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getValue().getType());
    auto layout = tilegpu::getQuadFragmentLayout(type.getEncoding());
    // A wgmma accumulator whose warpgroups split its columns: each
    // warpgroup stores its block's tile, N / blocks columns on.
    if (auto blocks = dyn_cast<WgmmaLayoutAttr>(type.getEncoding());
        blocks && blocks.getColumnBlocks() > 1)
      layout = blocks.getColumnBlockLayout();
    if (auto blocks = dyn_cast<MmaSyncLayoutAttr>(type.getEncoding());
        blocks && blocks.getColumnBlocks() > 1)
      layout = blocks.getColumnBlockLayout();
    if (!layout)
      return rewriter.notifyMatchFailure(
          op, "not in quad fragments (mma.sync, wgmma)");
    if (op.getAdd() && layout.getKind() != MmaSyncKind::Acc)
      return op.emitError() << "GPU lowering: an adding store takes an "
                               "accumulator tile";
    if (layout.getKind() == MmaSyncKind::Rows && !op.getMask() &&
        op.getIndices().size() == 3)
      return storeRows(op, adaptor, rewriter);
    if (layout.getKind() != MmaSyncKind::Acc || op.getIndices().size() != 4)
      return op.emitError() << "GPU lowering: stores take an accumulator "
                               "tile into a rank-4 view, or an unmasked "
                               "vector of rows into a rank-3 one";
    LaneCoords lc(rewriter, loc);
    Value colOrigin =
        arith::MulIOp::create(rewriter, loc, adaptor.getIndices()[3],
                              cIdx(rewriter, loc, type.getDimSize(1)));
    // (With column blocks, the warp's block's: firstRow and firstCol place
    // the lane in it.)
    Fragment frag = Fragment::get(type);
    Value view = adaptor.getView();
    ValueRange idx = adaptor.getIndices();
    Value seqLen = memref::DimOp::create(rewriter, loc, view, 2);
    Value colLen = memref::DimOp::create(rewriter, loc, view, 3);
    Value rowBase = lc.firstRow(
        rewriter, loc, frag,
        arith::MulIOp::create(rewriter, loc, idx[2],
                              cIdx(rewriter, loc, type.getDimSize(0))));
    Value colBase = lc.firstCol(rewriter, loc, frag, colOrigin);
    // Masked or adding: each element on its own (an adding store is an
    // atomic f32 add, where its mask bit is set).
    int64_t width = op.getMask() || op.getAdd() ? 1 : 2;
    for (int64_t e = 0; e < frag.size(); e += width) {
      Value row = arith::AddIOp::create(rewriter, loc, rowBase,
                                        cIdx(rewriter, loc, frag.rowOffset[e]));
      Value col = arith::AddIOp::create(rewriter, loc, colBase,
                                        cIdx(rewriter, loc, frag.colOffset[e]));
      Value write =
          pieceInBounds(rewriter, loc, row, seqLen, col, width, colLen);
      if (op.getMask())
        write = arith::AndIOp::create(
            rewriter, loc, write,
            vector::ExtractOp::create(rewriter, loc, adaptor.getMask(), e));
      Value piece =
          extractRegisters(rewriter, loc, adaptor.getValue(), e, width);
      auto ifOp = scf::IfOp::create(rewriter, loc, write,
                                    /*withElseRegion=*/false);
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointToStart(ifOp.thenBlock());
      SmallVector<Value, 4> at = {idx[0], idx[1], row, col};
      if (op.getAdd())
        memref::AtomicRMWOp::create(
            rewriter, loc, arith::AtomicRMWKind::addf,
            vector::ExtractOp::create(rewriter, loc, adaptor.getValue(), e),
            view, at);
      else
        vector::StoreOp::create(rewriter, loc, piece, view, at);
    }
    rewriter.eraseOp(op);
    return success();
  }

private:
  /// A vector of rows (the log-sum-exps) into a rank-3 view at [b, h,
  /// block]: the four lanes of a quad hold the same rows, and the first
  /// writes each of them that is within the view's rows.
  LogicalResult storeRows(tile::StoreOp op, OpAdaptor adaptor,
                          ConversionPatternRewriter &rewriter) const {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getValue().getType());
    Fragment frag = Fragment::get(type);
    LaneCoords lc(rewriter, loc);
    Value view = adaptor.getView();
    ValueRange idx = adaptor.getIndices();
    Value rows = memref::DimOp::create(rewriter, loc, view, 2);
    Value rowBase = lc.firstRow(
        rewriter, loc, frag,
        arith::MulIOp::create(rewriter, loc, idx[2],
                              cIdx(rewriter, loc, type.getDimSize(0))));
    Value writer = arith::CmpIOp::create(
        rewriter, loc, arith::CmpIPredicate::eq, lc.t, cIdx(rewriter, loc, 0));
    for (int64_t e = 0; e < frag.size(); ++e) {
      Value row = arith::AddIOp::create(rewriter, loc, rowBase,
                                        cIdx(rewriter, loc, frag.rowOffset[e]));
      Value inside = arith::AndIOp::create(
          rewriter, loc, writer,
          arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ult, row,
                                rows));
      Value element =
          vector::ExtractOp::create(rewriter, loc, adaptor.getValue(), e);
      auto ifOp = scf::IfOp::create(rewriter, loc, inside,
                                    /*withElseRegion=*/false);
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointToStart(ifOp.thenBlock());
      memref::StoreOp::create(rewriter, loc, element, view,
                              ValueRange{idx[0], idx[1], row});
    }
    rewriter.eraseOp(op);
    return success();
  }
};

/// The store of a tile through a staging buffer: each lane writes its
/// accumulator pairs to shared memory, then each warp copies its own rows out
/// in 16-byte vectors (the kernels' 16-byte row alignment, as for the cp.async
/// loads), each checked against the view's bounds: coalesced 128-bit stores
/// instead of one 32-bit (or, for an unknown alignment, two 16-bit) store per
/// pair. A warp reads back only what it wrote, so a warp barrier orders the
/// two. (The copy-out is indexed by warp and lane, not by thread as the loads'
/// copies are: LLVM would otherwise reuse the Q copy's addresses and keep them
/// live through the K/V loop.)
struct StagedStoreToNVVM final : OpConversionPattern<StagedStoreOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(StagedStoreOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getValue().getType());
    int64_t rows = type.getDimSize(0), cols = type.getDimSize(1);
    const int64_t vec = 8; // 16 bytes of f16 or bf16
    Fragment frag = Fragment::get(type);
    int64_t chunksPerRow = cols / vec;
    auto layout = tilegpu::getQuadFragmentLayout(type.getEncoding());
    if (!layout)
      return rewriter.notifyMatchFailure(
          op, "not in quad fragments (mma.sync, wgmma)");
    if (!layout.canStageStore(type.getShape(), type.getElementType()))
      return op.emitError() << "GPU lowering: a staged store takes a 16-bit "
                               "tile whose warps' rows split into 16-byte "
                               "pieces, a whole number per lane";
    Value buffer = adaptor.getStaging();
    LaneCoords lc(rewriter, loc);
    writeAccumulatorPairs(rewriter, loc, frag, lc, adaptor.getValue(), buffer,
                          op.getStaging().getType());
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
      auto ifOp = scf::IfOp::create(
          rewriter, loc,
          pieceInBounds(rewriter, loc, seq, seqLen, col, vec, colLen),
          /*withElseRegion=*/false);
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointToStart(ifOp.thenBlock());
      vector::StoreOp::create(rewriter, loc, piece, view,
                              ValueRange{idx[0], idx[1], seq, col},
                              /*nontemporal=*/false, llvm::MaybeAlign(16));
    }
    rewriter.eraseOp(op);
    return success();
  }
};

/// A quad-fragment accumulator into a shared buffer (padded, or swizzled
/// panels) as its stored matrix (the buffer's tile, or with a transposed
/// encoding its transpose): each lane writes its pairs of a row.
struct LocalStoreFromQuadFragments final : OpConversionPattern<LocalStoreOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(LocalStoreOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RankedTensorType type = op.getValue().getType();
    if (!hasFragment(type.getEncoding()))
      return rewriter.notifyMatchFailure(
          op, "not in quad fragments (mma.sync, wgmma)");
    BufferType bufferType = op.getBuffer().getType();
    unsigned bits = type.getElementType().getIntOrFloatBitWidth();
    if (bits != 16 &&
        !(bits == 32 &&
          !cast<SharedEncodingAttr>(bufferType.getEncoding()).getTransposed()))
      return op.emitError() << "GPU lowering: a local store of an "
                               "accumulator writes 16-bit elements, or "
                               "32-bit ones untransposed, got "
                            << type << " into " << bufferType;
    Location loc = op.getLoc();
    LaneCoords lc(rewriter, loc);
    writeAccumulatorPairs(rewriter, loc, Fragment::get(type), lc,
                          adaptor.getValue(), adaptor.getBuffer(), bufferType);
    // Swizzled panels are wgmma's operand: the writes ordered before the
    // async proxy's reads (the wgmma that takes the buffer, after the
    // barrier that follows).
    if (cast<SharedEncodingAttr>(bufferType.getEncoding()).getSwizzle())
      fenceAsyncShared(rewriter, loc);
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void tiled_attn::populateMmaSyncStorePatterns(
    TileGPUToNVVMTypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<StoreToNVVM, StagedStoreToNVVM, LocalStoreFromQuadFragments>(
      converter, patterns.getContext());
}
